/*
 * cache.h - the GPU page cache: frames, one global hash table, ring
 * allocators; here the design and the lookup that joins the pieces
 * (gpufs_cache_get), each piece in its own header: cache_layout.h (memory
 * and keys), frame.h (frame states), chain.h (hash chains), ring.h
 * (allocation).
 *
 *   key (cid, page) --hash--> bucket: head -> frame -> frame -> NIL
 *                                       (chain through gpufs_frame.next)
 *   rings: [first, first+count) of the frame array each, a clock hand per ring
 *
 * Frame state word: state in bits 24..31, DIRTY in bit 23, WB in bit 22,
 * pin count in bits 0..21.  DIRTY (dirty.h) says the frame holds bytes not
 * yet written back and sits on a file's dirty list: allocation never takes
 * it.  WB marks the one flusher writing the frame back (with a pin).
 *
 *   FREE --alloc--> OWNED --insert--> LOADING --loaded--> VALID --alloc--> OWNED
 *     ^               |                  |                                  (unlinked)
 *     +---- put ------+                  +--failed--> ERROR --alloc--> OWNED
 *
 * - Lookup is lock-free: walk the chain, pin a frame whose key and version
 *   match by adding one to its pin count, then re-check state, key and
 *   version (the frame may have been reused between the walk and the pin).
 * - Insert and unlink take the bucket's lock; they never wait for anything
 *   else while holding it.  A frame is allocated before the lock is taken.
 * - Allocation claims a frame only from (FREE|VALID|ERROR, 0 pins, clean)
 *   by CAS, so a pinned, loading or dirty frame is never taken (the CAS
 *   compares the whole word: a writer that pinned, dirtied and unpinned in
 *   between leaves DIRTY behind, so it fails); a VALID one is unlinked
 *   from its chain before it is handed out.  Allocation does not wait: it
 *   scans the ring at most twice and reports NIL; the caller releases what
 *   it holds before it tries again.
 * - State changes of an owner are fetch-adds, so that a concurrent pin
 *   attempt (which adds one and takes it back) is never lost.
 * - Pages of a file carry the version they were read under; a lookup for a
 *   newer version simply misses and stale pages age out.
 * - A drop (gpufs_cache_drop, for gpufs_acquire) takes a VALID, clean frame
 *   whose only pin is the dropper's to OWNED by CAS, unlinks it and puts
 *   it back FREE: the page's next lookup misses.
 *
 * Compiles for the device (nvcc) and the host (g++), so the same code is
 * stress-tested by host threads under ThreadSanitizer.
 */
#ifndef GPUFS_COMMON_CACHE_H
#define GPUFS_COMMON_CACHE_H

#include "libgpufs/common/cache_layout.h"
#include "libgpufs/common/chain.h"
#include "libgpufs/common/frame.h"
#include "libgpufs/common/ring.h"

/* What gpufs_cache_get found. */
enum gpufs_get_result {
  GPUFS_GET_HIT = 1,    /* VALID frame, pinned */
  GPUFS_GET_WAIT = 2,   /* LOADING frame of another loader, pinned: gpufs_cache_wait */
  GPUFS_GET_LOAD = 3,   /* new LOADING frame, pinned; the caller loads it */
  GPUFS_GET_NOFRAME = 4 /* every frame of the ring pinned or loading; nothing held */
};

/* Find or create the frame for (key, version).  On HIT, WAIT and LOAD *frame
 * is pinned by the caller; on LOAD the caller must call gpufs_frame_loaded or
 * gpufs_frame_failed.  Uses ring r for a new frame. */
