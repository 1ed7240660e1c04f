/*
 * queue.h - the request queue between GPU groups and host workers.
 *
 * Layout: an array of nslots request slots and one header, both in pinned,
 * GPU-mapped host memory, plus in device memory one word per slot
 * (free_seq) and the ticket counter (tail).  Each slot
 * owns `stride` bytes of staging (stride == page size): slot i's bytes start
 * at staging + i * stride, so consecutive slots have adjacent staging and a
 * worker can serve a run of page requests with one pread and one copy.
 *
 * Protocol: a bounded MPMC sequence queue (after Vyukov), with tickets.
 *
 *   GPU group (producer)                        host worker (consumer)
 *   t = tail += k          (device atomic)
 *   wait free_seq[t%N] == t  (acquire, dev) <-+
 *   gpufs_q_fill, payload bytes               |   h = host_head
 *   req_seq = t+1          (release, sys) ----+-> sees req_seq == h+1 (acquire)
 *                                             |   CAS host_head h -> h+k
 *                                             |   gpufs_q_read_req
 *                                             |   pread into staging, copy
 *                                             |   gpufs_q_put_reply
 *   wait done_seq == t+1   (acquire, sys) <---+-- done_seq = t+1 (release)
 *   gpufs_q_read_reply, staging out           |
 *   free_seq[t%N] = t+N    (release, dev) ----+ (pairs with the wait of t+N)
 *
 * The header's state (RUNNING, STOPPED) is copied into every slot's stop
 * word (gpufs_q_set_state); GPU waits read a copy, never the header: many
 * waiters reading one host word serialize on its line and starve the link
 * (gpufs_q_stop_word).
 *
 * Only stores and loads cross PCIe: no read-modify-write touches host memory
 * from the GPU.  Everything a producer needs is copied out of the slot before
 * free_seq releases it (the original GPUfs hung by reading a slot it had
 * already given back).  A group never holds more than N tickets, so every
 * wait is for a strictly lower ticket and the queue cannot deadlock.
 *
 * Every request is a struct gpufs_req, written into its slot by the one
 * filler gpufs_q_fill; gpufs_q_call runs a single request through all the
 * steps above (the device calls' path to the host, and the CPU test
 * client's).  Page reads and write-backs reserve runs of tickets and run
 * the steps themselves, filling with gpufs_q_fill too.
 */
#ifndef GPUFS_COMMON_QUEUE_H
#define GPUFS_COMMON_QUEUE_H

#include <stdint.h>
#include "libgpufs/common/atomics.h"
#include "libgpufs/common/debug.h"
#include <gpufs/errors.h>

enum gpufs_op {
  GPUFS_OP_NONE = 0,
  GPUFS_OP_OPEN = 1,  /* path in staging; arg = flags, offset = mode.
                         result hfid; out[0] size, out[1] cid, out[2] version,
                         out[3] the registered mapping (gpufs_reg_word) or 0 */
  GPUFS_OP_CLOSE = 2, /* hfid. result 0 or -errno */
  GPUFS_OP_READ = 3,  /* hfid, offset, len. result bytes in staging, or -errno */
  GPUFS_OP_FSTAT = 4, /* hfid. out[0] size, out[1] mode, out[2] mtime ns, out[3] ino */
  GPUFS_OP_WRITE = 5, /* hfid, offset, len (<= stride); the bytes in staging.
                         result bytes written (len) or -errno */
  GPUFS_OP_FSYNC = 6, /* hfid. result 0 or -errno */
  GPUFS_OP_TRUNCATE = 7, /* hfid, offset = the new length. result 0 or -errno;
                            out[0] the file's new version */
  GPUFS_OP_UNLINK = 8, /* path in staging, len = its length. result 0 or -errno */
  GPUFS_OP_FADVISE = 9 /* hfid, offset, len (0: to the end of the file), arg =
                          advice (POSIX_FADV_*). result 0 or -errno */
};

/* OPEN's out[3]: where a registered file (gpufs_register) is mapped for the
 * GPU, and how much of it: the mapping's address >> 12 in the high 36 bits
 * (user addresses are below 2^48 and 4 KiB aligned), the registered length
 * in whole 4 KiB units in the low 28 (below 1 TiB: gpufs_register refuses
 * more).  0: not registered. */
