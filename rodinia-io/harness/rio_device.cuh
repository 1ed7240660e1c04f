/*
 * rio_device.cuh - device helpers of the rodinia-io gpufs versions.
 *
 * Kernels that call these (and so the libgpufs device calls) declare
 * __launch_bounds__(RIO_IO_THREADS, 1) or (256, 2): the calls fit in 128
 * registers a thread (README, "Using it").
 */
#ifndef RIO_DEVICE_CUH
#define RIO_DEVICE_CUH

#include <stdint.h>

#include "include/gpufs.cuh"

/* Lower *err to rc (a negative errno) unless it already holds a lower one.
 * Who calls: any thread; no synchronization. */
__device__ __forceinline__ void rio_dev_error(int *err, int rc)
{
  if (rc < 0)
    atomicMin(err, rc);
}

/*
 * Read [off, off + bytes) of fd into dst (device memory), in gread calls of
 * at most `call` bytes.  Every thread of the block calls it with equal
 * arguments; synchronizes the block (each gread does).  Returns 0, the
 * first gread error, or -EIO when the file ends before off + bytes.
 */
__device__ __forceinline__ int rio_gread_range(int fd, uint64_t off, uint64_t bytes, void *dst,
                                               uint64_t call)
{
  uint8_t *d = (uint8_t *)dst;
  for (uint64_t done = 0; done < bytes;) {
    const uint64_t want = bytes - done < call ? bytes - done : call;
    const ssize_t n = gread(fd, (int64_t)(off + done), want, d + done);
    if (n < 0)
      return (int)n;
    if (n == 0)
      return -GPUFS_EIO;
    done += (uint64_t)n;
  }
  return 0;
}

/* The same, every lane of one warp calls it (gread_warp). */
__device__ __forceinline__ int rio_gread_range_warp(int fd, uint64_t off, uint64_t bytes, void *dst,
                                                    uint64_t call)
{
  uint8_t *d = (uint8_t *)dst;
  for (uint64_t done = 0; done < bytes;) {
    const uint64_t want = bytes - done < call ? bytes - done : call;
    const ssize_t n = gread_warp(fd, (int64_t)(off + done), want, d + done);
    if (n < 0)
      return (int)n;
    if (n == 0)
      return -GPUFS_EIO;
    done += (uint64_t)n;
  }
  return 0;
}

#endif /* RIO_DEVICE_CUH */
