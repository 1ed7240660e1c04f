/*
 * ring.h - the ring allocator: a clock hand per ring over its share of the
 * frames; a frame is claimed by CAS only from FREE, VALID or ERROR with no
 * pin and no DIRTY bit, and a VALID one is unlinked before it is handed
 * out.  Allocation never waits: it scans twice the ring and reports NIL.
 */
#ifndef GPUFS_COMMON_RING_H
#define GPUFS_COMMON_RING_H

#include "libgpufs/common/chain.h"

/* The work of gpufs_ring_alloc, below. */
GPUFS_HD uint32_t gpufs_ring_take(const struct gpufs_cache *c, uint32_t r)
{
  struct gpufs_ring *ring = &c->rings[r];
  struct gpufs_ring_stats *rs = &c->stats[r];
  uint32_t scanned = 0;
  for (uint32_t i = 0; i < 2 * ring->count; i++) {
    uint64_t h = gpufs_add_relaxed_u64_dev(&ring->hand, 1ull);
    uint32_t f = ring->first + (uint32_t)(h % ring->count);
    uint32_t *sw = &c->frames[f].state;
    uint32_t s = gpufs_ld_relaxed_u32_dev(sw);
    uint32_t st = gpufs_pg_state(s);
    scanned++;
    if ((s & GPUFS_PG_PINS) != 0) continue;
    if (s & GPUFS_PG_DIRTY) { /* to be written back first: tell a stalled group */
      gpufs_st_relaxed_u32_dev(&ring->dirty_hint, f);
      continue;
    }
    if (st != GPUFS_PG_FREE && st != GPUFS_PG_VALID && st != GPUFS_PG_ERROR) continue;
    /* acquire: pairs with the last unpin's release (readers are done with
     * the bytes) and with the loader's release of VALID */
    if (!gpufs_cas_acquire_u32_dev(sw, &s, (uint32_t)GPUFS_PG_OWNED << GPUFS_PG_SHIFT)) continue;
    gpufs_add_relaxed_u64_dev(&rs->scanned, scanned);
    if (st == GPUFS_PG_VALID) {
      gpufs_chain_unlink(c, f);
      gpufs_add_relaxed_u64_dev(&rs->evictions, 1ull);
    }
    return f;
  }
  gpufs_add_relaxed_u64_dev(&rs->scanned, scanned);
  gpufs_add_relaxed_u64_dev(&rs->nofree, 1ull);
  return GPUFS_NIL;
}

/* Take a frame from ring r, evicting the least recently allocated unpinned
 * frame.  Returns the frame (OWNED, no pins, in no chain) or GPUFS_NIL.
 * Its cost, evictions included, is counted in the ring's alloc_cycles. */
GPUFS_HD uint32_t gpufs_ring_alloc(const struct gpufs_cache *c, uint32_t r)
{
  const uint64_t t0 = gpufs_cycles();
  uint32_t f = gpufs_ring_take(c, r);
  gpufs_add_relaxed_u64_dev(&c->stats[r].alloc_cycles, gpufs_cycles() - t0);
  return f;
}

#endif /* GPUFS_COMMON_RING_H */
