/*
 * writeback.cuh - a group writes dirty pages back to the host file.
 *
 * A group takes one of a file's dirty lists whole (dirty.h) and writes its
 * frames back 32 at a time, one frame per meta lane, in sub-rounds:
 *
 *   meta:  each lane takes its frame's next dirty run (clipped to the file's
 *          size, read after the run's bits were taken: the writer grew the
 *          size before it set them) and a ticket for it; the lanes with a run take consecutive
 *          tickets, so runs of whole consecutive pages become one pwrite
 *   group: copy each run's bytes from its frame into its slot's host staging
 *   meta:  post WRITE, wait, release; a run that failed is marked dirty again
 *   ... until no lane has a run left; then each lane unpins its frame and
 *   pushes it back on the list if some run failed.
 *
 * Who flushes: gfsync and the last gclose (every list of the file), gmsync
 * MS_SYNC, gpufs_sync's kernel, and a group whose allocation found only
 * dirty frames (gpufs_stall: it writes back the file of a dirty frame its
 * ring passed over, then tries again).  A flusher of an open file holds it
 * (gpufs_fd_hold), so that its last gclose waits for the flush to end.
 */
#ifndef GPUFS_DEVICE_WRITEBACK_CUH
#define GPUFS_DEVICE_WRITEBACK_CUH

#include "libgpufs/device/round.cuh"

/* What one meta lane holds about its frame during a write-back. */
struct gpufs_wb {
  uint32_t frame;      /* GPUFS_NIL: no frame */
  uint64_t page_start; /* file offset of the page */
  uint64_t *size;      /* the file's size (gpufs_gnode.size) */
  struct gpufs_dirty_cursor cur;
  bool more;           /* the cursor may hold more runs */
  bool failed;         /* some run of the frame failed: keep it dirty */
  uint32_t a, b;       /* the run of this sub-round, bytes [a, b) of the page */
  uint64_t ticket;
  bool owned;
  bool last;           /* its ticket is the sub-round's last */
  int64_t err;
};

/* In this file and below, `fd` is an entry of instance d's file table
 * (internal.cuh), not a kernel's descriptor. */

/* Meta lanes (the whole meta warp calls): take up to 32 frames from the
 * list at *next (a list the group owns) of node `node`; returns the rest of
 * the list.  Lane j gets the j-th frame. */
__device__ uint32_t gpufs_wb_gather(const struct gpufs_dev *d, uint32_t next, uint32_t node,
                                    struct gpufs_wb *w);

/* Meta lanes: each finds its frame's next run and takes a ticket for it.
 * True on every lane when some lane has a run. */
__device__ bool gpufs_wb_plan(const struct gpufs_dev *d, struct gpufs_wb *w);

/* Meta lanes: post the run's WRITE (its bytes are in staging), wait, and
 * settle it. */
__device__ void gpufs_wb_post(const struct gpufs_dev *d, int32_t hfid, uint32_t ring,
                              struct gpufs_wb *w);

/* Meta lanes: unpin the frame; push it back on *head (of node `node`) if a
 * run failed.  Returns the warp's first error, on every lane. */
__device__ int64_t gpufs_wb_finish(const struct gpufs_dev *d, uint32_t *head, uint32_t node,
                                   struct gpufs_wb *w);

/* gnode.cu.  Add ns since t0 to one of gopen's time counters. */
__device__ void gpufs_ftab_time(uint64_t *counter, uint64_t t0);

/* Hold entry fd for a write-back: 0 if it is OPEN and writable (its last
 * gclose then waits for gpufs_fd_unhold), else -EBADF.  Any thread. */
__device__ int gpufs_fd_hold(const struct gpufs_dev *d, int fd);
__device__ void gpufs_fd_unhold(const struct gpufs_dev *d, int fd);

/* Hold some open writable entry of file cid: returns it, or -1 (at once,
 * without the table lock, when no entry of cid is open for writing).  One
 * thread. */
__device__ int gpufs_fd_hold_writer(const struct gpufs_dev *d, uint32_t cid);

/* Wait until no one but the caller's own `mine` holds (0 or 1) hold fd.
 * One thread. */
__device__ void gpufs_fd_wait_unheld(const struct gpufs_dev *d, int fd, uint32_t mine);

