/*
 * main.cu - `collage`: the LSH image collage.
 *
 *   collage [options]          the benchmark: every version on every input
 *                              size, each checked against the cpu version's
 *                              choices, a table last, JSON rows (--out)
 *   collage [options] IN OUT   the collage of one picture
 *
 * Before either: the seed photographs (fetched once), the dataset and the
 * LSH index are built when missing and checked when present (a foreign,
 * truncated or mismatched file is an error, never rebuilt silently).
 * Exit status: 0 done and every version verified; 1 a version failed or
 * chose other tiles, or a data file is bad; 2 bad options or no usable GPU
 * (docs/collage.md: what is measured and how). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cuda_runtime.h>

#include <gpufs.cuh>

#include "benchlib/opts.h"
#include "benchlib/report.h"
#include "benchlib/util.h"
#include "samples/collage/collage.h"
#include "samples/collage/options.h"

/* One version's outcome at one input size. */
struct collage_result {
  int ran, ok;
  uint64_t cache;            /* GPU page cache of a gpufs version */
  double best_s, worst_s, first_s; /* over the repetitions; the first with its registration */
  struct collage_stats st;   /* of the fastest repetition */
  struct gpufs_stats gs;     /* of the fastest repetition (gpufs versions) */
  char why[256];
};

/* What the runs share: the data, the index on both sides, the options. */
struct collage_ctx {
  const struct collage_options *o;
  struct collage_seeds seeds;
  struct collage_dataset ds;
  struct collage_index ix;
  struct collage_gpu_index gix;
  int have_gpu;
  int threads;
  char gpu_name[256];
};

static int collage_is_gpufs(enum collage_version v) { return v >= COLLAGE_GPUFS_BLOCK && v <= COLLAGE_GPUFS_GREAD; }

/* ---------------- data: seeds, dataset, index ---------------- */

static int collage_prepare_dataset(struct collage_ctx *c)
{
  const struct collage_options *o = c->o;
  char path[4200], err[512];
  snprintf(path, sizeof(path), "%s/collage-%llu.ds", o->dir, (unsigned long long)o->tiles);
  if (o->rebuild)
    unlink(path);
  int rc = collage_dataset_open(path, 4096, &c->ds, err, sizeof(err));
  if (rc == -ENOENT) {
    fprintf(stderr, "collage: building the dataset %s: %llu tiles, %.2f GB, from %d %s seed pictures\n", path,
            (unsigned long long)o->tiles, (double)collage_record_offset(o->tiles) / 1e9, c->seeds.n,
            c->seeds.source);
    const double t0 = bench_now();
    rc = collage_dataset_build(path, &c->seeds, o->tiles, COLLAGE_DATASET_SEED, c->threads, stderr);
    if (rc) {
      fprintf(stderr, "collage: building %s failed: %s\n", path, strerror(-rc));
      return rc;
    }
    fprintf(stderr, "collage: dataset built in %.1f s\n", bench_now() - t0);
    rc = collage_dataset_open(path, 4096, &c->ds, err, sizeof(err));
  }
  if (rc) {
    fprintf(stderr, "collage: %s\n  (remove it, or run with --rebuild)\n", err);
    return rc;
  }
  if (c->ds.hdr.seeds_id != c->seeds.id) {
    fprintf(stderr,
            "collage: %s was built from other seed pictures (%u %.32s pictures) than %s holds now (%d %s): "
            "pass --seeds with the folder it was made from, or --rebuild\n",
            path, c->ds.hdr.nseeds, c->ds.hdr.seeds_source, o->seeds, c->seeds.n, c->seeds.source);
    return -EINVAL;
  }
  return 0;
}

static void collage_index_row(const struct collage_ctx *c, const struct collage_index_report *rep, double build_s)
{
  struct bench_row row;
  char config[160];
  snprintf(config, sizeof(config), "tiles=%llu L=%u K=%u cap=%u", (unsigned long long)c->ds.n, c->ix.hdr.L,
           c->ix.hdr.K, c->ix.hdr.cap);
  bench_row_init(&row, "collage-index", config, rep->mean, "tiles/bucket");
  bench_row_u64(&row, "max_bucket", rep->max);
  bench_row_u64(&row, "p99_bucket", rep->p99);
  bench_row_f64(&row, "empty_share", rep->empty);
  bench_row_f64(&row, "capped_share", rep->capped);
  bench_row_f64(&row, "worst_share", rep->worst_share);
  bench_row_u64(&row, "entries", c->ix.hdr.nids);
  if (build_s > 0)
    bench_row_f64(&row, "build_s", build_s);
  bench_report_add(&row);
}

