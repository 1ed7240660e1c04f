/*
 * fileops.h - what a daemon worker does to files for the GPU: merged reads
 * and writes through staging, fsync, truncate, unlink.
 *
 * Internal to the daemon.  The functions serve tickets copied out of their
 * slots (struct gpufs_ticket) and fill in each one's reply; completing the
 * tickets is the caller's (daemon.c).
 */
#ifndef GPUFS_HOST_FILEOPS_H
#define GPUFS_HOST_FILEOPS_H

#include <stdint.h>
#include "libgpufs/common/queue.h"
#include "libgpufs/host/filemap.h"
#include "libgpufs/host/hostfiles.h"
#include "libgpufs/host/io.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A worker's record of one claimed ticket: its request, copied out of its
 * slot (gpufs_q_read_req), and the reply it gets, copied back into the slot
 * (gpufs_q_put_reply) when the ticket is completed. */
struct gpufs_ticket {
  struct gpufs_req req;
  struct gpufs_reply reply;
};

/* Where the operations act: the daemon's files and io (shared by every
 * queue) and one queue's staging.  One per queue the daemon serves. */
struct gpufs_fileops {
  struct gpufs_hostfiles *files;
  const struct gpufs_io_ops *io; /* every member set */
  uint8_t *staging;
  uint32_t stride;
  enum gpufs_copy_stores stores; /* how READ runs are copied into staging
                                    (filemap.h): by all the daemon's staging */
  uint32_t queue; /* the queue's index: whose write hostfiles refreshes */
  uint64_t write_behind; /* bytes written to a file between starts of its
                            write-out to disk (sync_file_range); 0: never */
  /* An OPEN whose file earned an automatic pin (hostfiles' pin_hint) hands
   * a dup of its descriptor to pin_hint(pin_ctx, fd), which owns it and
   * must not block (pinner.h); NULL: no automatic pins. */
  void (*pin_hint)(void *ctx, int fd);
  void *pin_ctx;
};

/* io with every NULL member replaced by the C library's. */
void gpufs_io_defaults(struct gpufs_io_ops *io);

/* How many tickets from t[0] one pread or pwrite serves: the same op on the
 * same file, each next one right after a full page, so its bytes lie where
 * its slot's staging is. */
uint32_t gpufs_merge_len(const struct gpufs_ticket *t, uint32_t avail, uint32_t stride);

/* Serve n merged WRITEs t[0..n) whose first slot is s, with one pwrite
 * loop; each ticket gets what an unmerged call would have given it. */
void gpufs_serve_writes(const struct gpufs_fileops *fo, struct gpufs_ticket *t, uint32_t n,
                        uint32_t s, struct gpufs_daemon_stats *acc);

/* The pin a worker keeps, over the READ runs of one claimed batch, on the
 * first file they read, so that the runs of one file (random reads: a run
 * per page) take one pin, not one each: 16 workers pinning one entry word
 * for every 4 KiB page spent more time passing its cache line around than
 * copying (docs/design-read.md 10).  The worker drops it before any
 * other op of the batch (a READ after a CLOSE of its file must find the
 * file closed) and at the batch's end.  hfid -1: none held.  The bytes
 * its runs READ are counted towards the file's re-read pin at the drop,
 * with one shared add a batch instead of one a run. */
struct gpufs_pin {
  int32_t hfid;
  int fd;
  uint64_t read;
};
#define GPUFS_PIN_NONE ((struct gpufs_pin){-1, -1, 0})

/* Serve the merged READ run at t[0] (a READ; the run is gpufs_merge_len
 * of avail), pinning its file through pc (when it is pc's file or pc
 * holds none): one copy from the file's mapping (filemap.h) when the run
 * lies wholly inside it (map_copies; a copy that hits SIGBUS, map_faults,
 * is preread), else one pread (a file that cannot be mapped, a run past
 * the mapping's end).  Each ticket gets what an unmerged
 * pread would have given it.  Returns the tickets served. */
uint32_t gpufs_serve_read_run(const struct gpufs_fileops *fo, struct gpufs_ticket *t,
                              uint32_t avail, uint32_t s, struct gpufs_daemon_stats *acc,
                              struct gpufs_pin *pc);

/* Unpin pc's file, if it holds one (its runs' READ bytes counted towards
 * the file's re-read pin first), and empty it. */
void gpufs_pin_drop(const struct gpufs_fileops *fo, struct gpufs_pin *pc);

/* The single-ticket operations (n is 1; t is in slot s; acc the run's
 * counters), with the signature of every server (daemon.c's op table):
 * OPEN (path in slot s; out[] as queue.h says), CLOSE, FSTAT, FSYNC,
 * TRUNCATE (t->req.offset is the length), UNLINK (path in slot s) and
 * FADVISE (t->req.arg the advice). */
#define GPUFS_SERVE_ONE(name)                                                                   \
  void name(const struct gpufs_fileops *fo, struct gpufs_ticket *t, uint32_t n, uint32_t s,    \
            struct gpufs_daemon_stats *acc)
GPUFS_SERVE_ONE(gpufs_serve_open);
GPUFS_SERVE_ONE(gpufs_serve_close);
GPUFS_SERVE_ONE(gpufs_serve_fstat);
GPUFS_SERVE_ONE(gpufs_serve_fsync);
GPUFS_SERVE_ONE(gpufs_serve_truncate);
GPUFS_SERVE_ONE(gpufs_serve_unlink);
GPUFS_SERVE_ONE(gpufs_serve_fadvise);

/* The NUL-terminated path of length t->req.len in slot s's staging, or NULL
 * with t->reply.result set (-ENAMETOOLONG, -EINVAL). */
const char *gpufs_req_path(const struct gpufs_fileops *fo, struct gpufs_ticket *t, uint32_t s);

#ifdef __cplusplus
}
#endif
#endif /* GPUFS_HOST_FILEOPS_H */
