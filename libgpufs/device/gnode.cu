/*
 * gnode.cu - what every name of one host file shares on an instance, on the
 * device: the table lock, who may write the file back (holds), and how it
 * is cut.  The nodes themselves: libgpufs/common/gnode.h.
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
#include "libgpufs/common/gnode.h"
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
  gpufs_gnode_drop_dirty(&d->cache, gpufs_node_of(d, fd));
}

__device__ int64_t gpufs_node_truncate(const struct gpufs_dev *d, uint32_t fd, uint64_t length)
{
  gpufs_node_wait_flushes(d, fd);
  struct gpufs_call c = {GPUFS_OP_TRUNCATE, d->ftab.files[fd].hfid, length, 0, 0, NULL, 0};
  uint64_t out[4];
  int64_t r = gpufs_host_call(d, &c, out);
  struct gpufs_gnode *nd = gpufs_node_of(d, fd);
  if (r == 0) {
    /* relaxed: calls that race with the truncation may use either size and
     * version (documented); frames are published by their own states */
    gpufs_st_relaxed_u64_dev(&nd->size, length);
    gpufs_st_relaxed_u32_dev(&nd->version, (uint32_t)out[0]);
  }
  /* release: the host retired the registration (pages past the cut left
   * its mapping); publishes the version above to a READ reply's adoption
   * of the mapping (pairs with its CAS in gpufs_round_adopt_reg).  A miss
   * racing with the truncation may still read the mapping, whose pages
   * stay pinned until the registration is released */
  gpufs_st_release_u64_dev(&nd->reg, 0ull);
  return r;
}
