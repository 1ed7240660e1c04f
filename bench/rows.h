/*
 * rows.h - gpufs_bench's rows of a libgpufs run (bench/rows.cu): status,
 * configuration and counter fields, one row per baseline.
 */
#ifndef BENCH_ROWS_H
#define BENCH_ROWS_H

#include <gpufs.cuh>

#include "bench/plan.h"
#include "bench/workloads.h"
#include "benchlib/report.h"

/* Status and note of a row from the kernel's outcome (rc, *r); value NaN
 * unless the data was complete and right (capped: right as far as it
 * got).  write: r is a write's (gwrite calls, the file's check). */
void bench_judge(struct bench_row *row, int rc, const struct bench_read_result *r, double cap,
                 int write);
/* bench_judge, then what only a write can get wrong: the file could not be
 * read back, or has the wrong size although every block finished. */
void bench_judge_write(struct bench_row *row, int rc, const struct bench_write_result *w,
                       double cap);
/* The fields of every libgpufs row: its configuration and outcome. */
void bench_run_extras(struct bench_row *row, const struct bench_job *j,
                      const struct gpufs_config *cfg, const struct bench_read_result *r,
                      double cap);
/* bench_run_extras, then the read path's counters of *st and alloc_share. */
void bench_extras(struct bench_row *row, const struct bench_job *j,
                  const struct gpufs_config *cfg, const struct bench_read_result *r,
                  const struct gpufs_stats *st, double cap);
/* The write path's counters of *st (and the read path's that tell whether
 * a write read anything). */
void bench_write_extras(struct bench_row *row, const struct gpufs_stats *st);
/* The pin counters of *st: reg_pages, reg_files, pins_auto, pins_released,
 * pins_bytes. */
void bench_pin_extras(struct bench_row *row, const struct gpufs_stats *st);
/* *now's read-path counters (those bench_extras writes) less *before's:
 * the counters of the one kernel between the two gpufs_get_stats. */
void bench_stats_since(struct gpufs_stats *now, const struct gpufs_stats *before);
/* Add base once per baseline (names[i], values[i]), or once without when
 * n is 0. */
void bench_emit(const struct bench_row *base, const char *const *names, const double *values,
                int n);

#endif /* BENCH_ROWS_H */