static int collage_prepare_index(struct collage_ctx *c)
{
  const struct collage_options *o = c->o;
  char path[4300], err[512];
  double build_s = 0;
  snprintf(path, sizeof(path), "%s/collage-%llu-L%u-K%u-C%u.ix", o->dir, (unsigned long long)o->tiles, o->L,
           o->K, o->cap);
  if (o->rebuild)
    unlink(path);
  int rc = collage_index_read(path, &c->ds, &c->ix, err, sizeof(err));
  if (rc == -ENOENT) {
    fprintf(stderr, "collage: building the index %s\n", path);
    const double t0 = bench_now();
    rc = collage_index_build(&c->ds, o->L, o->K, o->cap, COLLAGE_INDEX_SEED, c->threads, &c->ix, stderr);
    if (rc == 0)
      rc = collage_index_write(path, &c->ix);
    if (rc) {
      fprintf(stderr, "collage: building %s failed: %s\n", path, strerror(-rc));
      return rc;
    }
    build_s = bench_now() - t0;
    fprintf(stderr, "collage: index built in %.1f s\n", build_s);
  } else if (rc) {
    fprintf(stderr, "collage: %s\n  (remove it, or run with --rebuild)\n", err);
    return rc;
  }
  struct collage_index_report rep;
  collage_index_stats(&c->ix, &c->ds, &rep);
  fprintf(stderr,
          "collage: index L=%u K=%u cap=%u: %.1f tiles a non-empty bucket, p99 %u, largest %u (%.2f%% of its "
          "table), %.1f%% of buckets empty, %.2f%% of entries capped\n",
          c->ix.hdr.L, c->ix.hdr.K, c->ix.hdr.cap, rep.mean, rep.p99, rep.max, 100 * rep.worst_share,
          100 * rep.empty, 100 * rep.capped);
  collage_index_row(c, &rep, build_s);
  return 0;
}

/* ---------------- one run of one version ---------------- */

/* Start libgpufs for a gpufs version (`cache` bytes of 4 KiB pages); unless
 * --no-register, register the dataset (*reg_s: its time; a refusal is said
 * once, the daemon then reads it).  0, or -errno, why filled, none started. */
static int collage_gpufs_begin(const struct collage_ctx *c, uint64_t cache, double *reg_s, char *why, size_t len)
{
  struct gpufs_config cfg;
  const char *bad = NULL;
  gpufs_config_default(&cfg);
  cfg.device = c->o->device;
  cfg.page_size = 4096;
  cfg.cache_size = (cache + cfg.page_size - 1) / cfg.page_size * cfg.page_size;
  const uint64_t frames = cfg.cache_size / cfg.page_size;
  if (frames / 256 < gpufs_config_rings(&cfg)) /* a small cache: at least 256 frames a ring */
    cfg.nrings = frames / 256 < 1 ? 1 : (uint32_t)(frames / 256);
  if (gpufs_config_from_env(&cfg, &bad) != 0) {
    snprintf(why, len, "%s: not a valid value", bad);
    return -EINVAL;
  }
  int rc = gpufs_start(&cfg);
  if (rc) {
    snprintf(why, len, "gpufs_start: %s (%s)", gpufs_strerror(rc), gpufs_error_detail());
    return rc;
  }
  if (c->o->reg) { /* misses copy from the host page cache, no request */
    const double t0 = bench_now();
    const int rr = gpufs_register(c->ds.path);
    *reg_s = bench_now() - t0;
    if (rr) { /* the daemon reads the dataset instead: slower, as correct */
      static int said;
      if (!said++)
        fprintf(stderr, "collage: gpufs_register %s: %s (%s): the gpufs versions read it through the daemon\n",
                c->ds.path, gpufs_strerror(rr), gpufs_error_detail());
    }
  }
  return 0;
}

