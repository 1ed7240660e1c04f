/*
 * round.cuh - one round of page work for a group: find, load or wait for up
 * to GPUFS_CHUNK consecutive pages of a file, leaving each pinned.
 *
 * Lane j of the group's meta warp looks after page j:
 *
 *   A  meta:  find or create the page's frame (gpufs_cache_get); a lane
 *             that must load looks for the page in its peers' caches first
 *             (other instances on this GPU or on peer GPUs: d->peers) and
 *             pins a VALID copy there; then, for a registered file
 *             (gpufs_register), takes the page's address in the file's
 *             pinned mapping if the page lies within it; the other loading lanes take
 *             consecutive tickets in one reservation, so the daemon can
 *             serve neighbouring pages with one pread; each posts a READ,
 *             and the lane of the last ticket polls for the host's answer
 *             first (one poller per round, not one per page).
 *             With readahead_async, A runs in two steps: A1 finds the
 *             frames and claims the pages posted loads bring; the group
 *             copies and publishes those (post.cuh); A2 takes tickets.
 *   C  group: copy each loaded page into its frame from its source: the
 *             peer's frame, the registered mapping, or its slot's
 *             (host-mapped) staging; zero the rest of a page the file
 *             ends in.
 *   D  meta:  release the slots and peer frames, publish loaded frames
 *             VALID (or failed), wait for pages other groups are loading.
 *
 * After gpufs_round_load every thread can read page j's frame, whether it
 * got one (gpufs_round_noframe) and its status (>= 0: the frame holds the
 * page, the host's bytes then zeros; or -errno) with
 * gpufs_round_frame/_noframe/_status;
 * the caller uses the pages and then calls gpufs_round_unpin.
 *
 * A group completes its own loads (A-D) before it waits for anyone else's
 * loads, and it never waits for a free frame while it holds one (an
 * allocation that finds none returns at once), so groups cannot wait on
 * each other in a cycle.
 */
#ifndef GPUFS_DEVICE_ROUND_CUH
#define GPUFS_DEVICE_ROUND_CUH

#include "include/gpufs.cuh"
#include "libgpufs/device/group.cuh"
#include "libgpufs/device/internal.cuh"
#include "libgpufs/device/post.cuh"


/* gpufs_fd_get for a group: its first thread reads the descriptor and every
 * thread gets the same answer, so a concurrent gwrite (size) or gclose
 * cannot send the group's threads different ways.  Every thread of the
 * group calls it with the same fd; synchronizes the group.  0 or -EBADF. */
template <typename G>
__device__ __forceinline__ int gpufs_fd_get_group(G g, int fd, struct gpufs_fdinfo *fi)
{
  struct gpufs_fdinfo mine = {};
  int64_t a = 0, b = 0, size = 0;
  if (g.rank() == 0) {
    int rc = gpufs_fd_get(fd, &mine);
    /* hfid < max_open_files <= 2^12, advice < 2^8 */
    a = rc ? (int64_t)rc
           : (int64_t)((uint64_t)mine.flags << 32 | mine.advice << 24 | (uint32_t)mine.hfid);
    b = (int64_t)((uint64_t)mine.cid << 32 | mine.version);
    size = (int64_t)mine.size;
  }
  g.bcast3(&a, &b, &size);
  if (a < 0) return (int)a;
  fi->hfid = (int32_t)((uint32_t)a & 0xffffffu);
  fi->advice = ((uint32_t)a >> 24) & 0xffu;
  fi->flags = (uint32_t)((uint64_t)a >> 32);
  uint32_t entry = 0;
  fi->d = gpufs_fd_instance(fd, &entry); /* the same fd in every thread: no broadcast */
  fi->fd = entry;
  fi->cid = (uint32_t)((uint64_t)b >> 32);
  fi->version = (uint32_t)b;
  fi->size = (uint64_t)size;
  return 0;
}

/* Slots of the per-page values the meta lanes publish.  64-bit slot 0 holds
 * a load's source address in a round and a run's ticket in a write-back. */
enum {
  GPUFS_V32_FRAME = 0,
  GPUFS_V32_KIND = 1,
  GPUFS_V64_SRC = 0,
  GPUFS_V64_TICKET = 0,
  GPUFS_V64_STATUS = 1
};

