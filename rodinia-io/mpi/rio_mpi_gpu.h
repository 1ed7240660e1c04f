/*
 * rio_mpi_gpu.h - rodinia_mpi's GPU side (gpu.cu): what main.c (C, MPI)
 * calls to run a gpufs version of a rank's part.  Every function returns
 * 0 or a negative errno and says why in run->why.
 * Context: the rank's main thread, its GPU current (cudaSetDevice).
 */
#ifndef RIO_MPI_GPU_H
#define RIO_MPI_GPU_H

#include <gpufs.cuh> /* the host API (C linkage) */

#include "rodinia-io/mpi/rio_mpi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The suite's benchmark (rio_bench_conv2d, ...). */
const struct rio_bench *rio_mpi_bench_of(enum rio_mpi_bench b);

/* Before a timed run of gpufs version v: a libgpufs instance of cfg (this
 * rank's GPU, page size and cache) and the loaders' buffers (the device
 * copies of the paths).  rio_mpi_gpu_end after it, once per begin that
 * returned 0: both freed, the instance stopped. */
int rio_mpi_gpu_begin(struct rio_run *run, enum rio_version v, const struct gpufs_config *cfg);
int rio_mpi_gpu_end(struct rio_run *run);

/* Units [u0, u1) of b by gpufs version v, inside the instance of
 * rio_mpi_gpu_begin; the result into out (host memory, unit_bytes a unit).
 * Reads only the part's rows (or row windows) of the files; run->t gets
 * the benchmark's own timing of the part. */
int rio_mpi_gpufs_part(enum rio_mpi_bench b, struct rio_run *run, enum rio_version v, uint64_t u0, uint64_t u1,
                       void *out);

#ifdef __cplusplus
}
#endif
#endif /* RIO_MPI_GPU_H */
