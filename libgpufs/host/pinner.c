/*
 * pinner.c - the automatic pinner (pinner.h).
 *
 *   worker (an OPEN or a READ batch      pinner thread
 *   that earns a pin: hostfiles.h)
 *   dup(fd) -> gpufs_pinner_hint --ring--> fstat, budget (evict LRU
 *   (answers at once)                      automatic pins no hfid has
 *                                          open), map, add the
 *                                          registration with nothing
 *                                          readable, pin window by window,
 *                                          publishing each longer prefix
 *
 * A file the pinner cannot place (no room left, a mapping that fails, a
 * registration that came first) is declined: its next open may hint it
 * again.  Opens after the registration get its word in their id; open
 * descriptors get each longer word with their next READ reply
 * (hostfiles_reg.c).
 */
#include "libgpufs/host/pinner.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "libgpufs/common/queue.h"
#include "libgpufs/host/hostfiles.h"

#define PIN_RING 64u       /* hints waiting at most; more are declined */
#define HOST_PAGE 4096ull
/* Bytes pinned per registration: 64 MiB windows pin at 37-43 GB/s on an
 * H200, as fast as one registration of a whole file (docs/pinning.md),
 * and let a reader use the prefix pinned so far. */
#define PIN_WINDOW (64ull << 20)

struct gpufs_pinner {
  struct gpufs_hostfiles *files;
  uint64_t budget;
  struct gpufs_pin_ops ops;
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t cond; /* a hint, a stop, or (drain) the ring emptied */
  int ring[PIN_RING]; /* under lock: the hints' descriptors, head to tail */
  uint32_t head, tail;
  int busy;            /* under lock: the thread serves a hint now */
  int stop;            /* under lock */
};

int gpufs_reg_map(int fd, const struct stat *st, struct gpufs_hostfile_reg *r)
{
  if (!S_ISREG(st->st_mode) || (uint64_t)st->st_size < HOST_PAGE) return -EINVAL;
  if ((uint64_t)st->st_size > GPUFS_REG_MAX_BYTES) return -EFBIG;
  const uint64_t map_len = ((uint64_t)st->st_size + HOST_PAGE - 1) & ~(HOST_PAGE - 1);
  void *addr = mmap(NULL, map_len, PROT_READ, MAP_SHARED, fd, 0);
  if (addr == MAP_FAILED) return -ENOMEM;
  if ((uint64_t)(uintptr_t)addr + map_len > (1ull << 48)) {
    /* gpufs_reg_word keeps 36 bits of the address (queue.h) */
    munmap(addr, map_len);
    return -ENOMEM;
  }
  *r = (struct gpufs_hostfile_reg){.dev = (uint64_t)st->st_dev,
                                   .ino = (uint64_t)st->st_ino,
                                   .addr = addr,
                                   .map_len = map_len,
                                   .len = (uint64_t)st->st_size & ~(HOST_PAGE - 1),
                                   .pinned = map_len};
  return 0;
}

void gpufs_reg_release(const struct gpufs_pin_ops *ops, const struct gpufs_hostfile_reg *r)
{
  if (r->window == 0) {
    ops->unpin(ops->ctx, r->addr, r->map_len);
  } else {
    for (uint64_t off = 0; off < r->pinned; off += r->window) {
      const uint64_t n = r->pinned - off < r->window ? r->pinned - off : r->window;
      ops->unpin(ops->ctx, (char *)r->addr + off, n);
    }
  }
  munmap(r->addr, r->map_len);
}

/* Bytes pinned now, all registrations together. */
static uint64_t pinned_bytes(struct gpufs_hostfiles *files)
{
  struct gpufs_hostfile_regstats s;
  gpufs_hostfiles_reg_stats(files, &s);
  return s.bytes;
}

