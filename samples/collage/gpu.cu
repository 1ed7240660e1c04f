/*
 * gpu.cu - the libgpufs versions of the collage (gpufs-block, gpufs-warp,
 * gpufs-gread); the LSH index they read is uploaded by gpuindex.cu.
 *
 * One persistent kernel: SMs x 2 threadblocks of 256 threads (gpufs-block:
 * SMs x 8 of 64 threads, cg_shape), each gopens
 * the dataset once and then takes image blocks b = blockIdx.x, + gridDim.x,
 * ...  For each: the histogram, the reduced histogram and the L keys in
 * shared memory (collage_dev_block_keys, shared with cpugpu.cu's kernel 1),
 * the shortlist (the L buckets gathered, sorted, made unique:
 * collage_dev_shortlist), then the candidates' distances, reading each
 * candidate's 3 KiB histogram from the dataset file through libgpufs:
 *   gpufs-block  the whole block gmmaps one candidate at a time;
 *   gpufs-warp   each warp gmmap_warps its own candidates;
 *   gpufs-gread  each warp gread_warps its candidates into shared memory.
 * The nearest is the smallest collage_pack(dist, tile), as on the CPU.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cuda/atomic>
#include <cuda_runtime.h>

#include "benchlib/util.h"
#include "include/gpufs.cuh"
#include "samples/collage/collage.h"
#include "samples/collage/gpu_util.h"

#define CG_THREADS 256                 /* threads a block of the warp versions: 8 warps */
#define CG_WARPS (CG_THREADS / 32)
#define CG_BLOCK_THREADS 64            /* threads a block of gpufs-block: 2 warps */

/* The block shape of version V: T threads, up to PER blocks an SM.  The
 * warp versions keep a candidate a warp in flight; gpufs-block's whole
 * block maps each candidate, so it runs small blocks, many an SM (the
 * registers the library's calls need allow 8 blocks of 64 threads, 2 of
 * 256): four times the candidates in flight of 256-thread blocks. */
template <int V>
struct cg_shape {
  static constexpr int T = V == COLLAGE_GPUFS_BLOCK ? CG_BLOCK_THREADS : CG_THREADS;
  static constexpr int PER = V == COLLAGE_GPUFS_BLOCK ? 8 : 2;
};
#define CG_VEC (COLLAGE_HIST / 4)      /* a histogram as uint4: 192 */
#define CG_VEC_LANE (CG_VEC / 32)      /* uint4 a lane: 6 (24 values) */

/* The device calls that can fail, named in the host's message. */
enum cg_call {
  CG_GOPEN = 1, CG_GFADVISE, CG_GMMAP, CG_GMUNMAP, CG_GMMAP_WARP, CG_GMUNMAP_WARP, CG_GREAD_WARP, CG_GCLOSE
};
static const char *const cg_call_name[] = {"?",        "gopen",         "gfadvise",        "gmmap",  "gmunmap",
                                           "gmmap_warp", "gmunmap_warp", "gread_warp", "gclose"};

/* Where the time goes, in SM cycles summed over the threads that measure
 * it: keys and shortlists by each block's thread 0; candidate reads (the
 * map or read call and the unmap) and distances by each warp's lane 0
 * (gpufs-block: thread 0, for the whole block). */
enum cg_time { CG_T_KEYS = 0, CG_T_SHORTLIST = 1, CG_T_IO = 2, CG_T_DIST = 3, CG_T_N = 4 };

/* A thread's running sums of enum cg_time, added to the run's once. */
struct cg_clock {
  unsigned long long t[CG_T_N];
};

/* What a threadblock keeps in shared memory (dynamic: up to ~45 KiB).
 * NREC: per-warp record buffers (gpufs-gread), 0 for none. */
