/*
 * driver.cu - gpufs_bench's libgpufs runs: the plan of workloads, one
 * gpufs_start / gpufs_stop each, and their rows.  The progress and
 * watchdog helpers that bench/main.cu shares are bench/progress.cu.
 *
 * The plan itself (which configurations, in which order) is bench/plan.c;
 * the registration around a registered job's kernel is bench/registered.cu;
 * the drop before a cold job's kernel and its baseline are bench/cold.cu.
 *
 * The write runs all start from one device image of the pattern
 * (BENCH_WRITE_SEED), made before the first of them and freed after the
 * last; each writes a new file in --dir and removes it after gpufs_stop.
 *
 * Budget: each kernel stops issuing reads after a cap (--cap, 60 s), and the
 * cap shrinks so that what is left of --budget is shared by the runs still
 * to come (never below 5 s).  A capped row says how far it got.
 */
#include "bench/driver.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cuda_runtime.h>

#include <gpufs.cuh>

#include "benchlib/baselines.h"
#include "benchlib/cuda_check.h"
#include "bench/cold.h"
#include "bench/plan.h"
#include "bench/registered.h"
#include "bench/rows.h"
#include "benchlib/report.h"
#include "benchlib/util.h"
#include "bench/workloads.h"

struct bench_state g_bench;

#define BENCH_THREADS BENCH_BLOCK_THREADS

/* ---------------- one write run ---------------- */

/* The device image every write run starts from (bench_plan_run makes it):
 * the pattern's first g_bench.size bytes under BENCH_WRITE_SEED. */
static void *g_write_src;

/* The write run of job j in the started instance: its row, against the
 * expert_write baseline.  The file is removed by the caller. */
static void bench_write_job(const struct bench_job *j, const struct gpufs_config *cfg,
                            const char *config, const char *path, double cap)
{
  static const char *names[] = {"expert_write"};
  const double values[] = {g_bench.expert_write_gbps};
  struct bench_write_params p;
  struct bench_write_result w;
  struct gpufs_stats st;
  struct bench_row row;
  int rc;

  memset(&p, 0, sizeof(p));
  p.path = path;
  p.file_size = g_bench.size;
  p.seed = BENCH_WRITE_SEED;
  p.src = g_write_src;
  p.blocks = j->blocks;
  p.threads = BENCH_THREADS;
  p.io_size = j->io;
  p.cap_seconds = cap;
  rc = bench_gpufs_write(&p, &w);
  memset(&st, 0, sizeof(st));
  gpufs_get_stats(&st);

  bench_row_init(&row, j->workload, config, w.io.gbps, "GB/s");
  bench_judge_write(&row, rc, &w, cap);
  bench_run_extras(&row, j, cfg, &w.io, cap);
  bench_row_u64(&row, "file_bytes", w.file_bytes);
  bench_row_u64(&row, "checked_bytes", w.checked_bytes);
  bench_row_f64(&row, "verify_seconds", w.verify_seconds);
  bench_row_u64(&row, "co_resident", (uint64_t)w.co_resident);
  bench_row_f64(&row, "write_phase_s", w.write_phase_s);
  bench_row_f64(&row, "sync_phase_s", w.sync_phase_s);
  bench_row_u64(&row, "write_behind", cfg->write_behind);
  bench_write_extras(&row, &st);
  bench_emit(&row, names, values, 1);
  bench_progress("%s: %.3f GB/s in %.2f s (writes %.3f s, then gfsync %.3f s), %s%s%s; pwrites "
                 "%llu bytes_written %llu writebacks "
                 "%llu cleanings %llu dirty %llu misses %llu; %llu bytes checked in %.2f s",
                 j->workload, w.io.gbps, w.io.seconds, w.write_phase_s, w.sync_phase_s,
                 row.status == BENCH_OK ? "ok" : row.status == BENCH_CAPPED ? "capped" : "FAILED",
                 row.note[0] ? ": " : "", row.note, (unsigned long long)st.pwrites,
                 (unsigned long long)st.bytes_written, (unsigned long long)st.writebacks,
                 (unsigned long long)st.cleanings, (unsigned long long)st.dirty,
                 (unsigned long long)st.misses, (unsigned long long)w.checked_bytes,
                 w.verify_seconds);
}

/* ---------------- one run ---------------- */