#define GPUFS_REG_LEN_BITS 28
#define GPUFS_REG_MAX_BYTES ((((uint64_t)1 << GPUFS_REG_LEN_BITS) - 1) << 12)

GPUFS_HD uint64_t gpufs_reg_word(uint64_t addr, uint64_t len)
{
  return (addr >> 12) << GPUFS_REG_LEN_BITS | (len >> 12);
}

/* The mapping's address, and the bytes from it that may be read (a multiple
 * of 4 KiB: the file's size at registration, rounded down). */
GPUFS_HD uint64_t gpufs_reg_addr(uint64_t w) { return (w >> GPUFS_REG_LEN_BITS) << 12; }
GPUFS_HD uint64_t gpufs_reg_len(uint64_t w)
{
  return (w & (((uint64_t)1 << GPUFS_REG_LEN_BITS) - 1)) << 12;
}

enum gpufs_qstate {
  GPUFS_Q_RUNNING = 1,
  GPUFS_Q_STOPPED = 2 /* set by gpufs_stop: every waiting GPU call gives up */
};

struct gpufs_slot {
  uint64_t req_seq;  /* ticket+1 once posted: GPU release, host acquire */
  uint64_t done_seq; /* ticket+1 once served: host release, GPU acquire */
  uint32_t op;       /* enum gpufs_op */
  int32_t hfid;      /* host file index */
  uint64_t offset;   /* file offset (READ), mode (OPEN) */
  uint32_t len;      /* bytes asked (READ), path length (OPEN) */
  uint32_t arg;      /* open flags */
  int64_t result;    /* >= 0 on success, else -errno */
  uint64_t out[4];   /* op-specific results, see enum gpufs_op */
  uint32_t stop;     /* a copy of hdr->state, host writes (gpufs_q_set_state):
                        the stop word of the waits whose key is this slot */
  uint32_t pad32;
  uint64_t pad[5];
};

/* One request as its producer gives it: the fields of a slot that
 * gpufs_q_fill writes and gpufs_q_read_req copies out (what each field
 * means for each op: enum gpufs_op).  Every producer (the device calls, the
 * CPU test client) and the daemon use it. */
struct gpufs_req {
  uint32_t op;     /* enum gpufs_op */
  int32_t hfid;    /* host file index */
  uint64_t offset; /* file offset; OPEN: mode; TRUNCATE: the new length */
  uint32_t len;    /* bytes; OPEN, UNLINK: the path's length */
  uint32_t arg;    /* OPEN: flags; FADVISE: advice */
};

/* The host's answer to one request: a slot's result fields. */
struct gpufs_reply {
  int64_t result;  /* >= 0 on success, else -errno */
  uint64_t out[4]; /* op-specific, see enum gpufs_op */
};

struct gpufs_queue_hdr {
  uint64_t host_head; /* next ticket a worker claims; host threads only */
  uint32_t state;     /* enum gpufs_qstate: host writes and reads; the GPU
                         reads the slots' copies (gpufs_q_set_state) */
  uint32_t nslots;
  uint32_t stride;
  uint32_t pad0;
  uint64_t pad1[5];
};

#if defined(__cplusplus)
static_assert(sizeof(struct gpufs_slot) == 128, "slot layout is part of the ABI");
static_assert(sizeof(struct gpufs_queue_hdr) == 64, "header layout is part of the ABI");
static_assert(__builtin_offsetof(struct gpufs_slot, req_seq) == 0, "req_seq first");
static_assert(__builtin_offsetof(struct gpufs_slot, done_seq) == 8, "done_seq second");
static_assert(__builtin_offsetof(struct gpufs_slot, result) == 40, "result at 40");
static_assert(__builtin_offsetof(struct gpufs_slot, stop) == 80, "stop in the old padding");
#else
_Static_assert(sizeof(struct gpufs_slot) == 128, "slot layout is part of the ABI");
_Static_assert(sizeof(struct gpufs_queue_hdr) == 64, "header layout is part of the ABI");
#endif

