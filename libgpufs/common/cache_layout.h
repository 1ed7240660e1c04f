/*
 * cache_layout.h - the page cache's memory: frames and their state word,
 * the hash table's heads and locks, the rings and their counters, and the
 * key of a page.  The protocols live beside it, one concern a file:
 * frame.h (the frame-state protocol), chain.h (hash chains), ring.h (the
 * ring allocator), cache.h (the lookup that joins them; design comment).
 * The table, the chains and the frame protocol only compare 64-bit keys:
 * a cache keyed by other things than (file, page) reuses them as they are.
 */
#ifndef GPUFS_COMMON_CACHE_LAYOUT_H
#define GPUFS_COMMON_CACHE_LAYOUT_H

#include <stdint.h>
#include "libgpufs/common/atomics.h"
#include <gpufs/errors.h>

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

struct gpufs_frame {
  uint32_t state;   /* state << 24 | pins */
  uint32_t next;    /* chain link */
  uint64_t key;     /* gpufs_key(cid, page) */
  uint32_t version; /* file version the bytes belong to */
  uint32_t len;     /* valid bytes (VALID) */
  int32_t err;      /* negative errno (ERROR) */
  uint32_t dnext;   /* dirty list link (dirty.h) */
  uint32_t wfile;   /* the node whose dirty list holds the frame */
  uint32_t wend;    /* end of the bytes gwrite put in the page (dirty.h) */
  /* LOADING by a posted readahead (device/post.cu): its queue slot + 1, and
   * the ring whose post budget it takes; 0 otherwise (set 0 at insert) */
  uint32_t post;
  uint32_t post_ring;
};

/* One allocator ring: its frames and its clock hand. */
struct gpufs_ring {
  uint64_t hand;       /* clock hand: frames are handed out in this order */
  uint32_t first;
  uint32_t count;
  uint32_t dirty_hint; /* a dirty frame allocation passed over (or GPUFS_NIL) */
  uint32_t posted;     /* frames of the ring held by posted readahead loads
                          (device/post.cu): at most a quarter of count */
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
  uint64_t reg_pages; /* pages loaded from a registered file's mapping */
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
  uint32_t *dirty;      /* per frame, dwords words: one bit per grain of
                           page_size / (dwords * 32) bytes (dirty.h) */
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

#endif /* GPUFS_COMMON_CACHE_LAYOUT_H */