/* The ra rows' kernels last about 0.1 s, and one run of them moves by
 * 10-30% between runs of one call (docs/benchmarks.md, the ra rows): a
 * readahead job reads the file BENCH_RA_RUNS times, each on a fresh runtime
 * (gpufs_stop, gpufs_start: nothing cached), and keeps the run of median
 * GB/s with its own counters; a run that failed, came short or read a wrong
 * byte is kept instead, so that the row fails.  *r and *st hold the first
 * run on entry.  Returns the runs made; their GB/s go into gbps[]. */
#define BENCH_RA_RUNS 3
static int bench_ra_median(const struct gpufs_config *cfg, const struct bench_read_params *p,
                           int *rc, struct bench_read_result *r, struct gpufs_stats *st,
                           double gbps[BENCH_RA_RUNS])
{
  struct bench_read_result runs[BENCH_RA_RUNS];
  struct gpufs_stats sts[BENCH_RA_RUNS];
  int n = 1, i, j, m = 0, good;
#define BENCH_RUN_GOOD(x) ((x).errors == 0 && (x).mismatches == 0 && (x).bytes == (x).expected_bytes)
  runs[0] = *r;
  sts[0] = *st;
  while ((good = *rc == 0 && BENCH_RUN_GOOD(runs[n - 1])) && n < BENCH_RA_RUNS) {
    gpufs_stop();
    if ((*rc = gpufs_start(cfg)) != 0 || (*rc = bench_gpufs_read(p, &runs[n])) != 0)
      break; /* runs[n - 1] stays the last whole run; *rc fails the row */
    memset(&sts[n], 0, sizeof(sts[n]));
    gpufs_get_stats(&sts[n++]);
  }
  for (i = 0; i < n; i++) {
    int below = 0; /* runs below run i (ties by index): the median has n / 2 */
    for (j = 0; j < n; j++)
      below += runs[j].gbps < runs[i].gbps || (runs[j].gbps == runs[i].gbps && j < i);
    if (below == n / 2)
      m = i;
    gbps[i] = runs[i].gbps;
  }
  if (!good)
    m = n - 1; /* the run that failed (or the last before a failed start) */
  *r = runs[m];
  *st = sts[m];
  return n;
#undef BENCH_RUN_GOOD
}

/* Passes 2 to j->passes of a passes job: the same reads again in the same
 * instance, each a kernel of its own (a gopen, so a host open: the second
 * asks for the file's automatic pin, docs/api.md "Automatic pins"), the
 * cache smaller than the file so that every pass misses.  A row per pass
 * with its own counters and the pins made so far; the first pass's row is
 * the job's own.  Stops at the first pass that fails. */
static void bench_pass_rows(const struct bench_job *j, const struct gpufs_config *cfg,
                            const char *config, const struct bench_read_params *p, double cap)
{
  static const char *names[] = {"ceiling", "expert"};
  const double values[] = {g_bench.ceiling_gbps, g_bench.expert_gbps};
  const int rand = j->access == BENCH_RAND_WARP;
  for (uint32_t k = 1; k < j->passes; k++) {
    struct gpufs_stats before, st;
    struct bench_read_result r;
    struct bench_row row;
    int rc;
    memset(&before, 0, sizeof(before));
    gpufs_get_stats(&before);
    rc = bench_gpufs_read(p, &r);
    memset(&st, 0, sizeof(st));
    gpufs_get_stats(&st);
    bench_stats_since(&st, &before);
    st.reg_pages -= before.reg_pages;
    bench_row_init(&row, j->pass_names[k], config, rand ? r.mcalls_per_s : r.gbps,
                   rand ? "Mpages/s" : "GB/s");
    bench_judge(&row, rc, &r, cap, 0);
    bench_extras(&row, j, cfg, &r, &st, cap);
    bench_pin_extras(&row, &st);
    bench_row_u64(&row, "pass", k + 1);
    bench_emit(&row, names, values, rand ? 0 : 2);
    bench_print_outcome(row.workload, &row, &r, &st);
    if (rc != 0 || row.status == BENCH_FAILED)
      break;
  }
}