/* Run version v once on picture `in`; choice gets the tiles. */
static int collage_run_once(const struct collage_ctx *c, enum collage_version v, const struct collage_image *in,
                            uint64_t cache, uint32_t *choice, struct collage_stats *st, struct gpufs_stats *gs,
                            char *why, size_t len)
{
  int rc;
  double reg_s = 0; /* the registration's time, before the run */
  memset(st, 0, sizeof(*st));
  memset(gs, 0, sizeof(*gs));
  switch (v) {
  case COLLAGE_CPU:
    rc = collage_cpu_run(&c->ds, &c->ix, in, c->threads, choice, st);
    break;
  case COLLAGE_CPU_GPU:
    rc = collage_cpugpu_run(&c->ds, &c->ix, &c->gix, in, c->threads, choice, st);
    break;
  default:
    if ((rc = collage_gpufs_begin(c, cache, &reg_s, why, len)) != 0)
      return rc;
    rc = collage_gpufs_run(v, c->ds.path, &c->gix, in, choice, st);
    st->register_s = reg_s; /* collage_gpufs_run clears st */
    gpufs_get_stats(gs);
    int rs = gpufs_stop();
    if (rc == 0 && rs != 0) {
      snprintf(why, len, "gpufs_stop: %s", gpufs_strerror(rs));
      return rs;
    }
    break;
  }
  if (rc)
    snprintf(why, len, "%s failed: %s", collage_version_name(v), gpufs_strerror(rc));
  return rc;
}

/* Every repetition of v, each verified against ref (NULL: v is the
 * reference and its first choices become ref). */
static void collage_run_version(const struct collage_ctx *c, enum collage_version v, const struct collage_image *in,
                                uint64_t cache, uint32_t *ref, int have_ref, struct collage_result *r)
{
  const uint64_t blocks = collage_blocks(in);
  uint32_t *choice = (uint32_t *)malloc(blocks * sizeof(uint32_t));
  memset(r, 0, sizeof(*r));
  r->ran = 1;
  r->cache = collage_is_gpufs(v) ? cache : 0;
  if (!choice) {
    snprintf(r->why, sizeof(r->why), "no memory");
    return;
  }
  for (int rep = 0; rep < c->o->reps; rep++) {
    struct collage_stats st;
    struct gpufs_stats gs;
    if (collage_run_once(c, v, in, cache, choice, &st, &gs, r->why, sizeof(r->why)) != 0)
      goto out;
    if (!have_ref) {
      memcpy(ref, choice, blocks * sizeof(uint32_t));
      have_ref = 1;
    } else {
      for (uint64_t b = 0; b < blocks; b++)
        if (choice[b] != ref[b]) {
          snprintf(r->why, sizeof(r->why), "block %llu: chose tile %u, the cpu version tile %u",
                   (unsigned long long)b, choice[b], ref[b]);
          goto out;
        }
    }
    r->first_s = rep == 0 ? st.seconds + st.register_s : r->first_s;
    if (rep == 0 || st.seconds < r->best_s) {
      r->best_s = st.seconds;
      r->st = st;
      r->gs = gs;
    }
    if (st.seconds > r->worst_s)
      r->worst_s = st.seconds;
  }
  r->ok = 1;
out:
  free(choice);
}

/* ---------------- rows and the table ---------------- */

static double collage_per_block_us(const struct collage_result *r)
{
  return r->ok && r->st.blocks ? r->best_s * 1e6 / (double)r->st.blocks : NAN;
}

static double collage_speedup(const struct collage_result *base, const struct collage_result *r)
{
  return base->ok && r->ok && r->best_s > 0 ? base->best_s / r->best_s : NAN;
}

