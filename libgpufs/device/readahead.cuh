/*
 * readahead.cuh - per-group readahead for gread and gread_warp.
 *
 * A group (a threadblock, or a warp for the warp calls) that reads a file
 * sequentially gets the pages after its request loaded in the same round as
 * the request's last pages: their tickets follow the request's in one
 * reservation, so the daemon serves request and prefetch with one pread, and
 * the next calls of the group find the pages in the cache.
 *
 *            previous call  this call       prefetched in this call's last round
 *   file:  ...[=========][=======]+++++++++++++++++|
 *                         first  last              ra_end
 *                         \___________ window ____________/
 *
 * Detection is per group and file, as Linux does it per open file
 * (mm/readahead.c): a call is sequential when it starts on the page where the
 * group's previous call of the same file ended (or the page after), or at the
 * start of the file.  A sequential call whose pages reach past ra_end (a
 * miss ahead: the prefetched pages are used up) starts a new window: 4x the
 * request's pages the first time, then twice the last window, at most
 * readahead_max (config, in pages, at most GPUFS_CHUNK: one round).  The
 * window counts from the request's first page, so a request as large as the
 * window prefetches nothing: it keeps as many pages in flight as readahead
 * would, and readahead would only lengthen its round (measured with 1 MiB
 * calls on 64 KiB pages: docs/design-read.md 8).  A call that is not sequential
 * resets the window.  gfadvise RANDOM turns it off for the descriptor;
 * SEQUENTIAL starts at the largest window and treats every call as
 * sequential.
 *
 * Where the pages go.  Straight into the shared page cache, not into a
 * buffer private to the group: a page is loaded once whoever reads it next,
 * a written page can never be served stale from a private copy (so
 * readahead serves files open for writing too), and no memory is set aside
 * per resident group (2,112 warps of 264 blocks on an H200).  A prefetched
 * page is allocated from the group's ring like any page, so a big file
 * scanned by many groups evicts each group's own least recently allocated
 * frames.  A prefetch page that is cached already or being loaded by another
 * group is left alone (no wait, no pin); one that gets no frame is skipped.
 *
 * State.  Two words per slot (the instance's ra), one slot per group and file:
 * slot (group id + cid * 7919) mod 16,384, so the groups of a grid reading
 * one file never share a slot (their ids are consecutive), and a group that
 * reads two files in turn keeps a window for each.  Each word carries a
 * 16-bit tag of (file, group id).  Only the group's first thread reads and
 * writes them, with relaxed atomics: the state is a hint.  Two users of one
 * slot (left over from an earlier kernel, or an unlucky pair of ids and
 * files) see each other's tag and start over; what is read never depends
 * on it, only how many pages a round asks for.
 *
 *   word 0:  tag << 48 | next     (the page after the group's last call)
 *   word 1:  tag << 48 | window << 40 | ra_end
 */
#ifndef GPUFS_DEVICE_READAHEAD_CUH
#define GPUFS_DEVICE_READAHEAD_CUH

#include <gpufs.cuh>
#include "libgpufs/common/atomics.h"
#include "libgpufs/device/internal.cuh"

#define GPUFS_RA_PAGE_MASK ((1ull << 40) - 1)
#define GPUFS_RA_NEXT_MASK ((1ull << 48) - 1)
#define GPUFS_RA_FILE_STRIDE 7919u /* slots between one group's states of two files */

__device__ __forceinline__ uint64_t gpufs_ra_tag(uint32_t cid, uint32_t gid, uint32_t nslots)
{
  /* never 0: zeroed slots belong to nobody */
  uint32_t h = (cid * 0x9e3779b1u) ^ ((gid / nslots) * 0x85ebca6bu);
  return (uint64_t)((h >> 16) | 1u);
}

/* A plan (gpufs_ra_plan) packs four numbers in one word, so that one
 * broadcast gives them to the group: the pages after the request's last
 * page that its last round takes (8 bits); with readahead_async, the
 * window to post after the request, its page count (8 bits) and first page
 * (40 bits), and the pages after the request that posted loads may still
 * hold (8 bits: the last round takes them, to claim them, when the
 * request's own pages were not all cached). */
__device__ __forceinline__ uint32_t gpufs_ra_ahead(uint64_t plan) { return (uint32_t)plan & 0xffu; }
__device__ __forceinline__ uint32_t gpufs_ra_post_n(uint64_t plan)
{
  return (uint32_t)(plan >> 8) & 0xffu;
}
__device__ __forceinline__ uint32_t gpufs_ra_claim(uint64_t plan)
{
  return (uint32_t)(plan >> 16) & 0xffu;
}
__device__ __forceinline__ uint64_t gpufs_ra_post_first(uint64_t plan) { return plan >> 24; }