template <int T, int ITEMS, int NREC>
struct cg_smem {
  static constexpr int threads = T;
  __align__(16) uint32_t hist[COLLAGE_HIST];   /* the image block's histogram */
  int32_t r[COLLAGE_DIMS];                     /* its reduced histogram */
  uint32_t keys[COLLAGE_MAX_L];
  /* table t's bucket: ids[lo[t] .. lo[t] + cnt[t]) go to list[pos[t] ..) */
  uint32_t lo[COLLAGE_MAX_L], pos[COLLAGE_MAX_L], cnt[COLLAGE_MAX_L];
  uint32_t list[T * ITEMS];                    /* the shortlist */
  uint32_t maxid;
  int stop;
  unsigned long long best;
  union {
    typename cub::BlockRadixSort<uint32_t, T, ITEMS>::TempStorage sort;
    typename cub::BlockScan<uint32_t, T>::TempStorage scan;
    typename cub::BlockReduce<uint32_t, T>::TempStorage reduce;
    uint4 rec[NREC > 0 ? NREC : 1][CG_VEC];
  } u;
};

/* The kernel's arguments. */
struct cg_args {
  const char *path;            /* the dataset, a device string */
  const uint8_t *rgb;          /* the picture, device memory */
  int w;                       /* its width, pixels */
  uint64_t blocks;
  struct collage_gpu_index g;
  uint32_t *choice;            /* [blocks] */
  unsigned long long *count;   /* [0] candidates, [1] empty blocks */
  unsigned long long *cycles;  /* SM cycles summed: [CG_T_KEYS] ... (enum cg_time) */
  unsigned long long *err;     /* the first error: call << 32 | (uint32_t)-errno */
};

/* ---------------- device helpers ---------------- */

/*
 * Histogram, reduced histogram and L keys of image block b of the picture
 * (rgb: w pixels a row), into shared hist[768], r[48], keys[L] with
 * collage_histogram's, collage_reduce's and collage_key's rules.
 * Who calls: every thread of the block (any multiple of 32 threads), with
 * equal arguments; it synchronizes the block (__syncthreads), and on return
 * hist, r and keys are valid to every thread.  Also called by cpugpu.cu's
 * kernel 1.
 */
__device__ void collage_dev_block_keys(const uint8_t *rgb, int w, uint64_t b, struct collage_gpu_index g,
                                       uint32_t *hist, int32_t *r, uint32_t *keys)
{
  const unsigned tid = threadIdx.x, nt = blockDim.x;
  const uint64_t bw = (uint64_t)w / COLLAGE_TILE;
  const uint64_t x0 = (b % bw) * COLLAGE_TILE, y0 = (b / bw) * COLLAGE_TILE;
  for (unsigned i = tid; i < COLLAGE_HIST; i += nt)
    hist[i] = 0;
  for (unsigned i = tid; i < g.L; i += nt)
    keys[i] = 0;
  __syncthreads();
  for (unsigned p = tid; p < COLLAGE_PIXELS; p += nt) {
    const uint8_t *px = rgb + ((y0 + p / COLLAGE_TILE) * (uint64_t)w + x0 + p % COLLAGE_TILE) * 3;
    atomicAdd(&hist[px[0]], 1u);
    atomicAdd(&hist[COLLAGE_BINS + px[1]], 1u);
    atomicAdd(&hist[2 * COLLAGE_BINS + px[2]], 1u);
  }
  __syncthreads();
  for (unsigned d = tid; d < COLLAGE_DIMS; d += nt) {
    int32_t s = 0;
    for (unsigned k = 0; k < 16; k++)
      s += (int32_t)hist[d * 16 + k];
    r[d] = s;
  }
  __syncthreads();
  /* one dot product (table t, bit) a thread: collage_key's ints */
  for (unsigned i = tid; i < g.L * g.K; i += nt) {
    const int8_t *wr = g.w + (size_t)i * COLLAGE_DIMS;
    int32_t dot = 0;
    for (unsigned d = 0; d < COLLAGE_DIMS; d++)
      dot += (int32_t)wr[d] * r[d];
    if (dot > g.thr[i])
      atomicOr(&keys[i / g.K], 1u << (i % g.K));
  }
  __syncthreads();
}

/*
 * The shortlist of s.keys: the L buckets gathered into s.list (offsets by a
 * prefix sum of their sizes), sorted and made unique.  Returns its length
 * (to every thread).  Who calls: every thread of a T-thread block, equal
 * arguments; synchronizes the block; s.list is valid to all on return.
 */
