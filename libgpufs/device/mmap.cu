/*
 * mmap.cu - gmmap, gmunmap, gmsync: pointers into cached pages.
 *
 * gmmap finds the one page that holds [offset, offset+size) with a lookup
 * and a pin when it is cached (gpufs_round_hit_one), else loads it with a
 * one-page round (round.cuh), and keeps its frame pinned: the pointer stays
 * valid, and the frame is never evicted, until gmunmap drops the pin.  A
 * mapping never crosses a page boundary; a request that would is refused
 * with -EINVAL (map the pieces one by one).  Pinned frames count against the
 * cache: when every frame a group's ring holds is pinned, gmmap and gread
 * wait alloc_timeout_ms for one to be released and then fail with -ENOMEM.
 *
 * Writable mappings (PROT_WRITE, MAP_SHARED, a descriptor open O_RDWR) are
 * recorded (libgpufs/common/wmaps.h) and hold a reference on their descriptor until
 * gmunmap, so that their bytes can reach the file after the caller's
 * gclose: the gmunmap that drops the last reference does the last close's
 * write-back.  There is no pristine copy of the page to diff against:
 * gmsync and gmunmap mark the range they are given dirty on the file's
 * lists, and write-back then writes those grains.  Read-only mappings are
 * not recorded and mark nothing.
 */
#include "libgpufs/common/refs.h"
#include "libgpufs/common/wmaps.h"
#include "libgpufs/device/writeback.cuh"
#include "libgpufs/device/debug.cuh"

#define ERR_PTR(e) ((void *)(intptr_t)(e))

/* A writable mapping of entry fd at byte off of the cache (frame f, pinned
 * for it) begins: a reference on the entry first, then the record (so that
 * a record never names an entry it holds no reference on: a gmunmap that
 * takes it drops that reference).  Every thread of the group calls it;
 * synchronizes the group.  0; or -EBADF / -ENOMEM, with the frame unpinned
 * and the reference dropped again (as gclose: it may be the last). */
template <typename G>
static __device__ int wmap_begin(G g, const struct gpufs_dev *d, uint32_t fd, uint64_t off, uint32_t size,
                                 uint32_t f)
{
  int64_t rc = 0;
  if (g.rank() == 0) {
    struct gpufs_gfile *e = &d->ftab.files[fd];
    const uint64_t w = gpufs_refs_read(&e->refs);
    /* acquire: pairs with the opener's release of OPEN.  The caller's own
     * reference keeps the count >= 1 unless it races its own gclose */
    if (gpufs_ld_acquire_u32_dev(&e->state) != GPUFS_GF_OPEN || !gpufs_refs_join(&e->refs, w))
      rc = -GPUFS_EBADF;
    else
      rc = gpufs_wmap_add(&d->maps, off, size, fd);
  }
  rc = g.bcast(rc);
  if (rc == 0) return 0;
  if (g.rank() == 0) gpufs_frame_unpin(&d->cache, f);
  if (rc != -GPUFS_EBADF) (void)gpufs_close_group(g, d, fd); /* the reference we took */
  return (int)rc;
}

/* gmmap of a page that is not cached (or got no frame): one-page rounds
 * until it has a frame, which stays pinned; then the pointer, as
 * gmmap_group's.  The arguments were checked by gmmap_group.  Every thread
 * of the group calls it with equal arguments; synchronizes the group.  Not
 * inlined: the hit path in gmmap_group then needs few registers, and so
 * saves and restores few at every call. */
template <typename G>
static __device__ __noinline__ void *gmmap_load(G g, int fd, int64_t offset, size_t size, int prot)
{
  struct gpufs_fdinfo fi;
  int rc = gpufs_fd_get_group(g, fd, &fi);
  if (rc) return ERR_PTR(rc);
  const struct gpufs_dev *d = fi.d;
  const uint32_t S = d->cache.page_size;
  const uint32_t ring = g.id() % d->cache.nrings;
  uint64_t stall_since = 0;
  for (;;) {
    struct gpufs_round_ctl ctl = {};
    ctl.fi = &fi;
    ctl.p0 = (uint64_t)offset / S;
    ctl.np = 1;
    ctl.ring = ring;
    struct gpufs_round r;
    gpufs_round_load(g, &ctl, &r);
    int64_t st = gpufs_round_status(g, &r, 0);
    if (gpufs_round_noframe(g, &r, 0)) {
      int64_t verdict = gpufs_stall(g, d, ring, &stall_since);
      if (verdict) return ERR_PTR(verdict);
      continue;
    }
    gpufs_round_unpin(g, d, &r, st >= 0, ring);
    if (st < 0) return ERR_PTR(st);
    const uint32_t f = gpufs_round_frame(g, &r, 0);
    uint8_t *p = gpufs_frame_data(&d->cache, f) + (uint64_t)offset % S;
    if ((prot & GPUFS_PROT_WRITE) == 0) return p;
    rc = wmap_begin(g, d, fi.fd, (uint64_t)(p - d->cache.data), (uint32_t)size, f);
    return rc ? ERR_PTR(rc) : p;
  }
}

