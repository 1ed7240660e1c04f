/*
 * model.cuh - what the host side and the device side of the exerciser
 * share: limits, operation kinds, the kernels' arguments (random programs
 * and scripts) and launchers, the failure record, the byte pattern and the
 * random numbers.
 *
 * The model (README.md, "Random exerciser"):
 *
 *   host shadow  --upload-->  device shadow  --download-->  host shadow
 *   (between kernels: CPU       (during a kernel: each byte    (compared byte
 *    writes and truncations      range of a file has ONE        for byte with the
 *    change it and the file)     owning group, which alone      host file after
 *                                writes it and checks reads)    every full close)
 *
 * Within a kernel every file [0, arena) is cut into pieces, each owned by
 * one group (a block, or one warp of a block).  A group reads, writes and
 * maps only its own pieces, so the bytes it sees are exactly its shadow
 * whatever the other groups do.  Only the file's size is shared: other
 * groups' writes may grow it at any time, so a read near the end may
 * return any count between what the group knows for certain and the most
 * the others may have written (intent, committed: fsx_kargs).  Truncations
 * (gftruncate, O_TRUNC) run only in one-group kernels, where the size is
 * exact.
 */
#ifndef GPUFS_TESTS_FSX_MODEL_CUH
#define GPUFS_TESTS_FSX_MODEL_CUH

#include <stdint.h>

#include <cuda_runtime.h>

#define FSX_MAX_FILES 8
#define FSX_NAMES 4              /* DIR/fK, DIR//fK, DIR/./fK, DIR/fK.link */
#define FSX_PATH 256             /* bytes of one path, NUL included */
#define FSX_MAX_IO (12u << 10)   /* bytes of one gread / gwrite */
#define FSX_MAXFD 6              /* descriptors one group holds */
#define FSX_MAXMAP 2             /* mappings one group holds across operations */
#define FSX_HELD 3               /* descriptors per file a held kernel shares */
#define FSX_THREADS 256          /* threads of a block of the many-group kernels */
#define FSX_WARPS (FSX_THREADS / 32)

/* Device calls, as counted and reported. */
enum fsx_kind {
  FSX_OPEN,
  FSX_CLOSE,
  FSX_READ,
  FSX_WRITE,
  FSX_MMAP,
  FSX_MUNMAP,
  FSX_MSYNC,
  FSX_FSYNC,
  FSX_FTRUNCATE,
  FSX_FSTAT,
  FSX_NKINDS
};

/* How the groups of a kernel share the files. */
enum fsx_mode {
  FSX_MODE_SHARED, /* many groups; each opens and closes its own descriptors */
  FSX_MODE_SERIAL, /* one group owns every byte: truncations allowed, sizes exact */
  FSX_MODE_HELD    /* many groups use descriptors a helper kernel holds open
                      (fsx_held); they open and close only those names again */
};

/* Why an operation failed the model. */
enum fsx_why {
  FSX_WHY_RET,   /* the call returned other than the model says */
  FSX_WHY_COUNT, /* a byte count outside [want_lo, want_hi] */
  FSX_WHY_BYTE,  /* a byte read or mapped differs from the shadow */
  FSX_WHY_SIZE,  /* gfstat's size outside [want_lo, want_hi] */
  FSX_WHY_INO    /* gfstat's inode is not the file's */
};

/* Access modes: the values of GPUFS_O_RDONLY / WRONLY / RDWR. */
enum fsx_acc { FSX_RO = 0, FSX_WO = 1, FSX_RW = 2 };

/* [lo, hi) of file `file`, owned by group slot `slot` for one kernel. */
struct fsx_piece {
  uint64_t lo, hi;
  uint32_t file, slot;
};

/* A descriptor a helper kernel holds open during a FSX_MODE_HELD kernel. */
struct fsx_held {
  int fd;
  int name;  /* index in the file's names */
  int flags; /* as given to gopen */
};

/* The first operation that broke the model (written once, by the group
 * that won fsx_kargs.failed). */
struct fsx_fail {
  uint32_t kernel, slot, op, kind, file, name, why;
  int32_t flags, fd;
  int64_t off, len, ret, want_lo, want_hi, at; /* at: the file offset of the first bad byte */
  uint32_t want_byte, got_byte;
};

/* The operation a group is in, for the watchdog's report of a hang
 * (pinned host memory, written by the group's leader). */
struct fsx_progress {
  uint32_t kernel, op, kind, active;
};

