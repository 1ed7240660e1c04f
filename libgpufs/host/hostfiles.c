/*
 * hostfiles.c - host file table (hfid -> fd) and cache identities per inode.
 *
 * Entry life:
 *
 *   FREE --reserve--> OPENING --open ok--> OPEN --close, no pins--> FREE
 *     ^                  |                   |
 *     +----open failed---+                   +--close, pinned--> CLOSING
 *     +-------------------------last unpin closes fd----------------+
 *
 * The entry is reserved before open(2) so that a full table answers -EMFILE
 * without touching the file, and so that a slow open (a FIFO, a network file
 * system) holds no lock.  Opens and the inode table are under hf->lock.
 * Pins are taken for every pread, by every worker, so they take no lock: an
 * entry's state and pin count share one atomic word, and a pin is a CAS that
 * only succeeds on an OPEN entry.
 */
#include "libgpufs/host/hostfiles.h"
#include "libgpufs/host/hostfiles_priv.h"
#include "libgpufs/host/filemap.h"
#include "libgpufs/common/cache.h"
#include "libgpufs/common/queue.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#define HF_INODES_INIT 64u

int gpufs_hostfiles_create(uint32_t max_open, const struct gpufs_io_ops *io,
                           struct gpufs_hostfiles **out)
{
  struct gpufs_hostfiles *hf = calloc(1, sizeof(*hf));
  if (!hf) return -ENOMEM;
  hf->files = calloc(max_open, sizeof(*hf->files));
  hf->inodes = calloc(HF_INODES_INIT, sizeof(*hf->inodes));
  if (!hf->files || !hf->inodes || pthread_mutex_init(&hf->lock, NULL) != 0) {
    free(hf->files);
    free(hf->inodes);
    free(hf);
    return -ENOMEM;
  }
  hf->io = io;
  hf->nfiles = max_open;
  hf->icap = HF_INODES_INIT;
  hf->next_cid = 1;
  *out = hf;
  return 0;
}

void gpufs_hostfiles_destroy(struct gpufs_hostfiles *hf)
{
  if (!hf) return;
  for (uint32_t i = 0; i < hf->nfiles; i++) {
    struct hf_entry *e = &hf->files[i];
    /* relaxed: the workers are joined; nothing races with this */
    uint32_t st = hf_state(gpufs_ld_relaxed_u32_dev(&e->word));
    if (st == HF_OPEN || st == HF_CLOSING) {
      gpufs_filemap_unmap(e->map_addr, e->map_len);
      hf->io->close(e->fd);
    }
  }
  pthread_mutex_destroy(&hf->lock);
  free(hf->files);
  free(hf->inodes);
  free(hf);
}

static uint32_t hf_hash(uint64_t dev, uint64_t ino)
{
  uint64_t x = ino ^ (dev * 0x9e3779b97f4a7c15ull);
  x ^= x >> 31;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 29;
  return (uint32_t)x;
}

struct hf_inode *gpufs_hf_inode_find(struct hf_inode *tab, uint32_t cap, uint64_t dev,
                                     uint64_t ino)
{
  uint32_t i = hf_hash(dev, ino) & (cap - 1);
  while (tab[i].cid != 0 && (tab[i].dev != dev || tab[i].ino != ino))
    i = (i + 1) & (cap - 1);
  return &tab[i];
}

/* Keep the load at most one half, so probes stay short and a free bucket
 * always exists.  0 or -ENOMEM. */
int gpufs_hf_inodes_reserve(struct gpufs_hostfiles *hf)
{
  if ((uint64_t)(hf->icount + 1) * 2 <= hf->icap) return 0;
  if (hf->icap > UINT32_MAX / 2) return -ENOMEM;
  uint32_t cap = hf->icap * 2;
  struct hf_inode *tab = calloc(cap, sizeof(*tab));
  if (!tab) return -ENOMEM;
  for (uint32_t i = 0; i < hf->icap; i++)
    if (hf->inodes[i].cid != 0)
      *gpufs_hf_inode_find(tab, cap, hf->inodes[i].dev, hf->inodes[i].ino) = hf->inodes[i];
  free(hf->inodes);
  hf->inodes = tab;
  hf->icap = cap;
  return 0;
}

/* The cid and version of the inode st describes, as of this open by queue
 * `queue` with `flags`, and its registration (gpufs_hf_reg_open).  Called
 * with the lock held.  0 or -ENOMEM. */
