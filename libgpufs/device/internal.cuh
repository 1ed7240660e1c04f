/*
 * internal.cuh - what the device calls share: the instance state and the
 * single-request path to the host daemon.
 */
#ifndef GPUFS_DEVICE_INTERNAL_CUH
#define GPUFS_DEVICE_INTERNAL_CUH

#include <stdint.h>
#include "libgpufs/common/devstate.h"

/* Set by gpufs_start through gpufs_dev_publish (state.cu). */
extern __device__ struct gpufs_dev gpufs_dev;

/* One request to the host, made by one thread. */
struct gpufs_call {
  uint32_t op;          /* enum gpufs_op */
  int32_t hfid;
  uint64_t offset;
  uint32_t len;
  uint32_t arg;
  const char *payload;  /* copied into the slot's staging (OPEN: the path) */
  uint32_t payload_len;
};

/* Post c, wait for the host, copy out the result fields.  Returns the
 * request's result (>= 0 or -errno), or -ESHUTDOWN. */
__device__ int64_t gpufs_host_call(const struct gpufs_call *c, uint64_t out[4]);

/* What a device call needs of an open descriptor. */
struct gpufs_fdinfo {
  int32_t hfid;
  uint32_t cid;
  uint32_t version;
  uint32_t flags;  /* as given to gopen */
  uint32_t advice; /* GPUFS_FADV_NORMAL/RANDOM/SEQUENTIAL (gfadvise) */
  uint32_t fd;
  uint64_t size;   /* the file's size now, as this GPU sees it */
};

/* 0 and *fi filled if fd is open, else -EBADF.  Any thread may call it. */
__device__ int gpufs_fd_get(int fd, struct gpufs_fdinfo *fi);

__device__ __forceinline__ bool gpufs_fd_writable(const struct gpufs_fdinfo *fi)
{
  return (fi->flags & 3) != 0; /* O_WRONLY or O_RDWR */
}

__device__ __forceinline__ bool gpufs_fd_readable(const struct gpufs_fdinfo *fi)
{
  return (fi->flags & 3) != 1; /* not O_WRONLY */
}

#endif /* GPUFS_DEVICE_INTERNAL_CUH */
