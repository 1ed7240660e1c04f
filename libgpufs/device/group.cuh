/*
 * group.cuh - the two granularities of device calls, as compile-time types.
 *
 * A device call is made by a group: the whole threadblock (block-level
 * calls) or one warp (warp-level calls).  Metadata work (cache lookups,
 * requests to the host) is always done by one warp of the group, one lane per
 * page; bulk copies are done by every thread of the group.  The two group
 * types provide the few operations that differ:
 *
 *   rank/size   the thread's index in the group and the group's size
 *   meta()      true in the warp that does the metadata work
 *   sync()      barrier over the group (orders shared-memory and global
 *               accesses among its threads)
 *   id()        a number spreading groups over allocator rings
 *   put/get     per-page values computed by lane j of the meta warp, read
 *               by every thread of the group: registers + shuffle for a
 *               warp, a shared-memory array for a block; put_mask/get_mask
 *               the same for one value the meta warp agrees on
 *   span ops    the multi-page hit path's (read.cu): every thread looks up
 *               a page, publishes its frame, and learns the first miss
 */
#ifndef GPUFS_DEVICE_GROUP_CUH
#define GPUFS_DEVICE_GROUP_CUH

#include <stdint.h>
#include <cuda/std/chrono>
#include <gpufs/config.h>

#define GPUFS_FULL_MASK 0xffffffffu

__device__ __forceinline__ uint32_t gpufs_lane(void)
{
  uint32_t l;
  asm("mov.u32 %0, %%laneid;" : "=r"(l));
  return l;
}

/* The SM the calling thread runs on.  PTX lets it change if the thread is
 * rescheduled (preemption), so callers use it as a hint: the pull gate
 * keeps the counter it took, and a stop key only spreads reads. */
__device__ __forceinline__ uint32_t gpufs_smid(void)
{
  uint32_t sm;
  asm("mov.u32 %0, %%smid;" : "=r"(sm));
  return sm;
}

/* A key that no two threads running at once share: the SM, the warp slot
 * on it and the lane.  Waits that hold no ticket key their stop word with
 * it (gpufs_q_stop_word), so that waiting threads read different lines
 * (%warpid, as %smid, may change after preemption: then two keys may meet,
 * which costs a shared line, nothing else). */
__device__ __forceinline__ uint32_t gpufs_q_stop_key_here(void)
{
  uint32_t warp;
  asm("mov.u32 %0, %%warpid;" : "=r"(warp));
  return (gpufs_smid() * 64u + warp) * 32u + gpufs_lane();
}

__device__ __forceinline__ uint32_t gpufs_lanemask_lt(void)
{
  uint32_t m;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
  return m;
}

/* Nanoseconds of the GPU's global timer (libcu++ reads %globaltimer). */
__device__ __forceinline__ uint64_t gpufs_now_ns(void)
{
  return (uint64_t)cuda::std::chrono::duration_cast<cuda::std::chrono::nanoseconds>(
             cuda::std::chrono::system_clock::now().time_since_epoch())
      .count();
}

