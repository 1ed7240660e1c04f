/*
 * post.cuh - posted readahead loads (config readahead_async): a group that
 * reaches the first page of its latest readahead window posts the READs of
 * the next window and returns without waiting for them.  Each posted page
 * is a LOADING frame that keeps its poster's pin, and its queue slot stays
 * held until someone finishes the load: copies the host's bytes from the
 * slot's staging into the frame, publishes it VALID (or failed), drops the
 * poster's pin and releases the slot.
 *
 * Whoever finishes it first claims it, by one CAS on the slot's word in
 * ra.posted ((frame + 1) << 32 | the ticket's low 32 bits; 0 when no
 * posted load holds the slot).  Four may try, so that no posted load can
 * be left waiting for a poster that does not come back:
 *   - a round that finds the page LOADING and posted (gpufs_round_lookup):
 *     the group copies the claimed pages and publishes them before the
 *     round takes tickets of its own (gpufs_round_take_posted; how a
 *     poster takes its window back);
 *   - a round waiting for that frame (gpufs_round_settle_page,
 *     GPUFS_SRC_WAIT);
 *   - whoever waits for the slot for a later ticket (gpufs_post_wait_free:
 *     every device producer: rounds, write-back, host calls).
 * The last two finish it with one thread (gpufs_post_finish).  Finishing waits
 * only for the posted ticket, and the finisher then holds no slot of a
 * newer ticket that it has not posted, so no wait goes round in a cycle:
 * the daemon serves the posted ticket once every older ticket is posted,
 * and an older ticket waits only for its slot's older holder.  (A first
 * version let a round claim a posted page as one of its loads and copy it
 * with the group in phase C: the round then held the old slot while it
 * waited for its new tickets, which the daemon serves only after a ticket
 * of another group that waited for that very slot; the H100 hung in
 * ReadaheadTest.CacheSmallerThanDataEvictsAndReadsRight, 2026-11-27.)
 *
 * Budgets keep posted loads from starving the calls' own loads: a ring's
 * posted frames stay at most a quarter of the ring, and the slots held at
 * most ra.post_slots (half the queue); a window that does not fit is not
 * posted, and the group's next call loads it in its round, as without
 * readahead_async.  The counters are throttles: relaxed, they publish
 * nothing.
 *
 * With readahead_async off (the default) no call leaves post.cuh: the
 * three that a round or a producer makes (gpufs_post_claim_frame,
 * gpufs_post_wait_free, gpufs_post_wait_frame) test d->ra.async inline
 * and do the plain queue or frame wait; post.cu's gpufs_posted_* are for
 * instances that post.
 */
#ifndef GPUFS_DEVICE_POST_CUH
#define GPUFS_DEVICE_POST_CUH

#include "libgpufs/device/group.cuh"
#include "libgpufs/device/internal.cuh"

/* Take budget for n posted loads from ring `ring` and the queue: true, or
 * false (nothing taken) when either would pass its bound.  One thread. */
__device__ bool gpufs_post_take(const struct gpufs_dev *d, uint32_t ring, uint32_t n);

/* Give back budget for n loads that were not posted.  One thread. */
__device__ void gpufs_post_give(const struct gpufs_dev *d, uint32_t ring, uint32_t n);

/* The lane that posted ticket t's READ for frame f (LOADING, pinned by it)
 * hands the load over: after this it must not touch the frame, the pin or
 * the slot.  One thread. */
__device__ void gpufs_post_record(const struct gpufs_dev *d, uint64_t t, uint32_t f,
                                  uint32_t ring);

/* Claim the posted load of frame f, which the caller has pinned (LOADING):
 * true and its ticket in *t (the caller then owns the slot and must finish
 * the load with gpufs_post_finish); false when no posted load holds f or
 * another claimed it.  One thread. */
__device__ bool gpufs_posted_claim_frame(const struct gpufs_dev *d, uint32_t f, uint64_t *t);
__device__ __forceinline__ bool gpufs_post_claim_frame(const struct gpufs_dev *d, uint32_t f,
                                                       uint64_t *t)
{
  return d->ra.async && gpufs_posted_claim_frame(d, f, t);
}

/* Finish claimed ticket t's load into frame f alone: wait for the host,
 * copy the bytes, publish the frame VALID (or failed), drop the poster's
 * pin and budget, hand the slot on.  The caller must hold no slot of a
 * ticket newer than t that it has not posted (t's answer may wait for
 * it).  One thread. */
__device__ void gpufs_post_finish(const struct gpufs_dev *d, uint64_t t, uint32_t f);


/* A claimed load's end, once frame f holds the host's res bytes (the
 * copier's writes made visible to the caller, as a round's fence and
 * barrier do) or res is the load's error: publish f VALID (or failed),
 * release ticket t's slot if owned (not at a stop), drop the poster's pin
 * and budget.  One thread. */
__device__ void gpufs_post_settle(const struct gpufs_dev *d, uint64_t t, uint32_t f, int64_t res,
                                  bool owned);

/* gpufs_q_wait_free for the device's producers: waits until ticket t owns
 * its slot, finishing a posted load that holds the slot meanwhile.  0, or
 * -ESHUTDOWN once stopped.  One thread. */
__device__ int gpufs_posted_wait_free(const struct gpufs_dev *d, uint64_t t);
__device__ __forceinline__ int gpufs_post_wait_free(const struct gpufs_dev *d, uint64_t t)
{
  return d->ra.async ? gpufs_posted_wait_free(d, t) : gpufs_q_wait_free(&d->q, t);
}

/* gpufs_frame_wait for a round's waiting pages (GPUFS_SRC_WAIT): waits
 * while pinned frame f loads, finishing its load if a posted one that
 * nobody claimed holds it.  0 when VALID, the load's error, or
 * -ESHUTDOWN.  One thread. */
__device__ int gpufs_posted_wait_frame(const struct gpufs_dev *d, uint32_t f);
__device__ __forceinline__ int gpufs_post_wait_frame(const struct gpufs_dev *d, uint32_t f)
{
  if (d->ra.async) return gpufs_posted_wait_frame(d, f);
  const uint32_t *stop = gpufs_q_stop_word(&d->q, gpufs_q_stop_key_here());
  return gpufs_frame_wait(&d->cache, f, stop, GPUFS_Q_STOPPED);
}

#endif /* GPUFS_DEVICE_POST_CUH */
