/*
 * write.cu - gwrite, gfsync, gftruncate: writes through the page cache.
 *
 * A write is served in rounds, as a read (round.cuh), each round for up to
 * GPUFS_CHUNK consecutive pages:
 *
 *   A-D  find or load each page, pinned; a page the write covers whole is
 *        not read from the host: C fills it with the caller's bytes before
 *        D publishes it (never as zeros another group could see or extend)
 *   E    group: copy the caller's bytes into the frames, up to the first
 *        page that failed or had no frame
 *   F    the file's size grows to the end of what was copied; then the
 *        meta lanes mark the copied bytes dirty (dirty.h) and push newly
 *        dirty frames on the group's dirty list of the file; unpin
 *
 * The size grows before the bytes are marked, so that a flusher that sees
 * the marks also sees a size that covers them (it writes nothing past the
 * size).  A page written in part is read first, so the bytes around the
 * written ones are the file's when the grains are written back.
 */
#include "libgpufs/device/writeback.cuh"
#include "libgpufs/device/debug.cuh"

template <typename G>
static __device__ ssize_t gwrite_group(G g, int fd, int64_t offset, size_t size, const void *buf)
{
  if (!g.shape_ok()) return -GPUFS_EINVAL;
  struct gpufs_fdinfo fi;
  int rc = gpufs_fd_get_group(g, fd, &fi);
  if (rc) return rc;
  const struct gpufs_dev *d = fi.d;
  if (!gpufs_fd_writable(&fi)) return -GPUFS_EBADF;
  if (offset < 0) return -GPUFS_EINVAL;
  if (size == 0) return 0;
  if (buf == NULL) return -GPUFS_EFAULT;
  const uint32_t S = d->cache.page_size;
  if (size > (uint64_t)INT64_MAX - (uint64_t)offset ||
      ((uint64_t)offset + size - 1) / S >= (1ull << GPUFS_PAGE_BITS))
    return -GPUFS_EFBIG;
  const uint64_t end = (uint64_t)offset + size;
  const uint32_t ring = g.id() % d->cache.nrings;
  const uint32_t chunk = gpufs_round_max(d, ring);
  struct gpufs_gnode *nd = gpufs_node_of(d, fi.fd); /* our reference keeps it */
  uint32_t *head = &nd->dheads[g.id() % GPUFS_DLISTS];
  const uint8_t *in = (const uint8_t *)buf;
  uint64_t pos = (uint64_t)offset;
  uint64_t stall_since = 0;

  while (pos < end) {
    const uint64_t p0 = pos / S;
    const uint64_t span = (end - 1) / S - p0 + 1;
    const uint32_t np = span < chunk ? (uint32_t)span : chunk;
    /* a page the write covers whole is not read from the host; any other
     * is, even past the end of the file as this GPU knows it: another group
     * may have written it and had it written back and evicted since */
    uint32_t nofetch = 0;
    for (uint32_t j = 0; j < np; j++) {
      uint64_t ps = (p0 + j) * S;
      if (ps >= pos && ps + S <= end) nofetch |= 1u << j;
    }
    struct gpufs_round_ctl ctl = {};
    ctl.fi = &fi;
    ctl.p0 = p0;
    ctl.np = np;
    ctl.ring = ring;
    ctl.nofetch = nofetch;
    ctl.fill = in;
    ctl.fill_off = (uint64_t)offset;
    struct gpufs_round r;
    gpufs_round_load(g, &ctl, &r);

    uint64_t upto = pos; /* E */
    int64_t err = 0;
    uint32_t ndone = 0, filled = 0; /* the prefix written here; pages C filled */
    bool stop = false;
    for (uint32_t j = 0; j < np; j++) {
      int64_t st = gpufs_round_status(g, &r, j);
      uint32_t fj = gpufs_round_frame(g, &r, j);
      const bool mine =
          (int32_t)g.get32(GPUFS_V32_KIND, (uint32_t)r.src, j) == GPUFS_SRC_FILL && st >= 0;
      if (mine) filled |= 1u << j;
      if (stop) continue;
      const bool noframe = gpufs_round_noframe(g, &r, j);
      if (noframe || st < 0) {
        if (!noframe) err = st;
        stop = true;
        continue;
      }
      uint64_t ps = (p0 + j) * S;
      uint64_t hi = end < ps + S ? end : ps + S;
      if (!mine) /* C already copied a page it loaded for us whole */
        gpufs_group_copy(gpufs_frame_data(&d->cache, fj) + (upto - ps),
                         in + (upto - (uint64_t)offset), (size_t)(hi - upto), g.rank(), g.size());
      upto = hi;
      ndone++;
    }
    /* F: every page that holds new bytes is marked, also one C filled past
     * a page that failed (it is published with them), though the count
     * returned is the prefix.  The size first (see the top), then the
     * marks.  Each thread's frame stores are made visible GPU-wide before
     * the meta lanes' release in gpufs_dirty_bits, which pairs with the
     * flusher's exchange. */
    uint64_t written_end = upto;
    for (uint32_t j = ndone; j < np; j++)
      if ((filled >> j) & 1u) written_end = (p0 + j + 1) * S; /* whole pages, inside the write */
    if (g.rank() == 0 && written_end > pos) gpufs_max_relaxed_u64_dev(&nd->size, written_end);
    __threadfence();
    g.sync();
    const uint32_t lane = gpufs_lane();
    if (g.meta() && (lane < ndone || ((filled >> lane) & 1u))) {
      uint64_t ps = (p0 + lane) * S;
      uint64_t lo = pos > ps ? pos - ps : 0;
      uint64_t hi = end < ps + S ? end - ps : S;
      struct gpufs_frame *fr = &d->cache.frames[r.frame];
      /* relaxed: published by the release in gpufs_dirty_bits */
      gpufs_max_relaxed_u32_dev(&fr->wend, (uint32_t)hi);
      gpufs_dirty_bits(&d->cache, r.frame, (uint32_t)lo, (uint32_t)hi);
      if (gpufs_dirty_flag(&d->cache, r.frame)) gpufs_dlist_push(&d->cache, head, r.frame, d->ftab.files[fi.fd].node);
    }
    gpufs_round_unpin(g, d, &r, false, ring);
    if (err) return upto > (uint64_t)offset ? (ssize_t)(upto - (uint64_t)offset) : err;
    if (upto == pos) {
      int64_t verdict = gpufs_stall(g, d, ring, &stall_since);
      if (verdict) return pos > (uint64_t)offset ? (ssize_t)(pos - (uint64_t)offset) : verdict;
      continue;
    }
    stall_since = 0;
    pos = upto;
  }
  return (ssize_t)size;
}