int gpufs_reg_make_room(struct gpufs_hostfiles *files, uint64_t budget,
                        const struct gpufs_pin_ops *ops, uint64_t need)
{
  if (need > budget) return 0;
  while (pinned_bytes(files) > budget - need) {
    struct gpufs_hostfile_reg old;
    if (gpufs_hostfiles_reg_evict(files, &old) != 0) return 0;
    gpufs_reg_release(ops, &old);
  }
  return 1;
}

/* 1 when fd's file is no longer as *st says (size, mtime, ctime). */
static int pin_file_changed(int fd, const struct stat *st)
{
  struct stat now;
  return fstat(fd, &now) != 0 || !gpufs_stat_same(&now, st);
}

/* 1 when the pinner was told to stop. */
static int pin_stopping(struct gpufs_pinner *pn)
{
  pthread_mutex_lock(&pn->lock);
  const int stop = pn->stop;
  pthread_mutex_unlock(&pn->lock);
  return stop;
}

/* Pin registration r (added with nothing readable) window by window,
 * publishing each longer prefix, until it is whole, the file changes, the
 * registration is retired, a pin fails or the pinner stops.  The prefix
 * pinned stays (gpufs_reg_release unpins it).  GPUFS_REG_GROW_STALE when
 * the file changed (the registration is retired), else GROW_DONE; the
 * bytes pinned in *out. */
static enum gpufs_reg_grow pin_windows(struct gpufs_pinner *pn, int fd, const struct stat *st,
                                       const struct gpufs_hostfile_reg *r, uint64_t *out)
{
  uint64_t pinned = 0;
  enum gpufs_reg_grow how = GPUFS_REG_GROW_MORE;
  while (how == GPUFS_REG_GROW_MORE && pinned < r->map_len && !pin_stopping(pn)) {
    const uint64_t n = r->map_len - pinned < r->window ? r->map_len - pinned : r->window;
    if (pn->ops.pin(pn->ops.ctx, (char *)r->addr + pinned, n) != 0) break;
    pinned += n;
    /* truncated or rewritten while being pinned: the pinned pages may not
     * be the file's */
    if (pin_file_changed(fd, st)) how = GPUFS_REG_GROW_STALE;
    else if (gpufs_hostfiles_reg_grow(pn->files, st, r->addr, pinned, how) != 0) break;
  }
  if (how != GPUFS_REG_GROW_STALE) how = GPUFS_REG_GROW_DONE;
  gpufs_hostfiles_reg_grow(pn->files, st, r->addr, pinned, how);
  *out = pinned;
  return how;
}

/* Pin the file behind fd if it fits and stays unchanged while being
 * pinned; declined otherwise. */
static void pin_one(struct gpufs_pinner *pn, int fd)
{
  struct stat st;
  if (fstat(fd, &st) != 0) return;
  struct gpufs_hostfile_reg r;
  int rc = gpufs_hostfiles_reg_has(pn->files, (uint64_t)st.st_dev, (uint64_t)st.st_ino) ? -EEXIST : 0;
  if (rc == 0) rc = gpufs_reg_map(fd, &st, &r);
  if (rc == 0 && !gpufs_reg_make_room(pn->files, pn->budget, &pn->ops, r.map_len)) {
    munmap(r.addr, r.map_len);
    rc = -EFBIG;
  }
  if (rc == 0) {
    r.automatic = 1;
    r.window = PIN_WINDOW;
    r.pinned = 0;
    r.len = 0;
    r.pinning = 1;
    /* the budget again, under the table's lock: a gpufs_register may have
     * taken the room meanwhile */
    if ((rc = gpufs_hostfiles_reg_add(pn->files, &st, &r, pn->budget)) != 0) munmap(r.addr, r.map_len);
  }
  uint64_t pinned = 0;
  if (rc == 0 && (pin_windows(pn, fd, &st, &r, &pinned) == GPUFS_REG_GROW_STALE || pinned == 0)) {
    /* retired, or not one window pinned: released now unless a GPU
     * descriptor may hold it (then when room is needed, or at gpufs_stop) */
    struct gpufs_hostfile_reg old;
    if (gpufs_hostfiles_reg_remove(pn->files, r.dev, r.ino, &old) == 0) gpufs_reg_release(&pn->ops, &old);
    rc = -ESTALE;
  }
  if (rc != 0 && rc != -EEXIST) gpufs_hostfiles_pin_declined(pn->files, (uint64_t)st.st_dev, (uint64_t)st.st_ino);
}