/* A many-group or one-group kernel's arguments (by value). */
struct fsx_kargs {
  uint64_t seed;
  uint32_t kernel;   /* kernel number in the run */
  uint32_t mode;     /* enum fsx_mode */
  uint32_t nfiles;
  uint32_t page;     /* the cache's page size */
  uint64_t arena;    /* bytes of each file's shadow: no file grows past it */
  uint32_t ops;      /* random operations per group */
  const char *paths; /* [nfiles][FSX_NAMES][FSX_PATH] */
  const uint64_t *ino;        /* [nfiles] st_ino of each file */
  const uint8_t *block_warp;  /* [gridDim.x] 1: each warp of the block is a group */
  const uint32_t *own_start;  /* [slots + 1]: slot s owns pieces own[own_start[s] ..] */
  const uint32_t *own;        /* indexes into pieces */
  const struct fsx_piece *pieces;
  uint8_t *shadow;            /* [nfiles][arena] */
  const int64_t *size0;       /* [nfiles] sizes at launch */
  int64_t *size_out;          /* [nfiles] FSX_MODE_SERIAL: sizes at the end */
  unsigned long long *intent;    /* [nfiles] largest end any group is about to write */
  unsigned long long *committed; /* [nfiles] largest end any group's gwrite returned */
  const struct fsx_held *held;   /* [nfiles][FSX_HELD], FSX_MODE_HELD */
  uint8_t *bufs;                 /* [slots][FSX_MAX_IO] */
  unsigned long long *counts;    /* [slots][FSX_NKINDS] calls made */
  struct fsx_fail *fail;
  unsigned int *failed;          /* 0 until the first failure */
  struct fsx_progress *progress; /* [slots], mapped host memory */
};

/* Group slots: FSX_WARPS per block; a block-level group uses the first. */
__host__ __device__ inline uint32_t fsx_slot(uint32_t block, uint32_t warp)
{
  return block * FSX_WARPS + warp;
}

__host__ __device__ inline uint64_t fsx_mix(uint64_t z)
{
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Byte at file offset off of the bytes written by write generation gen. */
__host__ __device__ inline uint8_t fsx_byte(uint64_t gen, uint64_t off)
{
  uint64_t z = fsx_mix(gen * 0x9e3779b97f4a7c15ull ^ (off >> 3));
  return (uint8_t)(z >> ((off & 7) * 8));
}

/* splitmix64: every thread of a group steps the same state, so every
 * decision made from it is the same in the whole group. */
__host__ __device__ inline uint64_t fsx_next(uint64_t *s)
{
  *s += 0x9e3779b97f4a7c15ull;
  return fsx_mix(*s);
}

/* Uniform in [0, n); 0 for n 0. */
__host__ __device__ inline uint64_t fsx_below(uint64_t *s, uint64_t n)
{
  return n ? fsx_next(s) % n : 0;
}

/* True with probability num / den. */
__host__ __device__ inline bool fsx_chance(uint64_t *s, uint32_t num, uint32_t den)
{
  return fsx_below(s, den) < num;
}

/* A seed for the stream (a, b, c) of seed. */
__host__ __device__ inline uint64_t fsx_seed3(uint64_t seed, uint64_t a, uint64_t b, uint64_t c)
{
  return fsx_mix(fsx_mix(fsx_mix(seed ^ 0x5851f42d4c957f2dull) + a) + b) + c;
}

/* ---- scripts: a fixed list of calls by one group (script.cu), for the
 * steps of an epoch the model must know exactly (epochs.cu) ---- */

#define FSX_REGS 64 /* descriptors and mappings a script keeps across kernels */

/* What a script step does. */
enum fsx_sop {
  FSX_S_OPEN,   /* fds[dst] = gopen(path of file, name; flags) */
  FSX_S_CLOSE,  /* gclose(fds[src]) */
  FSX_S_FSYNC,  /* gfsync(fds[src]) */
  FSX_S_MMAP,   /* ptrs[dst] = gmmap(len, prot, mflags, fds[src], off); the
                   bytes are compared with the shadow (bad[step]) */
  FSX_S_STORE,  /* store generation gen through ptrs[src] over [off, off+len)
                   of the mapping made at off, and into the shadow */
  FSX_S_MSYNC,  /* gmsync(ptrs[src], len, mflags) */
  FSX_S_MUNMAP  /* gmunmap(ptrs[src], len) */
};

struct fsx_step {
  int op;            /* enum fsx_sop */
  int file, name, flags;
  int src, dst;      /* registers */
  int prot, mflags;
  int64_t off, len;  /* MMAP, STORE: file offset and length; MSYNC, MUNMAP: len */
  int64_t map_off;   /* STORE: the offset the mapping was made at */
  uint64_t gen;      /* STORE */
};

struct fsx_script {
  const struct fsx_step *steps; /* device memory */
  int n;
  int64_t *res;      /* [n] the call's result (gmmap: 0 or -errno) */
  int64_t *bad;      /* [n] MMAP: the first byte differing from the shadow, or -1 */
  int64_t *fds;      /* [FSX_REGS], kept across kernels */
  uint8_t **ptrs;    /* [FSX_REGS], kept across kernels */
  const char *paths; /* as fsx_kargs.paths */
  uint8_t *shadow;   /* as fsx_kargs.shadow */
  uint64_t arena;
};

/* fsx_kernel (program.cu) over `blocks` blocks of `threads`: the launch's
 * error. */
cudaError_t fsx_launch(const struct fsx_kargs *a, unsigned blocks, unsigned threads);

/* A script (script.cu) by one group: a block of 64 threads, or a warp
 * (warp-level calls); the launch's error. */
cudaError_t fsx_launch_script(const struct fsx_script *s, int warp);

#endif /* GPUFS_TESTS_FSX_MODEL_CUH */
