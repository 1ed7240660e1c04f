/*
 * filemap.h - how the daemon reads: a worker copies a READ run from a
 * read-only shared mapping of the file (the host page cache itself) into
 * staging, instead of one pread system call per run (docs/config.md).
 *
 * On the GPU machines a random 4 KiB pread costs about 3 us of a worker,
 * a copy from the mapping a third of that (docs/design-read.md 10).
 *
 * The mapping is made by the host file table (hostfiles.c), one per open
 * hfid, of the file's size at its first READ; these are the two pieces it
 * needs: the map call, and a copy that survives a page the file no longer
 * has.  A file another process truncates under a live mapping raises
 * SIGBUS on its vanished pages (an I/O error on a page does too): the copy
 * catches it and reports it, and the caller reads with pread, which gives
 * the short read or the error as before.  The SIGBUS handler is installed
 * at the first mapping, once per process, and passes every SIGBUS that is
 * not a guarded copy's to the handler that was there before it.
 */
#ifndef GPUFS_HOST_FILEMAP_H
#define GPUFS_HOST_FILEMAP_H

#include <stddef.h>
#include <stdint.h>
#include "libgpufs/host/io.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Map the first len (> 0) bytes of fd read-only and shared through io's
 * mmap, installing the SIGBUS handler first.  The mapping, or NULL with
 * errno set (a file not open for reading, a special file, no address
 * space). */
void *gpufs_filemap_map(const struct gpufs_io_ops *io, int fd, uint64_t len);

/* Unmap what gpufs_filemap_map returned (addr, len as given).  NULL is a
 * no-op. */
void gpufs_filemap_unmap(void *addr, uint64_t len);

/* How a copy into staging stores its bytes. */
enum gpufs_copy_stores {
  GPUFS_COPY_CACHED = 0, /* ordinary stores: the lines stay in the host's
                            caches, where the GPU's reads of staging find
                            them when the staging fits the last-level cache */
  GPUFS_COPY_STREAM = 1, /* non-temporal stores where both ends are 16-byte
                            aligned: each line is written without first
                            being read, and goes to memory */
};

/* The stores for staging_bytes of staging in all (every queue's):
 * GPUFS_COPY_STREAM when it is larger than the host's last-level cache
 * (sysconf), so that a slot's lines are no longer cached when it is used
 * again; GPUFS_COPY_CACHED when it fits, or when the cache size is unknown
 * or the build has no streaming stores. */
enum gpufs_copy_stores gpufs_filemap_stores(uint64_t staging_bytes);

/* Copy n bytes from src, inside a mapping of gpufs_filemap_map, to dst, with
 * the stores how names (docs/config.md, "How bytes reach the GPU").  The
 * bytes are ordered before the caller's later stores (streaming stores end
 * with an sfence), so a release store after it publishes them.
 * 0; or -EFAULT when a page of src raised SIGBUS (the file shrank under the
 * mapping, or the page could not be read): dst holds some of the bytes and
 * the caller reads the run again with pread.  Any thread. */
int gpufs_filemap_copy(void *dst, const void *src, size_t n, enum gpufs_copy_stores how);

#ifdef __cplusplus
}
#endif
#endif /* GPUFS_HOST_FILEMAP_H */
