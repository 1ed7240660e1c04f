/*
 * files.cu - gopen, gclose, gfstat: the GPU file table.
 *
 * One table per instance, one entry per distinct (path, flags) that is
 * open; every group that opens the same path with the same flags on the
 * instance gets the same descriptor (the instance and the entry index,
 * internal.cuh) and one reference.  The table has one lock: it is held only for
 * entry creation and state changes, never while the host works.  The first
 * opener marks its entry OPENING, drops the lock and asks the host; later
 * openers of the same path join it (below) and wait for it to leave
 * OPENING, also while they wait for the lock.
 *
 * References (libgpufs/common/refs.h) are counted without the lock while a
 * count stays at 1 or more: a gopen that finds its file open joins it by
 * adds (a grid's groups all at once: none waits for another's), and a
 * gclose that is not the last leaves with a CAS.  A count reaches 0 (and
 * the entry changes state and generation) only under the lock; a failed
 * last close that reopens the entry starts a new generation.
 *
 * The last gclose of a writable file marks it CLOSING (no new opener joins
 * it, no write-back may start holding it), waits for write-backs that hold
 * it, writes back its dirty lists itself, and only then closes the host
 * file.  If the write-back fails the entry goes back to OPEN with the
 * caller's reference: its dirty pages are never orphaned.
 */
#include <gpufs.cuh>
#include "libgpufs/common/gnode.h"
#include "libgpufs/common/refs.h"
#include "libgpufs/device/debug.cuh"
#include "libgpufs/device/writeback.cuh"

static __device__ bool path_eq(const char *a, const char *b)
{
  for (uint32_t i = 0; i < GPUFS_PATH_MAX; i++) {
    if (a[i] != b[i]) return false;
    if (a[i] == '\0') return true;
  }
  return true;
}

/* Entry i may be the open (or opening) file (path hash, len, flags); a hint
 * without the lock, a check with it (then the path decides). */
static __device__ bool entry_is(const struct gpufs_ftab *t, uint32_t i, uint32_t hash, uint32_t len,
                                uint32_t flags)
{
  struct gpufs_gfile *e = &t->files[i];
  /* relaxed: nothing is read through the entry on the strength of these */
  uint32_t st = gpufs_ld_relaxed_u32_dev(&e->state);
  return (st == GPUFS_GF_OPEN || st == GPUFS_GF_OPENING) &&
         gpufs_ld_relaxed_u32_dev(&e->hash) == hash && gpufs_ld_relaxed_u32_dev(&e->len) == len &&
         gpufs_ld_relaxed_u32_dev(&e->flags) == flags;
}

/* An entry becomes FREE: by the table lock's holder.  An entry opened for
 * writing leaves the count of writable entries (ftab.writers); a linked
 * one leaves its node. */
static __device__ void ftab_free_locked(const struct gpufs_ftab *t, struct gpufs_gfile *e)
{
  gpufs_node_unlink_locked(t, e);
  /* relaxed: the count changes only under the lock (its release publishes
   * it); gpufs_fd_hold_writer's lock-free read needs no ordering */
  if ((gpufs_ld_relaxed_u32_dev(&e->flags) & 3) != 0) gpufs_add_relaxed_u32_dev(t->writers, 0xffffffffu);
  gpufs_st_relaxed_u32_dev(&e->state, GPUFS_GF_FREE);
}

/* Drop a reference of a failed entry (ERROR); the last frees it. */
static __device__ void ftab_unref(const struct gpufs_ftab *t, struct gpufs_gfile *e)
{
  gpufs_ftab_lock(t);
  if (gpufs_refs_drop_locked(&e->refs) == 1) ftab_free_locked(t, e);
  gpufs_ftab_unlock(t);
}

