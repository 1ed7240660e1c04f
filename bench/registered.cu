/*
 * registered.cu - gpufs_bench's registered-file jobs: gpufs_register /
 * gpufs_unregister of the data file around the kernel, the fields they add
 * to the rows, and the summary of the mapping's share printed before the
 * table.  Contracts: bench/registered.h.
 *
 * Every return code is checked: a refused registration is a failed row and
 * no kernel (it would measure the daemon path under a "/reg" name), a
 * failed unregistration a failed row of its own, and a kernel whose misses
 * never came from the mapping (reg_pages 0) fails its rows.
 */
#include "bench/registered.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <gpufs.cuh>

#include "bench/driver.h"
#include "bench/plan.h"
#include "benchlib/report.h"
#include "benchlib/util.h"

/* What bench_reg_summary prints of one registered job. */
struct bench_reg_record {
  char workload[32];
  char config[160];
  int counted;        /* the kernel ran: reg_pages and misses are its counters */
  uint64_t reg_pages; /* misses copied from the mapping */
  uint64_t misses;
  double register_s;
  char outcome[96];   /* "ok", "capped", "failed: ..." */
};

static struct bench_reg_record g_reg_records[BENCH_MAX_JOBS];
static int g_reg_nrecords;

static void bench_reg_record(const struct bench_job *j, const char *config,
                             const struct bench_reg *reg, const struct gpufs_stats *st,
                             enum bench_status status, const char *note)
{
  struct bench_reg_record *rec;
  if (g_reg_nrecords == BENCH_MAX_JOBS)
    return;
  rec = &g_reg_records[g_reg_nrecords++];
  memset(rec, 0, sizeof(*rec));
  snprintf(rec->workload, sizeof(rec->workload), "%s", j->workload);
  snprintf(rec->config, sizeof(rec->config), "%s", config);
  if (st) {
    rec->counted = 1;
    rec->reg_pages = st->reg_pages;
    rec->misses = st->misses;
  }
  rec->register_s = reg->register_s;
  if (status == BENCH_OK)
    snprintf(rec->outcome, sizeof(rec->outcome), "ok");
  else
    snprintf(rec->outcome, sizeof(rec->outcome), "%s: %.80s",
             status == BENCH_CAPPED ? "capped" : status == BENCH_NA ? "n/a" : "failed", note);
}

/* reg_pages / misses, NaN without misses. */
static double bench_reg_share(uint64_t reg_pages, uint64_t misses)
{
  return misses ? (double)reg_pages / (double)misses : NAN;
}

int bench_reg_begin(const struct bench_job *j, const char *config, struct bench_reg *reg)
{
  struct bench_row row;
  double t0;
  int rc;

  memset(reg, 0, sizeof(*reg));
  if (!j->reg)
    return 0;
  t0 = bench_now();
  rc = gpufs_register(g_bench.path);
  reg->register_s = bench_now() - t0;
  if (rc == 0) {
    reg->on = 1;
    bench_progress("%s: gpufs_register(%s) in %.3f s", j->workload, g_bench.path,
                   reg->register_s);
    return 0;
  }
  bench_row_init(&row, j->workload, config, NAN,
                 j->access == BENCH_RAND_WARP ? "Mpages/s" : "GB/s");
  bench_row_status(&row, BENCH_FAILED, "gpufs_register: %s (%s)", gpufs_strerror(rc),
                   gpufs_error_detail());
  bench_row_f64(&row, "register_s", reg->register_s);
  bench_report_add(&row);
  bench_progress("%s: %s", j->workload, row.note);
  bench_reg_record(j, config, reg, NULL, row.status, row.note);
  return rc;
}

void bench_reg_row(struct bench_row *row, const struct bench_reg *reg,
                   const struct gpufs_stats *st)
{
  if (!reg->on)
    return;
  /* a seq or rand row has 43 fields before these: 48 with them (a cold row
   * adds 3 more: bench/cold.cu) */
  if (row->nextra + 5 > BENCH_MAX_EXTRA)
    bench_progress("warning: %s: more than BENCH_MAX_EXTRA (%d) fields; the reg_* ones are cut",
                   row->workload, BENCH_MAX_EXTRA);
  bench_row_f64(row, "register_s", reg->register_s);
  bench_row_u64(row, "reg_pages", st->reg_pages);
  bench_row_f64(row, "reg_share", bench_reg_share(st->reg_pages, st->misses));
  bench_row_u64(row, "reg_bytes", st->reg_bytes);
  bench_row_u64(row, "reg_retired", st->reg_retired);
  if (row->status != BENCH_FAILED && st->reg_pages == 0) {
    bench_row_status(row, BENCH_FAILED,
                     "invalid: reg_pages 0 of %llu misses, the registered path was not used "
                     "(reg_files %llu, reg_refused %llu, reg_retired %llu)",
                     (unsigned long long)st->misses, (unsigned long long)st->reg_files,
                     (unsigned long long)st->reg_refused, (unsigned long long)st->reg_retired);
    row->value = NAN;
  }
}