/* A writable mapping of frame f (pinned) at p begins (wmap_begin): p, or
 * an error pointer with the frame unpinned.  Every thread of the group;
 * synchronizes the group.  Not inlined, as gmmap_load. */
template <typename G>
static __device__ __noinline__ void *gmmap_writable(G g, const struct gpufs_dev *d, uint32_t fd, uint8_t *p,
                                                    uint32_t size, uint32_t f)
{
  int rc = wmap_begin(g, d, fd, (uint64_t)(p - d->cache.data), size, f);
  return rc ? ERR_PTR(rc) : p;
}

template <typename G>
static __device__ __forceinline__ void *gmmap_group(G g, size_t size, int prot, int flags, int fd,
                                                    int64_t offset)
{
  if (!g.shape_ok()) return ERR_PTR(-GPUFS_EINVAL);
  struct gpufs_fdinfo fi;
  int rc = gpufs_fd_get_group(g, fd, &fi);
  if (rc) return ERR_PTR(rc);
  const struct gpufs_dev *d = fi.d;
  const uint32_t S = d->cache.page_size;
  if ((prot & ~(GPUFS_PROT_READ | GPUFS_PROT_WRITE)) || !(prot & GPUFS_PROT_READ) ||
      (flags != GPUFS_MAP_SHARED && flags != GPUFS_MAP_PRIVATE) || size == 0 || offset < 0)
    return ERR_PTR(-GPUFS_EINVAL);
  if (!gpufs_fd_readable(&fi)) return ERR_PTR(-GPUFS_EACCES);
  if (prot & GPUFS_PROT_WRITE) {
    if (!gpufs_fd_writable(&fi)) return ERR_PTR(-GPUFS_EACCES);
    if (flags != GPUFS_MAP_SHARED) return ERR_PTR(-GPUFS_EINVAL); /* no copy-on-write */
  }
  const uint64_t in_page = (uint64_t)offset % S;
  if (size > S - in_page) return ERR_PTR(-GPUFS_EINVAL);
  if ((uint64_t)offset >= fi.size) return ERR_PTR(-GPUFS_ENXIO);
  const uint32_t ring = g.id() % d->cache.nrings;
  /* a cached page is pinned without a round */
  const uint32_t f = gpufs_round_hit_one(g, &fi, (uint64_t)offset / S, ring);
  if (f == GPUFS_NIL) return gmmap_load(g, fd, offset, size, prot);
  uint8_t *p = gpufs_frame_data(&d->cache, f) + in_page;
  if ((prot & GPUFS_PROT_WRITE) == 0) return p;
  return gmmap_writable(g, d, fi.fd, p, (uint32_t)size, f);
}

/* The instance whose cache holds addr, or NULL.  Any thread. */
static __device__ const struct gpufs_dev *mapped_instance(const void *addr)
{
  const uint8_t *p = (const uint8_t *)addr;
  for (uint32_t i = 0; i < GPUFS_MAX_INSTANCES; i++) {
    const struct gpufs_dev *d = gpufs_instance(i);
    if (d && p >= d->cache.data && p < d->cache.data + (uint64_t)d->cache.nframes * d->cache.page_size)
      return d;
  }
  return NULL;
}

