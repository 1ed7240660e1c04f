/*
 * driver.cu - one benchmark through every version: inputs, reference,
 * timed repetitions (each gpufs repetition in a fresh libgpufs instance, so
 * every one starts with a cold GPU cache), verification, the I/O-only pass
 * of overlapped versions.  Used by the rodinia driver (main.cu) and the GPU
 * tests.
 */
#include "rodinia-io/harness/driver.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/gpufs.cuh"
#include "rodinia-io/harness/rio_ctx.h"
#include "rodinia-io/harness/rio_cuda.h"

static uint32_t rio_page_size(enum rio_version v) { return v == RIO_GPUFS_4K ? 4096u : 65536u; }

static int rio_gpufs_begin(struct rio_run *run, enum rio_version v, uint64_t cache)
{
  struct gpufs_config cfg;
  const char *bad = NULL;
  gpufs_config_default(&cfg);
  cfg.device = run->device;
  cfg.page_size = rio_page_size(v);
  uint64_t bytes = 0;
  for (int i = 0; i < run->ninputs; i++)
    bytes += run->in[i].size;
  cfg.cache_size = cache ? cache : bytes + (64u << 20);
  cfg.cache_size = (cfg.cache_size + cfg.page_size - 1) / cfg.page_size * cfg.page_size;
  if (cache) {
    /* a cache smaller than the inputs: at least 256 frames a ring, so that
     * the groups sharing a ring can each pin a round of 32 pages */
    const uint64_t frames = cfg.cache_size / cfg.page_size;
    cfg.nrings = frames / 256 < 1 ? 1 : frames / 256 > 64 ? 64 : (uint32_t)(frames / 256);
  }
  if (gpufs_config_from_env(&cfg, &bad) != 0)
    return rio_fail(run, -EINVAL, "%s: not a valid value", bad);
  int rc = gpufs_start(&cfg);
  if (rc)
    return rio_fail(run, rc, "gpufs_start: %s (%s)", gpufs_strerror(rc), gpufs_error_detail());
  return 0;
}

static int rio_gpufs_end(struct rio_run *run, struct gpufs_stats *st)
{
  if (st)
    gpufs_get_stats(st);
  int rc = gpufs_stop();
  if (rc)
    return rio_fail(run, rc, "gpufs_stop: %s (%s)", gpufs_strerror(rc), gpufs_error_detail());
  return 0;
}

static double rio_median(double *v, int n)
{
  for (int a = 0; a < n; a++)
    for (int b = a + 1; b < n; b++)
      if (v[b] < v[a]) {
        double t = v[a];
        v[a] = v[b];
        v[b] = t;
      }
  return n ? v[n / 2] : NAN;
}

/* The I/O of version v alone, every input into one scratch buffer: what
 * an overlapped version's I/O costs (its run cannot separate the two). */
static int rio_io_pass(struct rio_run *run, enum rio_version v, uint64_t cache, double *seconds)
{
  uint64_t biggest = 0;
  void *dev = NULL;
  int rc;
  for (int i = 0; i < run->ninputs; i++)
    biggest = run->in[i].size > biggest ? run->in[i].size : biggest;
  if ((rc = RIO_CUDA(run, cudaMalloc(&dev, biggest))) != 0)
    return rc;
  if (rio_is_gpufs(v) && (rc = rio_gpufs_begin(run, v, cache)) != 0) {
    cudaFree(dev);
    return rc;
  }
  rc = RIO_CUDA(run, cudaDeviceSynchronize());
  const double t0 = rio_now();
  for (int i = 0; i < run->ninputs && !rc; i++)
    rc = rio_load(run, v, i, dev);
  if (!rc)
    rc = RIO_CUDA(run, cudaDeviceSynchronize());
  *seconds = rio_now() - t0;
  if (rio_is_gpufs(v)) {
    int rc2 = rio_gpufs_end(run, NULL);
    rc = rc ? rc : rc2;
  }
  cudaFree(dev);
  return rc;
}

