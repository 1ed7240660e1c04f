/*
 * rows.cu - gpufs_bench's rows of a libgpufs run (bench/rows.h): the
 * counters each row carries, its status from the kernel's outcome, its
 * configuration fields, and one row per baseline.
 */
#include "bench/rows.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "benchlib/util.h"

#define BENCH_THREADS BENCH_BLOCK_THREADS

struct bench_stat_field {
  const char *name;
  size_t off;
};

static const struct bench_stat_field bench_stat_fields[] = {
    {"hits", offsetof(struct gpufs_stats, hits)},
    {"misses", offsetof(struct gpufs_stats, misses)},
    {"ra_pages", offsetof(struct gpufs_stats, ra_pages)},
    {"evictions", offsetof(struct gpufs_stats, evictions)},
    {"scanned", offsetof(struct gpufs_stats, scanned)},
    {"nofree", offsetof(struct gpufs_stats, nofree)},
    {"requests", offsetof(struct gpufs_stats, requests)},
    {"batches", offsetof(struct gpufs_stats, batches)},
    {"preads", offsetof(struct gpufs_stats, preads)},
    {"map_copies", offsetof(struct gpufs_stats, map_copies)},
    {"merged", offsetof(struct gpufs_stats, merged)},
    {"bytes_read", offsetof(struct gpufs_stats, bytes_read)},
    {"opens", offsetof(struct gpufs_stats, opens)},
    {"stat_errors", offsetof(struct gpufs_stats, errors)},
    {"daemon_io_ns", offsetof(struct gpufs_stats, daemon_io_ns)},
    {"daemon_busy_ns", offsetof(struct gpufs_stats, daemon_busy_ns)},
    {"alloc_ns", offsetof(struct gpufs_stats, alloc_ns)},
    {"rounds", offsetof(struct gpufs_stats, rounds)},
    {"fetch_ns", offsetof(struct gpufs_stats, fetch_ns)},
    {"fill_ns", offsetof(struct gpufs_stats, fill_ns)},
    {"settle_ns", offsetof(struct gpufs_stats, settle_ns)},
    {"copy_ns", offsetof(struct gpufs_stats, copy_ns)},
    {"chains", offsetof(struct gpufs_stats, chains)},
    {"chained", offsetof(struct gpufs_stats, chained)},
    {"chain_max", offsetof(struct gpufs_stats, chain_max)},
};
#define BENCH_NSTATS (int)(sizeof(bench_stat_fields) / sizeof(bench_stat_fields[0]))

/* The counters of a write row: the write path's, and those of the read path
 * that tell whether a write read anything (the hash chain figures left out:
 * a row holds at most BENCH_MAX_EXTRA fields). */
static const struct bench_stat_field bench_write_stat_fields[] = {
    {"hits", offsetof(struct gpufs_stats, hits)},
    {"misses", offsetof(struct gpufs_stats, misses)},
    {"evictions", offsetof(struct gpufs_stats, evictions)},
    {"nofree", offsetof(struct gpufs_stats, nofree)},
    {"requests", offsetof(struct gpufs_stats, requests)},
    {"batches", offsetof(struct gpufs_stats, batches)},
    {"preads", offsetof(struct gpufs_stats, preads)},
    {"bytes_read", offsetof(struct gpufs_stats, bytes_read)},
    {"opens", offsetof(struct gpufs_stats, opens)},
    {"stat_errors", offsetof(struct gpufs_stats, errors)},
    {"alloc_ns", offsetof(struct gpufs_stats, alloc_ns)},
    {"pwrites", offsetof(struct gpufs_stats, pwrites)},
    {"bytes_written", offsetof(struct gpufs_stats, bytes_written)},
    {"write_starts", offsetof(struct gpufs_stats, write_starts)},
    {"daemon_io_ns", offsetof(struct gpufs_stats, daemon_io_ns)},
    {"daemon_busy_ns", offsetof(struct gpufs_stats, daemon_busy_ns)},
    {"writebacks", offsetof(struct gpufs_stats, writebacks)},
    {"cleanings", offsetof(struct gpufs_stats, cleanings)},
    {"dirty", offsetof(struct gpufs_stats, dirty)},
};
#define BENCH_NWRITE_STATS \
  (int)(sizeof(bench_write_stat_fields) / sizeof(bench_write_stat_fields[0]))

static uint64_t bench_stat_at(const struct gpufs_stats *s, const struct bench_stat_field *f)
{
  uint64_t v;
  memcpy(&v, (const char *)s + f->off, sizeof(v));
  return v;
}

static uint64_t bench_stat(const struct gpufs_stats *s, int i)
{
  return bench_stat_at(s, &bench_stat_fields[i]);
}

/* Status and note of a row from the kernel's outcome; value NaN unless
 * the data was complete and right (capped: right as far as it got).
 * write: the outcome of bench_gpufs_write (gwrite calls, the file's check). */
void bench_judge(struct bench_row *row, int rc, const struct bench_read_result *r,
                        double cap, int write)
{
  if (rc)
    bench_row_status(row, BENCH_FAILED, "%s",
                     rc == -EIO ? "CUDA error (see stderr)" : strerror(-rc));
  else if (r->errors)
    bench_row_status(row, BENCH_FAILED, "%llu calls failed; the first returned %lld (%s)",
                     (unsigned long long)r->errors, (long long)r->first_error,
                     r->first_error < 0 ? gpufs_strerror((int)r->first_error)
                     : write           ? "short write"
                                       : "short read");
  else if (r->mismatches)
    bench_row_status(row, BENCH_FAILED, "%llu wrong words%s, the first at byte %llu",
                     (unsigned long long)r->mismatches, write ? " in the file" : "",
                     (unsigned long long)r->first_bad);
  else if (r->capped_groups)
    bench_row_status(row, BENCH_CAPPED,
                     "%llu groups stopped by the %.3g s cap after %llu of %llu bytes",
                     (unsigned long long)r->capped_groups, cap, (unsigned long long)r->bytes,
                     (unsigned long long)r->expected_bytes);
  else if (r->bytes != r->expected_bytes)
    bench_row_status(row, BENCH_FAILED, "%s %llu of %llu bytes", write ? "wrote" : "read",
                     (unsigned long long)r->bytes, (unsigned long long)r->expected_bytes);
  if (row->status == BENCH_FAILED)
    row->value = NAN;
}

