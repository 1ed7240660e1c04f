/*
 * read.cu - gread and gread_warp: reads through the page cache.
 *
 * A read is served in rounds of up to GPUFS_CHUNK pages.  In each round lane
 * j of the group's meta warp looks after page j:
 *
 *   A  meta:  find or create the page's frame (gpufs_cache_get); the lanes
 *             that must load take consecutive tickets in one reservation, so
 *             the daemon can serve neighbouring pages with one pread; each
 *             posts a READ and waits for the host.
 *   C  group: copy each loaded page from its slot's staging into its frame
 *             (host-mapped staging on the pull path, device staging on DMA).
 *   D  meta:  release the slots, publish loaded frames VALID (or failed),
 *             wait for pages other groups are loading.
 *   E  group: copy the pages' bytes into the caller's buffer, in order, up
 *             to the first page that failed, had no frame, or ends short.
 *   F  meta:  unpin every frame of the round.
 *
 * A group completes its own loads (A-D) before it waits for anyone else's,
 * and it never waits for a frame while it holds one, so groups cannot wait
 * on each other in a cycle.  A round in which not even its first page got a
 * frame is retried after a pause, for at most alloc_timeout_us.
 */
#include "include/gpufs.cuh"
#include "libgpufs/device/group.cuh"
#include "libgpufs/device/internal.cuh"

#define NOFRAME_STATUS INT64_MIN /* page status: no frame could be had */

/* Slots of the per-page values the meta lanes publish. */
enum { V32_FRAME = 0, V32_KIND = 1, V64_TICKET = 0, V64_STATUS = 1 };

/* Phase A for one meta lane: returns the host's result for a page it loads
 * (bytes or -errno), 0 otherwise; *owned says whether it holds a slot. */
static __device__ int64_t round_fetch(const struct gpufs_fdinfo *fi, uint64_t p0, uint32_t np,
                                      uint32_t ring, uint32_t *frame, int32_t *kind,
                                      uint64_t *ticket, bool *owned)
{
  const struct gpufs_dev *d = &gpufs_dev;
  const uint32_t j = gpufs_lane();
  const uint32_t S = d->cache.page_size;
  *frame = GPUFS_NIL;
  *kind = 0;
  *owned = false;
  if (j < np)
    *kind = gpufs_cache_get(&d->cache, gpufs_key(fi->cid, p0 + j), fi->version, ring, frame);
  uint32_t loaders = __ballot_sync(GPUFS_FULL_MASK, *kind == GPUFS_GET_LOAD);
  if (loaders == 0) return 0;
  uint64_t t0 = 0;
  if (j == 0) t0 = gpufs_q_reserve(&d->q, (uint32_t)__popc(loaders));
  t0 = __shfl_sync(GPUFS_FULL_MASK, t0, 0);
  if (*kind != GPUFS_GET_LOAD) return 0;

  *ticket = t0 + (uint64_t)__popc(loaders & gpufs_lanemask_lt());
  int64_t r = gpufs_q_wait_free(&d->q, *ticket);
  if (r) return r;
  *owned = true;
  struct gpufs_slot *s = gpufs_q_slot(&d->q, *ticket);
  gpufs_st_relaxed_u32_sys(&s->op, GPUFS_OP_READ);
  gpufs_st_relaxed_u32_sys((uint32_t *)&s->hfid, (uint32_t)fi->hfid);
  gpufs_st_relaxed_u64_sys(&s->offset, (p0 + j) * S);
  gpufs_st_relaxed_u32_sys(&s->len, S);
  gpufs_q_post(&d->q, *ticket);
  /* Only the lane with the round's last ticket polls host memory at first:
   * a worker completes a run's tickets in order, so when the last is done
   * the others usually are too.  Many lanes polling over PCIe would compete
   * with the data for the link. */
  if (j == 31u - (uint32_t)__clz(loaders)) r = gpufs_q_wait_done(&d->q, *ticket);
  __syncwarp(loaders);
  if (r == 0) r = gpufs_q_wait_done(&d->q, *ticket);
  if (r) {
    *owned = false; /* stopped: a worker may still write the slot; never hand it on */
    return r;
  }
  return gpufs_ld_relaxed_i64_sys(&s->result);
}

/* Phase D for one meta lane: the page's status, bytes valid (>= 0) or error. */
static __device__ int64_t round_settle(uint32_t frame, int32_t kind, uint64_t ticket, bool owned,
                                       int64_t res)
{
  const struct gpufs_dev *d = &gpufs_dev;
  switch (kind) {
  case GPUFS_GET_LOAD:
    if (owned) gpufs_q_release(&d->q, ticket);
    if (res >= 0) gpufs_frame_loaded(&d->cache, frame, (uint32_t)res);
    else gpufs_frame_failed(&d->cache, frame, (int32_t)res);
    return res;
  case GPUFS_GET_WAIT: {
    int w = gpufs_frame_wait(&d->cache, frame, &d->q.hdr->state, GPUFS_Q_STOPPED);
    if (w) return w;
    return gpufs_ld_relaxed_u32_dev(&d->cache.frames[frame].len);
  }
  case GPUFS_GET_HIT:
    return gpufs_ld_relaxed_u32_dev(&d->cache.frames[frame].len);
  case GPUFS_GET_NOFRAME:
    return NOFRAME_STATUS;
  default:
    return 0;
  }
}

