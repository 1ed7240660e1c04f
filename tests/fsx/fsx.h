/*
 * fsx.h - the random exerciser of libgpufs (fsx-style): its options, its
 * report, and the one call that runs it (fsx_run, run.cu).  `make fsx`
 * runs build/tests/fsx (main.cu); tests/gpu/fsx_test.cu runs a short one.
 *
 * What a run does (README.md, "Random exerciser (make fsx)"): it starts
 * libgpufs with a small cache, makes `files` files of up to `file_size`
 * bytes under four names each, and until `ops` device calls are made runs
 * epochs of kernels (many groups, one group, descriptors held across
 * kernels, mappings across kernels) with CPU writes and truncations between
 * them, checking every byte a call returns against a shadow, and the host
 * files against it whenever the model says they must match.
 */
#ifndef GPUFS_TESTS_FSX_FSX_H
#define GPUFS_TESTS_FSX_FSX_H

#include <stdint.h>
#include <stdio.h>

#include "tests/fsx/model.cuh"

struct fsx_opts {
  uint64_t ops;           /* device calls to make, at least */
  uint64_t seed;          /* everything random derives from it */
  uint32_t files;         /* 1 .. FSX_MAX_FILES */
  uint32_t blocks;        /* grid of the many-group kernels, 256 threads a block */
  uint32_t ops_per_group; /* random calls of one group in one kernel */
  uint64_t file_size;     /* largest file size (the shadow's size) */
  uint32_t page_size;     /* libgpufs page size */
  uint64_t cache_size;    /* libgpufs cache: smaller than the files, so pages are evicted */
  uint32_t kernel_timeout_s; /* a kernel (or start / stop) running longer is a hang */
  const char *dir;        /* parent of the run's directory (NULL: /tmp) */
  int verbose;            /* 1: a line per epoch */
};

/* What a run did. */
struct fsx_report {
  uint64_t ops;                 /* device calls made */
  uint64_t by_kind[FSX_NKINDS]; /* the same, per enum fsx_kind */
  uint64_t kernels;
  uint64_t epochs[4];           /* shared, serial, held, mapping (fsx_run) */
  uint64_t cpu_writes, cpu_truncates;
  uint64_t file_checks;         /* host files compared with the shadow */
  double seconds;
  int failed;                   /* 0: no mismatch */
  char what[2048];              /* the first failure, for people */
};

#ifdef __cplusplus
extern "C" {
#endif

/* Defaults: 10 M calls, 4 files of up to 2 MiB, 12 blocks, 4 KiB pages,
 * a 4 MiB cache (half the data). */
void fsx_opts_default(struct fsx_opts *o);

/* The options against their rules, before any work: 0, or -EINVAL with err
 * naming the option and the rule it breaks. */
int fsx_opts_check(const struct fsx_opts *o, char *err, size_t errlen);

/* Name of a kind ("gread", ...). */
const char *fsx_kind_name(int kind);

/* Run the exerciser (starts and stops libgpufs itself).  Returns 0 when
 * every check passed; 1 on the first mismatch (r->what says which call);
 * 2 when it could not set up (no GPU, gpufs_start failed, files).  A kernel
 * (or gpufs_start / gpufs_stop) that runs past kernel_timeout_s is a hang:
 * the watchdog prints what each group was doing and ends the process with
 * status 3 (a hung kernel cannot be taken back). */
int fsx_run(const struct fsx_opts *o, struct fsx_report *r);

/* The counts, per kind, and the failure if any. */
void fsx_print_report(FILE *f, const struct fsx_report *r);

#ifdef __cplusplus
}
#endif

#endif /* GPUFS_TESTS_FSX_FSX_H */