static void *pinner_main(void *arg)
{
  struct gpufs_pinner *pn = arg;
  pthread_mutex_lock(&pn->lock);
  while (!pn->stop) {
    if (pn->head == pn->tail) {
      pthread_cond_wait(&pn->cond, &pn->lock);
      continue;
    }
    const int fd = pn->ring[pn->head % PIN_RING];
    pn->head++;
    pn->busy = 1;
    pthread_mutex_unlock(&pn->lock);
    pin_one(pn, fd);
    close(fd);
    pthread_mutex_lock(&pn->lock);
    pn->busy = 0;
    pthread_cond_broadcast(&pn->cond); /* a drain may wait for this one */
  }
  pthread_mutex_unlock(&pn->lock);
  return NULL;
}

int gpufs_pinner_start(struct gpufs_hostfiles *files, uint64_t budget,
                       const struct gpufs_pin_ops *ops, struct gpufs_pinner **out)
{
  struct gpufs_pinner *pn = calloc(1, sizeof(*pn));
  if (!pn) return -ENOMEM;
  pn->files = files;
  pn->budget = budget;
  pn->ops = *ops;
  if (pthread_mutex_init(&pn->lock, NULL) != 0) {
    free(pn);
    return -ENOMEM;
  }
  if (pthread_cond_init(&pn->cond, NULL) != 0) {
    pthread_mutex_destroy(&pn->lock);
    free(pn);
    return -ENOMEM;
  }
  int e = pthread_create(&pn->thread, NULL, pinner_main, pn);
  if (e != 0) {
    pthread_cond_destroy(&pn->cond);
    pthread_mutex_destroy(&pn->lock);
    free(pn);
    return -e;
  }
  *out = pn;
  return 0;
}

/* Decline the file behind fd and close it. */
static void decline(struct gpufs_hostfiles *files, int fd)
{
  struct stat st;
  if (files && fstat(fd, &st) == 0)
    gpufs_hostfiles_pin_declined(files, (uint64_t)st.st_dev, (uint64_t)st.st_ino);
  close(fd);
}

void gpufs_pinner_hint(struct gpufs_pinner *pn, int fd)
{
  if (fd < 0) return;
  if (!pn) {
    close(fd);
    return;
  }
  pthread_mutex_lock(&pn->lock);
  const int full = pn->stop || pn->tail - pn->head == PIN_RING;
  if (!full) {
    pn->ring[pn->tail % PIN_RING] = fd;
    pn->tail++;
    pthread_cond_broadcast(&pn->cond);
  }
  pthread_mutex_unlock(&pn->lock);
  if (full) decline(pn->files, fd);
}

void gpufs_pinner_drain(struct gpufs_pinner *pn)
{
  if (!pn) return;
  pthread_mutex_lock(&pn->lock);
  while (!pn->stop && (pn->head != pn->tail || pn->busy)) pthread_cond_wait(&pn->cond, &pn->lock);
  pthread_mutex_unlock(&pn->lock);
}

void gpufs_pinner_stop(struct gpufs_pinner *pn)
{
  if (!pn) return;
  pthread_mutex_lock(&pn->lock);
  pn->stop = 1;
  pthread_cond_broadcast(&pn->cond);
  pthread_mutex_unlock(&pn->lock);
  pthread_join(pn->thread, NULL);
  for (; pn->head != pn->tail; pn->head++) decline(pn->files, pn->ring[pn->head % PIN_RING]);
  pthread_cond_destroy(&pn->cond);
  pthread_mutex_destroy(&pn->lock);
  free(pn);
}