/* The pinned frame of instance d a mapping points into, or GPUFS_NIL. */
static __device__ uint32_t mapped_frame(const struct gpufs_dev *d, const void *addr, size_t size)
{
  if (d == NULL || size == 0) return GPUFS_NIL;
  const struct gpufs_cache *c = &d->cache;
  const uint8_t *p = (const uint8_t *)addr;
  uint32_t f = (uint32_t)((uint64_t)(p - c->data) / c->page_size);
  if ((uint64_t)(p - gpufs_frame_data(c, f)) + size > c->page_size) return GPUFS_NIL;
  /* relaxed: only a plausibility check of the caller's own pin */
  uint32_t s = gpufs_ld_relaxed_u32_dev(&c->frames[f].state);
  if ((s & GPUFS_PG_PINS) == 0 || gpufs_pg_state(s) != GPUFS_PG_VALID) return GPUFS_NIL;
  return f;
}

/* Mark [addr, addr+size) of mapped frame f dirty on the file of entry fd,
 * which a writable mapping holds.  Every thread of the group calls it;
 * synchronizes the group.  The bytes were stored before the call. */
template <typename G>
static __device__ void mapping_mark(G g, const struct gpufs_dev *d, uint32_t f, const void *addr,
                                    size_t size, uint32_t fd)
{
  const struct gpufs_cache *c = &d->cache;
  /* the group's stores through the mapping are visible GPU-wide before
   * gpufs_dirty_bits releases them */
  __threadfence();
  g.sync();
  if (g.rank() == 0) {
    uint32_t lo = (uint32_t)((const uint8_t *)addr - gpufs_frame_data(c, f));
    gpufs_mark_dirty(d, fd, f, lo, lo + (uint32_t)size, g.id());
  }
  g.sync();
}

/* The entry a writable mapping (off, size) of instance d holds, or
 * GPUFS_NIL (a read-only mapping); with take, one mapping ends
 * (gpufs_wmap_find).  One thread.  Not inlined (it takes a lock): the
 * read-only unmap, which never gets here while no writable mapping is
 * live, stays lean. */
static __device__ __noinline__ uint32_t mapping_writable(const struct gpufs_dev *d, uint64_t off,
                                                         uint32_t size, bool take)
{
  return gpufs_wmap_find(&d->maps, off, size, take);
}

/* The mapping at addr (size bytes) of instance d: its frame (or
 * GPUFS_NIL), and the entry it holds if it is writable (else GPUFS_NIL);
 * with take, a writable one ends.  Every thread of the group calls it;
 * synchronizes the group. */
template <typename G>
static __device__ __forceinline__ uint32_t mapping_find(G g, const struct gpufs_dev *d, void *addr,
                                                        size_t size, bool take, uint32_t *entry)
{
  int64_t v = 0;
  g.sync();
  if (g.rank() == 0) {
    uint32_t f = mapped_frame(d, addr, size);
    uint32_t e = GPUFS_NIL;
    /* relaxed: see wmaps.h (a writable mapping made meanwhile is not ours) */
    if (f != GPUFS_NIL && gpufs_ld_relaxed_u32_dev(d->maps.live) != 0)
      e = mapping_writable(d, (uint64_t)((const uint8_t *)addr - d->cache.data), (uint32_t)size, take);
    v = (int64_t)((uint64_t)e << 32 | f);
  }
  v = g.bcast(v);
  *entry = (uint32_t)((uint64_t)v >> 32);
  return (uint32_t)v;
}

/* The end of a writable mapping of frame f: its range marked dirty, the
 * pin dropped, and the reference it held on entry fd dropped (the last one
 * writes the file back).  Every thread of the group; synchronizes the
 * group.  Not inlined, as gmmap_load. */
template <typename G>
static __device__ __noinline__ int gmunmap_writable(G g, const struct gpufs_dev *d, uint32_t f, void *addr,
                                                    size_t size, uint32_t fd)
{
  mapping_mark(g, d, f, addr, size, fd);
  g.sync();
  if (g.rank() == 0) gpufs_frame_unpin(&d->cache, f);
  return gpufs_close_group(g, d, fd);
}

template <typename G>
static __device__ __forceinline__ int gmunmap_group(G g, void *addr, size_t size)
{
  if (!g.shape_ok()) return -GPUFS_EINVAL;
  const struct gpufs_dev *d = mapped_instance(addr); /* the same addr in every thread */
  uint32_t fd = GPUFS_NIL;
  const uint32_t f = mapping_find(g, d, addr, size, true, &fd);
  if (f == GPUFS_NIL) return -GPUFS_EINVAL;
  if (fd != GPUFS_NIL) return gmunmap_writable(g, d, f, addr, size, fd);
  g.sync(); /* every thread's use of the mapping is done */
  if (g.rank() == 0) gpufs_frame_unpin(&d->cache, f);
  return 0;
}

