/*
 * group.cuh - a group of the exerciser (a whole block making block-level
 * calls, or one warp making *_warp calls), its collectives, and the device
 * calls in both forms.
 *
 * Every helper here is called by every thread of the group with equal
 * arguments, like the calls it wraps; the ones that synchronize say so.
 */
#ifndef GPUFS_TESTS_FSX_GROUP_CUH
#define GPUFS_TESTS_FSX_GROUP_CUH

#include "include/gpufs.cuh"
#include "tests/fsx/model.cuh"

struct fsx_grp {
  bool warp;                /* warp-level calls */
  uint32_t rank, size;      /* the thread in the group, the group's threads */
  uint32_t slot;            /* fsx_slot(block, warp or 0) */
  unsigned long long *sh;   /* block groups: a shared word of the block */
};

/* Barrier over the group: orders the group's global and shared accesses. */
__device__ inline void fsx_sync(const fsx_grp *g)
{
  if (g->warp) __syncwarp();
  else __syncthreads();
}

/* Thread 0's v, to every thread; synchronizes the group. */
__device__ inline int64_t fsx_bcast(const fsx_grp *g, int64_t v)
{
  if (g->warp) return __shfl_sync(0xffffffffu, v, 0);
  __syncthreads();
  if (g->rank == 0) *g->sh = (unsigned long long)v;
  __syncthreads();
  int64_t r = (int64_t)*g->sh;
  __syncthreads();
  return r;
}

/* The smallest v of the group, to every thread; synchronizes the group. */
__device__ inline uint64_t fsx_min(const fsx_grp *g, uint64_t v)
{
  if (g->warp) {
    for (int o = 16; o > 0; o >>= 1) {
      uint64_t w = __shfl_xor_sync(0xffffffffu, v, o);
      v = w < v ? w : v;
    }
    return v;
  }
  __syncthreads();
  if (g->rank == 0) *g->sh = ~0ull;
  __syncthreads();
  atomicMin(g->sh, (unsigned long long)v);
  __syncthreads();
  uint64_t r = *g->sh;
  __syncthreads();
  return r;
}

/* ---- the device calls, block-level or warp-level ----
 * A warp-level call needs its warp converged: each wrapper reconverges it
 * first (the group's loops over bytes leave lanes apart). */

__device__ inline int fsx_gopen(const fsx_grp *g, const char *p, int flags)
{
  if (g->warp) {
    __syncwarp();
    return gopen_warp(p, flags, 0644);
  }
  return gopen(p, flags, 0644);
}
__device__ inline int fsx_gclose(const fsx_grp *g, int fd)
{
  if (g->warp) {
    __syncwarp();
    return gclose_warp(fd);
  }
  return gclose(fd);
}
__device__ inline ssize_t fsx_gread(const fsx_grp *g, int fd, int64_t off, size_t n, void *b)
{
  if (g->warp) {
    __syncwarp();
    return gread_warp(fd, off, n, b);
  }
  return gread(fd, off, n, b);
}
__device__ inline ssize_t fsx_gwrite(const fsx_grp *g, int fd, int64_t off, size_t n, const void *b)
{
  if (g->warp) {
    __syncwarp();
    return gwrite_warp(fd, off, n, b);
  }
  return gwrite(fd, off, n, b);
}
__device__ inline void *fsx_gmmap(const fsx_grp *g, size_t n, int prot, int flags, int fd, int64_t off)
{
  if (g->warp) {
    __syncwarp();
    return gmmap_warp(NULL, n, prot, flags, fd, off);
  }
  return gmmap(NULL, n, prot, flags, fd, off);
}
__device__ inline int fsx_gmunmap(const fsx_grp *g, void *p, size_t n)
{
  if (g->warp) {
    __syncwarp();
    return gmunmap_warp(p, n);
  }
  return gmunmap(p, n);
}
__device__ inline int fsx_gmsync(const fsx_grp *g, void *p, size_t n, int flags)
{
  if (g->warp) {
    __syncwarp();
    return gmsync_warp(p, n, flags);
  }
  return gmsync(p, n, flags);
}
__device__ inline int fsx_gfsync(const fsx_grp *g, int fd)
{
  if (g->warp) {
    __syncwarp();
    return gfsync_warp(fd);
  }
  return gfsync(fd);
}
__device__ inline int fsx_gftruncate(const fsx_grp *g, int fd, int64_t len)
{
  if (g->warp) {
    __syncwarp();
    return gftruncate_warp(fd, len);
  }
  return gftruncate(fd, len);
}
__device__ inline int fsx_gfstat(const fsx_grp *g, int fd, struct gstat *st)
{
  if (g->warp) {
    __syncwarp();
    return gfstat_warp(fd, st);
  }
  return gfstat(fd, st);
}

#endif /* GPUFS_TESTS_FSX_GROUP_CUH */