/* A joiner holds a reference on entry idx: wait for its opener. */
static __device__ int ftab_joined(const struct gpufs_ftab *t, int idx)
{
  struct gpufs_gfile *e = &t->files[idx];
  uint32_t ns = 64, st;
  const uint64_t t0 = gpufs_now_ns();
  /* acquire: pairs with the opener's release of OPEN or ERROR; hfid, size,
   * cid, version (or err) are visible after it */
  while ((st = gpufs_ld_acquire_u32_dev(&e->state)) == GPUFS_GF_OPENING) gpufs_pause(&ns, GPUFS_PAUSE_MAX_NS);
  gpufs_ftab_time(&t->stats->wait_ns, t0);
  if (st == GPUFS_GF_OPEN) return idx;
  int err = e->err;
  ftab_unref(t, e);
  return err;
}

/* Join the open (or opening) entry of path and flags without the lock:
 * its index, or -1 when there is none. */
static __device__ int ftab_try_join(const struct gpufs_ftab *t, const char *path, uint32_t hash,
                                    uint32_t len, uint32_t flags)
{
  for (uint32_t i0 = 0; i0 < t->nfiles; i0 += GPUFS_SCAN_BATCH) {
    uint32_t h[GPUFS_SCAN_BATCH];
    GPUFS_UNROLL
    for (uint32_t k = 0; k < GPUFS_SCAN_BATCH; k++)
      /* relaxed: a hint (entry_is checks again) */
      h[k] = i0 + k < t->nfiles ? gpufs_ld_relaxed_u32_dev(&t->files[i0 + k].hash) : ~hash;
    for (uint32_t k = 0; k < GPUFS_SCAN_BATCH; k++) {
      const uint32_t i = i0 + k;
      if (h[k] != hash || !entry_is(t, i, hash, len, flags)) continue;
      struct gpufs_gfile *e = &t->files[i];
      uint64_t w = gpufs_refs_read(&e->refs); /* then what identifies the entry */
      /* by add: every group of a grid may join at once (refs.h) */
      if (entry_is(t, i, hash, len, flags) && path_eq(t->paths + (uint64_t)i * GPUFS_PATH_MAX, path) &&
          gpufs_refs_join_add(&e->refs, w))
        return (int)i;
    }
  }
  return -1;
}

#define GPUFS_O_KNOWN (3 | GPUFS_O_CREAT | GPUFS_O_EXCL | GPUFS_O_TRUNC)

/* The whole open on instance d, made by one thread: the entry (>= 0) or
 * -errno. */
