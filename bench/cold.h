/*
 * cold.h - gpufs_bench's cold-file rows (group "cold", bench_job.cold):
 * the data file dropped from the host page cache before each timed read,
 * so that the read comes from the disk, for libgpufs and the expert alike.
 *
 * A drop is fdatasync + posix_fadvise(DONTNEED) ("fadvise"); when more than
 * BENCH_COLD_MAX_RESIDENT of the file is still resident after it and we
 * may, sync() + "1" into /proc/sys/vm/drop_caches ("drop_caches").  The
 * resident fraction left is measured with mincore() on a mapping of the
 * file just before the timed read: above BENCH_COLD_MAX_RESIDENT the row
 * fails (not a cold read); above BENCH_COLD_KEPT the file system does not
 * drop pages at all (tmpfs, ramfs) and the row says to use --dir on a disk.
 * Callable from C and C++ (nvcc) code.
 */
#ifndef BENCH_COLD_H
#define BENCH_COLD_H

#ifdef __cplusplus
extern "C" {
#endif

#define BENCH_COLD_MAX_RESIDENT 0.10
#define BENCH_COLD_KEPT 0.90

struct bench_job;
struct bench_row;
struct bench_reg;
struct bench_read_result;

/* One drop of the data file, from bench_cold_begin to bench_cold_row. */
struct bench_cold {
  const char *method; /* "fadvise" or "drop_caches" */
  double resident;    /* fraction of the file's pages resident after the drop */
};

/* The expert_cold row: the expert pipeline (bench_expert_passes) at the
 * best thread count of this run's expert rows (8 when none was measured),
 * the file dropped before each of its 3 passes; against the warm expert.
 * Its GB/s is the baseline of the seq/cold rows. */
void bench_cold_expert(void);

/* Drop the data file for cold job j in the started libgpufs, and check
 * that it left the page cache.  0; or an error after adding a failed row
 * of j with config (the kernel must not run: it would not read cold). */
int bench_cold_begin(const struct bench_job *j, const char *config, struct bench_cold *c);

/* Finish a row of cold job j: cold_method and resident_before; for a
 * registered job (reg on) the value becomes bytes / (register_s + kernel
 * seconds), total_seconds, and a note that says so; against expert_cold. */
void bench_cold_row(struct bench_row *row, const struct bench_cold *c, const struct bench_reg *reg,
                    const struct bench_read_result *r);

/* After the last cold job: read the data file into the page cache again,
 * as the jobs after it expect. */
void bench_cold_end(void);

#ifdef __cplusplus
}
#endif
#endif /* BENCH_COLD_H */
