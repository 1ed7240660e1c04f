/*
 * kernels.cuh - the graph kernels of every GPU version.  One round kernel
 * serves the four algorithms: warps take runs of GR_RUN consecutive
 * vertices from a counter (one atomic a run), go through a run 32
 * vertices (a chunk) at a time, read the offsets of those with work (the
 * frontier, or all for PageRank), then handle them one after the other,
 * the whole warp on one vertex's neighbours (lanes on consecutive
 * neighbours: coalesced reads, as EMOGI); or, for bfs, sssp and cc when
 * the chunk's vertices have few neighbours each, the warp goes over all
 * their edges at once (gr_chunk_edges).  bfs, sssp and cc lower
 * neighbours' values (min-propagation, algo.h); pr sums the neighbours'
 * contributions (pull).
 *
 * Runs taken from a counter balance power-law degrees (a warp that met a
 * hub takes fewer runs), and keep a warp on consecutive vertices, whose
 * offsets, neighbours and weights lie next to each other in the file:
 *
 *   file:  | offsets ......... | neighbours ............ | weights ...... |
 *   run:        [v0 .. v0+R)         [off[v0] .. off[v0+R])   (same indices)
 *   warp holds:  one page           one page                 one page
 *
 * Rounds sweep the vertices in turn forwards and backwards (r.reverse):
 * runs are handed out from the last one on every other round.  A round
 * that reads more of the file than the cache holds leaves the pages it
 * read last cached (libgpufs evicts the least recently allocated frames
 * of a ring); the next round, going the other way, reads those first, as
 * hits, and evicts them only after it has read them.  One way round
 * every round, each would evict, before it reached them, the pages it
 * needs next, and a graph four times the cache would miss on every page.
 *
 * Where the CSR is read is a template parameter (a source): gr_mem_src
 * for a pointer GPU kernels can read (device, pinned-mapped or managed
 * memory), gr_fs_src for libgpufs.  It is a template only so that the
 * pointer versions do not pay for the device calls' registers and code.
 * A source has a per-warp cursor type, Src::cur, and gives
 *   begin(&c): c holds nothing; every lane calls;
 *   offsets(&c, v0, cnt, lane, &lo, &hi): lane i < cnt gets vertex v0 + i's
 *     neighbour range; every lane of the warp calls it; 0 or -errno;
 *   segment(&c, e, end, &s): the neighbours (and weights) from edge e on,
 *     as far as one piece lies in memory (s.len >= 1); valid until the next
 *     call on c; every lane calls it with equal arguments; 0 or -errno;
 *   end(&c): releases what c holds, also after an error; every lane
 *     calls; 0 or -errno.
 */
#ifndef GRAPHS_KERNELS_CUH
#define GRAPHS_KERNELS_CUH

#include <stdint.h>

#include <cub/warp/warp_reduce.cuh>
#include <cuda/atomic>
#include <cuda/ptx>

#include "graphs/algo.h"
#include "include/gpufs.cuh"

#define GR_THREADS 256
#define GR_WARPS (GR_THREADS / 32)
#define GR_FULL 0xffffffffu
#define GR_RUN 256           /* vertices a warp takes at a time (a multiple of 32) */
#define GR_BATCH 4           /* edges a lane takes in one pass of a chunk's edges together */
#define GR_NO_PAGE UINT64_MAX /* a cursor slot that holds nothing */

/* A piece of one vertex's edges in memory. */
struct gr_seg {
  const uint32_t *nb; /* neighbours [e, e + len) */
  const uint32_t *wt; /* their weights, or NULL (not needed or none) */
  uint64_t len;
};

/* What the round kernels report and share: one device allocation, reset
 * before each launch. */
struct gr_flags {
  int changed;              /* set when a value fell */
  int err;                  /* the lowest error of any warp */
  int cut;                  /* set when a warp found the deadline past and took no more runs */
  unsigned long long next;  /* runs handed out so far in this round */
  unsigned long long clock; /* the device's clock (globaltimer, ns), written by gr_clock_kernel */
};