/* Wait until no write-back of the node of entry fd is in progress (the
 * caller's own has ended).  One thread, holding fd or its last closer. */
__device__ void gpufs_node_wait_flushes(const struct gpufs_dev *d, uint32_t fd);

/* Drop every dirty byte of the file of entry fd (never written back): the
 * file is about to be cut to 0 (O_TRUNC).  One thread, holding fd. */
__device__ void gpufs_node_drop_dirty(const struct gpufs_dev *d, uint32_t fd);

/* Cut the file of entry fd (held, writable) to length on the host, after
 * the write-backs in progress: then every descriptor of the file has the
 * new size and version.  0 or the host's -errno.  One thread. */
__device__ int64_t gpufs_node_truncate(const struct gpufs_dev *d, uint32_t fd, uint64_t length);

/* The file's dirty list k, for writers through entry fd. */
__device__ __forceinline__ uint32_t *gpufs_dlist(const struct gpufs_dev *d, uint32_t fd, uint32_t k)
{
  return &gpufs_node_of(d, fd)->dheads[k % GPUFS_DLISTS];
}

/* Mark bytes [lo, hi) of frame f (pinned by the caller, its bytes stored
 * and made visible GPU-wide before) dirty on list k of the file of entry
 * fd, as a mapping's gmsync or gmunmap does.  One thread. */
__device__ __forceinline__ void gpufs_mark_dirty(const struct gpufs_dev *d, uint32_t fd, uint32_t f,
                                                 uint32_t lo, uint32_t hi, uint32_t k)
{
  gpufs_dirty_bits(&d->cache, f, lo, hi);
  if (gpufs_dirty_flag(&d->cache, f))
    gpufs_dlist_push(&d->cache, gpufs_dlist(d, fd, k), f, d->ftab.files[fd].node);
}

/* Write back the frames on list *head of node `node` (host file hfid).
 * Every thread of the group calls it with equal arguments; synchronizes
 * the group.  0 or the first error (the frames it hit stay dirty, back on
 * the list). */
template <typename G>
__device__ int64_t gpufs_wb_list(G g, const struct gpufs_dev *d, uint32_t node, int32_t hfid,
                                 uint32_t *head, uint32_t ring)
{
  const uint32_t S = d->cache.page_size;
  int64_t err = 0;
  uint32_t next = GPUFS_NIL;
  if (g.rank() == 0) next = gpufs_dlist_take(head);
  next = (uint32_t)g.bcast(next);
  while (next != GPUFS_NIL) {
    struct gpufs_wb w = {};
    w.frame = GPUFS_NIL;
    if (g.meta()) next = gpufs_wb_gather(d, next, node, &w);
    next = (uint32_t)g.bcast(next);
    for (;;) {
      bool any = false;
      if (g.meta()) {
        any = gpufs_wb_plan(d, &w);
        g.put32(GPUFS_V32_FRAME, w.frame);
        g.put32(GPUFS_V32_KIND, w.a);
        g.put64(GPUFS_V64_TICKET, w.ticket);
        g.put64(GPUFS_V64_STATUS, w.owned ? (uint64_t)(w.b - w.a) : 0);
      }
      if (!g.bcast(any)) break; /* includes a sync: the put values are visible */
      for (uint32_t j = 0; j < GPUFS_CHUNK; j++) {
        uint64_t len = g.get64(GPUFS_V64_STATUS, w.owned ? (uint64_t)(w.b - w.a) : 0, j);
        uint32_t f = g.get32(GPUFS_V32_FRAME, w.frame, j);
        uint32_t a = g.get32(GPUFS_V32_KIND, w.a, j);
        uint64_t t = g.get64(GPUFS_V64_TICKET, w.ticket, j);
        if (len == 0) continue;
        gpufs_group_copy(d->q.staging + (uint64_t)gpufs_q_index(&d->q, t) * S,
                         gpufs_frame_data(&d->cache, f) + a, (size_t)len, g.rank(), g.size());
      }
      /* each thread's stores to host staging are visible system-wide before
       * the meta lane's release of req_seq in gpufs_q_post */
      __threadfence_system();
      g.sync();
      if (g.meta()) gpufs_wb_post(d, hfid, ring, &w);
    }
    int64_t e = 0;
    if (g.meta()) e = gpufs_wb_finish(d, head, node, &w);
    e = g.bcast(e);
    if (e && !err) err = e;
  }
  return err;
}