/* bench_judge, then what only a write can get wrong: the file could not be
 * read back, or has the wrong size although every block finished. */
void bench_judge_write(struct bench_row *row, int rc, const struct bench_write_result *w,
                              double cap)
{
  bench_judge(row, rc, &w->io, cap, 1);
  if (row->status == BENCH_FAILED)
    return;
  if (w->check_error)
    bench_row_status(row, BENCH_FAILED, "checking the file on the host: %s",
                     strerror(-w->check_error));
  else if (!w->io.capped_groups && w->file_bytes != w->io.expected_bytes)
    bench_row_status(row, BENCH_FAILED, "the file has %llu bytes, not %llu",
                     (unsigned long long)w->file_bytes, (unsigned long long)w->io.expected_bytes);
  if (row->status == BENCH_FAILED)
    row->value = NAN;
}

/* The fields of every libgpufs row: its configuration and outcome. */
void bench_run_extras(struct bench_row *row, const struct bench_job *j,
                             const struct gpufs_config *cfg, const struct bench_read_result *r,
                             double cap)
{
  bench_row_u64(row, "page_size", cfg->page_size);
  bench_row_u64(row, "cache_size", cfg->cache_size);
  bench_row_u64(row, "io_size", j->io);
  bench_row_u64(row, "blocks", (uint64_t)j->blocks);
  bench_row_u64(row, "threads", BENCH_THREADS);
  bench_row_u64(row, "daemon_threads", gpufs_config_daemon_threads(cfg));
  bench_row_u64(row, "staging_size", gpufs_config_staging(cfg));
  bench_row_u64(row, "max_batch", cfg->max_batch);
  bench_row_u64(row, "nrings", gpufs_config_rings(cfg));
  bench_row_u64(row, "pull_warps", cfg->pull_warps);
  bench_row_u64(row, "readahead_max", cfg->readahead_max);
  bench_row_f64(row, "seconds", r->seconds);
  bench_row_f64(row, "measured_gbps", r->gbps);
  bench_row_u64(row, "bytes", r->bytes);
  bench_row_u64(row, "calls", r->calls);
  bench_row_u64(row, "mismatches", r->mismatches);
  bench_row_u64(row, "call_errors", r->errors);
  bench_row_u64(row, "capped_groups", r->capped_groups);
  bench_row_f64(row, "cap_seconds", cap);
}

void bench_extras(struct bench_row *row, const struct bench_job *j,
                         const struct gpufs_config *cfg, const struct bench_read_result *r,
                         const struct gpufs_stats *st, double cap)
{
  int i;
  bench_run_extras(row, j, cfg, r, cap);
  for (i = 0; i < BENCH_NSTATS; i++)
    bench_row_u64(row, bench_stat_fields[i].name, bench_stat(st, i));
  if (r->seconds > 0) {
    /* share of the meta lanes' time spent allocating (evictions included):
     * one meta warp of 32 lanes per group */
    double groups = j->access == BENCH_RAND_WARP || j->access == BENCH_SEQ_WARP
                        ? (double)j->blocks * BENCH_THREADS / 32
                        : (double)j->blocks;
    bench_row_f64(row, "alloc_share", (double)st->alloc_ns / 1e9 / (groups * 32 * r->seconds));
  }
}

/* Add base once per baseline (name, value), or once without when n is 0. */
void bench_emit(const struct bench_row *base, const char *const *names,
                       const double *values, int n)
{
  struct bench_row row;
  int i;
  if (n == 0)
    bench_report_add(base);
  for (i = 0; i < n; i++) {
    row = *base;
    bench_row_baseline(&row, names[i], values[i]);
    bench_report_add(&row);
  }
}


void bench_write_extras(struct bench_row *row, const struct gpufs_stats *st)
{
  for (int i = 0; i < BENCH_NWRITE_STATS; i++)
    bench_row_u64(row, bench_write_stat_fields[i].name,
                  bench_stat_at(st, &bench_write_stat_fields[i]));
}

/* The counters since *before; the gauges (the hash chains, counted at the
 * time of the call) stay as *now has them. */
void bench_stats_since(struct gpufs_stats *now, const struct gpufs_stats *before)
{
  for (int i = 0; i < BENCH_NSTATS; i++) {
    const size_t off = bench_stat_fields[i].off;
    if (off == offsetof(struct gpufs_stats, chains) || off == offsetof(struct gpufs_stats, chained) ||
        off == offsetof(struct gpufs_stats, chain_max))
      continue;
    uint64_t v = bench_stat(now, i) - bench_stat(before, i);
    memcpy((char *)now + bench_stat_fields[i].off, &v, sizeof(v));
  }
}

void bench_pin_extras(struct bench_row *row, const struct gpufs_stats *st)
{
  bench_row_u64(row, "reg_pages", st->reg_pages);
  bench_row_u64(row, "reg_files", st->reg_files);
  bench_row_u64(row, "pins_auto", st->pins_auto);
  bench_row_u64(row, "pins_released", st->pins_released);
  bench_row_u64(row, "pins_bytes", st->pins_bytes);
}
