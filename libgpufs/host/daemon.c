/*
 * daemon.c - host workers that serve the request queues (see queue.h).
 *
 * One daemon serves every queue of the process (one per libgpufs instance),
 * with one host file table.  Any worker serves any request of any queue:
 * each loops over the queues, trying gpufs_q_claim on each in turn from a
 * rotating start (the queue after the one it served last), so a busy queue
 * never starves the others, and it idles only when no queue had work.  A
 * claim hands it a run of consecutive posted tickets of one queue that never
 * wraps around the slot array, so the run's staging is one contiguous span.
 * A run is served in two steps, and only the second one touches a slot the
 * GPU may reuse:
 *
 *   slots[s..s+k)  --gpufs_q_read_req-->  tickets[0..k)   (the worker's own memory)
 *       serve them, each by its op's row of op_table: reads and writes
 *       merged where they are contiguous (fileops.c), opens, closes, stats
 *   then, per ticket: gpufs_q_put_reply into the slot, gpufs_q_complete
 *
 * Batching is opportunistic: a worker takes what is posted and never waits
 * for more.  An idle worker spins a little (low latency under load), then
 * naps (an idle daemon costs next to no CPU).
 */
#include "libgpufs/host/daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nvtx3/nvToolsExt.h>

#include "libgpufs/host/daemon_priv.h"

_Static_assert(GPUFS_DAEMON_MAX_QUEUES <= GPUFS_HOSTFILES_MAX_QUEUES,
               "hostfiles tells every queue's opens apart");

#define IDLE_SPINS 2048u     /* sched_yield polls before an idle worker naps */
#define IDLE_NAP_NS 50000L   /* then it polls every 50 us */

enum gate {
  GATE_WAIT = 0,  /* workers wait until every worker_init has answered */
  GATE_SERVE = 1,
  GATE_ABORT = 2  /* some worker_init failed: leave without serving */
};


/* ---- serving one claimed run ---- */

/* One operation's server: it serves tickets t[0..n) of a run, the first in
 * slot s of fo's queue, and fills in their results and out[].  n is 1 but
 * for an op whose row merges. */
typedef void (*serve_fn)(const struct gpufs_fileops *fo, struct gpufs_ticket *t, uint32_t n,
                         uint32_t s, struct gpufs_daemon_stats *acc);

/* Every operation the daemon serves but READ (serve_run gives READ runs to
 * gpufs_serve_read_run, with the batch's pin): a new one is one
 * row.  merges: the op's consecutive page tickets are served together
 * (gpufs_merge_len).  An op without a row (or GPUFS_OP_NONE) gets
 * -ENOSYS. */
static const struct {
  serve_fn serve;
  int merges;
} op_table[] = {
    [GPUFS_OP_OPEN] = {gpufs_serve_open, 0},
    [GPUFS_OP_CLOSE] = {gpufs_serve_close, 0},
    [GPUFS_OP_FSTAT] = {gpufs_serve_fstat, 0},
    [GPUFS_OP_WRITE] = {gpufs_serve_writes, 1},
    [GPUFS_OP_FSYNC] = {gpufs_serve_fsync, 0},
    [GPUFS_OP_TRUNCATE] = {gpufs_serve_truncate, 0},
    [GPUFS_OP_UNLINK] = {gpufs_serve_unlink, 0},
    [GPUFS_OP_FADVISE] = {gpufs_serve_fadvise, 0},
};

/* Serve the tickets from t[0] that one server call takes; how many. */
static uint32_t serve_op(const struct gpufs_fileops *fo, struct gpufs_ticket *t, uint32_t avail,
                         uint32_t s, struct gpufs_daemon_stats *acc)
{
  const uint32_t op = t[0].req.op;
  if (op >= sizeof(op_table) / sizeof(op_table[0]) || !op_table[op].serve) {
    t[0].reply.result = -GPUFS_ENOSYS;
    return 1;
  }
  const uint32_t n = op_table[op].merges ? gpufs_merge_len(t, avail, fo->stride) : 1;
  op_table[op].serve(fo, t, n, s, acc);
  return n;
}