/* What one meta lane holds about its page during a round. */
struct gpufs_round {
  uint32_t frame;
  int32_t kind;
  uint64_t ticket;
  bool owned; /* the lane holds the ticket's slot */
  bool claimed; /* the ticket is a posted load's, claimed (post.cuh) */
  bool budget;  /* a post round took its budget (gpufs_post_take) */
  const struct gpufs_dev *peer; /* a load served from this instance's cache, */
  uint32_t peer_frame;          /* frame, pinned until D (else GPUFS_NIL) */
  uint64_t reg_src; /* a load served from a registered file's mapping: the
                       page's host address (else 0) */
  int64_t status;
  uint64_t t_end; /* SM cycles when the round's pages were ready */
};

/* Phase A, in two steps; the whole meta warp calls each, converged (they
 * ballot and shuffle), one lane per page.
 * A1, find: each lane finds or creates its page's frame.  Pages from nwant
 * on are readahead: loaded only when missing, never waited for, not kept
 * pinned otherwise.  A page found LOADING by a posted readahead load
 * (post.cuh) is claimed: the lane waits for the posted ticket's answer
 * (status) and owns its slot (claimed); the round copies and publishes
 * such pages before A2 takes tickets (gpufs_round_load).  Returns the
 * claimed lanes (a bit each).
 * A2, ask: each lane gets the host's (or peer's) result for a page it
 * loads (bytes or -errno), 0 otherwise.  Pages whose bit is set in nofetch
 * are not read from the host when they are missing: they start as zeros (a
 * writer will overwrite them whole, or they lie past the end of the file).
 * With post, the readahead pages that miss are posted instead
 * (readahead_async): their READs go to the host and the round neither
 * waits for them nor keeps them (the lane's kind and frame end up 0 and
 * GPUFS_NIL); post rounds claim nothing, and post nothing beyond their
 * budget (gpufs_post_take, in A1). */
__device__ uint32_t gpufs_round_find(const struct gpufs_fdinfo *fi, uint64_t p0, uint32_t np,
                                     uint32_t nwant, uint32_t ring, struct gpufs_round *r, bool post);
__device__ int64_t gpufs_round_ask(const struct gpufs_fdinfo *fi, uint64_t p0, uint32_t np,
                                   uint32_t nwant, uint32_t ring, uint32_t nofetch,
                                   struct gpufs_round *r, bool post);

/* Phase D for one meta lane (any subset of the meta warp may call it; it
 * synchronizes nothing): the page's status. */
__device__ int64_t gpufs_round_settle(const struct gpufs_dev *d, struct gpufs_round *r);

/* Pages a round may take in ring `ring`: at most a quarter of the ring, so
 * that groups sharing a small ring all make progress.  Any thread. */
__device__ __forceinline__ uint32_t gpufs_round_max(const struct gpufs_dev *d, uint32_t ring)
{
  uint32_t cap = d->cache.rings[ring].count / 4;
  if (cap == 0) cap = 1;
  return cap < GPUFS_CHUNK ? cap : GPUFS_CHUNK;
}

/* Phase C for the pages of `whole` (each loaded with page_size bytes from
 * its source, both 16-byte aligned): every thread copies words of any of
 * them, GPUFS_COPY_LOADS loads in flight per thread, so that a group whose sources
 * are in host memory (pull staging, a registered mapping) has many reads
 * in flight over PCIe at once, not one page's at a time.  Every thread of
 * the group calls it with the same whole, after the sync that publishes
 * the meta lanes' values; synchronizes nothing.  Not inlined: its eight
 * words in flight inlined into gwrite and gmmap made them spill 60-70%
 * more (ptxas -v, -maxrregcount=128); as a call their spills are as
 * before, and it spills nothing itself. */
