/*
 * frame.h - the frame-state protocol (cache.h's diagram): pins that never
 * wait, an owner's state changes by fetch-add, publication of a loaded
 * frame, waiting for another group's load, giving an OWNED frame back.
 */
#ifndef GPUFS_COMMON_FRAME_H
#define GPUFS_COMMON_FRAME_H

#include "libgpufs/common/cache_layout.h"
#include "libgpufs/common/debug.h"

/* Pin frame f if it holds (key, version) and is LOADING or VALID.  Returns
 * that state, or 0 (and holds nothing). */
GPUFS_HD uint32_t gpufs_frame_pin(const struct gpufs_cache *c, uint32_t f, uint64_t key,
                                  uint32_t version)
{
  struct gpufs_frame *fr = &c->frames[f];
  /* acquire: pairs with the owner's release when it made the frame LOADING
   * or VALID (key, version, len and bytes are then visible), and keeps our
   * reads of the frame after the pin.  No release: the pin publishes
   * nothing.  An allocator's CAS and this add are ordered on the state
   * word itself: a CAS after the pin fails (it compares the pin count); a
   * pin after the CAS reads OWNED and is taken back below.  The allocator
   * may overwrite the bytes only after its CAS acquired our unpin's
   * release (gpufs_frame_unpin). */
  uint32_t st = gpufs_pg_state(gpufs_add_acquire_u32_dev(&fr->state, 1u));
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
  const uint32_t old = gpufs_sub_release_u32_dev(&c->frames[f].state, 1u);
  GPUFS_DEBUG_ASSERT((old & GPUFS_PG_PINS) != 0, "frame_unpin_of_a_pinned_frame");
}

/* Give back an OWNED frame that turned out not to be needed. */
GPUFS_HD void gpufs_frame_put(const struct gpufs_cache *c, uint32_t f)
{
  /* release: hands the frame back; pairs with a later allocator's CAS */
  const uint32_t old = gpufs_sub_release_u32_dev(
      &c->frames[f].state, (uint32_t)(GPUFS_PG_OWNED - GPUFS_PG_FREE) << GPUFS_PG_SHIFT);
  GPUFS_DEBUG_ASSERT(gpufs_pg_state(old) == GPUFS_PG_OWNED, "frame_put_of_an_owned_frame");
}

/* The loader filled bytes [0, len) of frame f. */
GPUFS_HD void gpufs_frame_loaded(const struct gpufs_cache *c, uint32_t f, uint32_t len)
{
  struct gpufs_frame *fr = &c->frames[f];
  gpufs_st_relaxed_u32_dev(&fr->len, len);
  /* release: publishes the frame's bytes (written by the whole group before
   * its barrier) and len; pairs with the acquire in gpufs_frame_wait and
   * gpufs_frame_pin */
  const uint32_t old = gpufs_add_acqrel_u32_dev(
      &fr->state, (uint32_t)(GPUFS_PG_VALID - GPUFS_PG_LOADING) << GPUFS_PG_SHIFT);
  GPUFS_DEBUG_ASSERT(gpufs_pg_state(old) == GPUFS_PG_LOADING && (old & GPUFS_PG_PINS) != 0,
                     "frame_loaded_from_loading_with_the_loaders_pin");
}

/* What gpufs_frame_wait_some returns when the frame still loads after its
 * polls (an errno is negative, VALID is 0). */
#define GPUFS_FRAME_STILL_LOADING 1

/* Wait while a pinned frame loads, at most max_polls polls (0: no limit),
 * pausing from *ns on (the caller's, kept across calls: 64 at first).
 * Returns 0 when VALID, the error of the load, -ESHUTDOWN once *stop_word equals
 * stop_value, or GPUFS_FRAME_STILL_LOADING after max_polls polls (a waiter
 * that may finish a posted load in between: device/post.cu). */
GPUFS_HD int gpufs_frame_wait_some(const struct gpufs_cache *c, uint32_t f,
                                   const uint32_t *stop_word, uint32_t stop_value,
                                   uint32_t max_polls, uint32_t *ns)
{
  struct gpufs_frame *fr = &c->frames[f];
  uint32_t polls = 0;
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
    if (max_polls != 0 && polls >= max_polls) return GPUFS_FRAME_STILL_LOADING;
    gpufs_pause(ns, 1024);
  }
}

/* Wait while a pinned frame loads.  Returns 0 when VALID, else the error of
 * the load, or -ESHUTDOWN once *stop_word equals stop_value. */
GPUFS_HD int gpufs_frame_wait(const struct gpufs_cache *c, uint32_t f, const uint32_t *stop_word,
                              uint32_t stop_value)
{
  uint32_t ns = 64;
  return gpufs_frame_wait_some(c, f, stop_word, stop_value, 0, &ns);
}

#endif /* GPUFS_COMMON_FRAME_H */