static __device__ int gopen_one(const struct gpufs_dev *d, const char *path, int flags, int mode)
{
  const struct gpufs_ftab *t = &d->ftab;
  if (path == NULL) return -GPUFS_EFAULT;
  if ((flags & 3) == 3 || (flags & ~GPUFS_O_KNOWN) != 0) return -GPUFS_EINVAL;
  /* O_TRUNC cuts the file at every open: a descriptor that may write it */
  if ((flags & GPUFS_O_TRUNC) && (flags & 3) == 0) return -GPUFS_EINVAL;
  const bool excl = (flags & (GPUFS_O_CREAT | GPUFS_O_EXCL)) == (GPUFS_O_CREAT | GPUFS_O_EXCL);
  uint32_t len = 0, hash = 2166136261u; /* FNV-1a */
  while (len < GPUFS_PATH_MAX && path[len] != '\0') hash = (hash ^ (uint8_t)path[len++]) * 16777619u;
  if (len == GPUFS_PATH_MAX) return -GPUFS_ENAMETOOLONG;
  if (len == 0) return -GPUFS_ENOENT;

  /* Join an open entry without the lock when one is found: every group of
   * a grid may open the same file at once, and the lock would make them
   * queue.  Waiting for the lock, look again: the first opener's entry
   * appears while it holds the lock or soon after. */
  const uint64_t tl = gpufs_now_ns();
  for (uint32_t ns = 64;; gpufs_pause(&ns, GPUFS_PAUSE_MAX_NS)) {
    int j = excl ? -1 : ftab_try_join(t, path, hash, len, (uint32_t)flags);
    if (j >= 0) {
      gpufs_ftab_time(&t->stats->lock_ns, tl);
      return ftab_joined(t, j);
    }
    if (gpufs_ftab_trylock(t)) break;
  }
  gpufs_ftab_time(&t->stats->lock_ns, tl);
  int found = -1, free_slot = -1;
  for (uint32_t i = 0; i < t->nfiles && found < 0; i++) {
    struct gpufs_gfile *e = &t->files[i];
    uint32_t st = gpufs_ld_relaxed_u32_dev(&e->state);
    if (st == GPUFS_GF_FREE) {
      if (free_slot < 0) free_slot = (int)i;
    } else if ((st == GPUFS_GF_OPEN || st == GPUFS_GF_OPENING) &&
               gpufs_ld_relaxed_u32_dev(&e->hash) == hash &&
               gpufs_ld_relaxed_u32_dev(&e->len) == len &&
               path_eq(t->paths + (uint64_t)i * GPUFS_PATH_MAX, path)) {
      if (excl) { /* the file exists: it is open here */
        gpufs_ftab_unlock(t);
        return -GPUFS_EEXIST;
      }
      if (gpufs_ld_relaxed_u32_dev(&e->flags) == (uint32_t)flags) found = (int)i;
    }
  }
  if (found >= 0) {
    /* an OPEN or OPENING entry has a reference, and a count goes to 0 only
     * under the lock */
    gpufs_refs_add(&t->files[found].refs);
    gpufs_ftab_unlock(t);
    return ftab_joined(t, found);
  }
  if (free_slot < 0) {
    gpufs_ftab_unlock(t);
    return -GPUFS_EMFILE;
  }
  struct gpufs_gfile *e = &t->files[free_slot];
  char *epath = t->paths + (uint64_t)free_slot * GPUFS_PATH_MAX;
  for (uint32_t i = 0; i <= len; i++) epath[i] = path[i];
  /* relaxed: published by gpufs_refs_renew below */
  gpufs_st_relaxed_u32_dev(&e->hash, hash);
  gpufs_st_relaxed_u32_dev(&e->len, len);
  gpufs_st_relaxed_u32_dev(&e->flags, (uint32_t)flags);
  gpufs_st_relaxed_u32_dev(&e->flushing, 0u);
  gpufs_st_relaxed_u32_dev(&e->advice, (uint32_t)GPUFS_FADV_NORMAL);
  e->err = 0;
  e->node = GPUFS_NIL;
  gpufs_st_relaxed_u32_dev(&e->state, GPUFS_GF_OPENING);
  /* relaxed: under the lock, as in ftab_free_locked */
  if ((flags & 3) != 0) gpufs_add_relaxed_u32_dev(t->writers, 1u);
  gpufs_refs_renew(&e->refs); /* a new incarnation, one reference: ours */
  gpufs_ftab_unlock(t);

  /* O_TRUNC is done after the open, by gopen_trunc, at every open */
  struct gpufs_call c = {GPUFS_OP_OPEN, -1, (uint64_t)(uint32_t)mode, len,
                         (uint32_t)flags & ~(uint32_t)GPUFS_O_TRUNC, path, len + 1};
  uint64_t out[4];
  const uint64_t th = gpufs_now_ns();
  int64_t r = gpufs_host_call(d, &c, out);
  gpufs_ftab_time(&t->stats->host_ns, th);
  if (r >= 0 && out[0] / d->cache.page_size >= (1ull << GPUFS_PAGE_BITS)) {
    struct gpufs_call cl = {GPUFS_OP_CLOSE, (int32_t)r, 0, 0, 0, NULL, 0};
    gpufs_host_call(d, &cl, out);
    r = -GPUFS_EFBIG; /* more pages than a cache key can name */
  }
  if (r >= 0) {
    e->hfid = (int32_t)r;
    e->cid = (uint32_t)out[1];
    gpufs_ftab_lock(t);
    gpufs_node_link_locked(t, e, (uint32_t)out[1], out[0], (uint32_t)out[2], out[3]);
    gpufs_ftab_unlock(t);
    /* release: publishes hfid, cid and the node; pairs with the acquire of
     * waiting openers above and of gpufs_fd_get */
    gpufs_st_release_u32_dev(&e->state, GPUFS_GF_OPEN);
    return free_slot;
  }
  e->err = (int32_t)r;
  /* release: publishes err; pairs with the waiting openers' acquire */
  gpufs_st_release_u32_dev(&e->state, GPUFS_GF_ERROR);
  ftab_unref(t, e);
  return (int)r;
}

