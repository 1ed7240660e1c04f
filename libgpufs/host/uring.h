/*
 * uring.h - a daemon worker's io_uring (liburing), for the READ runs of a
 * claimed batch: one submission for many preads instead of one system call
 * each (read_engine = GPUFS_READ_URING, docs/config.md).
 *
 * One ring per worker, made and used by that worker's thread only.  Reads
 * of the page cache complete inside the submission, so the gain over pread
 * is the system calls saved, not parallelism.
 */
#ifndef GPUFS_HOST_URING_H
#define GPUFS_HOST_URING_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct gpufs_uring;

/* One read of a batch: len bytes at off of fd into buf. */
struct gpufs_uring_read {
  int fd;
  uint8_t *buf;
  uint64_t len;
  uint64_t off;
};

/* A ring that takes up to depth reads at once.  0, or -errno when the
 * kernel refuses io_uring (-ENOSYS, -EPERM under a seccomp filter, ...):
 * the caller then reads with pread. */
int gpufs_uring_create(uint32_t depth, struct gpufs_uring **out);

/* NULL is a no-op. */
void gpufs_uring_destroy(struct gpufs_uring *u);

/* The most reads one gpufs_uring_read_all takes. */
uint32_t gpufs_uring_depth(const struct gpufs_uring *u);

/* Submit reads r[0..n) (n <= depth) at once and wait for all of them:
 * res[i] = bytes read (fewer than asked only at the end of the file, or
 * where the kernel chose a short read), or -errno.  0; or -errno when the
 * ring itself failed: then no read is outstanding and res[] is undefined
 * (the caller reads with pread). */
int gpufs_uring_read_all(struct gpufs_uring *u, const struct gpufs_uring_read *r, uint32_t n,
                         int64_t *res);

#ifdef __cplusplus
}
#endif
#endif /* GPUFS_HOST_URING_H */
