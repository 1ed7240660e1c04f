/*
 * files.cu - gopen, gclose, gfstat: the GPU file table.
 *
 * One table entry per distinct (path, flags) that is open; every group that
 * opens the same path with the same flags gets the same descriptor (the entry
 * index) and one reference.  The table has one lock: it is held only for
 * table edits, never while the host works.  The first opener marks its entry
 * OPENING, drops the lock and asks the host; later openers of the same path
 * take a reference and wait for the entry to leave OPENING.
 */
#include "include/gpufs.cuh"
#include "libgpufs/device/group.cuh"
#include "libgpufs/device/internal.cuh"

static __device__ void ftab_lock(const struct gpufs_ftab *t)
{
  uint32_t ns = 32, exp = 0;
  /* acquire: pairs with the release in ftab_unlock; the entries as the last
   * holder left them are visible.  While held, wait with relaxed loads. */
  while (!gpufs_cas_acquire_u32_dev(t->lock, &exp, 1u)) {
    while (gpufs_ld_relaxed_u32_dev(t->lock) != 0) gpufs_backoff_dev(&ns);
    exp = 0;
  }
}

static __device__ void ftab_unlock(const struct gpufs_ftab *t)
{
  /* release: publishes this holder's entry edits; pairs with ftab_lock */
  gpufs_st_release_u32_dev(t->lock, 0u);
}

static __device__ bool path_eq(const char *a, const char *b)
{
  for (uint32_t i = 0; i < GPUFS_PATH_MAX; i++) {
    if (a[i] != b[i]) return false;
    if (a[i] == '\0') return true;
  }
  return true;
}

/* Drop a reference taken under the lock; frees a failed entry with the last. */
static __device__ void ftab_unref(const struct gpufs_ftab *t, struct gpufs_gfile *e)
{
  ftab_lock(t);
  uint32_t refs = gpufs_ld_relaxed_u32_dev(&e->refs) - 1;
  gpufs_st_relaxed_u32_dev(&e->refs, refs);
  if (refs == 0) gpufs_st_relaxed_u32_dev(&e->state, GPUFS_GF_FREE);
  ftab_unlock(t);
}

/* The whole open, made by one thread. */
static __device__ int gopen_one(const char *path, int flags)
{
  const struct gpufs_ftab *t = &gpufs_dev.ftab;
  if (path == NULL) return -GPUFS_EFAULT;
  if ((flags & 3) != GPUFS_O_RDONLY || (flags & ~3) != 0) return -GPUFS_EINVAL;
  uint32_t len = 0;
  while (len < GPUFS_PATH_MAX && path[len] != '\0') len++;
  if (len == GPUFS_PATH_MAX) return -GPUFS_ENAMETOOLONG;
  if (len == 0) return -GPUFS_ENOENT;

  ftab_lock(t);
  int found = -1, free_slot = -1;
  for (uint32_t i = 0; i < t->nfiles; i++) {
    struct gpufs_gfile *e = &t->files[i];
    uint32_t st = gpufs_ld_relaxed_u32_dev(&e->state);
    if (st == GPUFS_GF_FREE) {
      if (free_slot < 0) free_slot = (int)i;
    } else if ((st == GPUFS_GF_OPEN || st == GPUFS_GF_OPENING) &&
               gpufs_ld_relaxed_u32_dev(&e->flags) == (uint32_t)flags && path_eq(e->path, path)) {
      found = (int)i;
      break;
    }
  }
  if (found >= 0) {
    struct gpufs_gfile *e = &t->files[found];
    gpufs_st_relaxed_u32_dev(&e->refs, gpufs_ld_relaxed_u32_dev(&e->refs) + 1);
    ftab_unlock(t);
    uint32_t ns = 64, st;
    /* acquire: pairs with the opener's release of OPEN or ERROR; hfid, size,
     * cid, version (or err) are visible after it */
    while ((st = gpufs_ld_acquire_u32_dev(&e->state)) == GPUFS_GF_OPENING) gpufs_backoff_dev(&ns);
    if (st == GPUFS_GF_OPEN) return found;
    int err = e->err;
    ftab_unref(t, e);
    return err;
  }
  if (free_slot < 0) {
    ftab_unlock(t);
    return -GPUFS_EMFILE;
  }
  struct gpufs_gfile *e = &t->files[free_slot];
  for (uint32_t i = 0; i <= len; i++) e->path[i] = path[i];
  gpufs_st_relaxed_u32_dev(&e->flags, (uint32_t)flags);
  gpufs_st_relaxed_u32_dev(&e->refs, 1u);
  gpufs_st_relaxed_u32_dev(&e->state, GPUFS_GF_OPENING);
  ftab_unlock(t);

  struct gpufs_call c = {GPUFS_OP_OPEN, -1, 0644, len, (uint32_t)flags, path, len + 1};
  uint64_t out[4];
  int64_t r = gpufs_host_call(&c, out);
  if (r >= 0 && out[0] / gpufs_dev.cache.page_size >= (1ull << GPUFS_PAGE_BITS)) {
    struct gpufs_call cl = {GPUFS_OP_CLOSE, (int32_t)r, 0, 0, 0, NULL, 0};
    gpufs_host_call(&cl, out);
    r = -GPUFS_EFBIG; /* more pages than a cache key can name */
  }
  if (r >= 0) {
    e->hfid = (int32_t)r;
    e->size = out[0];
    e->cid = (uint32_t)out[1];
    e->version = (uint32_t)out[2];
    /* release: publishes hfid, size, cid and version; pairs with the acquire
     * of waiting openers above and of gpufs_fd_get */
    gpufs_st_release_u32_dev(&e->state, GPUFS_GF_OPEN);
    return free_slot;
  }
  e->err = (int32_t)r;
  /* release: publishes err; pairs with the waiting openers' acquire */
  gpufs_st_release_u32_dev(&e->state, GPUFS_GF_ERROR);
  ftab_unref(t, e);
  return (int)r;
}

