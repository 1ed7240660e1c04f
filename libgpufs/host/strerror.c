/*
 * strerror.c - names of libgpufs errors, and the detail of the last host API
 * failure.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <gpufs/errors.h>
#include "libgpufs/host/detail.h"

/* The numbers device code uses must be the host's. */
_Static_assert(GPUFS_ENOENT == ENOENT && GPUFS_EIO == EIO && GPUFS_EBADF == EBADF &&
                   GPUFS_EAGAIN == EAGAIN && GPUFS_ENOMEM == ENOMEM && GPUFS_EACCES == EACCES &&
                   GPUFS_EEXIST == EEXIST && GPUFS_ENODEV == ENODEV && GPUFS_EISDIR == EISDIR && GPUFS_EINVAL == EINVAL &&
                   GPUFS_EMFILE == EMFILE && GPUFS_EFBIG == EFBIG && GPUFS_ENOSPC == ENOSPC &&
                   GPUFS_ESPIPE == ESPIPE && GPUFS_EROFS == EROFS &&
                   GPUFS_ENAMETOOLONG == ENAMETOOLONG && GPUFS_ENOSYS == ENOSYS &&
                   GPUFS_EOVERFLOW == EOVERFLOW && GPUFS_ESHUTDOWN == ESHUTDOWN &&
                   GPUFS_EPERM == EPERM && GPUFS_EFAULT == EFAULT && GPUFS_ENXIO == ENXIO && GPUFS_ENFILE == ENFILE,
               "device errno values differ from the host's");

static _Thread_local char detail[256];

const char *gpufs_strerror(int err)
{
  int e = err < 0 ? -err : err;
  switch (e) {
  case 0: return "success";
  case ESHUTDOWN: return "libgpufs was stopped while the call waited";
  case EMFILE: return "too many open files (max_open_files)";
  case ENOMEM: return "out of memory (or every cache frame of the caller's ring pinned or loading)";
  default: break;
  }
  /* strerrordesc_np is thread-safe and returns static strings */
  const char *s = strerrordesc_np(e);
  return s ? s : "unknown error";
}

void gpufs_set_detail(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof(detail), fmt, ap);
  va_end(ap);
}

void gpufs_clear_detail(void) { detail[0] = '\0'; }

const char *gpufs_error_detail(void) { return detail; }
