/*
 * wmaps.h - the table of live writable mappings (gmmap with PROT_WRITE).
 *
 * A mapping is a pin on a frame and a pointer, and gmunmap gets only the
 * pointer and a size.  A writable mapping must mark its range dirty when it
 * ends, and its bytes must reach the file even when the descriptor was
 * closed first, so it holds a reference on its descriptor; a read-only
 * mapping must mark nothing.  So writable mappings are recorded here, one
 * record per (offset in the cache, size, descriptor) with a count of its
 * live mappings: gmunmap and gmsync look their pointer and size up, and a
 * miss is a read-only mapping.  Two mappings of the same (offset, size)
 * are the same bytes of the same file: which one a gmunmap ends does not
 * matter for the bytes, and the reference it drops is the one its record
 * holds.
 *
 * Open addressing with linear probing and deletion by backward shift, all
 * under one spin lock (maps.lock).  Only writable mappings take it: gmunmap
 * and gmsync of read-only mappings skip the table while no writable one is
 * live (maps.live == 0, read relaxed: a writable mapping made meanwhile is
 * not the caller's).  At most cap / 2 records are live: gmmap gives
 * -ENOMEM past that.  Plain loads and stores of the records: only lock holders
 * touch them, and the lock's acquire and release order them.
 *
 * Compiles for the device and the host (tests/host/wmaps_test.cpp).
 */
#ifndef GPUFS_COMMON_WMAPS_H
#define GPUFS_COMMON_WMAPS_H

#include <errno.h>
#include <stdint.h>
#include "libgpufs/common/atomics.h"
#include "libgpufs/common/devstate.h"

GPUFS_HD uint32_t gpufs_wmap_slot(const struct gpufs_wmaps *m, uint64_t off, uint32_t size)
{
  uint64_t x = (off ^ (uint64_t)size << 40) * 0x9e3779b97f4a7c15ull;
  return (uint32_t)(x >> 32) & (m->cap - 1);
}

/* The slot of the record (off, size, entry) (entry GPUFS_NIL: of any
 * entry), or of the empty record where it would go.  The home slot depends
 * on (off, size) only, so records of one (off, size) share a probe run. */
GPUFS_HD uint32_t gpufs_wmap_probe(const struct gpufs_wmaps *m, uint64_t off, uint32_t size,
                                   uint32_t entry)
{
  uint32_t i = gpufs_wmap_slot(m, off, size);
  for (;;) {
    const struct gpufs_wmap *r = &m->recs[i];
    if (r->off == 0 || (r->off == off && r->size == size && (entry == GPUFS_NIL || r->entry == entry)))
      return i;
    i = (i + 1) & (m->cap - 1);
  }
}

/* Empty slot i, moving later records of its probe run back into the gap
 * (so that no probe stops early at a hole). */
GPUFS_HD void gpufs_wmap_delete_locked(const struct gpufs_wmaps *m, uint32_t i)
{
  const uint32_t mask = m->cap - 1;
  for (uint32_t j = (i + 1) & mask; m->recs[j].off != 0; j = (j + 1) & mask) {
    const uint32_t k = gpufs_wmap_slot(m, m->recs[j].off, m->recs[j].size);
    /* record j may fill the hole at i when its home k is not in (i, j] */
    const bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
    if (stays) continue;
    m->recs[i] = m->recs[j];
    i = j;
  }
  m->recs[i].off = 0;
}

/* Record one more writable mapping of `size` bytes at byte `off` of the
 * cache, holding a reference on entry `entry` (one record per (off, size,
 * entry), with a count).  0, or -ENOMEM when the table is full.  One
 * thread. */
GPUFS_HD int gpufs_wmap_add(const struct gpufs_wmaps *m, uint64_t off, uint32_t size, uint32_t entry)
{
  const uint64_t key = off + 1;
  int rc = 0;
  gpufs_spin_lock(m->lock, GPUFS_PAUSE_MAX_NS);
  const uint32_t i = gpufs_wmap_probe(m, key, size, entry);
  struct gpufs_wmap *r = &m->recs[i];
  if (r->off == key) {
    r->count++;
  } else if (gpufs_ld_relaxed_u32_dev(m->live) >= m->cap / 2) {
    rc = -ENOMEM;
  } else {
    r->off = key;
    r->size = size;
    r->entry = entry;
    r->count = 1;
    /* relaxed: changed under the lock; the lock-free readers only ask
     * whether to look */
    gpufs_add_relaxed_u32_dev(m->live, 1u);
  }
  gpufs_spin_unlock(m->lock);
  return rc;
}

/* The entry a writable mapping (off, size) holds (of any record of that
 * (off, size): mappings of the same bytes through two descriptors are two
 * records, each holding its own entry), or GPUFS_NIL when there is none (a
 * read-only mapping); with take, one mapping of that record ends.  One
 * thread. */
GPUFS_HD uint32_t gpufs_wmap_find(const struct gpufs_wmaps *m, uint64_t off, uint32_t size, int take)
{
  /* relaxed: see the top */
  if (gpufs_ld_relaxed_u32_dev(m->live) == 0) return GPUFS_NIL;
  const uint64_t key = off + 1;
  uint32_t entry = GPUFS_NIL;
  gpufs_spin_lock(m->lock, GPUFS_PAUSE_MAX_NS);
  const uint32_t i = gpufs_wmap_probe(m, key, size, GPUFS_NIL);
  struct gpufs_wmap *r = &m->recs[i];
  if (r->off == key) {
    entry = r->entry;
    if (take && --r->count == 0) {
      gpufs_wmap_delete_locked(m, i);
      gpufs_add_relaxed_u32_dev(m->live, 0xffffffffu); /* relaxed: as in gpufs_wmap_add */
    }
  }
  gpufs_spin_unlock(m->lock);
  return entry;
}

#endif /* GPUFS_COMMON_WMAPS_H */