__device__ ssize_t gwrite(int fd, int64_t offset, size_t size, const void *buf)
{
  GPUFS_DEBUG_UNIFORM(gpufs_block_group{}, "gwrite", GPUFS_DEBUG_NONUNIFORM, GPUFS_DBG_INT(fd),
                      GPUFS_DBG_INT(offset), GPUFS_DBG_INT(size), GPUFS_DBG_PTR(buf));
  return gwrite_group(gpufs_block_group{}, fd, offset, size, buf);
}

__device__ ssize_t gwrite_warp(int fd, int64_t offset, size_t size, const void *buf)
{
  GPUFS_DEBUG_UNIFORM(gpufs_warp_group{}, "gwrite_warp", GPUFS_DEBUG_NONUNIFORM, GPUFS_DBG_INT(fd),
                      GPUFS_DBG_INT(offset), GPUFS_DBG_INT(size), GPUFS_DBG_PTR(buf));
  return gwrite_group(gpufs_warp_group{}, fd, offset, size, buf);
}

/* Write back every dirty page of fd's file, whoever dirtied it, through fd
 * if it is writable, else through another writable descriptor of the file;
 * then wait for the file's write-backs others have in flight.  0 or the
 * first error. */
template <typename G>
static __device__ int64_t flush_all(G g, const struct gpufs_fdinfo *fi)
{
  const uint32_t ring = g.id() % fi->d->cache.nrings;
  int64_t err = GPUFS_WB_NOT_HELD;
  if (gpufs_fd_writable(fi)) err = gpufs_wb_held(g, fi->d, (int)fi->fd, ring);
  /* read-only, or closing: a writable descriptor of the file does it */
  if (err == GPUFS_WB_NOT_HELD) err = gpufs_wb_cid(g, fi->d, fi->cid, ring);
  if (err == GPUFS_WB_NOT_HELD) err = 0; /* none: nothing of the file is dirty */
  g.sync();
  if (g.rank() == 0) gpufs_node_wait_flushes(fi->d, fi->fd);
  return err;
}