/* Write back every dirty list of the file of entry fd (its node's), through
 * fd's host descriptor, starting at the caller's own list; counted in the
 * node's flushing while it runs.  The caller holds fd (or is its last
 * closer).  Every thread of the group calls it with equal arguments;
 * synchronizes the group.  0 or the first error. */
template <typename G>
__device__ int64_t gpufs_wb_file(G g, const struct gpufs_dev *d, uint32_t fd, uint32_t ring)
{
  const int32_t hfid = d->ftab.files[fd].hfid;
  const uint32_t node = d->ftab.files[fd].node;
  struct gpufs_gnode *nd = &d->ftab.nodes[node];
  const uint32_t k0 = g.id();
  /* acq_rel: a waiter (gpufs_node_wait_flushes) that takes one of the
   * lists after us sees the count (the take's release carries it) */
  if (g.rank() == 0) gpufs_add_acqrel_u32_dev(&nd->flushing, 1u);
  int64_t err = 0;
  for (uint32_t k = 0; k < GPUFS_DLISTS; k += 32) {
    /* the meta lanes look at 32 heads at once; only lists found non-empty
     * are taken (most are empty: a list is mostly one writer's) */
    uint32_t busy = 0;
    if (g.meta()) {
      uint32_t *h = &nd->dheads[(k0 + k + gpufs_lane()) % GPUFS_DLISTS];
      /* acquire: pairs with the release of the last push or take of the
       * head: a list found empty because another flusher took it shows
       * that flusher's count in nd->flushing (gpufs_node_wait_flushes) */
      busy = __ballot_sync(GPUFS_FULL_MASK, gpufs_ld_acquire_u32_dev(h) != GPUFS_NIL);
    }
    busy = (uint32_t)g.bcast((int64_t)busy);
    for (; busy != 0; busy &= busy - 1) {
      const uint32_t j = (uint32_t)__ffs((int)busy) - 1;
      int64_t e = gpufs_wb_list(g, d, node, hfid, &nd->dheads[(k0 + k + j) % GPUFS_DLISTS], ring);
      if (e && !err) err = e;
    }
  }
  /* release: our WRITEs have reached the file; pairs with the acquire of
   * gpufs_node_wait_flushes */
  if (g.rank() == 0) gpufs_sub_release_u32_dev(&nd->flushing, 1u);
  return err;
}

/* gpufs_wb_file for an entry the caller does not hold: holds it first.
 * Every thread of the group calls it; synchronizes the group.  0, a
 * write-back error, or GPUFS_WB_NOT_HELD when fd is not open for writing
 * (nothing to do; never confused with a write-back's -EBADF). */
#define GPUFS_WB_NOT_HELD 1
template <typename G>
__device__ int64_t gpufs_wb_held(G g, const struct gpufs_dev *d, int fd, uint32_t ring)
{
  int64_t rc = 0;
  if (g.rank() == 0) rc = gpufs_fd_hold(d, fd) ? GPUFS_WB_NOT_HELD : 0;
  rc = g.bcast(rc);
  if (rc) return rc;
  rc = gpufs_wb_file(g, d, (uint32_t)fd, ring);
  g.sync();
  if (g.rank() == 0) gpufs_fd_unhold(d, fd);
  return rc;
}

/* Write back file cid through any entry open for writing on it (held
 * meanwhile).  Every thread of the group calls it; synchronizes the group.
 * 0, a write-back error, or GPUFS_WB_NOT_HELD when no entry of cid is open
 * for writing (then nothing of it can be dirty). */
template <typename G>
__device__ int64_t gpufs_wb_cid(G g, const struct gpufs_dev *d, uint32_t cid, uint32_t ring)
{
  int64_t fd = -1;
  if (g.rank() == 0) fd = gpufs_fd_hold_writer(d, cid);
  fd = g.bcast(fd);
  if (fd < 0) return GPUFS_WB_NOT_HELD;
  int64_t rc = gpufs_wb_file(g, d, (uint32_t)fd, ring);
  g.sync();
  if (g.rank() == 0) gpufs_fd_unhold(d, (int)fd);
  return rc;
}

