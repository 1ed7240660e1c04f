/*
 * config.h - the run-time configuration of libgpufs: its instances (one per
 * listed GPU) and what each instance gets.
 *
 * Plain C, shared by the host API (which fills and validates it) and by the
 * daemon and tests.  Every field has a default (gpufs_config_default) and a
 * GPUFS_* environment override (gpufs_config_from_env); gpufs_config_check
 * refuses a bad one with -EINVAL and names the field.
 */
#ifndef GPUFS_COMMON_CONFIG_H
#define GPUFS_COMMON_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Instances one process may run at once (entries of devices[]). */
#define GPUFS_MAX_INSTANCES 8u

struct gpufs_config {
  int device;               /* CUDA device ordinal                 GPUFS_DEVICE */
  uint32_t page_size;       /* bytes, power of two, 4 KiB..2 MiB   GPUFS_PAGE_SIZE */
  uint64_t cache_size;      /* bytes of GPU page frames            GPUFS_CACHE_SIZE */
  uint32_t nrings;          /* frame allocator rings               GPUFS_RINGS
                               0: gpufs_config_rings's choice */
  uint32_t daemon_threads;  /* host worker threads                 GPUFS_DAEMON_THREADS
                               0: gpufs_config_daemon_threads's
                               choice */
  uint64_t staging_size;    /* bytes of pinned staging (slots);    GPUFS_STAGING_SIZE
                               0: gpufs_config_staging's choice */
  uint32_t max_open_files;  /* distinct open files at once         GPUFS_MAX_OPEN_FILES */
  uint32_t max_batch;       /* requests one worker takes at once   GPUFS_MAX_BATCH */
  uint32_t alloc_timeout_ms;/* wait for a free frame, then -ENOMEM GPUFS_ALLOC_TIMEOUT_MS */
  uint32_t poll_max_ns;     /* longest pause between a waiting    GPUFS_POLL_MAX_NS
                               group's polls of the host (ns) */
  uint32_t readahead_max;   /* bytes: the largest readahead       GPUFS_READAHEAD_MAX
                               window of a group reading a file
                               sequentially (0: off; at most 32
                               pages are used) */
  uint32_t ndevices;        /* instances to start, one per entry   GPUFS_DEVICES
                               of devices[]; 0: one, on `device`   (e.g. "0,1";
                               "0,0": two instances on one GPU) */
  int devices[GPUFS_MAX_INSTANCES]; /* CUDA device ordinals */
  uint32_t stop_timeout_ms; /* gpufs_stop's limit for the write-  GPUFS_STOP_TIMEOUT_MS
                               back of running kernels' files and
                               for a daemon worker stuck in a host
                               call (0: 10 s) */
  uint32_t dirty_grain;     /* bytes one dirty bit covers: what  GPUFS_DIRTY_GRAIN
                               write-back writes at least; 1
                               (byte-exact) to 64, a power of two;
                               0: GPUFS_DIRTY_GRAIN (64) */
  uint64_t register_max;    /* bytes the files gpufs_register    GPUFS_REGISTER_MAX
                               pins together, at most (0: half
                               of the host's physical memory) */
  uint64_t write_behind;    /* bytes: each time the daemon has   GPUFS_WRITE_BEHIND
                               written this many more to a file,
                               it starts the host's write-out of
                               the file's dirty pages to disk
                               (sync_file_range, not waiting), so
                               the disk works while the GPU still
                               writes back; 0: off (the host's
                               own timing); default 32 MiB */
  uint32_t pull_warps;      /* warp groups of one SM that copy   GPUFS_PULL_WARPS
                               pages from host memory (pull
                               staging, registered files) at
                               once; the others wait their turn
                               (0: no limit; at most 64;
                               default 4) */
  uint32_t readahead_async; /* 1: a group that reaches the first  GPUFS_READAHEAD_ASYNC
                               page of its latest window posts
                               the next window's reads and goes
                               on without waiting for them
                               (windows up to 64 pages); 0: the
                               window is loaded in the call's
                               last round (default 0) */
  uint32_t auto_pin;        /* 1: a read-only file gopen reads   GPUFS_AUTO_PIN
                               is pinned in the background
                               within register_max (docs/api.md,
                               "Automatic pins"); 0: only
                               gpufs_register pins (default 1) */
};

/* Limits the checks enforce. */
#define GPUFS_PAGE_MIN (4u << 10)
#define GPUFS_PAGE_MAX (2u << 20)
#define GPUFS_MIN_SLOTS 128u      /* staging_size / page_size at least this */
#define GPUFS_MAX_FILES_LIMIT 4096u
#define GPUFS_PATH_MAX 4096u      /* including the terminating NUL */
#define GPUFS_CHUNK 32u         /* pages one group handles per round: one per meta lane */
#define GPUFS_READAHEAD_LIMIT (64u << 20) /* readahead_max at most */
#define GPUFS_RA_POST_MAX 64u /* pages of a posted readahead window at most */
#define GPUFS_DIRTY_GRAIN 64u     /* bytes: the default (and largest) unit of dirty
                                     tracking and write-back (dirty_grain) */

void gpufs_config_default(struct gpufs_config *cfg);

/* The staging bytes cfg gives: staging_size, or for 0, room for 16384 page
 * requests in flight, between 256 MiB and 1 GiB (measured: 4,096 slots of
 * 64 KiB starved 2,112 warps reading 4 pages each; docs/design-write.md 16), but
 * no more than two slots per cache frame (at least GPUFS_MIN_SLOTS): a
 * small cache has no more loads in flight than frames. */
uint64_t gpufs_config_staging(const struct gpufs_config *cfg);

/* The rings cfg gives: nrings, or for 0, GPUFS_RINGS_AUTO_MAX (64) where
 * the cache holds 4 frames a ring for that many, else as many rings of 4
 * frames as it holds (at least 1). */
#define GPUFS_RINGS_AUTO_MAX 64u
uint32_t gpufs_config_rings(const struct gpufs_config *cfg);

/* The daemon's workers cfg gives: daemon_threads, or for 0, 16 for each
 * instance it starts (ndevices, or 1), but no more than the online CPUs
 * (at least 1, at most 256): one GPU's copies want about 16 workers, and
 * two H200s at once read 70.0 GB/s with 32 against 50.1 with 16
 * (docs/config.md). */
#define GPUFS_WORKERS_PER_INSTANCE 16u
uint32_t gpufs_config_daemon_threads(const struct gpufs_config *cfg);

/* Apply GPUFS_* environment variables over *cfg.  Sizes accept K, M, G
 * suffixes.  Returns 0, or -EINVAL with *bad_field set to the variable's name
 * when a value does not parse. */
int gpufs_config_from_env(struct gpufs_config *cfg, const char **bad_field);

/* 0 if usable; else -EINVAL and *bad_field names the offending field and
 * *why says what is wrong (static strings). */
int gpufs_config_check(const struct gpufs_config *cfg, const char **bad_field, const char **why);

#ifdef __cplusplus
}
#endif
#endif /* GPUFS_COMMON_CONFIG_H */
