/*
 * drop.cu - gpufs_acquire's kernel: drop from one instance's cache the
 * pages of a file that the host changed (gpufs_cache_drop, cache.h).
 *
 * One thread per listed page at a time, on a side stream, between the
 * program's kernels: a page in use (pinned, loading) is counted BUSY and
 * stays, for the host to try again; a dirty page stays (the GPU's own
 * bytes win).  counts[r] (device memory, zeroed by the caller) gets the
 * number of pages of each enum gpufs_drop_result but ABSENT.
 */
#include <cuda_runtime.h>

#include "libgpufs/device/round.cuh"
#include "libgpufs/common/devcalls.h"

#define DROP_THREADS 256

static __global__ void drop_kernel(uint32_t instance, uint32_t cid, uint32_t version,
                                   const uint64_t *pages, uint64_t n, unsigned long long *counts)
{
  const struct gpufs_dev *d = gpufs_instance(instance);
  if (d == NULL) return; /* not published here: it caches nothing */
  const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
  unsigned long long local[GPUFS_DROP_RESULTS] = {0, 0, 0, 0};
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += stride)
    local[gpufs_cache_drop(&d->cache, gpufs_key(cid, pages[i]), version)]++;
  for (int r = 1; r < GPUFS_DROP_RESULTS; r++)
    if (local[r]) atomicAdd(&counts[r], local[r]);
}

extern "C" int gpufs_dev_drop_launch(const struct gpufs_drop_params *p, void *stream)
{
  int sms = 0, dev = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  uint64_t blocks = (p->n + DROP_THREADS - 1) / DROP_THREADS;
  const uint64_t cap = (uint64_t)(sms > 0 ? sms : 1) * 4;
  if (blocks > cap) blocks = cap;
  if (blocks == 0) return 0;
  drop_kernel<<<(unsigned)blocks, DROP_THREADS, 0, (cudaStream_t)stream>>>(
      p->instance, p->cid, p->version, p->pages, p->n, p->counts);
  return cudaGetLastError() == cudaSuccess ? 0 : -GPUFS_EIO;
}

extern "C" int gpufs_dev_drop_preload(void)
{
  struct cudaFuncAttributes a;
  return cudaFuncGetAttributes(&a, drop_kernel) == cudaSuccess ? 0 : -GPUFS_EIO;
}
