/*
 * options.h - the `collage` command line (the driver's only; the modules
 * take their parameters as arguments).
 */
#ifndef COLLAGE_OPTIONS_H
#define COLLAGE_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "samples/collage/collage.h"

#ifdef __cplusplus
extern "C" {
#endif

#define COLLAGE_MAX_SIZES 8

/* What main does: the benchmark over generated pictures, or one picture. */
enum collage_mode {
  COLLAGE_MODE_BENCH = 0, /* no picture given: every version on every size */
  COLLAGE_MODE_PICTURE = 1 /* collage IN OUT */
};

struct collage_options {
  enum collage_mode mode;
  char in[4096], out[4096];          /* the picture mode's files */
  char dir[4000];                    /* data folder: dataset, index, seeds */
  char seeds[4096];                  /* seed folder ("": <dir>/seeds) */
  uint64_t tiles;                    /* dataset size */
  uint32_t L, K, cap;                /* K 0: collage_default_k(tiles) */
  int nversions;
  enum collage_version versions[COLLAGE_NVERSIONS];
  int nsizes;
  int w[COLLAGE_MAX_SIZES], h[COLLAGE_MAX_SIZES];
  int reps;                          /* timed repetitions, the fastest kept */
  uint64_t cache;                    /* GPU page cache (0: the dataset + 64 MiB) */
  uint64_t small_cache;              /* 0: none; else a second run of the gpufs versions */
  double small_factor;               /* --small-cache NUMx: the dataset / NUM (0: not given so) */
  int threads;                       /* host threads (0: every core, at most 16) */
  int device;
  int fetch;                         /* fetch seed photographs when the folder has none */
  int rebuild;                       /* build the dataset and index anew */
  int reg;                           /* gpufs versions: gpufs_register the dataset (default) */
  char rows[4096];                   /* JSON rows file ("": none) */
  char collage_out[4096];            /* bench mode: the collage of one input as PNG ("": none) */
  int versions_given;                /* --versions was given (else each mode's default) */
};

extern const char collage_usage[];

/* Parse argv.  0: run; 1: --help was asked; -EINVAL: err says what is wrong. */
int collage_parse_options(int argc, char **argv, struct collage_options *o, char *err, size_t errlen);

/* Before any long work: IN readable, OUT and the --out, --collage-out
 * files writable, --seeds a folder where it exists.  0 or -errno, err
 * naming the file. */
int collage_check_files(const struct collage_options *o, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif /* COLLAGE_OPTIONS_H */