/* What a producer (a GPU group leader, or the CPU test client) holds. */
struct gpufs_queue_ref {
  struct gpufs_slot *slots;    /* mapped host slots */
  struct gpufs_queue_hdr *hdr; /* mapped host header */
  uint64_t *tail;              /* next ticket (device memory) */
  uint64_t *free_seq;          /* per slot: the ticket it is free for (device memory) */
  uint8_t *staging;            /* mapped host staging: served bytes, request payloads (paths) */
  uint32_t nslots;
  uint32_t stride;
  uint32_t poll_max_ns;        /* longest pause between two polls of the host (device) */
  uint32_t pad;
};

/* Waits look at the stop flag, which lies in host memory, only every
 * GPUFS_STOP_CHECK polls: each look is a read across PCIe, and thousands of
 * waiting groups compete with the data for the link. */
#define GPUFS_STOP_CHECK 16u

GPUFS_HD uint32_t gpufs_q_index(const struct gpufs_queue_ref *q, uint64_t t)
{
  return (uint32_t)(t % q->nslots);
}

GPUFS_HD struct gpufs_slot *gpufs_q_slot(const struct gpufs_queue_ref *q, uint64_t t)
{
  return &q->slots[gpufs_q_index(q, t)];
}

/* Where a wait keyed `key` looks for the stop: the stop word of slot key mod
 * nslots, one of nslots copies of the state, each in its slot's line.  One
 * word read by every waiting group was measured to take the link down: on
 * an H100, 1,056 warps reading one host word (about 1 M reads/s, however
 * slowly each polled) cut kernels' reads of pinned host memory from 51 to
 * 5.6 GB/s, while 27 M reads/s of 1,056 different lines cost 2%
 * (bench/probes/pull_probe.cu; docs/design.md 5, "One stop word per slot").  Waits for a ticket
 * key it by the ticket, whose slot's line the waiter reads anyway; other
 * waits by where they run (gpufs_q_stop_key_here, device). */
GPUFS_HD const uint32_t *gpufs_q_stop_word(const struct gpufs_queue_ref *q, uint64_t key)
{
  return &q->slots[key % q->nslots].stop;
}

GPUFS_HD int gpufs_q_stopped(const struct gpufs_queue_ref *q, uint64_t key)
{
  /* relaxed: a plain signal; nothing is published with it */
  return gpufs_ld_relaxed_u32_sys((uint32_t *)gpufs_q_stop_word(q, key)) == GPUFS_Q_STOPPED;
}

/* Set the queue's state (enum gpufs_qstate) in its header and in every
 * slot's stop word.  Host only (the daemon, the tests' queues).  Relaxed,
 * as the state is: the callers say what orders it. */
GPUFS_HD void gpufs_q_set_state(struct gpufs_queue_hdr *hdr, struct gpufs_slot *slots,
                                uint32_t nslots, uint32_t state)
{
  for (uint32_t i = 0; i < nslots; i++) gpufs_st_relaxed_u32_sys(&slots[i].stop, state);
  gpufs_st_relaxed_u32_sys(&hdr->state, state);
}

/* Forget every ticket the slots have seen (req_seq and done_seq 0), for a
 * queue made new after a stop (gpufs_daemon_resume): producers that gave
 * up with -ESHUTDOWN left tickets no one will post.  Host only, with no
 * producer and no worker on the queue; the producers' side (tail 0,
 * free_seq[i] = i) is its owner's to reset.  Relaxed: the workers started
 * after it are ordered by pthread_create, the GPUs by the kernel launches
 * that follow. */
GPUFS_HD void gpufs_q_forget_tickets(struct gpufs_slot *slots, uint32_t nslots)
{
  for (uint32_t i = 0; i < nslots; i++) {
    gpufs_st_relaxed_u64_sys(&slots[i].req_seq, 0);
    gpufs_st_relaxed_u64_sys(&slots[i].done_seq, 0);
  }
}

/* Take k consecutive tickets (k <= nslots).  Relaxed: the ticket orders
 * nothing by itself; free_seq does. */
GPUFS_HD uint64_t gpufs_q_reserve(const struct gpufs_queue_ref *q, uint32_t k)
{
  GPUFS_DEBUG_ASSERT(k >= 1 && k <= q->nslots, "queue_reserve_of_one_to_nslots_tickets");
  return gpufs_add_relaxed_u64_dev(q->tail, (uint64_t)k);
}