static void collage_row(const struct collage_ctx *c, const struct collage_image *in, enum collage_version v,
                        const struct collage_result *r, const struct collage_result *res)
{
  struct bench_row row;
  char config[160];
  snprintf(config, sizeof(config), "version=%s size=%dx%d tiles=%llu cache=%lluM reps=%d", collage_version_name(v),
           in->w, in->h, (unsigned long long)c->ds.n, (unsigned long long)(r->cache >> 20), c->o->reps);
  bench_row_init(&row, "collage", config, collage_per_block_us(r), "us/block");
  if (v != COLLAGE_CPU)
    bench_row_baseline(&row, "cpu", collage_per_block_us(&res[COLLAGE_CPU]));
  if (!r->ok)
    bench_row_status(&row, BENCH_FAILED, "%s", r->why);
  bench_row_str(&row, "version", collage_version_name(v));
  bench_row_u64(&row, "width", (uint64_t)in->w);
  bench_row_u64(&row, "height", (uint64_t)in->h);
  bench_row_u64(&row, "tiles", c->ds.n);
  bench_row_u64(&row, "blocks", r->st.blocks);
  bench_row_f64(&row, "seconds", r->best_s);
  bench_row_f64(&row, "worst_s", r->worst_s);
  bench_row_f64(&row, "speedup_cpu", collage_speedup(&res[COLLAGE_CPU], r));
  bench_row_f64(&row, "speedup_cpugpu", collage_speedup(&res[COLLAGE_CPU_GPU], r));
  bench_row_f64(&row, "candidates_per_block", r->st.blocks ? (double)r->st.candidates / r->st.blocks : NAN);
  bench_row_u64(&row, "empty_blocks", r->st.empty);
  bench_row_f64(&row, "keys_s", r->st.keys_s);
  bench_row_f64(&row, "shortlist_s", r->st.shortlist_s);
  bench_row_f64(&row, "io_s", r->st.io_s);
  bench_row_f64(&row, "dist_s", r->st.dist_s);
  bench_row_str(&row, "verified", r->ok ? "yes" : "no");
  bench_row_u64(&row, "threads", (uint64_t)c->threads);
  if (collage_is_gpufs(v)) {
    bench_row_u64(&row, "cache_bytes", r->cache);
    bench_row_u64(&row, "hits", r->gs.hits);
    bench_row_u64(&row, "misses", r->gs.misses);
    bench_row_u64(&row, "evictions", r->gs.evictions);
    bench_row_u64(&row, "preads", r->gs.preads);
    bench_row_u64(&row, "bytes_read", r->gs.bytes_read);
    bench_row_f64(&row, "daemon_busy_s", r->gs.daemon_busy_ns * 1e-9);
    bench_row_str(&row, "registered", r->gs.reg_files ? "yes" : "no");
    bench_row_u64(&row, "reg_pages", r->gs.reg_pages);
    bench_row_f64(&row, "register_s", r->st.register_s);
    bench_row_f64(&row, "first_with_register_s", r->first_s);
  }
  bench_report_add(&row);
}

static void collage_table_line(const struct collage_image *in, enum collage_version v, const struct collage_result *r,
                               const struct collage_result *res, const char *tag)
{
  char us[16], xc[16], xg[16], sec[16];
  bench_fmt_value(sec, sizeof(sec), r->ok ? r->best_s : NAN, "%.3f");
  bench_fmt_value(us, sizeof(us), collage_per_block_us(r), "%.2f");
  bench_fmt_value(xc, sizeof(xc), collage_speedup(&res[COLLAGE_CPU], r), "%.2fx");
  bench_fmt_value(xg, sizeof(xg), collage_speedup(&res[COLLAGE_CPU_GPU], r), "%.2fx");
  char cand[16], hits[24], pages[24];
  bench_fmt_value(cand, sizeof(cand), r->st.blocks ? (double)r->st.candidates / r->st.blocks : NAN, "%.0f");
  snprintf(hits, sizeof(hits), "-");
  snprintf(pages, sizeof(pages), "-");
  if (collage_is_gpufs(v) && r->ok) {
    snprintf(hits, sizeof(hits), "%llu", (unsigned long long)r->gs.hits);
    snprintf(pages, sizeof(pages), "%llu", (unsigned long long)r->gs.misses);
  }
  printf("%-10s %-12s%-6s %8s %9s %8s %9s %6s %12s %10s %s\n", tag, collage_version_name(v), "", sec, us, xc, xg,
         cand, hits, pages, r->ok ? "yes" : "NO");
  if (!r->ok)
    printf("    %s\n", r->why);
  (void)in;
}

