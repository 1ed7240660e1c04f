/*
 * driver.h - running one rodinia-io benchmark through its versions
 * (driver.cu): what the rodinia program and the GPU tests call.
 */
#ifndef RIO_DRIVER_H
#define RIO_DRIVER_H

#include "include/gpufs.cuh"
#include "rodinia-io/harness/options.h"
#include "rodinia-io/harness/rio.h"

/* One version of one benchmark. */
struct rio_result {
  enum rio_version v;
  int ran;              /* the version was asked for */
  int ok;               /* every repetition ran and was verified */
  double e2e_s;         /* median end to end */
  double e2e_min_s;     /* the fastest and slowest repetition */
  double e2e_max_s;
  double io_s;          /* median I/O phase, or the I/O-only pass when overlapped */
  double io_gbps;       /* input bytes / io_s */
  int overlapped;       /* I/O and compute overlap in the run */
  uint64_t cache;       /* the page cache given (0: the inputs + 64 MiB) */
  int has_stats;        /* st holds the last gpufs repetition's counters */
  struct gpufs_stats st;
  char why[256];        /* why it failed */
};

struct rio_bench_result {
  const struct rio_bench *bench;
  uint64_t input_bytes;
  double ref_s;         /* the CPU reference's time */
  int setup_failed;     /* setup, inputs or reference failed: why */
  int failures;         /* versions that failed */
  char why[256];
  struct rio_result r[RIO_NVERSIONS];
  struct rio_result small[RIO_NVERSIONS]; /* gpufs versions under o->small_cache */
};

/* Run b with the options o (benchmarks in o are ignored): 0 when every
 * version asked for ran and was verified; -EBADMSG when one failed (its
 * why says how); another -errno when the inputs or the reference failed
 * (out->why).  verbose: progress lines on stderr. */
int rio_run_bench(const struct rio_bench *b, const struct rio_options *o, struct rio_bench_result *out,
                  int verbose);

#endif /* RIO_DRIVER_H */
