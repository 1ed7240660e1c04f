/*
 * daemon.h - the host daemon: worker threads that serve the request queue.
 *
 * Internal to libgpufs (the public API is include/gpufs.cuh).  Plain C11; the
 * CUDA transfer is reached only through the hooks in gpufs_daemon_params, so
 * the daemon is served in CI by a CPU test client over the real queue layout
 * with a host-memory transport (tests/host/).
 */
#ifndef GPUFS_HOST_DAEMON_H
#define GPUFS_HOST_DAEMON_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "../common/queue.h"

#ifdef __cplusplus
extern "C" {
#endif

/* File operations the daemon performs; replaceable for fault injection.
 * They behave as the C library's (-1 and errno on failure).  A NULL member
 * is the C library's own. */
struct gpufs_io_ops {
  int (*open)(const char *path, int flags, mode_t mode);
  ssize_t (*pread)(int fd, void *buf, size_t len, off_t off);
  int (*close)(int fd);
  ssize_t (*pwrite)(int fd, const void *buf, size_t len, off_t off);
  int (*fsync)(int fd);
  int (*ftruncate)(int fd, off_t len);
  int (*unlink)(const char *path);
  int (*fadvise)(int fd, off_t off, off_t len, int advice); /* as posix_fadvise */
};

struct gpufs_daemon_params {
  struct gpufs_queue_hdr *hdr;   /* mapped header; daemon sets state */
  struct gpufs_slot *slots;      /* nslots mapped slots */
  uint8_t *staging;              /* nslots * stride bytes of pinned host staging */
  uint32_t nslots;
  uint32_t stride;               /* == page size */
  uint32_t nthreads;             /* worker threads */
  uint32_t max_batch;            /* tickets one worker claims at once */
  uint32_t max_open_files;       /* host file table size (-EMFILE beyond) */
  /* DMA path: copy staging bytes [off, off+len) to the same offsets of the
   * device staging and wait for the copy; 0 or -errno.  NULL: pull path (the
   * GPU reads host staging itself). */
  int (*to_device)(void *ctx, uint32_t worker, uint64_t off, uint64_t len);
  /* Called once in each worker thread before it serves (e.g. to bind the CUDA
   * device and create a stream) and after; either may be NULL. */
  int (*worker_init)(void *ctx, uint32_t worker);
  void (*worker_fini)(void *ctx, uint32_t worker);
  void *ctx;
  const struct gpufs_io_ops *io; /* NULL: the C library's open/pread/close */
};

struct gpufs_daemon_stats {
  uint64_t requests; /* tickets served */
  uint64_t batches;  /* claims that returned at least one ticket */
  uint64_t preads;   /* pread calls (after merging) */
  uint64_t merged;   /* READ tickets served by a pread of an earlier ticket */
  uint64_t bytes_read;
  uint64_t transfers; /* to_device calls */
  uint64_t opens;
  uint64_t pwrites;   /* pwrite calls (after merging) */
  uint64_t bytes_written;
  uint64_t errors;    /* tickets completed with a negative result */
  uint64_t io_ns;     /* time inside pread and pwrite */
  uint64_t busy_ns;   /* time serving claimed runs, from claim to last completion */
};

/* Monotonic nanoseconds, for the time counters. */
uint64_t gpufs_daemon_now_ns(void);

struct gpufs_daemon;

/* Sets hdr->state RUNNING, host_head 0, and starts the workers.
 * 0, or -errno (-EINVAL for bad params, -ENOMEM, worker_init's error). */
int gpufs_daemon_start(const struct gpufs_daemon_params *p, struct gpufs_daemon **out);

/* Sets hdr->state STOPPED (waiting GPU calls give up with -ESHUTDOWN), lets
 * each worker finish the batch it holds, joins them, closes every host file
 * and frees the daemon.  NULL is a no-op. */
void gpufs_daemon_stop(struct gpufs_daemon *d);

void gpufs_daemon_get_stats(struct gpufs_daemon *d, struct gpufs_daemon_stats *s);

#ifdef __cplusplus
}
#endif
#endif /* GPUFS_HOST_DAEMON_H */