#define GPUFS_COPY_LOADS 8
template <typename G>
__device__ __noinline__ void gpufs_round_copy_whole(G g, const struct gpufs_dev *d,
                                                       const struct gpufs_round *r, uint64_t src,
                                                       uint32_t whole)
{
  const uint32_t shift = (uint32_t)__ffs((int)(d->cache.page_size / sizeof(uint4))) - 1;
  const uint32_t nw = (uint32_t)__popc(whole) << shift; /* a multiple of 256 */
  const uint32_t step = g.size();
  for (uint32_t i0 = g.rank(); i0 < nw; i0 += GPUFS_COPY_LOADS * step) {
    /* loads first, all in flight; the stores find their frames again (a
     * register per word instead of a pointer per word: gread spills less) */
    uint4 v[GPUFS_COPY_LOADS];
GPUFS_UNROLL
    for (uint32_t u = 0; u < GPUFS_COPY_LOADS; u++) {
      const uint32_t i = i0 + u * step;
      /* every lane of a warp group takes the same branches: nw is a
       * multiple of 32 and the lanes' i differ by less than 32 */
      if (i < nw) {
        const uint32_t j = __fns(whole, 0, (int)(i >> shift) + 1);
        const uint4 *from = (const uint4 *)(uintptr_t)g.get64(GPUFS_V64_SRC, src, j);
        v[u] = from[i & ((1u << shift) - 1)];
      }
    }
GPUFS_UNROLL
    for (uint32_t u = 0; u < GPUFS_COPY_LOADS; u++) {
      const uint32_t i = i0 + u * step;
      if (i < nw) {
        const uint32_t j = __fns(whole, 0, (int)(i >> shift) + 1);
        uint4 *to = (uint4 *)gpufs_frame_data(&d->cache, g.get32(GPUFS_V32_FRAME, r->frame, j));
        to[i & ((1u << shift) - 1)] = v[u];
      }
    }
  }
}

/* The pull gate: at most pull_warps (config) warp groups of one SM copy
 * pages from host memory (pull staging, a registered mapping) at once.  Two
 * warps an SM already fill the link, and every warp more that reads host
 * memory keeps loads of host latency in flight that the SM's other warps'
 * device-memory work waits behind: on an H100 (bench/probes/pull_probe.cu
 * mix), 4 of 16 warps an SM pulling cut the other warps' device copies from
 * 2,471 to 544 GB/s, 8 to 100, while the pull stayed at 50.4-51.4 GB/s
 * (docs/design-read.md 7, "The pull gate").  Blocks are not gated: a block of
 * 256 threads is one group, and two to a SM is the usual grid.  The counter
 * is a throttle: it publishes nothing (relaxed), and a holder only copies,
 * so a waiter waits for copies in progress and nothing else. */
#define GPUFS_PULL_GATES 1024u /* more than any GPU's SMs; a power of two */
extern __device__ uint32_t gpufs_pull_gates[GPUFS_PULL_GATES];

/* Take one of the `limit` turns at this SM's gate (lane 0 waits; the
 * lanes then sync).  Every lane of the warp group calls it; synchronizes
 * the warp.  Returns the gate for gpufs_pull_gate_leave. */
__device__ __forceinline__ uint32_t *gpufs_pull_gate_enter(uint32_t limit)
{
  uint32_t *gate = &gpufs_pull_gates[gpufs_smid() & (GPUFS_PULL_GATES - 1)];
  if (gpufs_lane() == 0) {
    uint32_t ns = 128;
    while (gpufs_add_relaxed_u32_dev(gate, 1u) >= limit) {
      gpufs_add_relaxed_u32_dev(gate, ~0u); /* not our turn: give it back */
      gpufs_pause(&ns, 2048);
    }
  }
  __syncwarp();
  return gate;
}

/* Give the turn back after the copy.  Every lane calls it; synchronizes the
 * warp first (every lane's copy is done). */
__device__ __forceinline__ void gpufs_pull_gate_leave(uint32_t *gate)
{
  __syncwarp();
  if (gpufs_lane() == 0) gpufs_add_relaxed_u32_dev(gate, ~0u);
}

/* Phase C for the pages of `loads` (a bit per meta lane, whose frame,
 * source and status the meta lanes published): pages loaded whole from
 * their source go in one pass over all their words
 * (gpufs_round_copy_whole; a warp group copies those of from_host, read
 * from host memory, with its SM's pull turn), the rest page by page: a
 * failed page is left, a short one filled with zeros past its bytes, a
 * nofetch page of a writer taken from fill.  Every thread of the group
 * calls it with equal arguments, after the sync that published the
 * values; synchronizes nothing but a warp at the pull gate. */
