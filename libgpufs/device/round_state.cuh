/*
 * round_state.cuh - what every step of a round (round.cuh) shares: the
 * request (struct gpufs_round_ctl), where a page comes from (enum
 * gpufs_src), what a meta lane holds about its page (struct gpufs_round),
 * the slots the meta lanes publish the pages' values in, and the two
 * helpers every round's caller needs first (gpufs_fd_get_group,
 * gpufs_round_max).
 */
#ifndef GPUFS_DEVICE_ROUND_STATE_CUH
#define GPUFS_DEVICE_ROUND_STATE_CUH

#include <gpufs.cuh>
#include "libgpufs/device/group.cuh"
#include "libgpufs/device/internal.cuh"

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

/* Pages a round may take in ring `ring`: at most a quarter of the ring, so
 * that groups sharing a small ring all make progress.  Any thread. */
__device__ __forceinline__ uint32_t gpufs_round_max(const struct gpufs_dev *d, uint32_t ring)
{
  uint32_t cap = d->cache.rings[ring].count / 4;
  if (cap == 0) cap = 1;
  return cap < GPUFS_CHUNK ? cap : GPUFS_CHUNK;
}

/* What a round is asked to do, as Linux's struct readahead_control: the
 * caller fills the fields by name (zero for what it does not use) and
 * every thread of the group passes an equal one to gpufs_round_load.
 * Pages p0 .. p0+np-1 are the caller's; the nextra after them are
 * readahead: loaded only when missing, never waited for, not kept pinned,
 * their status not the caller's.  np + nextra <= gpufs_round_max(ring). */
struct gpufs_round_ctl {
  const struct gpufs_fdinfo *fi; /* the file, as the group read its descriptor */
  uint64_t p0;                   /* the first page */
  uint32_t np;                   /* the caller's pages */
  uint32_t nextra;               /* readahead pages after them */
  uint32_t ring;                 /* the group's ring: its frames and counters */
  /* bit j: page p0+j is not read from the host when it is missing
   * (GPUFS_SRC_FILL): a writer covers it whole, or it lies past the end of
   * the file.  It starts as zeros, or, with fill, as the caller's bytes:
   * page p's from fill + (p * page_size - fill_off), so that a page a
   * writer covers is never published holding anything but its new bytes */
  uint32_t nofetch;
  const uint8_t *fill;
  uint64_t fill_off;
  /* readahead_async: the nextra pages that miss are posted (post.cuh), not
   * loaded: the round neither waits for them nor keeps them; np is 0 */
  bool post;
};

/* Where a meta lane's page comes from: what the lookup step returns
 * (round_lookup.cuh), and the value settle goes by.  The loads (from
 * GPUFS_SRC_PEER on) are LOADING frames this round created, pinned; the
 * copy step fills them and settle publishes them. */
enum gpufs_src {
  GPUFS_SRC_NONE = 0, /* nothing for the caller: no page, or a readahead page
                         that is cached, on its way, without a frame, or posted */
  GPUFS_SRC_CACHE,    /* VALID in this cache, pinned */
  GPUFS_SRC_WAIT,     /* LOADING by another, pinned: settle waits for it */
  GPUFS_SRC_NOFRAME,  /* every frame of the ring pinned or loading; nothing held */
  GPUFS_SRC_POSTED,   /* a posted load's frame, claimed: its ticket's staging,
                         copied before the ask step (round_lookup.cuh) */
  GPUFS_SRC_PEER,     /* a peer instance's VALID frame, pinned until settle */
  GPUFS_SRC_PINNED,   /* the file's pinned mapping (gnode.reg: gpufs_register
                         or an automatic pin), at r->from */
  GPUFS_SRC_DAEMON,   /* a READ to the daemon: its ticket's staging */
  GPUFS_SRC_FILL      /* not read (ctl nofetch): the caller's fill, or zeros */
};

/* The sources this round loads into a new frame. */
__device__ __forceinline__ bool gpufs_src_loads(int32_t s)
{
  return s >= GPUFS_SRC_PEER;
}

/* The loads that read the file's bytes (counted as readahead pages). */
__device__ __forceinline__ bool gpufs_src_reads(int32_t s)
{
  return s >= GPUFS_SRC_PEER && s <= GPUFS_SRC_DAEMON;
}

/* Slots of the per-page values the meta lanes publish.  64-bit slot 0
 * holds a load's source address in a round and a run's ticket in a
 * write-back; 32-bit slot 1 a page's source in a round (enum gpufs_src). */
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
  int32_t src; /* enum gpufs_src */
  uint64_t ticket;
  bool owned;  /* the lane holds the ticket's slot */
  bool budget; /* a post round took its budget (gpufs_post_take) */
  const struct gpufs_dev *peer; /* GPUFS_SRC_PEER: the instance, */
  uint32_t peer_frame;          /* and its frame, pinned until settle */
  uint64_t from; /* GPUFS_SRC_PEER, _PINNED: the page's address there */
  int64_t status;
  uint64_t t_end; /* SM cycles when the round's pages were ready */
};

/* The staging of ticket t's slot: where the daemon leaves a READ's bytes. */
__device__ __forceinline__ uint64_t gpufs_round_staging(const struct gpufs_dev *d, uint64_t t)
{
  return (uint64_t)(uintptr_t)(d->q.staging +
                               (uint64_t)gpufs_q_index(&d->q, t) * d->cache.page_size);
}

#endif /* GPUFS_DEVICE_ROUND_STATE_CUH */
