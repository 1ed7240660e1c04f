/*
 * fileops.c - the daemon's data operations on host files (fileops.h).
 *
 * Reads and writes of consecutive page tickets of one file are merged: the
 * staging of consecutive slots is adjacent, so one pread (pwrite) moves the
 * bytes of all of them:
 *
 *   staging  | slot s      | slot s+1    | slot s+2 |
 *            |<---------- one pread/pwrite ----->|
 *
 * A write moves exactly the bytes its ticket names: the GPU posts one WRITE
 * per changed byte range, so writers of disjoint bytes of one page never
 * overwrite each other.  After a write the file's identity is refreshed
 * (hostfiles) if nobody else changed the file since the last open, so the
 * writing queue's (GPU's) own changes do not make its cached pages stale at
 * its next open, while anyone else's, another queue's included, still do.
 * A truncation instead renews the version (the GPU drops the file's pages),
 * and an unlink of a file's last name makes a later file with the same
 * inode a new one.
 */
#include "libgpufs/host/fileops.h"
#include "libgpufs/host/filemap.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int libc_open(const char *path, int flags, mode_t mode) { return open(path, flags, mode); }

/* Merged READ runs of at least this many pages make the daemon advise the
 * host's readahead for the file (POSIX_FADV_SEQUENTIAL), once. */
#define GPUFS_HOST_SEQ_RUN 8u

/* The mmap of a caller who replaced pread but not mmap (fault injection):
 * no mapping, so that every READ goes through their pread. */
static void *no_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
  (void)addr, (void)len, (void)prot, (void)flags, (void)fd, (void)off;
  errno = ENODEV;
  return MAP_FAILED;
}

void gpufs_io_defaults(struct gpufs_io_ops *io)
{
  if (!io->mmap) io->mmap = io->pread ? no_mmap : mmap;
  if (!io->open) io->open = libc_open;
  if (!io->pread) io->pread = pread;
  if (!io->close) io->close = close;
  if (!io->pwrite) io->pwrite = pwrite;
  if (!io->fsync) io->fsync = fsync;
  if (!io->ftruncate) io->ftruncate = ftruncate;
  if (!io->unlink) io->unlink = unlink;
  if (!io->fadvise) io->fadvise = posix_fadvise;
  if (!io->sync_range) io->sync_range = sync_file_range;
}

/* -errno of the call that just failed; -EIO if a hook forgot errno. */
static int io_errno(void) { return errno > 0 ? -errno : -EIO; }

static int req_valid(const struct gpufs_ticket *t, uint32_t stride)
{
  return t->req.len <= stride && t->req.offset <= (uint64_t)INT64_MAX - t->req.len;
}

uint32_t gpufs_merge_len(const struct gpufs_ticket *t, uint32_t avail, uint32_t stride)
{
  uint32_t n = 1;
  if (!req_valid(&t[0], stride)) return 1;
  while (n < avail && t[n].req.op == t[0].req.op && t[n].req.hfid == t[0].req.hfid &&
         t[n - 1].req.len == stride && t[n].req.offset == t[n - 1].req.offset + stride &&
         req_valid(&t[n], stride))
    n++;
  return n;
}

/* pread (write: pwrite) until len bytes, EOF (reads) or an error.  Bytes
 * moved, and *err = -errno if a call failed before that (the bytes before
 * it are good). */
static uint64_t move_full(const struct gpufs_fileops *fo, int write, int fd, uint8_t *buf,
                          uint64_t len, uint64_t off, struct gpufs_daemon_stats *acc, int *err)
{
  uint64_t done = 0;
  *err = 0;
  while (done < len) {
    errno = 0;
    const uint64_t t0 = gpufs_daemon_now_ns();
    ssize_t r = write ? fo->io->pwrite(fd, buf + done, len - done, (off_t)(off + done))
                      : fo->io->pread(fd, buf + done, len - done, (off_t)(off + done));
    acc->io_ns += gpufs_daemon_now_ns() - t0;
    if (write) acc->pwrites++;
    else acc->preads++;
    if (r > 0) {
      done += (uint64_t)r;
    } else if (r == 0) {
      if (write) *err = -EIO; /* a write that makes no progress */
      break;
    } else if (errno != EINTR) {
      *err = io_errno();
      break;
    }
  }
  return done;
}

/* One merged run of READs or WRITEs being served. */
struct move {
  int write;
  int fd;      /* pinned; -1: the run was answered at begin */
  struct gpufs_pin *batch; /* the batch's pin the run uses, or NULL: its own */
  uint64_t total;
  struct stat before;
  int have_before;
};