template <typename G>
static __device__ ssize_t gread_group(G g, int fd, int64_t offset, size_t size, void *buf)
{
  const struct gpufs_dev *d = &gpufs_dev;
  if (!g.shape_ok()) return -GPUFS_EINVAL;
  struct gpufs_fdinfo fi;
  int rc = gpufs_fd_get(fd, &fi);
  rc = (int)g.bcast(rc); /* every thread must see the same answer */
  if (rc) return rc;
  if (offset < 0) return -GPUFS_EINVAL;
  if (size == 0 || (uint64_t)offset >= fi.size) return 0;
  if (buf == NULL) return -GPUFS_EFAULT;
  const uint64_t end = size > fi.size - (uint64_t)offset ? fi.size : (uint64_t)offset + size;
  const uint32_t S = d->cache.page_size;
  const uint32_t ring = g.id() % d->cache.nrings;
  /* a round takes at most a quarter of its ring, so that groups sharing a
   * small ring all make progress */
  const uint32_t ring_cap = d->cache.rings[ring].count / 4 ? d->cache.rings[ring].count / 4 : 1;
  const uint32_t chunk = ring_cap < GPUFS_CHUNK ? ring_cap : GPUFS_CHUNK;
  uint8_t *out = (uint8_t *)buf;
  uint64_t pos = (uint64_t)offset;
  uint64_t stall_since = 0;

  while (pos < end) {
    const uint64_t p0 = pos / S;
    const uint64_t span = (end - 1) / S - p0 + 1;
    const uint32_t np = span < chunk ? (uint32_t)span : chunk;
    uint32_t frame = GPUFS_NIL;
    int32_t kind = 0;
    uint64_t ticket = 0;
    bool owned = false;
    int64_t status = 0;

    if (g.meta()) {  /* A */
      status = round_fetch(&fi, p0, np, ring, &frame, &kind, &ticket, &owned);
      g.put32(V32_FRAME, frame);
      g.put32(V32_KIND, (uint32_t)kind);
      g.put64(V64_TICKET, ticket);
      g.put64(V64_STATUS, (uint64_t)status);
    }
    g.sync();
    for (uint32_t j = 0; j < np; j++) {  /* C */
      if ((int32_t)g.get32(V32_KIND, (uint32_t)kind, j) != GPUFS_GET_LOAD) continue;
      int64_t got = (int64_t)g.get64(V64_STATUS, (uint64_t)status, j);
      uint64_t tj = g.get64(V64_TICKET, ticket, j);
      uint32_t fj = g.get32(V32_FRAME, frame, j);
      if (got <= 0) continue;
      gpufs_group_copy(gpufs_frame_data(&d->cache, fj),
                       d->q.staging_in + (uint64_t)gpufs_q_index(&d->q, tj) * S, (size_t)got,
                       g.rank(), g.size());
    }
    /* each thread makes its own frame writes visible GPU-wide before the
     * meta lane's release in gpufs_frame_loaded (which pairs with readers'
     * acquire of the VALID state) */
    __threadfence();
    g.sync();
    if (g.meta()) {  /* D */
      status = round_settle(frame, kind, ticket, owned, status);
      g.put64(V64_STATUS, (uint64_t)status);
    }
    g.sync();
    uint64_t upto = pos;  /* E */
    int64_t err = 0;
    bool eof = false;
    for (uint32_t j = 0; j < np; j++) {
      int64_t st = (int64_t)g.get64(V64_STATUS, (uint64_t)status, j);
      uint32_t fj = g.get32(V32_FRAME, frame, j);
      if (st == NOFRAME_STATUS) break;
      if (st < 0) {
        err = st;
        break;
      }
      uint64_t page_start = (p0 + j) * S;
      uint64_t hi = end < page_start + S ? end : page_start + S;
      uint64_t have = page_start + (uint64_t)st;
      uint64_t cend = hi < have ? hi : have;
      if (cend > upto)
        gpufs_group_copy(out + (upto - (uint64_t)offset),
                         gpufs_frame_data(&d->cache, fj) + (upto - page_start),
                         (size_t)(cend - upto), g.rank(), g.size());
      if (cend > upto) upto = cend;
      if (have < hi) {  /* the file ends inside this page: a short read */
        eof = true;
        break;
      }
    }
    g.sync();
    if (g.meta() && frame != GPUFS_NIL) gpufs_frame_unpin(&d->cache, frame);  /* F */
    if (err) return err;
    if (eof) return (ssize_t)(upto - (uint64_t)offset);
    if (upto == pos) {  /* not even the first page had a frame */
      int64_t verdict = 0;
      if (g.rank() == 0) {
        uint64_t now = gpufs_now_ns();
        if (stall_since == 0) stall_since = now;
        if (gpufs_q_stopped(&d->q)) verdict = -GPUFS_ESHUTDOWN;
        else if (now - stall_since > (uint64_t)d->alloc_timeout_us * 1000) verdict = -GPUFS_ENOMEM;
        else __nanosleep(2000);
      }
      verdict = g.bcast(verdict);
      if (verdict) return verdict;
      continue;
    }
    stall_since = 0;
    pos = upto;
  }
  return (ssize_t)(pos - (uint64_t)offset);
}

__device__ ssize_t gread(int fd, int64_t offset, size_t size, void *buf)
{
  __shared__ struct gpufs_block_scratch sh;
  return gread_group(gpufs_block_group{&sh}, fd, offset, size, buf);
}

__device__ ssize_t gread_warp(int fd, int64_t offset, size_t size, void *buf)
{
  return gread_group(gpufs_warp_group{}, fd, offset, size, buf);
}