__device__ int gpufs_close_drop(const struct gpufs_dev *d, uint32_t fd)
{
  const struct gpufs_ftab *t = &d->ftab;
  struct gpufs_gfile *e = &t->files[fd];
  /* not the last reference: leave without the lock */
  /* acquire: pairs with the opener's release of OPEN */
  if (gpufs_ld_acquire_u32_dev(&e->state) == GPUFS_GF_OPEN && gpufs_refs_drop(&e->refs))
    return GPUFS_CLOSE_SHARED;
  gpufs_ftab_lock(t);
  uint32_t had = 0;
  if (gpufs_ld_relaxed_u32_dev(&e->state) == GPUFS_GF_OPEN) had = gpufs_refs_drop_locked(&e->refs);
  if (had == 1) gpufs_st_relaxed_u32_dev(&e->state, GPUFS_GF_CLOSING);
  gpufs_ftab_unlock(t);
  return had == 0 ? -GPUFS_EBADF : had == 1 ? GPUFS_CLOSE_LAST : GPUFS_CLOSE_SHARED;
}

__device__ int gpufs_close_finish(const struct gpufs_dev *d, uint32_t fd, int64_t err)
{
  const struct gpufs_ftab *t = &d->ftab;
  struct gpufs_gfile *e = &t->files[fd];
  if (err < 0) {
    gpufs_ftab_lock(t);
    /* OPEN again with one reference, the caller's, under a new generation:
     * a joiner holding a word read before the close must fail its join (the
     * same generation again would let it join in between, before OPEN) */
    gpufs_st_relaxed_u32_dev(&e->state, GPUFS_GF_OPEN);
    gpufs_refs_renew(&e->refs); /* after OPEN: joiners see both */
    gpufs_ftab_unlock(t);
    return (int)err;
  }
  struct gpufs_call c = {GPUFS_OP_CLOSE, e->hfid, 0, 0, 0, NULL, 0};
  uint64_t out[4];
  int64_t r = gpufs_host_call(d, &c, out);
  gpufs_ftab_lock(t);
  ftab_free_locked(t, e);
  gpufs_ftab_unlock(t);
  return (int)r;
}

/* O_TRUNC, at every gopen that asks for it (as open(2)), also one that
 * joined an open descriptor: the file's dirty bytes are dropped (never
 * written back), then the host cuts it to 0 after the write-backs in
 * flight, and every descriptor of the file gets size 0 and a new version.
 * The caller holds a reference on entry fd (writable: gopen_one refuses
 * O_TRUNC with O_RDONLY).  On an error the reference is dropped again (a
 * last one closes the entry: what is dirty belongs to other entries, which
 * write it back).  fd or -errno.  One thread. */
static __device__ int gopen_trunc(const struct gpufs_dev *d, uint32_t fd)
{
  int64_t r = gpufs_fd_hold(d, (int)fd);
  if (r == 0) {
    gpufs_node_drop_dirty(d, fd);
    r = gpufs_node_truncate(d, fd, 0);
    gpufs_fd_unhold(d, (int)fd);
  }
  if (r == 0) return (int)fd;
  if (gpufs_close_drop(d, fd) == GPUFS_CLOSE_LAST) {
    gpufs_fd_wait_unheld(d, (int)fd, 0);
    gpufs_close_finish(d, fd, 0);
  }
  return (int)r;
}