/* Validate and pin a run of n tickets from t[0] (through pc when it is the
 * batch's file, or the batch has none yet; pc NULL: the run's own pin); 0,
 * or -1 when every ticket has been answered already (bad request, file not
 * open). */
static int move_begin(const struct gpufs_fileops *fo, int write, struct gpufs_ticket *t,
                      uint32_t n, struct move *m, struct gpufs_pin *pc)
{
  m->write = write;
  m->fd = -1;
  m->batch = NULL;
  if (!req_valid(&t[0], fo->stride)) {
    t[0].reply.result = -EINVAL;
    return -1;
  }
  const int32_t hfid = t[0].req.hfid;
  int fd;
  if (pc && pc->hfid >= 0 && pc->hfid == hfid) {
    fd = pc->fd;
  } else {
    fd = gpufs_hostfiles_pin(fo->files, hfid);
    if (fd >= 0 && pc && pc->hfid < 0) *pc = (struct gpufs_pin){hfid, fd, 0};
  }
  if (fd < 0) {
    for (uint32_t j = 0; j < n; j++) t[j].reply.result = fd;
    return -1;
  }
  m->batch = pc && pc->hfid == hfid ? pc : NULL;
  /* A run this long comes from a sequential reader (readahead, or large
   * calls): ask the host to read the file ahead too, once per open file,
   * unless the GPU's caller gave advice of its own (gfadvise). */
  if (!write && n >= GPUFS_HOST_SEQ_RUN && gpufs_hostfiles_advise_once(fo->files, hfid))
    fo->io->fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  m->fd = fd;
  m->total = (uint64_t)(n - 1) * fo->stride + t[n - 1].req.len;
  m->have_before = write && fstat(fd, &m->before) == 0;
  return 0;
}

/* Hand the pinner a descriptor of its own of the file behind fd (it may
 * close first): the file earned an automatic pin (hostfiles.h). */
static void hint_pin(const struct gpufs_fileops *fo, int fd)
{
  const int dup = fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
  if (dup >= 0) fo->pin_hint(fo->pin_ctx, dup);
}

/* Count `bytes` READ through pinned hfid (fd its descriptor) towards the
 * file's re-read pin (gpufs_hostfiles_read_again), hinting it when they
 * earn it.  Nothing without a pinner. */
static void read_counted(const struct gpufs_fileops *fo, int32_t hfid, int fd, uint64_t bytes)
{
  if (bytes && fo->pin_hint && gpufs_hostfiles_read_again(fo->files, hfid, bytes)) hint_pin(fo, fd);
}

/* The run's first move brought got bytes, then failed with err (0: none):
 * answer each ticket, unpin. */
static void move_finish(const struct gpufs_fileops *fo, struct move *m, struct gpufs_ticket *t,
                        uint32_t n, uint32_t s, uint64_t got, int err,
                        struct gpufs_daemon_stats *acc)
{
  const int write = m->write, fd = m->fd;
  uint8_t *base = fo->staging + (uint64_t)s * fo->stride;
  /* Each ticket gets what an unmerged call would have: its bytes (fewer at
   * EOF for a read, none past it), or the error if the failure hit them.
   * A merged call that failed is tried again ticket by ticket from the
   * first one it did not finish: a disk that fails a whole call for one bad
   * page (or a readahead page past a bad one) must not fail its neighbours. */
  uint64_t moved = got;
  for (uint32_t j = 0; j < n; j++) {
    uint64_t rel = (uint64_t)j * fo->stride;
    if (err < 0 && rel + t[j].req.len > got) {
      int e1 = 0;
      const uint64_t at = got > rel ? got - rel : 0; /* the ticket's bytes that came */
      const uint64_t more =
          move_full(fo, write, fd, base + rel + at, t[j].req.len - at, t[j].req.offset + at, acc, &e1);
      moved += more;
      t[j].reply.result = e1 < 0 ? e1 : (int64_t)(at + more);
    } else {
      const uint64_t len = t[j].req.len;
      t[j].reply.result = got > rel ? (int64_t)(got - rel < len ? got - rel : len) : 0;
    }
  }
  got = moved;
  if (m->have_before && got > 0) gpufs_hostfiles_refresh(fo->files, fd, &m->before, fo->queue);
  if (write && gpufs_hostfiles_written(fo->files, t[0].req.hfid, got, fo->write_behind)) {
    /* write-behind: start the disk on what this file has so far, without
     * waiting (pages under write-out already are skipped), so that the
     * fsync that ends a stream of writes finds most of it on disk.  A
     * failure changes nothing: the fsync reports what the disk refused */
    (void)fo->io->sync_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
    acc->write_starts++;
  }
  if (!write) {
    if (m->batch) m->batch->read += got; /* counted when the batch drops it */
    else read_counted(fo, t[0].req.hfid, fd, got);
    /* the file's pinned mapping, if it has one now: a descriptor opened
     * before the pin learns it here (hostfiles_reg.c) */
    const uint64_t w = gpufs_hostfiles_reg_word(fo->files, t[0].req.hfid);
    for (uint32_t j = 0; j < n; j++) t[j].reply.out[3] = w;
  }
  if (!m->batch) gpufs_hostfiles_unpin(fo->files, t[0].req.hfid);
  acc->merged += n - 1;
  if (write) acc->bytes_written += got;
  else acc->bytes_read += got;
}

