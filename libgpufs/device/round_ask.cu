/*
 * round_ask.cu - step 2 of a round (round.cuh): the ask, the meta warp's
 * alone (the rest of the group waits at the barrier after it).  The lanes
 * whose page comes from the daemon (GPUFS_SRC_DAEMON) take consecutive
 * tickets in one reservation, so the daemon can serve neighbouring pages
 * with one pread; each fills and posts a READ, and the lane of the last
 * ticket polls for the host's answer first (one poller per round, not one
 * per page).  A post round (readahead_async) posts its READs and waits for
 * none.  Every lane ends with its page's status: the host's answer, the
 * bytes a peer or the pinned mapping holds, or 0.
 */
#include "libgpufs/device/round.cuh"

/* A READ reply's out[3] (queue.h): the file's mapping, pinned since this
 * descriptor's node learned it at its open (an automatic pin: pinner.h).
 * The node keeps it, so later misses copy from the mapping.  Taken only
 * while the node's version is the call's: a truncation stores its new
 * version, then clears reg with a release store (gpufs_node_truncate), so
 * an adoption whose CAS lands after that clear sees the new version in
 * its re-check and takes the word back. */
static __device__ void gpufs_round_adopt_reg(const struct gpufs_fdinfo *fi, uint64_t w)
{
  struct gpufs_gnode *nd = gpufs_node_of(fi->d, fi->fd);
  /* relaxed: hints; the CAS decides */
  uint64_t exp = gpufs_ld_relaxed_u64_dev(&nd->reg);
  if (gpufs_ld_relaxed_u32_dev(&nd->version) != fi->version) return;
  /* none yet, or a shorter prefix of the same mapping (the pinner pins
   * window by window, pinner.c) */
  if (exp != 0 && (gpufs_reg_addr(exp) != gpufs_reg_addr(w) || gpufs_reg_len(exp) >= gpufs_reg_len(w)))
    return;
  /* acq_rel: the acquire pairs with the truncation's release of reg 0 */
  if (!gpufs_cas_acqrel_u64_dev(&nd->reg, &exp, w)) return;
  if (gpufs_ld_relaxed_u32_dev(&nd->version) != fi->version) {
    exp = w;
    gpufs_cas_acqrel_u64_dev(&nd->reg, &exp, 0ull);
  }
}

/* The bytes of a page loaded without a request: a whole page from the
 * pinned mapping, a peer frame's length, 0 for the rest.  relaxed: the
 * pin's acquire (gpufs_frame_pin) made the peer's len visible. */
static __device__ int64_t gpufs_round_direct_len(const struct gpufs_dev *d,
                                                 const struct gpufs_round *r)
{
  if (r->src == GPUFS_SRC_PINNED) return (int64_t)d->cache.page_size;
  if (r->src != GPUFS_SRC_PEER) return 0;
  return (int64_t)gpufs_ld_relaxed_u32_dev(&r->peer->cache.frames[r->peer_frame].len);
}

/* A post round's end of the ask: the budget of pages not posted goes back,
 * and a posted page is no longer this round's (the lane holds nothing of
 * it).  The whole meta warp calls it, converged. */
static __device__ void gpufs_round_posted(const struct gpufs_round_ctl *ctl, struct gpufs_round *r,
                                          bool posted)
{
  const struct gpufs_dev *d = ctl->fi->d;
  const uint32_t nposted = (uint32_t)__popc(__ballot_sync(GPUFS_FULL_MASK, posted));
  if (gpufs_lane() == 0) gpufs_post_give(d, ctl->ring, ctl->np + ctl->nextra - nposted);
  if (posted) gpufs_post_record(d, r->ticket, r->frame, ctl->ring);
}

/* The host's answer to lane j's READ (ticket r->ticket, posted).  Only the
 * lane with the round's last ticket polls host memory at first: a worker
 * completes a run's tickets in order, so when the last is done the others
 * usually are too.  Many lanes polling over PCIe would compete with the
 * data for the link.  Every waiting lane (waiters) calls it, also one
 * whose wait_free failed at a stop (res, else 0). */
static __device__ int64_t gpufs_round_answer(const struct gpufs_round_ctl *ctl, struct gpufs_round *r,
                                             int64_t res, uint32_t loaders, uint32_t waiters)
{
  const struct gpufs_dev *d = ctl->fi->d;
  if (res == 0 && gpufs_lane() == 31u - (uint32_t)__clz(loaders))
    res = gpufs_q_wait_done(&d->q, r->ticket);
  __syncwarp(waiters);
  if (res == 0) res = gpufs_q_wait_done(&d->q, r->ticket);
  if (res) {
    r->owned = false; /* stopped: a worker may still write the slot; never hand it on */
    return res;
  }
  struct gpufs_slot *slot = gpufs_q_slot(&d->q, r->ticket);
  /* relaxed, both: gpufs_q_wait_done's acquire ordered the reply */
  const int64_t got = gpufs_ld_relaxed_i64_sys(&slot->result);
  const uint64_t w = gpufs_ld_relaxed_u64_sys(&slot->out[3]);
  if (w != 0) gpufs_round_adopt_reg(ctl->fi, w);
  return got;
}

__device__ int64_t gpufs_round_ask(const struct gpufs_round_ctl *ctl, struct gpufs_round *r)
{
  const struct gpufs_dev *d = ctl->fi->d;
  const uint32_t j = gpufs_lane();
  const uint32_t S = d->cache.page_size;
  /* the readahead pages this round reads, from whatever source */
  const uint32_t reads = __ballot_sync(GPUFS_FULL_MASK, gpufs_src_reads(r->src));
  if (j == 0 && ctl->np < 32 && (reads >> ctl->np) != 0)
    gpufs_add_relaxed_u64_dev(&d->cache.stats[ctl->ring].ra_pages, (uint64_t)__popc(reads >> ctl->np));
  const bool fetch = r->src == GPUFS_SRC_DAEMON;
  const uint32_t loaders = __ballot_sync(GPUFS_FULL_MASK, fetch);
  uint64_t t0 = 0;
  if (loaders != 0) {
    if (j == 0) t0 = gpufs_q_reserve(&d->q, (uint32_t)__popc(loaders));
    t0 = __shfl_sync(GPUFS_FULL_MASK, t0, 0);
  }
  int64_t res = 0;
  bool posted = false;
  if (fetch) {
    r->ticket = t0 + (uint64_t)__popc(loaders & gpufs_lanemask_lt());
    res = gpufs_post_wait_free(d, r->ticket);
    if (res == 0) {
      r->owned = true;
      const struct gpufs_req req = {GPUFS_OP_READ, ctl->fi->hfid, (ctl->p0 + j) * S, S, 0};
      gpufs_q_fill(gpufs_q_slot(&d->q, r->ticket), &req);
      gpufs_q_post(&d->q, r->ticket);
      posted = ctl->post && j >= ctl->np;
    }
  }
  if (ctl->post && r->budget) gpufs_round_posted(ctl, r, posted);
  const bool waits = fetch && !posted;
  const uint32_t waiters = __ballot_sync(GPUFS_FULL_MASK, waits);
  if (posted) {
    r->src = GPUFS_SRC_NONE;
    r->frame = GPUFS_NIL;
    r->owned = false;
    return 0;
  }
  if (!waits) return gpufs_round_direct_len(d, r);
  return gpufs_round_answer(ctl, r, res, loaders, waiters);
}
