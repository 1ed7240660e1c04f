/*
 * options.h - the rodinia-io driver's command line (options.c; plain C so
 * that the host tests check every refusal).
 */
#ifndef RIO_OPTIONS_H
#define RIO_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "rodinia-io/harness/rio.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RIO_MAX_BENCHES 16

struct rio_options {
  int nbenches;                        /* 0: every benchmark */
  char benches[RIO_MAX_BENCHES][32];
  int nversions;                       /* versions in table order */
  enum rio_version versions[RIO_NVERSIONS];
  double scale;                        /* 1: the paper's sizes */
  int reps;                            /* timed repetitions, median kept */
  uint64_t cache;                      /* bytes of GPU page cache; 0: the inputs + 64 MiB */
  uint64_t small_cache;                /* > 0: the gpufs versions again with this cache */
  int expert_threads;
  int device;
  enum rio_gen_mode gen;
  int list;                            /* --list: print the benchmarks and exit */
  char dir[256];                       /* data folder */
  char out[256];                       /* JSON rows appended here; "" none */
};

/* The usage text (for --help and errors). */
extern const char rio_usage[];

/* Parse argv over the defaults.  known: the benchmark names.  Returns 0, 1
 * for --help, or -EINVAL with err saying which argument is wrong. */
int rio_parse_options(int argc, char **argv, const char *const *known, int nknown,
                      struct rio_options *o, char *err, size_t errlen);

/* Before any long work: the data folder made and writable, the --out
 * file writable.  0 or -errno, err naming the path. */
int rio_check_files(const struct rio_options *o, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif /* RIO_OPTIONS_H */