/* What gpufs_q_wait_free_some returns when the slot is still held after
 * its polls (an errno is negative, owning the slot is 0). */
#define GPUFS_Q_STILL_HELD 1

/* Wait until ticket t owns its slot, at most max_polls polls (0: no
 * limit), pausing from *ns on (the caller's, kept across calls: 64 at
 * first).  0, -ESHUTDOWN once stopped, or GPUFS_Q_STILL_HELD after
 * max_polls polls (a waiter that may finish the slot's posted load in
 * between: device/post.cu). */
GPUFS_HD int gpufs_q_wait_free_some(const struct gpufs_queue_ref *q, uint64_t t,
                                    uint32_t max_polls, uint32_t *ns)
{
  uint32_t polls = 0;
  uint64_t *seq = &q->free_seq[gpufs_q_index(q, t)];
  /* spin relaxed (an acquire load costs an L1 invalidation on the GPU) */
  while (gpufs_ld_relaxed_u64_dev(seq) != t) {
    if (++polls % GPUFS_STOP_CHECK == 0 && gpufs_q_stopped(q, t)) return -GPUFS_ESHUTDOWN;
    if (max_polls != 0 && polls >= max_polls) return GPUFS_Q_STILL_HELD;
    gpufs_pause(ns, 2048);
  }
  /* acquire: pairs with gpufs_q_release of ticket t - nslots, so that
   * producer's reads of the slot and its staging are finished before ours
   * (and the host's next writes) begin; only ticket t's owner moves the
   * word on, so it still holds t */
  (void)gpufs_ld_acquire_u64_dev(seq);
  return 0;
}

/* Wait until ticket t owns its slot.  0, or -ESHUTDOWN once stopped. */
GPUFS_HD int gpufs_q_wait_free(const struct gpufs_queue_ref *q, uint64_t t)
{
  uint32_t ns = 64;
  return gpufs_q_wait_free_some(q, t, 0, &ns);
}

/* Hand the filled slot of ticket t to the host. */
GPUFS_HD void gpufs_q_post(const struct gpufs_queue_ref *q, uint64_t t)
{
  /* relaxed: the slot's last ticket, read only by the check */
  GPUFS_DEBUG_ASSERT(gpufs_ld_relaxed_u64_sys(&gpufs_q_slot(q, t)->req_seq) < t + 1,
                     "queue_post_once_per_ticket");
  /* release, system scope: publishes the slot's fields and its staging
   * payload; pairs with the acquire load of req_seq in gpufs_q_claim */
  gpufs_st_release_u64_sys(&gpufs_q_slot(q, t)->req_seq, t + 1);
}

/* Wait until the host served ticket t.  0, or -ESHUTDOWN once stopped. */
GPUFS_HD int gpufs_q_wait_done(const struct gpufs_queue_ref *q, uint64_t t)
{
  uint32_t ns = 128, polls = 0;
  uint64_t *done = &gpufs_q_slot(q, t)->done_seq;
  /* spin relaxed: thousands of waiting groups must not invalidate their
   * SMs' L1 at every poll */
  while (gpufs_ld_relaxed_u64_sys(done) != t + 1) {
    if (++polls % GPUFS_STOP_CHECK == 0 && gpufs_q_stopped(q, t)) return -GPUFS_ESHUTDOWN;
    gpufs_pause(&ns, q->poll_max_ns);
  }
  /* acquire, system scope: pairs with the release in gpufs_q_complete, so
   * the result fields and the staging bytes are visible after it; the word
   * keeps t + 1 until this producer releases the slot */
  (void)gpufs_ld_acquire_u64_sys(done);
  return 0;
}

/* Give the slot of ticket t to ticket t + nslots.  Call only after every
 * read of the slot and of its staging is done. */
GPUFS_HD void gpufs_q_release(const struct gpufs_queue_ref *q, uint64_t t)
{
  /* relaxed: only ticket t's owner moves the word on (gpufs_q_wait_free) */
  GPUFS_DEBUG_ASSERT(gpufs_ld_relaxed_u64_dev(&q->free_seq[gpufs_q_index(q, t)]) == t,
                     "queue_release_by_the_tickets_owner");
  /* release: publishes that this producer is finished with the slot and its
   * staging; pairs with the acquire in gpufs_q_wait_free of ticket t + N */
  gpufs_st_release_u64_dev(&q->free_seq[gpufs_q_index(q, t)], t + q->nslots);
}

