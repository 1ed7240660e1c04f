/*
 * gnode.cu - what every name of one host file shares on an instance: its
 * node (size, version, dirty lists); the table lock; who may write the
 * file back (holds); and how its dirty bytes are dropped when it is cut.
 *
 * Entries (files.cu) are descriptors, one per open (path, flags).  When an
 * entry's host open returns, its opener links it, under the table lock, to
 * the node of the file's cid (the host names the inode, so hard links and
 * every spelling of a path meet there): the node an entry already open on
 * the cid has, or a free node that takes the size and version the host
 * gave.  An open that finds the file open so shares its view (size, cached
 * pages); the host's changes by others are seen at an open that finds no
 * name of the file open (close-to-open).  The last entry to leave frees the
 * node; every node has at least one entry, so a free node is always there
 * for an opener.
 *
 *   entry.flushing  holds: write-backs that use the entry's host descriptor
 *                   (its last gclose waits for them before it closes it)
 *   node.flushing   write-backs of the node's lists in progress, through any
 *                   entry (gpufs_wb_file counts itself): gfsync, gftruncate
 *                   and gpufs_sync wait for it to reach 0, so that nothing
 *                   taken before them reaches the file after them
 *
 * No one waits for node.flushing while a write-back of its own is counted
 * in it, and a last closer waits for entry.flushing before it starts its
 * write-back: the waits form no cycle.
 */
#include "libgpufs/device/writeback.cuh"

/* Add ns since t0 to one of gopen's time counters. */
__device__ void gpufs_ftab_time(uint64_t *counter, uint64_t t0)
{
  gpufs_add_relaxed_u64_dev(counter, gpufs_now_ns() - t0);
}

__device__ void gpufs_ftab_lock(const struct gpufs_ftab *t)
{
  const uint64_t t0 = gpufs_now_ns();
  gpufs_spin_lock(t->lock, GPUFS_PAUSE_MAX_NS);
  gpufs_ftab_time(&t->stats->lock_ns, t0);
}

__device__ bool gpufs_ftab_trylock(const struct gpufs_ftab *t) { return gpufs_spin_trylock(t->lock); }

__device__ void gpufs_ftab_unlock(const struct gpufs_ftab *t) { gpufs_spin_unlock(t->lock); }

__device__ void gpufs_node_link_locked(const struct gpufs_ftab *t, struct gpufs_gfile *e, uint32_t cid,
                                       uint64_t size, uint32_t version)
{
  uint32_t n = GPUFS_NIL, free_node = GPUFS_NIL;
  for (uint32_t i = 0; i < t->nfiles; i++) {
    /* relaxed: cid changes only under the lock, which we hold */
    uint32_t c = gpufs_ld_relaxed_u32_dev(&t->nodes[i].cid);
    if (c == cid) {
      n = i;
      break;
    }
    if (c == 0 && free_node == GPUFS_NIL) free_node = i;
  }
  struct gpufs_gnode *nd;
  if (n == GPUFS_NIL) {
    n = free_node;
    nd = &t->nodes[n];
    /* relaxed: published by the lock's release and the entry's OPEN */
    gpufs_st_relaxed_u32_dev(&nd->cid, cid);
    gpufs_st_relaxed_u32_dev(&nd->links, 0u);
    gpufs_st_relaxed_u32_dev(&nd->version, version);
    gpufs_st_relaxed_u32_dev(&nd->flushing, 0u);
    gpufs_st_relaxed_u64_dev(&nd->size, size);
    for (uint32_t k = 0; k < GPUFS_DLISTS; k++) gpufs_st_relaxed_u32_dev(&nd->dheads[k], GPUFS_NIL);
  }
  nd = &t->nodes[n];
  gpufs_st_relaxed_u32_dev(&nd->links, gpufs_ld_relaxed_u32_dev(&nd->links) + 1u);
  e->node = n;
}

__device__ void gpufs_node_unlink_locked(const struct gpufs_ftab *t, struct gpufs_gfile *e)
{
  const uint32_t n = e->node;
  e->node = GPUFS_NIL;
  if (n >= t->nfiles) return;
  struct gpufs_gnode *nd = &t->nodes[n];
  /* relaxed: links and cid change only under the lock */
  uint32_t left = gpufs_ld_relaxed_u32_dev(&nd->links) - 1u;
  gpufs_st_relaxed_u32_dev(&nd->links, left);
  if (left == 0) gpufs_st_relaxed_u32_dev(&nd->cid, 0u);
}