__device__ __forceinline__ uint32_t gpufs_block_rank(void)
{
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

__device__ __forceinline__ uint32_t gpufs_block_id(void)
{
  return blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
}

/* Pages one span of the multi-page hit path (read.cu: gread_hits) looks up
 * at once in a block-level call: one thread a page. */
#define GPUFS_SPAN_MAX 256u

/* Shared scratch of a block-level call: the meta warp's per-page values;
 * the hit path's frames (a thread's for its page) and each warp's ballot
 * of the pages that missed. */
struct gpufs_block_scratch {
  uint64_t v64[2][GPUFS_CHUNK];
  uint32_t v32[2][GPUFS_CHUNK];
  uint32_t span[GPUFS_SPAN_MAX];
  uint32_t miss[32];
  int64_t ret[3];
  uint32_t mask[2]; /* put_mask's slots: a round's loads (0), its claimed posted pages (1) */
};

/* The one scratch of a block (scratch.cu), shared by every block-level
 * call: a block makes one block-level call at a time (each needs the whole
 * block), and a call's last use (bcast) ends with a barrier, so the next
 * call's first write cannot race it.  A kernel that calls every block-level
 * call holds one scratch, not one per entry point (CUB's TempStorage, with
 * the declaration made once for the library).
 * With -rdc, nvlink lays out every __shared__ variable of a device
 * function (not of a kernel) once for the whole program: a program that
 * declares such an array in a device function called beside libgpufs
 * calls may find the scratch laid out after it, in every kernel (declare
 * those arrays in the kernel and pass them down: rodinia-io/pathfinder). */
extern __shared__ struct gpufs_block_scratch gpufs_block_sh;

struct gpufs_block_group {
  /* whether the group's copies from host memory take turns at their SM's
   * pull gate (gpufs_pull_gate_enter, round.cuh) */
  static constexpr bool pull_gated = false;
  struct gpufs_block_scratch *sh = &gpufs_block_sh;
  __device__ uint32_t rank() const { return gpufs_block_rank(); }
  __device__ uint32_t size() const { return blockDim.x * blockDim.y * blockDim.z; }
  __device__ bool meta() const { return gpufs_block_rank() < 32; }
  __device__ void sync() const { __syncthreads(); }
  __device__ uint32_t id() const { return gpufs_block_id(); }
  /* meta lanes publish; valid after the next sync() */
  __device__ void put32(int k, uint32_t v) const { sh->v32[k][gpufs_lane()] = v; }
  __device__ void put64(int k, uint64_t v) const { sh->v64[k][gpufs_lane()] = v; }
  __device__ uint32_t get32(int k, uint32_t, uint32_t j) const { return sh->v32[k][j]; }
  __device__ uint64_t get64(int k, uint64_t, uint32_t j) const { return sh->v64[k][j]; }
  /* a mask the meta warp agrees on (a ballot), to every thread after sync();
   * two slots, so that the meta warp may put the next in slot 1 - k while
   * the others still read slot k */
  __device__ void put_mask(uint32_t m, int k = 0) const
  {
    if (gpufs_block_rank() == 0) sh->mask[k] = m;
  }
  __device__ uint32_t get_mask(uint32_t, int k = 0) const { return sh->mask[k]; }
  /* a block needs whole warps: the meta warp is its first */
  __device__ bool shape_ok() const { return size() >= 32 && size() % 32 == 0; }
  /* value of the meta warp's lane 0, to every thread; includes a sync() */
  __device__ int64_t bcast(int64_t v) const
  {
    if (gpufs_block_rank() == 0) sh->ret[0] = v;
    __syncthreads();
    int64_t r = sh->ret[0];
    __syncthreads();
    return r;
  }
  /* The hit path's spans: pages a span may take (thread t looks up page
   * t); thread t publishes its frame with put_span, every thread reads
   * page j's with get_span after first_miss. */
  __device__ uint32_t span_cap() const { return size() < GPUFS_SPAN_MAX ? size() : GPUFS_SPAN_MAX; }
  __device__ void put_span(uint32_t v) const
  {
    if (gpufs_block_rank() < GPUFS_SPAN_MAX) sh->span[gpufs_block_rank()] = v;
  }
  __device__ uint32_t get_span(uint32_t, uint32_t j) const { return sh->span[j]; }
  /* The lowest rank whose miss is true, or n if none below n is, to every
   * thread (only ranks below n may pass true).  Every thread calls it;
   * includes a sync(), which also publishes put_span.  The next write of
   * miss[] must follow a sync() (the caller's, after its copy). */
  __device__ uint32_t first_miss(bool miss, uint32_t n) const
  {
    const uint32_t b = __ballot_sync(GPUFS_FULL_MASK, miss);
    if (gpufs_lane() == 0) sh->miss[gpufs_block_rank() / 32] = b;
    __syncthreads();
    for (uint32_t w = 0; w * 32 < n; w++) {
      const uint32_t m = sh->miss[w];
      if (m != 0) return w * 32 + (uint32_t)__ffs((int)m) - 1;
    }
    return n;
  }
  /* three values of the meta warp's lane 0 at once, to every thread, in
   * place; includes a sync() (one barrier pair for the three) */
  __device__ void bcast3(int64_t *a, int64_t *b, int64_t *c) const
  {
    if (gpufs_block_rank() == 0) {
      sh->ret[0] = *a;
      sh->ret[1] = *b;
      sh->ret[2] = *c;
    }
    __syncthreads();
    *a = sh->ret[0];
    *b = sh->ret[1];
    *c = sh->ret[2];
    __syncthreads();
  }
};

struct gpufs_warp_group {
  static constexpr bool pull_gated = true;
  __device__ uint32_t rank() const { return gpufs_lane(); }
  __device__ uint32_t size() const { return 32; }
  __device__ bool meta() const { return true; }
  __device__ void sync() const { __syncwarp(); }
  __device__ uint32_t id() const
  {
    return gpufs_block_id() * ((blockDim.x * blockDim.y * blockDim.z + 31) / 32) +
           gpufs_block_rank() / 32;
  }
  __device__ void put32(int, uint32_t) const {}
  __device__ void put64(int, uint64_t) const {}
  __device__ uint32_t get32(int, uint32_t mine, uint32_t j) const
  {
    return __shfl_sync(GPUFS_FULL_MASK, mine, j);
  }
  __device__ uint64_t get64(int, uint64_t mine, uint32_t j) const
  {
    return __shfl_sync(GPUFS_FULL_MASK, mine, j);
  }
  __device__ void put_mask(uint32_t, int = 0) const {}
  __device__ uint32_t get_mask(uint32_t mine, int = 0) const { return mine; }
  /* a warp call needs the whole warp, converged */
  __device__ bool shape_ok() const { return __activemask() == GPUFS_FULL_MASK; }
  __device__ int64_t bcast(int64_t v) const { return __shfl_sync(GPUFS_FULL_MASK, v, 0); }
  /* the hit path's spans: a lane a page, frames in registers */
  __device__ uint32_t span_cap() const { return 32; }
  __device__ void put_span(uint32_t) const {}
  __device__ uint32_t get_span(uint32_t mine, uint32_t j) const
  {
    return __shfl_sync(GPUFS_FULL_MASK, mine, j);
  }
  __device__ uint32_t first_miss(bool miss, uint32_t n) const
  {
    const uint32_t b = __ballot_sync(GPUFS_FULL_MASK, miss);
    return b != 0 ? (uint32_t)__ffs((int)b) - 1 : n;
  }
  __device__ void bcast3(int64_t *a, int64_t *b, int64_t *c) const
  {
    *a = __shfl_sync(GPUFS_FULL_MASK, *a, 0);
    *b = __shfl_sync(GPUFS_FULL_MASK, *b, 0);
    *c = __shfl_sync(GPUFS_FULL_MASK, *c, 0);
  }
};

/* Copy n bytes with every thread of a group, widest words the alignment of
 * dst and src allows. */
template <typename W>
__device__ __forceinline__ void gpufs_copy_words(uint8_t *dst, const uint8_t *src, size_t n,
                                                 uint32_t rank, uint32_t size)
{
  size_t head = (sizeof(W) - ((uintptr_t)dst & (sizeof(W) - 1))) & (sizeof(W) - 1);
  if (head > n) head = n;
  for (size_t i = rank; i < head; i += size) dst[i] = src[i];
  W *d = (W *)(dst + head);
  const W *s = (const W *)(src + head);
  size_t nw = (n - head) / sizeof(W);
  size_t i = rank;
  for (; i + 3 * (size_t)size < nw; i += 4 * (size_t)size) {
    W a = s[i], b = s[i + size], c = s[i + 2 * size], e = s[i + 3 * size];
    d[i] = a;
    d[i + size] = b;
    d[i + 2 * size] = c;
    d[i + 3 * size] = e;
  }
  for (; i < nw; i += size) d[i] = s[i];
  for (size_t k = head + nw * sizeof(W) + rank; k < n; k += size) dst[k] = src[k];
}

__device__ __forceinline__ void gpufs_group_copy(void *dst, const void *src, size_t n,
                                                 uint32_t rank, uint32_t size)
{
  uintptr_t x = (uintptr_t)dst ^ (uintptr_t)src;
  uint8_t *d = (uint8_t *)dst;
  const uint8_t *s = (const uint8_t *)src;
  if ((x & 15) == 0) gpufs_copy_words<uint4>(d, s, n, rank, size);
  else if ((x & 7) == 0) gpufs_copy_words<uint64_t>(d, s, n, rank, size);
  else if ((x & 3) == 0) gpufs_copy_words<uint32_t>(d, s, n, rank, size);
  else gpufs_copy_words<uint8_t>(d, s, n, rank, size);
}

#endif /* GPUFS_DEVICE_GROUP_CUH */
