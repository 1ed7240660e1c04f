/*
 * read.cu - gread and gread_warp: reads through the page cache.
 *
 * Cached pages take no round.  A one-page read of a VALID page is a lookup,
 * a pin, the copy and the unpin (gpufs_round_hit_one); a read of several
 * pages first copies the cached pages from its first on by spans (one
 * thread looks up one page, all at once: gread_hits).  What is left, from
 * the first page that is not cached, is served in rounds (round.cuh): each
 * round loads or finds up to GPUFS_CHUNK consecutive pages, pinned; then
 *
 *   E  group: copy the pages' bytes into the caller's buffer, in order, up
 *             to the first page that failed or had no frame;
 *   F  meta:  unpin every frame of the round.
 *
 * The round that ends a sequential read also loads the pages after it
 * (readahead.cuh), so that the group's next calls find them cached; a read
 * whose pages were all cached loads them in a round of their own.
 *
 * A round in which not even its first page got a frame is retried after a
 * pause (or after writing back dirty pages that fill the ring: gpufs_stall),
 * for at most alloc_timeout_us without progress, then the read fails with
 * -ENOMEM.
 * A group never waits for a free frame while it holds one.
 */
#include "libgpufs/device/readahead.cuh"
#include "libgpufs/device/debug.cuh"
#include "libgpufs/device/writeback.cuh"

/* Copy file bytes [pos, hi) from the frames of pages p0, p0+1, ... (page
 * j's frame is frame_of(j): a round's, or a span's of the hit path; pos is
 * in page p0) to dst, which is 16-byte aligned as pos is.  The 16-byte
 * words of all the pages are spread over the group, GPUFS_COPY_LOADS
 * (round.cuh) loads in flight per thread: a copy page by page would keep
 * one small page's worth in flight at a time.  The cache's fields are read
 * once, before the loop: the stores to dst may alias them for all the
 * compiler knows, and a reload in every trip puts two dependent loads
 * before each trip's copies (the hit row ran at 0.75x of the
 * device-to-device copy with them; docs/design-read.md 7, "The copy out").
 * A span or a round is under 2^32 bytes (256 pages of at most 2 MiB), so
 * offsets are 32-bit. */
template <typename G, typename F>
static __device__ void copy_out_words(G g, const struct gpufs_cache *c, F frame_of, uint64_t p0,
                                      uint64_t pos, uint64_t hi, uint8_t *dst)
{
  const uint32_t S = c->page_size;
  const uint32_t shift = (uint32_t)__ffs((int)S) - 1; /* a power of two: no division per word */
  const uint8_t *const data = c->data;
  const uint32_t first = (uint32_t)(pos - p0 * S); /* pos's offset in page p0 */
  const uint32_t n = (uint32_t)((hi - pos) / 16);
  const uint32_t sz = g.size(), rk = g.rank();
  uint4 *const out = (uint4 *)dst;
  for (uint32_t base = 0; base < n; base += GPUFS_COPY_LOADS * sz) {
    /* the same trip count in every thread: the warp group's shuffles */
    uint4 v[GPUFS_COPY_LOADS];
#pragma unroll
    for (int u = 0; u < GPUFS_COPY_LOADS; u++) {
      const uint32_t k = base + u * sz + rk;
      const uint32_t o = first + (k < n ? k : 0) * 16;
      const uint4 *src =
          (const uint4 *)(data + ((uint64_t)frame_of(o >> shift) << shift) + (o & (S - 1)));
      if (k < n) v[u] = __ldcg(src); /* frames are device memory; L2 only: nothing reuses them */
    }
#pragma unroll
    for (int u = 0; u < GPUFS_COPY_LOADS; u++) {
      const uint32_t k = base + u * sz + rk;
      if (k < n) out[k] = v[u];
    }
  }
  const uint32_t tail = first + n * 16; /* under 16 bytes, inside one page */
  if (pos + n * 16ull < hi) {
    const uint8_t *src = data + ((uint64_t)frame_of(tail >> shift) << shift) + (tail & (S - 1));
    for (uint64_t b = rk; b < hi - pos - n * 16ull; b += sz) dst[n * 16ull + b] = src[b];
  }
}

