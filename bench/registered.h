/*
 * registered.h - gpufs_bench's registered-file jobs (bench_job.reg): the
 * data file is gpufs_register()ed after gpufs_start and before the kernel,
 * and gpufs_unregister()ed after it, so that misses copy from the pinned
 * mapping of the host page cache instead of going through the daemon.
 *
 * The registration is not part of the timed read; its time is the rows'
 * register_s, and a row beside each ("<workload>+register") counts it.  A
 * row of a registered job whose misses never used the
 * mapping (reg_pages 0) measured the daemon path: it fails.
 * Callable from C and C++ (nvcc) code.
 */
#ifndef BENCH_REGISTERED_H
#define BENCH_REGISTERED_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

struct bench_job;
struct bench_read_result;
struct bench_row;
struct gpufs_stats;

/* One registration, from bench_reg_begin to bench_reg_end. */
struct bench_reg {
  int on;              /* gpufs_register returned 0: bench_reg_end undoes it */
  double register_s;   /* gpufs_register's time (pinning the file) */
  double unregister_s; /* gpufs_unregister's time */
};

/* Register the data file (g_bench.path) in the started libgpufs for job j.
 * 0; or the error of gpufs_register, after adding a failed row of j with
 * config (the kernel must not run: it would measure the daemon path). */
int bench_reg_begin(const struct bench_job *j, const char *config, struct bench_reg *reg);

/* Add the registration's fields to a row of the job (nothing when reg is
 * off): register_s, reg_pages, reg_share (reg_pages / misses), reg_bytes,
 * reg_retired; and fail the row when reg_pages is 0. */
void bench_reg_row(struct bench_row *row, const struct bench_reg *reg,
                   const struct gpufs_stats *st);

/* The row beside a registered job's row that counts the set-up the row
 * leaves out: workload "<row's>+register", value the row's bytes (GB/s)
 * or full calls (M pages/s) over register_s + the kernel's seconds, a note
 * saying so.  1 with *out filled when reg is on and the row measured
 * something, else 0. */
int bench_reg_with_setup(const struct bench_row *row, const struct bench_reg *reg,
                         const struct bench_read_result *r, struct bench_row *out);

/* A row fails when the daemon read runs but copied none from a file's
 * mapping: the kernel refused the mappings, and the figure would be
 * pread's. */
void bench_map_check(struct bench_row *row, const struct gpufs_stats *st);

/* After the job's rows (last one: row), unregister the data file: a failure
 * adds a failed row.  st: the kernel's counters; remembered, with row's
 * status, for bench_reg_summary. */
void bench_reg_end(const struct bench_job *j, const char *config, struct bench_reg *reg,
                   const struct gpufs_stats *st, const struct bench_row *row);

/* The M pages/s row of a rand job: remember it (a job on the daemon
 * path), or give it its twin's as baseline (a registered job: "rand" for
 * "rand/reg", NaN when the twin did not run or failed). */
void bench_reg_twin(const struct bench_job *j, struct bench_row *row);

/* The registered jobs of this run, one line each: the share of their misses
 * served from the mapping and the registration's time.  Nothing when no
 * registered job ran. */
void bench_reg_summary(FILE *f);

#ifdef __cplusplus
}
#endif
#endif /* BENCH_REGISTERED_H */