GPUFS_HD int gpufs_cache_get(const struct gpufs_cache *c, uint64_t key, uint32_t version,
                             uint32_t r, uint32_t *frame)
{
  struct gpufs_ring_stats *rs = &c->stats[r];
  uint32_t st = 0;
  uint32_t f = gpufs_chain_find(c, key, version, &st);
  if (f != GPUFS_NIL) {
    *frame = f;
    if (st == GPUFS_PG_VALID) gpufs_add_relaxed_u64_dev(&rs->hits, 1ull);
    return st == GPUFS_PG_VALID ? GPUFS_GET_HIT : GPUFS_GET_WAIT;
  }
  uint32_t nf = gpufs_ring_alloc(c, r); /* no lock held while allocating */
  if (nf == GPUFS_NIL) return GPUFS_GET_NOFRAME;

  uint32_t b = gpufs_bucket(c, key);
  gpufs_bucket_lock(c, b);
  for (uint32_t g = gpufs_ld_relaxed_u32_dev(&c->heads[b]); g != GPUFS_NIL;
       g = gpufs_ld_relaxed_u32_dev(&c->frames[g].next)) {
    if (gpufs_ld_relaxed_u64_dev(&c->frames[g].key) != key) continue;
    st = gpufs_frame_pin(c, g, key, version);
    if (st) {
      gpufs_bucket_unlock(c, b);
      gpufs_frame_put(c, nf);
      *frame = g;
      if (st == GPUFS_PG_VALID) gpufs_add_relaxed_u64_dev(&rs->hits, 1ull);
      return st == GPUFS_PG_VALID ? GPUFS_GET_HIT : GPUFS_GET_WAIT;
    }
  }
  struct gpufs_frame *fr = &c->frames[nf];
  gpufs_st_relaxed_u64_dev(&fr->key, key);
  gpufs_st_relaxed_u32_dev(&fr->version, version);
  gpufs_st_relaxed_u32_dev(&fr->len, 0u);
  gpufs_st_relaxed_u32_dev(&fr->wend, 0u);
  gpufs_st_relaxed_u32_dev(&fr->post, 0u);
  gpufs_st_relaxed_u32_dev(&fr->next, gpufs_ld_relaxed_u32_dev(&c->heads[b]));
  /* acq_rel: release publishes key and version to pinners (pairs with the
   * acquire in gpufs_frame_pin); OWNED -> LOADING with our own pin */
  const uint32_t old = gpufs_add_acqrel_u32_dev(
      &fr->state, ((uint32_t)(GPUFS_PG_LOADING - GPUFS_PG_OWNED) << GPUFS_PG_SHIFT) + 1u);
  GPUFS_DEBUG_ASSERT(gpufs_pg_state(old) == GPUFS_PG_OWNED && (old & GPUFS_PG_DIRTY) == 0,
                     "frame_inserted_owned_and_clean");
  /* release: publishes key, version and next to lock-free walkers; pairs
   * with the acquire of the head in gpufs_chain_find */
  gpufs_st_release_u32_dev(&c->heads[b], nf);
  gpufs_bucket_unlock(c, b);
  gpufs_add_relaxed_u64_dev(&rs->misses, 1ull);
  *frame = nf;
  return GPUFS_GET_LOAD;
}

/* What gpufs_cache_drop did with a page. */
enum gpufs_drop_result {
  GPUFS_DROP_ABSENT = 0, /* not cached at that version */
  GPUFS_DROP_DONE = 1,   /* was VALID and clean: unchained, its frame FREE */
  GPUFS_DROP_DIRTY = 2,  /* holds bytes not yet written back: kept (the
                            GPU's own writes win over the host's) */
  GPUFS_DROP_BUSY = 3    /* pinned by a reader, loading or failed: kept */
};
#define GPUFS_DROP_RESULTS 4

/* Drop the cached page (key, version) if it is VALID, clean and pinned by
 * nobody else, so that its next lookup loads it again (gpufs_acquire:
 * the host changed its bytes).  Any thread; never waits: a page in use is
 * BUSY and stays. */
GPUFS_HD int gpufs_cache_drop(const struct gpufs_cache *c, uint64_t key, uint32_t version)
{
  uint32_t st = 0;
  const uint32_t f = gpufs_chain_find(c, key, version, &st);
  if (f == GPUFS_NIL) return GPUFS_DROP_ABSENT;
  uint32_t *sw = &c->frames[f].state;
  /* our pin keeps key and version: only VALID, clean, no WB, our one pin
   * turns into OWNED (the pin is consumed by the CAS).  A transient pin
   * attempt of a lookup elsewhere makes it fail: try a few times. */
  const uint32_t only_ours = ((uint32_t)GPUFS_PG_VALID << GPUFS_PG_SHIFT) | 1u;
  uint32_t s = only_ours;
  for (int tries = 0; tries < 8; tries++) {
    s = only_ours;
    /* acquire: pairs with the release of every other reader's unpin (their
     * reads of the bytes are done), as the allocator's CAS does */
    if (gpufs_cas_acquire_u32_dev(sw, &s, (uint32_t)GPUFS_PG_OWNED << GPUFS_PG_SHIFT)) {
      gpufs_chain_unlink(c, f);
      gpufs_frame_put(c, f);
      return GPUFS_DROP_DONE;
    }
    if ((s & GPUFS_PG_DIRTY) || gpufs_pg_state(s) != GPUFS_PG_VALID) break;
  }
  gpufs_frame_unpin(c, f);
  return (s & GPUFS_PG_DIRTY) ? GPUFS_DROP_DIRTY : GPUFS_DROP_BUSY;
}

#endif /* GPUFS_COMMON_CACHE_H */