/* One host call by the group's first thread, its result to every thread.
 * Every thread of the group calls it; synchronizes the group. */
template <typename G>
static __device__ int64_t group_host_call(G g, const struct gpufs_dev *d, const struct gpufs_call *c)
{
  int64_t r = 0;
  uint64_t out[4] = {0, 0, 0, 0};
  if (g.rank() == 0) r = gpufs_host_call(d, c, out);
  return g.bcast(r);
}

template <typename G>
static __device__ int gfsync_group(G g, int fd)
{
  if (!g.shape_ok()) return -GPUFS_EINVAL;
  struct gpufs_fdinfo fi;
  int rc = gpufs_fd_get_group(g, fd, &fi);
  if (rc) return rc;
  int64_t err = flush_all(g, &fi);
  struct gpufs_call c = {GPUFS_OP_FSYNC, fi.hfid, 0, 0, 0, NULL, 0};
  int64_t r = group_host_call(g, fi.d, &c);
  return (int)(err ? err : r);
}

__device__ int gfsync(int fd)
{
  GPUFS_DEBUG_UNIFORM(gpufs_block_group{}, "gfsync", GPUFS_DEBUG_NONUNIFORM, GPUFS_DBG_INT(fd));
  return gfsync_group(gpufs_block_group{}, fd);
}

__device__ int gfsync_warp(int fd)
{
  GPUFS_DEBUG_UNIFORM(gpufs_warp_group{}, "gfsync_warp", GPUFS_DEBUG_NONUNIFORM, GPUFS_DBG_INT(fd));
  return gfsync_group(gpufs_warp_group{}, fd);
}

/* Truncation renews the file's version: every cached page of the old one is
 * stale (shrunk bytes must read as zeros if the file grows again), and the
 * dirty ones, dirtied through any name of the file, were written back
 * first.  The group holds fd throughout, so that its host descriptor stays
 * open for the ftruncate. */
template <typename G>
static __device__ int gftruncate_group(G g, int fd, int64_t length)
{
  if (!g.shape_ok()) return -GPUFS_EINVAL;
  struct gpufs_fdinfo fi;
  int rc = gpufs_fd_get_group(g, fd, &fi);
  if (rc) return rc;
  if (!gpufs_fd_writable(&fi) || length < 0) return -GPUFS_EINVAL;
  if ((uint64_t)length / fi.d->cache.page_size >= (1ull << GPUFS_PAGE_BITS))
    return -GPUFS_EFBIG;
  const uint32_t ring = g.id() % fi.d->cache.nrings;
  int64_t r = 0;
  if (g.rank() == 0) r = gpufs_fd_hold(fi.d, (int)fi.fd);
  r = g.bcast(r);
  if (r) return (int)r; /* its last gclose is under way */
  r = gpufs_wb_file(g, fi.d, fi.fd, ring);
  g.sync();
  if (g.rank() == 0) {
    if (r == 0) r = gpufs_node_truncate(fi.d, fi.fd, (uint64_t)length);
    gpufs_fd_unhold(fi.d, (int)fi.fd);
  }
  return (int)g.bcast(r);
}

__device__ int gftruncate(int fd, int64_t length)
{
  GPUFS_DEBUG_UNIFORM(gpufs_block_group{}, "gftruncate", GPUFS_DEBUG_NONUNIFORM, GPUFS_DBG_INT(fd),
                      GPUFS_DBG_INT(length));
  return gftruncate_group(gpufs_block_group{}, fd, length);
}

__device__ int gftruncate_warp(int fd, int64_t length)
{
  GPUFS_DEBUG_UNIFORM(gpufs_warp_group{}, "gftruncate_warp", GPUFS_DEBUG_NONUNIFORM,
                      GPUFS_DBG_INT(fd), GPUFS_DBG_INT(length));
  return gftruncate_group(gpufs_warp_group{}, fd, length);
}