template <int T, int ITEMS, class S>
__device__ uint32_t collage_dev_shortlist(const struct collage_gpu_index &g, S &s)
{
  typedef cub::BlockScan<uint32_t, T> scan_t;
  const unsigned tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  uint32_t lo = 0, n = 0, pos, total;
  if (tid < g.L) {
    const size_t at = (size_t)tid * ((1ull << g.K) + 1) + s.keys[tid];
    lo = g.off[at];
    n = g.off[at + 1] - lo;
  }
  if (tid == 0)
    s.maxid = 0;
  scan_t(s.u.scan).ExclusiveSum(n, pos, total);
  if (tid < g.L) {
    s.lo[tid] = lo;
    s.pos[tid] = pos;
    s.cnt[tid] = n;
  }
  __syncthreads();
  uint32_t mx = 0;
  for (unsigned t = warp; t < g.L; t += T / 32)
    for (uint32_t j = lane; j < s.cnt[t]; j += 32) {
      const uint32_t id = g.ids[s.lo[t] + j];
      s.list[s.pos[t] + j] = id;
      mx = id > mx ? id : mx;
    }
  mx = __reduce_max_sync(0xffffffffu, mx);
  if (lane == 0)
    atomicMax(&s.maxid, mx);
  __syncthreads();
  if (total == 0)
    return 0;
  /* sort only the bits the ids use; the padding sorts after every id */
  const uint32_t bits = s.maxid == 0xffffffffu ? 32 : 32 - __clz(s.maxid + 1);
  const uint32_t pad = bits == 32 ? 0xffffffffu : (1u << bits) - 1;
  uint32_t k[ITEMS];
  for (int i = 0; i < ITEMS; i++) {
    const uint32_t j = tid * ITEMS + i;
    k[i] = j < total ? s.list[j] : pad;
  }
  cub::BlockRadixSort<uint32_t, T, ITEMS>(s.u.sort).Sort(k, 0, (int)bits);
  __syncthreads(); /* every list read above is done; the sort's storage is free */
  for (int i = 0; i < ITEMS; i++)
    s.list[tid * ITEMS + i] = k[i];
  __syncthreads();
  static_assert(ITEMS <= 64, "a thread's head flags are one 64-bit word");
  uint64_t flags = 0;
  uint32_t mine = 0, at, uniq;
  for (int i = 0; i < ITEMS; i++) {
    const uint32_t j = tid * ITEMS + i;
    const bool head = j < total && (j == 0 || s.list[j - 1] != k[i]);
    flags |= (uint64_t)head << i;
    mine += head;
  }
  scan_t(s.u.scan).ExclusiveSum(mine, at, uniq);
  __syncthreads(); /* every thread has read its predecessors before the list is compacted */
  for (int i = 0; i < ITEMS; i++)
    if (flags >> i & 1)
      s.list[at++] = k[i];
  __syncthreads();
  return uniq;
}

/* Record the run's first device-call error.  Any thread, no group.  The
 * word publishes nothing but itself: the host reads it after the kernel has
 * ended (kernel completion orders it), and blocks poll it only to stop
 * early (cg_stopped), so relaxed CAS and loads suffice. */
static __device__ void cg_fail(unsigned long long *err, int call, int rc)
{
  atomicCAS(err, 0ull, (unsigned long long)call << 32 | (uint32_t)rc);
}

/* Whether some group failed: thread 0 looks, the block agrees.  Every
 * thread of the block calls it (it synchronizes the block). */
template <class S>
__device__ bool cg_stopped(unsigned long long *err, S &s)
{
  if (threadIdx.x == 0)
    s.stop = cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(*err).load(
                 cuda::memory_order_relaxed) != 0;
  __syncthreads();
  return s.stop != 0;
}

/* collage_record_offset for device code (collage.h's is host-only). */
static __device__ __forceinline__ int64_t cg_record_offset(uint32_t i)
{
  return (int64_t)(i + 1ull) * COLLAGE_RECORD;
}