static void bench_run_job(const struct bench_job *j, double cap)
{
  static const char *seq_names[] = {"ceiling", "naive", "expert"};
  struct gpufs_config cfg;
  struct gpufs_stats st, st2;
  struct bench_read_params p;
  struct bench_read_result r;
  struct bench_row row, twin;
  struct bench_reg reg;
  struct bench_cold cold;
  const char *bad = NULL;
  char config[224], a[32], b[32], c[32], d[32], path[4096];
  double seq_values[3] = {g_bench.ceiling_gbps, g_bench.naive_gbps, g_bench.expert_gbps};
  int rc, i;

  gpufs_config_default(&cfg);
  if (gpufs_config_from_env(&cfg, &bad) != 0)
    bench_progress("warning: GPUFS_* environment: %s does not parse; ignored", bad);
  cfg.device = g_bench.opt.device;
  cfg.page_size = j->page;
  cfg.cache_size = j->cache;
  if (j->ra != BENCH_RA_DEFAULT)
    cfg.readahead_max = j->ra;
  if (j->async >= 0)
    cfg.readahead_async = (uint32_t)j->async;
  if (j->write_behind >= 0)
    cfg.write_behind = (uint64_t)j->write_behind;
  if (j->pin_budget)
    cfg.register_max = j->pin_budget;
  if (cfg.staging_size && cfg.staging_size < (uint64_t)GPUFS_MIN_SLOTS * j->page)
    cfg.staging_size = (uint64_t)GPUFS_MIN_SLOTS * j->page;
  snprintf(config, sizeof(config), "page=%s cache=%s io=%s grid=%dx%d",
           bench_fmt_size(j->page, a, sizeof(a)), bench_fmt_size(j->cache, b, sizeof(b)),
           bench_fmt_size(j->io, c, sizeof(c)), j->blocks, BENCH_THREADS);
  if (j->access == BENCH_RAND_WARP)
    snprintf(config + strlen(config), sizeof(config) - strlen(config), " reads=%llu",
             (unsigned long long)j->rand_reads);
  /* the window in force, from the job or libgpufs (default or environment) */
  snprintf(config + strlen(config), sizeof(config) - strlen(config), " ra=%s",
           cfg.readahead_max ? bench_fmt_size(cfg.readahead_max, d, sizeof(d)) : "0");
  if (j->access == BENCH_SEQ_WRITE)
    snprintf(config + strlen(config), sizeof(config) - strlen(config), " write_behind=%s",
             cfg.write_behind ? bench_fmt_size(cfg.write_behind, d, sizeof(d)) : "0");
  if (cfg.readahead_async)
    snprintf(config + strlen(config), sizeof(config) - strlen(config), " posted");
  if (j->cold)
    snprintf(config + strlen(config), sizeof(config) - strlen(config), " cold");
  if (j->reg)
    snprintf(config + strlen(config), sizeof(config) - strlen(config), " registered");
  if (j->pin_budget)
    snprintf(config + strlen(config), sizeof(config) - strlen(config), " pin_budget=%s",
             bench_fmt_size(j->pin_budget, d, sizeof(d)));
  memset(&reg, 0, sizeof(reg));
  memset(&cold, 0, sizeof(cold));

  bench_progress("%s %s (cap %.0f s)", j->workload, config, cap);
  bench_watch(j->workload, (1 + 2 * j->hit + (j->passes ? j->passes - 1 : 0)) * cap + 180);
  if (j->access == BENCH_SEQ_WRITE) {
    bench_write_path(path, sizeof(path), "");
    if (!g_write_src) {
      bench_row_init(&row, j->workload, config, NAN, "GB/s");
      bench_row_status(&row, BENCH_FAILED, "no device image of the data to write (see stderr)");
      bench_report_add(&row);
      bench_progress("%s: %s", j->workload, row.note);
      bench_watch("", 0);
      return;
    }
    unlink(path); /* left by a run that died: gopen must create the file */
  }
  rc = gpufs_start(&cfg);
  if (rc != 0) {
    bench_row_init(&row, j->workload, config, NAN, "GB/s");
    bench_row_status(&row, BENCH_FAILED, "gpufs_start: %s (%s)", gpufs_strerror(rc),
                     gpufs_error_detail());
    bench_report_add(&row);
    bench_progress("%s: %s", j->workload, row.note);
    gpufs_stop();
    bench_watch("", 0);
    return;
  }

  if (j->access == BENCH_SEQ_WRITE) {
    bench_write_job(j, &cfg, config, path, cap);
    goto stop;
  }
  /* a file still in the page cache is a failed row, and no kernel */
  if (j->cold && bench_cold_begin(j, config, &cold) != 0)
    goto stop;
  /* untimed (a cold job's value counts it); a refusal is a failed row, and
   * no kernel */
  if (bench_reg_begin(j, config, &reg) != 0)
    goto stop;

  memset(&p, 0, sizeof(p));
  p.path = g_bench.path;
  p.file_size = g_bench.size;
  p.seed = g_bench.seed;
  p.access = j->access;
  p.blocks = j->blocks;
  p.threads = BENCH_THREADS;
  p.io_size = j->io;
  p.rand_reads = j->rand_reads;
  p.cap_seconds = cap;
  rc = bench_gpufs_read(&p, &r);
  memset(&st, 0, sizeof(st));
  gpufs_get_stats(&st);

  if (j->access == BENCH_RAND_WARP) {
    /* pages/s alone (a registered job's against its twin's: "rand" for
     * "rand/reg"), then GB/s against the ceiling */
    bench_row_init(&row, j->workload, config, r.mcalls_per_s, "Mpages/s");
    bench_judge(&row, rc, &r, cap, 0);
    bench_extras(&row, j, &cfg, &r, &st, cap);
    bench_reg_row(&row, &reg, &st);
    if (j->passes)
      bench_pin_extras(&row, &st);
    bench_map_check(&row, &st);
    bench_reg_twin(j, &row);
    bench_emit(&row, NULL, NULL, 0);
    if (bench_reg_with_setup(&row, &reg, &r, &twin))
      bench_emit(&twin, NULL, NULL, 0);
    bench_row_init(&row, j->workload, config, r.gbps, "GB/s");
    bench_judge(&row, rc, &r, cap, 0);
    bench_extras(&row, j, &cfg, &r, &st, cap);
    bench_reg_row(&row, &reg, &st);
    bench_emit(&row, seq_names, seq_values, 1);
  } else if (!strcmp(j->group, "big")) {
    static const char *big_names[] = {"seq(64K)", "expert"};
    const double big_values[] = {g_bench.seq64_gbps, g_bench.expert_gbps};
    bench_row_init(&row, j->workload, config, r.gbps, "GB/s");
    bench_judge(&row, rc, &r, cap, 0);
    bench_extras(&row, j, &cfg, &r, &st, cap);
    bench_emit(&row, big_names, big_values, 2);
  } else if (!strcmp(j->group, "ra")) {
    /* the first ra job (64 KiB pages, ra 0) is the reference of the others */
    static const char *ra_names[] = {"ceiling", "expert", "ra64K"};
    const double ra_values[] = {g_bench.ceiling_gbps, g_bench.expert_gbps, g_bench.ra64_gbps};
    const int ref = j->page == 65536 && j->ra == 0;
    double runs_gbps[BENCH_RA_RUNS];
    const int nruns = bench_ra_median(&cfg, &p, &rc, &r, &st, runs_gbps);
    bench_row_init(&row, j->workload, config, r.gbps, "GB/s");
    bench_judge(&row, rc, &r, cap, 0);
    bench_extras(&row, j, &cfg, &r, &st, cap);
    bench_row_u64(&row, "runs", (uint64_t)nruns);
    for (i = 0; i < nruns; i++) {
      char key[16];
      snprintf(key, sizeof(key), "run%d_gbps", i + 1);
      bench_row_f64(&row, key, runs_gbps[i]);
    }
    bench_emit(&row, ra_names, ra_values, ref ? 2 : 3);
    if (ref && row.status != BENCH_FAILED)
      g_bench.ra64_gbps = row.value;
  } else if (j->cold) {
    bench_row_init(&row, j->workload, config, r.gbps, "GB/s");
    bench_judge(&row, rc, &r, cap, 0);
    bench_extras(&row, j, &cfg, &r, &st, cap);
    bench_reg_row(&row, &reg, &st);
    bench_cold_row(&row, &cold, &reg, &r);
    bench_report_add(&row);
  } else {
    bench_row_init(&row, j->workload, config, r.gbps, "GB/s");
    bench_judge(&row, rc, &r, cap, 0);
    bench_extras(&row, j, &cfg, &r, &st, cap);
    bench_reg_row(&row, &reg, &st);
    if (j->passes)
      bench_pin_extras(&row, &st);
    bench_emit(&row, seq_names, seq_values, 3);
    if (bench_reg_with_setup(&row, &reg, &r, &twin))
      bench_emit(&twin, seq_names, seq_values, 3);
    if (!strcmp(j->workload, "seq") && j->page == 65536 && row.status != BENCH_FAILED)
      g_bench.seq64_gbps = row.value;
  }
  bench_print_outcome(j->workload, &row, &r, &st);
  bench_reg_end(j, config, &reg, &st, &row); /* (a registered job has no hit run) */
  if (j->passes && rc == 0 && row.status != BENCH_FAILED)
    bench_pass_rows(j, &cfg, config, &p, cap);

  /* the same reads again, every page in the cache now: "hit" times the
   * reads alone into a destination the file's size and checks every word
   * in an untimed kernel after (as the d2d copy it is compared with is
   * timed alone); "hit/inline" checks each call's words in the timed
   * kernel */
  for (int k = 0; k < 2 && j->hit && rc == 0 && row.status == BENCH_OK; k++) {
    struct gpufs_stats st1;
    gpufs_get_stats(&st1);
    p.verify_after = k == 0;
    rc = bench_gpufs_read(&p, &r);
    memset(&st2, 0, sizeof(st2));
    gpufs_get_stats(&st2);
    bench_stats_since(&st2, &st1); /* this read's own counters */
    bench_row_init(&row, k == 0 ? "hit" : "hit/inline", config, r.gbps, "GB/s");
    bench_judge(&row, rc, &r, cap, 0);
    bench_extras(&row, j, &cfg, &r, &st2, cap);
    bench_row_u64(&row, "verify_after", (uint64_t)p.verify_after);
    if (p.verify_after)
      bench_row_f64(&row, "verify_seconds", r.verify_seconds);
    bench_row_baseline(&row, "d2d", g_bench.d2d_gbps);
    bench_report_add(&row);
    bench_print_outcome(row.workload, &row, &r, &st2);
  }

stop:
  rc = gpufs_stop();
  if (rc != 0) {
    bench_row_init(&row, j->workload, config, NAN, "GB/s");
    bench_row_status(&row, BENCH_FAILED, "gpufs_stop: %s (%s)", gpufs_strerror(rc),
                     gpufs_error_detail());
    bench_report_add(&row);
    bench_progress("%s: %s", j->workload, row.note);
  }
  if (j->access == BENCH_SEQ_WRITE)
    unlink(path);
  bench_watch("", 0);
}

