/*
 * post.cu - posted readahead loads: budgets, the hand-over, claims, and
 * finishing a claimed load alone (design: post.cuh).
 */
#include "libgpufs/device/post.cuh"

#include "libgpufs/device/group.cuh"

__device__ bool gpufs_post_take(const struct gpufs_dev *d, uint32_t ring, uint32_t n)
{
  struct gpufs_ring *rg = &d->cache.rings[ring];
  const uint32_t cap = rg->count / 4;
  /* relaxed: throttles (post.cuh) */
  if (gpufs_add_relaxed_u32_dev(&rg->posted, n) + n > cap) {
    gpufs_add_relaxed_u32_dev(&rg->posted, 0u - n);
    return false;
  }
  if (gpufs_add_relaxed_u32_dev(d->ra.nposted, n) + n > d->ra.post_slots) {
    gpufs_add_relaxed_u32_dev(d->ra.nposted, 0u - n);
    gpufs_add_relaxed_u32_dev(&rg->posted, 0u - n);
    return false;
  }
  return true;
}

__device__ void gpufs_post_give(const struct gpufs_dev *d, uint32_t ring, uint32_t n)
{
  if (n == 0) return;
  /* relaxed: throttles */
  gpufs_add_relaxed_u32_dev(d->ra.nposted, 0u - n);
  gpufs_add_relaxed_u32_dev(&d->cache.rings[ring].posted, 0u - n);
}

__device__ void gpufs_post_record(const struct gpufs_dev *d, uint64_t t, uint32_t f, uint32_t ring)
{
  struct gpufs_frame *fr = &d->cache.frames[f];
  const uint32_t s = gpufs_q_index(&d->q, t);
  gpufs_st_relaxed_u32_dev(&fr->post_ring, ring);
  gpufs_st_relaxed_u32_dev(&fr->post, s + 1u);
  /* release: publishes post_ring (and this lane's earlier acquire of the
   * slot: free_seq holds t); pairs with the claimers' CAS (acquire) */
  gpufs_st_release_u64_dev(&d->ra.posted[s], (uint64_t)(f + 1u) << 32 | (uint32_t)t);
}

/* Claim slot s's posted load if its word still reads w (nonzero): true,
 * and the ticket (the slot's holder: free_seq keeps it until the finisher
 * releases it, and the claim's acquire saw the poster's acquire of it). */
static __device__ bool gpufs_post_claim_slot(const struct gpufs_dev *d, uint32_t s, uint64_t w,
                                             uint64_t *t)
{
  /* acq_rel: acquire pairs with gpufs_post_record's release; the one winner
   * of the CAS owns the slot and the load from here on */
  if (!gpufs_cas_acqrel_u64_dev(&d->ra.posted[s], &w, 0ull)) return false;
  *t = gpufs_ld_relaxed_u64_dev(&d->q.free_seq[s]);
  return true;
}

__device__ bool gpufs_posted_claim_frame(const struct gpufs_dev *d, uint32_t f, uint64_t *t)
{
  /* relaxed: a hint; the claim below checks the frame in the slot's word */
  const uint32_t p = gpufs_ld_relaxed_u32_dev(&d->cache.frames[f].post);
  if (p == 0 || p > d->q.nslots) return false;
  const uint64_t w = gpufs_ld_relaxed_u64_dev(&d->ra.posted[p - 1]);
  if ((uint32_t)(w >> 32) != f + 1u) return false;
  return gpufs_post_claim_slot(d, p - 1, w, t);
}

/* After a claimed load of frame f is published VALID or failed: drop the
 * poster's pin and give its budget back. */
static __device__ void gpufs_post_done(const struct gpufs_dev *d, uint32_t f)
{
  /* read before the unpin: the frame may be taken for another page after */
  const uint32_t ring = gpufs_ld_relaxed_u32_dev(&d->cache.frames[f].post_ring);
  gpufs_frame_unpin(&d->cache, f); /* the poster's pin */
  gpufs_post_give(d, ring, 1u);
}

__device__ void gpufs_post_finish(const struct gpufs_dev *d, uint64_t t, uint32_t f)
{
  const struct gpufs_cache *c = &d->cache;
  const uint32_t S = c->page_size;
  int64_t res = gpufs_q_wait_done(&d->q, t);
  const bool stopped = res != 0;
  if (!stopped) res = gpufs_ld_relaxed_i64_sys(&gpufs_q_slot(&d->q, t)->result);
  if (res >= 0) {
    const uint32_t n = res > (int64_t)S ? S : (uint32_t)res;
    const uint8_t *from = d->q.staging + (uint64_t)gpufs_q_index(&d->q, t) * S;
    uint8_t *to = gpufs_frame_data(c, f);
    gpufs_group_copy(to, from, n, 0, 1);
    for (uint32_t k = n; k < S; k++) to[k] = 0;
    res = n;
  }
  /* gpufs_frame_loaded's release publishes this thread's copy */
  gpufs_post_settle(d, t, f, res, !stopped);
}

__device__ void gpufs_post_settle(const struct gpufs_dev *d, uint64_t t, uint32_t f, int64_t res,
                                  bool owned)
{
  if (res >= 0) gpufs_frame_loaded(&d->cache, f, (uint32_t)res);
  else gpufs_frame_failed(&d->cache, f, (int32_t)res);
  /* not owned (stopped): a worker may still write the slot; it is never
   * handed on */
  if (owned) gpufs_q_release(&d->q, t);
  gpufs_post_done(d, f);
}

__device__ int gpufs_posted_wait_free(const struct gpufs_dev *d, uint64_t t)
{
  const uint32_t s = gpufs_q_index(&d->q, t);
  uint32_t ns = 64;
  for (;;) {
    /* relaxed: a hint; the claim's CAS orders what the finisher reads */
    const uint64_t w = gpufs_ld_relaxed_u64_dev(&d->ra.posted[s]);
    uint64_t held = 0;
    if (w != 0 && gpufs_post_claim_slot(d, s, w, &held))
      gpufs_post_finish(d, held, (uint32_t)(w >> 32) - 1u);
    /* GPUFS_STOP_CHECK polls between looks: one stop check each */
    const int rc = gpufs_q_wait_free_some(&d->q, t, GPUFS_STOP_CHECK, &ns);
    if (rc != GPUFS_Q_STILL_HELD) return rc;
  }
}

__device__ int gpufs_posted_wait_frame(const struct gpufs_dev *d, uint32_t f)
{
  const uint32_t *stop = gpufs_q_stop_word(&d->q, gpufs_q_stop_key_here());
  uint32_t ns = 64;
  for (;;) {
    uint64_t t = 0;
    if (gpufs_posted_claim_frame(d, f, &t)) gpufs_post_finish(d, t, f);
    /* 64 polls between looks for a posted load: a poster that comes back
     * usually claims its window first */
    const int w = gpufs_frame_wait_some(&d->cache, f, stop, GPUFS_Q_STOPPED, 64, &ns);
    if (w != GPUFS_FRAME_STILL_LOADING) return w;
  }
}
