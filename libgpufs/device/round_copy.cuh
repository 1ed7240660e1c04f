/*
 * round_copy.cuh - step 3 of a round (round.cuh): the copy.  The meta
 * lanes publish each page's frame, source, source address and status
 * (gpufs_round_publish, the meta warp's half); then every thread of the
 * group copies the loaded pages from their sources into their frames
 * (gpufs_round_copy, the group's half): a peer's frame, the file's pinned
 * mapping, a slot's (host-mapped) staging, or the caller's fill; a page
 * the file ends in is zeroed past its bytes.  The lookup step's group half
 * copies the posted pages it claimed with the same gpufs_round_copy.
 */
#ifndef GPUFS_DEVICE_ROUND_COPY_CUH
#define GPUFS_DEVICE_ROUND_COPY_CUH

#include "libgpufs/device/round_state.cuh"

/* What the copy step copies, as the group sees it after the publishing
 * barrier: src is this meta lane's page's source address; the masks have a
 * bit per meta lane and are equal in every thread (from_host: in a warp
 * group, where every lane is a meta lane). */
struct gpufs_round_copy {
  uint64_t src;
  uint32_t loads;     /* the pages to copy */
  uint32_t from_host; /* of those, the ones read from host memory (the pull gate) */
  uint32_t fills;     /* of those, the ones taken from the caller's fill */
};

/* The copy of the pages of `whole` (each loaded with page_size bytes from
 * its source, both 16-byte aligned): every thread copies words of any of
 * them, GPUFS_COPY_LOADS loads in flight per thread, so that a group whose sources
 * are in host memory (pull staging, a registered mapping) has many reads
 * in flight over PCIe at once, not one page's at a time.  Every thread of
 * the group calls it with the same whole, after the sync that publishes
 * the meta lanes' values; synchronizes nothing.  Not inlined: its eight
 * words in flight inlined into gwrite and gmmap made them spill 60-70%
 * more (ptxas -v, -maxrregcount=128); as a call their spills are as
 * before, and it spills nothing itself. */
#define GPUFS_COPY_LOADS 8
template <typename G>
__device__ __noinline__ void gpufs_round_copy_whole(G g, const struct gpufs_dev *d,
                                                       const struct gpufs_round *r, uint64_t src,
                                                       uint32_t whole)
{
  const uint32_t shift = (uint32_t)__ffs((int)(d->cache.page_size / sizeof(uint4))) - 1;
  const uint32_t nw = (uint32_t)__popc(whole) << shift; /* a multiple of 256 */
  const uint32_t step = g.size();
  for (uint32_t i0 = g.rank(); i0 < nw; i0 += GPUFS_COPY_LOADS * step) {
    /* loads first, all in flight; the stores find their frames again (a
     * register per word instead of a pointer per word: gread spills less) */
    uint4 v[GPUFS_COPY_LOADS];
GPUFS_UNROLL
    for (uint32_t u = 0; u < GPUFS_COPY_LOADS; u++) {
      const uint32_t i = i0 + u * step;
      /* every lane of a warp group takes the same branches: nw is a
       * multiple of 32 and the lanes' i differ by less than 32 */
      if (i < nw) {
        const uint32_t j = __fns(whole, 0, (int)(i >> shift) + 1);
        const uint4 *from = (const uint4 *)(uintptr_t)g.get64(GPUFS_V64_SRC, src, j);
        v[u] = from[i & ((1u << shift) - 1)];
      }
    }
GPUFS_UNROLL
    for (uint32_t u = 0; u < GPUFS_COPY_LOADS; u++) {
      const uint32_t i = i0 + u * step;
      if (i < nw) {
        const uint32_t j = __fns(whole, 0, (int)(i >> shift) + 1);
        uint4 *to = (uint4 *)gpufs_frame_data(&d->cache, g.get32(GPUFS_V32_FRAME, r->frame, j));
        to[i & ((1u << shift) - 1)] = v[u];
      }
    }
  }
}

/* The pull gate: at most pull_warps (config) warp groups of one SM copy
 * pages from host memory (pull staging, a registered mapping) at once.  Two
 * warps an SM already fill the link, and every warp more that reads host
 * memory keeps loads of host latency in flight that the SM's other warps'
 * device-memory work waits behind: on an H100 (bench/probes/pull_probe.cu
 * mix), 4 of 16 warps an SM pulling cut the other warps' device copies from
 * 2,471 to 544 GB/s, 8 to 100, while the pull stayed at 50.4-51.4 GB/s
 * (docs/design-read.md 7, "The pull gate").  Blocks are not gated: a block of
 * 256 threads is one group, and two to a SM is the usual grid.  The counter
 * is a throttle: it publishes nothing (relaxed), and a holder only copies,
 * so a waiter waits for copies in progress and nothing else. */
#define GPUFS_PULL_GATES 1024u /* more than any GPU's SMs; a power of two */
extern __device__ uint32_t gpufs_pull_gates[GPUFS_PULL_GATES];

/* Take one of the `limit` turns at this SM's gate (lane 0 waits; the
 * lanes then sync).  Every lane of the warp group calls it; synchronizes
 * the warp.  Returns the gate for gpufs_pull_gate_leave. */
