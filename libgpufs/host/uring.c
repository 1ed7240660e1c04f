/*
 * uring.c - a daemon worker's io_uring (uring.h), on Debian's liburing.
 */
#include "uring.h"

#include <errno.h>
#include <liburing.h>
#include <stdlib.h>

struct gpufs_uring {
  struct io_uring ring;
  uint32_t depth;
  int broken; /* a submission failed: entries may be left in the ring */
};

int gpufs_uring_create(uint32_t depth, struct gpufs_uring **out)
{
  if (depth == 0) return -EINVAL;
  struct gpufs_uring *u = calloc(1, sizeof(*u));
  if (!u) return -ENOMEM;
  int rc = io_uring_queue_init(depth, &u->ring, 0);
  if (rc < 0) {
    free(u);
    return rc;
  }
  u->depth = depth;
  *out = u;
  return 0;
}

void gpufs_uring_destroy(struct gpufs_uring *u)
{
  if (!u) return;
  io_uring_queue_exit(&u->ring);
  free(u);
}

uint32_t gpufs_uring_depth(const struct gpufs_uring *u) { return u->depth; }

/* Reap every completion still owed after a submission of `sent` reads,
 * filling res[] (user_data is the read's index).  0 or -errno of the wait. */
static int reap(struct gpufs_uring *u, uint32_t sent, int64_t *res)
{
  for (uint32_t got = 0; got < sent;) {
    struct io_uring_cqe *cqe;
    int rc = io_uring_wait_cqe(&u->ring, &cqe);
    if (rc == -EINTR) continue;
    if (rc < 0) return rc;
    unsigned head, seen = 0;
    io_uring_for_each_cqe(&u->ring, head, cqe)
    {
      const uint64_t i = io_uring_cqe_get_data64(cqe);
      if (i < sent) res[i] = cqe->res;
      seen++;
    }
    io_uring_cq_advance(&u->ring, seen);
    got += seen;
  }
  return 0;
}

int gpufs_uring_read_all(struct gpufs_uring *u, const struct gpufs_uring_read *r, uint32_t n,
                         int64_t *res)
{
  if (u->broken) return -EIO;
  if (n > u->depth) return -EINVAL;
  for (uint32_t i = 0; i < n; i++) {
    struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
    if (!sqe) { /* never: the ring is empty between calls, n <= depth */
      u->broken = 1;
      return -EBUSY;
    }
    io_uring_prep_read(sqe, r[i].fd, r[i].buf, (unsigned)r[i].len, r[i].off);
    io_uring_sqe_set_data64(sqe, i);
  }
  uint32_t sent = 0;
  int err = 0;
  while (sent < n && !err) {
    /* one system call submits them all and waits for them */
    int rc = io_uring_submit_and_wait(&u->ring, sent == 0 ? n : 0);
    if (rc == -EINTR) continue;
    if (rc > 0) sent += (uint32_t)rc;
    else err = rc < 0 ? rc : -EAGAIN; /* the kernel took nothing more */
  }
  int rc = reap(u, sent, res);
  if (err || rc) {
    /* what was not taken stays in the ring: use it no more; the caller
     * reads with pread */
    u->broken = 1;
    return err ? err : rc;
  }
  return 0;
}
