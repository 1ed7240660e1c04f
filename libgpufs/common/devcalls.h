/*
 * devcalls.h - the seam between the host and the device sides: what the
 * host runtime (libgpufs/host/runtime.c, instance.c, host_read.c,
 * acquire.c) calls in the device side (libgpufs/device/state.cu, sync.cu,
 * host_read.cu, drop.cu): publishing an instance's state and launching
 * the library's own kernels.  Plain C declarations; the device side
 * defines them and includes no host header.
 */
#ifndef GPUFS_COMMON_DEVCALLS_H
#define GPUFS_COMMON_DEVCALLS_H

#include "libgpufs/common/devstate.h"

#ifdef __cplusplus
extern "C" {
#endif

/* On the current CUDA device: forget every instance (kernels then find
 * none: gopen returns -ENODEV).  0 / -EIO. */
int gpufs_dev_clear(void);

/* On the current CUDA device: copy *d into slot d->instance of the device
 * global array that device calls read; with is_default, gopen without a
 * ref opens on it.  0 / -EIO / -EINVAL. */
int gpufs_dev_publish(const struct gpufs_dev *d, int is_default);

/* Launch gpufs_sync's kernel for instance `instance` (current device) on
 * stream: one block per file-table entry, each leaving 0 or its file's
 * first error in results[entry] (device memory); with cid != 0 only the
 * entries of that file write back (gpufs_release).  0, or -EIO when the
 * launch fails. */
int gpufs_dev_sync_launch(uint32_t instance, uint32_t cid, uint32_t nfiles, int *results,
                          void *stream);

/* Launch gpufs_pread's kernel for instance `instance` (current device) on
 * stream: copy the pages of [off, off+size) of file cid that the instance
 * holds VALID at `version` into dst (size bytes, device-accessible: pinned
 * mapped host memory), set have[p - off / page_size] = 1 (device memory,
 * zeroed by the caller) for each, and raise *gpu_size (device memory) to
 * the largest size an open descriptor of the file has there.  size 0:
 * only the size (dst and have unused).  0, or -EIO when the launch fails. */
int gpufs_dev_host_read_launch(uint32_t instance, uint32_t cid, uint32_t version, uint64_t off,
                               uint64_t size, uint8_t *dst, uint8_t *have,
                               unsigned long long *gpu_size, void *stream);

/* gpufs_acquire's drop of the listed pages of file cid at `version` from
 * instance `instance`'s cache (device/drop.cu). */
struct gpufs_drop_params {
  uint32_t instance, cid, version;
  const uint64_t *pages;       /* page indices, device memory */
  uint64_t n;
  unsigned long long *counts;  /* [GPUFS_DROP_RESULTS], device memory,
                                  zeroed by the caller: pages dropped,
                                  kept dirty, kept busy (cache.h) */
};

/* Launch the drop kernel (current device) on stream.  0, or -EIO when the
 * launch fails. */
int gpufs_dev_drop_launch(const struct gpufs_drop_params *p, void *stream);
int gpufs_dev_drop_preload(void);

/* On the current CUDA device: load the library's own kernels (gpufs_sync's
 * and gpufs_pread's) now.  With lazy loading (CUDA's default), the first
 * launch of a kernel loads it, and loading may wait for the kernels that
 * run: gpufs_stop's write-back would wait behind the very kernels it must
 * not wait for.  0 / -EIO. */
int gpufs_dev_preload(void);
int gpufs_dev_host_read_preload(void); /* gpufs_pread's kernel (host_read.cu) */

#ifdef __cplusplus
}
#endif
#endif