/* Squared distance of 4 counts of the block and a candidate. */
static __device__ __forceinline__ uint32_t cg_d4(uint4 a, uint4 b)
{
  const int32_t x = (int32_t)a.x - (int32_t)b.x, y = (int32_t)a.y - (int32_t)b.y;
  const int32_t z = (int32_t)a.z - (int32_t)b.z, v = (int32_t)a.w - (int32_t)b.w;
  return (uint32_t)(x * x) + (uint32_t)(y * y) + (uint32_t)(z * z) + (uint32_t)(v * v);
}

/* A warp's distance of the block (hist) to one record's histogram rec
 * (global or shared): each lane 24 counts, a shuffle sum.  Every lane of
 * the warp calls it; the sum goes to every lane. */
static __device__ __forceinline__ uint32_t cg_warp_dist(const uint4 *hist, const uint4 *rec)
{
  const unsigned lane = threadIdx.x % 32;
  uint32_t d = 0;
  for (int j = 0; j < CG_VEC_LANE; j++)
    d += cg_d4(hist[lane + 32 * j], rec[lane + 32 * j]);
  for (int o = 16; o > 0; o /= 2)
    d += __shfl_xor_sync(0xffffffffu, d, o);
  return d;
}

/* gpufs-block: the whole block maps each candidate.  Every thread calls
 * it (block-level gmmap / gmunmap: they synchronize the block).  Returns the
 * best pack in thread 0 (others: undefined), or records an error and
 * returns COLLAGE_NO_BEST with *failed set (to every thread). */
template <class S>
__device__ unsigned long long cg_block_best(int fd, uint32_t n, S &s, const struct cg_args &a, bool *failed,
                                            struct cg_clock *clk)
{
  typedef cub::BlockReduce<uint32_t, S::threads> reduce_t;
  unsigned long long best = COLLAGE_NO_BEST;
  for (uint32_t i = 0; i < n; i++) {
    const uint32_t c = s.list[i];
    const unsigned long long t0 = clock64();
    void *p = gmmap(NULL, COLLAGE_HIST * 4, GPUFS_PROT_READ, GPUFS_MAP_PRIVATE, fd, cg_record_offset(c));
    const unsigned long long t1 = clock64();
    if (GPUFS_MAP_FAILED(p)) { /* the same result in every thread: all leave */
      if (threadIdx.x == 0)
        cg_fail(a.err, CG_GMMAP, GPUFS_MAP_ERRNO(p));
      *failed = true;
      return COLLAGE_NO_BEST;
    }
    const uint32_t *rec = (const uint32_t *)p;
    uint32_t d = 0;
    for (unsigned k = threadIdx.x; k < COLLAGE_HIST; k += S::threads) {
      const int32_t x = (int32_t)s.hist[k] - (int32_t)rec[k];
      d += (uint32_t)(x * x);
    }
    /* the reduce's storage is reused next round after gmunmap's and gmmap's barriers */
    const uint32_t sum = reduce_t(s.u.reduce).Sum(d);
    const unsigned long long t2 = clock64();
    const int rc = gmunmap(p, COLLAGE_HIST * 4);
    clk->t[CG_T_IO] += t1 - t0 + clock64() - t2;
    clk->t[CG_T_DIST] += t2 - t1;
    if (rc < 0) {
      if (threadIdx.x == 0)
        cg_fail(a.err, CG_GMUNMAP, rc);
      *failed = true;
      return COLLAGE_NO_BEST;
    }
    const unsigned long long pk = collage_pack(sum, c);
    best = pk < best ? pk : best;
  }
  return best;
}

/* gpufs-warp and gpufs-gread: warp w takes candidates w, w + 8, ...; its
 * best goes into s.best (a shared 64-bit atomicMin).  Every lane of the
 * warp calls it, converged (warp-level calls; each synchronizes the warp).
 * s.best must be set before, and read after a __syncthreads.  (Claiming
 * candidates dynamically from a shared counter, so that a warp meeting a
 * miss leaves the rest to the others, together with the record's six
 * loads issued before any arithmetic, was measured 1.3-1.4x slower on an
 * H100, 2026-11-27; not kept.) */
