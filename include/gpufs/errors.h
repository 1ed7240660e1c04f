/*
 * errors.h - error numbers that device code returns.
 *
 * Every call returns a negative errno.  Device code cannot include the C
 * library's <errno.h> everywhere, so the values used on the GPU are spelled
 * here; the host build checks them against <errno.h> (libgpufs/host/strerror.c).
 */
#ifndef GPUFS_COMMON_ERRORS_H
#define GPUFS_COMMON_ERRORS_H

#define GPUFS_EPERM 1
#define GPUFS_ENOENT 2
#define GPUFS_EIO 5
#define GPUFS_ENXIO 6
#define GPUFS_EBADF 9
#define GPUFS_EAGAIN 11
#define GPUFS_ENOMEM 12
#define GPUFS_EACCES 13
#define GPUFS_EFAULT 14
#define GPUFS_EEXIST 17
#define GPUFS_ENODEV 19
#define GPUFS_EISDIR 21
#define GPUFS_EINVAL 22
#define GPUFS_ENFILE 23
#define GPUFS_EMFILE 24
#define GPUFS_EFBIG 27
#define GPUFS_ENOSPC 28
#define GPUFS_ESPIPE 29
#define GPUFS_EROFS 30
#define GPUFS_ENAMETOOLONG 36
#define GPUFS_ENOSYS 38
#define GPUFS_EOVERFLOW 75
#define GPUFS_ESHUTDOWN 108 /* libgpufs was stopped while the call waited */

#endif /* GPUFS_COMMON_ERRORS_H */
