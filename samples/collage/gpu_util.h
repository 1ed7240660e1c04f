/*
 * gpu_util.h - CUDA helpers of the collage's libgpufs versions (gpu.cu)
 * and of its index in device memory (gpuindex.cu).  Included by .cu files
 * only.
 */
#ifndef COLLAGE_GPU_UTIL_H
#define COLLAGE_GPU_UTIL_H

#include <errno.h>
#include <stdio.h>

#include <cuda_runtime.h>

/* 0, or a message on stderr naming `what` and -ENOMEM (an allocation) or
 * -EIO (any other CUDA failure). */
static inline int cg_cuda(cudaError_t e, const char *what)
{
  if (e == cudaSuccess)
    return 0;
  fprintf(stderr, "collage: %s: %s\n", what, cudaGetErrorString(e));
  return e == cudaErrorMemoryAllocation ? -ENOMEM : -EIO;
}

/* Copy n bytes of host src into a new device buffer *dst.  0 or -errno. */
static inline int cg_upload(void **dst, const void *src, size_t n, const char *what)
{
  int rc = cg_cuda(cudaMalloc(dst, n ? n : 4), what);
  if (!rc && n)
    rc = cg_cuda(cudaMemcpy(*dst, src, n, cudaMemcpyHostToDevice), what);
  return rc;
}

#endif /* COLLAGE_GPU_UTIL_H */
