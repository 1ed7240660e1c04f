/*
 * daemon.h - the host daemon: worker threads that serve the request queue.
 *
 * Internal to libgpufs (the public API is include/gpufs.cuh).  Plain C11
 * without CUDA: the GPU reads the bytes the daemon leaves in pinned host
 * staging itself, so the daemon is served in CI by a CPU test client over
 * the real queue layout in host memory (tests/host/).
 */
#ifndef GPUFS_HOST_DAEMON_H
#define GPUFS_HOST_DAEMON_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include "libgpufs/common/queue.h"
#include "libgpufs/host/hostfiles.h"
#include "libgpufs/host/io.h" /* gpufs_io_ops, gpufs_daemon_stats */

/* Queues one daemon serves at most: GPUFS_MAX_INSTANCES (config.h). */
#define GPUFS_DAEMON_MAX_QUEUES 8u

#ifdef __cplusplus
extern "C" {
#endif

/* One request queue the daemon serves: one libgpufs instance's (one GPU's,
 * or one CPU test client's).  Its index in gpufs_daemon_params.queues is
 * the instance's number (what hostfiles' per-instance consistency and the
 * per-queue counters are keyed by). */
struct gpufs_daemon_queue {
  struct gpufs_queue_hdr *hdr;   /* mapped header; daemon sets state */
  struct gpufs_slot *slots;      /* nslots mapped slots */
  uint8_t *staging;              /* nslots * stride bytes of pinned host staging */
  uint32_t nslots;
  uint32_t stride;               /* == the instance's page size */
};

struct gpufs_daemon_params {
  struct gpufs_daemon_queue queues[GPUFS_DAEMON_MAX_QUEUES];
  uint32_t nqueues;              /* 1 .. GPUFS_DAEMON_MAX_QUEUES */
  uint32_t nthreads;             /* worker threads, shared by every queue */
  uint32_t max_batch;            /* tickets one worker claims at once */
  uint32_t max_open_files;       /* host file table size, all queues together
                                    (-EMFILE beyond) */
  /* Called once in each worker thread before it serves and after; either
   * may be NULL. */
  int (*worker_init)(void *ctx, uint32_t worker);
  void (*worker_fini)(void *ctx, uint32_t worker);
  void *ctx;                     /* of worker_init and worker_fini */
  const struct gpufs_io_ops *io; /* NULL: the C library's open/pread/close */
  uint64_t write_behind;         /* bytes written to a file between starts
                                    of its write-out (gpufs_config); 0 off */
  /* Automatic pins: an OPEN whose file earned one hands a dup of its
   * descriptor to pin_hint(pin_ctx, fd) (fileops.h); NULL: none. */
  void (*pin_hint)(void *ctx, int fd);
  void *pin_ctx;
};

struct gpufs_daemon;

/* Sets every queue's state RUNNING (gpufs_q_set_state), host_head 0, and starts the
 * workers; each worker serves every queue (it claims from them in turn).
 * 0, or -errno (-EINVAL for bad params, -ENOMEM, worker_init's error). */
int gpufs_daemon_start(const struct gpufs_daemon_params *p, struct gpufs_daemon **out);

/* Sets every queue's state STOPPED (gpufs_q_set_state: waiting GPU calls give up with
 * -ESHUTDOWN), lets each worker finish the batch it holds, joins them,
 * closes every host file and frees the daemon.  NULL is a no-op. */
void gpufs_daemon_stop(struct gpufs_daemon *d);

/* gpufs_daemon_stop that waits at most timeout_ms (0: no limit) for the
 * workers.  0: stopped and freed.  -ETIMEDOUT: some worker is still inside
 * a host call (open(2) of a FIFO, a hung file system); why (len bytes, may
 * be NULL) names it.  The daemon, its host file table, and the queues the
 * caller passed in stay in use by that worker: the caller must keep them
 * (and whatever worker_fini reaches) allocated for good.  The worker
 * completes its ticket and exits on its own once the call returns. */
int gpufs_daemon_stop_within(struct gpufs_daemon *d, uint32_t timeout_ms, char *why, size_t len);

/* Pause: gpufs_daemon_stop_within that keeps the daemon (its host file
 * table, the files open in it, the counters) for gpufs_daemon_resume.
 * Every queue is STOPPED (waiting GPU calls give up with -ESHUTDOWN) and
 * the workers finish the runs they hold and leave.  0: paused.
 * -ETIMEDOUT: as gpufs_daemon_stop_within (the daemon belongs to the stuck
 * worker: it can no longer be resumed, stopped or freed).
 * Context: the caller serializes pause, resume and stop. */
int gpufs_daemon_pause_within(struct gpufs_daemon *d, uint32_t timeout_ms, char *why, size_t len);

/* Serve again after a pause that returned 0.  The caller has made every
 * queue new on the producers' side first (no producer uses it meanwhile:
 * tail 0, free_seq[i] = i, gpufs_q_forget_tickets on the slots), since
 * producers that gave up left tickets no one will post; this call sets
 * host_head 0, starts the workers and sets every queue RUNNING.  0, or
 * -errno (worker_init's or pthread_create's error: the daemon stays
 * paused, and gpufs_daemon_stop frees it); -EINVAL when not paused. */
int gpufs_daemon_resume(struct gpufs_daemon *d);

/* The host file table's answer for the file st describes
 * (gpufs_hostfiles_ident): 0 and *id, or -ENOENT. */
struct gpufs_hostfile_id;
int gpufs_daemon_file_ident(struct gpufs_daemon *d, const struct stat *st,
                            struct gpufs_hostfile_id *id);

/* The daemon's host file table (registrations: register.c). */
struct gpufs_hostfiles;
struct gpufs_hostfiles *gpufs_daemon_files(struct gpufs_daemon *d);

/* Counters of every queue together. */
void gpufs_daemon_get_stats(struct gpufs_daemon *d, struct gpufs_daemon_stats *s);

/* Counters of queue q's tickets alone; -EINVAL for a q the daemon does not
 * serve, else 0. */
int gpufs_daemon_get_queue_stats(struct gpufs_daemon *d, uint32_t q, struct gpufs_daemon_stats *s);

#ifdef __cplusplus
}
#endif
#endif /* GPUFS_HOST_DAEMON_H */
