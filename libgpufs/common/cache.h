/*
 * cache.h - the GPU page cache: frames, one global hash table, ring allocators.
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
 *
 * Compiles for the device (nvcc) and the host (g++), so the same code is
 * stress-tested by host threads under ThreadSanitizer.
 */
#ifndef GPUFS_COMMON_CACHE_H
#define GPUFS_COMMON_CACHE_H

#include <stdint.h>
#include "atomics.h"
#include "gpufs/errors.h"

#define GPUFS_NIL 0xffffffffu
#define GPUFS_PG_SHIFT 24
#define GPUFS_PG_PINS 0x003fffffu
#define GPUFS_PG_WB 0x00400000u    /* a flusher writes the frame back (dirty.h) */
#define GPUFS_PG_DIRTY 0x00800000u /* unwritten bytes: never evicted (dirty.h) */
#define GPUFS_WALK_MAX 64 /* lock-free walk gives up here and takes the lock */

enum gpufs_pg_state {
  GPUFS_PG_FREE = 0,
  GPUFS_PG_OWNED = 1,   /* held by one allocator, in no chain */
  GPUFS_PG_LOADING = 2, /* in a chain; its loader fills it */
  GPUFS_PG_VALID = 3,   /* in a chain; bytes [0, len) hold the page */
  GPUFS_PG_ERROR = 4    /* load failed (err); in no chain */
};

/* What gpufs_cache_get found. */
enum gpufs_get_result {
  GPUFS_GET_HIT = 1,    /* VALID frame, pinned */
  GPUFS_GET_WAIT = 2,   /* LOADING frame of another loader, pinned: gpufs_cache_wait */
  GPUFS_GET_LOAD = 3,   /* new LOADING frame, pinned; the caller loads it */
  GPUFS_GET_NOFRAME = 4 /* every frame of the ring pinned or loading; nothing held */
};

struct gpufs_frame {
  uint32_t state;   /* state << 24 | pins */
  uint32_t next;    /* chain link */
  uint64_t key;     /* gpufs_key(cid, page) */
  uint32_t version; /* file version the bytes belong to */
  uint32_t len;     /* valid bytes (VALID) */
  int32_t err;      /* negative errno (ERROR) */
  uint32_t dnext;   /* dirty list link (dirty.h) */
  uint32_t wfile;   /* the descriptor whose dirty list holds the frame */
  uint32_t wend;    /* end of the bytes gwrite put in the page (dirty.h) */
};

/* One allocator ring: its frames and its clock hand. */
struct gpufs_ring {
  uint64_t hand;       /* clock hand: frames are handed out in this order */
  uint32_t first;
  uint32_t count;
  uint32_t dirty_hint; /* a dirty frame allocation passed over (or GPUFS_NIL) */
  uint32_t pad;
};

/* The counters of the groups that use one ring, apart from the allocator's
 * words (a counter's add never shares a line with the hand), 128 bytes a
 * ring.  Each is a relaxed add: a counter publishes nothing, and
 * gpufs_get_stats reads a snapshot. */
struct gpufs_ring_stats {
  uint64_t hits;
  uint64_t misses;
  uint64_t evictions;
  uint64_t scanned;      /* frames looked at by allocations */
  uint64_t nofree;       /* allocations that found every frame busy */
  uint64_t alloc_cycles; /* SM clock cycles spent in gpufs_ring_alloc (device) */
  uint64_t writebacks;   /* dirty byte ranges written back by groups of this ring */
  uint64_t cleanings;    /* stalls that wrote back dirty pages to free frames */
  /* where read rounds spend their time (SM cycles, summed over groups;
   * device): fetch (A: lookups, requests, the host), fill (C: copies into
   * frames), settle (D: publish, wait for others' loads), copy (E-F: out to
   * the caller, unpin) */
  uint64_t phase_cycles[4];
  uint64_t rounds;
  uint64_t ra_pages;  /* pages loaded by readahead for groups of this ring */
  uint64_t peer_hits; /* pages loaded from another instance's cache */
  uint64_t pad;
};

#if defined(__cplusplus)
static_assert(sizeof(struct gpufs_ring_stats) == 128, "one ring's counters: 128 bytes");
#else
_Static_assert(sizeof(struct gpufs_ring_stats) == 128, "one ring's counters: 128 bytes");
#endif

