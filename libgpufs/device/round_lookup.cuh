/*
 * round_lookup.cuh - step 1 of a round (round.cuh): the lookup.  Lane j of
 * the meta warp finds or creates page p0+j's frame (gpufs_cache_get) and
 * says where the page comes from (enum gpufs_src): cached, loading by
 * another, no frame, or, for a frame this round loads, a peer's cache, the
 * file's pinned mapping, the daemon, or the caller's fill.  Readahead pages
 * (from ctl->np on) that need no load are let go at once.
 *
 * With readahead_async, a page found LOADING by a posted load (post.cuh)
 * is claimed: the lane waits for the posted ticket's answer, and the
 * group's half of this step (gpufs_round_take_posted) copies and publishes
 * the claimed pages before the ask step takes tickets: a round must not
 * hold an older ticket's slot while it waits for newer tickets.
 */
#ifndef GPUFS_DEVICE_ROUND_LOOKUP_CUH
#define GPUFS_DEVICE_ROUND_LOOKUP_CUH

#include "libgpufs/device/post.cuh"
#include "libgpufs/device/round_copy.cuh"

/* Lane j's page of a file a peer instance caches (d->peers: other
 * instances on this GPU or on peer GPUs): its VALID frame there, pinned
 * until settle, becomes the page's source.  Counted as a peer hit. */
__device__ __forceinline__ bool gpufs_round_from_peer(const struct gpufs_round_ctl *ctl,
                                                      struct gpufs_round *r, uint32_t j)
{
  const struct gpufs_dev *d = ctl->fi->d;
  const uint64_t key = gpufs_key(ctl->fi->cid, ctl->p0 + j);
  for (uint32_t m = d->peers; m != 0; m &= m - 1) {
    const struct gpufs_dev *peer = &gpufs_devs[__ffs((int)m) - 1];
    const uint32_t f = gpufs_peer_find(&peer->cache, key, ctl->fi->version);
    if (f == GPUFS_NIL) continue;
    r->peer = peer;
    r->peer_frame = f;
    r->from = (uint64_t)(uintptr_t)gpufs_frame_data(&peer->cache, f);
    gpufs_add_relaxed_u64_dev(&d->cache.stats[ctl->ring].peer_hits, 1ull);
    return true;
  }
  return false;
}

/* Lane j's page of a file with a pinned mapping (gpufs_register, or an
 * automatic pin) that lies wholly within it: the mapping is its source.
 * relaxed: reg was published with the entry's OPEN (gnode.h); a truncation
 * clears it.  Counted as a registered page. */
__device__ __forceinline__ bool gpufs_round_from_pinned(const struct gpufs_round_ctl *ctl,
                                                        struct gpufs_round *r, uint32_t j)
{
  const struct gpufs_dev *d = ctl->fi->d;
  const uint32_t S = d->cache.page_size;
  const uint64_t w = gpufs_ld_relaxed_u64_dev(&gpufs_node_of(d, ctl->fi->fd)->reg);
  if (w == 0 || (ctl->p0 + j + 1) * S > gpufs_reg_len(w)) return false;
  r->from = gpufs_reg_addr(w) + (ctl->p0 + j) * S;
  gpufs_add_relaxed_u64_dev(&d->cache.stats[ctl->ring].reg_pages, 1ull);
  return true;
}

/* Where a page this round loads comes from: the caller's fill (nofetch), a
 * peer's cache, the pinned mapping, or else the daemon. */
__device__ __forceinline__ enum gpufs_src gpufs_round_source(const struct gpufs_round_ctl *ctl,
                                                             struct gpufs_round *r, uint32_t j)
{
  if ((ctl->nofetch >> j) & 1u) return GPUFS_SRC_FILL;
  if (ctl->fi->d->peers && gpufs_round_from_peer(ctl, r, j)) return GPUFS_SRC_PEER;
  if (gpufs_round_from_pinned(ctl, r, j)) return GPUFS_SRC_PINNED;
  return GPUFS_SRC_DAEMON;
}

/* A LOADING frame a posted load brings, claimed (gpufs_post_claim_frame):
 * wait for the posted ticket's answer now; the lane owns its slot. */
__device__ __forceinline__ enum gpufs_src gpufs_round_claimed(const struct gpufs_dev *d,
                                                              struct gpufs_round *r)
{
  r->owned = true;
  int64_t res = gpufs_q_wait_done(&d->q, r->ticket);
  if (res) r->owned = false; /* stopped: a worker may still write the slot */
  else res = gpufs_ld_relaxed_i64_sys(&gpufs_q_slot(&d->q, r->ticket)->result);
  r->status = res;
  return GPUFS_SRC_POSTED;
}

