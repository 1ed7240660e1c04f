/*
 * round.cu - the meta lane's part of a round (round.cuh): phase A (find,
 * allocate, look in the peers' caches, ask the host) and phase D (publish,
 * release, wait for others).
 */
#include "libgpufs/device/round.cuh"

#include "libgpufs/device/post.cuh"

__device__ uint32_t gpufs_round_find(const struct gpufs_fdinfo *fi, uint64_t p0, uint32_t np,
                                     uint32_t nwant, uint32_t ring, struct gpufs_round *r, bool post)
{
  const struct gpufs_dev *d = fi->d;
  const uint32_t j = gpufs_lane();
  if (post) { /* the window's budget first: nothing is posted without it */
    bool ok = false;
    if (j == 0) ok = gpufs_post_take(d, ring, np);
    r->budget = __shfl_sync(GPUFS_FULL_MASK, ok, 0);
    if (!r->budget) return 0;
  }
  if (j < np) {
    r->kind = gpufs_cache_get(&d->cache, gpufs_key(fi->cid, p0 + j), fi->version, ring, &r->frame);
    /* a page a posted load brings: claimed, the lane waits for its answer
     * now, before the round takes tickets of its own (post.cuh) */
    if (r->kind == GPUFS_GET_WAIT && !post && gpufs_post_claim_frame(d, r->frame, &r->ticket)) {
      r->kind = GPUFS_GET_LOAD;
      r->claimed = true;
      r->owned = true;
      int64_t res = gpufs_q_wait_done(&d->q, r->ticket);
      if (res) r->owned = false; /* stopped: a worker may still write the slot */
      else res = gpufs_ld_relaxed_i64_sys(&gpufs_q_slot(&d->q, r->ticket)->result);
      r->status = res;
    }
    if (j >= nwant && r->kind != GPUFS_GET_LOAD) {
      /* readahead of a page that is cached, on its way or without a frame:
       * nothing to do, nothing to wait for */
      if (r->kind == GPUFS_GET_HIT || r->kind == GPUFS_GET_WAIT)
        gpufs_frame_unpin(&d->cache, r->frame);
      r->kind = 0;
      r->frame = GPUFS_NIL;
    }
  }
  return __ballot_sync(GPUFS_FULL_MASK, r->claimed);
}

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

__device__ int64_t gpufs_round_ask(const struct gpufs_fdinfo *fi, uint64_t p0, uint32_t np,
                                   uint32_t nwant, uint32_t ring, uint32_t nofetch,
                                   struct gpufs_round *r, bool post)
{
  const struct gpufs_dev *d = fi->d;
  const uint32_t j = gpufs_lane();
  const uint32_t S = d->cache.page_size;
  bool fetch = r->kind == GPUFS_GET_LOAD && !((nofetch >> j) & 1u);
  /* the readahead pages this round reads, from whatever source */
  const uint32_t reads = __ballot_sync(GPUFS_FULL_MASK, fetch);
  if (j == 0 && nwant < 32 && (reads >> nwant) != 0)
    gpufs_add_relaxed_u64_dev(&d->cache.stats[ring].ra_pages, (uint64_t)__popc(reads >> nwant));
  if (fetch && d->peers) {
    /* a peer holds the page: copy it from there in C, no request */
    const uint64_t key = gpufs_key(fi->cid, p0 + j);
    for (uint32_t m = d->peers; m != 0 && r->peer_frame == GPUFS_NIL; m &= m - 1) {
      r->peer = &gpufs_devs[__ffs((int)m) - 1];
      r->peer_frame = gpufs_peer_find(&r->peer->cache, key, fi->version);
    }
    if (r->peer_frame != GPUFS_NIL) {
      fetch = false;
      gpufs_add_relaxed_u64_dev(&d->cache.stats[ring].peer_hits, 1ull);
    }
  }
  if (fetch) {
    /* a registered file: copy a page that lies wholly within the mapping
     * from there in C, no request.  relaxed: reg was published with the
     * entry's OPEN (gnode.h); a truncation clears it */
    const uint64_t w = gpufs_ld_relaxed_u64_dev(&gpufs_node_of(d, fi->fd)->reg);
    if (w != 0 && (p0 + j + 1) * S <= gpufs_reg_len(w)) {
      r->reg_src = gpufs_reg_addr(w) + (p0 + j) * S;
      fetch = false;
      gpufs_add_relaxed_u64_dev(&d->cache.stats[ring].reg_pages, 1ull);
    }
  }
  /* relaxed: the pin's acquire (gpufs_frame_pin) made the peer's len visible */
  const int64_t direct_len =
      r->reg_src != 0 ? (int64_t)S
      : r->peer_frame == GPUFS_NIL
          ? 0
          : (int64_t)gpufs_ld_relaxed_u32_dev(&r->peer->cache.frames[r->peer_frame].len);
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
      const struct gpufs_req req = {GPUFS_OP_READ, fi->hfid, (p0 + j) * S, S, 0};
      gpufs_q_fill(gpufs_q_slot(&d->q, r->ticket), &req);
      gpufs_q_post(&d->q, r->ticket);
      posted = post && j >= nwant;
    }
  }
  if (post && r->budget) {
    /* the budget of pages not posted goes back; a posted page is no longer
     * this round's (the lane holds nothing of it) */
    const uint32_t nposted = (uint32_t)__popc(__ballot_sync(GPUFS_FULL_MASK, posted));
    if (j == 0) gpufs_post_give(d, ring, np - nposted);
    if (posted) gpufs_post_record(d, r->ticket, r->frame, ring);
  }
  const bool waits = fetch && !posted;
  const uint32_t waiters = __ballot_sync(GPUFS_FULL_MASK, waits);
  if (posted) {
    r->kind = 0;
    r->frame = GPUFS_NIL;
    r->owned = false;
    return 0;
  }
  if (!waits) return direct_len;
  /* Only the lane with the round's last ticket polls host memory at first:
   * a worker completes a run's tickets in order, so when the last is done
   * the others usually are too.  Many lanes polling over PCIe would compete
   * with the data for the link.  Every waiting lane reaches the __syncwarp,
   * also one whose wait_free failed at a stop. */
  if (res == 0 && j == 31u - (uint32_t)__clz(loaders))
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
  if (w != 0) gpufs_round_adopt_reg(fi, w);
  return got;
}

__device__ int64_t gpufs_round_settle(const struct gpufs_dev *d, struct gpufs_round *r)
{
  switch (r->kind) {
  case GPUFS_GET_LOAD:
    if (r->owned) gpufs_q_release(&d->q, r->ticket);
    /* the group's copy out of the peer's frame is done (C's barrier) */
    if (r->peer_frame != GPUFS_NIL) gpufs_frame_unpin(&r->peer->cache, r->peer_frame);
    if (r->status >= 0) gpufs_frame_loaded(&d->cache, r->frame, (uint32_t)r->status);
    else gpufs_frame_failed(&d->cache, r->frame, (int32_t)r->status);
    return r->status;
  case GPUFS_GET_WAIT: {
    int w = gpufs_post_wait_frame(d, r->frame);
    if (w) return w;
    return gpufs_ld_relaxed_u32_dev(&d->cache.frames[r->frame].len);
  }
  case GPUFS_GET_HIT:
    return gpufs_ld_relaxed_u32_dev(&d->cache.frames[r->frame].len);
  case GPUFS_GET_NOFRAME: /* gpufs_round_noframe tells the caller */
    return 0;
  default:
    return 0;
  }
}