struct gpufs_cache {
  struct gpufs_frame *frames;
  uint8_t *data;        /* nframes * page_size bytes */
  uint32_t *heads;      /* nbuckets chain heads */
  uint32_t *locks;      /* nbuckets bucket locks */
  struct gpufs_ring *rings;
  struct gpufs_ring_stats *stats; /* one per ring */
  uint32_t *dirty;      /* per frame, dwords words: one bit per GPUFS_DIRTY_GRAIN bytes */
  uint32_t dwords;
  uint32_t nframes;
  uint32_t page_size;
  uint32_t nbuckets;    /* power of two */
  uint32_t nrings;
};

/* A key packs a file's cache identity (cid, GPUFS_CID_BITS) and a page
 * index (GPUFS_PAGE_BITS): the daemon hands out no larger cid, and gopen
 * refuses a file with more pages. */
#define GPUFS_CID_BITS 24
#define GPUFS_PAGE_BITS 40
#define GPUFS_CID_MAX ((1u << GPUFS_CID_BITS) - 1)

GPUFS_HD uint64_t gpufs_key(uint32_t cid, uint64_t page)
{
  return ((uint64_t)cid << GPUFS_PAGE_BITS) | (page & ((1ull << GPUFS_PAGE_BITS) - 1));
}

GPUFS_HD uint32_t gpufs_bucket(const struct gpufs_cache *c, uint64_t key)
{
  /* a 64-bit finalizer (splitmix64) spreads sequential pages over buckets */
  key ^= key >> 30;
  key *= 0xbf58476d1ce4e5b9ull;
  key ^= key >> 27;
  key *= 0x94d049bb133111ebull;
  key ^= key >> 31;
  return (uint32_t)key & (c->nbuckets - 1);
}

GPUFS_HD uint8_t *gpufs_frame_data(const struct gpufs_cache *c, uint32_t f)
{
  return c->data + (uint64_t)f * c->page_size;
}

GPUFS_HD uint32_t gpufs_pg_state(uint32_t word) { return word >> GPUFS_PG_SHIFT; }

GPUFS_HD uint32_t *gpufs_frame_dirty(const struct gpufs_cache *c, uint32_t f)
{
  return c->dirty + (uint64_t)f * c->dwords;
}

GPUFS_HD void gpufs_bucket_lock(const struct gpufs_cache *c, uint32_t b)
{
  uint32_t ns = 32;
  uint32_t exp = 0;
  /* acquire: pairs with the release in gpufs_bucket_unlock; the chain as the
   * last holder left it is visible.  While it is held, wait with relaxed
   * loads (test and test-and-set). */
  while (!gpufs_cas_acquire_u32_dev(&c->locks[b], &exp, 1u)) {
    while (gpufs_ld_relaxed_u32_dev(&c->locks[b]) != 0) gpufs_pause(&ns, 1024);
    exp = 0;
  }
}

GPUFS_HD void gpufs_bucket_unlock(const struct gpufs_cache *c, uint32_t b)
{
  /* release: publishes this holder's chain edits; pairs with the acquire in
   * gpufs_bucket_lock */
  gpufs_st_release_u32_dev(&c->locks[b], 0u);
}

/* Pin frame f if it holds (key, version) and is LOADING or VALID.  Returns
 * that state, or 0 (and holds nothing). */
GPUFS_HD uint32_t gpufs_frame_pin(const struct gpufs_cache *c, uint32_t f, uint64_t key,
                                  uint32_t version)
{
  struct gpufs_frame *fr = &c->frames[f];
  /* acq_rel: acquire pairs with the owner's release when it made the frame
   * LOADING or VALID (key, version, len and bytes are then visible); release
   * orders nothing we wrote, but the pin must be seen before our reads by an
   * allocator whose CAS then fails */
  uint32_t st = gpufs_pg_state(gpufs_add_acqrel_u32_dev(&fr->state, 1u));
  if ((st == GPUFS_PG_LOADING || st == GPUFS_PG_VALID) &&
      gpufs_ld_relaxed_u64_dev(&fr->key) == key &&
      gpufs_ld_relaxed_u32_dev(&fr->version) == version)
    return st;
  /* release: pairs with the allocator's CAS acquire (see gpufs_frame_unpin) */
  gpufs_sub_release_u32_dev(&fr->state, 1u);
  return 0;
}