static int hf_identify(struct gpufs_hostfiles *hf, const struct stat *st, uint32_t queue,
                       int flags, struct gpufs_hostfile_id *id)
{
  int64_t mtime = gpufs_timespec_ns(st->st_mtim);
  int64_t ctime = gpufs_timespec_ns(st->st_ctim);
  int rc = gpufs_hf_inodes_reserve(hf);
  if (rc < 0) return rc;
  struct hf_inode *n = gpufs_hf_inode_find(hf->inodes, hf->icap, (uint64_t)st->st_dev,
                                     (uint64_t)st->st_ino);
  if (n->cid == 0) {
    if (hf->next_cid > GPUFS_CID_MAX) return -ENFILE; /* cache keys hold 24 bits of cid */
    n->dev = (uint64_t)st->st_dev;
    n->ino = (uint64_t)st->st_ino;
    n->cid = hf->next_cid++;
    n->version = 1;
    n->stale = 0;
    hf->icount++;
  } else if ((n->stale & 1u << queue) || n->size != (int64_t)st->st_size ||
             n->mtime_ns != mtime || n->ctime_ns != ctime) {
    n->version++;
    n->stale = 0; /* the new version makes every queue's older pages stale */
    /* an automatic pin holds the pages the file had when it was pinned; a
     * truncation and rewrite from the host looks like any other change
     * here, so any change retires it (docs/api.md, "Automatic pins") */
    if (n->reg == REG_LIVE && n->r.automatic) gpufs_hf_reg_retire(hf, n);
  }
  n->size = (int64_t)st->st_size;
  n->mtime_ns = mtime;
  n->ctime_ns = ctime;
  id->size = (uint64_t)st->st_size;
  id->cid = n->cid;
  id->version = n->version;
  gpufs_hf_reg_open(hf, n, st, flags, id);
  return 0;
}

/* -errno of the call that just failed; -EIO if a hook forgot to set errno. */
static int hf_errno(void)
{
  return errno > 0 ? -errno : -EIO;
}

int gpufs_hostfiles_open(struct gpufs_hostfiles *hf, const char *path, int flags,
                         mode_t mode, uint32_t queue, struct gpufs_hostfile_id *id)
{
  if (queue >= GPUFS_HOSTFILES_MAX_QUEUES) return -EINVAL;
  int32_t hfid = -1;
  pthread_mutex_lock(&hf->lock);
  for (uint32_t n = 0; n < hf->nfiles; n++) {
    uint32_t i = (hf->hint + n) % hf->nfiles;
    uint32_t w = hf_word(HF_FREE, 0);
    /* acquire: pairs with the release that freed the entry (the last user
     * of its old descriptor is done) */
    if (gpufs_cas_acquire_u32_dev(&hf->files[i].word, &w, hf_word(HF_OPENING, 0))) {
      hf->hint = (i + 1) % hf->nfiles;
      hfid = (int32_t)i;
      break;
    }
  }
  pthread_mutex_unlock(&hf->lock);
  if (hfid < 0) return -EMFILE;

  /* The daemon's descriptors are its own: a program that forks and execs
   * must not inherit them.  A write-only file is opened for reading too
   * where the permissions allow: the GPU reads a page before it writes part
   * of it (its other bytes are written back with it). */
  int fd = -1, rc = 0;
  if ((flags & O_ACCMODE) == O_WRONLY) {
    errno = 0;
    fd = hf->io->open(path, (flags & ~O_ACCMODE) | O_RDWR | O_CLOEXEC, mode);
    if (fd < 0 && (rc = hf_errno()) == -EACCES) rc = 0; /* not readable: as asked */
  }
  if (fd < 0 && rc == 0) {
    errno = 0;
    fd = hf->io->open(path, flags | O_CLOEXEC, mode);
    rc = fd < 0 ? hf_errno() : 0;
  }
  struct stat st;
  if (rc == 0 && fstat(fd, &st) != 0) rc = hf_errno();

  pthread_mutex_lock(&hf->lock);
  struct hf_entry *e = &hf->files[hfid];
  if (rc == 0) rc = hf_identify(hf, &st, queue, flags, id);
  if (rc == 0) {
    e->fd = fd;
    e->dev = (uint64_t)st.st_dev;
    e->ino = (uint64_t)st.st_ino;
    gpufs_st_relaxed_u32_dev(&e->advised, 0u);
    gpufs_st_relaxed_u64_dev(&e->unstarted, 0ull);
    gpufs_st_relaxed_u64_dev(&e->read, 0ull);
    e->reread_at = id->reread_at;
    gpufs_st_relaxed_u32_dev(&e->map, MAP_NONE);
    e->map_addr = NULL;
    e->map_len = 0;
    /* relaxed: published with OPEN below; later registrations store it
     * under the lock (gpufs_hf_reg_publish) */
    gpufs_st_relaxed_u64_dev(&e->reg, id->reg);
  }
  /* release: publishes fd, advised and reread_at to pinners (pairs with the acquire CAS in
   * gpufs_hostfiles_pin), or frees the entry again */
  gpufs_st_release_u32_dev(&e->word, hf_word(rc == 0 ? HF_OPEN : HF_FREE, 0));
  pthread_mutex_unlock(&hf->lock);
  if (rc < 0) {
    if (fd >= 0) hf->io->close(fd);
    return rc;
  }
  return hfid;
}