template <int V, class S>
__device__ void cg_warp_best(int fd, uint32_t n, S &s, const struct cg_args &a, struct cg_clock *clk)
{
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const uint4 *hist = (const uint4 *)s.hist;
  unsigned long long best = COLLAGE_NO_BEST;
  __syncwarp();
  for (uint32_t i = warp; i < n; i += CG_WARPS) { /* warp-uniform bounds */
    const uint32_t c = s.list[i];
    uint32_t d;
    const unsigned long long t0 = clock64();
    if (V == COLLAGE_GPUFS_WARP) {
      void *p = gmmap_warp(NULL, COLLAGE_HIST * 4, GPUFS_PROT_READ, GPUFS_MAP_PRIVATE, fd, cg_record_offset(c));
      if (GPUFS_MAP_FAILED(p)) {
        if (lane == 0)
          cg_fail(a.err, CG_GMMAP_WARP, GPUFS_MAP_ERRNO(p));
        break;
      }
      const unsigned long long t1 = clock64();
      d = cg_warp_dist(hist, (const uint4 *)p);
      const unsigned long long t2 = clock64();
      clk->t[CG_T_IO] += t1 - t0;
      clk->t[CG_T_DIST] += t2 - t1;
      const int rc = gmunmap_warp(p, COLLAGE_HIST * 4);
      clk->t[CG_T_IO] += clock64() - t2;
      if (rc < 0) {
        if (lane == 0)
          cg_fail(a.err, CG_GMUNMAP_WARP, rc);
        break;
      }
    } else {
      uint4 *buf = s.u.rec[warp];
      const ssize_t got = gread_warp(fd, cg_record_offset(c), COLLAGE_HIST * 4, buf);
      if (got != (ssize_t)(COLLAGE_HIST * 4)) { /* short: the file ends inside the record */
        if (lane == 0)
          cg_fail(a.err, CG_GREAD_WARP, got < 0 ? (int)got : -EIO);
        break;
      }
      const unsigned long long t1 = clock64();
      d = cg_warp_dist(hist, buf);
      __syncwarp(); /* every lane has read buf before the next gread_warp fills it */
      clk->t[CG_T_IO] += t1 - t0;
      clk->t[CG_T_DIST] += clock64() - t1;
    }
    const unsigned long long pk = collage_pack(d, c);
    best = pk < best ? pk : best;
  }
  if (lane == 0 && best != COLLAGE_NO_BEST)
    atomicMin(&s.best, best);
}

/* ---------------- the kernel ---------------- */

/*
 * Every threadblock: gopen the dataset, advise RANDOM, take image blocks
 * until none is left or some group failed, gclose.  Launched with
 * cg_shape<V>::T threads and sizeof(cg_smem<T, ITEMS, ...>) bytes of dynamic
 * shared memory by collage_gpufs_run.
 */