GPUFS_HD void gpufs_frame_unpin(const struct gpufs_cache *c, uint32_t f)
{
  /* release: our reads of the frame's bytes are done; pairs with the acquire
   * CAS in gpufs_ring_alloc, which may then overwrite them */
  gpufs_sub_release_u32_dev(&c->frames[f].state, 1u);
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

/* A cycle counter for the cost statistics: the SM's clock on the device,
 * nothing on the host. */
GPUFS_HD uint64_t gpufs_cycles(void)
{
#if defined(__CUDA_ARCH__)
  return (uint64_t)clock64();
#else
  return 0;
#endif
}

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

/* Give back an OWNED frame that turned out not to be needed. */
GPUFS_HD void gpufs_frame_put(const struct gpufs_cache *c, uint32_t f)
{
  /* release: hands the frame back; pairs with a later allocator's CAS */
  gpufs_sub_release_u32_dev(&c->frames[f].state,
                            (uint32_t)(GPUFS_PG_OWNED - GPUFS_PG_FREE) << GPUFS_PG_SHIFT);
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
  gpufs_st_relaxed_u32_dev(&fr->next, gpufs_ld_relaxed_u32_dev(&c->heads[b]));
  /* acq_rel: release publishes key and version to pinners (pairs with the
   * acquire in gpufs_frame_pin); OWNED -> LOADING with our own pin */
  gpufs_add_acqrel_u32_dev(&fr->state,
                           ((uint32_t)(GPUFS_PG_LOADING - GPUFS_PG_OWNED) << GPUFS_PG_SHIFT) + 1u);
  /* release: publishes key, version and next to lock-free walkers; pairs
   * with the acquire of the head in gpufs_chain_find */
  gpufs_st_release_u32_dev(&c->heads[b], nf);
  gpufs_bucket_unlock(c, b);
  gpufs_add_relaxed_u64_dev(&rs->misses, 1ull);
  *frame = nf;
  return GPUFS_GET_LOAD;
}

/* The loader filled bytes [0, len) of frame f. */
GPUFS_HD void gpufs_frame_loaded(const struct gpufs_cache *c, uint32_t f, uint32_t len)
{
  struct gpufs_frame *fr = &c->frames[f];
  gpufs_st_relaxed_u32_dev(&fr->len, len);
  /* release: publishes the frame's bytes (written by the whole group before
   * its barrier) and len; pairs with the acquire in gpufs_frame_wait and
   * gpufs_frame_pin */
  gpufs_add_acqrel_u32_dev(&fr->state, (uint32_t)(GPUFS_PG_VALID - GPUFS_PG_LOADING)
                                           << GPUFS_PG_SHIFT);
}

/* The load of frame f failed with err (< 0): unchain it, wake its waiters. */
GPUFS_HD void gpufs_frame_failed(const struct gpufs_cache *c, uint32_t f, int32_t err)
{
  struct gpufs_frame *fr = &c->frames[f];
  gpufs_chain_unlink(c, f);
  gpufs_st_relaxed_u32_dev((uint32_t *)&fr->err, (uint32_t)err);
  /* release: publishes err; pairs with the acquire in gpufs_frame_wait */
  gpufs_add_acqrel_u32_dev(&fr->state, (uint32_t)(GPUFS_PG_ERROR - GPUFS_PG_LOADING)
                                           << GPUFS_PG_SHIFT);
}

/* Wait while a pinned frame loads.  Returns 0 when VALID, else the error of
 * the load, or -ESHUTDOWN once *stop_word equals stop_value. */
GPUFS_HD int gpufs_frame_wait(const struct gpufs_cache *c, uint32_t f, const uint32_t *stop_word,
                              uint32_t stop_value)
{
  struct gpufs_frame *fr = &c->frames[f];
  uint32_t ns = 64, polls = 0;
  for (;;) {
    /* spin relaxed; the acquire comes once the state has moved on */
    uint32_t st = gpufs_pg_state(gpufs_ld_relaxed_u32_dev(&fr->state));
    if (st != GPUFS_PG_LOADING) {
      /* acquire: pairs with the release in gpufs_frame_loaded/failed; our
       * pin keeps the state where it is */
      st = gpufs_pg_state(gpufs_ld_acquire_u32_dev(&fr->state));
      if (st == GPUFS_PG_VALID) return 0;
      return (int)gpufs_ld_relaxed_u32_dev((uint32_t *)&fr->err);
    }
    /* relaxed: a plain signal, in host memory: looked at every 16th time */
    if (++polls % 16 == 0 && gpufs_ld_relaxed_u32_sys((uint32_t *)stop_word) == stop_value)
      return -GPUFS_ESHUTDOWN;
    gpufs_pause(&ns, 1024);
  }
}

#endif /* GPUFS_COMMON_CACHE_H */
