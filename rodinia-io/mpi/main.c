/*
 * mpi/main.c - `rodinia_mpi`: rodinia-io's 2dconv, gesummv and pathfinder
 * over MPI ranks (issue 17, "Beyond one machine").
 *
 *   mpirun -np N rodinia_mpi [options] [BENCH ...]
 *
 * For each benchmark: every rank runs its setup (the sizes); rank 0
 * prepares the input files as the suite does (generated once into --dir,
 * else read and checksummed) and computes the CPU reference; the other
 * ranks check that their files are rank 0's (size and sidecar checksum,
 * without reading the bytes).  The benchmark's units (rio_mpi.h: 2dconv's
 * row bands, gesummv's rows, pathfinder's columns) are split among the
 * ranks; each rank runs one version on its units, reading only their part
 * of the files: cpu with pread and the reference's code, gpufs-4k and
 * gpufs-64k with the suite's kernels in a libgpufs instance of its own on
 * GPU (rank on the node) % (GPUs it sees).  Rank 0 gathers the parts
 * (MPI_Gatherv of whole units), verifies the result with the suite's check
 * and compares it bit for bit with the single-process result (cpu: the
 * reference; gpufs: the suite's run of the same version, which rank 0 makes
 * first unless --no-single).
 *
 * Timing: a rank's part is timed by the suite's rule (first open to its
 * result in host memory; device buffers, the instance and pinning before
 * it, untimed); a run's seconds are the slowest part plus the gather
 * (from a barrier after the parts to rank 0 holding every part).
 *
 * Every step ends with an agreement (MPI_Allreduce of the highest status)
 * so that all ranks stop together; bad options and more ranks than units
 * are found by every rank alike, before any collective.  Exit status:
 * enum rio_mpi_status.  docs/mpi.md has the rest.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <mpi.h>

#include "benchlib/mpi/place.h"
#include "benchlib/report.h"
#include "benchlib/util.h"
#include "rodinia-io/mpi/rio_mpi.h"
#include "rodinia-io/mpi/rio_mpi_gpu.h"

#define RMPI_MAX_REPS 100

struct rmpi_rank {
  int rank, size, local, nlocal, nodes;
  MPI_Comm node;
  char host[MPI_MAX_PROCESSOR_NAME];
  int gpu, sharers; /* gpu -1: none (cpu only) */
  char device[MPI_MAX_PROCESSOR_NAME + 16]; /* for the rows: the GPU of rank 0, or "cpu (host)" */
};

/* One version of one benchmark, as rank 0 reports it. */
struct rmpi_result {
  enum rio_mpi_bench b;
  enum rio_mpi_version v;
  int ok;                  /* ran on every rank, verified and identical */
  double seconds, min_s, max_s, part_s, gather_s, single_s;
  uint64_t input_bytes, read_bytes, cache;
  int verified, same_single, same_ref; /* same_single -1: not compared */
  char why[256];
};

/* One benchmark on this rank. */
struct rmpi_bench {
  enum rio_mpi_bench b;
  struct rio_run run;
  struct rio_mpi_split sp;
  uint64_t u0, u1;
  void *part;   /* this rank's units' result (rank 0: the state's result) */
  void *single; /* rank 0: the single-process result of the last gpufs version */
};

static void rmpi_say(const struct rmpi_rank *r, const char *fmt, ...)
{
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  fprintf(stderr, "rodinia_mpi: rank %d of %d (%s): %s\n", r->rank, r->size, r->host, msg);
}

static void rmpi_place(struct rmpi_rank *r)
{
  bench_mpi_place(&r->rank, &r->size, &r->local, &r->nlocal, &r->nodes, &r->node, r->host);
  r->gpu = -1;
  snprintf(r->device, sizeof(r->device), "cpu (%s)", r->host);
}

/* The rank's GPU and its sharers (bench_mpi_gpu).  Every rank of the node
 * calls it.  RIO_MPI_DONE or RIO_MPI_BAD_CONFIG. */
