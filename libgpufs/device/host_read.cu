/*
 * host_read.cu - gpufs_pread's kernel: host code reads a file through one
 * instance's page cache (GAIA's peer caching toward the CPU).
 *
 * One warp per page of the range at a time, on a side stream beside the
 * kernels that may be using the cache:
 *
 *   lane 0   lock-free lookup of (cid, page) at the file's current version;
 *            a VALID frame is pinned (never a LOADING one: nothing waits)
 *   warp     copy the page's part of [off, off+size) into dst (pinned host
 *            memory, written across the link)
 *   lane 0   unpin; have[page] = 1
 *
 * Pages not found are left to the host (have[page] = 0).  Block 0's first
 * warp also reports the largest size an open descriptor of the file has on
 * this instance: bytes its writers put past the host file's end are the
 * file's too.
 */
#include <cuda_runtime.h>

#include "libgpufs/device/round.cuh"
#include "libgpufs/common/devcalls.h"

#define HOST_READ_THREADS 256

static __global__ void host_read_kernel(uint32_t instance, uint32_t cid, uint32_t version,
                                        uint64_t off, uint64_t size, uint8_t *dst, uint8_t *have,
                                        unsigned long long *gpu_size)
{
  const struct gpufs_dev *d = gpufs_instance(instance);
  if (d == NULL) return; /* have[] stays 0: the host reads everything */
  const struct gpufs_cache *c = &d->cache;
  const uint32_t S = c->page_size;
  const uint32_t lane = gpufs_lane();
  const uint64_t warp = (blockIdx.x * (uint64_t)blockDim.x + threadIdx.x) / 32;
  const uint64_t nwarps = (uint64_t)gridDim.x * blockDim.x / 32;
  const uint64_t p0 = off / S, p1 = (off + size - 1) / S;
  if (warp == 0) {
    /* relaxed: the open file's size is a hint for the host's answer, which
     * races with running writers anyway */
    uint64_t m = 0;
    for (uint32_t i = lane; i < d->ftab.nfiles; i += 32) {
      struct gpufs_gnode *nd = &d->ftab.nodes[i];
      if (gpufs_ld_relaxed_u32_dev(&nd->cid) == cid) {
        uint64_t s = gpufs_ld_relaxed_u64_dev(&nd->size);
        if (s > m) m = s;
      }
    }
    if (m) atomicMax(gpu_size, (unsigned long long)m);
  }
  if (size == 0) return; /* the size alone */
  for (uint64_t p = p0 + warp; p <= p1; p += nwarps) {
    uint32_t f = GPUFS_NIL;
    if (lane == 0) {
      uint32_t st = 0;
      f = gpufs_chain_find(c, gpufs_key(cid, p), version, &st);
      if (f != GPUFS_NIL && st != GPUFS_PG_VALID) {
        gpufs_frame_unpin(c, f);
        f = GPUFS_NIL;
      }
    }
    f = __shfl_sync(GPUFS_FULL_MASK, f, 0);
    if (f == GPUFS_NIL) continue;
    const uint64_t ps = p * S;
    const uint64_t lo = ps > off ? ps : off;
    const uint64_t hi = ps + S < off + size ? ps + S : off + size;
    gpufs_group_copy(dst + (lo - off), gpufs_frame_data(c, f) + (lo - ps), (size_t)(hi - lo), lane,
                     32);
    /* every lane's reads of the frame are done before lane 0 unpins it;
     * the unpin's release pairs with an allocator's acquire */
    __syncwarp();
    if (lane == 0) {
      gpufs_frame_unpin(c, f);
      have[p - p0] = 1;
    }
  }
}

extern "C" int gpufs_dev_host_read_launch(uint32_t instance, uint32_t cid, uint32_t version,
                                          uint64_t off, uint64_t size, uint8_t *dst,
                                          uint8_t *have, unsigned long long *gpu_size,
                                          void *stream)
{
  int sms = 0, dev = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  const uint64_t warps = size / 4096 + 1;
  uint64_t blocks = (warps * 32 + HOST_READ_THREADS - 1) / HOST_READ_THREADS;
  const uint64_t cap = (uint64_t)(sms > 0 ? sms : 1) * 8;
  if (blocks > cap) blocks = cap;
  host_read_kernel<<<(unsigned)blocks, HOST_READ_THREADS, 0, (cudaStream_t)stream>>>(
      instance, cid, version, off, size, dst, have, gpu_size);
  return cudaGetLastError() == cudaSuccess ? 0 : -GPUFS_EIO;
}

extern "C" int gpufs_dev_host_read_preload(void)
{
  struct cudaFuncAttributes a;
  return cudaFuncGetAttributes(&a, host_read_kernel) == cudaSuccess ? 0 : -GPUFS_EIO;
}