/* Publish the results of tickets [from, to) of a run of queue qi; returns
 * to.  The worker's counters are flushed first, so a client that sees a
 * completion also sees it counted. */
static uint32_t complete_tickets(struct worker *w, uint32_t qi, const struct gpufs_ticket *t,
                                 uint32_t s, uint64_t first, uint32_t from, uint32_t to,
                                 struct gpufs_daemon_stats *acc)
{
  struct gpufs_slot *slots = w->d->queues[qi].q->slots;
  for (uint32_t r = from; r < to; r++) {
    if (t[r].reply.result < 0) acc->errors++;
    gpufs_q_put_reply(&slots[s + r], &t[r].reply);
  }
  gpufs_daemon_stats_flush(w, qi, acc);
  memset(acc, 0, sizeof(*acc));
  /* After this the slots and their staging are the GPU's again: not touched. */
  for (uint32_t r = from; r < to; r++) gpufs_q_complete(&slots[s + r], first + r);
  return to;
}

static void idle_wait(uint32_t *idle)
{
  if (*idle < IDLE_SPINS) {
    (*idle)++;
    sched_yield();
    return;
  }
  struct timespec nap = {0, IDLE_NAP_NS};
  nanosleep(&nap, NULL);
}

/* A CLOSE at ticket t of queue qi waits until every other worker's run
 * there that began before t is served: a READ claimed before the CLOSE may
 * still be on its way to its pread (a GPU group that posted readahead
 * (readahead_async) does not wait for it before it closes the file), and
 * once the CLOSE freed the entry a new OPEN may take the hfid for another
 * file.  Runs are claimed in ticket order, so the runs before t are all
 * claimed by now; a worker waits here only for runs below its own, so no
 * two wait for each other.  Gives up at a stop. */
static void close_after_earlier(const struct worker *w, uint32_t qi, uint64_t t)
{
  struct gpufs_daemon *d = w->d;
  for (uint32_t i = 0; i < d->p.nthreads; i++) {
    struct worker *o = &d->workers[i];
    if (o == w) continue;
    uint32_t idle = 0;
    /* acquire: pairs with the release that ends the other's run (its
     * preads and unpins are done before we close) */
    while (gpufs_ld_acquire_u64_dev(&o->run_first[qi]) < t &&
           !gpufs_ld_relaxed_u32_dev(&d->stop))
      idle_wait(&idle);
  }
}

/* Open the NVTX range "gpufs batch" of a run of k requests (its payload),
 * which Nsight Systems shows on the worker's thread (docs/api.md, "NVTX
 * ranges"); nvtxRangePop closes it. */
static void batch_range_push(uint32_t k)
{
  nvtxEventAttributes_t range = {0};
  range.version = NVTX_VERSION;
  range.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  range.messageType = NVTX_MESSAGE_TYPE_ASCII;
  range.message.ascii = "gpufs batch";
  range.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
  range.payload.ullValue = k;
  nvtxRangePushEx(&range);
}