/* Copy file bytes [pos, hi) from the frames of pages p0, p0+1, ... to dst
 * (dst holds byte pos): by words when both are 16-byte aligned, else page
 * by page.  Every thread of the group calls it with equal arguments;
 * synchronizes nothing. */
template <typename G, typename F>
static __device__ __forceinline__ void copy_out(G g, const struct gpufs_cache *c, F frame_of,
                                                uint64_t p0, uint64_t pos, uint64_t hi, uint8_t *dst)
{
  if (((pos | (uintptr_t)dst) & 15) == 0) {
    copy_out_words(g, c, frame_of, p0, pos, hi, dst);
    return;
  }
  const uint32_t S = c->page_size;
  for (uint64_t at = pos; at < hi;) {
    const uint64_t start = at / S * S;
    const uint64_t to = hi < start + S ? hi : start + S;
    gpufs_group_copy(dst + (at - pos), gpufs_frame_data(c, frame_of((uint32_t)(at / S - p0))) + (at - start),
                     (size_t)(to - at), g.rank(), g.size());
    at = to;
  }
}

/* gread's readahead for [pos, end) of fi (gpufs_ra_plan; 0 under
 * FADV_RANDOM or with readahead off): the pages its last round takes, and
 * the window it posts after (gpufs_ra_ahead, _post_n, _claim).  Every
 * thread of the group calls it with equal arguments; synchronizes the
 * group (a broadcast).  Called once per gread: the plan records the
 * group's position. */
template <typename G>
static __device__ __forceinline__ uint64_t gread_plan(G g, const struct gpufs_fdinfo *fi, uint64_t pos,
                                                      uint64_t end, uint32_t ring)
{
  const struct gpufs_dev *d = fi->d;
  if (d->ra.max_pages == 0 || fi->advice == GPUFS_FADV_RANDOM) return 0;
  const uint32_t S = d->cache.page_size;
  int64_t a = 0;
  if (g.rank() == 0)
    a = (int64_t)gpufs_ra_plan(g.id(), fi, pos / S, (end - 1) / S, gpufs_round_max(d, ring));
  return (uint64_t)g.bcast(a);
}

/* Post the READs of pages [p, p + n) of fi, cut at the end of the file, in
 * rounds that wait for none of them (readahead_async; post.cuh): pages
 * cached or on their way already are left alone.  Every thread of the
 * group calls it with equal arguments; synchronizes the group. */
