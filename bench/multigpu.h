/*
 * multigpu.h - gpufs_bench's "mgpu" workload (bench/multigpu.cu): one
 * libgpufs instance per GPU, all GPUs reading at once, against the host's
 * ceilings and experts on every GPU at once; peer caching between GPUs.
 */
#ifndef BENCH_MULTIGPU_H
#define BENCH_MULTIGPU_H

#ifdef __cplusplus
extern "C" {
#endif

/* Run the mgpu rows on the first g_bench.opt.gpus GPUs (0: every visible
 * one, at most GPUFS_MAX_INSTANCES); one n/a row with fewer than two.
 * libgpufs must not be started; it is started and stopped per run. */
void bench_multigpu(void);

#ifdef __cplusplus
}
#endif
#endif /* BENCH_MULTIGPU_H */