/* Copy the run of m (pinned) from the file's mapping into buf: a random
 * 4 KiB miss costs half a pread (docs/config.md, "Retired modes").  1 when
 * it did (every byte), 0 when the caller must pread it (no mapping, a run
 * past its end, or SIGBUS). */
static int map_copy(const struct gpufs_fileops *fo, const struct move *m, int32_t hfid,
                    uint8_t *buf, uint64_t off, struct gpufs_daemon_stats *acc)
{
  uint64_t len = 0;
  const uint8_t *a = gpufs_hostfiles_map(fo->files, hfid, &len);
  if (!a || off > len || m->total > len - off) return 0;
  const uint64_t t0 = gpufs_daemon_now_ns();
  const int rc = gpufs_filemap_copy(buf, a + off, m->total, fo->stores);
  acc->io_ns += gpufs_daemon_now_ns() - t0;
  if (rc != 0) {
    acc->map_faults++;
    return 0;
  }
  acc->preads++; /* a host read of the run, as a pread is */
  acc->map_copies++;
  return 1;
}

static void serve_moves(const struct gpufs_fileops *fo, int write, struct gpufs_ticket *t,
                        uint32_t n, uint32_t s, struct gpufs_daemon_stats *acc, struct gpufs_pin *pc)
{
  struct move m;
  if (move_begin(fo, write, t, n, &m, pc)) return;
  int err = 0;
  uint64_t got = 0;
  uint8_t *buf = fo->staging + (uint64_t)s * fo->stride;
  if (!write && m.total > 0 && map_copy(fo, &m, t[0].req.hfid, buf, t[0].req.offset, acc))
    got = m.total;
  else if (m.total > 0)
    got = move_full(fo, write, m.fd, buf, m.total, t[0].req.offset, acc, &err);
  move_finish(fo, &m, t, n, s, got, err, acc);
}

uint32_t gpufs_serve_read_run(const struct gpufs_fileops *fo, struct gpufs_ticket *t,
                              uint32_t avail, uint32_t s, struct gpufs_daemon_stats *acc,
                              struct gpufs_pin *pc)
{
  const uint32_t n = gpufs_merge_len(t, avail, fo->stride);
  serve_moves(fo, 0, t, n, s, acc, pc);
  return n;
}

void gpufs_pin_drop(const struct gpufs_fileops *fo, struct gpufs_pin *pc)
{
  if (pc->hfid >= 0) {
    read_counted(fo, pc->hfid, pc->fd, pc->read);
    gpufs_hostfiles_unpin(fo->files, pc->hfid);
  }
  *pc = GPUFS_PIN_NONE;
}

void gpufs_serve_writes(const struct gpufs_fileops *fo, struct gpufs_ticket *t, uint32_t n,
                        uint32_t s, struct gpufs_daemon_stats *acc)
{
  serve_moves(fo, 1, t, n, s, acc, NULL);
}

/* The descriptor of t's file, pinned; or -1 with t->reply.result set (an offset
 * past INT64_MAX: -EINVAL; a file not open: -EBADF). */
static int pin_for(const struct gpufs_fileops *fo, struct gpufs_ticket *t)
{
  if (t->req.offset > (uint64_t)INT64_MAX) {
    t->reply.result = -EINVAL;
    return -1;
  }
  int fd = gpufs_hostfiles_pin(fo->files, t->req.hfid);
  if (fd < 0) t->reply.result = fd;
  return fd < 0 ? -1 : fd;
}

void gpufs_serve_fsync(const struct gpufs_fileops *fo, struct gpufs_ticket *t, uint32_t n, uint32_t s,
                        struct gpufs_daemon_stats *acc)
{
  (void)n, (void)s, (void)acc;
  int fd = pin_for(fo, t);
  if (fd < 0) return;
  errno = 0;
  t->reply.result = fo->io->fsync(fd) == 0 ? 0 : io_errno();
  gpufs_hostfiles_unpin(fo->files, t->req.hfid);
}

