/*
 * mmap.cu - gmmap, gmunmap, gmsync: pointers into cached pages.
 *
 * gmmap loads (or finds) the one page that holds [offset, offset+size) with
 * a one-page round (round.cuh) and keeps its frame pinned: the pointer stays
 * valid, and the frame is never evicted, until gmunmap drops the pin.  A
 * mapping never crosses a page boundary; a request that would is refused
 * with -EINVAL (map the pieces one by one).  Pinned frames count against the
 * cache: when every frame a group's ring holds is pinned, gmmap and gread
 * wait alloc_timeout_ms for one to be released and then fail with -ENOMEM.
 *
 * Writable mappings: there is no pristine copy of the page to diff against.
 * gmsync and gmunmap mark the range they are given dirty, for the writable
 * descriptor of the page's file that is open (any one: they share the
 * cache), and write-back then writes those grains.  A page of a file with
 * no writable descriptor open has nothing to write back.
 */
#include "libgpufs/device/writeback.cuh"

#define ERR_PTR(e) ((void *)(intptr_t)(e))

template <typename G>
static __device__ void *gmmap_group(G g, size_t size, int prot, int flags, int fd, int64_t offset)
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
  uint64_t stall_since = 0;
  for (;;) {
    struct gpufs_round r;
    gpufs_round_load(g, &fi, (uint64_t)offset / S, 1, 0, ring, &r);
    int64_t st = gpufs_round_status(g, &r, 0);
    uint32_t f = gpufs_round_frame(g, &r, 0);
    if (gpufs_round_noframe(g, &r, 0)) {
      int64_t verdict = gpufs_stall(g, d, ring, &stall_since);
      if (verdict) return ERR_PTR(verdict);
      continue;
    }
    gpufs_round_unpin(g, d, &r, st >= 0, ring);
    if (st < 0) return ERR_PTR(st);
    return gpufs_frame_data(&d->cache, f) + in_page;
  }
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

/* Mark [addr, addr+size) of mapped frame f dirty for its file's writable
 * descriptor, if one is open; with sync, write that file back.  Every
 * thread of the group calls it; the bytes were written before the call. */
template <typename G>
static __device__ int64_t mapping_mark(G g, const struct gpufs_dev *d, uint32_t f, const void *addr,
                                       size_t size, bool sync)
{
  const struct gpufs_cache *c = &d->cache;
  /* the group's stores through the mapping are visible GPU-wide before
   * gpufs_dirty_bits releases them */
  __threadfence();
  g.sync();
  int64_t fd = -1;
  if (g.rank() == 0) {
    /* relaxed: the frame is pinned by the mapping, its key is stable */
    uint32_t cid = (uint32_t)(gpufs_ld_relaxed_u64_dev(&c->frames[f].key) >> GPUFS_PAGE_BITS);
    fd = gpufs_fd_hold_writer(d, cid);
    if (fd >= 0) {
      uint32_t lo = (uint32_t)((const uint8_t *)addr - gpufs_frame_data(c, f));
      gpufs_dirty_bits(c, f, lo, lo + (uint32_t)size);
      if (gpufs_dirty_flag(c, f))
        gpufs_dlist_push(c, gpufs_dlist(d, (uint32_t)fd, g.id()), f, (uint32_t)fd);
    }
  }
  fd = g.bcast(fd);
  if (fd < 0) return 0;
  int64_t err = 0;
  if (sync) err = gpufs_wb_file(g, d, (uint32_t)fd, g.id() % c->nrings);
  g.sync();
  if (g.rank() == 0) gpufs_fd_unhold(d, (int)fd);
  return err;
}

template <typename G>
static __device__ int gmunmap_group(G g, void *addr, size_t size)
{
  if (!g.shape_ok()) return -GPUFS_EINVAL;
  const struct gpufs_dev *d = mapped_instance(addr); /* the same addr in every thread */
  int64_t f = 0;
  g.sync();
  if (g.rank() == 0) f = mapped_frame(d, addr, size);
  f = g.bcast(f);
  if ((uint32_t)f == GPUFS_NIL) return -GPUFS_EINVAL;
  mapping_mark(g, d, (uint32_t)f, addr, size, false);
  g.sync();
  if (g.rank() == 0) gpufs_frame_unpin(&d->cache, (uint32_t)f);
  return 0;
}

template <typename G>
static __device__ int gmsync_group(G g, void *addr, size_t size, int flags)
{
  if (!g.shape_ok()) return -GPUFS_EINVAL;
  const struct gpufs_dev *d = mapped_instance(addr);
  int64_t f = 0;
  g.sync();
  if (g.rank() == 0) {
    bool one = ((flags & GPUFS_MS_SYNC) != 0) != ((flags & GPUFS_MS_ASYNC) != 0);
    if (!one || (flags & ~(GPUFS_MS_SYNC | GPUFS_MS_ASYNC | GPUFS_MS_INVALIDATE)))
      f = -GPUFS_EINVAL;
    else if ((f = mapped_frame(d, addr, size)) == GPUFS_NIL)
      f = -GPUFS_ENOMEM; /* as msync(2): the range is not mapped */
  }
  f = g.bcast(f);
  if (f < 0) return (int)f;
  return (int)mapping_mark(g, d, (uint32_t)f, addr, size, (flags & GPUFS_MS_SYNC) != 0);
}

__device__ void *gmmap(void *addr, size_t size, int prot, int flags, int fd, int64_t offset)
{
  (void)addr;
  return gmmap_group(gpufs_block_group{}, size, prot, flags, fd, offset);
}

__device__ void *gmmap_warp(void *addr, size_t size, int prot, int flags, int fd, int64_t offset)
{
  (void)addr;
  return gmmap_group(gpufs_warp_group{}, size, prot, flags, fd, offset);
}

__device__ int gmunmap(void *addr, size_t size)
{
  return gmunmap_group(gpufs_block_group{}, addr, size);
}

__device__ int gmunmap_warp(void *addr, size_t size)
{
  return gmunmap_group(gpufs_warp_group{}, addr, size);
}

__device__ int gmsync(void *addr, size_t size, int flags)
{
  return gmsync_group(gpufs_block_group{}, addr, size, flags);
}

__device__ int gmsync_warp(void *addr, size_t size, int flags)
{
  return gmsync_group(gpufs_warp_group{}, addr, size, flags);
}