static int rmpi_pick_gpu(struct rmpi_rank *r)
{
  struct bench_mpi_gpu g;
  char why[512];
  const int rc = bench_mpi_gpu(r->node, r->local, r->nlocal, &g, why, sizeof(why));
  if (rc)
    rmpi_say(r, "%s: the gpufs versions need a GPU on every node (or --versions cpu)", why);
  else
    snprintf(r->device, sizeof(r->device), "%s", g.name);
  r->gpu = g.gpu;
  r->sharers = g.sharers;
  return rc ? RIO_MPI_BAD_CONFIG : RIO_MPI_DONE;
}

/* ---------------- inputs ---------------- */

/* Rank 0: the inputs (made when missing) and the reference; then every
 * other rank checks that its files are rank 0's.  A status. */
static int rmpi_inputs(const struct rmpi_rank *r, const struct rio_mpi_options *o, struct rmpi_bench *c)
{
  struct rio_run *run = &c->run;
  uint64_t sums[RIO_MAX_INPUTS] = {0}, mine = 0;
  char why[RIO_PATH_MAX + 256];
  int rc = RIO_MPI_DONE;
  if (r->rank == 0) {
    const double t0 = bench_now();
    if (rio_inputs_prepare(run, o->dir, o->gen, 1) != 0 || run->bench->reference(run) != 0) {
      rmpi_say(r, "%s", run->why);
      rc = RIO_MPI_FAILED;
    }
    for (int i = 0; i < run->ninputs && !rc; i++)
      rio_input_check(run, i, &sums[i], why, sizeof(why));
    if (!rc)
      fprintf(stderr, "rodinia_mpi: %s: %d input file(s), %.3f GB, and the reference in %.1f s\n",
              run->bench->name, run->ninputs, run->input_bytes / 1e9, bench_now() - t0);
  }
  if ((rc = bench_mpi_agree(rc)) != RIO_MPI_DONE)
    return rc;
  MPI_Bcast(sums, RIO_MAX_INPUTS, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  if (r->rank != 0) {
    if (rio_inputs_name(run, o->dir) != 0) {
      rmpi_say(r, "%s", run->why);
      rc = RIO_MPI_FAILED;
    }
    for (int i = 0; i < run->ninputs && !rc; i++) {
      if (rio_input_check(run, i, &mine, why, sizeof(why)) != RIO_INPUT_VALID) {
        rmpi_say(r, "%s (rank 0 has it: --dir must be a file system every node shares, or hold the same files)",
                 why);
        rc = RIO_MPI_FAILED;
      } else if (mine != sums[i]) {
        rmpi_say(r, "%s is not rank 0's (checksum %016llx, rank 0's %016llx): every node must see the same files",
                 run->in[i].path, (unsigned long long)mine, (unsigned long long)sums[i]);
        rc = RIO_MPI_FAILED;
      }
    }
  }
  return bench_mpi_agree(rc);
}

/* ---------------- one version ---------------- */

/* This rank's libgpufs configuration for gpufs version v.  A status. */
static int rmpi_config(const struct rmpi_rank *r, const struct rio_mpi_options *o, const struct rmpi_bench *c,
                       enum rio_mpi_version v, int whole, struct gpufs_config *cfg)
{
  const char *bad = NULL;
  gpufs_config_default(cfg);
  cfg->page_size = v == RIO_MPI_GPUFS_64K ? 65536u : 4096u;
  if (gpufs_config_from_env(cfg, &bad) != 0) {
    rmpi_say(r, "%s: not a valid value", bad);
    return RIO_MPI_BAD_CONFIG;
  }
  cfg->ndevices = 0; /* one instance, on this rank's GPU (GPUFS_DEVICE(S) do not apply) */
  cfg->device = r->gpu;
  const uint64_t bytes = whole ? c->run.input_bytes : rio_mpi_part_bytes(c->b, &c->run, c->u0, c->u1);
  cfg->cache_size = rio_mpi_cache(o->cache, whole ? 1 : r->sharers, bytes, cfg->page_size);
  if (cfg->cache_size == 0) {
    rmpi_say(r, "a GPU page cache of %llu MiB shared by the %d ranks of GPU %d leaves less than 1 MiB a rank: "
                "give a larger --cache, or fewer ranks a GPU",
             (unsigned long long)(o->cache >> 20), r->sharers, r->gpu);
    return RIO_MPI_BAD_CONFIG;
  }
  const uint64_t frames = cfg->cache_size / cfg->page_size;
  if (frames / 256 < cfg->nrings) /* a small cache: at least 256 frames a ring (as the suite) */
    cfg->nrings = frames / 256 < 1 ? 1 : (uint32_t)(frames / 256);
  return RIO_MPI_DONE;
}

/* Rank 0: the suite's single-process run of gpufs version v, kept in
 * c->single to compare with.  A status (the other ranks wait). */
static int rmpi_single(const struct rmpi_rank *r, const struct rio_mpi_options *o, struct rmpi_bench *c,
                       enum rio_mpi_version v, struct rmpi_result *res)
{
  struct rio_run *run = &c->run;
  struct gpufs_config cfg;
  const uint64_t bytes = rio_mpi_result_bytes(c->b, run);
  int rc = rmpi_config(r, o, c, v, 1, &cfg);
  if (rc)
    return rc;
  if (!c->single && !(c->single = malloc(bytes))) {
    rmpi_say(r, "no host memory for the single-process result");
    return RIO_MPI_FAILED;
  }
  if ((rc = rio_mpi_gpu_begin(run, rio_mpi_harness_version(v), &cfg)) == 0) {
    rc = run->bench->run(run, rio_mpi_harness_version(v));
    const int rc2 = rio_mpi_gpu_end(run);
    rc = rc ? rc : rc2;
  }
  if (rc == 0 && (rc = run->bench->verify(run)) == 0) {
    memcpy(c->single, rio_mpi_result(c->b, run), bytes);
    res->single_s = run->t.e2e_s;
    return RIO_MPI_DONE;
  }
  rmpi_say(r, "the single-process %s run: %s", rio_mpi_version_name(v), run->why);
  return RIO_MPI_FAILED;
}

/* Rank 0 gathers every rank's units into the state's result. */
static void rmpi_gather(const struct rmpi_rank *r, struct rmpi_bench *c)
{
  MPI_Datatype unit;
  MPI_Type_contiguous((int)c->sp.unit_bytes, MPI_BYTE, &unit);
  MPI_Type_commit(&unit);
  if (r->rank == 0) {
    int *count = (int *)malloc(sizeof(int) * 2 * (size_t)r->size);
    if (!count)
      MPI_Abort(MPI_COMM_WORLD, RIO_MPI_FAILED);
    for (int k = 0; k < r->size; k++) {
      uint64_t u0, u1;
      rio_mpi_units(c->sp.units, k, r->size, &u0, &u1);
      count[k] = (int)(u1 - u0);
      count[r->size + k] = (int)u0;
    }
    MPI_Gatherv(MPI_IN_PLACE, 0, unit, rio_mpi_result(c->b, &c->run), count, count + r->size, unit, 0,
                MPI_COMM_WORLD);
    free(count);
  } else {
    MPI_Gatherv(c->part, (int)(c->u1 - c->u0), unit, NULL, NULL, NULL, unit, 0, MPI_COMM_WORLD);
  }
  MPI_Type_free(&unit);
}

/* One repetition: every rank's part, the gather, rank 0's checks.  *part
 * and *gather: this rank's timed part and the gather (rank 0's clock). */
static int rmpi_rep(const struct rmpi_rank *r, struct rmpi_bench *c, enum rio_mpi_version v,
                    const struct gpufs_config *cfg, double *part, double *gather)
{
  struct rio_run *run = &c->run;
  const int gpufs = v != RIO_MPI_CPU;
  int began = 0, rc = RIO_MPI_DONE;
  if (gpufs && !(began = rio_mpi_gpu_begin(run, rio_mpi_harness_version(v), cfg) == 0)) {
    rmpi_say(r, "%s", run->why);
    rc = RIO_MPI_FAILED;
  }
  if ((rc = bench_mpi_agree(rc)) != RIO_MPI_DONE) {
    if (began)
      rio_mpi_gpu_end(run);
    return rc;
  }
  const double t0 = MPI_Wtime();
  const int prc = gpufs ? rio_mpi_gpufs_part(c->b, run, rio_mpi_harness_version(v), c->u0, c->u1, c->part)
                        : rio_mpi_cpu_part(c->b, run, c->u0, c->u1, c->part);
  *part = gpufs ? run->t.e2e_s : MPI_Wtime() - t0;
  if (prc)
    rmpi_say(r, "%s on units [%llu, %llu): %s", rio_mpi_version_name(v), (unsigned long long)c->u0,
             (unsigned long long)c->u1, run->why);
  if (gpufs && rio_mpi_gpu_end(run) != 0 && !prc) {
    rmpi_say(r, "%s", run->why);
    rc = RIO_MPI_FAILED;
  }
  if ((rc = bench_mpi_agree(prc ? RIO_MPI_FAILED : rc)) != RIO_MPI_DONE)
    return rc;
  const double g0 = MPI_Wtime();
  rmpi_gather(r, c);
  *gather = MPI_Wtime() - g0;
  return RIO_MPI_DONE;
}

static double rmpi_median(double *v, int n)
{
  for (int a = 0; a < n; a++)
    for (int b = a + 1; b < n; b++)
      if (v[b] < v[a]) {
        const double t = v[a];
        v[a] = v[b];
        v[b] = t;
      }
  return v[n / 2];
}

/* Version v of c on every rank, o->reps times; rank 0 fills res.  A status. */
static int rmpi_version(const struct rmpi_rank *r, const struct rio_mpi_options *o, struct rmpi_bench *c,
                        enum rio_mpi_version v, struct rmpi_result *res)
{
  struct rio_run *run = &c->run;
  const uint64_t bytes = rio_mpi_result_bytes(c->b, run);
  double secs[RMPI_MAX_REPS] = {0}, parts[RMPI_MAX_REPS] = {0}, gathers[RMPI_MAX_REPS] = {0};
  struct gpufs_config cfg;
  int rc = RIO_MPI_DONE;
  memset(res, 0, sizeof(*res));
  res->b = c->b;
  res->v = v;
  res->same_single = -1;
  res->single_s = NAN;
  res->input_bytes = run->input_bytes;
  if (v != RIO_MPI_CPU) {
    if ((rc = bench_mpi_agree(rmpi_config(r, o, c, v, 0, &cfg))) != RIO_MPI_DONE)
      return rc;
    res->cache = cfg.cache_size;
    if (o->single && (rc = bench_mpi_agree(r->rank == 0 ? rmpi_single(r, o, c, v, res) : RIO_MPI_DONE)) != 0)
      return rc;
  }
  uint64_t mine = rio_mpi_part_bytes(c->b, run, c->u0, c->u1);
  MPI_Reduce(&mine, &res->read_bytes, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
  for (int k = 0; k < o->reps; k++) {
    double part = 0, gather = 0, slowest = 0;
    memset(rio_mpi_result(c->b, run), 0, r->rank == 0 ? bytes : 0);
    if ((rc = rmpi_rep(r, c, v, &cfg, &part, &gather)) != RIO_MPI_DONE)
      return rc;
    MPI_Reduce(&part, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    parts[k] = slowest;
    gathers[k] = gather;
    secs[k] = slowest + gather;
    if (r->rank == 0) { /* every repetition is checked */
      const void *ref = rio_mpi_reference(c->b, run), *got = rio_mpi_result(c->b, run);
      const int verified = run->bench->verify(run) == 0;
      const int same_ref = memcmp(got, ref, bytes) == 0;
      /* the single-process cpu result is the reference (the same code) */
      const int same_single = v == RIO_MPI_CPU ? same_ref : o->single ? !memcmp(got, c->single, bytes) : -1;
      if (!verified && !res->why[0]) /* the first repetition that fails says why */
        snprintf(res->why, sizeof(res->why), "%s", run->why);
      res->verified = k ? res->verified && verified : verified;
      res->same_ref = k ? res->same_ref && same_ref : same_ref;
      res->same_single = k == 0 || same_single < 0 ? same_single : res->same_single && same_single;
    }
  }
  res->min_s = secs[0];
  res->max_s = secs[0];
  for (int k = 1; k < o->reps; k++) {
    res->min_s = secs[k] < res->min_s ? secs[k] : res->min_s;
    res->max_s = secs[k] > res->max_s ? secs[k] : res->max_s;
  }
  res->seconds = rmpi_median(secs, o->reps);
  res->part_s = rmpi_median(parts, o->reps);
  res->gather_s = rmpi_median(gathers, o->reps);
  res->ok = res->verified && res->same_single != 0;
  if (res->verified && res->same_single == 0)
    snprintf(res->why, sizeof(res->why), "verified, but not the single-process %s bit for bit",
             v == RIO_MPI_CPU ? "reference" : "result");
  return bench_mpi_agree(r->rank == 0 && !res->ok ? RIO_MPI_FAILED : RIO_MPI_DONE);
}

/* ---------------- the report ---------------- */

static void rmpi_row(const struct rmpi_rank *r, const struct rio_mpi_options *o, const struct rmpi_result *x)
{
  struct bench_row row;
  char config[160];
  const char *same[] = {"no", "yes"};
  snprintf(config, sizeof(config), "version=%s ranks=%d nodes=%d scale=%g reps=%d", rio_mpi_version_name(x->v),
           r->size, r->nodes, o->scale, o->reps);
  bench_row_init(&row, rio_mpi_bench_name(x->b), config, x->ok || x->verified ? x->seconds : NAN, "s");
  if (x->v != RIO_MPI_CPU)
    bench_row_baseline(&row, "single-process", x->single_s);
  if (!x->ok)
    bench_row_status(&row, BENCH_FAILED, "%s", x->why[0] ? x->why : "failed on a rank (its message says why)");
  bench_row_str(&row, "version", rio_mpi_version_name(x->v));
  bench_row_u64(&row, "ranks", (uint64_t)r->size);
  bench_row_u64(&row, "nodes", (uint64_t)r->nodes);
  bench_row_u64(&row, "input_bytes", x->input_bytes);
  bench_row_u64(&row, "read_bytes", x->read_bytes);
  bench_row_f64(&row, "gbps", x->seconds > 0 ? x->input_bytes / x->seconds / 1e9 : NAN);
  bench_row_f64(&row, "min_s", x->min_s);
  bench_row_f64(&row, "max_s", x->max_s);
  bench_row_f64(&row, "slowest_part_s", x->part_s);
  bench_row_f64(&row, "gather_s", x->gather_s);
  bench_row_f64(&row, "single_s", x->single_s);
  bench_row_u64(&row, "cache_bytes", x->cache);
  bench_row_str(&row, "verified", same[x->verified != 0]);
  bench_row_str(&row, "same_as_single", x->same_single < 0 ? "-" : same[x->same_single != 0]);
  bench_row_str(&row, "same_as_reference", same[x->same_ref != 0]);
  bench_report_add(&row);
  bench_report_json(stdout, &row);
  putchar('\n');
  fflush(stdout);
}

static void rmpi_table(const struct rmpi_rank *r, const struct rmpi_result *res, int n)
{
  char s[16], g[16], one[16], x[16];
  printf("\n%-11s %-10s %5s %9s %8s %9s %9s %-8s %-9s %s\n", "benchmark", "version", "ranks", "s", "GB/s",
         "single s", "x single", "verified", "identical", "same as reference");
  for (int k = 0; k < n; k++) {
    const struct rmpi_result *t = &res[k];
    bench_fmt_value(s, sizeof(s), t->verified ? t->seconds : NAN, "%.4f");
    bench_fmt_value(g, sizeof(g), t->verified && t->seconds > 0 ? t->input_bytes / t->seconds / 1e9 : NAN, "%.2f");
    bench_fmt_value(one, sizeof(one), t->single_s, "%.4f");
    bench_fmt_value(x, sizeof(x), t->verified ? t->single_s / t->seconds : NAN, "%.2fx");
    printf("%-11s %-10s %5d %9s %8s %9s %9s %-8s %-9s %s\n", rio_mpi_bench_name(t->b), rio_mpi_version_name(t->v),
           r->size, s, g, one, x, t->verified ? "yes" : "NO",
           t->same_single < 0 ? "-" : t->same_single ? "yes" : "NO", t->same_ref ? "yes" : "no");
    if (!t->ok)
      printf("    %s\n", t->why[0] ? t->why : "failed on a rank (its message says why)");
  }
}

/* ---------------- the steps ---------------- */

/* Benchmark b in every version asked for; rank 0 appends its results to
 * res[*n].  A status: RIO_MPI_BAD_CONFIG stops the program, the others
 * only mark the run. */
static int rmpi_bench(const struct rmpi_rank *r, const struct rio_mpi_options *o, enum rio_mpi_bench b,
                      struct rmpi_result *res, int *n)
{
  struct rmpi_bench c;
  char err[512];
  int rc, worst = RIO_MPI_DONE;
  memset(&c, 0, sizeof(c));
  c.b = b;
  c.run.bench = rio_mpi_bench_of(b);
  c.run.scale = o->scale;
  c.run.seed = RIO_DEFAULT_SEED;
  c.run.device = r->gpu < 0 ? 0 : r->gpu;
  c.run.expert_threads = 8;
  rc = c.run.bench->setup(&c.run);
  if (rc && r->rank == 0)
    rmpi_say(r, "%s", c.run.why);
  if ((rc = bench_mpi_agree(rc == -EINVAL ? RIO_MPI_BAD_CONFIG : rc ? RIO_MPI_FAILED : RIO_MPI_DONE)) != 0)
    goto out;
  for (int i = 0; i < c.run.ninputs; i++)
    c.run.input_bytes += c.run.in[i].size;
  c.sp = rio_mpi_split_of(b, &c.run);
  /* every rank has the same sizes: the same verdict, no collective needed */
  if ((rc = rio_mpi_check_ranks(b, &c.sp, r->size, err, sizeof(err))) != RIO_MPI_DONE) {
    if (r->rank == 0)
      fprintf(stderr, "rodinia_mpi: %s\n", err);
    goto out;
  }
  rio_mpi_units(c.sp.units, r->rank, r->size, &c.u0, &c.u1);
  c.part = r->rank == 0 ? rio_mpi_result(b, &c.run) : malloc((c.u1 - c.u0) * c.sp.unit_bytes);
  if ((rc = bench_mpi_agree(c.part ? RIO_MPI_DONE : RIO_MPI_FAILED)) != 0 || (rc = rmpi_inputs(r, o, &c)) != 0)
    goto out;
  for (int k = 0; k < o->nversions; k++) {
    struct rmpi_result *x = &res[*n];
    rc = rmpi_version(r, o, &c, o->versions[k], x);
    if (r->rank == 0) {
      fprintf(stderr, "rodinia_mpi: %-10s %-9s %d rank(s): %s\n", rio_mpi_bench_name(b),
              rio_mpi_version_name(o->versions[k]), r->size, x->ok ? "verified, identical" : "FAILED");
      rmpi_row(r, o, x);
      (*n)++;
    }
    if (rc == RIO_MPI_BAD_CONFIG)
      goto out;
    worst = rc > worst ? rc : worst;
  }
  rc = worst;
out:
  if (r->rank != 0)
    free(c.part);
  free(c.single);
  c.run.bench->teardown(&c.run);
  rio_inputs_free(&c.run);
  return rc;
}

static int rmpi_main(struct rmpi_rank *r, int argc, char **argv)
{
  struct rio_mpi_options o;
  struct rmpi_result res[RIO_MPI_NBENCHES * RIO_MPI_NVERSIONS];
  char err[512];
  int n = 0, worst = RIO_MPI_DONE, rc = rio_mpi_parse_options(argc, argv, &o, err, sizeof(err));
  if (rc == 1 || (rc == 0 && o.list)) {
    if (r->rank == 0 && rc == 1)
      fputs(rio_mpi_usage, stdout);
    for (int b = 0; r->rank == 0 && rc == 0 && b < RIO_MPI_NBENCHES; b++)
      printf("%-11s %s\n", rio_mpi_bench_name((enum rio_mpi_bench)b), rio_mpi_bench_of((enum rio_mpi_bench)b)->summary);
    return RIO_MPI_DONE;
  }
  if (rc) { /* every rank parsed the same argv: rank 0 speaks for all */
    if (r->rank == 0)
      fprintf(stderr, "rodinia_mpi: %s\n  (rodinia_mpi --help lists the options)\n", err);
    return RIO_MPI_BAD_CONFIG;
  }
  int gpufs = 0;
  for (int k = 0; k < o.nversions; k++)
    gpufs |= o.versions[k] != RIO_MPI_CPU;
  /* the cpu version touches no GPU: no CUDA call at all */
  if (gpufs && (rc = bench_mpi_agree(rmpi_pick_gpu(r))) != RIO_MPI_DONE)
    return rc;
  if (r->rank == 0) {
    if (o.out[0] && bench_report_open(o.out) != 0) {
      fprintf(stderr, "rodinia_mpi: cannot open %s\n", o.out);
      rc = RIO_MPI_BAD_CONFIG;
    }
    bench_report_run_context(r->device, NULL);
    bench_report_context("suite", "rodinia-io-mpi");
    fprintf(stderr, "rodinia_mpi: %d rank(s) on %d node(s), rank 0 on %s; scale %g, %d repetition(s), data in %s\n",
            r->size, r->nodes, r->device, o.scale, o.reps, o.dir);
  }
  if ((rc = bench_mpi_agree(rc)) != RIO_MPI_DONE)
    return rc;
  for (int k = 0; k < o.nbenches; k++) {
    rc = rmpi_bench(r, &o, o.benches[k], res, &n);
    if (rc == RIO_MPI_BAD_CONFIG)
      return rc;
    worst = rc > worst ? rc : worst;
  }
  if (r->rank == 0) {
    rmpi_table(r, res, n);
    printf(worst ? "\nFAILED: see the rows above\n"
                 : "\nevery run verified and identical to the single-process result (%d ranks)\n",
           r->size);
    bench_report_close();
  }
  return worst;
}

int main(int argc, char **argv)
{
  struct rmpi_rank r;
  int provided = 0;
  /* only the main thread calls MPI; the benchmarks' host threads never do */
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    fprintf(stderr, "rodinia_mpi: MPI_Init_thread failed\n");
    return RIO_MPI_BAD_CONFIG;
  }
  memset(&r, 0, sizeof(r));
  rmpi_place(&r);
  const int rc = rmpi_main(&r, argc, argv);
  MPI_Comm_free(&r.node);
  MPI_Finalize();
  return rc;
}