/* The CSR at pointers the kernels can read. */
struct gr_mem_src {
  const uint64_t *off;
  const uint32_t *nb;
  const uint32_t *wt; /* NULL: not needed */

  struct cur {};
  __device__ void begin(cur *) const {}
  __device__ int end(cur *) const { return 0; }
  __device__ int offsets(cur *, uint64_t v0, int cnt, int lane, uint64_t *lo, uint64_t *hi) const
  {
    if (lane < cnt) {
      *lo = off[v0 + lane];
      *hi = off[v0 + lane + 1];
    }
    return 0;
  }
  __device__ int segment(cur *, uint64_t e, uint64_t end, gr_seg *s) const
  {
    s->nb = nb + e;
    s->wt = wt ? wt + e : NULL;
    s->len = end - e;
    return 0;
  }
};

/* The sections a libgpufs cursor holds a page of. */
enum gr_fs_sec { GR_SEC_OFF = 0, GR_SEC_NB, GR_SEC_WT, GR_NSEC };

/* The CSR file through libgpufs: fd open on the kernel's instance (a
 * warp-level gopen of an earlier kernel), the page size, the sections'
 * byte offsets.  A warp's cursor holds one whole page of each section
 * mapped (gmmap_warp, read-only) and reads every later offset, neighbour
 * and weight that lies in it from there; it unmaps a page only when it
 * needs another page of that section, and at the kernel's end.  So a warp
 * pins at most three pages, and asks for one while it holds two. */
struct gr_fs_src {
  int fd;
  uint32_t page;
  uint64_t off_off, nb_off, wt_off; /* wt_off 0: weights not needed */

  struct cur {
    const uint8_t *base[GR_NSEC]; /* the held page's first byte */
    uint64_t pg[GR_NSEC];         /* its page number in the file, or GR_NO_PAGE */
  };

  __device__ void begin(cur *c) const
  {
    for (int k = 0; k < GR_NSEC; k++)
      c->pg[k] = GR_NO_PAGE;
  }
  /* Unmap the page slot k holds, if any; every lane calls; 0 or -errno. */
  __device__ __forceinline__ int drop(cur *c, int k) const
  {
    if (c->pg[k] == GR_NO_PAGE)
      return 0;
    c->pg[k] = GR_NO_PAGE;
    return gmunmap_warp((void *)c->base[k], page);
  }
  __device__ int end(cur *c) const
  {
    int rc = 0;
    for (int k = 0; k < GR_NSEC; k++) {
      const int r = drop(c, k);
      rc = rc ? rc : r;
    }
    return rc;
  }
  /* Slot k holds the page of byte a (the one held before released
   * first); every lane calls with equal arguments; 0 or -errno (slot k
   * then holds nothing). */
  __device__ __forceinline__ int hold(cur *c, int k, uint64_t a) const
  {
    const uint64_t pg = a / page;
    if (c->pg[k] == pg)
      return 0;
    int rc = drop(c, k);
    if (rc)
      return rc;
    /* the whole page: the last one of the file may reach past its end
     * (those bytes read as zero, and nothing here reads them) */
    void *p = gmmap_warp(NULL, page, GPUFS_PROT_READ, GPUFS_MAP_PRIVATE, fd, (int64_t)(pg * page));
    if (GPUFS_MAP_FAILED(p))
      return GPUFS_MAP_ERRNO(p);
    c->base[k] = (const uint8_t *)p;
    c->pg[k] = pg;
    return 0;
  }
  /* The offsets of v0 + lane and the next that lie in the page of byte a. */
  __device__ __forceinline__ int offsets_in(cur *c, uint64_t a, uint64_t v0, int cnt, int lane, uint64_t *lo,
                                            uint64_t *hi) const
  {
    const int rc = hold(c, GR_SEC_OFF, a);
    if (rc || lane >= cnt)
      return rc;
    const uint64_t b = off_off + 8 * (v0 + lane), first = c->pg[GR_SEC_OFF] * page;
    const uint8_t *p = c->base[GR_SEC_OFF];
    if (b / page == c->pg[GR_SEC_OFF])
      *lo = *(const uint64_t *)(p + (b - first));
    if ((b + 8) / page == c->pg[GR_SEC_OFF])
      *hi = *(const uint64_t *)(p + (b + 8 - first));
    return 0;
  }
  /* 33 offsets (264 bytes) lie in one page or two */
  __device__ int offsets(cur *c, uint64_t v0, int cnt, int lane, uint64_t *lo, uint64_t *hi) const
  {
    const uint64_t first = off_off + 8 * v0, last = off_off + 8 * (v0 + cnt);
    int rc = offsets_in(c, first, v0, cnt, lane, lo, hi);
    if (!rc && last / page != first / page)
      rc = offsets_in(c, last, v0, cnt, lane, lo, hi);
    return rc;
  }
  /* the piece ends at the first page end of the neighbours or the weights */
  __device__ int segment(cur *c, uint64_t e, uint64_t end, gr_seg *s) const
  {
    const uint64_t a = nb_off + 4 * e;
    int rc = hold(c, GR_SEC_NB, a);
    if (rc)
      return rc;
    uint64_t len = end - e, room = (page - a % page) / 4;
    len = len < room ? len : room;
    s->nb = (const uint32_t *)(c->base[GR_SEC_NB] + a % page);
    s->wt = NULL;
    if (wt_off) {
      const uint64_t b = wt_off + 4 * e;
      if ((rc = hold(c, GR_SEC_WT, b)) != 0)
        return rc;
      room = (page - b % page) / 4;
      len = len < room ? len : room;
      s->wt = (const uint32_t *)(c->base[GR_SEC_WT] + b % page);
    }
    s->len = len;
    return 0;
  }
};

