/*
 * async.cu - asynchronous readahead: a group posts the READs of a window
 * of pages and goes on; whoever needs one of those pages first finishes
 * its load.
 *
 *   post (gpufs_ra_post, the meta warp):
 *     frame LOADING (cache_get), ticket t, READ filled and posted,
 *     posted[slot(t)] = frame + 1, frame.aticket = t + 1 (release), unpin
 *                     |
 *                     |  the daemon serves t whenever it comes to it
 *                     v
 *   finish, by the first of:
 *     a round that finds the page LOADING (gpufs_round_fetch): claims
 *       aticket (CAS to 0) and takes the page as its own load: the group
 *       copies the slot's staging in C, D releases t and publishes VALID;
 *     a thread waiting for the slot of ticket t + nslots
 *       (gpufs_q_wait_free -> gpufs_q_unblock): claims aticket == t + 1,
 *       copies the page alone, releases t, publishes.
 *
 * Why nothing waits forever.  A posted frame is LOADING, so no allocation
 * takes it, and it has no pin of its loader.  A round that pinned it
 * before its ticket was set waits in gpufs_frame_wait, which returns
 * GPUFS_FRAME_POSTED once it sees the ticket: the round drops the page
 * (as one without a frame) and its retry claims the load.  A poster waits
 * only for free slots, and a slot held by a posted load is freed by the
 * waiter itself.  So the only waits are for the host, as before.
 *
 * A frame's aticket is 0 except while its load is posted and unclaimed;
 * the claim's CAS names the exact ticket, so a stale slot record (the
 * frame finished and reused since) never claims the wrong load.  What is
 * posted and never read again (a window past a group's last read) stays
 * LOADING until the queue comes round to its slot.  Posting stops while a
 * quarter of the queue's slots hold unclaimed loads (ra.pending, a hint).
 */
#include "libgpufs/device/readahead.cuh"

__device__ uint64_t gpufs_ra_claim(const struct gpufs_dev *d, uint32_t f, uint32_t ring)
{
  uint64_t *a = &d->cache.frames[f].aticket;
  /* relaxed: a look; the CAS below acquires */
  uint64_t t1 = gpufs_ld_relaxed_u64_dev(a);
  if (t1 == 0) return 0;
  /* acq_rel: the acquire pairs with the poster's release of aticket (the
   * slot was filled and posted before it); one claimer wins */
  if (!gpufs_cas_acqrel_u64_dev(a, &t1, 0ull)) return 0;
  gpufs_add_relaxed_u32_dev(d->ra.pending, (uint32_t)-1);
  gpufs_add_relaxed_u64_dev(&d->cache.stats[ring].ra_adopted, 1ull);
  return t1;
}

__device__ int64_t gpufs_ra_adopted_result(const struct gpufs_dev *d, struct gpufs_round *r,
                                           bool nofetch)
{
  int rc = gpufs_q_wait_done(&d->q, r->ticket);
  if (rc) {
    r->owned = false; /* stopped: a worker may still write the slot; never hand it on */
    return rc;
  }
  int64_t res = gpufs_ld_relaxed_i64_sys(&gpufs_q_slot(&d->q, r->ticket)->result);
  return nofetch && res < 0 ? 0 : res;
}

/* Leave the load of r's frame (LOADING, pinned by the caller, its READ
 * posted with r->ticket) to whoever needs the page next, as gpufs_ra_post
 * leaves its loads.  One lane. */
static __device__ void ra_leave(const struct gpufs_dev *d, uint32_t f, uint64_t t, uint32_t ring)
{
  const struct gpufs_cache *c = &d->cache;
  /* relaxed: the release of aticket below publishes it */
  gpufs_st_relaxed_u32_dev(&d->ra.posted[gpufs_q_index(&d->q, t)], f + 1);
  gpufs_add_relaxed_u32_dev(d->ra.pending, 1u);
  gpufs_add_relaxed_u64_dev(&c->stats[ring].ra_posted, 1ull);
  /* release: pairs with the claimer's CAS (gpufs_ra_claim, gpufs_q_unblock) */
  gpufs_st_release_u64_dev(&c->frames[f].aticket, t + 1);
  gpufs_frame_unpin(c, f); /* LOADING: no allocation takes it meanwhile */
}

__device__ void gpufs_ra_post(const struct gpufs_fdinfo *fi, uint64_t p0, uint32_t n, uint32_t ring)
{
  const struct gpufs_dev *d = fi->d;
  const struct gpufs_cache *c = &d->cache;
  const uint32_t j = gpufs_lane();
  /* relaxed: a hint against filling the queue with loads nobody claims;
   * lane 0's look decides for the warp (its lanes go on together) */
  uint32_t busy = j == 0 ? gpufs_ld_relaxed_u32_dev(d->ra.pending) : 0;
  busy = __shfl_sync(GPUFS_FULL_MASK, busy, 0);
  if (busy + n > d->q.nslots / 4) return;
  int kind = 0;
  uint32_t f = GPUFS_NIL;
  if (j < n) {
    kind = gpufs_cache_get(c, gpufs_key(fi->cid, p0 + j), fi->version, ring, &f);
    if (kind == GPUFS_GET_HIT || kind == GPUFS_GET_WAIT) gpufs_frame_unpin(c, f);
  }
  const bool load = kind == GPUFS_GET_LOAD;
  const uint32_t loaders = __ballot_sync(GPUFS_FULL_MASK, load);
  if (loaders == 0) return;
  uint64_t t0 = 0;
  if (j == 0) t0 = gpufs_q_reserve(&d->q, (uint32_t)__popc(loaders));
  t0 = __shfl_sync(GPUFS_FULL_MASK, t0, 0);
  if (!load) return;
  const uint64_t t = t0 + (uint64_t)__popc(loaders & gpufs_lanemask_lt());
  if (gpufs_q_wait_free(&d->q, t) != 0) {
    /* stopped: the slot is not ours; the page fails as a load would */
    gpufs_frame_failed(c, f, -GPUFS_ESHUTDOWN);
    gpufs_frame_unpin(c, f);
    return;
  }
  /* arg: the cid, so that a READ served after the file's close reads no
   * other file's bytes (-ESTALE; the page is then dropped, never failed) */
  const struct gpufs_req req = {GPUFS_OP_READ, fi->hfid, (p0 + j) * c->page_size, c->page_size,
                                fi->cid};
  gpufs_q_fill(gpufs_q_slot(&d->q, t), &req);
  gpufs_q_post(&d->q, t);
  ra_leave(d, f, t, ring);
}

