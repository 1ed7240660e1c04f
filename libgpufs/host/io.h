/*
 * io.h - what the daemon's parts share: the file operations they call (the
 * C library's, or a test's fault injection) and the counters they keep.
 *
 * Its own header so that daemon.h (the daemon's interface), fileops.h and
 * hostfiles.h (its parts) each include what they need and nothing else.
 */
#ifndef GPUFS_HOST_IO_H
#define GPUFS_HOST_IO_H

#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* File operations the daemon performs; replaceable for fault injection.
 * They behave as the C library's (-1 and errno on failure).  A NULL member
 * is the C library's own, except mmap when pread is replaced: then no file
 * is mapped (every READ goes through the caller's pread). */
struct gpufs_io_ops {
  int (*open)(const char *path, int flags, mode_t mode);
  ssize_t (*pread)(int fd, void *buf, size_t len, off_t off);
  int (*close)(int fd);
  ssize_t (*pwrite)(int fd, const void *buf, size_t len, off_t off);
  int (*fsync)(int fd);
  int (*ftruncate)(int fd, off_t len);
  int (*unlink)(const char *path);
  int (*fadvise)(int fd, off_t off, off_t len, int advice); /* as posix_fadvise */
  void *(*mmap)(void *addr, size_t len, int prot, int flags, int fd, off_t off);
  int (*sync_range)(int fd, off_t off, off_t len, unsigned int flags); /* as sync_file_range */
};

struct gpufs_daemon_stats {
  uint64_t requests; /* tickets served */
  uint64_t batches;  /* claims that returned at least one ticket */
  uint64_t preads;   /* host reads of merged runs: pread calls and copies
                        from a mapping */
  uint64_t merged;   /* READ tickets served by a pread of an earlier ticket */
  uint64_t bytes_read;
  uint64_t opens;
  uint64_t pwrites;   /* pwrite calls (after merging) */
  uint64_t bytes_written;
  uint64_t errors;    /* tickets completed with a negative result */
  uint64_t io_ns;     /* time inside pread and pwrite */
  uint64_t busy_ns;   /* time serving claimed runs, from claim to last completion */
  uint64_t map_copies; /* of preads, runs copied from the file's mapping */
  uint64_t map_faults; /* of those, copies that hit SIGBUS and were preread */
  uint64_t write_starts; /* write-outs started (write_behind) */
};

/* Monotonic nanoseconds, for the time counters. */
uint64_t gpufs_daemon_now_ns(void);

/* Tests only: file operations the daemon of the NEXT gpufs_start uses
 * (fault injection); NULL restores the C library's (runtime.c). */
void gpufs_test_set_io_ops(const struct gpufs_io_ops *io);

#ifdef __cplusplus
}
#endif
#endif /* GPUFS_HOST_IO_H */
