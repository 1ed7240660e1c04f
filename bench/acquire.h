/*
 * acquire.h - gpufs_bench's "acquire" workload (bench/acquire.cu): a file
 * the host changes in place between kernels, read again with
 * gpufs_acquire, with a reopen, or copied whole.
 */
#ifndef BENCH_ACQUIRE_H
#define BENCH_ACQUIRE_H

#ifdef __cplusplus
extern "C" {
#endif

/* Add the acquire and acquire/reopen rows (a scratch copy of the data
 * file in --dir, removed after). */
void bench_acquire(void);

#ifdef __cplusplus
}
#endif
#endif /* BENCH_ACQUIRE_H */
