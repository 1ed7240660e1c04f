/*
 * instance.h - the host side of libgpufs: one process runtime that owns the
 * daemon, and one instance per GPU entry of the configuration.
 *
 *   runtime (runtime.c)    the daemon (workers, the host file table) and
 *                             the instances; gpufs_start/stop/sync, refs
 *   instance (instance.c) one GPU's page cache, request queue, file
 *                             table and readahead state (device memory),
 *                             its queue slots and staging (pinned, mapped),
 *                             its side stream
 *   stats (stats.c)      counters per instance and in total
 *   host reads (host_read.c) gpufs_pread: host code reads through the
 *                             instances' caches
 *
 * An instance publishes what its kernels read (struct gpufs_dev) into slot
 * `index` of its GPU's gpufs_devs[] (libgpufs/device/state.cu); its index is
 * also its queue's index in the daemon.  Every CUDA call on an instance's
 * memory or streams is made with its device current (gpufs_instance_enter).
 */
#ifndef GPUFS_HOST_INSTANCE_H
#define GPUFS_HOST_INSTANCE_H

#include <stdint.h>
#include <sys/types.h>

#include <cuda_runtime_api.h>

#include <gpufs.cuh>
#include "libgpufs/common/devstate.h"
#include "libgpufs/host/daemon.h"

#ifdef __cplusplus
extern "C" {
#endif

struct gpufs_instance {
  struct gpufs_config cfg;
  int device;                 /* CUDA ordinal */
  uint32_t index;             /* in the runtime, gpufs_devs[] and the daemon's queues */
  struct gpufs_dev dev;       /* what the device calls see (device pointers) */
  struct gpufs_queue_hdr *hdr;/* host pointers of the mapped memory */
  struct gpufs_slot *slots;
  uint8_t *staging;
  cudaStream_t stats_stream;  /* stats copies and gpufs_sync's kernel */
  int *sync_results;          /* gpufs_sync: one per file-table entry (device) */
};

/* Make the instance's device current on the calling thread; returns the
 * device that was current (-1 if none could be read), for _leave. */
int gpufs_instance_enter(const struct gpufs_instance *in);
void gpufs_instance_leave(int old);

/* Allocate instance `index` on `device` (not yet published: see
 * gpufs_instances_publish).  0 and *out, or -errno with gpufs_error_detail
 * set; nothing is left allocated on failure. */
int gpufs_instance_create(const struct gpufs_config *cfg, uint32_t index, int device,
                          struct gpufs_instance **out);

/* Free everything of the instance (its kernels must be done).  NULL is a
 * no-op. */
void gpufs_instance_destroy(struct gpufs_instance *in);

/* Make the producers' side of the instance's queue new (tail 0, free_seq,
 * the slots' tickets forgotten) for gpufs_daemon_resume.  No kernel of the
 * instance runs; its device is current.  0 or -errno. */
int gpufs_instance_queue_renew(struct gpufs_instance *in);

/* The instance's queue, as the daemon serves it. */
struct gpufs_daemon_queue gpufs_instance_queue(struct gpufs_instance *in);

/* The runtime's instances. */
struct gpufs_instances {
  struct gpufs_instance *in[GPUFS_MAX_INSTANCES];
  uint32_t n;
  /* peer access this runtime enabled (kernels of device from reach the
   * memory of device to), undone by gpufs_instances_unlink: a later start
   * in the process enables it again without CUDA reporting it enabled */
  struct {
    int from, to;
  } peer_on[GPUFS_MAX_INSTANCES * GPUFS_MAX_INSTANCES];
  uint32_t npeer_on;
};

/* Link every instance to its peers (instances on the same GPU; instances
 * on another GPU this one reaches with peer access and native peer
 * atomics, which are enabled), then publish each on its GPU, the first of
 * a GPU as its default, and a read-only view (no file table, no queue) of
 * each peer on another GPU.  0 or -errno with the detail set. */
int gpufs_instances_publish(struct gpufs_instances *all);

/* Disable the peer access gpufs_instances_publish enabled (all->peer_on);
 * access the program had enabled itself stays.  Before the instances are
 * destroyed, with no kernel of theirs running. */
void gpufs_instances_unlink(struct gpufs_instances *all);

/* Frames holding bytes not written back, in a snapshot of the frame table
 * (kernels may run: then approximate).  -errno when it cannot be read.
 * The instance's device must be current. */
int64_t gpufs_instance_dirty(const struct gpufs_instance *in);

/* Fill *st with the instance's cache counters and daemon's counters of
 * its queue (ds).  The instance's device must be current.  0 or -errno. */
int gpufs_instance_stats(const struct gpufs_instance *in, const struct gpufs_daemon_stats *ds,
                         struct gpufs_stats *st);

/* gpufs_pread's work (host_read.c), with the runtime locked. */
ssize_t gpufs_runtime_pread(struct gpufs_instances *all, struct gpufs_daemon *daemon,
                            const char *path, void *buf, size_t size, int64_t offset);

/* gpufs_acquire's work (acquire.c), with the runtime locked, over
 * the whole file (range NULL) or the pages of [off, off + len)
 * (gpufs_acquire_range): the pages dropped from the instances' caches, or
 * -errno. */
struct gpufs_acq_table;
struct gpufs_acq_range {
  int64_t off;
  uint64_t len;
};
int64_t gpufs_runtime_acquire(struct gpufs_instances *all, struct gpufs_daemon *daemon,
                              struct gpufs_acq_table *t, const char *path,
                              const struct gpufs_acq_range *range);

/* sum += one, field by field (chain_max: the larger). */
void gpufs_stats_add(struct gpufs_stats *sum, const struct gpufs_stats *one);

/* The CUDA runtime's last error around a public host call: a call that
 * finds none pending leaves none behind (what its own CUDA calls caused,
 * failed or refused, is the library's, reported by its return value); an
 * error the program had pending before the call stays for the program.
 * Per thread, as the runtime's last error.  Usage:
 *   const int clean = gpufs_cuda_scope_enter(); ...; gpufs_cuda_scope_leave(clean); */
int gpufs_cuda_scope_enter(void);
void gpufs_cuda_scope_leave(int clean);

/* A CUDA error as -errno, with the detail set. */
int gpufs_cuda_fail(cudaError_t e, const char *what);

/* In a function with `int rc` and a `fail:` label: run a CUDA call; on an
 * error set rc (gpufs_cuda_fail) and go to fail. */
#define CU(call)                                                                              \
  do {                                                                                        \
    cudaError_t e_ = (call);                                                                  \
    if (e_ != cudaSuccess) {                                                                  \
      rc = gpufs_cuda_fail(e_, #call);                                                        \
      goto fail;                                                                              \
    }                                                                                         \
  } while (0)


#ifdef __cplusplus
}
#endif
#endif /* GPUFS_HOST_INSTANCE_H */
