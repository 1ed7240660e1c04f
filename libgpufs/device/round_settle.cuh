/*
 * round_settle.cuh - step 4 of a round (round.cuh): settle.  Each meta
 * lane ends its page by its source: a load releases its slot or its peer's
 * frame and publishes the frame VALID (or failed); a page another loads is
 * waited for; a cached page's length is read.  Then the group learns every
 * page's status.  The loads' bytes are in their frames already (the copy
 * step's fence and barrier), so settle's release publishes them.
 *
 * What the caller reads after the round (gpufs_round_frame, _status,
 * _noframe) and its end (gpufs_round_unpin) are here too.
 */
#ifndef GPUFS_DEVICE_ROUND_SETTLE_CUH
#define GPUFS_DEVICE_ROUND_SETTLE_CUH

#include "libgpufs/device/post.cuh"
#include "libgpufs/device/round_state.cuh"

/* The meta lane's half, for its own page (any subset of the meta warp may
 * call it; it synchronizes nothing): the page's status, the bytes its
 * frame holds (>= 0) or -errno; 0 for a page without a frame.  A waiting
 * page comes last in the round: the group's own loads are published
 * first, so groups cannot wait on each other in a cycle.  Not inlined:
 * one call per round, as the lookup's. */
inline __device__ __noinline__ int64_t gpufs_round_settle_page(const struct gpufs_dev *d,
                                                               struct gpufs_round *r)
{
  switch (r->src) {
  case GPUFS_SRC_CACHE:
    return gpufs_ld_relaxed_u32_dev(&d->cache.frames[r->frame].len);
  case GPUFS_SRC_WAIT: {
    int w = gpufs_post_wait_frame(d, r->frame);
    if (w) return w;
    return gpufs_ld_relaxed_u32_dev(&d->cache.frames[r->frame].len);
  }
  case GPUFS_SRC_DAEMON:
    if (r->owned) gpufs_q_release(&d->q, r->ticket);
    break;
  case GPUFS_SRC_PEER:
    /* the group's copy out of the peer's frame is done (the copy's barrier) */
    gpufs_frame_unpin(&r->peer->cache, r->peer_frame);
    break;
  case GPUFS_SRC_PINNED:
  case GPUFS_SRC_FILL:
    break;
  default: /* NONE; NOFRAME: gpufs_round_noframe tells the caller */
    return 0;
  }
  if (r->status >= 0) gpufs_frame_loaded(&d->cache, r->frame, (uint32_t)r->status);
  else gpufs_frame_failed(&d->cache, r->frame, (int32_t)r->status);
  return r->status;
}

/* The group's half: the meta lanes settle their pages and publish the
 * statuses; every thread can then read them (gpufs_round_status).  Every
 * thread of the group calls it, after the copy step; synchronizes the
 * group. */
template <typename G>
__device__ __forceinline__ void gpufs_round_settle(G g, const struct gpufs_dev *d,
                                                   struct gpufs_round *r)
{
  if (g.meta()) {
    r->status = gpufs_round_settle_page(d, r);
    g.put64(GPUFS_V64_STATUS, (uint64_t)r->status);
  }
  g.sync();
}

/* Page j's frame and status after gpufs_round_load.  Every thread of the
 * group calls them with the same j (a warp group shuffles); they
 * synchronize nothing. */
template <typename G>
__device__ __forceinline__ uint32_t gpufs_round_frame(G g, const struct gpufs_round *r, uint32_t j)
{
  return g.get32(GPUFS_V32_FRAME, r->frame, j);
}

/* Bytes the frame holds of the file (>= 0) or -errno; 0 for a page with
 * no frame. */
template <typename G>
__device__ __forceinline__ int64_t gpufs_round_status(G g, const struct gpufs_round *r, uint32_t j)
{
  return (int64_t)g.get64(GPUFS_V64_STATUS, (uint64_t)r->status, j);
}

/* Page j got no frame (its ring had none free): the caller stops there and
 * retries the page in a later round. */
template <typename G>
__device__ __forceinline__ bool gpufs_round_noframe(G g, const struct gpufs_round *r, uint32_t j)
{
  return (int32_t)g.get32(GPUFS_V32_KIND, (uint32_t)r->src, j) == GPUFS_SRC_NOFRAME;
}

/* Drop the round's pins; with keep_first, page 0 stays pinned (gmmap).
 * The time since the pages were ready counts as the round's copy phase.
 * Every thread of the group calls it; synchronizes the group first (every
 * thread's use of the pages is done before the unpins). */
template <typename G>
__device__ __forceinline__ void gpufs_round_unpin(G g, const struct gpufs_dev *d,
                                                  const struct gpufs_round *r, bool keep_first,
                                                  uint32_t ring)
{
  g.sync();
  if (g.meta() && r->frame != GPUFS_NIL && !(keep_first && gpufs_lane() == 0))
    gpufs_frame_unpin(&d->cache, r->frame);
  if (g.rank() == 0) {
    struct gpufs_ring_stats *rg = &d->cache.stats[ring];
    gpufs_add_relaxed_u64_dev(&rg->phase_cycles[3], gpufs_cycles() - r->t_end);
    gpufs_add_relaxed_u64_dev(&rg->rounds, 1ull);
  }
}

#endif /* GPUFS_DEVICE_ROUND_SETTLE_CUH */