/* One round's arrays (device memory). */
struct gr_round {
  enum graph_algo a;
  uint64_t n;
  unsigned long long *val;      /* bfs, sssp, cc */
  const uint8_t *cur;           /* the frontier; NULL: every vertex (pr) */
  uint8_t *next;                /* vertices lowered in this round */
  const float *contrib;         /* pr: rank / degree of each vertex */
  float *rank;                  /* pr: this round's ranks */
  uint32_t *deg;                /* pr's degree kernel: each vertex's degree */
  float base;                   /* pr: (1 - d) / n */
  unsigned long long deadline;  /* the device's clock (ns) past which warps take no
                                   more runs (the run's --cap); 0: none */
  int reverse;                  /* hand the runs out from the last one (every other sweep: rounds.cuh) */
  struct gr_flags *flags;       /* zeroed before the launch */
};

/* Offer value c to vertex w: 1 when it fell (w joins the next frontier). */
__device__ __forceinline__ int gr_lower(const gr_round &r, uint32_t w, unsigned long long c)
{
  cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> vw(r.val[w]);
  if (c < vw.load(cuda::memory_order_relaxed) && c < vw.fetch_min(c, cuda::memory_order_relaxed)) {
    r.next[w] = 1; /* every writer stores 1; read after the kernel */
    return 1;
  }
  return 0;
}

/* The step along edge i of piece s. */
__device__ __forceinline__ unsigned long long gr_step(const gr_round &r, const gr_seg &s, uint64_t i)
{
  return r.a == GRAPH_CC ? 0 : s.wt ? s.wt[i] : 1;
}

/* Lower the neighbours of u (value base) in piece s; every lane calls. */
__device__ __forceinline__ void gr_relax(const gr_round &r, const gr_seg &s, unsigned long long base, int lane)
{
  int lowered = 0;
  for (uint64_t i = lane; i < s.len; i += 32)
    lowered |= gr_lower(r, s.nb[i], base + gr_step(r, s, i));
  if (__any_sync(GR_FULL, lowered) && lane == 0)
    r.flags->changed = 1; /* every writer stores 1; read after the kernel */
}