void bench_plan_run(void)
{
  struct bench_job jobs[BENCH_MAX_JOBS];
  const int n = bench_plan(jobs);
  double t0 = bench_now(), t;
  int i, k, kernels_left = 0, cold_ran = 0;

  for (i = 0; i < n; i++)
    kernels_left += bench_job_selected(&jobs[i]) ? bench_job_kernels(&jobs[i]) : 0;
  for (i = 0; i < n; i++) {
    double left, cap;
    if (!bench_job_selected(&jobs[i]))
      continue;
    if (jobs[i].access == BENCH_SEQ_WRITE && !g_write_src) {
      /* the same bytes as expert_write wrote from device memory; untimed */
      if (BENCH_CUDA(cudaMalloc(&g_write_src, g_bench.size)) != 0 ||
          bench_fill_device(g_write_src, g_bench.size, 0, BENCH_WRITE_SEED) != 0) {
        BENCH_CUDA(cudaFree(g_write_src));
        g_write_src = NULL;
      }
    }
    if (jobs[i].cold && !cold_ran) {
      /* the baseline of the cold rows, outside the libgpufs budget */
      t = bench_now();
      bench_cold_expert();
      t0 += bench_now() - t;
      cold_ran = 1;
    }
    k = bench_job_kernels(&jobs[i]);
    left = g_bench.opt.budget - (bench_now() - t0);
    cap = left / kernels_left;
    cap = cap < 5 ? 5 : cap;
    cap = cap > g_bench.opt.cap ? g_bench.opt.cap : cap;
    bench_run_job(&jobs[i], cap);
    kernels_left -= k;
  }
  BENCH_CUDA(cudaFree(g_write_src));
  g_write_src = NULL;
  if (cold_ran)
    bench_cold_end();
}