/* Serve the k tickets from first that the worker claimed on queue qi. */
static void serve_run(struct worker *w, uint32_t qi, uint64_t first, uint32_t k)
{
  batch_range_push(k);
  const uint64_t t0 = gpufs_daemon_now_ns();
  const struct served *sv = &w->d->queues[qi];
  const struct gpufs_fileops *fo = &sv->fo;
  const struct gpufs_slot *slots = sv->q->slots;
  struct gpufs_ticket *t = w->tickets;
  uint32_t s = (uint32_t)(first % sv->q->nslots);
  struct gpufs_daemon_stats acc = {0};
  acc.batches = 1;
  acc.requests = k;

  for (uint32_t r = 0; r < k; r++) {
    gpufs_q_read_req(&slots[s + r], &t[r].req);
    t[r].reply = (struct gpufs_reply){0};
  }
  /* A ticket is completed as soon as its own read is done, so the GPU
   * starts copying while the worker reads the rest of the run. */
  uint32_t done = 0;
  struct gpufs_pin pin = GPUFS_PIN_NONE;
  for (uint32_t r = 0; r < k;) {
    gpufs_st_relaxed_u32_dev(&w->busy_queue, qi);
    gpufs_st_relaxed_u32_dev(&w->busy_slot, s + r);
    gpufs_st_relaxed_u32_dev(&w->busy_op, t[r].req.op);
    if (t[r].req.op != GPUFS_OP_READ) {
      gpufs_pin_drop(fo, &pin); /* fileops.h: no READ pin across other ops */
      if (t[r].req.op == GPUFS_OP_CLOSE) close_after_earlier(w, qi, first + r);
      r += serve_op(fo, &t[r], k - r, s + r, &acc);
    } else {
      r += gpufs_serve_read_run(fo, &t[r], k - r, s + r, &acc, &pin);
    }
    gpufs_st_relaxed_u32_dev(&w->busy_op, GPUFS_OP_NONE);
    done = complete_tickets(w, qi, t, s, first, done, r, &acc);
  }
  gpufs_pin_drop(fo, &pin);
  struct gpufs_daemon_stats busy = {0};
  busy.busy_ns = gpufs_daemon_now_ns() - t0;
  gpufs_daemon_stats_flush(w, qi, &busy);
  nvtxRangePop();
}

/* ---- workers ---- */

/* Claim a run from the first queue with posted work, trying them in turn
 * from w->next, and serve it; the queue after it is tried first next time,
 * so a worker visits every other queue before it comes back to a busy one.
 * 0 if no queue had work. */
static int serve_next(struct worker *w)
{
  struct gpufs_daemon *d = w->d;
  const uint32_t nq = d->p.nqueues;
  for (uint32_t n = 0; n < nq; n++) {
    const uint32_t qi = (w->next + n) % nq;
    const struct served *sv = &d->queues[qi];
    uint64_t first;
    /* relaxed: the claim's CAS (acq_rel) publishes it to a CLOSE that
     * claims after us (close_after_earlier) */
    gpufs_st_relaxed_u64_dev(&w->run_first[qi], 0);
    uint32_t k = gpufs_q_claim(sv->q->hdr, sv->q->slots, sv->q->nslots, sv->batch_max,
                               sv->run_max, &first);
    if (k == 0) {
      /* release: nothing of ours to publish; keeps the word's order */
      gpufs_st_release_u64_dev(&w->run_first[qi], UINT64_MAX);
      continue;
    }
    gpufs_st_relaxed_u64_dev(&w->run_first[qi], first);
    w->next = (qi + 1) % nq;
    serve_run(w, qi, first, k);
    /* release: the run's host calls and unpins are done; pairs with the
     * acquire in close_after_earlier */
    gpufs_st_release_u64_dev(&w->run_first[qi], UINT64_MAX);
    return 1;
  }
  return 0;
}

static void serve_loop(struct worker *w)
{
  struct gpufs_daemon *d = w->d;
  uint32_t idle = 0;
  /* relaxed: stop is a plain signal; what the worker did before it exits is
   * ordered for gpufs_daemon_stop by pthread_join */
  while (!gpufs_ld_relaxed_u32_dev(&d->stop)) {
    if (serve_next(w)) idle = 0;
    else idle_wait(&idle);
  }
}