/* A vertex and the range of its neighbours in the CSR. */
struct gr_span {
  uint64_t u, lo, hi;
};

/* One vertex: every lane of the warp calls with equal arguments.  0 or
 * the source's error. */
template <class Src>
__device__ int gr_vertex(const Src &src, typename Src::cur *c, const gr_round &r, gr_span v,
                         typename cub::WarpReduce<float>::TempStorage &red)
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
    const int rc = src.segment(c, e, hi, &s);
    if (rc)
      return rc;
    if (r.a == GRAPH_PR)
      for (uint64_t i = lane; i < s.len; i += 32)
        sum += r.contrib[s.nb[i]];
    else
      gr_relax(r, s, base, lane);
    e += s.len;
  }
  if (r.a == GRAPH_PR) {
    sum = cub::WarpReduce<float>(red).Sum(sum);
    if (lane == 0)
      r.rank[u] = r.base + (float)GRAPH_PR_DAMPING * sum;
  }
  return 0;
}

/* The first vertex of the warp's next run (>= n: none left; also once
 * the deadline is past, r.flags->cut then set: the round stops early and
 * its result is incomplete).  Runs go from the first or, with r.reverse,
 * from the last.  Every lane calls; lane 0 takes the run.  Relaxed: the
 * counter only hands out disjoint runs and publishes nothing (the launch
 * orders its reset); the host reads cut after the kernel. */
__device__ __forceinline__ uint64_t gr_take_run(const gr_round &r)
{
  unsigned long long v0 = UINT64_MAX;
  if (threadIdx.x % 32 == 0) {
    const uint64_t runs = (r.n + GR_RUN - 1) / GR_RUN;
    if (r.deadline && cuda::ptx::get_sreg_globaltimer() > r.deadline) {
      cuda::atomic_ref<int, cuda::thread_scope_device>(r.flags->cut).store(1, cuda::memory_order_relaxed);
    } else {
      const uint64_t k = cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(r.flags->next).fetch_add(
          1, cuda::memory_order_relaxed);
      if (k < runs)
        v0 = (r.reverse ? runs - 1 - k : k) * GR_RUN;
    }
  }
  return __shfl_sync(GR_FULL, v0, 0);
}

/* A chunk of up to 32 consecutive vertices as the lanes hold them: lane
 * b has vertex v0 + b, its neighbours [lo, hi) (lo UINT64_MAX past the
 * chunk's end) and its value (bfs, sssp, cc); mask: those with work. */
struct gr_chunk {
  uint64_t v0;
  unsigned mask;
  int cnt;
  uint64_t lo, hi;
  unsigned long long val;
};

/* The lane whose vertex holds edge e of the chunk: the last with lo <= e
 * (lo rises with the lane).  Every lane calls, each with its own e. */
__device__ __forceinline__ int gr_owner(uint64_t lo, uint64_t e)
{
  int b = 0;
  for (int step = 16; step; step >>= 1)
    if (__shfl_sync(GR_FULL, lo, b + step) <= e)
      b += step;
  return b;
}

/* A lane's B edges of one pass over a piece (edges e + i0 + 32 j + lane). */
template <int B>
struct gr_pass {
  uint32_t w[B];          /* the neighbour */
  int b[B];               /* the lane of the vertex it belongs to */
  bool ok[B];
  unsigned long long c[B]; /* the value offered */
};

/* Fill p for piece s of chunk k: whose vertex each edge is, whether it
 * counts (inside the piece, of a vertex with work), the value offered.
 * Every lane calls. */