/* ---------------- the two modes ---------------- */

static int collage_bench(struct collage_ctx *c)
{
  const struct collage_options *o = c->o;
  const int nv = o->nversions;
  struct collage_result(*res)[COLLAGE_NVERSIONS] =
      (struct collage_result(*)[COLLAGE_NVERSIONS])calloc((size_t)o->nsizes, sizeof(*res));
  struct collage_result *small = (struct collage_result *)calloc(COLLAGE_NVERSIONS, sizeof(*small));
  struct collage_image *ins = (struct collage_image *)calloc((size_t)o->nsizes, sizeof(*ins));
  uint32_t **refs = (uint32_t **)calloc((size_t)o->nsizes, sizeof(uint32_t *));
  const uint64_t cache = o->cache ? o->cache : c->ds.bytes + (64u << 20);
  int failed = 0, out_size = -1;
  if (!res || !small || !ins || !refs)
    return -ENOMEM;
  uint64_t small_cache = o->small_cache;
  if (o->small_factor > 0)
    small_cache = (uint64_t)((double)c->ds.bytes / o->small_factor);
  if (small_cache && small_cache < (1u << 20))
    small_cache = 1u << 20;
  for (int s = 0; s < o->nsizes; s++) {
    struct collage_image *in = &ins[s];
    if (collage_input_picture(&c->seeds, s, o->w[s], o->h[s], in) != 0 || collage_image_crop_blocks(in) < 0 ||
        !(refs[s] = (uint32_t *)malloc(collage_blocks(in) * sizeof(uint32_t)))) {
      fprintf(stderr, "collage: cannot make the %dx%d input picture\n", o->w[s], o->h[s]);
      return -ENOMEM;
    }
    /* the cpu version first: its choices are what every version must match */
    int have_ref = 0;
    int order[COLLAGE_NVERSIONS], n = 0;
    order[n++] = COLLAGE_CPU;
    for (int k = 0; k < nv; k++)
      if (o->versions[k] != COLLAGE_CPU)
        order[n++] = o->versions[k];
    for (int k = 0; k < n; k++) {
      const enum collage_version v = (enum collage_version)order[k];
      struct collage_result *r = &res[s][v];
      if (v != COLLAGE_CPU && !c->have_gpu) {
        r->ran = 1;
        snprintf(r->why, sizeof(r->why), "no GPU");
        continue;
      }
      fprintf(stderr, "collage: %dx%d %-12s ...", in->w, in->h, collage_version_name(v));
      collage_run_version(c, v, in, cache, refs[s], have_ref, r);
      have_ref |= v == COLLAGE_CPU && r->ok;
      if (r->ok)
        fprintf(stderr, " %.3f s (%.2f us a block)\n", r->best_s, collage_per_block_us(r));
      else
        fprintf(stderr, " FAILED: %s\n", r->why);
      if (!have_ref) {
        fprintf(stderr, "collage: no reference choices at %dx%d: the other versions are not run\n", in->w, in->h);
        failed = 1;
        break;
      }
    }
    if (in->w <= 2048)
      out_size = s;
  }
  /* the gpufs versions again on the largest input with the small cache */
  const int last = o->nsizes - 1;
  if (small_cache && c->have_gpu)
    for (int k = 0; k < nv; k++) {
      const enum collage_version v = o->versions[k];
      if (!collage_is_gpufs(v) || !res[last][COLLAGE_CPU].ok)
        continue;
      fprintf(stderr, "collage: %dx%d %-12s cache %lluM ...", ins[last].w, ins[last].h, collage_version_name(v),
              (unsigned long long)(small_cache >> 20));
      collage_run_version(c, v, &ins[last], small_cache, refs[last], 1, &small[v]);
      if (small[v].ok)
        fprintf(stderr, " %.3f s\n", small[v].best_s);
      else
        fprintf(stderr, " FAILED: %s\n", small[v].why);
    }
  for (int s = 0; s < o->nsizes; s++)
    for (int k = 0; k < nv; k++) {
      const enum collage_version v = o->versions[k];
      if (res[s][v].ran)
        collage_row(c, &ins[s], v, &res[s][v], res[s]);
      failed |= res[s][v].ran && !res[s][v].ok;
    }
  for (int k = 0; k < nv; k++)
    if (small[o->versions[k]].ran) {
      collage_row(c, &ins[last], o->versions[k], &small[o->versions[k]], res[last]);
      failed |= !small[o->versions[k]].ok;
    }
  if (o->collage_out[0] && out_size >= 0 && res[out_size][COLLAGE_CPU].ok) {
    struct collage_image out;
    char err[512];
    if (collage_render(&c->ds, &c->seeds, &ins[out_size], refs[out_size], &out, err, sizeof(err)) != 0 ||
        collage_image_write_png(o->collage_out, &out) != 0) {
      fprintf(stderr, "collage: cannot write %s: %s\n", o->collage_out, err);
      failed = 1;
    } else {
      fprintf(stderr, "collage: the %dx%d collage written to %s\n", out.w, out.h, o->collage_out);
      collage_image_free(&out);
    }
  }

  printf("\ncollage: %llu tiles (%.1f GB dataset), L=%u K=%u cap=%u, %d host threads, %s\n",
         (unsigned long long)c->ds.n, c->ds.bytes / 1e9, c->ix.hdr.L, c->ix.hdr.K, c->ix.hdr.cap, c->threads,
         c->have_gpu ? c->gpu_name : "no GPU");
  printf("%-10s %-18s %8s %9s %8s %9s %6s %12s %10s %s\n", "input", "version", "time s", "us/block", "x cpu",
         "x cpu-gpu", "cands", "cache hits", "pages read", "verified");
  for (int s = 0; s < o->nsizes; s++) {
    char tag[32];
    snprintf(tag, sizeof(tag), "%dx%d", ins[s].w, ins[s].h);
    for (int k = 0; k < nv; k++)
      if (res[s][o->versions[k]].ran)
        collage_table_line(&ins[s], o->versions[k], &res[s][o->versions[k]], res[s], tag);
  }
  if (small_cache) {
    printf("\nthe largest input with a %lluM GPU page cache (the dataset is %.1fx larger):\n",
           (unsigned long long)(small_cache >> 20), (double)c->ds.bytes / (double)small_cache);
    for (int k = 0; k < nv; k++)
      if (small[o->versions[k]].ran)
        collage_table_line(&ins[last], o->versions[k], &small[o->versions[k]], res[last], "small");
  }
  printf(failed ? "\nFAILED: see the lines above\n" : "\nevery version chose the cpu version's tiles\n");
  for (int s = 0; s < o->nsizes; s++) {
    collage_image_free(&ins[s]);
    free(refs[s]);
  }
  free(ins);
  free(refs);
  free(res);
  free(small);
  return failed ? 1 : 0;
}