/* The meta warp's half.  Every lane of the meta warp calls it, converged
 * (a post round's first shuffle), with equal ctl; lane j looks after page
 * p0+j and sets r->frame (pinned, or GPUFS_NIL).  A post round first takes
 * its budget (gpufs_post_take): without it nothing is looked up.  Returns
 * lane j's page's source.  Not inlined: one call per round, as the ask
 * step's. */
inline __device__ __noinline__ enum gpufs_src gpufs_round_lookup(const struct gpufs_round_ctl *ctl,
                                                                 struct gpufs_round *r)
{
  const struct gpufs_dev *d = ctl->fi->d;
  const uint32_t j = gpufs_lane();
  if (ctl->post) { /* the window's budget first: nothing is posted without it */
    bool ok = false;
    if (j == 0) ok = gpufs_post_take(d, ctl->ring, ctl->np + ctl->nextra);
    r->budget = __shfl_sync(GPUFS_FULL_MASK, ok, 0);
    if (!r->budget) return GPUFS_SRC_NONE;
  }
  if (j >= ctl->np + ctl->nextra) return GPUFS_SRC_NONE;
  const int kind = gpufs_cache_get(&d->cache, gpufs_key(ctl->fi->cid, ctl->p0 + j),
                                   ctl->fi->version, ctl->ring, &r->frame);
  if (kind == GPUFS_GET_LOAD) return gpufs_round_source(ctl, r, j);
  /* a page a posted load brings: claimed, the lane waits for its answer
   * now, before the round takes tickets of its own (post.cuh) */
  if (kind == GPUFS_GET_WAIT && !ctl->post && gpufs_post_claim_frame(d, r->frame, &r->ticket))
    return gpufs_round_claimed(d, r);
  if (j >= ctl->np) {
    /* readahead of a page that is cached, on its way or without a frame:
     * nothing to do, nothing to wait for */
    if (kind != GPUFS_GET_NOFRAME) gpufs_frame_unpin(&d->cache, r->frame);
    r->frame = GPUFS_NIL;
    return GPUFS_SRC_NONE;
  }
  return kind == GPUFS_GET_HIT ? GPUFS_SRC_CACHE
         : kind == GPUFS_GET_WAIT ? GPUFS_SRC_WAIT
                                  : GPUFS_SRC_NOFRAME;
}

/* The group's half, in rounds of readahead_async that post nothing: the
 * posted pages the lookup claimed are copied from their tickets' staging
 * and published (gpufs_post_settle) before the ask step takes tickets;
 * they then read as pages another loaded (GPUFS_SRC_WAIT).  The claimed
 * mask goes in put_mask slot 1: the meta lanes' ask step puts its loads in
 * slot 0 while the others may still read this one.  Every thread of the
 * group calls it with equal ctl, after the lookup; synchronizes the group
 * (one barrier, two more when it claimed pages). */
template <typename G>
__device__ __forceinline__ void gpufs_round_take_posted(G g, const struct gpufs_round_ctl *ctl,
                                                        struct gpufs_round *r)
{
  const struct gpufs_dev *d = ctl->fi->d;
  struct gpufs_round_copy cp = {};
  if (g.meta()) {
    cp.loads = __ballot_sync(GPUFS_FULL_MASK, r->src == GPUFS_SRC_POSTED);
    cp.src = gpufs_round_staging(d, r->ticket);
    g.put32(GPUFS_V32_FRAME, r->frame);
    g.put64(GPUFS_V64_SRC, cp.src);
    g.put64(GPUFS_V64_STATUS, (uint64_t)r->status);
    if (G::pull_gated) cp.from_host = cp.loads;
    g.put_mask(cp.loads, 1);
  }
  g.sync();
  cp.loads = g.get_mask(cp.loads, 1);
  if (!cp.loads) return;
  gpufs_round_copy(g, ctl, r, &cp);
  if (g.meta() && r->src == GPUFS_SRC_POSTED) {
    gpufs_post_settle(d, r->ticket, r->frame, r->status, r->owned);
    r->src = GPUFS_SRC_WAIT; /* ready now: settle reads it as another's load */
    r->owned = false;
  }
}

#endif /* GPUFS_DEVICE_ROUND_LOOKUP_CUH */