template <typename G>
__device__ __forceinline__ void gpufs_round_fill(G g, const struct gpufs_dev *d,
                                                 const struct gpufs_round *r, uint64_t src,
                                                 uint32_t loads, uint32_t from_host, uint64_t p0,
                                                 uint32_t nofetch, const uint8_t *fill,
                                                 uint64_t fill_off)
{
  const uint32_t S = d->cache.page_size;
  uint32_t whole = 0;
  for (uint32_t m = loads; m != 0; m &= m - 1) {
    const uint32_t j = (uint32_t)__ffs((int)m) - 1;
    const int64_t got = (int64_t)g.get64(GPUFS_V64_STATUS, (uint64_t)r->status, j);
    if (got == (int64_t)S && !(fill && ((nofetch >> j) & 1u))) whole |= 1u << j;
  }
  if (G::pull_gated && d->pull_warps != 0 && (whole & from_host)) {
    uint32_t *gate = gpufs_pull_gate_enter(d->pull_warps);
    gpufs_round_copy_whole(g, d, r, src, whole);
    gpufs_pull_gate_leave(gate);
  } else {
    gpufs_round_copy_whole(g, d, r, src, whole);
  }
  for (uint32_t m = loads & ~whole; m != 0; m &= m - 1) {
    const uint32_t j = (uint32_t)__ffs((int)m) - 1;
    int64_t got = (int64_t)g.get64(GPUFS_V64_STATUS, (uint64_t)r->status, j);
    const uint8_t *from = (const uint8_t *)(uintptr_t)g.get64(GPUFS_V64_SRC, src, j);
    uint8_t *dst = gpufs_frame_data(&d->cache, g.get32(GPUFS_V32_FRAME, r->frame, j));
    if (got < 0) continue;
    if (fill && ((nofetch >> j) & 1u)) {
      gpufs_group_copy(dst, fill + ((p0 + j) * S - fill_off), S, g.rank(), g.size());
      continue;
    }
    gpufs_group_copy(dst, from, (size_t)got, g.rank(), g.size());
    /* a mapping of the page reads zeros past the end of the file */
    for (uint64_t k = (uint64_t)got + g.rank(); k < S; k += g.size()) dst[k] = 0;
  }
}

/* Pages p0 .. p0+np-1 are the caller's; the nextra after them are
 * readahead (gpufs_round_find): their status and frame are not for the
 * caller.  np + nextra <= gpufs_round_max(fi->d, ring).
 * A page not fetched (nofetch) starts as zeros, or, with fill, as the
 * caller's bytes: page p's from fill + (p * page_size - fill_off).  A writer
 * that covers the page whole passes its buffer, so that the page is never
 * published holding anything but the file's new bytes.
 * With post, the nextra readahead pages that miss are posted, not loaded
 * (gpufs_round_ask; np is 0 then).
 * Every thread of the group calls it with equal arguments; synchronizes the
 * group (two or three barriers; with readahead_async one more, two more in
 * a round that claims posted pages). */
