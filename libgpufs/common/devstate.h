/*
 * devstate.h - everything a kernel's file calls reach, in one plain struct.
 *
 * One per instance: gpufs_start builds it on the host and copies it into
 * slot `instance` of the device global array `gpufs_devs` of the instance's
 * GPU (libgpufs/device/state.cu); device calls reach it through their
 * descriptor (libgpufs/device/internal.cuh).  It holds only pointers and
 * sizes: the memory it points to is owned by the host instance
 * (libgpufs/host/instance.h).
 */
#ifndef GPUFS_COMMON_DEVSTATE_H
#define GPUFS_COMMON_DEVSTATE_H

#include <stdint.h>
#include "libgpufs/common/cache.h"
#include <gpufs/config.h>
#include "libgpufs/common/dirty.h"
#include "libgpufs/common/queue.h"

/* GPU file table entry state. */
enum gpufs_gfile_state {
  GPUFS_GF_FREE = 0,
  GPUFS_GF_OPENING = 1, /* its first opener talks to the host; others wait */
  GPUFS_GF_OPEN = 2,
  GPUFS_GF_ERROR = 3,   /* the open failed (err); freed when the last ref goes */
  GPUFS_GF_CLOSING = 4  /* last ref gone; its closer talks to the host */
};

/* One descriptor: a (path, flags) that is open, shared by every group that
 * opened that path with those flags.  The descriptor a kernel sees is the
 * entry's index (and its instance, internal.cuh).  What the file's names
 * share is its node. */
struct gpufs_gfile {
  uint32_t state;   /* enum gpufs_gfile_state: changed under the table lock,
                       except OPENING -> OPEN/ERROR (release by the opener) */
  uint32_t advice; /* GPUFS_FADV_NORMAL/RANDOM/SEQUENTIAL: the last gfadvise
                       that steers the GPU's readahead for the entry */
  int32_t hfid;     /* host file index */
  uint32_t cid;     /* cache identity of the file (same inode, same cid) */
  uint32_t node;    /* its gpufs_gnode while OPEN or CLOSING, else GPUFS_NIL */
  uint32_t flags;
  int32_t err;
  uint32_t flushing; /* write-backs in progress that use its hfid (holds) */
  uint32_t hash;    /* of the path (gopen compares it first) */
  uint32_t len;     /* of the path */
  uint64_t refs;    /* generation << 32 | opens not yet closed (files.cu) */
};

/* One host file (device and inode: its cid) open on the instance through
 * one or more entries, whatever their paths and flags: what every name of
 * the file shares (libgpufs/device/gnode.cu). */
struct gpufs_gnode {
  uint32_t cid;      /* 0: free; set and cleared under the table lock */
  uint32_t links;    /* entries that name it (OPEN or CLOSING); under the lock */
  uint32_t version;  /* at the first open, renewed by gftruncate and O_TRUNC */
  uint32_t flushing; /* write-backs of its lists in progress (any entry) */
  uint64_t size;     /* bytes: at the first open, then as this GPU's writes
                        and truncations set it */
  uint32_t dheads[GPUFS_DLISTS]; /* dirty lists (dirty.h) */
  uint64_t reg;      /* a registered file's mapping (gpufs_reg_word, queue.h),
                        0: none; set at the first open, cleared by a
                        truncation (misses read it: round_lookup.cuh) */
};

/* Entries are small and dense, so that gopen's scan under the table lock
 * reads a few cache lines, not one per entry; the paths are apart. */
/* Where gopen's time goes (ns, summed over calls; device counters). */
struct gpufs_ftab_stats {
  uint64_t calls;
  uint64_t total_ns;
  uint64_t lock_ns;   /* waiting for the table lock */
  uint64_t host_ns;   /* the first opener's OPEN request to the host */
  uint64_t wait_ns;   /* joiners waiting for the first opener */
  uint64_t pad[3];
};

/* Entries or nodes a scan of the table loads at once, before it looks at
 * any: one load after the other, each waiting for the last (an L2 round
 * trip), the link scan of 128 nodes held the table lock, and with it every
 * joiner of a grid's gopen, for ~50 us on an H100 (5% of a 1 GiB hit
 * pass; docs/design.md 6). */
#define GPUFS_SCAN_BATCH 16u

struct gpufs_ftab {
  struct gpufs_ftab_stats *stats;
  struct gpufs_gfile *files;
  struct gpufs_gnode *nodes; /* nfiles of them: at most one per entry */
  char *paths;    /* nfiles * GPUFS_PATH_MAX: entry i's path at i * GPUFS_PATH_MAX */
  uint32_t *lock; /* entry creation and state changes (files.cu) */
  uint32_t *writers; /* entries opened for writing and not yet FREE: changed
                        under the lock; gmunmap/gmsync skip the table while 0 */
  uint32_t nfiles;
};

/* Readahead state of the groups (libgpufs/device/readahead.cuh): two words
 * per slot, a group's slot chosen by its id. */
struct gpufs_ra_ref {
  uint64_t *slots;    /* 2 * nslots words, zero at start */
  uint32_t nslots;    /* power of two */
  uint32_t max_pages; /* the largest window: readahead_max in pages, at most
                         GPUFS_CHUNK (posted: GPUFS_RA_POST_MAX); 0: off */
  /* Posted readahead (config readahead_async; device/post.cu): per queue
   * slot, the posted load that holds it, (frame + 1) << 32 | ticket's low
   * 32 bits, 0 for none; and the slots so held, at most post_slots */
  uint64_t *posted;
  uint32_t *nposted;
  uint32_t async;      /* 1: windows are posted (config readahead_async) */
  uint32_t post_slots; /* the most slots posted loads hold at once */
};

/* The writable mappings that are live (libgpufs/common/wmaps.h): an open
 * addressing table under its own lock, keyed by the mapping's address in
 * the cache and its size. */
struct gpufs_wmap {
  uint64_t off;   /* byte offset of the mapping in cache.data, + 1; 0: empty */
  uint32_t size;
  uint32_t entry; /* the descriptor it holds a reference on */
  uint32_t count; /* live mappings of this (address, size) */
  uint32_t pad;
};

struct gpufs_wmaps {
  struct gpufs_wmap *recs;
  uint32_t *lock;
  uint32_t *live;  /* records in use: changed under the lock; gmunmap and
                      gmsync skip the table while 0 */
  uint32_t cap;    /* power of two; at most cap / 2 records are used */
  uint32_t pad;
};

struct gpufs_dev {
  struct gpufs_cache cache;
  struct gpufs_wmaps maps;
  struct gpufs_queue_ref q;
  struct gpufs_ftab ftab;
  struct gpufs_ra_ref ra;
  uint32_t alloc_timeout_us; /* how long a group waits for a frame before -ENOMEM */
  uint32_t instance;         /* its index in gpufs_devs[] (and the daemon's queue) */
  uint32_t peers;            /* bit i: instance i's cache is readable from here
                                (same GPU, or a peer GPU with peer access and
                                native peer atomics): misses look there first */
  uint32_t pull_warps;       /* config's pull_warps: the SM's pull gate (round.cuh) */
};

#endif /* GPUFS_COMMON_DEVSTATE_H */
