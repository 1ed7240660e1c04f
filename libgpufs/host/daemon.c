/*
 * daemon.c - host workers that serve the request queue (see queue.h).
 *
 * Any worker serves any request: each loops on gpufs_q_claim, which hands it
 * a run of consecutive posted tickets that never wraps around the slot array,
 * so the run's staging is one contiguous span.  A run is served in three
 * steps, and only the last one touches a slot the GPU may reuse:
 *
 *   slots[s..s+k)  --copy fields-->  tickets[0..k)   (the worker's own memory)
 *       serve them: reads and writes merged where they are contiguous
 *       (fileops.c), opens, closes, stats here
 *   DMA path: one to_device call for the span the run's READs filled
 *   then, per ticket: result and out[] into the slot, gpufs_q_complete
 *
 * Batching is opportunistic: a worker takes what is posted and never waits
 * for more.  An idle worker spins a little (low latency under load), then
 * naps (an idle daemon costs next to no CPU).
 */
#include "daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fileops.h"
#include "hostfiles.h"

#define IDLE_SPINS 2048u     /* sched_yield polls before an idle worker naps */
#define IDLE_NAP_NS 50000L   /* then it polls every 50 us */

enum gate {
  GATE_WAIT = 0,  /* workers wait until every worker_init has answered */
  GATE_SERVE = 1,
  GATE_ABORT = 2  /* some worker_init failed: leave without serving */
};


struct worker {
  /* Written by this worker only, with relaxed atomics; summed by
   * gpufs_daemon_get_stats.  Own cache line: workers do not share one. */
  _Alignas(64) struct gpufs_daemon_stats stats;
  struct gpufs_daemon *d;
  struct gpufs_req *tickets; /* room for one claimed run */
  pthread_t thread;
  uint32_t id;
  int init_rc;
};

struct gpufs_daemon {
  struct gpufs_daemon_params p;
  struct gpufs_io_ops io;
  struct gpufs_hostfiles *files;
  struct gpufs_fileops fo; /* files, io and staging for fileops.c */
  struct worker *workers;
  uint32_t nstarted;
  uint32_t stop; /* set once by gpufs_daemon_stop; atomics only */
  uint32_t batch_max; /* tickets one claim can return */
  pthread_mutex_t gate_lock;
  pthread_cond_t gate_cond;
  uint32_t ninit; /* workers whose worker_init answered; under gate_lock */
  int init_rc;    /* first worker_init error; under gate_lock */
  int gate;       /* enum gate; under gate_lock */
};


/* ---- statistics ---- */

static void stat_add(uint64_t *counter, uint64_t v)
{
  /* relaxed: a counter of one writer; readers only want a recent value */
  if (v) gpufs_st_relaxed_u64_dev(counter, gpufs_ld_relaxed_u64_dev(counter) + v);
}

static void stats_flush(struct worker *w, const struct gpufs_daemon_stats *a)
{
  stat_add(&w->stats.requests, a->requests);
  stat_add(&w->stats.batches, a->batches);
  stat_add(&w->stats.preads, a->preads);
  stat_add(&w->stats.merged, a->merged);
  stat_add(&w->stats.bytes_read, a->bytes_read);
  stat_add(&w->stats.transfers, a->transfers);
  stat_add(&w->stats.opens, a->opens);
  stat_add(&w->stats.pwrites, a->pwrites);
  stat_add(&w->stats.bytes_written, a->bytes_written);
  stat_add(&w->stats.errors, a->errors);
  stat_add(&w->stats.io_ns, a->io_ns);
  stat_add(&w->stats.busy_ns, a->busy_ns);
}

uint64_t gpufs_daemon_now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void gpufs_daemon_get_stats(struct gpufs_daemon *d, struct gpufs_daemon_stats *s)
{
  memset(s, 0, sizeof(*s));
  for (uint32_t i = 0; i < d->nstarted; i++) {
    struct gpufs_daemon_stats *c = &d->workers[i].stats;
    s->requests += gpufs_ld_relaxed_u64_dev(&c->requests);
    s->batches += gpufs_ld_relaxed_u64_dev(&c->batches);
    s->preads += gpufs_ld_relaxed_u64_dev(&c->preads);
    s->merged += gpufs_ld_relaxed_u64_dev(&c->merged);
    s->bytes_read += gpufs_ld_relaxed_u64_dev(&c->bytes_read);
    s->transfers += gpufs_ld_relaxed_u64_dev(&c->transfers);
    s->opens += gpufs_ld_relaxed_u64_dev(&c->opens);
    s->pwrites += gpufs_ld_relaxed_u64_dev(&c->pwrites);
    s->bytes_written += gpufs_ld_relaxed_u64_dev(&c->bytes_written);
    s->errors += gpufs_ld_relaxed_u64_dev(&c->errors);
    s->io_ns += gpufs_ld_relaxed_u64_dev(&c->io_ns);
    s->busy_ns += gpufs_ld_relaxed_u64_dev(&c->busy_ns);
  }
}