static int collage_picture(struct collage_ctx *c)
{
  const struct collage_options *o = c->o;
  struct collage_image in, out;
  char err[512];
  int rc = collage_image_read(o->in, &in, err, sizeof(err));
  if (rc) {
    fprintf(stderr, "collage: %s\n", err);
    return 1;
  }
  const int w0 = in.w, h0 = in.h;
  rc = collage_image_crop_blocks(&in);
  if (rc < 0) {
    fprintf(stderr, "collage: %s is %dx%d: smaller than one 32x32 block\n", o->in, w0, h0);
    return 1;
  }
  if (rc == 1)
    fprintf(stderr, "collage: %s is %dx%d, not whole 32x32 blocks: cropped to %dx%d\n", o->in, w0, h0, in.w, in.h);
  const uint64_t blocks = collage_blocks(&in);
  uint32_t *ref = (uint32_t *)malloc(blocks * sizeof(uint32_t));
  if (!ref)
    return 1;
  const uint64_t cache = o->cache ? o->cache : c->ds.bytes + (64u << 20);
  int have_ref = 0, failed = 0;
  for (int k = 0; k < o->nversions; k++) {
    enum collage_version v = o->versions[k];
    if (v != COLLAGE_CPU && !c->have_gpu) {
      fprintf(stderr, "collage: no CUDA GPU here: the cpu version instead of %s\n", collage_version_name(v));
      v = COLLAGE_CPU;
    }
    struct collage_result r;
    collage_run_version(c, v, &in, cache, ref, have_ref, &r);
    if (!r.ok) {
      fprintf(stderr, "collage: %s\n", r.why);
      failed = 1;
      break;
    }
    have_ref = 1;
    fprintf(stderr, "collage: %s: %llu blocks in %.3f s (%.2f us a block, %.0f candidates a block)\n",
            collage_version_name(v), (unsigned long long)blocks, r.best_s, collage_per_block_us(&r),
            (double)r.st.candidates / (double)blocks);
  }
  if (!failed) {
    if (collage_render(&c->ds, &c->seeds, &in, ref, &out, err, sizeof(err)) != 0) {
      fprintf(stderr, "collage: %s\n", err);
      failed = 1;
    } else if ((rc = collage_image_write_png(o->out, &out)) != 0) {
      fprintf(stderr, "collage: cannot write %s: %s\n", o->out, strerror(-rc));
      failed = 1;
    } else {
      fprintf(stderr, "collage: %s written (%dx%d)\n", o->out, out.w, out.h);
    }
    collage_image_free(&out);
  }
  free(ref);
  collage_image_free(&in);
  return failed;
}