template <typename G>
static __device__ int gclose_group(G g, int kfd)
{
  if (!g.shape_ok()) return -GPUFS_EINVAL;
  uint32_t fd = 0;
  const struct gpufs_dev *d = gpufs_fd_instance(kfd, &fd); /* the same in every thread */
  if (d == NULL) return -GPUFS_EBADF;
  return gpufs_close_group(g, d, fd);
}

static __device__ int gfstat_one(int fd, struct gstat *st)
{
  struct gpufs_fdinfo fi;
  int rc = gpufs_fd_get(fd, &fi);
  if (rc) return rc;
  struct gpufs_call c = {GPUFS_OP_FSTAT, fi.hfid, 0, 0, 0, NULL, 0};
  uint64_t out[4];
  int64_t r = gpufs_host_call(fi.d, &c, out);
  if (r < 0) return (int)r;
  /* bytes this GPU wrote past the host's end are the file's, not yet
   * written back */
  st->st_size = (int64_t)(out[0] > fi.size ? out[0] : fi.size);
  st->st_mode = (uint32_t)out[1];
  st->st_mtime_ns = (int64_t)out[2];
  st->st_ino = out[3];
  return 0;
}

/* Run f on the group's first thread and give its result to every thread. */
template <typename G, typename F>
static __device__ __forceinline__ int64_t leader_call(G g, F f)
{
  if (!g.shape_ok()) return -GPUFS_EINVAL;
  int64_t r = 0;
  g.sync();
  if (g.rank() == 0) r = f();
  return g.bcast(r);
}

/* gopen_one on instance `instance` (GPUFS_NO_INSTANCE: none), counted in
 * its table's time statistics: the kernel's descriptor or -errno. */
static __device__ int gopen_timed(uint32_t instance, const char *path, int flags, int mode)
{
  const struct gpufs_dev *d = gpufs_instance(instance);
  if (d == NULL) return -GPUFS_ENODEV;
  const struct gpufs_ftab *t = &d->ftab;
  const uint64_t t0 = gpufs_now_ns();
  int r = gopen_one(d, path, flags, mode);
  if (r >= 0 && (flags & GPUFS_O_TRUNC)) r = gopen_trunc(d, (uint32_t)r);
  gpufs_ftab_time(&t->stats->total_ns, t0);
  gpufs_add_relaxed_u64_dev(&t->stats->calls, 1ull);
  return r < 0 ? r : gpufs_fd_make(d, (uint32_t)r);
}

__device__ int gopen(const char *path, int flags, int mode)
{
  GPUFS_DEBUG_UNIFORM(gpufs_block_group{}, "gopen", GPUFS_DEBUG_NONUNIFORM, GPUFS_DBG_PATH(path),
                      GPUFS_DBG_INT(flags), GPUFS_DBG_INT(mode));
  gpufs_block_group g{};
  return (int)leader_call(g, [&] { return (int64_t)gopen_timed(gpufs_dev_default, path, flags, mode); });
}

__device__ int gopen_warp(const char *path, int flags, int mode)
{
  GPUFS_DEBUG_UNIFORM(gpufs_warp_group{}, "gopen_warp", GPUFS_DEBUG_NONUNIFORM,
                      GPUFS_DBG_PATH(path), GPUFS_DBG_INT(flags), GPUFS_DBG_INT(mode));
  return (int)leader_call(gpufs_warp_group{}, [&] {
    return (int64_t)gopen_timed(gpufs_dev_default, path, flags, mode);
  });
}

__device__ int gopen(struct gpufs_ref ref, const char *path, int flags, int mode)
{
  GPUFS_DEBUG_UNIFORM(gpufs_block_group{}, "gopen", GPUFS_DEBUG_NONUNIFORM,
                      GPUFS_DBG_INT(ref.instance), GPUFS_DBG_PATH(path), GPUFS_DBG_INT(flags),
                      GPUFS_DBG_INT(mode));
  gpufs_block_group g{};
  return (int)leader_call(g, [&] { return (int64_t)gopen_timed(ref.instance, path, flags, mode); });
}

