/*
 * kernels.cuh - the graph kernels of every GPU version.  One round kernel
 * serves the four algorithms: warps take 32 consecutive vertices at a
 * time, read the offsets of those with work (the frontier, or all for
 * PageRank), then handle them one after the other, the whole warp on one
 * vertex's neighbours (lanes on consecutive neighbours: coalesced reads,
 * as EMOGI).  bfs, sssp and cc lower neighbours' values (min-propagation,
 * algo.h); pr sums the neighbours' contributions (pull).
 *
 * Where the CSR is read is a template parameter (a source): gr_mem_src
 * for a pointer GPU kernels can read (device, pinned-mapped or managed
 * memory), gr_fs_src for libgpufs.  It is a template only so that the
 * pointer versions do not pay for the device calls' registers and code.
 * A source gives
 *   offsets(v0, cnt, lane, &lo, &hi): lane i < cnt gets vertex v0 + i's
 *     neighbour range; every lane of the warp calls it; 0 or -errno;
 *   segment(e, end, &s): the neighbours (and weights) from edge e on, as
 *     far as one piece lies in memory (s.len >= 1); every lane calls it
 *     with equal arguments; 0 or -errno; release(&s) after.
 */
#ifndef GRAPHS_KERNELS_CUH
#define GRAPHS_KERNELS_CUH

#include <stdint.h>

#include <cub/warp/warp_reduce.cuh>
#include <cuda/atomic>

#include "graphs/algo.h"
#include "include/gpufs.cuh"

#define GR_THREADS 256
#define GR_WARPS (GR_THREADS / 32)
#define GR_FULL 0xffffffffu
#define GR_SCRATCH 40 /* words of gr_fs_src's scratch per warp (33 used) */

/* A piece of one vertex's edges in memory. */
struct gr_seg {
  const uint32_t *nb; /* neighbours [e, e + len) */
  const uint32_t *wt; /* their weights, or NULL (not needed or none) */
  uint64_t len;
};

/* The CSR at pointers the kernels can read. */
struct gr_mem_src {
  const uint64_t *off;
  const uint32_t *nb;
  const uint32_t *wt; /* NULL: not needed */

  __device__ int offsets(uint64_t v0, int cnt, int lane, uint64_t *lo, uint64_t *hi) const
  {
    if (lane < cnt) {
      *lo = off[v0 + lane];
      *hi = off[v0 + lane + 1];
    }
    return 0;
  }
  __device__ int segment(uint64_t e, uint64_t end, gr_seg *s) const
  {
    s->nb = nb + e;
    s->wt = wt ? wt + e : NULL;
    s->len = end - e;
    return 0;
  }
  __device__ void release(gr_seg *) const {}
};

/* The CSR file through libgpufs: fd open on the kernel's instance (a
 * warp-level gopen of an earlier kernel), the sections' byte offsets, and
 * per warp 33 words of device memory for gread_warp's offsets. */
struct gr_fs_src {
  int fd;
  uint32_t page;
  uint64_t off_off, nb_off, wt_off; /* wt_off 0: weights not needed */
  uint64_t *scratch;                /* GR_SCRATCH words per warp of the grid */

  __device__ int offsets(uint64_t v0, int cnt, int lane, uint64_t *lo, uint64_t *hi) const
  {
    const uint64_t warp = (blockIdx.x * (uint64_t)blockDim.x + threadIdx.x) / 32;
    uint64_t *buf = scratch + warp * GR_SCRATCH;
    const ssize_t got = gread_warp(fd, (int64_t)(off_off + 8 * v0), 8 * (size_t)(cnt + 1), buf);
    if (got != 8 * (ssize_t)(cnt + 1))
      return got < 0 ? (int)got : -GPUFS_EIO;
    if (lane < cnt) {
      *lo = buf[lane];
      *hi = buf[lane + 1];
    }
    __syncwarp();
    return 0;
  }
  /* gmmap maps within one page: the piece ends at the first page end of
   * the neighbours or the weights */
  __device__ int segment(uint64_t e, uint64_t end, gr_seg *s) const
  {
    const uint64_t a = nb_off + 4 * e;
    uint64_t len = end - e, room = (page - a % page) / 4;
    len = len < room ? len : room;
    if (wt_off) {
      room = (page - (wt_off + 4 * e) % page) / 4;
      len = len < room ? len : room;
    }
    s->len = len;
    s->wt = NULL;
    void *p = gmmap_warp(NULL, 4 * len, GPUFS_PROT_READ, GPUFS_MAP_PRIVATE, fd, (int64_t)a);
    if (GPUFS_MAP_FAILED(p))
      return GPUFS_MAP_ERRNO(p);
    s->nb = (const uint32_t *)p;
    if (!wt_off)
      return 0;
    p = gmmap_warp(NULL, 4 * len, GPUFS_PROT_READ, GPUFS_MAP_PRIVATE, fd, (int64_t)(wt_off + 4 * e));
    if (GPUFS_MAP_FAILED(p)) {
      gmunmap_warp((void *)s->nb, 4 * len);
      return GPUFS_MAP_ERRNO(p);
    }
    s->wt = (const uint32_t *)p;
    return 0;
  }
  __device__ void release(gr_seg *s) const
  {
    gmunmap_warp((void *)s->nb, 4 * s->len);
    if (s->wt)
      gmunmap_warp((void *)s->wt, 4 * s->len);
  }
};