int bench_reg_with_setup(const struct bench_row *row, const struct bench_reg *reg,
                         const struct bench_read_result *r, struct bench_row *out)
{
  const double total = reg->register_s + r->seconds;
  if (!reg->on || row->status == BENCH_FAILED || !(total > 0))
    return 0;
  *out = *row;
  snprintf(out->workload, sizeof(out->workload), "%.22s+register", row->workload);
  out->value = strcmp(row->unit, "Mpages/s") ? (double)r->bytes / total / 1e9
                                             : (double)r->calls / total / 1e6;
  bench_row_f64(out, "total_seconds", total);
  snprintf(out->note, sizeof(out->note),
           "counts gpufs_register (register_s) with the kernel: the row above leaves it out");
  return 1;
}

void bench_map_check(struct bench_row *row, const struct gpufs_stats *st)
{
  if (row->status == BENCH_FAILED)
    return;
  if (st->map_copies == 0 && st->reg_pages == 0 && st->preads > 0) {
    bench_row_status(row, BENCH_FAILED,
                     "invalid: no run copied from a mapping (mmap refused: the workers "
                     "read with pread)");
    row->value = NAN;
  }
}

void bench_reg_end(const struct bench_job *j, const char *config, struct bench_reg *reg,
                   const struct gpufs_stats *st, const struct bench_row *last)
{
  struct bench_row row;
  double t0;
  int rc;

  if (!reg->on)
    return;
  t0 = bench_now();
  rc = gpufs_unregister(g_bench.path);
  reg->unregister_s = bench_now() - t0;
  reg->on = 0;
  bench_progress("%s: reg_pages %llu of %llu misses (%.1f%%) from the mapping; "
                 "gpufs_register %.3f s, gpufs_unregister %.3f s%s",
                 j->workload, (unsigned long long)st->reg_pages,
                 (unsigned long long)st->misses,
                 100.0 * bench_reg_share(st->reg_pages, st->misses), reg->register_s,
                 reg->unregister_s, rc ? " (failed)" : "");
  if (rc == 0) {
    bench_reg_record(j, config, reg, st, last->status, last->note);
    return;
  }
  bench_row_init(&row, j->workload, config, NAN,
                 j->access == BENCH_RAND_WARP ? "Mpages/s" : "GB/s");
  bench_row_status(&row, BENCH_FAILED, "gpufs_unregister: %s (%s)", gpufs_strerror(rc),
                   gpufs_error_detail());
  bench_row_f64(&row, "register_s", reg->register_s);
  bench_row_f64(&row, "unregister_s", reg->unregister_s);
  bench_report_add(&row);
  bench_progress("%s: %s", j->workload, row.note);
  /* the summary tells the job's own failure first */
  if (last->status == BENCH_FAILED)
    bench_reg_record(j, config, reg, st, last->status, last->note);
  else
    bench_reg_record(j, config, reg, st, row.status, row.note);
}

/* The M pages/s of the last rand job on the daemon path. */
static struct {
  char workload[32];
  double mpps;
} g_reg_twin;

void bench_reg_twin(const struct bench_job *j, struct bench_row *row)
{
  const int n = (int)strcspn(j->workload, "/");
  char twin[32];

  if (!j->reg) {
    snprintf(g_reg_twin.workload, sizeof(g_reg_twin.workload), "%s", j->workload);
    g_reg_twin.mpps = row->status == BENCH_FAILED ? NAN : row->value;
    return;
  }
  snprintf(twin, sizeof(twin), "%.*s", n, j->workload);
  bench_row_baseline(row, twin, strcmp(twin, g_reg_twin.workload) ? NAN : g_reg_twin.mpps);
}

void bench_reg_summary(FILE *f)
{
  int i, wl = 8, wc = 13;

  if (g_reg_nrecords == 0)
    return;
  for (i = 0; i < g_reg_nrecords; i++) {
    const int l = (int)strlen(g_reg_records[i].workload), c = (int)strlen(g_reg_records[i].config);
    wl = l > wl ? l : wl;
    wc = c > wc ? c : wc;
  }
  fprintf(f, "\nregistered files: misses served from the mapping (reg_pages of misses), and\n"
             "gpufs_register's time (register_s, not part of the timed read)\n\n");
  fprintf(f, "%-*s  %-*s  %21s  %6s  %10s  %s\n", wl, "workload", wc, "configuration",
          "reg_pages / misses", "share", "register_s", "status");
  for (i = 0; i < g_reg_nrecords; i++) {
    const struct bench_reg_record *r = &g_reg_records[i];
    char pages[48], share[16];
    const double s = bench_reg_share(r->reg_pages, r->misses);
    if (r->counted)
      snprintf(pages, sizeof(pages), "%llu / %llu", (unsigned long long)r->reg_pages,
               (unsigned long long)r->misses);
    else
      snprintf(pages, sizeof(pages), "-");
    if (r->counted && !isnan(s))
      snprintf(share, sizeof(share), "%.1f%%", 100.0 * s);
    else
      snprintf(share, sizeof(share), "-");
    fprintf(f, "%-*s  %-*s  %21s  %6s  %10.3f  %s\n", wl, r->workload, wc, r->config, pages, share,
            r->register_s, r->outcome);
  }
}