/* Fill the request fields of the slot of a ticket this producer owns
 * (gpufs_q_wait_free returned 0).  The one slot filler of every operation.
 * Relaxed, system scope: gpufs_q_post's release publishes them. */
GPUFS_HD void gpufs_q_fill(struct gpufs_slot *s, const struct gpufs_req *r)
{
  gpufs_st_relaxed_u32_sys(&s->op, r->op);
  gpufs_st_relaxed_u32_sys((uint32_t *)&s->hfid, (uint32_t)r->hfid);
  gpufs_st_relaxed_u64_sys(&s->offset, r->offset);
  gpufs_st_relaxed_u32_sys(&s->len, r->len);
  gpufs_st_relaxed_u32_sys(&s->arg, r->arg);
}

/* Copy the answer out of the slot of a served ticket (gpufs_q_wait_done
 * returned 0).  Relaxed, system scope: that wait's acquire ordered them. */
GPUFS_HD void gpufs_q_read_reply(struct gpufs_slot *s, struct gpufs_reply *out)
{
  out->result = gpufs_ld_relaxed_i64_sys(&s->result);
  for (int i = 0; i < 4; i++) out->out[i] = gpufs_ld_relaxed_u64_sys(&s->out[i]);
}

/* gpufs_q_call's steps from a ticket t whose slot the caller owns
 * (gpufs_q_wait_free returned 0): the device's calls wait for the slot
 * their own way (device/post.cu), then go on here. */
GPUFS_HD int64_t gpufs_q_call_owned(const struct gpufs_queue_ref *q, uint64_t t,
                                    const struct gpufs_req *r, const void *payload,
                                    uint32_t payload_len, struct gpufs_reply *out)
{
  int rc;
  struct gpufs_slot *s = gpufs_q_slot(q, t);
  uint8_t *stage = q->staging + (uint64_t)gpufs_q_index(q, t) * q->stride;
  const uint8_t *p = (const uint8_t *)payload;
  for (uint32_t i = 0; i < payload_len; i++) stage[i] = p[i];
  gpufs_q_fill(s, r);
  gpufs_q_post(q, t);
  rc = gpufs_q_wait_done(q, t);
  if (rc) return rc;
  gpufs_q_read_reply(s, out);
  gpufs_q_release(q, t);
  return out->result;
}

/* One request, start to end: take a ticket, wait for its slot, copy
 * payload_len bytes of payload into the slot's host staging (OPEN, UNLINK:
 * the path with its NUL), fill, post, wait for the host, copy the answer to
 * *out, release.  Returns out->result, or -ESHUTDOWN once stopped (then
 * *out is untouched and the slot is never given back: a worker may still
 * write it).  One thread; payload_len <= stride. */
GPUFS_HD int64_t gpufs_q_call(const struct gpufs_queue_ref *q, const struct gpufs_req *r,
                              const void *payload, uint32_t payload_len,
                              struct gpufs_reply *out)
{
  uint64_t t = gpufs_q_reserve(q, 1);
  int rc = gpufs_q_wait_free(q, t);
  if (rc) return rc;
  return gpufs_q_call_owned(q, t, r, payload, payload_len, out);
}

/* ---- consumer side (host workers) ---- */

/* The most tickets one claim takes when the tickets past its max continue
 * one READ or WRITE run (gpufs_q_claim). */
#define GPUFS_Q_RUN_MAX 64u

/* Posted slot b continues the READ or WRITE run that slot a ends: the same
 * op on the same file, b's bytes right after a's.  Relaxed loads: the
 * caller acquired both req_seqs first, but has not claimed the slots yet
 * (another worker may claim, serve and hand them on meanwhile; then the
 * caller's claim fails and what it read here is dropped). */