void gpufs_serve_truncate(const struct gpufs_fileops *fo, struct gpufs_ticket *t, uint32_t n, uint32_t s,
                        struct gpufs_daemon_stats *acc)
{
  (void)n, (void)s, (void)acc;
  int fd = pin_for(fo, t);
  if (fd < 0) return;
  errno = 0;
  t->reply.result = fo->io->ftruncate(fd, (off_t)t->req.offset) == 0 ? 0 : io_errno();
  if (t->reply.result == 0) {
    t->reply.out[0] = gpufs_hostfiles_renew(fo->files, fd);
    if (t->reply.out[0] == 0) t->reply.result = -EIO;
  }
  gpufs_hostfiles_unpin(fo->files, t->req.hfid);
}

const char *gpufs_req_path(const struct gpufs_fileops *fo, struct gpufs_ticket *t, uint32_t s)
{
  const char *path = (const char *)fo->staging + (uint64_t)s * fo->stride;
  const char *nul = memchr(path, '\0', fo->stride);
  if (!nul) {
    t->reply.result = -ENAMETOOLONG;
    return NULL;
  }
  if ((uint64_t)(nul - path) != t->req.len) {
    t->reply.result = -EINVAL;
    return NULL;
  }
  return path;
}

void gpufs_serve_unlink(const struct gpufs_fileops *fo, struct gpufs_ticket *t, uint32_t n, uint32_t s,
                        struct gpufs_daemon_stats *acc)
{
  (void)n, (void)acc;
  const char *path = gpufs_req_path(fo, t, s);
  if (!path) return;
  struct stat st;
  int known = lstat(path, &st) == 0;
  errno = 0;
  t->reply.result = fo->io->unlink(path) == 0 ? 0 : io_errno();
  if (t->reply.result == 0 && known && st.st_nlink <= 1)
    gpufs_hostfiles_forget(fo->files, (uint64_t)st.st_dev, (uint64_t)st.st_ino);
}

void gpufs_serve_fadvise(const struct gpufs_fileops *fo, struct gpufs_ticket *t, uint32_t n, uint32_t s,
                        struct gpufs_daemon_stats *acc)
{
  (void)n, (void)s, (void)acc;
  int fd = pin_for(fo, t);
  if (fd < 0) return;
  /* posix_fadvise returns the error number instead of setting errno */
  int e = fo->io->fadvise(fd, (off_t)t->req.offset, (off_t)t->req.len, (int)t->req.arg);
  t->reply.result = -e;
  if (e == 0) gpufs_hostfiles_advise_once(fo->files, t->req.hfid); /* the caller's advice stands */
  gpufs_hostfiles_unpin(fo->files, t->req.hfid);
}

void gpufs_serve_open(const struct gpufs_fileops *fo, struct gpufs_ticket *t, uint32_t n, uint32_t s,
                      struct gpufs_daemon_stats *acc)
{
  (void)n;
  const char *path = gpufs_req_path(fo, t, s);
  if (!path) return;
  struct gpufs_hostfile_id id;
  int hfid = gpufs_hostfiles_open(fo->files, path, (int)t->req.arg, (mode_t)t->req.offset,
                                  fo->queue, &id);
  t->reply.result = hfid;
  if (hfid < 0) return;
  t->reply.out[0] = id.size;
  t->reply.out[1] = id.cid;
  t->reply.out[2] = id.version;
  t->reply.out[3] = id.reg;
  acc->opens++;
  if (id.pin_hint && fo->pin_hint) {
    const int fd = gpufs_hostfiles_pin(fo->files, hfid);
    hint_pin(fo, fd);
    if (fd >= 0) gpufs_hostfiles_unpin(fo->files, hfid);
  }
}

void gpufs_serve_close(const struct gpufs_fileops *fo, struct gpufs_ticket *t, uint32_t n,
                       uint32_t s, struct gpufs_daemon_stats *acc)
{
  (void)n, (void)s, (void)acc;
  t->reply.result = gpufs_hostfiles_close(fo->files, t->req.hfid);
}

void gpufs_serve_fstat(const struct gpufs_fileops *fo, struct gpufs_ticket *t, uint32_t n,
                       uint32_t s, struct gpufs_daemon_stats *acc)
{
  (void)n, (void)s, (void)acc;
  struct stat st;
  int rc = gpufs_hostfiles_fstat(fo->files, t->req.hfid, &st);
  t->reply.result = rc;
  if (rc < 0) return;
  t->reply.out[0] = (uint64_t)st.st_size;
  t->reply.out[1] = (uint64_t)st.st_mode;
  t->reply.out[2] = (uint64_t)gpufs_timespec_ns(st.st_mtim);
  t->reply.out[3] = (uint64_t)st.st_ino;
}