__device__ void gpufs_ra_repost(const struct gpufs_dev *d, struct gpufs_round *r, bool wanted,
                                uint32_t ring)
{
  ra_leave(d, r->frame, r->ticket, ring);
  r->owned = false;
  r->frame = GPUFS_NIL;
  r->kind = wanted ? GPUFS_GET_NOFRAME : 0;
}

/* Finish the load of frame f from ticket t alone (claimed by the caller):
 * wait for the host, copy the slot's staging into the frame, zeros after
 * the file's end, release the slot, publish.  One thread. */
static __device__ void ra_finish_alone(const struct gpufs_dev *d, uint32_t f, uint64_t t)
{
  const struct gpufs_cache *c = &d->cache;
  if (gpufs_q_wait_done(&d->q, t) != 0) {
    gpufs_frame_failed(c, f, -GPUFS_ESHUTDOWN); /* the slot stays the worker's */
    return;
  }
  const int64_t res = gpufs_ld_relaxed_i64_sys(&gpufs_q_slot(&d->q, t)->result);
  const uint32_t S = c->page_size;
  if (res >= 0) {
    const uint8_t *from = d->q.staging_in + (uint64_t)gpufs_q_index(&d->q, t) * S;
    uint8_t *to = gpufs_frame_data(c, f);
    const uint32_t got = res < (int64_t)S ? (uint32_t)res : S;
    if (got == S) {
      for (uint32_t i = 0; i < S / 16; i += 8) { /* eight loads in flight */
        uint4 v[8];
#pragma unroll
        for (int u = 0; u < 8; u++) v[u] = ((const uint4 *)from)[i + u];
#pragma unroll
        for (int u = 0; u < 8; u++) ((uint4 *)to)[i + u] = v[u];
      }
    } else {
      for (uint32_t i = 0; i < got; i++) to[i] = from[i];
      for (uint32_t i = got; i < S; i++) to[i] = 0;
    }
    /* the frame's bytes are visible GPU-wide before gpufs_frame_loaded's
     * release */
    __threadfence();
  }
  gpufs_q_release(&d->q, t);
  if (res >= 0) gpufs_frame_loaded(c, f, (uint32_t)(res < (int64_t)S ? res : S));
  else gpufs_frame_failed(c, f, GPUFS_FRAME_DROPPED); /* never a reader's error */
}

__device__ void gpufs_q_unblock(const struct gpufs_queue_ref *q, uint64_t t)
{
  if (t < q->nslots) return;
  const struct gpufs_dev *d = NULL;
  for (uint32_t i = 0; i < GPUFS_MAX_INSTANCES; i++)
    if (&gpufs_devs[i].q == q) d = &gpufs_devs[i];
  if (d == NULL || d->ra.posted == NULL) return;
  const uint32_t idx = gpufs_q_index(q, t);
  /* relaxed: a stale record fails the CAS below, which names the ticket */
  const uint32_t f1 = gpufs_ld_relaxed_u32_dev(&d->ra.posted[idx]);
  if (f1 == 0 || f1 > d->cache.nframes) return;
  uint64_t want = t - q->nslots + 1;
  /* acq_rel: as in gpufs_ra_claim */
  if (!gpufs_cas_acqrel_u64_dev(&d->cache.frames[f1 - 1].aticket, &want, 0ull)) return;
  gpufs_add_relaxed_u32_dev(d->ra.pending, (uint32_t)-1);
  gpufs_add_relaxed_u64_dev(&d->cache.stats[idx % d->cache.nrings].ra_wrapped, 1ull);
  ra_finish_alone(d, f1 - 1, t - q->nslots);
}

__device__ void gpufs_ra_unstick(const struct gpufs_dev *d, uint32_t ring, uint32_t rank,
                                 uint32_t size)
{
  /* relaxed: a hint; a load posted after the look is not what stalled us */
  if (gpufs_ld_relaxed_u32_dev(d->ra.pending) == 0) return;
  const struct gpufs_cache *c = &d->cache;
  const uint32_t first = c->rings[ring].first, count = c->rings[ring].count;
  for (uint32_t i = rank; i < count; i += size) {
    uint64_t *a = &c->frames[first + i].aticket;
    /* relaxed: a look; the CAS acquires as in gpufs_ra_claim */
    uint64_t t1 = gpufs_ld_relaxed_u64_dev(a);
    if (t1 == 0 || !gpufs_cas_acqrel_u64_dev(a, &t1, 0ull)) continue;
    gpufs_add_relaxed_u32_dev(d->ra.pending, (uint32_t)-1);
    gpufs_add_relaxed_u64_dev(&c->stats[ring].ra_wrapped, 1ull);
    ra_finish_alone(d, first + i, t1 - 1);
  }
}