static struct hf_entry *hf_entry(struct gpufs_hostfiles *hf, int32_t hfid)
{
  return hfid >= 0 && (uint32_t)hfid < hf->nfiles ? &hf->files[hfid] : NULL;
}

int gpufs_hostfiles_advise_once(struct gpufs_hostfiles *hf, int32_t hfid)
{
  struct hf_entry *e = hf_entry(hf, hfid);
  /* relaxed: the flag publishes nothing; one caller of all gets the 0 */
  return e && gpufs_xchg_relaxed_u32_dev(&e->advised, 1u) == 0;
}

int gpufs_hostfiles_written(struct gpufs_hostfiles *hf, int32_t hfid, uint64_t bytes,
                            uint64_t every)
{
  struct hf_entry *e = hf_entry(hf, hfid);
  if (!e || every == 0 || bytes == 0) return 0;
  /* relaxed: a count, publishing nothing; the exchange makes one caller of
   * those that see it cross `every` the one who starts the write-out */
  if (gpufs_add_relaxed_u64_dev(&e->unstarted, bytes) + bytes < every) return 0;
  return gpufs_xchg_relaxed_u64_dev(&e->unstarted, 0ull) >= every;
}

int gpufs_hostfiles_read_again(struct gpufs_hostfiles *hf, int32_t hfid, uint64_t bytes)
{
  struct hf_entry *e = hf_entry(hf, hfid);
  if (!e || e->reread_at == 0 || bytes == 0) return 0;
  /* relaxed: a count, publishing nothing; the one READ whose bytes cross
   * reread_at asks */
  const uint64_t before = gpufs_add_relaxed_u64_dev(&e->read, bytes);
  if (before >= e->reread_at || before + bytes < e->reread_at) return 0;
  return gpufs_hf_reg_reread(hf, e->dev, e->ino);
}

/* Close an entry's descriptor and free the entry: its last user does this. */
static int hf_retire(struct gpufs_hostfiles *hf, struct hf_entry *e)
{
  int fd = e->fd;
  gpufs_filemap_unmap(e->map_addr, e->map_len);
  e->map_addr = NULL;
  /* release: the entry may be reserved again; pairs with the reserving
   * CAS in gpufs_hostfiles_open */
  gpufs_st_release_u32_dev(&e->word, hf_word(HF_FREE, 0));
  errno = 0;
  return hf->io->close(fd) != 0 ? hf_errno() : 0;
}

int gpufs_hostfiles_close(struct gpufs_hostfiles *hf, int32_t hfid)
{
  struct hf_entry *e = hf_entry(hf, hfid);
  if (!e) return -EBADF;
  uint32_t w = gpufs_ld_relaxed_u32_dev(&e->word);
  for (;;) {
    if (hf_state(w) != HF_OPEN) return -EBADF;
    /* acq_rel: acquire pairs with the unpins' release (their preads are
     * done before we may close); release orders nothing of ours */
    if (gpufs_cas_acqrel_u32_dev(&e->word, &w, hf_word(HF_CLOSING, w & HF_PINS))) break;
  }
  /* unpinned: close now; else the last unpin closes */
  return (w & HF_PINS) == 0 ? hf_retire(hf, e) : 0;
}

int gpufs_hostfiles_pin(struct gpufs_hostfiles *hf, int32_t hfid)
{
  struct hf_entry *e = hf_entry(hf, hfid);
  if (!e) return -EBADF;
  uint32_t w = gpufs_ld_relaxed_u32_dev(&e->word);
  for (;;) {
    if (hf_state(w) != HF_OPEN) return -EBADF;
    /* acquire: pairs with the release of OPEN in gpufs_hostfiles_open, so
     * fd is the one this entry was opened with */
    if (gpufs_cas_acquire_u32_dev(&e->word, &w, w + 1)) return e->fd;
  }
}