static void *worker_main(void *arg)
{
  struct worker *w = arg;
  struct gpufs_daemon *d = w->d;
  int rc = d->p.worker_init ? d->p.worker_init(d->p.ctx, w->id) : 0;

  pthread_mutex_lock(&d->gate_lock);
  if (rc < 0 && d->init_rc == 0) d->init_rc = rc;
  d->ninit++;
  pthread_cond_broadcast(&d->gate_cond);
  while (d->gate == GATE_WAIT) pthread_cond_wait(&d->gate_cond, &d->gate_lock);
  int gate = d->gate;
  pthread_mutex_unlock(&d->gate_lock);

  if (rc < 0) return NULL;
  if (gate == GATE_SERVE) serve_loop(w);
  if (d->p.worker_fini) d->p.worker_fini(d->p.ctx, w->id);
  return NULL;
}

static void daemon_free(struct gpufs_daemon *d)
{
  if (d->workers)
    for (uint32_t i = 0; i < d->p.nthreads; i++) free(d->workers[i].tickets);
  free(d->workers);
  gpufs_hostfiles_destroy(d->files);
  pthread_cond_destroy(&d->gate_cond);
  pthread_mutex_destroy(&d->gate_lock);
  free(d);
}

static void open_gate(struct gpufs_daemon *d, int gate)
{
  pthread_mutex_lock(&d->gate_lock);
  d->gate = gate;
  pthread_cond_broadcast(&d->gate_cond);
  pthread_mutex_unlock(&d->gate_lock);
}

static int params_valid(const struct gpufs_daemon_params *p)
{
  if (!p || p->nqueues < 1 || p->nqueues > GPUFS_DAEMON_MAX_QUEUES) return 0;
  for (uint32_t i = 0; i < p->nqueues; i++) {
    const struct gpufs_daemon_queue *q = &p->queues[i];
    if (!q->hdr || !q->slots || !q->staging || q->nslots == 0 || q->stride == 0) return 0;
  }
  return p->nthreads > 0 && p->max_batch > 0 && p->max_open_files > 0 &&
         p->max_open_files <= (uint32_t)INT32_MAX;
}

/* Every queue's state, in its header and its slots' stop words
 * (gpufs_q_set_state); relaxed: see the callers. */
static void set_states_relaxed(const struct gpufs_daemon_params *p, uint32_t state)
{
  for (uint32_t i = 0; i < p->nqueues; i++)
    gpufs_q_set_state(p->queues[i].hdr, p->queues[i].slots, p->queues[i].nslots, state);
}

/* Start the workers and wait until each worker_init answered; then open
 * the gate: serve, or (some init failed) leave.  Every queue's host_head
 * is 0 and no run is served yet.  0, or -errno after joining what started.
 * Context: no worker of d runs (a start, or a resume after a pause). */
static int start_workers(struct gpufs_daemon *d)
{
  const struct gpufs_daemon_params *p = &d->p;
  d->nstarted = d->ninit = 0;
  d->init_rc = 0;
  d->gate = GATE_WAIT;
  /* relaxed, all: the workers are created below (pthread_create orders
   * these stores before them), and the GPUs are told RUNNING after that */
  gpufs_st_relaxed_u32_dev(&d->stop, 0);
  for (uint32_t i = 0; i < p->nqueues; i++) gpufs_st_relaxed_u64_sys(&p->queues[i].hdr->host_head, 0);
  for (uint32_t i = 0; i < p->nthreads; i++)
    for (uint32_t j = 0; j < GPUFS_DAEMON_MAX_QUEUES; j++) d->workers[i].run_first[j] = UINT64_MAX;
  int rc = 0;
  for (uint32_t i = 0; i < p->nthreads; i++) {
    struct worker *w = &d->workers[i];
    w->d = d;
    w->id = i;
    w->next = i % p->nqueues; /* workers start spread over the queues */
    int e = pthread_create(&w->thread, NULL, worker_main, w);
    if (e != 0) {
      rc = -e;
      break;
    }
    d->nstarted++;
  }
  if (rc == 0) {
    pthread_mutex_lock(&d->gate_lock);
    while (d->ninit < d->nstarted) pthread_cond_wait(&d->gate_cond, &d->gate_lock);
    rc = d->init_rc;
    pthread_mutex_unlock(&d->gate_lock);
  }
  open_gate(d, rc == 0 ? GATE_SERVE : GATE_ABORT);
  if (rc < 0) {
    for (uint32_t i = 0; i < d->nstarted; i++) pthread_join(d->workers[i].thread, NULL);
    d->nstarted = 0;
    return rc;
  }
  /* relaxed: the GPUs' waits read the state as a plain signal; the queues
   * they post to were made (or reset) before this call */
  set_states_relaxed(p, GPUFS_Q_RUNNING);
  return 0;
}

