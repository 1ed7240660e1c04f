/*
 * run.h - the state of one run of the exerciser, shared by run.cu (set-up,
 * the loop of epochs, kernels, checks, the report) and epochs.cu (what each
 * epoch launches and checks).  Host code only.
 */
#ifndef GPUFS_TESTS_FSX_RUN_H
#define GPUFS_TESTS_FSX_RUN_H

#include <vector>

#include "tests/fsx/fsx.h"

/* Device memory of the run, allocated once. */
struct fsx_dev {
  char *paths;
  uint64_t *ino;
  uint8_t *block_warp;
  uint32_t *own_start, *own;
  struct fsx_piece *pieces;
  uint8_t *shadow;
  int64_t *size0, *size_out;
  unsigned long long *intent, *committed;
  struct fsx_held *held;
  uint8_t *bufs;
  unsigned long long *counts;
  struct fsx_fail *fail;
  unsigned int *failed;
  struct fsx_progress *progress; /* pinned, mapped host memory */
  struct fsx_step *steps;
  int64_t *res, *bad, *fds;
  uint8_t **ptrs;
};

#define FSX_STEPS_MAX 64

struct fsx_state {
  struct fsx_opts o;
  struct fsx_report *r;
  char dir[200];
  char paths[FSX_MAX_FILES][FSX_NAMES][FSX_PATH];
  uint64_t ino[FSX_MAX_FILES];
  std::vector<uint8_t> shadow;     /* [files][arena]: what each file holds */
  int64_t size[FSX_MAX_FILES];     /* and its size */
  uint64_t rng;                    /* the host's decisions */
  uint32_t kernel;                 /* kernels launched so far */
  uint32_t slots;                  /* blocks * FSX_WARPS */
  std::vector<struct fsx_piece> pieces; /* the last random kernel's plan, */
  uint32_t plan_kernel;                 /* for reports of a file mismatch */
  bool gpufs_up;
  struct fsx_dev d;
};

/* ---- run.cu ---- */

/* Fail the run: r->what = the message (printf-style); returns 1. */
int fsx_failf(struct fsx_state *st, const char *fmt, ...);
/* Copy the shadow and sizes to the device / back. */
int fsx_upload(struct fsx_state *st);
int fsx_download_shadow(struct fsx_state *st);
/* Wait for the kernel just launched (watchdog armed); 0 or fsx_failf. */
int fsx_wait(struct fsx_state *st, cudaError_t launch, const char *what);
/* Run a random-program kernel in `mode` (its plan made here), add its
 * calls to the report, take its shadow and sizes; 0, or 1 on a failure. */
int fsx_random_kernel(struct fsx_state *st, int mode);
/* Run script steps[0, n) by one group; res/bad into the given host
 * arrays; 0, or 1 when CUDA failed. */
int fsx_script_run(struct fsx_state *st, const struct fsx_step *steps, int n, int64_t *res, int64_t *bad,
                   const char *what);
/* Every host file against the shadow; 0, or 1 with the first mismatch. */
int fsx_check_files(struct fsx_state *st, const char *when);

/* ---- epochs.cu ---- */

/* Many groups, own descriptors; ends with every descriptor closed. */
int fsx_epoch_shared(struct fsx_state *st);
/* One group with truncations; ends with every descriptor closed. */
int fsx_epoch_serial(struct fsx_state *st);
/* Descriptors held across kernels, gfsync through another name, then
 * closes (final: gpufs_stop instead, with the files still open). */
int fsx_epoch_held(struct fsx_state *st, bool final);
/* A mapping kept across kernels: read-only with a CPU write under it, or
 * writable with its descriptor closed before gmunmap. */
int fsx_epoch_map(struct fsx_state *st);
/* CPU writes and truncations, every descriptor closed, 20 ms after the
 * last GPU close. */
int fsx_cpu_round(struct fsx_state *st);

#endif /* GPUFS_TESTS_FSX_RUN_H */