template <int V, int ITEMS>
__global__ void __launch_bounds__(cg_shape<V>::T, cg_shape<V>::PER) collage_gpufs_kernel(struct cg_args a)
{
  extern __shared__ __align__(16) unsigned char cg_raw[];
  typedef cg_smem<cg_shape<V>::T, ITEMS, V == COLLAGE_GPUFS_GREAD ? CG_WARPS : 0> S;
  S &s = *reinterpret_cast<S *>(cg_raw);
  const unsigned tid = threadIdx.x;
  struct cg_clock clk = {};
  const int fd = gopen(a.path, GPUFS_O_RDONLY);
  if (fd < 0) {
    if (tid == 0)
      cg_fail(a.err, CG_GOPEN, fd);
    return;
  }
  const int adv = gfadvise(fd, 0, 0, GPUFS_FADV_RANDOM);
  if (adv < 0 && tid == 0)
    cg_fail(a.err, CG_GFADVISE, adv);
  for (uint64_t b = blockIdx.x; adv == 0 && b < a.blocks; b += gridDim.x) {
    if (tid == 0)
      s.best = COLLAGE_NO_BEST; /* published to the warps by cg_stopped's barrier */
    if (cg_stopped(a.err, s))
      break;
    const unsigned long long t0 = clock64();
    collage_dev_block_keys(a.rgb, a.w, b, a.g, s.hist, s.r, s.keys);
    const unsigned long long t1 = clock64();
    const uint32_t n = collage_dev_shortlist<cg_shape<V>::T, ITEMS>(a.g, s);
    clk.t[CG_T_KEYS] += t1 - t0;
    clk.t[CG_T_SHORTLIST] += clock64() - t1;
    unsigned long long best;
    if (V == COLLAGE_GPUFS_BLOCK) {
      bool failed = false;
      best = cg_block_best(fd, n, s, a, &failed, &clk);
      if (failed)
        break; /* block-uniform */
    } else {
      cg_warp_best<V>(fd, n, s, a, &clk);
      __syncthreads(); /* every warp's atomicMin is in s.best */
    }
    if (tid == 0) { /* only thread 0 reads s.best: it also resets it next round */
      if (V != COLLAGE_GPUFS_BLOCK)
        best = s.best;
      a.choice[b] = collage_unpack_tile(best);
      atomicAdd(&a.count[0], (unsigned long long)n);
      if (n == 0)
        atomicAdd(&a.count[1], 1ull);
    }
  }
  /* the measuring threads' sums: thread 0 (keys, shortlists; gpufs-block's
   * reads and distances) and every warp's lane 0 (its reads and distances) */
  for (int k = 0; k < CG_T_N; k++) {
    const bool mine = k < CG_T_IO ? tid == 0 : V == COLLAGE_GPUFS_BLOCK ? tid == 0 : tid % 32 == 0;
    if (mine && clk.t[k])
      atomicAdd(&a.cycles[k], clk.t[k]);
  }
  const int rc = gclose(fd);
  if (rc < 0 && tid == 0)
    cg_fail(a.err, CG_GCLOSE, rc);
}

/* Launch version V with ITEMS sort keys a thread: a persistent grid of SMs
 * x (up to) cg_shape<V>::PER blocks.  0 or -errno (a CUDA failure). */
template <int V, int ITEMS>
static int cg_launch(const struct cg_args *a)
{
  constexpr int T = cg_shape<V>::T;
  typedef cg_smem<T, ITEMS, V == COLLAGE_GPUFS_GREAD ? CG_WARPS : 0> S;
  void (*k)(struct cg_args) = collage_gpufs_kernel<V, ITEMS>;
  int dev = 0, sms = 0, per = 0;
  int rc = cg_cuda(cudaGetDevice(&dev), "cudaGetDevice");
  if (!rc)
    rc = cg_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), "SM count");
  if (!rc)
    rc = cg_cuda(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)sizeof(S)),
                 "kernel shared memory");
  if (!rc)
    rc = cg_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, k, T, sizeof(S)), "occupancy");
  if (rc)
    return rc;
  per = per < 1 ? 1 : per > cg_shape<V>::PER ? cg_shape<V>::PER : per;
  uint64_t grid = (uint64_t)sms * (uint64_t)per;
  grid = grid < a->blocks ? grid : a->blocks;
  k<<<(unsigned)grid, T, sizeof(S)>>>(*a);
  return cg_cuda(cudaGetLastError(), "kernel launch");
}

template <int V>
static int cg_launch_v(const struct cg_args *a)
{
  /* the fewest sort keys a thread that hold the longest shortlist, L * cap
   * (<= COLLAGE_GPU_MAX_SHORTLIST = 64 * 64) */
  constexpr int T = cg_shape<V>::T;
  const uint32_t most = a->g.L * a->g.cap;
  if (T == CG_THREADS)
    return most <= T * 8 ? cg_launch<V, 8>(a) : cg_launch<V, 16>(a);
  return most <= T * 32 ? cg_launch<V, 32>(a) : cg_launch<V, 64>(a);
}

/* ---------------- the run ---------------- */

