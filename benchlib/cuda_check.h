/*
 * cuda_check.h - every CUDA runtime call of the benchmarks goes through
 * BENCH_CUDA, which prints file:line, the call, and the error's name and
 * text, and turns the result into 0 or -EIO:
 *
 *   if ((rc = BENCH_CUDA(cudaMalloc(&p, n))) != 0) goto out;
 *
 * Kernel launches: BENCH_CUDA(cudaGetLastError()) right after the launch.
 */
#ifndef BENCH_CUDA_CHECK_H
#define BENCH_CUDA_CHECK_H

#include <errno.h>
#include <stdio.h>
#include <cuda_runtime_api.h>

static inline int bench_cuda_check(cudaError_t e, const char *call, const char *file, int line)
{
  if (e == cudaSuccess)
    return 0;
  fprintf(stderr, "%s:%d: %s: %s (%s)\n", file, line, call, cudaGetErrorName(e),
          cudaGetErrorString(e));
  return -EIO;
}

#define BENCH_CUDA(call) bench_cuda_check((call), #call, __FILE__, __LINE__)

#endif /* BENCH_CUDA_CHECK_H */
