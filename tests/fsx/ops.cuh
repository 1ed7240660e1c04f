/*
 * ops.cuh - one group's state in a kernel of the exerciser, and its
 * operations: each makes one device call (or two: a mapping and its
 * gmunmap), checks the result against the model, and updates the model.
 * ops.cu: the data operations (gread, gwrite, mappings, gfstat) and the
 * model's helpers; program.cu: the descriptor operations, the random
 * program and its kernel.
 *
 * Every function here is called by every thread of the group with equal
 * arguments and returns the same to all of them (the group's state is
 * replicated in each thread, stepped by the same random numbers and the
 * calls' equal results).  The operations return false after recording a
 * failure (the group then stops).
 */
#ifndef GPUFS_TESTS_FSX_OPS_CUH
#define GPUFS_TESTS_FSX_OPS_CUH

#include "tests/fsx/group.cuh"

/* A descriptor of the group (or one it borrows from fsx_kargs.held). */
struct fsx_fdent {
  int fd;
  int file, name;
  int acc;   /* enum fsx_acc */
  int flags; /* as given to gopen */
  bool borrowed;
};

/* A mapping the group keeps across operations. */
struct fsx_map {
  uint8_t *p;
  uint64_t off;
  uint32_t len;
  int file, name, flags, fd;
  bool writable; /* PROT_WRITE, MAP_SHARED, O_RDWR: holds its descriptor */
};

struct fsx_ctx {
  const struct fsx_kargs *a;
  fsx_grp g;
  uint64_t rng;
  uint32_t op;                     /* the program's operation index */
  int nfds, nmaps;
  struct fsx_fdent fds[FSX_MAXFD];
  struct fsx_map maps[FSX_MAXMAP];
  int64_t lo[FSX_MAX_FILES];       /* a size each file has for certain now
                                      (FSX_MODE_SERIAL: its size) */
  uint8_t *buf;                    /* the slot's FSX_MAX_IO bytes */
  unsigned long long *counts;      /* the slot's FSX_NKINDS counters */
};

/* A call as reported on failure. */
struct fsx_call {
  int kind, file, name, flags, fd;
  int64_t off, len;
};

/* What an operation picks a descriptor for. */
enum fsx_need { FSX_NEED_READ, FSX_NEED_WRITE, FSX_NEED_ANY };

/* ---- the model's helpers (ops.cu) ---- */

/* Record the failure (the first in the kernel wins) and return false. */
__device__ bool fsx_fail(fsx_ctx *c, const fsx_call *k, int why, int64_t ret, int64_t want_lo,
                         int64_t want_hi, int64_t at, int want_byte, int got_byte);
/* Count a call of `kind` and publish it as the group's progress. */
__device__ void fsx_count(fsx_ctx *c, int kind);
/* True when another group has failed (the group should stop). */
__device__ bool fsx_stopped(fsx_ctx *c);
/* The number of descriptors the group may use, and descriptor i. */
__device__ int fsx_nents(const fsx_ctx *c);
__device__ fsx_fdent fsx_ent(const fsx_ctx *c, int i);
/* A descriptor for `need`; now and then any one (the caller then expects
 * the call's error).  -1 when there is none. */
__device__ int fsx_pick_fd(fsx_ctx *c, int need);
/* A random range in one of the group's pieces of file f: len <= maxlen,
 * within one page when inpage.  False when the group owns none of f. */
__device__ bool fsx_pick_range(fsx_ctx *c, int f, uint64_t maxlen, bool inpage, uint64_t *off,
                               uint64_t *len);
/* Set shadow bytes [lo, hi) of file f to zero (truncations). */
__device__ void fsx_zero_shadow(fsx_ctx *c, int f, uint64_t lo, uint64_t hi);
/* True when the group keeps a mapping of file f. */
__device__ bool fsx_mapped(const fsx_ctx *c, int f);

/* ---- data operations (ops.cu) ----
 * e: the descriptor (fsx_pick_fd: READ for read, mmap; WRITE for write;
 * ANY for fstat); m: a kept mapping.  None calls another operation (no
 * recursion: the stack of a kernel stays known to the compiler). */
__device__ bool fsx_op_read(fsx_ctx *c, int e);
__device__ bool fsx_op_write(fsx_ctx *c, int e);
__device__ bool fsx_op_mmap(fsx_ctx *c, int e);
__device__ bool fsx_op_fstat(fsx_ctx *c, int e);
__device__ bool fsx_op_msync(fsx_ctx *c, int m);
__device__ bool fsx_op_munmap(fsx_ctx *c, int m);

#endif /* GPUFS_TESTS_FSX_OPS_CUH */
