/*
 * dirty.h - which bytes of a cached page are not yet in the host file, and
 * the per-file lists of such pages.
 *
 *   frame f: state word ....D.pins       D = GPUFS_PG_DIRTY (cache.h)
 *            bitmap  [w0][w1]...[w(dwords-1)]   one bit per grain (dirty_grain bytes,
 *                                               64 by default; gpufs_dirty_shift)
 *   file:    dheads[GPUFS_DLISTS] -> f -> f' -> ... -> NIL   (frame.dnext)
 *
 * Writer (holds a pin on f, after copying its bytes into the frame):
 *   1. OR the grains it wrote into the bitmap          (release: the bytes)
 *   2. set D; if D was clear, push f on one of its file's lists
 * Flusher (owns a list it took whole with one exchange):
 *   1. read the links, then pin f, take WB, clear D    (f may be pushed again)
 *   2. exchange each bitmap word with 0 and write back the runs it held
 *   3. a failed run: OR its bits back, set D, push f again if D was clear
 *   4. drop WB and the pin
 *
 * Why nothing is lost: a writer sets its bits before D, a flusher clears D
 * before it takes bits.  Bits taken by a flusher are written (or put back);
 * bits set after a flusher took the word come with a D set after the
 * flusher cleared it, so their writer pushes the frame again.  A frame with
 * D set is never evicted (cache.h), and a frame with D clear has no bits
 * left once the pins of writers and flushers are gone.
 *
 * The lists are pushed with CAS and emptied with one exchange (never popped
 * one by one), so there is no ABA: a pusher only needs the head it links to
 * to be the head when its CAS succeeds.  Writers spread over GPUFS_DLISTS
 * lists by group id, so they rarely contend on one head, and a list holds
 * mostly one writer's pages.
 *
 * Compiles for the device and the host (tests/host stresses it under TSan).
 */
#ifndef GPUFS_COMMON_DIRTY_H
#define GPUFS_COMMON_DIRTY_H

#include <stdint.h>
#include "libgpufs/common/atomics.h"
#include "libgpufs/common/cache.h"
#include <gpufs/config.h>

/* Dirty lists per open file (its node).  A writer pushes on list
 * (group id % GPUFS_DLISTS), so with as many lists as a grid has resident
 * blocks, a list holds one writer's pages in the order it wrote them, and a
 * flusher's batch of 32 is a run of consecutive pages: one pwrite.  With
 * 16 lists a batch mixed the pages of ~16 blocks (about 6 pages a pwrite,
 * 0.47-0.68x expert_write at 4 KiB pages; docs/design-write.md 12).
 * 1 KiB a node; flushers skip empty lists 32 at a time (writeback.cuh). */
#define GPUFS_DLISTS 256

GPUFS_HD uint32_t gpufs_ctz32(uint32_t x)
{
#if defined(__CUDA_ARCH__)
  return (uint32_t)__ffs((int)x) - 1;
#else
  return (uint32_t)__builtin_ctz(x);
#endif
}

/* Bits of grains [g0, g1) within word w (32 grains a word). */
GPUFS_HD uint32_t gpufs_dirty_word_mask(uint32_t w, uint32_t g0, uint32_t g1)
{
  uint32_t lo = g0 > w * 32 ? g0 - w * 32 : 0;
  uint32_t hi = g1 < (w + 1) * 32 ? g1 - w * 32 : 32;
  if (lo >= hi) return 0;
  uint32_t m = hi == 32 ? 0xffffffffu : (1u << hi) - 1;
  return m & ~((1u << lo) - 1);
}

/* log2 of the bytes one bit covers (the grain: cfg.dirty_grain, 64 by
 * default, 1 for byte-exact write-back): page_size / (dwords * 32). */
GPUFS_HD uint32_t gpufs_dirty_shift(const struct gpufs_cache *c)
{
  return gpufs_ctz32(c->page_size) - gpufs_ctz32(c->dwords) - 5u;
}

/* Mark bytes [lo, hi) of frame f dirty (bits only; then gpufs_dirty_flag).
 * The caller holds a pin and has written the bytes. */