__device__ int gopen_warp(struct gpufs_ref ref, const char *path, int flags, int mode)
{
  GPUFS_DEBUG_UNIFORM(gpufs_warp_group{}, "gopen_warp", GPUFS_DEBUG_NONUNIFORM,
                      GPUFS_DBG_INT(ref.instance), GPUFS_DBG_PATH(path), GPUFS_DBG_INT(flags),
                      GPUFS_DBG_INT(mode));
  return (int)leader_call(gpufs_warp_group{}, [&] {
    return (int64_t)gopen_timed(ref.instance, path, flags, mode);
  });
}

__device__ int gclose(int fd)
{
  GPUFS_DEBUG_UNIFORM(gpufs_block_group{}, "gclose", GPUFS_DEBUG_NONUNIFORM, GPUFS_DBG_INT(fd));
  return gclose_group(gpufs_block_group{}, fd);
}

__device__ int gclose_warp(int fd)
{
  GPUFS_DEBUG_UNIFORM(gpufs_warp_group{}, "gclose_warp", GPUFS_DEBUG_NONUNIFORM, GPUFS_DBG_INT(fd));
  return gclose_group(gpufs_warp_group{}, fd);
}

static __device__ int gunlink_one(uint32_t instance, const char *path)
{
  const struct gpufs_dev *d = gpufs_instance(instance);
  if (d == NULL) return -GPUFS_ENODEV;
  if (path == NULL) return -GPUFS_EFAULT;
  uint32_t len = 0;
  while (len < GPUFS_PATH_MAX && path[len] != '\0') len++;
  if (len == GPUFS_PATH_MAX) return -GPUFS_ENAMETOOLONG;
  if (len == 0) return -GPUFS_ENOENT;
  struct gpufs_call c = {GPUFS_OP_UNLINK, -1, 0, len, 0, path, len + 1};
  uint64_t out[4];
  return (int)gpufs_host_call(d, &c, out);
}

__device__ int gunlink(const char *path)
{
  GPUFS_DEBUG_UNIFORM(gpufs_block_group{}, "gunlink", GPUFS_DEBUG_NONUNIFORM, GPUFS_DBG_PATH(path));
  gpufs_block_group g{};
  return (int)leader_call(g, [&] { return (int64_t)gunlink_one(gpufs_dev_default, path); });
}

__device__ int gunlink_warp(const char *path)
{
  GPUFS_DEBUG_UNIFORM(gpufs_warp_group{}, "gunlink_warp", GPUFS_DEBUG_NONUNIFORM,
                      GPUFS_DBG_PATH(path));
  return (int)leader_call(gpufs_warp_group{},
                          [&] { return (int64_t)gunlink_one(gpufs_dev_default, path); });
}

__device__ int gunlink(struct gpufs_ref ref, const char *path)
{
  GPUFS_DEBUG_UNIFORM(gpufs_block_group{}, "gunlink", GPUFS_DEBUG_NONUNIFORM,
                      GPUFS_DBG_INT(ref.instance), GPUFS_DBG_PATH(path));
  gpufs_block_group g{};
  return (int)leader_call(g, [&] { return (int64_t)gunlink_one(ref.instance, path); });
}

__device__ int gunlink_warp(struct gpufs_ref ref, const char *path)
{
  GPUFS_DEBUG_UNIFORM(gpufs_warp_group{}, "gunlink_warp", GPUFS_DEBUG_NONUNIFORM,
                      GPUFS_DBG_INT(ref.instance), GPUFS_DBG_PATH(path));
  return (int)leader_call(gpufs_warp_group{},
                          [&] { return (int64_t)gunlink_one(ref.instance, path); });
}

