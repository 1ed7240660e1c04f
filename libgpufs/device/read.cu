/*
 * read.cu - gread and gread_warp: reads through the page cache.
 *
 * A read is served in rounds (round.cuh): each round loads or finds up to
 * GPUFS_CHUNK consecutive pages, pinned; then
 *
 *   E  group: copy the pages' bytes into the caller's buffer, in order, up
 *             to the first page that failed or had no frame;
 *   F  meta:  unpin every frame of the round.
 *
 * The round that ends a sequential read also loads the pages after it
 * (readahead.cuh), so that the group's next calls find them cached.
 *
 * A round in which not even its first page got a frame is retried after a
 * pause (or after writing back dirty pages that fill the ring: gpufs_stall),
 * for at most alloc_timeout_us without progress, then the read fails with
 * -ENOMEM.
 * A group never waits for a free frame while it holds one.
 */
#include "libgpufs/device/readahead.cuh"
#include "libgpufs/device/writeback.cuh"

/* Copy file bytes [pos, hi) from the round's frames (pages p0, p0+1, ...)
 * to dst, which is 16-byte aligned as pos is.  The 16-byte words of all the
 * pages are spread over the group, GPUFS_COPY_LOADS (round.cuh) loads in
 * flight per thread: a copy page by page would keep one small page's worth
 * in flight at a time. */

template <typename G>
static __device__ void copy_out_words(G g, const struct gpufs_cache *c, const struct gpufs_round *r,
                                      uint64_t p0, uint64_t pos, uint64_t hi, uint8_t *dst)
{
  const uint32_t S = c->page_size;
  const uint32_t shift = (uint32_t)__ffs((int)S) - 1; /* a power of two: no division per word */
  const uint64_t n = (hi - pos) / 16;
  const uint32_t sz = g.size(), rk = g.rank();
  for (uint64_t base = 0; base < n; base += (uint64_t)GPUFS_COPY_LOADS * sz) {
    /* the same trip count in every thread: the warp group's shuffles */
    uint4 v[GPUFS_COPY_LOADS];
#pragma unroll
    for (int u = 0; u < GPUFS_COPY_LOADS; u++) {
      const uint64_t k = base + (uint64_t)u * sz + rk;
      const uint64_t x = pos + (k < n ? k : 0) * 16;
      const uint32_t j = (uint32_t)((x >> shift) - p0);
      const uint8_t *src = gpufs_frame_data(c, gpufs_round_frame(g, r, j)) + (x & (S - 1));
      if (k < n) v[u] = *(const uint4 *)src;
    }
#pragma unroll
    for (int u = 0; u < GPUFS_COPY_LOADS; u++) {
      const uint64_t k = base + (uint64_t)u * sz + rk;
      if (k < n) *(uint4 *)(dst + k * 16) = v[u];
    }
  }
  const uint64_t tail = pos + n * 16; /* under 16 bytes, inside one page */
  if (tail < hi) {
    const uint32_t j = (uint32_t)((tail >> shift) - p0);
    const uint8_t *src = gpufs_frame_data(c, gpufs_round_frame(g, r, j)) + (tail & (S - 1));
    for (uint64_t b = rk; b < hi - tail; b += sz) dst[n * 16 + b] = src[b];
  }
}

/* The readahead pages gread's last round takes for [pos, end) of fi
 * (gpufs_ra_plan; 0 under FADV_RANDOM or with readahead off).  Every
 * thread of the group calls it with equal arguments; synchronizes the
 * group (a broadcast).  Called once per gread: the plan records the
 * group's position. */
template <typename G>
static __device__ __forceinline__ uint32_t gread_plan(G g, const struct gpufs_fdinfo *fi, uint64_t pos,
                                                      uint64_t end, uint32_t ring)
{
  const struct gpufs_dev *d = fi->d;
  if (d->ra.max_pages == 0 || fi->advice == GPUFS_FADV_RANDOM) return 0;
  const uint32_t S = d->cache.page_size;
  int64_t a = 0;
  if (g.rank() == 0) a = gpufs_ra_plan(g.id(), fi, pos / S, (end - 1) / S, gpufs_round_max(d, ring));
  return (uint32_t)g.bcast(a);
}

/* gread by rounds: [offset, offset + size) of fd, checked by gread_group,
 * which also planned the readahead (ahead pages, or -1: not planned yet).
 * Every thread of the group calls it with equal arguments; synchronizes
 * the group.  Not inlined: the one-page hit path in gread_group then needs
 * few registers, and so saves and restores few at every call. */