template <typename G>
static __device__ __noinline__ void gread_post(G g, const struct gpufs_fdinfo *fi, uint64_t p, uint32_t n,
                                               uint32_t ring)
{
  const struct gpufs_dev *d = fi->d;
  const uint32_t S = d->cache.page_size;
  const uint64_t npages = (fi->size + S - 1) / S;
  const uint32_t chunk = gpufs_round_max(d, ring);
  while (n > 0 && p < npages) {
    uint32_t k = n < chunk ? n : chunk;
    if (k > npages - p) k = (uint32_t)(npages - p);
    struct gpufs_round_ctl ctl = {};
    ctl.fi = fi;
    ctl.p0 = p;
    ctl.nextra = k;
    ctl.ring = ring;
    ctl.post = true;
    struct gpufs_round r;
    gpufs_round_load(g, &ctl, &r);
    gpufs_round_unpin(g, d, &r, false, ring);
    p += k;
    n -= k;
  }
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
  uint32_t ahead = planned >= 0 ? (uint32_t)planned : gpufs_ra_ahead(gread_plan(g, &fi, pos, end, ring));

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
    struct gpufs_round_ctl ctl = {};
    ctl.fi = &fi;
    ctl.p0 = p0;
    ctl.np = np;
    ctl.nextra = extra;
    ctl.ring = ring;
    struct gpufs_round r;
    gpufs_round_load(g, &ctl, &r);

    int64_t err = 0; /* E */
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
    const uint64_t upto = ok == 0 ? pos : end < (p0 + ok) * S ? end : (p0 + ok) * S;
    copy_out(g, &d->cache, [&](uint32_t j) { return gpufs_round_frame(g, &r, j); }, p0, pos, upto,
             out + (pos - (uint64_t)offset));
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

/* The hit path of a gread of several pages: spans of up to span_cap()
 * consecutive pages (a quarter of the cache at most) are looked up at once,
 * lock-free, one thread a page (gpufs_chain_find), each VALID page pinned;
 * the pages of the span up to its first miss are copied out and unpinned.
 * No round: a span costs one lookup's latency and two barriers, where
 * rounds of 32 pages cost three barriers each and one lookup per lane in
 * turn.  Stops at the first page that is missing or still loading, and
 * returns the bytes copied from pos (0: the first page was not cached), which
 * the caller's rounds go on from.  Counts the pages as hits of `ring`.
 * Every thread of the group calls it with equal arguments; synchronizes
 * the group (two barriers a span).  Not inlined (gread_rounds says why). */
template <typename G>
static __device__ __noinline__ uint64_t gread_hits(G g, const struct gpufs_fdinfo *fi, uint64_t pos,
                                                   uint64_t end, uint8_t *dst, uint32_t ring)
{
  const struct gpufs_cache *c = &fi->d->cache;
  const uint32_t S = c->page_size;
  const uint32_t quarter = c->nframes / 4 > 0 ? c->nframes / 4 : 1;
  const uint32_t cap = g.span_cap() < quarter ? g.span_cap() : quarter;
  const uint32_t t = g.rank();
  uint64_t at = pos;
  while (at < end) {
    const uint64_t p0 = at / S;
    const uint64_t left = (end - 1) / S - p0 + 1;
    const uint32_t n = left < cap ? (uint32_t)left : cap;
    uint32_t f = GPUFS_NIL; /* thread t's page p0 + t, pinned */
    if (t < n) {
      uint32_t st = 0;
      f = gpufs_chain_find(c, gpufs_key(fi->cid, p0 + t), fi->version, &st);
      if (f != GPUFS_NIL && st != GPUFS_PG_VALID) { /* loading: the rounds wait for it */
        gpufs_frame_unpin(c, f);
        f = GPUFS_NIL;
      }
    }
    g.put_span(f);
    const uint32_t k = g.first_miss(t < n && f == GPUFS_NIL, n);
    if (f != GPUFS_NIL && t >= k) { /* past the first miss: left to the rounds */
      gpufs_frame_unpin(c, f);
      f = GPUFS_NIL;
    }
    if (k == 0) break;
    if (t == 0) gpufs_add_relaxed_u64_dev(&c->stats[ring].hits, (uint64_t)k);
    const uint64_t hi = end < (p0 + k) * S ? end : (p0 + k) * S;
    copy_out(g, c, [&](uint32_t j) { return g.get_span(f, j); }, p0, at, hi, dst + (at - pos));
    g.sync(); /* every thread's copy is done before the unpins */
    if (f != GPUFS_NIL) gpufs_frame_unpin(c, f);
    at = hi;
    if (k < n) break;
  }
  return at - pos;
}

/* The readahead of a gread whose pages were all cached (gread_hits): one
 * round that loads those of the n pages from page p that are missing (n
 * within the round's size: gpufs_ra_plan), as the last round of a read by
 * rounds does, and keeps none pinned.  Every thread of the group calls it
 * with equal arguments; synchronizes the group. */
template <typename G>
static __device__ __noinline__ void gread_ahead(G g, const struct gpufs_fdinfo *fi, uint64_t p, uint32_t n,
                                                uint32_t ring)
{
  struct gpufs_round_ctl ctl = {};
  ctl.fi = fi;
  ctl.p0 = p;
  ctl.nextra = n;
  ctl.ring = ring;
  struct gpufs_round r;
  gpufs_round_load(g, &ctl, &r);
  gpufs_round_unpin(g, fi->d, &r, false, ring);
}

/* A gread of the pages of [pos, end), several, of fd, checked by
 * gread_group, with `ahead` readahead pages planned: the cached ones from
 * the first without rounds, the rest (from the first that is not) by
 * rounds, whose last takes the readahead, or with none planned the `claim`
 * pages after the request that posted loads may hold.  Every thread of the group calls
 * it with equal arguments; synchronizes the group.  Not inlined, and given
 * fd rather than the descriptor's copy: gread_group's one-page path then
 * keeps that copy in registers and saves few at every call. */
template <typename G>
static __device__ __noinline__ ssize_t gread_pages(G g, int fd, uint64_t pos, uint64_t end, uint8_t *buf,
                                                   uint32_t ring, uint32_t ahead, uint32_t claim)
{
  struct gpufs_fdinfo f;
  int rc = gpufs_fd_get_group(g, fd, &f);
  if (rc) return rc;
  const struct gpufs_fdinfo *fi = &f;
  if (end > fi->size) end = fi->size; /* truncated meanwhile */
  if (pos >= end) return 0;
  const uint64_t done = gread_hits(g, fi, pos, end, buf, ring);
  if (pos + done < end) {
    const ssize_t rest =
        gread_rounds(g, fd, (int64_t)(pos + done), end - pos - done, buf + done, ahead ? ahead : claim);
    return rest < 0 ? rest : (ssize_t)done + rest;
  }
  if (ahead) gread_ahead(g, fi, (end - 1) / fi->d->cache.page_size + 1, ahead, ring);
  return (ssize_t)done;
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
  const uint32_t ring = g.id() % d->cache.nrings;
  const uint64_t plan = gread_plan(g, &fi, pos, end, ring);
  const uint32_t ahead = gpufs_ra_ahead(plan);
  ssize_t got;
  if ((end - 1) / S != pos / S) {
    got = gread_pages(g, fd, pos, end, (uint8_t *)buf, ring, ahead, gpufs_ra_claim(plan));
  } else {
    /* one page, and no readahead due: a cached page is copied without a
     * round; one that is not takes the pages posted loads may hold after
     * it into its round (gpufs_ra_claim) */
    const uint32_t f = ahead ? GPUFS_NIL : gpufs_round_hit_one(g, &fi, pos / S, ring);
    if (f == GPUFS_NIL) {
      got = gread_rounds(g, fd, offset, size, buf, ahead ? ahead : gpufs_ra_claim(plan));
    } else {
      gpufs_group_copy(buf, gpufs_frame_data(&d->cache, f) + pos % S, (size_t)(end - pos),
                       g.rank(), g.size());
      g.sync(); /* every thread's copy is done before the unpin */
      if (g.rank() == 0) gpufs_frame_unpin(&d->cache, f);
      got = (ssize_t)(end - pos);
    }
  }
  /* the next window, posted once the request's own pages are in hand */
  if (got > 0 && gpufs_ra_post_n(plan) != 0)
    gread_post(g, &fi, gpufs_ra_post_first(plan), gpufs_ra_post_n(plan), ring);
  return got;
}

__device__ ssize_t gread(int fd, int64_t offset, size_t size, void *buf)
{
  GPUFS_DEBUG_UNIFORM(gpufs_block_group{}, "gread", GPUFS_DEBUG_NONUNIFORM, GPUFS_DBG_INT(fd),
                      GPUFS_DBG_INT(offset), GPUFS_DBG_INT(size), GPUFS_DBG_PTR(buf));
  return gread_group(gpufs_block_group{}, fd, offset, size, buf);
}

__device__ ssize_t gread_warp(int fd, int64_t offset, size_t size, void *buf)
{
  GPUFS_DEBUG_UNIFORM(gpufs_warp_group{}, "gread_warp", GPUFS_DEBUG_NONUNIFORM, GPUFS_DBG_INT(fd),
                      GPUFS_DBG_INT(offset), GPUFS_DBG_INT(size), GPUFS_DBG_PTR(buf));
  return gread_group(gpufs_warp_group{}, fd, offset, size, buf);
}