static __device__ int gfadvise_one(int fd, int64_t offset, int64_t len, int advice)
{
  struct gpufs_fdinfo fi;
  int rc = gpufs_fd_get(fd, &fi);
  if (rc) return rc;
  if (offset < 0 || len < 0 || advice < GPUFS_FADV_NORMAL || advice > GPUFS_FADV_NOREUSE)
    return -GPUFS_EINVAL;
  const uint32_t l = len > (int64_t)UINT32_MAX ? 0 : (uint32_t)len; /* 0: to the end */
  struct gpufs_call c = {GPUFS_OP_FADVISE, fi.hfid, (uint64_t)offset, l, (uint32_t)advice, NULL, 0};
  uint64_t out[4];
  int r = (int)gpufs_host_call(fi.d, &c, out);
  /* the access-pattern advice also steers the GPU's readahead, for the
   * whole descriptor (readahead.cuh); relaxed: a hint, read by gpufs_fd_get */
  if (r == 0 && advice <= GPUFS_FADV_SEQUENTIAL)
    gpufs_st_relaxed_u32_dev(&fi.d->ftab.files[fi.fd].advice, (uint32_t)advice);
  return r;
}

__device__ int gfadvise(int fd, int64_t offset, int64_t len, int advice)
{
  GPUFS_DEBUG_UNIFORM(gpufs_block_group{}, "gfadvise", GPUFS_DEBUG_NONUNIFORM, GPUFS_DBG_INT(fd),
                      GPUFS_DBG_INT(offset), GPUFS_DBG_INT(len), GPUFS_DBG_INT(advice));
  gpufs_block_group g{};
  return (int)leader_call(g, [&] { return (int64_t)gfadvise_one(fd, offset, len, advice); });
}

__device__ int gfadvise_warp(int fd, int64_t offset, int64_t len, int advice)
{
  GPUFS_DEBUG_UNIFORM(gpufs_warp_group{}, "gfadvise_warp", GPUFS_DEBUG_NONUNIFORM,
                      GPUFS_DBG_INT(fd), GPUFS_DBG_INT(offset), GPUFS_DBG_INT(len),
                      GPUFS_DBG_INT(advice));
  return (int)leader_call(gpufs_warp_group{},
                          [&] { return (int64_t)gfadvise_one(fd, offset, len, advice); });
}

/* gfstat: the leader asks the host, every thread gets the fields, so st may
 * point to a thread's own memory. */
template <typename G>
static __device__ __forceinline__ int gfstat_group(G g, int fd, struct gstat *st)
{
  struct gstat tmp = {0, 0, 0, 0};
  int64_t rc = leader_call(g, [&] { return (int64_t)gfstat_one(fd, &tmp); });
  if (rc < 0) return (int)rc;
  /* every thread takes part in each broadcast, whatever its st */
  int64_t size = g.bcast(tmp.st_size);
  int64_t mode = g.bcast(tmp.st_mode);
  int64_t ino = g.bcast((int64_t)tmp.st_ino);
  int64_t mtime = g.bcast(tmp.st_mtime_ns);
  if (st == NULL) return -GPUFS_EFAULT;
  st->st_size = size;
  st->st_mode = (uint32_t)mode;
  st->st_ino = (uint64_t)ino;
  st->st_mtime_ns = mtime;
  return 0;
}

__device__ int gfstat(int fd, struct gstat *st)
{
  GPUFS_DEBUG_UNIFORM(gpufs_block_group{}, "gfstat", GPUFS_DEBUG_NONUNIFORM, GPUFS_DBG_INT(fd));
  return gfstat_group(gpufs_block_group{}, fd, st);
}

__device__ int gfstat_warp(int fd, struct gstat *st)
{
  GPUFS_DEBUG_UNIFORM(gpufs_warp_group{}, "gfstat_warp", GPUFS_DEBUG_NONUNIFORM, GPUFS_DBG_INT(fd));
  return gfstat_group(gpufs_warp_group{}, fd, st);
}