template <typename G>
__device__ __forceinline__ void gpufs_round_load(G g, const struct gpufs_fdinfo *fi, uint64_t p0,
                                                 uint32_t np, uint32_t nextra, uint32_t ring,
                                                 struct gpufs_round *r,
                                                 uint32_t nofetch = 0, const uint8_t *fill = NULL,
                                                 uint64_t fill_off = 0, bool post = false)
{
  const struct gpufs_dev *d = fi->d;
  const uint32_t S = d->cache.page_size;
  const uint64_t t0 = gpufs_cycles();
  r->frame = GPUFS_NIL;
  r->kind = 0;
  r->ticket = 0;
  r->owned = false;
  r->claimed = false;
  r->budget = false;
  r->peer = NULL;
  r->peer_frame = GPUFS_NIL;
  r->reg_src = 0;
  r->status = 0;
  uint32_t loads = 0; /* the pages this round loads: a bit per meta lane */
  uint32_t claimed = 0; /* the posted pages it claimed (A1) */
  uint64_t src = 0;   /* where this meta lane's page is loaded from (C) */
  uint32_t from_host = 0; /* the loads from host memory (warp groups read it) */
  if (g.meta()) claimed = gpufs_round_find(fi, p0, np + nextra, np, ring, r, post); /* A1 */
  if (d->ra.async && !post) {
    /* The posted pages A1 claimed, copied by the group and published before
     * A2 takes tickets: a round must not hold an older ticket's slot while
     * it waits for newer tickets (post.cuh).  One barrier more, in rounds
     * of readahead_async only. */
    if (g.meta()) {
      src = (uint64_t)(uintptr_t)(d->q.staging + (uint64_t)gpufs_q_index(&d->q, r->ticket) * S);
      g.put32(GPUFS_V32_FRAME, r->frame);
      g.put64(GPUFS_V64_SRC, src);
      g.put64(GPUFS_V64_STATUS, (uint64_t)r->status);
      if (G::pull_gated) from_host = claimed;
      g.put_mask(claimed, 1); /* slot 1: A2 puts its loads in 0 while others read this */
    }
    g.sync();
    claimed = g.get_mask(claimed, 1);
    if (claimed) {
      gpufs_round_fill(g, d, r, src, claimed, from_host, p0, 0, NULL, 0);
      __threadfence(); /* as after C below */
      g.sync();
      if (g.meta() && r->claimed) {
        gpufs_post_settle(d, r->ticket, r->frame, r->status, r->owned);
        r->kind = GPUFS_GET_WAIT; /* ready now: D reads it as another's load */
        r->claimed = false;
        r->owned = false;
      }
    }
  }
  if (g.meta()) { /* A2 */
    r->status = gpufs_round_ask(fi, p0, np + nextra, np, ring, nofetch, r, post);
    src = r->reg_src ? r->reg_src
                     : (uint64_t)(uintptr_t)(r->peer_frame != GPUFS_NIL
                                                 ? gpufs_frame_data(&r->peer->cache, r->peer_frame)
                                                 : d->q.staging +
                                                       (uint64_t)gpufs_q_index(&d->q, r->ticket) * S);
    g.put32(GPUFS_V32_FRAME, r->frame);
    g.put32(GPUFS_V32_KIND, (uint32_t)r->kind);
    g.put64(GPUFS_V64_SRC, src);
    g.put64(GPUFS_V64_STATUS, (uint64_t)r->status);
    loads = __ballot_sync(GPUFS_FULL_MASK, r->kind == GPUFS_GET_LOAD);
    /* pages copied from host memory: a registered mapping's, or staging's */
    if (G::pull_gated)
      from_host = __ballot_sync(GPUFS_FULL_MASK,
                                r->kind == GPUFS_GET_LOAD &&
                                    (r->reg_src != 0 || r->peer_frame == GPUFS_NIL));
    g.put_mask(loads);
  }
  g.sync();
  const uint64_t t1 = gpufs_cycles();
  loads = g.get_mask(loads);
  gpufs_round_fill(g, d, r, src, loads, from_host, p0, nofetch, fill, fill_off); /* C */
  /* each thread makes its own frame writes visible GPU-wide before the meta
   * lane's release in gpufs_frame_loaded (which pairs with readers' acquire
   * of the VALID state).  A round that loads nothing wrote no frame and read
   * no status that D rewrites: no fence, no barrier. */
  if (loads) {
    __threadfence();
    g.sync();
  }
  const uint64_t t2 = gpufs_cycles();
  if (g.meta()) { /* D */
    r->status = gpufs_round_settle(d, r);
    g.put64(GPUFS_V64_STATUS, (uint64_t)r->status);
  }
  g.sync();
  if (g.rank() == 0) {
    uint64_t *pc = d->cache.stats[ring].phase_cycles;
    gpufs_add_relaxed_u64_dev(&pc[0], t1 - t0);
    gpufs_add_relaxed_u64_dev(&pc[1], t2 - t1);
    gpufs_add_relaxed_u64_dev(&pc[2], gpufs_cycles() - t2);
  }
  r->t_end = gpufs_cycles();
}

/* Page j's frame and status after gpufs_round_load.  Every thread of the
 * group calls them with the same j (a warp group shuffles); they
 * synchronize nothing. */
template <typename G>
__device__ __forceinline__ uint32_t gpufs_round_frame(G g, const struct gpufs_round *r, uint32_t j)
{
  return g.get32(GPUFS_V32_FRAME, r->frame, j);
}

/* Bytes the frame holds of the file (>= 0) or -errno; 0 for a page with
 * no frame. */