GPUFS_HD void gpufs_dirty_bits(const struct gpufs_cache *c, uint32_t f, uint32_t lo, uint32_t hi)
{
  if (lo >= hi) return;
  uint32_t *bm = gpufs_frame_dirty(c, f);
  const uint32_t sh = gpufs_dirty_shift(c);
  uint32_t g0 = lo >> sh, g1 = (hi + (1u << sh) - 1u) >> sh;
  for (uint32_t w = g0 / 32; w <= (g1 - 1) / 32; w++) {
    uint32_t m = gpufs_dirty_word_mask(w, g0, g1);
    /* acq_rel: the release publishes the bytes the caller's group wrote
     * before it (they fenced and met at a barrier); pairs with the
     * flusher's exchange in gpufs_dirty_next_run */
    if (m) gpufs_or_acqrel_u32_dev(&bm[w], m);
  }
}

/* Set DIRTY on frame f (pinned by the caller).  True when it was clear: the
 * caller must then push f on a dirty list. */
GPUFS_HD int gpufs_dirty_flag(const struct gpufs_cache *c, uint32_t f)
{
  /* acq_rel: orders our bitmap ORs before the flag; pairs with the
   * flusher's clear in gpufs_dirty_take, which comes before its exchanges */
  uint32_t old = gpufs_or_acqrel_u32_dev(&c->frames[f].state, GPUFS_PG_DIRTY);
  return (old & GPUFS_PG_DIRTY) == 0;
}

/* Push frame f on list *head, of node wfile (libgpufs/device/gnode.cu). */
GPUFS_HD void gpufs_dlist_push(const struct gpufs_cache *c, uint32_t *head, uint32_t f,
                               uint32_t wfile)
{
  struct gpufs_frame *fr = &c->frames[f];
  gpufs_st_relaxed_u32_dev(&fr->wfile, wfile);
  uint32_t h = gpufs_ld_relaxed_u32_dev(head);
  do {
    gpufs_st_relaxed_u32_dev(&fr->dnext, h);
    /* acq_rel: the release publishes dnext and wfile to the flusher that
     * takes the list (its exchange acquires; pushes after ours continue
     * the release sequence) */
  } while (!gpufs_cas_acqrel_u32_dev(head, &h, f));
}

/* Take the whole list *head; returns its first frame or GPUFS_NIL. */
GPUFS_HD uint32_t gpufs_dlist_take(uint32_t *head)
{
  /* acq_rel: the acquire pairs with the pushers' CAS; every frame's dnext
   * on the taken chain is visible */
  return gpufs_xchg_acqrel_u32_dev(head, GPUFS_NIL);
}

/* The frame after f on a list the caller took.  Read every link of the
 * frames it will take before taking any of them: once DIRTY is clear, a
 * writer may push the frame again and change its link. */
GPUFS_HD uint32_t gpufs_dlist_next(const struct gpufs_cache *c, uint32_t f)
{
  /* relaxed: gpufs_dlist_take's acquire made the links visible */
  return gpufs_ld_relaxed_u32_dev(&c->frames[f].dnext);
}

/* A flusher takes frame f of a list it owns: pins it, waits until no other
 * flusher writes it back (WB), then takes WB and clears DIRTY.  One
 * write-back of a frame at a time: two could reach the file in either
 * order, the older bytes last.  The WB holder waits only for the host, or
 * (lanes of one flushing group) for frames of lists taken before its own,
 * so no chain of these waits closes a cycle (docs/design-write.md 12). */
GPUFS_HD void gpufs_dirty_take(const struct gpufs_cache *c, uint32_t f)
{
  struct gpufs_frame *fr = &c->frames[f];
  /* acq_rel: the pin keeps the frame (and its key) ours while DIRTY is
   * clear */
  gpufs_add_acqrel_u32_dev(&fr->state, 1u);
  uint32_t ns = 64;
  /* acq_rel: acquire pairs with the previous holder's release in
   * gpufs_dirty_done (its write-back reached the file first) */
  while (gpufs_or_acqrel_u32_dev(&fr->state, GPUFS_PG_WB) & GPUFS_PG_WB)
    gpufs_pause(&ns, GPUFS_PAUSE_MAX_NS);
  /* acq_rel: pairs with writers' gpufs_dirty_flag: a writer whose flag
   * comes later pushes the frame again */
  gpufs_and_acqrel_u32_dev(&fr->state, ~GPUFS_PG_DIRTY);
}