/* ---- serving one claimed run ---- */

static void serve_open(struct worker *w, struct gpufs_req *t, uint32_t s,
                       struct gpufs_daemon_stats *acc)
{
  struct gpufs_daemon *d = w->d;
  const char *path = gpufs_req_path(&d->fo, t, s);
  if (!path) return;
  struct gpufs_hostfile_id id;
  int hfid = gpufs_hostfiles_open(d->files, path, (int)t->arg, (mode_t)t->offset, &id);
  t->result = hfid;
  if (hfid < 0) return;
  t->out[0] = id.size;
  t->out[1] = id.cid;
  t->out[2] = id.version;
  acc->opens++;
}

static void serve_fstat(struct worker *w, struct gpufs_req *t)
{
  struct stat st;
  int rc = gpufs_hostfiles_fstat(w->d->files, t->hfid, &st);
  t->result = rc;
  if (rc < 0) return;
  t->out[0] = (uint64_t)st.st_size;
  t->out[1] = (uint64_t)st.st_mode;
  t->out[2] = (uint64_t)gpufs_timespec_ns(st.st_mtim);
  t->out[3] = (uint64_t)st.st_ino;
}

/* DMA path: one copy for the span from the first READ with bytes to the end
 * of the last one's.  Slots in between belong to this run too, so copying
 * their bytes is harmless, and one call costs less than several. */
static void transfer_run(struct worker *w, struct gpufs_req *t, uint32_t k, uint32_t s,
                         struct gpufs_daemon_stats *acc)
{
  struct gpufs_daemon *d = w->d;
  uint32_t lo = k, hi = 0;
  for (uint32_t r = 0; r < k; r++) {
    if (t[r].op == GPUFS_OP_READ && t[r].result > 0) {
      if (lo == k) lo = r;
      hi = r;
    }
  }
  if (lo == k) return;
  uint64_t off = (uint64_t)(s + lo) * d->p.stride;
  uint64_t end = (uint64_t)(s + hi) * d->p.stride + (uint64_t)t[hi].result;
  int rc = d->p.to_device(d->p.ctx, w->id, off, end - off);
  acc->transfers++;
  if (rc == 0) return;
  for (uint32_t r = lo; r <= hi; r++)
    if (t[r].op == GPUFS_OP_READ && t[r].result > 0) t[r].result = rc < 0 ? rc : -GPUFS_EIO;
}

/* Publish the results of tickets [from, to) of a run; returns to.  The
 * worker's counters are flushed first, so a client that sees a completion
 * also sees it counted. */
static uint32_t complete_tickets(struct worker *w, const struct gpufs_req *t, uint32_t s,
                                 uint64_t first, uint32_t from, uint32_t to,
                                 struct gpufs_daemon_stats *acc)
{
  struct gpufs_slot *slots = w->d->p.slots;
  for (uint32_t r = from; r < to; r++) {
    struct gpufs_slot *sl = &slots[s + r];
    if (t[r].result < 0) acc->errors++;
    sl->result = t[r].result;
    memcpy(sl->out, t[r].out, sizeof(sl->out));
  }
  stats_flush(w, acc);
  memset(acc, 0, sizeof(*acc));
  /* After this the slots and their staging are the GPU's again: not touched. */
  for (uint32_t r = from; r < to; r++) gpufs_q_complete(&slots[s + r], first + r);
  return to;
}