void gpufs_hostfiles_unpin(struct gpufs_hostfiles *hf, int32_t hfid)
{
  struct hf_entry *e = &hf->files[hfid];
  /* acq_rel: release orders this worker's pread before a close of the
   * descriptor; acquire makes the last unpinner see the CLOSING state's
   * writer's view */
  uint32_t old = gpufs_add_acqrel_u32_dev(&e->word, (uint32_t)-1);
  if (hf_state(old) == HF_CLOSING && (old & HF_PINS) == 1) hf_retire(hf, e);
}

void gpufs_hostfiles_refresh(struct gpufs_hostfiles *hf, int fd, const struct stat *before,
                             uint32_t queue)
{
  struct stat st;
  if (fstat(fd, &st) != 0) return;
  pthread_mutex_lock(&hf->lock);
  struct hf_inode *n = gpufs_hf_inode_find(hf->inodes, hf->icap, (uint64_t)st.st_dev, (uint64_t)st.st_ino);
  if (n->cid != 0 && n->size == (int64_t)before->st_size &&
      n->mtime_ns == gpufs_timespec_ns(before->st_mtim) &&
      n->ctime_ns == gpufs_timespec_ns(before->st_ctim)) {
    n->size = (int64_t)st.st_size;
    n->mtime_ns = gpufs_timespec_ns(st.st_mtim);
    n->ctime_ns = gpufs_timespec_ns(st.st_ctim);
    /* the others' pages predate this write, which the record now hides */
    n->stale |= ~(queue < GPUFS_HOSTFILES_MAX_QUEUES ? 1u << queue : 0u);
  }
  pthread_mutex_unlock(&hf->lock);
}

/* Retire the mappings of every open entry of inode (dev, ino): a mapping
 * being made or live stops serving reads (its pages past the cut would
 * raise SIGBUS or read zeros).  Under hf->lock (dev and ino are set under
 * it). */
static void hf_map_retire(struct gpufs_hostfiles *hf, uint64_t dev, uint64_t ino)
{
  for (uint32_t i = 0; i < hf->nfiles; i++) {
    struct hf_entry *e = &hf->files[i];
    const uint32_t st = hf_state(gpufs_ld_relaxed_u32_dev(&e->word));
    if ((st != HF_OPEN && st != HF_CLOSING) || e->dev != dev || e->ino != ino) continue;
    uint32_t m = gpufs_ld_relaxed_u32_dev(&e->map);
    /* acq_rel CAS: RETIRED publishes nothing (the readers it turns away
     * read with pread); the mapping itself stays until hf_retire */
    while ((m == MAP_MAKING || m == MAP_LIVE) &&
           !gpufs_cas_acqrel_u32_dev(&e->map, &m, MAP_RETIRED)) {
    }
  }
}

const uint8_t *gpufs_hostfiles_map(struct gpufs_hostfiles *hf, int32_t hfid, uint64_t *len)
{
  struct hf_entry *e = &hf->files[hfid];
  /* acquire: pairs with the mapper's release of MAP_LIVE (map_addr and
   * map_len are set) */
  uint32_t m = gpufs_ld_acquire_u32_dev(&e->map);
  if (m == MAP_LIVE) {
    *len = e->map_len;
    return (const uint8_t *)e->map_addr;
  }
  /* someone is making it, it was retired or refused: pread this time */
  if (m != MAP_NONE || !gpufs_cas_acqrel_u32_dev(&e->map, &m, MAP_MAKING)) return NULL;
  struct stat st;
  const int reg = fstat(e->fd, &st) == 0 && S_ISREG(st.st_mode);
  const uint64_t n = reg ? (uint64_t)st.st_size : 0;
  void *a = n > 0 ? gpufs_filemap_map(hf->io, e->fd, n) : NULL;
  /* an empty file: try again at a later READ, when it may have grown */
  const uint32_t next = a ? MAP_LIVE : reg && n == 0 ? MAP_NONE : MAP_OFF;
  e->map_addr = a;
  e->map_len = a ? n : 0;
  m = MAP_MAKING;
  /* release: publishes map_addr and map_len to the acquire above; fails
   * when a renew retired the mapping meanwhile (hf_retire unmaps it) */
  if (!gpufs_cas_acqrel_u32_dev(&e->map, &m, next) || !a) return NULL;
  *len = n;
  return (const uint8_t *)a;
}