template <int B>
__device__ __forceinline__ void gr_pass_load(const gr_round &r, const gr_seg &s, const gr_chunk &k, uint64_t e,
                                             uint64_t i0, gr_pass<B> &p)
{
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int j = 0; j < B; j++) {
    const uint64_t i = i0 + 32 * j + lane;
    p.b[j] = gr_owner(k.lo, e + (i < s.len ? i : 0));
    const unsigned long long base = __shfl_sync(GR_FULL, k.val, p.b[j]);
    p.ok[j] = i < s.len && (k.mask >> p.b[j] & 1);
    p.w[j] = p.ok[j] ? s.nb[i] : 0;
    p.c[j] = p.ok[j] ? base + gr_step(r, s, i) : 0;
  }
}

/* Offer the pass's values; 1 when one fell.  The current values are all
 * loaded before the first compare, so that a lane has B loads in flight. */
template <int B>
__device__ __forceinline__ int gr_pass_lower(const gr_round &r, const gr_pass<B> &p)
{
  unsigned long long cur[B];
  int lowered = 0;
#pragma unroll
  for (int j = 0; j < B; j++)
    cur[j] = p.ok[j] ? cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(r.val[p.w[j]]).load(
                           cuda::memory_order_relaxed)
                     : 0;
#pragma unroll
  for (int j = 0; j < B; j++)
    if (p.ok[j] && p.c[j] < cur[j] &&
        p.c[j] < cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(r.val[p.w[j]]).fetch_min(
                     p.c[j], cuda::memory_order_relaxed)) {
      r.next[p.w[j]] = 1; /* every writer stores 1; read after the kernel */
      lowered = 1;
    }
  return lowered;
}

/* bfs, sssp, cc: every edge of the chunk's vertices with work at once,
 * from the first's to the last's, lanes on consecutive edges whatever
 * vertex they belong to (edges of vertices without work passed over),
 * GR_BATCH edges a lane in a pass: for chunks of vertices with few
 * neighbours each, a few passes instead of one or more per vertex.  pr
 * does not come here: its sums per vertex would need a segmented
 * reduction per pass, which measured slower than the vertex-by-vertex
 * way (docs/results/2026-11-29-graph-read-path.md).  Every lane calls
 * with equal arguments (k per lane); 0 or the source's error. */
template <class Src>
__device__ int gr_chunk_edges(const Src &src, typename Src::cur *c, const gr_round &r, const gr_chunk &k)
{
  const uint64_t first = __shfl_sync(GR_FULL, k.lo, __ffs(k.mask) - 1);
  const uint64_t last = __shfl_sync(GR_FULL, k.hi, 31 - __clz(k.mask));
  int lowered = 0;
  for (uint64_t e = first; e < last;) {
    gr_seg s;
    const int rc = src.segment(c, e, last, &s);
    if (rc)
      return rc;
    for (uint64_t i0 = 0; i0 < s.len; i0 += 32 * GR_BATCH) {
      gr_pass<GR_BATCH> p;
      gr_pass_load(r, s, k, e, i0, p);
      lowered |= gr_pass_lower(r, p);
    }
    e += s.len;
  }
  if (__any_sync(GR_FULL, lowered) && threadIdx.x % 32 == 0)
    r.flags->changed = 1; /* every writer stores 1; read after the kernel */
  return 0;
}

/* Whether the chunk's edges go faster together (gr_chunk_edges) than
 * vertex by vertex: passes of 32 lanes over the span from the first
 * vertex with work to the last, against the passes of each vertex. */
__device__ __forceinline__ bool gr_together(const gr_chunk &k, int lane)
{
  const uint64_t deg = (k.mask >> lane & 1) ? k.hi - k.lo : 0;
  const unsigned own = deg ? (unsigned)((deg < (1u << 26) ? deg : (1u << 26)) + 31) / 32 : 0;
  const uint64_t first = __shfl_sync(GR_FULL, k.lo, __ffs(k.mask) - 1);
  const uint64_t last = __shfl_sync(GR_FULL, k.hi, 31 - __clz(k.mask));
  return (last - first + 31) / 32 <= __reduce_add_sync(GR_FULL, own);
}

