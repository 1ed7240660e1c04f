/*
 * writeback.cu - the meta lanes' part of a write-back (writeback.cuh).
 */
#include "libgpufs/device/writeback.cuh"

#include "libgpufs/device/post.cuh"

__device__ uint32_t gpufs_wb_gather(const struct gpufs_dev *d, uint32_t next, uint32_t node,
                                    struct gpufs_wb *w)
{
  const struct gpufs_cache *c = &d->cache;
  const uint32_t S = c->page_size;
  const uint32_t lane = gpufs_lane();
  uint32_t cur = next, mine = GPUFS_NIL;
  for (uint32_t i = 0; i < GPUFS_CHUNK && cur != GPUFS_NIL; i++) {
    if (lane == i) mine = cur;
    uint32_t nx = lane == 0 ? gpufs_dlist_next(c, cur) : 0;
    cur = __shfl_sync(GPUFS_FULL_MASK, nx, 0);
  }
  /* every link of the batch is read before any of its frames is taken */
  __syncwarp();
  w->frame = mine;
  w->more = false;
  w->failed = false;
  w->owned = false;
  w->err = 0;
  w->a = w->b = 0;
  if (mine != GPUFS_NIL) {
    gpufs_dirty_take(c, mine);
    /* relaxed: a dirty frame keeps its key; our pin keeps the frame */
    uint64_t page = gpufs_ld_relaxed_u64_dev(&c->frames[mine].key) &
                    ((1ull << GPUFS_PAGE_BITS) - 1);
    w->page_start = page * S;
    w->size = &d->ftab.nodes[node].size;
    gpufs_dirty_cursor_init(&w->cur, c, mine);
    w->more = true;
  }
  return cur;
}

__device__ bool gpufs_wb_plan(const struct gpufs_dev *d, struct gpufs_wb *w)
{
  const uint32_t S = d->cache.page_size;
  bool have = false;
  while (w->more) {
    uint32_t g0, g1;
    if (!gpufs_dirty_next_run(&w->cur, &g0, &g1)) {
      w->more = false;
      break;
    }
    /* relaxed: the exchange that took these bits acquired the writer's
     * marks, and the writer grew the file's size and the frame's wend
     * before it made them (gwrite).  wend also covers bytes a writer put
     * there under a size a racing gftruncate has lowered since. */
    const uint64_t fsize = gpufs_ld_relaxed_u64_dev(w->size);
    const uint64_t wend = gpufs_ld_relaxed_u32_dev(&d->cache.frames[w->frame].wend);
    uint64_t limit = fsize <= w->page_start ? 0 : fsize - w->page_start;
    if (limit < wend) limit = wend;
    const uint32_t sh = gpufs_dirty_shift(&d->cache);
    uint64_t a = (uint64_t)g0 << sh;
    uint64_t b = ((uint64_t)g1 << sh) < S ? (uint64_t)g1 << sh : S;
    if (b > limit) b = limit; /* bytes past the end of the file are not written */
    if (a < b) {
      w->a = (uint32_t)a;
      w->b = (uint32_t)b;
      have = true;
      break;
    }
  }
  uint32_t lanes = __ballot_sync(GPUFS_FULL_MASK, have);
  if (lanes == 0) return false;
  /* tickets in file order: a list holds frames newest first, and the
   * daemon merges only consecutive tickets of consecutive pages into one
   * pwrite (a run of whole pages becomes one sequential write) */
  const uint32_t lane = gpufs_lane();
  const uint64_t at = have ? w->page_start + w->a : 0;
  uint32_t rank = 0;
  for (uint32_t i = 0; i < 32; i++) {
    uint64_t o = __shfl_sync(GPUFS_FULL_MASK, at, i);
    if (((lanes >> i) & 1u) && (o < at || (o == at && i < lane))) rank++;
  }
  uint64_t t0 = 0;
  if (lane == 0) t0 = gpufs_q_reserve(&d->q, (uint32_t)__popc(lanes));
  t0 = __shfl_sync(GPUFS_FULL_MASK, t0, 0);
  w->last = have && rank + 1 == (uint32_t)__popc(lanes);
  if (have) {
    w->ticket = t0 + rank;
    int rc = gpufs_post_wait_free(d, w->ticket);
    if (rc == 0) {
      w->owned = true;
    } else { /* stopped: the bytes stay dirty */
      w->failed = true;
      if (!w->err) w->err = rc;
      gpufs_dirty_bits(&d->cache, w->frame, w->a, w->b);
    }
  }
  return true;
}

__device__ void gpufs_wb_post(const struct gpufs_dev *d, int32_t hfid, uint32_t ring,
                              struct gpufs_wb *w)
{
  struct gpufs_slot *s = gpufs_q_slot(&d->q, w->ticket);
  if (w->owned) {
    const struct gpufs_req req = {GPUFS_OP_WRITE, hfid, w->page_start + w->a, w->b - w->a, 0};
    gpufs_q_fill(s, &req);
    gpufs_q_post(&d->q, w->ticket);
  }
  /* as in gpufs_round_ask: the lane of the last ticket polls first */
  int rc = 0;
  if (w->owned && w->last) rc = gpufs_q_wait_done(&d->q, w->ticket);
  __syncwarp();
  if (!w->owned) return;
  if (rc == 0) rc = gpufs_q_wait_done(&d->q, w->ticket);
  int64_t res = rc;
  if (rc == 0) {
    res = gpufs_ld_relaxed_i64_sys(&s->result);
    gpufs_q_release(&d->q, w->ticket);
  } /* else stopped: a worker may still read the slot; never hand it on */
  w->owned = false;
  if (res == (int64_t)(w->b - w->a)) {
    gpufs_add_relaxed_u64_dev(&d->cache.stats[ring].writebacks, 1ull);
    return;
  }
  w->failed = true;
  if (!w->err) w->err = res < 0 ? res : -GPUFS_EIO;
  gpufs_dirty_bits(&d->cache, w->frame, w->a, w->b);
}

__device__ int64_t gpufs_wb_finish(const struct gpufs_dev *d, uint32_t *head, uint32_t node,
                                   struct gpufs_wb *w)
{
  const struct gpufs_cache *c = &d->cache;
  if (w->frame != GPUFS_NIL) {
    if (w->failed && gpufs_dirty_flag(c, w->frame)) gpufs_dlist_push(c, head, w->frame, node);
    gpufs_dirty_done(c, w->frame);
  }
  uint32_t bad = __ballot_sync(GPUFS_FULL_MASK, w->err != 0);
  if (bad == 0) return 0;
  return __shfl_sync(GPUFS_FULL_MASK, w->err, __ffs((int)bad) - 1);
}
