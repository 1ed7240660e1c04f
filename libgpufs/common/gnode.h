/*
 * gnode.h - the nodes of a GPU file table: what every name of one host file
 * open on an instance shares (struct gpufs_gnode in devstate.h: size,
 * version, dirty lists, write-backs in flight).
 *
 * Entries (libgpufs/device/files.cu) are descriptors, one per open (path,
 * flags).  When an entry's host open returns, its opener links it, under
 * the table lock, to the node of the file's cid (the host names the inode,
 * so hard links and every spelling of a path meet there): the node an entry
 * already open on that cid has, or a free node that takes the size and
 * version the host gave.  An open that finds the file open so shares its
 * view (size, cached pages); the host's changes by others are seen at an
 * open that finds no name of the file open (close-to-open).  The last entry
 * to leave frees the node.  Link and unlink run under the table lock;
 * size, version, the lists and flushing are read and changed without it
 * (atomics), published to an entry's users by the entry's OPEN.
 *
 * Compiles for the device and the host (tests/host/gnode_test.cpp).
 */
#ifndef GPUFS_COMMON_GNODE_H
#define GPUFS_COMMON_GNODE_H

#include <stdint.h>
#include "libgpufs/common/devstate.h"
#include "libgpufs/common/dirty.h"

/* Under the table lock: link entry e, whose host open gave cid, size,
 * version and registration reg, to the file's node: the node of cid, or a
 * free one that takes size, version and reg (there is one: every node has
 * an entry, and e has none yet).  Sets e->node. */
GPUFS_HD void gpufs_node_link_locked(const struct gpufs_ftab *t, struct gpufs_gfile *e, uint32_t cid,
                                     uint64_t size, uint32_t version, uint64_t reg)
{
  uint32_t n = GPUFS_NIL, free_node = GPUFS_NIL;
  /* GPUFS_SCAN_BATCH loads in flight at a time (devstate.h) */
  for (uint32_t i0 = 0; i0 < t->nfiles && n == GPUFS_NIL; i0 += GPUFS_SCAN_BATCH) {
    uint32_t c[GPUFS_SCAN_BATCH];
GPUFS_UNROLL
    for (uint32_t k = 0; k < GPUFS_SCAN_BATCH; k++)
      /* relaxed: cid changes only under the lock, which we hold */
      c[k] = i0 + k < t->nfiles ? gpufs_ld_relaxed_u32_dev(&t->nodes[i0 + k].cid) : GPUFS_NIL;
GPUFS_UNROLL
    for (uint32_t k = 0; k < GPUFS_SCAN_BATCH; k++) {
      if (c[k] == cid && n == GPUFS_NIL) n = i0 + k;
      if (c[k] == 0 && free_node == GPUFS_NIL) free_node = i0 + k;
    }
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
    gpufs_st_relaxed_u64_dev(&nd->reg, reg);
    for (uint32_t k = 0; k < GPUFS_DLISTS; k++) gpufs_st_relaxed_u32_dev(&nd->dheads[k], GPUFS_NIL);
  }
  nd = &t->nodes[n];
  gpufs_st_relaxed_u32_dev(&nd->links, gpufs_ld_relaxed_u32_dev(&nd->links) + 1u);
  e->node = n;
}

/* Under the table lock: entry e leaves its node (if it has one); the last
 * link frees the node. */
GPUFS_HD void gpufs_node_unlink_locked(const struct gpufs_ftab *t, struct gpufs_gfile *e)
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

/* Drop every dirty byte on node nd's lists (never written back): the file
 * is about to be cut to 0.  Each frame is taken as a flusher takes it
 * (gpufs_dirty_take: pinned, WB, DIRTY clear) and its bitmap zeroed.  A
 * writer that marks a frame meanwhile pushes it again (its bytes come after
 * the drop).  One thread; the caller then waits for write-backs that took
 * bits before (node.flushing). */
GPUFS_HD void gpufs_gnode_drop_dirty(const struct gpufs_cache *c, struct gpufs_gnode *nd)
{
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

#endif /* GPUFS_COMMON_GNODE_H */