template <typename G>
__device__ __forceinline__ int64_t gpufs_round_status(G g, const struct gpufs_round *r, uint32_t j)
{
  return (int64_t)g.get64(GPUFS_V64_STATUS, (uint64_t)r->status, j);
}

/* Page j got no frame (its ring had none free): the caller stops there and
 * retries the page in a later round. */
template <typename G>
__device__ __forceinline__ bool gpufs_round_noframe(G g, const struct gpufs_round *r, uint32_t j)
{
  return (int32_t)g.get32(GPUFS_V32_KIND, (uint32_t)r->kind, j) == GPUFS_GET_NOFRAME;
}

/* Drop the round's pins; with keep_first, page 0 stays pinned (gmmap).
 * The time since the pages were ready counts as the round's copy phase.
 * Every thread of the group calls it; synchronizes the group first (every
 * thread's use of the pages is done before the unpins). */
template <typename G>
__device__ __forceinline__ void gpufs_round_unpin(G g, const struct gpufs_dev *d,
                                                  const struct gpufs_round *r, bool keep_first,
                                                  uint32_t ring)
{
  g.sync();
  if (g.meta() && r->frame != GPUFS_NIL && !(keep_first && gpufs_lane() == 0))
    gpufs_frame_unpin(&d->cache, r->frame);
  if (g.rank() == 0) {
    struct gpufs_ring_stats *rg = &d->cache.stats[ring];
    gpufs_add_relaxed_u64_dev(&rg->phase_cycles[3], gpufs_cycles() - r->t_end);
    gpufs_add_relaxed_u64_dev(&rg->rounds, 1ull);
  }
}

/* The one-page hit path, before any round: the group's first thread looks
 * page `page` up lock-free (gpufs_chain_find) and keeps the pin of a VALID
 * frame; a page that is missing or still loading is left to a round (a
 * LOADING frame found here is let go again: waiting for it here, pinned,
 * was measured 1.3x slower on the collage, 2026-11-27).  No staging, no
 * phase timing, no barrier beyond the broadcast: a cached page costs a
 * lookup and a pin.  Counted as a hit of `ring`, not as a round.  Returns
 * the pinned frame, or GPUFS_NIL, to every thread; the caller unpins a
 * frame with gpufs_frame_unpin after a g.sync() that ends every thread's
 * use.  Every thread of the group calls it with equal arguments;
 * synchronizes the group (a broadcast). */
template <typename G>
__device__ __forceinline__ uint32_t gpufs_round_hit_one(G g, const struct gpufs_fdinfo *fi,
                                                        uint64_t page, uint32_t ring)
{
  int64_t f = GPUFS_NIL;
  if (g.rank() == 0) {
    const struct gpufs_cache *c = &fi->d->cache;
    uint32_t st = 0;
    uint32_t fr = gpufs_chain_find(c, gpufs_key(fi->cid, page), fi->version, &st);
    if (fr != GPUFS_NIL && st != GPUFS_PG_VALID) {
      gpufs_frame_unpin(c, fr); /* loading: the round path waits for it */
      fr = GPUFS_NIL;
    }
    if (fr != GPUFS_NIL) gpufs_add_relaxed_u64_dev(&c->stats[ring].hits, 1ull);
    f = fr;
  }
  return (uint32_t)g.bcast(f);
}

/* A round in which not even its first page got a frame: pause and say
 * whether to retry (0), or give up with -ENOMEM after alloc_timeout_us, or
 * -ESHUTDOWN.  *since is the caller's, 0 before the first stall.  Every
 * thread of the group calls it; synchronizes the group (a broadcast). */
template <typename G>
__device__ __forceinline__ int64_t gpufs_round_stalled(G g, const struct gpufs_dev *d,
                                                       uint64_t *since)
{
  int64_t verdict = 0;
  if (g.rank() == 0) {
    uint64_t now = gpufs_now_ns();
    if (*since == 0) *since = now;
    if (gpufs_q_stopped(&d->q, gpufs_q_stop_key_here())) verdict = -GPUFS_ESHUTDOWN;
    else if (now - *since > (uint64_t)d->alloc_timeout_us * 1000) verdict = -GPUFS_ENOMEM;
    else {
      uint32_t ns = 2000;
      gpufs_pause(&ns, ns);
    }
  }
  return g.bcast(verdict);
}

#endif /* GPUFS_DEVICE_ROUND_CUH */