__device__ int gpufs_fd_hold(const struct gpufs_dev *d, int fd)
{
  const struct gpufs_ftab *t = &d->ftab;
  if (fd < 0 || (uint32_t)fd >= t->nfiles) return -GPUFS_EBADF;
  struct gpufs_gfile *e = &t->files[fd];
  gpufs_ftab_lock(t);
  /* acquire: pairs with the opener's release of OPEN, which is outside the
   * lock: hfid and node, which the holder reads next, are visible */
  bool ok = gpufs_ld_acquire_u32_dev(&e->state) == GPUFS_GF_OPEN &&
            (gpufs_ld_relaxed_u32_dev(&e->flags) & 3) != 0;
  /* relaxed: the table lock orders it against the closer's CLOSING */
  if (ok) gpufs_add_relaxed_u32_dev(&e->flushing, 1u);
  gpufs_ftab_unlock(t);
  return ok ? 0 : -GPUFS_EBADF;
}

/* Entry i is open for writing on file cid.  Any thread. */
static __device__ bool entry_writes(struct gpufs_gfile *e, uint32_t cid)
{
  /* acquire: cid is published with OPEN */
  return gpufs_ld_acquire_u32_dev(&e->state) == GPUFS_GF_OPEN && e->cid == cid &&
         (gpufs_ld_relaxed_u32_dev(&e->flags) & 3) != 0;
}

__device__ int gpufs_fd_hold_writer(const struct gpufs_dev *d, uint32_t cid)
{
  const struct gpufs_ftab *t = &d->ftab;
  int fd = -1;
  /* With no entry open for writing, or none of this file, leave without
   * the lock (a writer opened while we look is unordered with this call:
   * as if it came after).  relaxed: the count only says whether to look. */
  if (gpufs_ld_relaxed_u32_dev(t->writers) == 0) return -1;
  bool maybe = false;
  for (uint32_t i = 0; i < t->nfiles && !maybe; i++) maybe = entry_writes(&t->files[i], cid);
  if (!maybe) return -1;
  gpufs_ftab_lock(t);
  for (uint32_t i = 0; i < t->nfiles && fd < 0; i++) {
    if (entry_writes(&t->files[i], cid)) {
      /* relaxed: the table lock orders it against the closer's CLOSING */
      gpufs_add_relaxed_u32_dev(&t->files[i].flushing, 1u);
      fd = (int)i;
    }
  }
  gpufs_ftab_unlock(t);
  return fd;
}

__device__ void gpufs_fd_unhold(const struct gpufs_dev *d, int fd)
{
  /* release: this holder's write-back (its slot and frame accesses) is
   * done; pairs with the acquire in gpufs_fd_wait_unheld */
  gpufs_sub_release_u32_dev(&d->ftab.files[fd].flushing, 1u);
}

/* Wait until *w is at most `mine`; then acquire what its decrementers did. */
static __device__ void wait_count(uint32_t *w, uint32_t mine)
{
  uint32_t ns = 64;
  while (gpufs_ld_relaxed_u32_dev(w) > mine) gpufs_pause(&ns, GPUFS_PAUSE_MAX_NS);
  /* acquire: pairs with the release of gpufs_fd_unhold or gpufs_wb_file's
   * end */
  (void)gpufs_ld_acquire_u32_dev(w);
}

__device__ void gpufs_fd_wait_unheld(const struct gpufs_dev *d, int fd, uint32_t mine)
{
  wait_count(&d->ftab.files[fd].flushing, mine);
}

__device__ void gpufs_node_wait_flushes(const struct gpufs_dev *d, uint32_t fd)
{
  wait_count(&gpufs_node_of(d, fd)->flushing, 0u);
}

__device__ void gpufs_node_drop_dirty(const struct gpufs_dev *d, uint32_t fd)
{
  const struct gpufs_cache *c = &d->cache;
  struct gpufs_gnode *nd = gpufs_node_of(d, fd);
  for (uint32_t k = 0; k < GPUFS_DLISTS; k++) {
    uint32_t f = gpufs_dlist_take(&nd->dheads[k]);
    while (f != GPUFS_NIL) {
      /* the link first: once DIRTY is clear a writer may push f again (the
       * frames after it keep DIRTY, and their links, until we take them) */
      const uint32_t next = gpufs_dlist_next(c, f);
      gpufs_dirty_take(c, f);
      gpufs_dirty_clear(c, f);
      gpufs_dirty_done(c, f);
      f = next;
    }
  }
}

__device__ int64_t gpufs_node_truncate(const struct gpufs_dev *d, uint32_t fd, uint64_t length)
{
  gpufs_node_wait_flushes(d, fd);
  struct gpufs_call c = {GPUFS_OP_TRUNCATE, d->ftab.files[fd].hfid, length, 0, 0, NULL, 0};
  uint64_t out[4];
  int64_t r = gpufs_host_call(d, &c, out);
  if (r == 0) {
    struct gpufs_gnode *nd = gpufs_node_of(d, fd);
    /* relaxed: calls that race with the truncation may use either size and
     * version (documented); frames are published by their own states */
    gpufs_st_relaxed_u64_dev(&nd->size, length);
    gpufs_st_relaxed_u32_dev(&nd->version, (uint32_t)out[0]);
  }
  return r;
}
