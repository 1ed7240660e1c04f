/*
 * fileops.h - what a daemon worker does to files for the GPU: merged reads
 * and writes through staging, fsync, truncate, unlink.
 *
 * Internal to the daemon.  The functions serve tickets copied out of their
 * slots (struct gpufs_req) and fill in each one's result; completing the
 * tickets is the caller's (daemon.c).
 */
#ifndef GPUFS_HOST_FILEOPS_H
#define GPUFS_HOST_FILEOPS_H

#include <stdint.h>
#include "hostfiles.h"
#include "io.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The fields of one claimed ticket, copied out of its slot. */
struct gpufs_req {
  uint32_t op;
  int32_t hfid;
  uint64_t offset;
  uint32_t len;
  uint32_t arg;
  int64_t result;
  uint64_t out[4];
};

/* Where the operations act: the daemon's files and io (shared by every
 * queue) and one queue's staging.  One per queue the daemon serves. */
struct gpufs_fileops {
  struct gpufs_hostfiles *files;
  const struct gpufs_io_ops *io; /* every member set */
  uint8_t *staging;
  uint32_t stride;
  uint32_t queue; /* the queue's index: whose write hostfiles refreshes */
};

/* io with every NULL member replaced by the C library's. */
void gpufs_io_defaults(struct gpufs_io_ops *io);

/* How many tickets from t[0] one pread or pwrite serves: the same op on the
 * same file, each next one right after a full page, so its bytes lie where
 * its slot's staging is. */
uint32_t gpufs_merge_len(const struct gpufs_req *t, uint32_t avail, uint32_t stride);

/* Serve n merged READs (or WRITEs) t[0..n) whose first slot is s.  Each
 * ticket gets what an unmerged call would have given it. */
void gpufs_serve_reads(const struct gpufs_fileops *fo, struct gpufs_req *t, uint32_t n,
                       uint32_t s, struct gpufs_daemon_stats *acc);
void gpufs_serve_writes(const struct gpufs_fileops *fo, struct gpufs_req *t, uint32_t n,
                        uint32_t s, struct gpufs_daemon_stats *acc);

/* FSYNC, TRUNCATE (t->offset is the length), UNLINK (path in slot s) and
 * FADVISE (t->arg the advice). */
void gpufs_serve_fsync(const struct gpufs_fileops *fo, struct gpufs_req *t);
void gpufs_serve_truncate(const struct gpufs_fileops *fo, struct gpufs_req *t);
void gpufs_serve_unlink(const struct gpufs_fileops *fo, struct gpufs_req *t, uint32_t s);
void gpufs_serve_fadvise(const struct gpufs_fileops *fo, struct gpufs_req *t);

/* The NUL-terminated path of length t->len in slot s's staging, or NULL
 * with t->result set (-ENAMETOOLONG, -EINVAL). */
const char *gpufs_req_path(const struct gpufs_fileops *fo, struct gpufs_req *t, uint32_t s);

#ifdef __cplusplus
}
#endif
#endif /* GPUFS_HOST_FILEOPS_H */