int gpufs_daemon_start(const struct gpufs_daemon_params *p, struct gpufs_daemon **out)
{
  if (!params_valid(p) || !out) return -GPUFS_EINVAL;
  struct gpufs_daemon *d = calloc(1, sizeof(*d));
  if (!d) return -GPUFS_ENOMEM;
  if (pthread_mutex_init(&d->gate_lock, NULL) != 0) {
    free(d);
    return -GPUFS_ENOMEM;
  }
  if (pthread_cond_init(&d->gate_cond, NULL) != 0) {
    pthread_mutex_destroy(&d->gate_lock);
    free(d);
    return -GPUFS_ENOMEM;
  }
  d->p = *p;
  if (p->io) d->io = *p->io;
  gpufs_io_defaults(&d->io);
  uint32_t tickets = 0; /* the largest run of any queue */
  for (uint32_t i = 0; i < p->nqueues; i++) {
    const uint32_t n = d->p.queues[i].nslots;
    d->queues[i].q = &d->p.queues[i];
    d->queues[i].batch_max = p->max_batch < n ? p->max_batch : n;
    d->queues[i].run_max = d->queues[i].batch_max > GPUFS_Q_RUN_MAX ? d->queues[i].batch_max
                           : GPUFS_Q_RUN_MAX < n                  ? GPUFS_Q_RUN_MAX
                                                                  : n;
    if (d->queues[i].run_max > tickets) tickets = d->queues[i].run_max;
  }
  d->workers = aligned_alloc(_Alignof(struct worker), p->nthreads * sizeof(struct worker));
  /* zeroed at once: daemon_free frees every worker's tickets */
  if (d->workers) memset(d->workers, 0, p->nthreads * sizeof(struct worker));
  int rc = d->workers ? gpufs_hostfiles_create(p->max_open_files, &d->io, &d->files)
                      : -GPUFS_ENOMEM;
  if (rc == 0) {
    for (uint32_t i = 0; i < p->nthreads && rc == 0; i++) {
      d->workers[i].tickets = calloc(tickets, sizeof(struct gpufs_ticket));
      if (!d->workers[i].tickets) rc = -GPUFS_ENOMEM;
    }
  }
  if (rc < 0) {
    daemon_free(d);
    return rc;
  }
  uint64_t staging_bytes = 0;
  for (uint32_t i = 0; i < p->nqueues; i++)
    staging_bytes += (uint64_t)p->queues[i].nslots * p->queues[i].stride;
  const enum gpufs_copy_stores stores = gpufs_filemap_stores(staging_bytes);
  for (uint32_t i = 0; i < p->nqueues; i++) {
    const struct gpufs_daemon_queue *q = &p->queues[i];
    d->queues[i].fo = (struct gpufs_fileops){.files = d->files,
                                             .io = &d->io,
                                             .staging = q->staging,
                                             .stride = q->stride,
                                             .stores = stores,
                                             .queue = i,
                                             .write_behind = p->write_behind,
                                             .pin_hint = p->pin_hint,
                                             .pin_ctx = p->pin_ctx};
  }
  if ((rc = start_workers(d)) < 0) {
    /* relaxed, as in start_workers: nothing was served */
    set_states_relaxed(p, GPUFS_Q_STOPPED);
    daemon_free(d);
    return rc;
  }
  *out = d;
  return 0;
}

