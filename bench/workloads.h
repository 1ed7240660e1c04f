/*
 * workloads.h - the libgpufs side of the benchmarks: kernels that read a
 * pattern file (benchlib/pattern.h) through gread / gread_warp and check every
 * 8-byte word that arrives, and a kernel that writes a new pattern file
 * through gwrite + gfsync, checked word by word on the host afterwards; all
 * timed with CUDA events.
 *
 * libgpufs must be started (gpufs_start) by the caller; the page size, cache
 * size and transfer path are its configuration, not these parameters.
 * Callable from C and C++ (nvcc) code.
 */
#ifndef BENCH_WORKLOADS_H
#define BENCH_WORKLOADS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Blocks of 256 threads each SM runs at once in the seq/write and rand
 * grids.  The kernels are compiled for it (__launch_bounds__), so that the
 * whole grid is resident: libgpufs's device calls are built to fit in 128
 * registers a thread (Makefile), and a kernel over 128 fits only one
 * 256-thread block on an SM, which splits the grid into waves. */
#ifndef BENCH_SEQ_BLOCKS_PER_SM
#define BENCH_SEQ_BLOCKS_PER_SM 2
#endif
#ifndef BENCH_RAND_BLOCKS_PER_SM
#define BENCH_RAND_BLOCKS_PER_SM 2
#endif
#define BENCH_BLOCK_THREADS 256

enum bench_access {
  BENCH_SEQ_BLOCK = 0, /* each threadblock gread()s its own contiguous stride */
  BENCH_SEQ_WARP = 1,  /* each warp gread_warp()s its own contiguous stride */
  BENCH_RAND_WARP = 2, /* warps gread_warp() io_size-aligned pieces in a random order */
  BENCH_SEQ_WRITE = 3  /* each threadblock gwrite()s its own contiguous stride of a new
                          file (bench_gpufs_write; bench_gpufs_read refuses it) */
};

struct bench_read_params {
  const char *path;      /* a file from bench_make_file */
  uint64_t file_size;    /* its size: a multiple of io_size */
  uint64_t seed;         /* its pattern */
  enum bench_access access;
  int blocks;            /* grid; every block opens the file (block-level gopen) */
  int threads;           /* per block, a multiple of 32 */
  uint64_t io_size;      /* bytes per call: the chunk (seq) or the page (rand); multiple of 8 */
  uint64_t rand_reads;   /* rand: calls in all, at most file_size / io_size: each piece
                            is read at most once, so a cold cache stays cold */
  double cap_seconds;    /* a group issues no new call after this long (<= 0: no cap) */
  int instance;          /* the libgpufs instance to open on (gpufs_ref); -1 (or 0 with
                            one instance): the GPU's default */
  /* Called once, untimed, right before the kernel's start is recorded (or,
   * when a step before it failed, before returning): how runs on several
   * GPUs start together (a barrier).  NULL: none. */
  void (*before_launch)(void *arg);
  void *before_arg;
  /* seq only.  0: each group reads into one io_size buffer of its own and
   * checks every word of each call in the kernel, after the call (timed).
   * 1: each group reads into its place of a destination the file's size
   * (file offset = destination offset), nothing is checked in the kernel,
   * and a second kernel, untimed, checks every word the groups' full calls
   * read (verify_seconds).  The timed kernel is then the reads alone, as a
   * cudaMemcpy of the same bytes is. */
  int verify_after;
};

struct bench_read_result {
  double seconds;          /* the kernel, CUDA events */
  double gbps;             /* bytes / seconds / 1e9 */
  double mcalls_per_s;     /* full calls / seconds / 1e6 (M pages/s for rand) */
  uint64_t bytes;          /* bytes read in full and checked */
  uint64_t calls;          /* calls that returned the full size */
  uint64_t mismatches;     /* wrong 8-byte words among bytes */
  uint64_t first_bad;      /* file offset of the first wrong word, UINT64_MAX if none */
  uint64_t errors;         /* gopen/gread/gclose calls that failed or came short */
  int64_t first_error;     /* the first such call's result (-errno, or a short count) */
  uint64_t capped_groups;  /* groups that the cap stopped */
  uint64_t expected_bytes; /* what a full run reads */
  /* per group, mean microseconds in gopen, gread, the check of the bytes,
   * gclose; and from the first group's start: the last start, the last end */
  double open_us, read_us, check_us, close_us, start_skew_us, span_us;
  double verify_seconds;   /* verify_after: the check kernel, untimed (else 0) */
};

/* Run one read kernel.  Returns 0 when the kernel ran to its end: the
 * outcome is in *r (errors, mismatches, capped_groups, bytes short of
 * expected_bytes); -EINVAL for bad parameters; -EIO for a CUDA failure
 * (printed on stderr with file:line). */
int bench_gpufs_read(const struct bench_read_params *p, struct bench_read_result *r);

struct bench_write_params {
  const char *path;     /* the file to write, emptied first (truncate) or created
                           (O_CREAT|O_WRONLY); must not be open */
  uint64_t file_size;   /* bytes to write: a multiple of 8 */
  uint64_t seed;        /* the pattern src holds */
  const void *src;      /* device memory: the pattern's first file_size bytes
                           (bench_fill_device); block b gwrite()s from src + offset */
  int blocks;           /* grid; every block opens the file (block-level gopen) */
  int threads;          /* per block, a multiple of 32 */
  uint64_t io_size;     /* bytes per gwrite; a multiple of 8 */
  double cap_seconds;   /* a block issues no new gwrite after this long (<= 0: no cap) */
};

/* The outcome of a write run.  io is read as for bench_gpufs_read, with
 * bytes and calls counting gwrite()s that returned the full size, errors
 * counting failed or short gopen/gwrite/gfsync/gclose calls, and
 * mismatches / first_bad coming from the host's check of the file. */
struct bench_write_result {
  struct bench_read_result io;
  uint64_t file_bytes;    /* the file's size after the kernel (stat) */
  uint64_t checked_bytes; /* bytes of the file checked: every byte some gwrite wrote in full */
  double verify_seconds;  /* the host's check */
  int check_error;        /* 0, or -errno: the file could not be stat'ed or read back
                             (then mismatches counts only the ranges checked before) */
  int co_resident;        /* 1: the whole grid fits on the GPU at once, so each block's
                             gclose waited for every block's gopen (see workloads.cu) */
  double write_phase_s;   /* first block's start to the last block's last gwrite */
  double sync_phase_s;    /* from there to the last block's gfsync (write-back, fsync) */
};

/* Run the write kernel: the host empties path; block b gopen()s it with O_CREAT|O_WRONLY,
 * gwrite()s [b * stride, (b + 1) * stride) of it from src in io_size calls
 * (stride: whole io_size pieces, as the seq reads), gfsync()s and gclose()s
 * it.  The kernel (gopen to gclose, the host's fsync included) is timed.
 * Then, while libgpufs still runs, the host checks every word that the
 * blocks wrote, in the file as gfsync left it.  Returns 0 when the kernel
 * ran to its end (the outcome, the check's included, in *r); -EINVAL for
 * bad parameters; -ENOMEM; -EIO for a CUDA failure (printed on stderr with
 * file:line).  Does not remove the file. */
int bench_gpufs_write(const struct bench_write_params *p, struct bench_write_result *r);

#ifdef __cplusplus
}
#endif
#endif /* BENCH_WORKLOADS_H */
