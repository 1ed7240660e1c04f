/*
 * chain.h - the hash chains: a lock per bucket for insert and unlink, a
 * lock-free walk for lookups (bounded: GPUFS_WALK_MAX), the unlink of a
 * failed load, and the lookup of a page in another instance's cache (peer
 * caching).
 */
#ifndef GPUFS_COMMON_CHAIN_H
#define GPUFS_COMMON_CHAIN_H

#include "libgpufs/common/frame.h"

/* The lock of bucket b: inserts and unlinks of its chain. */
GPUFS_HD void gpufs_bucket_lock(const struct gpufs_cache *c, uint32_t b)
{
  gpufs_spin_lock(&c->locks[b], 1024);
}

GPUFS_HD void gpufs_bucket_unlock(const struct gpufs_cache *c, uint32_t b)
{
  gpufs_spin_unlock(&c->locks[b]);
}

/* Remove frame f (whose key is stable: the caller owns it) from its chain. */
GPUFS_HD void gpufs_chain_unlink(const struct gpufs_cache *c, uint32_t f)
{
  uint64_t key = gpufs_ld_relaxed_u64_dev(&c->frames[f].key);
  uint32_t b = gpufs_bucket(c, key);
  uint32_t *link = &c->heads[b];
  gpufs_bucket_lock(c, b);
  for (;;) {
    uint32_t g = gpufs_ld_relaxed_u32_dev(link);
    if (g == GPUFS_NIL) break; /* not reached: an owned VALID/LOADING frame is chained */
    if (g == f) {
      /* release: a lock-free walker that reads the new link also sees the
       * frames behind it fully initialised; pairs with the walk's acquire */
      gpufs_st_release_u32_dev(link, gpufs_ld_relaxed_u32_dev(&c->frames[f].next));
      break;
    }
    link = &c->frames[g].next;
  }
  gpufs_bucket_unlock(c, b);
}

/* The load of frame f failed with err (< 0): unchain it, wake its waiters. */
GPUFS_HD void gpufs_frame_failed(const struct gpufs_cache *c, uint32_t f, int32_t err)
{
  struct gpufs_frame *fr = &c->frames[f];
  gpufs_chain_unlink(c, f);
  gpufs_st_relaxed_u32_dev((uint32_t *)&fr->err, (uint32_t)err);
  /* release: publishes err; pairs with the acquire in gpufs_frame_wait */
  const uint32_t old = gpufs_add_acqrel_u32_dev(
      &fr->state, (uint32_t)(GPUFS_PG_ERROR - GPUFS_PG_LOADING) << GPUFS_PG_SHIFT);
  GPUFS_DEBUG_ASSERT(gpufs_pg_state(old) == GPUFS_PG_LOADING && (old & GPUFS_PG_PINS) != 0,
                     "frame_failed_from_loading_with_the_loaders_pin");
}

/* Lock-free search of key's chain; pins and returns a matching frame. */
GPUFS_HD uint32_t gpufs_chain_find(const struct gpufs_cache *c, uint64_t key, uint32_t version,
                                   uint32_t *state)
{
  uint32_t b = gpufs_bucket(c, key);
  /* acquire: pairs with the release that linked the frame in; its key,
   * version and next are visible */
  uint32_t f = gpufs_ld_acquire_u32_dev(&c->heads[b]);
  for (int steps = 0; f != GPUFS_NIL && steps < GPUFS_WALK_MAX; steps++) {
    struct gpufs_frame *fr = &c->frames[f];
    if (gpufs_ld_relaxed_u64_dev(&fr->key) == key &&
        gpufs_ld_relaxed_u32_dev(&fr->version) == version) {
      uint32_t st = gpufs_frame_pin(c, f, key, version);
      if (st) {
        *state = st;
        return f;
      }
    }
    /* acquire: as for the head */
    f = gpufs_ld_acquire_u32_dev(&fr->next);
  }
  return GPUFS_NIL;
}

/* Peer caching: look (key, version) up in another instance's cache p and
 * pin it there if it is VALID; a LOADING frame is let go (a reader never
 * waits for another instance's load: no wait cycle can form between
 * instances).  Returns the pinned frame of p, or GPUFS_NIL.  The caller
 * copies the bytes (p's len of them: the pin's acquire made len and the
 * bytes visible) and then calls gpufs_frame_unpin(p, f), whose release
 * lets p's allocator reuse the frame.  Any thread. */
GPUFS_HD uint32_t gpufs_peer_find(const struct gpufs_cache *p, uint64_t key, uint32_t version)
{
  uint32_t st = 0;
  uint32_t f = gpufs_chain_find(p, key, version, &st);
  if (f != GPUFS_NIL && st != GPUFS_PG_VALID) {
    gpufs_frame_unpin(p, f);
    f = GPUFS_NIL;
  }
  return f;
}

#endif /* GPUFS_COMMON_CHAIN_H */