/* The flusher is done with frame f: drops WB and its pin. */
GPUFS_HD void gpufs_dirty_done(const struct gpufs_cache *c, uint32_t f)
{
  /* release: our write-back has reached the host file; pairs with the next
   * flusher's acquire in gpufs_dirty_take */
  gpufs_and_acqrel_u32_dev(&c->frames[f].state, ~GPUFS_PG_WB);
  gpufs_frame_unpin(c, f);
}

/* Drop every dirty bit of frame f, which the caller took (gpufs_dirty_take):
 * its bytes are not to be written back (the file was cut below them). */
GPUFS_HD void gpufs_dirty_clear(const struct gpufs_cache *c, uint32_t f)
{
  uint32_t *bm = gpufs_frame_dirty(c, f);
  /* acq_rel: as the flusher's exchanges (gpufs_dirty_cursor_init): bits a
   * writer sets later come with a DIRTY set later, and a push */
  for (uint32_t w = 0; w < c->dwords; w++) (void)gpufs_xchg_acqrel_u32_dev(&bm[w], 0u);
}

/* Walks the dirty runs of one frame, taking (zeroing) bitmap words as it
 * goes. */
struct gpufs_dirty_cursor {
  uint32_t *words;
  uint32_t nwords;
  uint32_t w;    /* word in hand */
  uint32_t bits; /* its bits not yet returned */
};

GPUFS_HD void gpufs_dirty_cursor_init(struct gpufs_dirty_cursor *k, const struct gpufs_cache *c,
                                      uint32_t f)
{
  k->words = gpufs_frame_dirty(c, f);
  k->nwords = c->dwords;
  k->w = 0;
  /* acq_rel: the acquire pairs with the writers' ORs: the bytes of the
   * grains we take are visible */
  k->bits = gpufs_xchg_acqrel_u32_dev(&k->words[0], 0u);
}

/* Ones from bit 0 of x (32 when x is all ones). */
GPUFS_HD uint32_t gpufs_dirty_ones(uint32_t x) { return ~x ? gpufs_ctz32(~x) : 32; }

/* The next run of dirty grains [*g0, *g1), taken from the bitmap.  False
 * when none is left (every word is then taken). */
GPUFS_HD int gpufs_dirty_next_run(struct gpufs_dirty_cursor *k, uint32_t *g0, uint32_t *g1)
{
  while (k->bits == 0) {
    if (++k->w >= k->nwords) return 0;
    /* acq_rel: as in gpufs_dirty_cursor_init */
    k->bits = gpufs_xchg_acqrel_u32_dev(&k->words[k->w], 0u);
  }
  uint32_t lo = gpufs_ctz32(k->bits);
  uint32_t n = gpufs_dirty_ones(k->bits >> lo);
  if (n > 32 - lo) n = 32 - lo;
  *g0 = k->w * 32 + lo;
  k->bits &= lo + n == 32 ? (1u << lo) - 1 : ~(((1u << n) - 1) << lo);
  *g1 = *g0 + n;
  while (lo + n == 32 && k->w + 1 < k->nwords) { /* the run reaches the next word */
    k->w++;
    /* acq_rel: as in gpufs_dirty_cursor_init */
    k->bits = gpufs_xchg_acqrel_u32_dev(&k->words[k->w], 0u);
    lo = 0;
    n = gpufs_dirty_ones(k->bits);
    k->bits = n == 32 ? 0 : k->bits & ~((1u << n) - 1);
    *g1 += n;
  }
  return 1;
}

#endif /* GPUFS_COMMON_DIRTY_H */