static void serve_run(struct worker *w, uint64_t first, uint32_t k)
{
  const uint64_t t0 = gpufs_daemon_now_ns();
  struct gpufs_daemon *d = w->d;
  struct gpufs_slot *slots = d->p.slots;
  struct gpufs_req *t = w->tickets;
  uint32_t s = (uint32_t)(first % d->p.nslots);
  struct gpufs_daemon_stats acc = {0};
  acc.batches = 1;
  acc.requests = k;

  /* Plain reads: gpufs_q_claim's acquire of req_seq made them visible. */
  for (uint32_t r = 0; r < k; r++) {
    const struct gpufs_slot *sl = &slots[s + r];
    t[r] = (struct gpufs_req){.op = sl->op, .hfid = sl->hfid, .offset = sl->offset,
                           .len = sl->len, .arg = sl->arg};
  }
  /* Pull path: a ticket is completed as soon as its own pread is done, so
   * the GPU starts copying while the worker preads the rest of the run.
   * DMA path: only after the run's one copy to the device. */
  uint32_t done = 0;
  for (uint32_t r = 0; r < k;) {
    uint32_t n = 1;
    switch (t[r].op) {
    case GPUFS_OP_READ:
      n = gpufs_merge_len(&t[r], k - r, d->p.stride);
      gpufs_serve_reads(&d->fo, &t[r], n, s + r, &acc);
      break;
    case GPUFS_OP_WRITE:
      n = gpufs_merge_len(&t[r], k - r, d->p.stride);
      gpufs_serve_writes(&d->fo, &t[r], n, s + r, &acc);
      break;
    case GPUFS_OP_FSYNC:
      gpufs_serve_fsync(&d->fo, &t[r]);
      break;
    case GPUFS_OP_TRUNCATE:
      gpufs_serve_truncate(&d->fo, &t[r]);
      break;
    case GPUFS_OP_UNLINK:
      gpufs_serve_unlink(&d->fo, &t[r], s + r);
      break;
    case GPUFS_OP_FADVISE:
      gpufs_serve_fadvise(&d->fo, &t[r]);
      break;
    case GPUFS_OP_OPEN:
      serve_open(w, &t[r], s + r, &acc);
      break;
    case GPUFS_OP_CLOSE:
      t[r].result = gpufs_hostfiles_close(d->files, t[r].hfid);
      break;
    case GPUFS_OP_FSTAT:
      serve_fstat(w, &t[r]);
      break;
    default:
      t[r].result = -GPUFS_ENOSYS;
      break;
    }
    r += n;
    if (!d->p.to_device) done = complete_tickets(w, t, s, first, done, r, &acc);
  }
  if (d->p.to_device) {
    transfer_run(w, t, k, s, &acc);
    complete_tickets(w, t, s, first, 0, k, &acc);
  }
  stat_add(&w->stats.busy_ns, gpufs_daemon_now_ns() - t0);
}

/* ---- workers ---- */

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

static void serve_loop(struct worker *w)
{
  struct gpufs_daemon *d = w->d;
  uint32_t idle = 0;
  /* relaxed: stop is a plain signal; what the worker did before it exits is
   * ordered for gpufs_daemon_stop by pthread_join */
  while (!gpufs_ld_relaxed_u32_dev(&d->stop)) {
    uint64_t first;
    uint32_t k = gpufs_q_claim(d->p.hdr, d->p.slots, d->p.nslots, d->batch_max, &first);
    if (k == 0) {
      idle_wait(&idle);
      continue;
    }
    idle = 0;
    serve_run(w, first, k);
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
  return p && p->hdr && p->slots && p->staging && p->nslots > 0 && p->stride > 0 &&
         p->nthreads > 0 && p->max_batch > 0 && p->max_open_files > 0 &&
         p->max_open_files <= (uint32_t)INT32_MAX;
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
  d->batch_max = p->max_batch < p->nslots ? p->max_batch : p->nslots;
  d->workers = aligned_alloc(_Alignof(struct worker), p->nthreads * sizeof(struct worker));
  /* zeroed at once: daemon_free frees every worker's tickets */
  if (d->workers) memset(d->workers, 0, p->nthreads * sizeof(struct worker));
  int rc = d->workers ? gpufs_hostfiles_create(p->max_open_files, &d->io, &d->files)
                      : -GPUFS_ENOMEM;
  if (rc == 0) {
    for (uint32_t i = 0; i < p->nthreads && rc == 0; i++) {
      d->workers[i].tickets = calloc(d->batch_max, sizeof(struct gpufs_req));
      if (!d->workers[i].tickets) rc = -GPUFS_ENOMEM;
    }
  }
  if (rc < 0) {
    daemon_free(d);
    return rc;
  }
  d->fo = (struct gpufs_fileops){d->files, &d->io, p->staging, p->stride};

  /* relaxed: the workers are created below (pthread_create orders these
   * stores before them), and the GPU starts after gpufs_daemon_start */
  gpufs_st_relaxed_u64_sys(&p->hdr->host_head, 0);
  gpufs_st_relaxed_u32_sys(&p->hdr->state, GPUFS_Q_RUNNING);

  for (uint32_t i = 0; i < p->nthreads; i++) {
    struct worker *w = &d->workers[i];
    w->d = d;
    w->id = i;
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
    /* relaxed, as above: nothing is served, so nothing is published */
    gpufs_st_relaxed_u32_sys(&p->hdr->state, GPUFS_Q_STOPPED);
    daemon_free(d);
    return rc;
  }
  *out = d;
  return 0;
}

void gpufs_daemon_stop(struct gpufs_daemon *d)
{
  if (!d) return;
  /* release, system scope: orders the stop after everything this thread
   * did to the queue before it.  Waiters read the state relaxed
   * (gpufs_q_stopped), so it publishes nothing to them: they only give up
   * with -ESHUTDOWN and must not read the slot afterwards. */
  gpufs_st_release_u32_sys(&d->p.hdr->state, GPUFS_Q_STOPPED);
  /* relaxed: a plain signal to the workers; pthread_join below orders
   * everything they did before this thread frees their memory */
  gpufs_st_relaxed_u32_dev(&d->stop, 1);
  for (uint32_t i = 0; i < d->nstarted; i++) pthread_join(d->workers[i].thread, NULL);
  daemon_free(d);
}
