/*
 * hostfiles_priv.h - the host file table's own state, shared by its files:
 * hostfiles.c (opens, pins, identities, mappings) and hostfiles_reg.c
 * (registrations, explicit and automatic).  Not part of any interface.
 */
#ifndef GPUFS_HOST_HOSTFILES_PRIV_H
#define GPUFS_HOST_HOSTFILES_PRIV_H

#include <pthread.h>
#include <stdint.h>

#include "libgpufs/host/hostfiles.h"

enum hf_state {
  HF_FREE = 0,
  HF_OPENING = 1, /* reserved by an open in progress */
  HF_OPEN = 2,
  HF_CLOSING = 3  /* closed by the GPU, still pinned by a worker */
};

#define HF_STATE_SHIFT 30
#define HF_PINS 0x3fffffffu

struct hf_entry {
  uint32_t word;    /* state << 30 | pins: atomics only */
  int fd;           /* set before the release of OPEN; read after a pin */
  uint32_t advised; /* 1 once the file's host readahead advice is given */
  uint64_t unstarted; /* bytes the daemon wrote since it last started the
                         write-out (write_behind): atomics only */
  uint64_t dev, ino; /* the file's, set under the lock with OPEN */
  uint32_t map;      /* enum hf_map (the daemon's READ mapping): atomics only */
  void *map_addr;    /* set by the mapper before MAP_LIVE; unmapped by */
  uint64_t map_len;  /* the entry's last user (hf_retire) */
  uint64_t reg;      /* the inode's live registration (gpufs_reg_word), or 0:
                        set under the lock, read by READ replies (atomics) */
  uint64_t read;      /* bytes READ through the entry: atomics only */
  uint64_t reread_at; /* gpufs_hostfile_id's: set with OPEN, read after a pin */
};

/* An entry's mapping, from which the daemon copies READs (gpufs_hostfiles_map):
 *
 *   NONE --first READ--> MAKING --mapped--> LIVE --renew--> RETIRED
 *     ^                    |  (not mappable: OFF; empty file: NONE)
 *     +------------- hf_retire unmaps whatever was made ------------+
 *
 * A renew (the daemon truncated the file) retires the mappings of every
 * entry of the inode: pages past the cut are no longer the file's. */
enum hf_map {
  MAP_NONE = 0,
  MAP_MAKING = 1,
  MAP_LIVE = 2,
  MAP_RETIRED = 3, /* truncated: pread from now on */
  MAP_OFF = 4      /* could not be mapped: pread from now on */
};

static inline uint32_t hf_state(uint32_t w) { return w >> HF_STATE_SHIFT; }
static inline uint32_t hf_word(uint32_t state, uint32_t pins) { return state << HF_STATE_SHIFT | pins; }

/* What the previous open of an inode saw.  cid 0 marks an empty bucket. */
struct hf_inode {
  uint64_t dev;
  uint64_t ino;
  int64_t size;
  int64_t mtime_ns;
  int64_t ctime_ns;
  uint32_t cid;
  uint32_t version;
  uint32_t stale; /* bit q: queue q's next open bumps the version (hostfiles.h) */
  uint32_t reg;   /* enum hf_reg_state */
  struct gpufs_hostfile_reg r; /* REG_LIVE, REG_RETIRED: the registration */
  uint32_t opens; /* host opens of the inode (saturating) */
  uint32_t pin_asked; /* enum gpufs_pin_hint: the hint an open
                         gave since the last decline or release */
  uint32_t acquired_changed; /* 1 once a gpufs_acquire found the host had
                                changed the file: it is not pinned
                                automatically from then on (each later
                                change retires a pin) */
  uint64_t last_use;  /* hf->use_clock at the last open that got r */
};

enum hf_reg_state {
  REG_NONE = 0,
  REG_LIVE = 1,    /* opens get it while the file is not shorter than r.len */
  REG_RETIRED = 2  /* truncated or found shorter: kept pinned, given to no open */
};

_Static_assert(GPUFS_HOSTFILES_MAX_QUEUES == 32, "a queue's stale bit is one of stale's 32");

struct gpufs_hostfiles {
  pthread_mutex_t lock;
  const struct gpufs_io_ops *io;
  struct hf_entry *files;
  uint32_t nfiles;
  uint32_t hint; /* where the next free-entry search starts: delays hfid reuse */
  struct hf_inode *inodes; /* open addressing, linear probing */
  uint32_t icap;           /* power of two */
  uint32_t icount;
  uint32_t next_cid;
  struct gpufs_hostfile_regstats regs; /* under the lock */
  uint64_t use_clock; /* opens that got a registration; under the lock */
};

/* The inode record of (dev, ino), or the empty bucket where it goes. */
struct hf_inode *gpufs_hf_inode_find(struct hf_inode *tab, uint32_t cap, uint64_t dev, uint64_t ino);

/* Room for one more inode record.  0 or -ENOMEM.  With the lock held. */
int gpufs_hf_inodes_reserve(struct gpufs_hostfiles *hf);

/* Store w as the registration word of every entry open on inode n (0: none
 * any more).  With the lock held. */
void gpufs_hf_reg_publish(struct gpufs_hostfiles *hf, const struct hf_inode *n, uint64_t w);

/* A registered file was truncated or found shorter than registered: pages
 * past the cut left the page cache, but the mapping still pins the old
 * ones, so no open gets it any more.  With the lock held. */
void gpufs_hf_reg_retire(struct gpufs_hostfiles *hf, struct hf_inode *n);

/* What an open with `flags` of inode n (just identified: st is its fresh
 * fstat) learns of registrations: id->reg, the live registration's word
 * (retiring one the file is now shorter than); id->pin_hint, whether this
 * open earns the file an automatic pin (hostfiles.h).  With the lock held. */
void gpufs_hf_reg_open(struct gpufs_hostfiles *hf, struct hf_inode *n, const struct stat *st,
                       int flags, struct gpufs_hostfile_id *id);

/* An open of inode (dev, ino) read more than the file: 1 when that earns
 * the file an automatic pin now (no registration, none asked for: it is
 * marked asked), else 0.  Takes the lock. */
int gpufs_hf_reg_reread(struct gpufs_hostfiles *hf, uint64_t dev, uint64_t ino);

#endif /* GPUFS_HOST_HOSTFILES_PRIV_H */