template <typename G>
static __device__ __noinline__ ssize_t gread_rounds(G g, int fd, int64_t offset, size_t size, void *buf,
                                                    int64_t planned)
{
  struct gpufs_fdinfo fi;
  int rc = gpufs_fd_get_group(g, fd, &fi);
  if (rc) return rc;
  const struct gpufs_dev *d = fi.d;
  if (size == 0 || (uint64_t)offset >= fi.size) return 0; /* truncated meanwhile */
  const uint64_t end = size > fi.size - (uint64_t)offset ? fi.size : (uint64_t)offset + size;
  const uint32_t S = d->cache.page_size;
  const uint32_t ring = g.id() % d->cache.nrings;
  const uint32_t chunk = gpufs_round_max(d, ring);
  uint8_t *out = (uint8_t *)buf;
  uint64_t pos = (uint64_t)offset;
  uint64_t stall_since = 0;
  /* readahead pages for the last round */
  uint32_t ahead = planned >= 0 ? (uint32_t)planned : gread_plan(g, &fi, pos, end, ring);

  while (pos < end) {
    const uint64_t p0 = pos / S;
    const uint64_t span = (end - 1) / S - p0 + 1;
    const uint32_t np = span < chunk ? (uint32_t)span : chunk;
    /* the last round takes the readahead, once: a retried round does not */
    uint32_t extra = 0;
    if (span <= chunk) {
      extra = ahead < chunk - np ? ahead : chunk - np;
      ahead = 0;
    }
    struct gpufs_round r;
    gpufs_round_load(g, &fi, p0, np, extra, ring, &r);

    uint64_t upto = pos; /* E */
    int64_t err = 0;
    uint32_t ok = 0; /* pages from the first that the round holds */
    for (; ok < np; ok++) {
      if (gpufs_round_noframe(g, &r, ok)) break;
      int64_t st = gpufs_round_status(g, &r, ok);
      if (st < 0) {
        err = st;
        break;
      }
    }
    /* the frames hold whole pages: what the host had, zeros after */
    const uint64_t hi = ok == 0 ? pos : end < (p0 + ok) * S ? end : (p0 + ok) * S;
    if (((pos | (uintptr_t)(out + (pos - (uint64_t)offset))) & 15) == 0) {
      copy_out_words(g, &d->cache, &r, p0, pos, hi, out + (pos - (uint64_t)offset));
    } else {
      for (uint32_t j = 0; j < ok; j++) {
        uint64_t page_start = (p0 + j) * S;
        uint64_t to = hi < page_start + S ? hi : page_start + S;
        gpufs_group_copy(out + (upto - (uint64_t)offset),
                         gpufs_frame_data(&d->cache, gpufs_round_frame(g, &r, j)) +
                             (upto - page_start),
                         (size_t)(to - upto), g.rank(), g.size());
        upto = to;
      }
    }
    upto = hi;
    gpufs_round_unpin(g, d, &r, false, ring); /* F */
    if (err) return err;
    if (upto == pos) {
      int64_t verdict = gpufs_stall(g, d, ring, &stall_since);
      if (verdict) return verdict;
      continue;
    }
    stall_since = 0;
    pos = upto;
  }
  return (ssize_t)(pos - (uint64_t)offset);
}

template <typename G>
static __device__ __forceinline__ ssize_t gread_group(G g, int fd, int64_t offset, size_t size, void *buf)
{
  if (!g.shape_ok()) return -GPUFS_EINVAL;
  struct gpufs_fdinfo fi;
  int rc = gpufs_fd_get_group(g, fd, &fi);
  if (rc) return rc;
  const struct gpufs_dev *d = fi.d;
  if (!gpufs_fd_readable(&fi)) return -GPUFS_EBADF;
  if (offset < 0) return -GPUFS_EINVAL;
  if (size == 0 || (uint64_t)offset >= fi.size) return 0;
  if (buf == NULL) return -GPUFS_EFAULT;
  const uint64_t pos = (uint64_t)offset;
  const uint64_t end = size > fi.size - pos ? fi.size : pos + size;
  const uint32_t S = d->cache.page_size;
  if ((end - 1) / S != pos / S) return gread_rounds(g, fd, offset, size, buf, -1);
  /* one page, and no readahead due: a cached page is copied without a
   * round */
  const uint32_t ring = g.id() % d->cache.nrings;
  const uint32_t ahead = gread_plan(g, &fi, pos, end, ring);
  const uint32_t f = ahead ? GPUFS_NIL : gpufs_round_hit_one(g, &fi, pos / S, ring);
  if (f == GPUFS_NIL) return gread_rounds(g, fd, offset, size, buf, ahead);
  gpufs_group_copy(buf, gpufs_frame_data(&d->cache, f) + pos % S, (size_t)(end - pos), g.rank(), g.size());
  g.sync(); /* every thread's copy is done before the unpin */
  if (g.rank() == 0) gpufs_frame_unpin(&d->cache, f);
  return (ssize_t)(end - pos);
}

__device__ ssize_t gread(int fd, int64_t offset, size_t size, void *buf)
{
  return gread_group(gpufs_block_group{}, fd, offset, size, buf);
}

__device__ ssize_t gread_warp(int fd, int64_t offset, size_t size, void *buf)
{
  return gread_group(gpufs_warp_group{}, fd, offset, size, buf);
}
