/*
 * daemon_priv.h - the daemon's own state, shared by its files: daemon.c
 * (serving and the workers' life) and daemon_stats.c (the counters).  Not
 * part of any interface.
 */
#ifndef GPUFS_HOST_DAEMON_PRIV_H
#define GPUFS_HOST_DAEMON_PRIV_H

#include <pthread.h>

#include "libgpufs/host/daemon.h"
#include "libgpufs/host/fileops.h"
#include "libgpufs/host/hostfiles.h"

/* What the daemon keeps of one queue it serves. */
struct served {
  const struct gpufs_daemon_queue *q; /* in gpufs_daemon.p.queues */
  struct gpufs_fileops fo; /* the shared files and io, this queue's staging */
  uint32_t batch_max;      /* tickets one claim on it can return */
  uint32_t run_max;        /* ... when those past batch_max continue one run */
};

struct worker {
  /* Per queue served; written by this worker only, with relaxed atomics;
   * summed by gpufs_daemon_get_stats and _get_queue_stats.  Own cache
   * lines: workers do not share one. */
  _Alignas(64) struct gpufs_daemon_stats stats[GPUFS_DAEMON_MAX_QUEUES];
  struct gpufs_daemon *d;
  struct gpufs_ticket *tickets; /* room for the largest run of any queue */
  pthread_t thread;
  uint32_t id;
  uint32_t next; /* the queue this worker tries first next time */
  /* The operation this worker is inside (0: none), for a stop that gives
   * up on it: written by the worker, read by the stopper, relaxed (a
   * report, nothing is read through it but the slot's path, whose memory
   * a stuck daemon keeps). */
  uint32_t busy_op, busy_queue, busy_slot;
  /* Per queue, the first ticket of the run this worker serves there:
   * 0 while it claims (it may take any ticket), UINT64_MAX when it serves
   * none.  A CLOSE waits for the runs before it (close_after_earlier). */
  uint64_t run_first[GPUFS_DAEMON_MAX_QUEUES];
};

struct gpufs_daemon {
  struct gpufs_daemon_params p;
  struct gpufs_io_ops io;
  struct gpufs_hostfiles *files; /* one table for every queue */
  struct served queues[GPUFS_DAEMON_MAX_QUEUES]; /* p.nqueues of them */
  struct worker *workers;
  uint32_t nstarted;
  uint32_t stop; /* set once by gpufs_daemon_stop; atomics only */
  pthread_mutex_t gate_lock;
  pthread_cond_t gate_cond;
  uint32_t ninit; /* workers whose worker_init answered; under gate_lock */
  int init_rc;    /* first worker_init error; under gate_lock */
  int gate;       /* enum gate; under gate_lock */
};

/* Add a run's counters to worker w's counters of queue qi (daemon_stats.c).
 * The worker only. */
void gpufs_daemon_stats_flush(struct worker *w, uint32_t qi, const struct gpufs_daemon_stats *a);

#endif /* GPUFS_HOST_DAEMON_PRIV_H */