int collage_gpufs_run(enum collage_version v, const char *dataset_path, const struct collage_gpu_index *g,
                      const struct collage_image *in, uint32_t *choice, struct collage_stats *st)
{
  if (v != COLLAGE_GPUFS_BLOCK && v != COLLAGE_GPUFS_WARP && v != COLLAGE_GPUFS_GREAD) {
    fprintf(stderr, "collage: collage_gpufs_run: version %d is not a gpufs version\n", (int)v);
    return -EINVAL;
  }
  if (!dataset_path || !g || !g->ids || !in || !in->rgb || !choice || !st || collage_blocks(in) == 0 ||
      g->L * g->cap > COLLAGE_GPU_MAX_SHORTLIST) {
    fprintf(stderr, "collage: %s: no dataset path, index, picture of whole blocks or output\n",
                    collage_version_name(v));
    return -EINVAL;
  }
  const size_t plen = strlen(dataset_path) + 1;
  if (plen > GPUFS_PATH_MAX) {
    fprintf(stderr, "collage: %s: dataset path longer than %u bytes\n", collage_version_name(v), GPUFS_PATH_MAX);
    return -ENAMETOOLONG;
  }
  memset(st, 0, sizeof(*st));
  const uint64_t blocks = collage_blocks(in);
  const size_t px = (size_t)in->w * (size_t)in->h * 3;
  struct cg_args a;
  memset(&a, 0, sizeof(a));
  a.w = in->w;
  a.blocks = blocks;
  a.g = *g;
  unsigned long long host[3 + CG_T_N] = {0}; /* candidates, empty, error, cycles */
  void *rgb = NULL, *path = NULL, *ch = NULL, *cnt = NULL;
  const double t0 = bench_now();
  int rc = cg_upload(&rgb, in->rgb, px, "picture upload");
  if (!rc)
    rc = cg_upload(&path, dataset_path, plen, "path upload");
  if (!rc)
    rc = cg_cuda(cudaMalloc(&ch, blocks * sizeof(uint32_t)), "choices");
  if (!rc)
    rc = cg_cuda(cudaMalloc(&cnt, sizeof(host)), "counters");
  if (!rc)
    rc = cg_cuda(cudaMemset(cnt, 0, sizeof(host)), "counters");
  if (!rc) {
    a.path = (const char *)path;
    a.rgb = (const uint8_t *)rgb;
    a.choice = (uint32_t *)ch;
    a.count = (unsigned long long *)cnt;
    a.err = a.count + 2;
    a.cycles = a.count + 3;
    rc = v == COLLAGE_GPUFS_BLOCK  ? cg_launch_v<COLLAGE_GPUFS_BLOCK>(&a)
         : v == COLLAGE_GPUFS_WARP ? cg_launch_v<COLLAGE_GPUFS_WARP>(&a)
                                   : cg_launch_v<COLLAGE_GPUFS_GREAD>(&a);
  }
  if (!rc)
    rc = cg_cuda(cudaDeviceSynchronize(), "kernel");
  if (!rc)
    rc = cg_cuda(cudaMemcpy(choice, ch, blocks * sizeof(uint32_t), cudaMemcpyDeviceToHost), "choices download");
  if (!rc)
    rc = cg_cuda(cudaMemcpy(host, cnt, sizeof(host), cudaMemcpyDeviceToHost), "counters download");
  st->seconds = bench_now() - t0;
  cudaFree(rgb);
  cudaFree(path);
  cudaFree(ch);
  cudaFree(cnt);
  if (!rc && host[2]) {
    const unsigned call = (unsigned)(host[2] >> 32);
    rc = (int)(int32_t)(uint32_t)host[2];
    fprintf(stderr, "collage: %s: %s of %s: %s\n", collage_version_name(v),
            cg_call_name[call <= CG_GCLOSE ? call : 0], dataset_path, gpufs_strerror(rc));
  }
  st->blocks = blocks;
  st->candidates = host[0];
  st->empty = host[1];
  /* cycles to seconds at the SM's peak clock (kHz) */
  int khz = 0, dev = 0;
  if (cudaGetDevice(&dev) == cudaSuccess && cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev) == cudaSuccess &&
      khz > 0) {
    const double hz = khz * 1e3;
    st->keys_s = (double)host[3 + CG_T_KEYS] / hz;
    st->shortlist_s = (double)host[3 + CG_T_SHORTLIST] / hz;
    st->io_s = (double)host[3 + CG_T_IO] / hz;
    st->dist_s = (double)host[3 + CG_T_DIST] / hz;
  }
  return rc;
}