__device__ __forceinline__ uint32_t *gpufs_pull_gate_enter(uint32_t limit)
{
  uint32_t *gate = &gpufs_pull_gates[gpufs_smid() & (GPUFS_PULL_GATES - 1)];
  if (gpufs_lane() == 0) {
    uint32_t ns = 128;
    while (gpufs_add_relaxed_u32_dev(gate, 1u) >= limit) {
      gpufs_add_relaxed_u32_dev(gate, ~0u); /* not our turn: give it back */
      gpufs_pause(&ns, 2048);
    }
  }
  __syncwarp();
  return gate;
}

/* Give the turn back after the copy.  Every lane calls it; synchronizes the
 * warp first (every lane's copy is done). */
__device__ __forceinline__ void gpufs_pull_gate_leave(uint32_t *gate)
{
  __syncwarp();
  if (gpufs_lane() == 0) gpufs_add_relaxed_u32_dev(gate, ~0u);
}

/* The group's half: the pages of cp->loads, whose frame, source and
 * status the meta lanes published.  Pages loaded whole from their source
 * go in one pass over all their words (gpufs_round_copy_whole; a warp
 * group copies those of from_host, read from host memory, with its SM's
 * pull turn), the rest page by page: a failed page is left, a short one
 * filled with zeros past its bytes, a page of fills taken from the
 * caller's fill.  Then each thread makes its frame writes visible GPU-wide
 * and the group syncs, before the meta lanes publish the frames (settle).
 * Every thread of the group calls it with equal ctl and masks, after the
 * sync that published the values; synchronizes the group when it copies
 * anything (a warp at the pull gate, then the group). */
template <typename G>
__device__ __forceinline__ void gpufs_round_copy(G g, const struct gpufs_round_ctl *ctl,
                                                 const struct gpufs_round *r,
                                                 const struct gpufs_round_copy *cp)
{
  const struct gpufs_dev *d = ctl->fi->d;
  const uint32_t S = d->cache.page_size;
  uint32_t whole = 0;
  for (uint32_t m = cp->loads; m != 0; m &= m - 1) {
    const uint32_t j = (uint32_t)__ffs((int)m) - 1;
    const int64_t got = (int64_t)g.get64(GPUFS_V64_STATUS, (uint64_t)r->status, j);
    if (got == (int64_t)S && !((cp->fills >> j) & 1u)) whole |= 1u << j;
  }
  if (G::pull_gated && d->pull_warps != 0 && (whole & cp->from_host)) {
    uint32_t *gate = gpufs_pull_gate_enter(d->pull_warps);
    gpufs_round_copy_whole(g, d, r, cp->src, whole);
    gpufs_pull_gate_leave(gate);
  } else {
    gpufs_round_copy_whole(g, d, r, cp->src, whole);
  }
  for (uint32_t m = cp->loads & ~whole; m != 0; m &= m - 1) {
    const uint32_t j = (uint32_t)__ffs((int)m) - 1;
    int64_t got = (int64_t)g.get64(GPUFS_V64_STATUS, (uint64_t)r->status, j);
    const uint8_t *from = (const uint8_t *)(uintptr_t)g.get64(GPUFS_V64_SRC, cp->src, j);
    uint8_t *dst = gpufs_frame_data(&d->cache, g.get32(GPUFS_V32_FRAME, r->frame, j));
    if (got < 0) continue;
    if ((cp->fills >> j) & 1u) {
      gpufs_group_copy(dst, ctl->fill + ((ctl->p0 + j) * S - ctl->fill_off), S, g.rank(), g.size());
      continue;
    }
    gpufs_group_copy(dst, from, (size_t)got, g.rank(), g.size());
    /* a mapping of the page reads zeros past the end of the file */
    for (uint64_t k = (uint64_t)got + g.rank(); k < S; k += g.size()) dst[k] = 0;
  }
  /* each thread makes its own frame writes visible GPU-wide before the meta
   * lane's release in gpufs_frame_loaded (which pairs with readers' acquire
   * of the VALID state).  A round that loads nothing wrote no frame and read
   * no status that settle rewrites: no fence, no barrier. */
  if (cp->loads) {
    __threadfence();
    g.sync();
  }
}

/* The meta warp's half: publish each lane's frame, source, source address
 * and status for the group, and the masks of the loads (put_mask slot 0)
 * and of those read from host memory.  The whole meta warp calls it,
 * converged (it ballots), after the ask step; the group's sync that
 * follows publishes the values. */
template <typename G>
__device__ __forceinline__ void gpufs_round_publish(G g, const struct gpufs_dev *d,
                                                    const struct gpufs_round *r,
                                                    struct gpufs_round_copy *cp)
{
  const int32_t s = r->src;
  cp->src = s == GPUFS_SRC_PEER || s == GPUFS_SRC_PINNED ? r->from : gpufs_round_staging(d, r->ticket);
  g.put32(GPUFS_V32_FRAME, r->frame);
  g.put32(GPUFS_V32_KIND, (uint32_t)s);
  g.put64(GPUFS_V64_SRC, cp->src);
  g.put64(GPUFS_V64_STATUS, (uint64_t)r->status);
  cp->loads = __ballot_sync(GPUFS_FULL_MASK, gpufs_src_loads(s));
  /* pages copied from host memory: the pinned mapping's, or staging's */
  if (G::pull_gated)
    cp->from_host = __ballot_sync(GPUFS_FULL_MASK, s == GPUFS_SRC_PINNED || s == GPUFS_SRC_DAEMON);
  g.put_mask(cp->loads);
}

#endif /* GPUFS_DEVICE_ROUND_COPY_CUH */