/* What stuck worker w is inside, into why. */
static void describe_stuck(const struct gpufs_daemon *d, const struct worker *w, char *why,
                           size_t len)
{
  static const char *const names[] = {"", "open", "close", "read", "fstat", "write",
                                      "fsync", "truncate", "unlink", "fadvise"};
  const uint32_t op = gpufs_ld_relaxed_u32_dev((uint32_t *)&w->busy_op);
  const uint32_t qi = gpufs_ld_relaxed_u32_dev((uint32_t *)&w->busy_queue);
  const uint32_t s = gpufs_ld_relaxed_u32_dev((uint32_t *)&w->busy_slot);
  const char *name = op < sizeof(names) / sizeof(names[0]) ? names[op] : "?";
  if ((op == GPUFS_OP_OPEN || op == GPUFS_OP_UNLINK) && qi < d->p.nqueues) {
    const struct gpufs_daemon_queue *q = &d->p.queues[qi];
    const char *path = (const char *)q->staging + (uint64_t)s * q->stride;
    snprintf(why, len, "a daemon worker is still in %s(\"%.*s\")", name,
             (int)strnlen(path, q->stride), path);
  } else {
    snprintf(why, len, "a daemon worker is still in a host %s call", name[0] ? name : "file");
  }
}

/* Tell every waiter and worker to stop, and join the workers within
 * timeout_ms (0: no limit).  0: every worker left.  -ETIMEDOUT: the first
 * stuck worker is described in why; the stuck ones are detached. */
static int halt_workers(struct gpufs_daemon *d, uint32_t timeout_ms, char *why, size_t len)
{
  /* Relaxed: waiters read the state relaxed (gpufs_q_stopped, from the
   * slots' copies), so it publishes nothing to them: they only give up with
   * -ESHUTDOWN and must not read the slot afterwards. */
  set_states_relaxed(&d->p, GPUFS_Q_STOPPED);
  /* relaxed: a plain signal to the workers; the joins below order
   * everything they did before this thread reuses or frees their memory */
  gpufs_st_relaxed_u32_dev(&d->stop, 1);
  if (timeout_ms == 0) {
    for (uint32_t i = 0; i < d->nstarted; i++) pthread_join(d->workers[i].thread, NULL);
    return 0;
  }
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += timeout_ms / 1000;
  until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
  if (until.tv_nsec >= 1000000000L) {
    until.tv_sec++;
    until.tv_nsec -= 1000000000L;
  }
  uint32_t stuck = 0;
  for (uint32_t i = 0; i < d->nstarted; i++) {
    if (pthread_timedjoin_np(d->workers[i].thread, NULL, &until) == 0) continue;
    /* it holds d, its host file table and the queues: all stay */
    if (stuck++ == 0 && why) describe_stuck(d, &d->workers[i], why, len);
    pthread_detach(d->workers[i].thread);
  }
  return stuck ? -ETIMEDOUT : 0;
}

int gpufs_daemon_pause_within(struct gpufs_daemon *d, uint32_t timeout_ms, char *why, size_t len)
{
  if (!d) return 0;
  int rc = halt_workers(d, timeout_ms, why, len);
  if (rc == 0) d->nstarted = 0;
  return rc;
}

int gpufs_daemon_resume(struct gpufs_daemon *d)
{
  if (!d || d->nstarted != 0) return -GPUFS_EINVAL;
  return start_workers(d);
}

int gpufs_daemon_stop_within(struct gpufs_daemon *d, uint32_t timeout_ms, char *why, size_t len)
{
  if (!d) return 0;
  if (halt_workers(d, timeout_ms, why, len) != 0) return -ETIMEDOUT;
  daemon_free(d);
  return 0;
}

void gpufs_daemon_stop(struct gpufs_daemon *d) { gpufs_daemon_stop_within(d, 0, NULL, 0); }