uint32_t gpufs_hostfiles_renew(struct gpufs_hostfiles *hf, int fd)
{
  struct stat st;
  if (fstat(fd, &st) != 0) return 0;
  uint32_t v = 0;
  pthread_mutex_lock(&hf->lock);
  struct hf_inode *n = gpufs_hf_inode_find(hf->inodes, hf->icap, (uint64_t)st.st_dev, (uint64_t)st.st_ino);
  if (n->cid != 0) {
    v = ++n->version;
    n->stale = 0; /* every queue's next open gets v, newer than its pages */
    gpufs_hf_reg_retire(hf, n);
    hf_map_retire(hf, n->dev, n->ino);
    n->size = (int64_t)st.st_size;
    n->mtime_ns = gpufs_timespec_ns(st.st_mtim);
    n->ctime_ns = gpufs_timespec_ns(st.st_ctim);
  }
  pthread_mutex_unlock(&hf->lock);
  return v;
}

int gpufs_hostfiles_ident(struct gpufs_hostfiles *hf, const struct stat *st,
                          struct gpufs_hostfile_id *id)
{
  int rc = -ENOENT;
  pthread_mutex_lock(&hf->lock);
  struct hf_inode *n = gpufs_hf_inode_find(hf->inodes, hf->icap, (uint64_t)st->st_dev,
                                     (uint64_t)st->st_ino);
  if (n->cid != 0 && n->size == (int64_t)st->st_size &&
      n->mtime_ns == gpufs_timespec_ns(st->st_mtim) &&
      n->ctime_ns == gpufs_timespec_ns(st->st_ctim)) {
    id->size = (uint64_t)n->size;
    id->cid = n->cid;
    id->version = n->version;
    id->reg = 0;
    id->pin_hint = 0;
    rc = 0;
  }
  pthread_mutex_unlock(&hf->lock);
  return rc;
}

int gpufs_hostfiles_acquire_ident(struct gpufs_hostfiles *hf, const struct stat *st,
                                  struct gpufs_hostfile_id *id)
{
  int rc = -ENOENT;
  pthread_mutex_lock(&hf->lock);
  struct hf_inode *n = gpufs_hf_inode_find(hf->inodes, hf->icap, (uint64_t)st->st_dev,
                                           (uint64_t)st->st_ino);
  if (n->cid != 0) {
    *id = (struct gpufs_hostfile_id){.size = (uint64_t)n->size, .cid = n->cid, .version = n->version};
    rc = 0;
  }
  pthread_mutex_unlock(&hf->lock);
  return rc;
}

void gpufs_hostfiles_acquired(struct gpufs_hostfiles *hf, const struct stat *st, uint64_t nchanged)
{
  pthread_mutex_lock(&hf->lock);
  struct hf_inode *n = gpufs_hf_inode_find(hf->inodes, hf->icap, (uint64_t)st->st_dev,
                                           (uint64_t)st->st_ino);
  if (n->cid != 0 && n->size == (int64_t)st->st_size) {
    n->mtime_ns = gpufs_timespec_ns(st->st_mtim);
    n->ctime_ns = gpufs_timespec_ns(st->st_ctim);
    n->stale = 0;
  }
  if (n->cid != 0 && nchanged) n->acquired_changed = 1;
  if (n->cid != 0 && nchanged && n->reg == REG_LIVE && n->r.automatic) gpufs_hf_reg_retire(hf, n);
  pthread_mutex_unlock(&hf->lock);
}

void gpufs_hostfiles_forget(struct gpufs_hostfiles *hf, uint64_t dev, uint64_t ino)
{
  pthread_mutex_lock(&hf->lock);
  struct hf_inode *n = gpufs_hf_inode_find(hf->inodes, hf->icap, dev, ino);
  if (n->cid != 0) n->size = -1; /* no file has this size: the next open bumps the version */
  pthread_mutex_unlock(&hf->lock);
}

int gpufs_hostfiles_fstat(struct gpufs_hostfiles *hf, int32_t hfid, struct stat *st)
{
  int fd = gpufs_hostfiles_pin(hf, hfid);
  if (fd < 0) return fd;
  int rc = fstat(fd, st) == 0 ? 0 : hf_errno();
  gpufs_hostfiles_unpin(hf, hfid);
  return rc;
}