GPUFS_HD int gpufs_q_continues(struct gpufs_slot *a, struct gpufs_slot *b)
{
  const uint32_t op = gpufs_ld_relaxed_u32_sys(&a->op);
  const uint32_t len = gpufs_ld_relaxed_u32_sys(&a->len);
  return (op == GPUFS_OP_READ || op == GPUFS_OP_WRITE) && len > 0 &&
         gpufs_ld_relaxed_u32_sys(&b->op) == op &&
         gpufs_ld_relaxed_u32_sys((uint32_t *)&b->hfid) ==
             gpufs_ld_relaxed_u32_sys((uint32_t *)&a->hfid) &&
         gpufs_ld_relaxed_u64_sys(&b->offset) == gpufs_ld_relaxed_u64_sys(&a->offset) + len;
}

/* Claim up to max consecutive posted tickets, and past max up to run_max
 * (>= max) while each next posted ticket continues the run of the last
 * (gpufs_q_continues): a run of pages a group posted at once is served by
 * one worker in one host call, not cut at max.  Returns how many (0 if
 * none is posted at the head) and the first ticket in *first.  Runs never
 * wrap around the end of the slot array, so their staging is contiguous. */
GPUFS_HD uint32_t gpufs_q_claim(struct gpufs_queue_hdr *hdr, struct gpufs_slot *slots,
                                uint32_t nslots, uint32_t max, uint32_t run_max,
                                uint64_t *first)
{
  for (;;) {
    /* relaxed: host_head only hands out tickets; the slot contents are
     * ordered by the acquire of req_seq below */
    uint64_t h = gpufs_ld_relaxed_u64_sys(&hdr->host_head);
    uint32_t k = 0;
    uint32_t room = nslots - (uint32_t)(h % nslots);
    /* clamp per try: a try that lost the CAS near the end of the array must
     * not shrink the batch of the next try, which may start anywhere */
    uint32_t lim = max < room ? max : room;
    uint32_t rlim = run_max < room ? run_max : room;
    /* acquire: pairs with gpufs_q_post; the fields and payload of each
     * counted slot are visible to this worker */
    while (k < lim && gpufs_ld_acquire_u64_sys(&slots[(h + k) % nslots].req_seq) == h + k + 1)
      k++;
    /* acquire, as above, before the fields of slot h + k are read */
    while (k == lim && k > 0 && lim < rlim &&
           gpufs_ld_acquire_u64_sys(&slots[(h + k) % nslots].req_seq) == h + k + 1 &&
           gpufs_q_continues(&slots[(h + k - 1) % nslots], &slots[(h + k) % nslots])) {
      k++;
      lim++;
    }
    if (k == 0) return 0;
    /* acq_rel: the release orders this worker's reads of the claimed slots
     * before another worker can see the new head; the acquire pairs with the
     * previous claimer's release, so heads move on in one order */
    if (gpufs_cas_acqrel_u64_sys(&hdr->host_head, &h, h + k)) {
      *first = h;
      return k;
    }
  }
}

/* Copy the request fields of a claimed slot.  Plain loads: gpufs_q_claim's
 * acquire of req_seq made them visible, and the producer writes them again
 * only after gpufs_q_complete. */
GPUFS_HD void gpufs_q_read_req(const struct gpufs_slot *s, struct gpufs_req *r)
{
  r->op = s->op;
  r->hfid = s->hfid;
  r->offset = s->offset;
  r->len = s->len;
  r->arg = s->arg;
}

/* Write the answer into a claimed slot.  Plain stores: gpufs_q_complete's
 * release publishes them. */
GPUFS_HD void gpufs_q_put_reply(struct gpufs_slot *s, const struct gpufs_reply *r)
{
  s->result = r->result;
  for (int i = 0; i < 4; i++) s->out[i] = r->out[i];
}

/* Finish ticket t: its result fields and staging bytes are in place. */
GPUFS_HD void gpufs_q_complete(struct gpufs_slot *s, uint64_t t)
{
  /* relaxed: the claim's acquire ordered req_seq; done_seq is ours */
  GPUFS_DEBUG_ASSERT(gpufs_ld_relaxed_u64_sys(&s->req_seq) == t + 1 &&
                         gpufs_ld_relaxed_u64_sys(&s->done_seq) < t + 1,
                     "queue_complete_of_a_posted_ticket");
  /* release, system scope: publishes result, out[] and the staging bytes;
   * pairs with the acquire in gpufs_q_wait_done */
  gpufs_st_release_u64_sys(&s->done_seq, t + 1);
}

#endif /* GPUFS_COMMON_QUEUE_H */