__device__ int gpufs_fd_get(int fd, struct gpufs_fdinfo *fi)
{
  const struct gpufs_ftab *t = &gpufs_dev.ftab;
  if (fd < 0 || (uint32_t)fd >= t->nfiles) return -GPUFS_EBADF;
  struct gpufs_gfile *e = &t->files[fd];
  /* acquire: pairs with the opener's release of OPEN */
  if (gpufs_ld_acquire_u32_dev(&e->state) != GPUFS_GF_OPEN) return -GPUFS_EBADF;
  fi->hfid = e->hfid;
  fi->cid = e->cid;
  fi->version = e->version;
  fi->size = e->size;
  return 0;
}

static __device__ int gclose_one(int fd)
{
  const struct gpufs_ftab *t = &gpufs_dev.ftab;
  if (fd < 0 || (uint32_t)fd >= t->nfiles) return -GPUFS_EBADF;
  struct gpufs_gfile *e = &t->files[fd];
  ftab_lock(t);
  uint32_t refs = gpufs_ld_relaxed_u32_dev(&e->refs);
  if (gpufs_ld_relaxed_u32_dev(&e->state) != GPUFS_GF_OPEN || refs == 0) {
    ftab_unlock(t);
    return -GPUFS_EBADF;
  }
  gpufs_st_relaxed_u32_dev(&e->refs, refs - 1);
  if (refs > 1) {
    ftab_unlock(t);
    return 0;
  }
  gpufs_st_relaxed_u32_dev(&e->state, GPUFS_GF_CLOSING);
  ftab_unlock(t);
  struct gpufs_call c = {GPUFS_OP_CLOSE, e->hfid, 0, 0, 0, NULL, 0};
  uint64_t out[4];
  int64_t r = gpufs_host_call(&c, out);
  ftab_lock(t);
  gpufs_st_relaxed_u32_dev(&e->state, GPUFS_GF_FREE);
  ftab_unlock(t);
  return (int)r;
}

static __device__ int gfstat_one(int fd, struct gstat *st)
{
  struct gpufs_fdinfo fi;
  int rc = gpufs_fd_get(fd, &fi);
  if (rc) return rc;
  struct gpufs_call c = {GPUFS_OP_FSTAT, fi.hfid, 0, 0, 0, NULL, 0};
  uint64_t out[4];
  int64_t r = gpufs_host_call(&c, out);
  if (r < 0) return (int)r;
  st->st_size = (int64_t)out[0];
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

__device__ int gopen(const char *path, int flags)
{
  __shared__ struct gpufs_block_scratch sh;
  gpufs_block_group g{&sh};
  return (int)leader_call(g, [&] { return (int64_t)gopen_one(path, flags); });
}

__device__ int gopen_warp(const char *path, int flags)
{
  return (int)leader_call(gpufs_warp_group{}, [&] { return (int64_t)gopen_one(path, flags); });
}

__device__ int gclose(int fd)
{
  __shared__ struct gpufs_block_scratch sh;
  gpufs_block_group g{&sh};
  return (int)leader_call(g, [&] { return (int64_t)gclose_one(fd); });
}

__device__ int gclose_warp(int fd)
{
  return (int)leader_call(gpufs_warp_group{}, [&] { return (int64_t)gclose_one(fd); });
}

/* gfstat: the leader asks the host, every thread gets the fields, so st may
 * point to a thread's own memory. */
template <typename G>
static __device__ __forceinline__ int gfstat_group(G g, int fd, struct gstat *st)
{
  struct gstat tmp = {0, 0, 0, 0};
  int64_t rc = leader_call(g, [&] { return (int64_t)gfstat_one(fd, &tmp); });
  if (rc < 0) return (int)rc;
  if (st == NULL) return -GPUFS_EFAULT;
  st->st_size = g.bcast(tmp.st_size);
  st->st_mode = (uint32_t)g.bcast(tmp.st_mode);
  st->st_ino = (uint64_t)g.bcast((int64_t)tmp.st_ino);
  st->st_mtime_ns = g.bcast(tmp.st_mtime_ns);
  return 0;
}

__device__ int gfstat(int fd, struct gstat *st)
{
  __shared__ struct gpufs_block_scratch sh;
  return gfstat_group(gpufs_block_group{&sh}, fd, st);
}

__device__ int gfstat_warp(int fd, struct gstat *st)
{
  return gfstat_group(gpufs_warp_group{}, fd, st);
}
