/*
 * round.cuh - one round of page work for a group: find, load or wait for up
 * to GPUFS_CHUNK consecutive pages of a file, leaving each pinned.  The
 * caller fills a struct gpufs_round_ctl (round_state.cuh) and calls
 * gpufs_round_load, which runs the round's steps in order; lane j of the
 * group's meta warp looks after page p0+j:
 *
 *   step          file                 meta warp                  group
 *   1 lookup      round_lookup.cuh     frame; the page's source   (readahead_async:
 *                                      (enum gpufs_src)           copy claimed posted pages)
 *   2 ask         round_ask.cu         tickets, READs, the wait   waits at the barrier
 *   3 copy        round_copy.cuh       publish frames, sources    copy loads into frames
 *   4 settle      round_settle.cuh     publish VALID / failed,    learns the statuses
 *                                      wait for others' loads
 *
 * After gpufs_round_load every thread can read page j's frame, whether it
 * got one and its status (>= 0: the frame holds the page, the host's bytes
 * then zeros; or -errno) with gpufs_round_frame/_noframe/_status; the
 * caller uses the pages and then calls gpufs_round_unpin.
 *
 * A group completes its own loads (steps 1-4) before it waits for anyone
 * else's loads, and it never waits for a free frame while it holds one (an
 * allocation that finds none returns at once), so groups cannot wait on
 * each other in a cycle.
 */
#ifndef GPUFS_DEVICE_ROUND_CUH
#define GPUFS_DEVICE_ROUND_CUH

#include "libgpufs/device/round_copy.cuh"
#include "libgpufs/device/round_lookup.cuh"
#include "libgpufs/device/round_settle.cuh"
#include "libgpufs/device/round_state.cuh"

/* Step 2, the meta warp's alone (round_ask.cu): lane j's page's status.
 * The whole meta warp calls it, converged (it ballots and shuffles), with
 * equal ctl, after the lookup. */
__device__ int64_t gpufs_round_ask(const struct gpufs_round_ctl *ctl, struct gpufs_round *r);

/* One round of ctl's pages.  Every thread of the group calls it with an
 * equal ctl; synchronizes the group (two or three barriers; with
 * readahead_async one more, two more in a round that claims posted
 * pages). */
template <typename G>
__device__ __forceinline__ void gpufs_round_load(G g, const struct gpufs_round_ctl *ctl,
                                                 struct gpufs_round *r)
{
  const struct gpufs_dev *d = ctl->fi->d;
  const uint64_t t0 = gpufs_cycles();
  r->frame = GPUFS_NIL;
  r->src = GPUFS_SRC_NONE;
  r->ticket = 0;
  r->owned = false;
  r->budget = false;
  r->peer = NULL;
  r->peer_frame = GPUFS_NIL;
  r->from = 0;
  r->status = 0;
  if (g.meta()) r->src = gpufs_round_lookup(ctl, r);           /* 1 */
  if (d->ra.async && !ctl->post) gpufs_round_take_posted(g, ctl, r);
  struct gpufs_round_copy cp = {};
  if (g.meta()) {
    r->status = gpufs_round_ask(ctl, r);                        /* 2 */
    gpufs_round_publish(g, d, r, &cp);                          /* 3 */
  }
  g.sync();
  const uint64_t t1 = gpufs_cycles();
  cp.loads = g.get_mask(cp.loads);
  cp.fills = ctl->fill ? cp.loads & ctl->nofetch : 0;
  gpufs_round_copy(g, ctl, r, &cp);
  const uint64_t t2 = gpufs_cycles();
  gpufs_round_settle(g, d, r);                                  /* 4 */
  if (g.rank() == 0) {
    uint64_t *pc = d->cache.stats[ctl->ring].phase_cycles;
    gpufs_add_relaxed_u64_dev(&pc[0], t1 - t0);
    gpufs_add_relaxed_u64_dev(&pc[1], t2 - t1);
    gpufs_add_relaxed_u64_dev(&pc[2], gpufs_cycles() - t2);
  }
  r->t_end = gpufs_cycles();
}

/* The one-page hit path, before any round: the group's first thread looks
 * page `page` up lock-free (gpufs_chain_find) and keeps the pin of a VALID
 * frame; a page that is missing or still loading is left to a round (a
 * LOADING frame found here is let go again: waiting for it here, pinned,
 * was measured 1.3x slower on the collage, 2026-11-27).  No staging, no
 * phase timing, no barrier beyond the broadcast: a cached page costs a
 * lookup and a pin.  Counted as a hit of `ring`, not as a round.  Returns
 * the pinned frame, or GPUFS_NIL, to every thread; the caller unpins a
 * frame with gpufs_frame_unpin after a g.sync() that ends every thread's
 * use.  Every thread of the group calls it with equal arguments;
 * synchronizes the group (a broadcast). */
template <typename G>
__device__ __forceinline__ uint32_t gpufs_round_hit_one(G g, const struct gpufs_fdinfo *fi,
                                                        uint64_t page, uint32_t ring)
{
  int64_t f = GPUFS_NIL;
  if (g.rank() == 0) {
    const struct gpufs_cache *c = &fi->d->cache;
    uint32_t st = 0;
    uint32_t fr = gpufs_chain_find(c, gpufs_key(fi->cid, page), fi->version, &st);
    if (fr != GPUFS_NIL && st != GPUFS_PG_VALID) {
      gpufs_frame_unpin(c, fr); /* loading: the round path waits for it */
      fr = GPUFS_NIL;
    }
    if (fr != GPUFS_NIL) gpufs_add_relaxed_u64_dev(&c->stats[ring].hits, 1ull);
    f = fr;
  }
  return (uint32_t)g.bcast(f);
}

/* A round in which not even its first page got a frame: pause and say
 * whether to retry (0), or give up with -ENOMEM after alloc_timeout_us, or
 * -ESHUTDOWN.  *since is the caller's, 0 before the first stall.  Every
 * thread of the group calls it; synchronizes the group (a broadcast). */
template <typename G>
__device__ __forceinline__ int64_t gpufs_round_stalled(G g, const struct gpufs_dev *d,
                                                       uint64_t *since)
{
  int64_t verdict = 0;
  if (g.rank() == 0) {
    uint64_t now = gpufs_now_ns();
    if (*since == 0) *since = now;
    if (gpufs_q_stopped(&d->q, gpufs_q_stop_key_here())) verdict = -GPUFS_ESHUTDOWN;
    else if (now - *since > (uint64_t)d->alloc_timeout_us * 1000) verdict = -GPUFS_ENOMEM;
    else {
      uint32_t ns = 2000;
      gpufs_pause(&ns, ns);
    }
  }
  return g.bcast(verdict);
}

#endif /* GPUFS_DEVICE_ROUND_CUH */