/* What a close's first step found (or -EBADF, a negative errno). */
enum gpufs_close_step {
  GPUFS_CLOSE_SHARED = 0,     /* not the last reference: done */
  GPUFS_CLOSE_LAST = 1,       /* the last: the entry is CLOSING; finish the close */
  GPUFS_CLOSE_LAST_WRITER = 2 /* the last of a writable entry: write back, then finish */
};

/* files.cu.  A close's first step, by one thread: drop a reference of
 * entry fd of instance d.  GPUFS_CLOSE_SHARED, GPUFS_CLOSE_LAST (the entry
 * is CLOSING and the caller must finish), or -EBADF. */
__device__ int gpufs_close_drop(const struct gpufs_dev *d, uint32_t fd);

/* The last close, after the write-back, by one thread: err < 0 puts the
 * reference back (the entry is OPEN again); else the host descriptor is
 * closed and the entry freed.  err, or the host close's result. */
__device__ int gpufs_close_finish(const struct gpufs_dev *d, uint32_t fd, int64_t err);

/* Drop one reference of entry fd (gclose, or the gmunmap of a writable
 * mapping): the last one of a writable entry waits for its holders, writes
 * back the file's dirty pages, then closes the host descriptor.  Every
 * thread of the group calls it with equal arguments; synchronizes the
 * group.  0, -EBADF, or the last close's error. */
template <typename G>
__device__ int gpufs_close_group(G g, const struct gpufs_dev *d, uint32_t fd)
{
  int64_t r = 0;
  g.sync();
  if (g.rank() == 0) {
    r = gpufs_close_drop(d, fd);
    /* a writer's holders: wait for them, then nobody else uses its hfid */
    if (r == GPUFS_CLOSE_LAST && (d->ftab.files[fd].flags & 3) != 0) {
      gpufs_fd_wait_unheld(d, (int)fd, 0);
      r = GPUFS_CLOSE_LAST_WRITER;
    }
  }
  r = g.bcast(r);
  if (r < 0 || r == GPUFS_CLOSE_SHARED) return (int)r;
  int64_t err = 0;
  if (r == GPUFS_CLOSE_LAST_WRITER) err = gpufs_wb_file(g, d, fd, g.id() % d->cache.nrings);
  g.sync();
  int64_t res = 0;
  if (g.rank() == 0) res = gpufs_close_finish(d, fd, err);
  return (int)g.bcast(res);
}

/* A round got no frame.  If the group's ring passed over a dirty frame,
 * write back that frame's file, so that the next try finds clean frames;
 * else pause (gpufs_round_stalled).  Every thread of the group calls it;
 * synchronizes the group.  0: try again; < 0: give up with it. */
template <typename G>
__device__ int64_t gpufs_stall(G g, const struct gpufs_dev *d, uint32_t ring, uint64_t *since)
{
  const struct gpufs_cache *c = &d->cache;
  int64_t cid = -1;
  if (g.rank() == 0) {
    struct gpufs_ring *rg = &c->rings[ring];
    uint32_t f = gpufs_ld_relaxed_u32_dev(&rg->dirty_hint);
    /* relaxed: only a hint; gpufs_fd_hold_writer checks the file */
    if (f < c->nframes && (gpufs_ld_relaxed_u32_dev(&c->frames[f].state) & GPUFS_PG_DIRTY)) {
      cid = (int64_t)(gpufs_ld_relaxed_u64_dev(&c->frames[f].key) >> GPUFS_PAGE_BITS);
      gpufs_add_relaxed_u64_dev(&c->stats[ring].cleanings, 1ull);
    }
  }
  cid = g.bcast(cid);
  if (cid > 0) {
    int64_t rc = gpufs_wb_cid(g, d, (uint32_t)cid, ring);
    if (rc < 0) return rc; /* it cannot be written back: say why */
    if (rc == 0) *since = 0; /* dirty frames are being written back: not stuck */
  }
  return gpufs_round_stalled(g, d, since);
}

#endif /* GPUFS_DEVICE_WRITEBACK_CUH */