template <typename G>
static __device__ int gmsync_group(G g, void *addr, size_t size, int flags)
{
  if (!g.shape_ok()) return -GPUFS_EINVAL;
  bool one = ((flags & GPUFS_MS_SYNC) != 0) != ((flags & GPUFS_MS_ASYNC) != 0);
  if (!one || (flags & ~(GPUFS_MS_SYNC | GPUFS_MS_ASYNC | GPUFS_MS_INVALIDATE)))
    return -GPUFS_EINVAL;
  const struct gpufs_dev *d = mapped_instance(addr);
  uint32_t fd = GPUFS_NIL;
  const uint32_t f = mapping_find(g, d, addr, size, false, &fd);
  if (f == GPUFS_NIL) return -GPUFS_ENOMEM; /* as msync(2): the range is not mapped */
  if (fd == GPUFS_NIL) return 0;           /* read-only: nothing to write */
  mapping_mark(g, d, f, addr, size, fd);
  if ((flags & GPUFS_MS_SYNC) == 0) return 0;
  int64_t err = gpufs_wb_held(g, d, (int)fd, g.id() % d->cache.nrings);
  return err == GPUFS_WB_NOT_HELD ? 0 : (int)err;
}

__device__ void *gmmap(void *addr, size_t size, int prot, int flags, int fd, int64_t offset)
{
  GPUFS_DEBUG_UNIFORM(gpufs_block_group{}, "gmmap", ERR_PTR(GPUFS_DEBUG_NONUNIFORM),
                      GPUFS_DBG_INT(size), GPUFS_DBG_INT(prot), GPUFS_DBG_INT(flags),
                      GPUFS_DBG_INT(fd), GPUFS_DBG_INT(offset));
  (void)addr;
  return gmmap_group(gpufs_block_group{}, size, prot, flags, fd, offset);
}

__device__ void *gmmap_warp(void *addr, size_t size, int prot, int flags, int fd, int64_t offset)
{
  GPUFS_DEBUG_UNIFORM(gpufs_warp_group{}, "gmmap_warp", ERR_PTR(GPUFS_DEBUG_NONUNIFORM),
                      GPUFS_DBG_INT(size), GPUFS_DBG_INT(prot), GPUFS_DBG_INT(flags),
                      GPUFS_DBG_INT(fd), GPUFS_DBG_INT(offset));
  (void)addr;
  return gmmap_group(gpufs_warp_group{}, size, prot, flags, fd, offset);
}

__device__ int gmunmap(void *addr, size_t size)
{
  GPUFS_DEBUG_UNIFORM(gpufs_block_group{}, "gmunmap", GPUFS_DEBUG_NONUNIFORM, GPUFS_DBG_PTR(addr),
                      GPUFS_DBG_INT(size));
  return gmunmap_group(gpufs_block_group{}, addr, size);
}

__device__ int gmunmap_warp(void *addr, size_t size)
{
  GPUFS_DEBUG_UNIFORM(gpufs_warp_group{}, "gmunmap_warp", GPUFS_DEBUG_NONUNIFORM,
                      GPUFS_DBG_PTR(addr), GPUFS_DBG_INT(size));
  return gmunmap_group(gpufs_warp_group{}, addr, size);
}

__device__ int gmsync(void *addr, size_t size, int flags)
{
  GPUFS_DEBUG_UNIFORM(gpufs_block_group{}, "gmsync", GPUFS_DEBUG_NONUNIFORM, GPUFS_DBG_PTR(addr),
                      GPUFS_DBG_INT(size), GPUFS_DBG_INT(flags));
  return gmsync_group(gpufs_block_group{}, addr, size, flags);
}

__device__ int gmsync_warp(void *addr, size_t size, int flags)
{
  GPUFS_DEBUG_UNIFORM(gpufs_warp_group{}, "gmsync_warp", GPUFS_DEBUG_NONUNIFORM,
                      GPUFS_DBG_PTR(addr), GPUFS_DBG_INT(size), GPUFS_DBG_INT(flags));
  return gmsync_group(gpufs_warp_group{}, addr, size, flags);
}