/* The readahead of a request of pages [first, last]: how many pages after
 * last the round that ends the request should load (0 for none), and, with
 * readahead_async, which window to post after it (gpufs_ra_post_n: 0 for
 * none).  chunk is the group's round size (so the pages the round takes are
 * cut to what that round can take).  Called by the group's first thread;
 * the others get the answer by broadcast.
 *
 * Posted windows (readahead_async).  A sequential request that reaches the
 * first page of the latest window (ra_end - window: Linux's PG_readahead
 * marker) posts the next window, twice the last, at most max_pages (64),
 * from ra_end on, and its last round takes the rest of the current window
 * (pages already posted: claimed and finished there, in one round, rather
 * than one at a time by the calls that reach them).  A request past ra_end
 * (the first, or one that outran the posts) loads its window in its round,
 * as without posting, and the next request posts. */
__device__ __forceinline__ uint64_t gpufs_ra_plan(uint32_t gid, const struct gpufs_fdinfo *fi,
                                                  uint64_t first, uint64_t last, uint32_t chunk)
{
  const struct gpufs_ra_ref *ra = &fi->d->ra;
  if (ra->max_pages == 0 || fi->advice == GPUFS_FADV_RANDOM) return 0;
  uint64_t *slot = ra->slots + 2ull * ((gid + fi->cid * GPUFS_RA_FILE_STRIDE) & (ra->nslots - 1));
  const uint64_t tag = gpufs_ra_tag(fi->cid, gid, ra->nslots);
  const uint64_t w0 = gpufs_ld_relaxed_u64_dev(&slot[0]);
  const uint64_t w1 = gpufs_ld_relaxed_u64_dev(&slot[1]);
  const bool mine = (w0 >> 48) == tag && (w1 >> 48) == tag;
  const uint64_t next = mine ? (w0 & GPUFS_RA_NEXT_MASK) : 0;
  uint32_t window = mine ? (uint32_t)(w1 >> 40) & 0xffu : 0;
  uint64_t ra_end = mine ? (w1 & GPUFS_RA_PAGE_MASK) : 0;
  const bool seq = fi->advice == GPUFS_FADV_SEQUENTIAL || first == 0 ||
                   (mine && (first == next || first + 1 == next));
  uint32_t take = 0;
  uint64_t post_first = 0;
  uint32_t post_n = 0;
  const uint64_t npages = (fi->size + fi->d->cache.page_size - 1) / fi->d->cache.page_size;
  /* what the request's last round leaves of its chunk */
  const uint64_t in_last = (last - first) % chunk + 1;
  if (!seq) {
    window = 0;
    ra_end = 0;
  } else if (ra->async && last < ra_end && last + window >= ra_end) { /* the marker */
    const uint32_t max = ra->max_pages;
    uint64_t next = 2 * window >= max ? max : 2 * window;
    if (next > npages - ra_end) next = npages - ra_end;
    if (next == 0) {
      window = 0; /* the file ends at ra_end: no marker any more */
    } else {
      post_first = ra_end;
      post_n = (uint32_t)next;
      /* the rest of the current window, in the last round */
      const uint64_t rest = ra_end - 1 - last;
      const uint64_t room = chunk - in_last;
      take = (uint32_t)(rest < room ? rest : room);
      window = (uint32_t)next;
      ra_end += next;
    }
  } else if (last >= ra_end) { /* the prefetched pages are used up */
    const uint32_t max = ra->max_pages;
    const uint64_t req = last - first + 1;
    if (window == 0)
      window = fi->advice == GPUFS_FADV_SEQUENTIAL || 4 * req >= max ? max : (uint32_t)(4 * req);
    else
      window = 2 * window >= max ? max : 2 * window;
    /* the window counts from the request's first page, as Linux's does: a
     * request as large as the window is its own readahead */
    const uint64_t ahead = window > req ? window - req : 0;
    /* what the request's last round leaves of its chunk, within the file */
    uint64_t room = chunk - in_last;
    if (room > npages - 1 - last) room = npages - 1 - last;
    take = (uint32_t)(room < ahead ? room : ahead);
    ra_end = last + 1 + take;
  }
  gpufs_st_relaxed_u64_dev(&slot[0], tag << 48 | (last + 1));
  gpufs_st_relaxed_u64_dev(&slot[1], tag << 48 | (uint64_t)window << 40 | (ra_end & GPUFS_RA_PAGE_MASK));
  uint32_t claim = 0;
  if (ra->async && seq && take == 0 && last + 1 < ra_end) {
    const uint64_t rest = ra_end - 1 - last, room = chunk - in_last;
    claim = (uint32_t)(rest < room ? rest : room);
  }
  return (post_first & GPUFS_RA_PAGE_MASK) << 24 | (uint64_t)claim << 16 | (uint64_t)post_n << 8 |
         take;
}

#endif /* GPUFS_DEVICE_READAHEAD_CUH */