int main(int argc, char **argv)
{
  struct collage_options o;
  struct collage_ctx c;
  char err[512];
  int rc = collage_parse_options(argc, argv, &o, err, sizeof(err));
  if ((rc = bench_opts_exit("collage", rc, err, collage_usage)) >= 0)
    return rc;
  if (collage_check_files(&o, err, sizeof(err)) != 0) {
    fprintf(stderr, "collage: %s\n", err);
    return 2;
  }
  memset(&c, 0, sizeof(c));
  c.o = &o;
  c.threads = o.threads ? o.threads : bench_host_threads();
  const int cpu_only = o.nversions == 1 && o.versions[0] == COLLAGE_CPU;
  int ndev = 0;
  if (o.mode == COLLAGE_MODE_BENCH && !cpu_only && bench_need_gpu("collage", o.device) != 0)
    return 2;
  if (cudaGetDeviceCount(&ndev) == cudaSuccess && o.device < ndev) {
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, o.device);
    cudaSetDevice(o.device);
    snprintf(c.gpu_name, sizeof(c.gpu_name), "%s", prop.name);
    c.have_gpu = 1;
  }
  if (bench_mkdirs(o.dir) != 0) {
    fprintf(stderr, "collage: cannot make the data folder %s\n", o.dir);
    return 2;
  }
  if (!o.seeds[0])
    snprintf(o.seeds, sizeof(o.seeds), "%s/seeds", o.dir);
  if (o.fetch)
    collage_seeds_fetch(o.seeds, stderr); /* says why when it cannot: the procedural set follows */
  if (collage_seeds_load(o.seeds, &c.seeds, stderr) != 0) {
    fprintf(stderr, "collage: no seed pictures\n");
    return 1;
  }
  if (o.rows[0] && bench_report_open(o.rows) != 0) {
    fprintf(stderr, "collage: cannot open %s\n", o.rows);
    return 2;
  }
#ifdef BENCH_COMMIT
  bench_report_run_context(c.have_gpu ? c.gpu_name : "cpu", BENCH_COMMIT);
#else
  bench_report_run_context(c.have_gpu ? c.gpu_name : "cpu", NULL);
#endif
  bench_report_context("suite", "collage");
  rc = 1;
  if (collage_prepare_dataset(&c) == 0 && collage_prepare_index(&c) == 0) {
    if (c.have_gpu && (rc = collage_gpu_index_upload(&c.ix, &c.gix)) != 0) {
      fprintf(stderr, "collage: the index does not fit the GPU: %s\n", strerror(-rc));
      rc = 1;
    } else {
      rc = o.mode == COLLAGE_MODE_BENCH ? collage_bench(&c) : collage_picture(&c);
      if (rc < 0)
        rc = 1;
    }
    if (c.have_gpu)
      collage_gpu_index_free(&c.gix);
  }
  collage_index_free(&c.ix);
  collage_dataset_close(&c.ds);
  collage_seeds_free(&c.seeds);
  bench_report_close();
  return rc;
}