/* The 32 vertices from v0 (fewer at the end): those with work, their
 * edges together or one vertex after the other.  Every lane calls with
 * equal arguments; 0 or the source's error. */
template <class Src>
__device__ int gr_chunk_run(const Src &src, typename Src::cur *c, const gr_round &r, uint64_t v0,
                            typename cub::WarpReduce<float>::TempStorage &red)
{
  const int lane = threadIdx.x % 32;
  gr_chunk k;
  k.v0 = v0;
  k.cnt = r.n - v0 < 32 ? (int)(r.n - v0) : 32;
  k.mask = __ballot_sync(GR_FULL, lane < k.cnt && (!r.cur || r.cur[v0 + lane]));
  if (!k.mask)
    return 0;
  k.lo = UINT64_MAX;
  k.hi = 0;
  k.val = 0;
  int rc = src.offsets(c, v0, k.cnt, lane, &k.lo, &k.hi);
  if (rc)
    return rc;
  if (r.a != GRAPH_PR && (k.mask >> lane & 1))
    k.val = cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(r.val[v0 + lane]).load(
        cuda::memory_order_relaxed);
  if (r.a != GRAPH_PR && gr_together(k, lane))
    return gr_chunk_edges(src, c, r, k);
  for (unsigned m = k.mask; m && !rc; m &= m - 1) {
    const int b = __ffs(m) - 1;
    const gr_span sp = {v0 + b, __shfl_sync(GR_FULL, k.lo, b), __shfl_sync(GR_FULL, k.hi, b)};
    rc = gr_vertex(src, c, r, sp, red);
  }
  return rc;
}

/* The end of a warp's work: what its cursor holds released, the first
 * error recorded.  Every lane calls. */
template <class Src>
__device__ void gr_finish(const Src &src, typename Src::cur *c, const gr_round &r, int rc)
{
  const int rc2 = src.end(c);
  rc = rc ? rc : rc2;
  if (rc && threadIdx.x % 32 == 0)
    atomicMin(&r.flags->err, rc);
}

/* One round over every vertex.  Any grid of GR_THREADS-thread blocks;
 * r.flags zeroed before the launch; no synchronization beyond the warp. */
template <class Src>
__global__ void __launch_bounds__(GR_THREADS, 2) gr_round_kernel(Src src, gr_round r)
{
  __shared__ typename cub::WarpReduce<float>::TempStorage red[GR_WARPS];
  typename Src::cur c;
  src.begin(&c);
  int rc = 0;
  for (uint64_t r0 = gr_take_run(r); r0 < r.n && !rc; r0 = gr_take_run(r))
    for (uint64_t v0 = r0; v0 < r0 + GR_RUN && v0 < r.n && !rc; v0 += 32)
      rc = gr_chunk_run(src, &c, r, v0, red[threadIdx.x / 32]);
  gr_finish(src, &c, r, rc);
}

/* Degrees of every vertex into r.deg (pr's contributions divide by
 * them).  As gr_round_kernel. */
template <class Src>
__global__ void __launch_bounds__(GR_THREADS, 2) gr_degree_kernel(Src src, gr_round r)
{
  const int lane = threadIdx.x % 32;
  typename Src::cur c;
  src.begin(&c);
  int rc = 0;
  for (uint64_t r0 = gr_take_run(r); r0 < r.n && !rc; r0 = gr_take_run(r))
    for (uint64_t v0 = r0; v0 < r0 + GR_RUN && v0 < r.n && !rc; v0 += 32) {
      const int cnt = r.n - v0 < 32 ? (int)(r.n - v0) : 32;
      uint64_t lo = 0, hi = 0;
      rc = src.offsets(&c, v0, cnt, lane, &lo, &hi);
      if (!rc && lane < cnt)
        r.deg[v0 + lane] = (uint32_t)(hi - lo);
    }
  gr_finish(src, &c, r, rc);
}

#endif /* GRAPHS_KERNELS_CUH */