/* One version: prepare, reps timed runs each verified, the I/O pass. */
static void rio_run_version(struct rio_run *run, const struct rio_options *o, enum rio_version v,
                            uint64_t cache, struct rio_result *r, int verbose)
{
  const struct rio_bench *b = run->bench;
  double e2e[100], io[100];
  int rc;

  memset(r, 0, sizeof(*r));
  r->v = v;
  r->ran = 1;
  run->why[0] = 0;
  if ((rc = rio_ctx_prepare(run, v)) != 0)
    goto out;
  for (int k = 0; k < o->reps; k++) {
    struct gpufs_stats st;
    memset(&run->t, 0, sizeof(run->t));
    if (rio_is_gpufs(v) && (rc = rio_gpufs_begin(run, v, cache)) != 0)
      goto out;
    rc = b->run(run, v);
    if (rio_is_gpufs(v)) {
      int rc2 = rio_gpufs_end(run, &st);
      if (!rc) {
        rc = rc2;
        r->st = st;
        r->has_stats = 1;
      }
    }
    if (!rc)
      rc = b->verify(run);
    if (rc)
      goto out;
    e2e[k] = run->t.e2e_s;
    io[k] = run->t.io_s;
    r->overlapped = run->t.overlapped;
  }
  r->e2e_s = rio_median(e2e, o->reps); /* sorts e2e */
  r->e2e_min_s = e2e[0];
  r->e2e_max_s = e2e[o->reps - 1];
  if (r->overlapped) {
    for (int k = 0; k < o->reps && !rc; k++)
      rc = rio_io_pass(run, v, cache, &io[k]);
    if (rc)
      goto out;
  }
  r->io_s = rio_median(io, o->reps);
  r->io_gbps = r->io_s > 0 ? (double)run->input_bytes / r->io_s / 1e9 : NAN;
  r->ok = 1;
  r->cache = cache;
out:
  if (rc) {
    snprintf(r->why, sizeof(r->why), "%s", run->why[0] ? run->why : strerror(-rc));
    if (verbose)
      fprintf(stderr, "  %-10s %-9s %sFAILED: %s\n", b->name, rio_version_name(v), cache ? "small cache " : "",
              r->why);
  } else if (verbose) {
    fprintf(stderr, "  %-10s %-9s %8.4f s end to end (%.4f-%.4f), I/O %7.4f s (%6.2f GB/s%s), verified%s\n",
            b->name, rio_version_name(v), r->e2e_s, r->e2e_min_s, r->e2e_max_s, r->io_s, r->io_gbps,
            r->overlapped ? ", separate pass; overlapped in the run" : "", cache ? " (small cache)" : "");
  }
  rio_ctx_release(run);
}

int rio_run_bench(const struct rio_bench *b, const struct rio_options *o, struct rio_bench_result *out,
                  int verbose)
{
  struct rio_run run;
  int rc;

  memset(out, 0, sizeof(*out));
  memset(&run, 0, sizeof(run));
  out->bench = b;
  run.bench = b;
  run.scale = o->scale;
  run.seed = RIO_DEFAULT_SEED;
  run.device = o->device;
  run.expert_threads = o->expert_threads;
  if ((rc = RIO_CUDA(&run, cudaSetDevice(o->device))) != 0)
    goto fail;
  if ((rc = b->setup(&run)) != 0)
    goto fail;
  for (int i = 0; i < run.ninputs; i++)
    run.input_bytes += run.in[i].size;
  out->input_bytes = run.input_bytes;
  if (verbose)
    fprintf(stderr, "%s: %s; %d input file(s), %.3f GB\n", b->name, b->summary, run.ninputs,
            run.input_bytes / 1e9);
  if ((rc = rio_inputs_prepare(&run, o->dir, o->gen, verbose)) != 0)
    goto fail;
  {
    const double t0 = rio_now();
    if ((rc = b->reference(&run)) != 0)
      goto fail;
    out->ref_s = rio_now() - t0;
  }
  for (int k = 0; k < o->nversions; k++) {
    const enum rio_version v = o->versions[k];
    rio_run_version(&run, o, v, o->cache, &out->r[v], verbose);
    if (!out->r[v].ok)
      out->failures++;
  }
  /* the gpufs versions again with a page cache smaller than the inputs */
  for (int k = 0; o->small_cache && k < o->nversions; k++) {
    const enum rio_version v = o->versions[k];
    if (!rio_is_gpufs(v))
      continue;
    rio_run_version(&run, o, v, b->small_cache ? b->small_cache : o->small_cache, &out->small[v], verbose);
    if (!out->small[v].ok)
      out->failures++;
  }
  b->teardown(&run);
  rio_inputs_free(&run);
  return out->failures ? -EBADMSG : 0;
fail:
  snprintf(out->why, sizeof(out->why), "%s", run.why[0] ? run.why : strerror(-rc));
  if (verbose)
    fprintf(stderr, "%s: %s\n", b->name, out->why);
  b->teardown(&run);
  rio_inputs_free(&run);
  out->setup_failed = 1;
  return rc;
}