/* One round's arrays (device memory). */
struct gr_round {
  enum graph_algo a;
  uint64_t n;
  unsigned long long *val;      /* bfs, sssp, cc */
  const uint8_t *cur;           /* the frontier; NULL: every vertex (pr) */
  uint8_t *next;                /* vertices lowered in this round */
  int *changed;                 /* set when a value fell */
  const float *contrib;         /* pr: rank / degree of each vertex */
  float *rank;                  /* pr: this round's ranks */
  float base;                   /* pr: (1 - d) / n */
  int *err;                     /* the lowest error of any warp */
};

/* Lower the neighbours of u (value base) in piece s; every lane calls. */
__device__ __forceinline__ void gr_relax(const gr_round &r, const gr_seg &s, unsigned long long base, int lane)
{
  int lowered = 0;
  for (uint64_t i = lane; i < s.len; i += 32) {
    const uint32_t w = s.nb[i];
    const unsigned long long c = base + (r.a == GRAPH_CC ? 0 : s.wt ? s.wt[i] : 1);
    cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> vw(r.val[w]);
    if (c < vw.load(cuda::memory_order_relaxed) && c < vw.fetch_min(c, cuda::memory_order_relaxed)) {
      r.next[w] = 1; /* every writer stores 1; read after the kernel */
      lowered = 1;
    }
  }
  if (__any_sync(GR_FULL, lowered) && lane == 0)
    *r.changed = 1;
}

/* A vertex and the range of its neighbours in the CSR. */
struct gr_span {
  uint64_t u, lo, hi;
};

/* One vertex: every lane of the warp calls with equal arguments.  0 or
 * the source's error. */
template <class Src>
__device__ int gr_vertex(const Src &src, const gr_round &r, gr_span v, typename cub::WarpReduce<float>::TempStorage &red)
{
  const int lane = threadIdx.x % 32;
  const uint64_t u = v.u, lo = v.lo, hi = v.hi;
  unsigned long long base = 0;
  float sum = 0;
  if (r.a != GRAPH_PR)
    base = cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(r.val[u]).load(
        cuda::memory_order_relaxed);
  for (uint64_t e = lo; e < hi;) {
    gr_seg s;
    const int rc = src.segment(e, hi, &s);
    if (rc)
      return rc;
    if (r.a == GRAPH_PR)
      for (uint64_t i = lane; i < s.len; i += 32)
        sum += r.contrib[s.nb[i]];
    else
      gr_relax(r, s, base, lane);
    e += s.len;
    src.release(&s);
  }
  if (r.a == GRAPH_PR) {
    sum = cub::WarpReduce<float>(red).Sum(sum);
    if (lane == 0)
      r.rank[u] = r.base + (float)GRAPH_PR_DAMPING * sum;
  }
  return 0;
}

/* One round over every vertex.  Any grid of GR_THREADS-thread blocks;
 * warps take chunks of 32 vertices in turn; no synchronization beyond the
 * warp. */
template <class Src>
__global__ void __launch_bounds__(GR_THREADS, 2) gr_round_kernel(Src src, gr_round r)
{
  __shared__ typename cub::WarpReduce<float>::TempStorage red[GR_WARPS];
  const int lane = threadIdx.x % 32;
  const uint64_t warp = (blockIdx.x * (uint64_t)blockDim.x + threadIdx.x) / 32;
  const uint64_t nwarps = (uint64_t)gridDim.x * blockDim.x / 32;
  for (uint64_t v0 = warp * 32; v0 < r.n; v0 += nwarps * 32) {
    const uint64_t v = v0 + lane;
    const int cnt = r.n - v0 < 32 ? (int)(r.n - v0) : 32;
    const unsigned mask = __ballot_sync(GR_FULL, v < r.n && (!r.cur || r.cur[v]));
    if (!mask)
      continue;
    uint64_t lo = 0, hi = 0;
    int rc = src.offsets(v0, cnt, lane, &lo, &hi);
    for (unsigned m = mask; m && !rc; m &= m - 1) {
      const int b = __ffs(m) - 1;
      const gr_span sp = {v0 + b, __shfl_sync(GR_FULL, lo, b), __shfl_sync(GR_FULL, hi, b)};
      rc = gr_vertex(src, r, sp, red[threadIdx.x / 32]);
    }
    if (rc) {
      if (lane == 0)
        atomicMin(r.err, rc);
      return;
    }
  }
}

/* Degrees of every vertex (pr's contributions divide by them). */
template <class Src>
__global__ void __launch_bounds__(GR_THREADS, 2) gr_degree_kernel(Src src, uint64_t n, uint32_t *deg, int *err)
{
  const int lane = threadIdx.x % 32;
  const uint64_t warp = (blockIdx.x * (uint64_t)blockDim.x + threadIdx.x) / 32;
  const uint64_t nwarps = (uint64_t)gridDim.x * blockDim.x / 32;
  for (uint64_t v0 = warp * 32; v0 < n; v0 += nwarps * 32) {
    const int cnt = n - v0 < 32 ? (int)(n - v0) : 32;
    uint64_t lo = 0, hi = 0;
    const int rc = src.offsets(v0, cnt, lane, &lo, &hi);
    if (rc) {
      if (lane == 0)
        atomicMin(err, rc);
      return;
    }
    if (lane < cnt)
      deg[v0 + lane] = (uint32_t)(hi - lo);
  }
}

#endif /* GRAPHS_KERNELS_CUH */
