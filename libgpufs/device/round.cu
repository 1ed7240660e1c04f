/*
 * round.cu - the meta lane's part of a round (round.cuh): phase A (find,
 * allocate, ask the host) and phase D (publish, wait for others).
 */
#include "libgpufs/device/round.cuh"

__device__ int64_t gpufs_round_fetch(const struct gpufs_fdinfo *fi, uint64_t p0, uint32_t np,
                                     uint32_t nwant, uint32_t ring, uint32_t nofetch,
                                     struct gpufs_round *r)
{
  const struct gpufs_dev *d = &gpufs_dev;
  const uint32_t j = gpufs_lane();
  const uint32_t S = d->cache.page_size;
  if (j < np) {
    r->kind = gpufs_cache_get(&d->cache, gpufs_key(fi->cid, p0 + j), fi->version, ring, &r->frame);
    if (j >= nwant && r->kind != GPUFS_GET_LOAD) {
      /* readahead of a page that is cached, on its way or without a frame:
       * nothing to do, nothing to wait for */
      if (r->kind == GPUFS_GET_HIT || r->kind == GPUFS_GET_WAIT)
        gpufs_frame_unpin(&d->cache, r->frame);
      r->kind = 0;
      r->frame = GPUFS_NIL;
    }
  }
  const bool fetch = r->kind == GPUFS_GET_LOAD && !((nofetch >> j) & 1u);
  uint32_t loaders = __ballot_sync(GPUFS_FULL_MASK, fetch);
  if (loaders == 0) return 0;
  uint64_t t0 = 0;
  if (j == 0) {
    t0 = gpufs_q_reserve(&d->q, (uint32_t)__popc(loaders));
    const uint32_t ahead = nwant < 32 ? (uint32_t)__popc(loaders >> nwant) : 0;
    if (ahead) gpufs_add_relaxed_u64_dev(&d->cache.rings[ring].ra_pages, (uint64_t)ahead);
  }
  t0 = __shfl_sync(GPUFS_FULL_MASK, t0, 0);
  if (!fetch) return 0;

  r->ticket = t0 + (uint64_t)__popc(loaders & gpufs_lanemask_lt());
  struct gpufs_slot *s = gpufs_q_slot(&d->q, r->ticket);
  int64_t res = gpufs_q_wait_free(&d->q, r->ticket);
  if (res == 0) {
    r->owned = true;
    gpufs_st_relaxed_u32_sys(&s->op, GPUFS_OP_READ);
    gpufs_st_relaxed_u32_sys((uint32_t *)&s->hfid, (uint32_t)fi->hfid);
    gpufs_st_relaxed_u64_sys(&s->offset, (p0 + j) * S);
    gpufs_st_relaxed_u32_sys(&s->len, S);
    gpufs_q_post(&d->q, r->ticket);
  }
  /* Only the lane with the round's last ticket polls host memory at first:
   * a worker completes a run's tickets in order, so when the last is done
   * the others usually are too.  Many lanes polling over PCIe would compete
   * with the data for the link.  Every loading lane reaches the __syncwarp,
   * also one whose wait_free failed at a stop. */
  if (res == 0 && j == 31u - (uint32_t)__clz(loaders)) res = gpufs_q_wait_done(&d->q, r->ticket);
  __syncwarp(loaders);
  if (res == 0) res = gpufs_q_wait_done(&d->q, r->ticket);
  if (res) {
    r->owned = false; /* stopped: a worker may still write the slot; never hand it on */
    return res;
  }
  return gpufs_ld_relaxed_i64_sys(&s->result);
}

__device__ int64_t gpufs_round_settle(struct gpufs_round *r)
{
  const struct gpufs_dev *d = &gpufs_dev;
  switch (r->kind) {
  case GPUFS_GET_LOAD:
    if (r->owned) gpufs_q_release(&d->q, r->ticket);
    if (r->status >= 0) gpufs_frame_loaded(&d->cache, r->frame, (uint32_t)r->status);
    else gpufs_frame_failed(&d->cache, r->frame, (int32_t)r->status);
    return r->status;
  case GPUFS_GET_WAIT: {
    int w = gpufs_frame_wait(&d->cache, r->frame, &d->q.hdr->state, GPUFS_Q_STOPPED);
    if (w) return w;
    return gpufs_ld_relaxed_u32_dev(&d->cache.frames[r->frame].len);
  }
  case GPUFS_GET_HIT:
    return gpufs_ld_relaxed_u32_dev(&d->cache.frames[r->frame].len);
  case GPUFS_GET_NOFRAME:
    return GPUFS_NOFRAME;
  default:
    return 0;
  }
}
