/*
 * rio_mpi.h - `rodinia_mpi`, rodinia-io benchmarks as MPI programs (issue
 * 17, "Beyond one machine"): 2dconv, gesummv and pathfinder, each split
 * over the ranks, every rank reading its part of the same input files.
 *
 * What is here needs neither MPI nor CUDA (plan.c, cpu.c), so the host
 * tests check it: the command line, how each benchmark's work is cut into
 * units and the units among the ranks, what a rank reads, its GPU page
 * cache, and the cpu version of a part.  gpu.cu runs the gpufs versions of
 * a part (CUDA); main.c is the MPI driver.  docs/mpi.md explains the rules
 * to users.
 *
 * This folder is built only by `make mpi` (main.c needs mpi.h); `make all`
 * never compiles main.c.
 */
#ifndef RIO_MPI_H
#define RIO_MPI_H

#include <stddef.h>
#include <stdint.h>

#include "rodinia-io/harness/rio.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Exit statuses, the same on every rank (the driver agrees on the highest). */
enum rio_mpi_status {
  RIO_MPI_DONE = 0,       /* every run verified and identical to the single-process result */
  RIO_MPI_FAILED = 1,     /* a run failed, differs, or an input file is bad */
  RIO_MPI_BAD_CONFIG = 2  /* bad options, more ranks than units, no GPU for a gpufs version */
};

/* The versions: cpu (no GPU, no CUDA call) and the harness's gpufs ones. */
enum rio_mpi_version { RIO_MPI_CPU = 0, RIO_MPI_GPUFS_4K = 1, RIO_MPI_GPUFS_64K = 2, RIO_MPI_NVERSIONS = 3 };

/* The benchmarks, in table order. */
enum rio_mpi_bench { RIO_MPI_2DCONV = 0, RIO_MPI_GESUMMV = 1, RIO_MPI_PATHFINDER = 2, RIO_MPI_NBENCHES = 3 };

const char *rio_mpi_version_name(enum rio_mpi_version v);
/* The harness's version of a gpufs one (RIO_GPUFS_4K / RIO_GPUFS_64K). */
enum rio_version rio_mpi_harness_version(enum rio_mpi_version v);
const char *rio_mpi_bench_name(enum rio_mpi_bench b);

struct rio_mpi_options {
  int nbenches;                                   /* 0 given: every benchmark */
  enum rio_mpi_bench benches[RIO_MPI_NBENCHES];
  int nversions;
  enum rio_mpi_version versions[RIO_MPI_NVERSIONS];
  double scale;
  int reps;
  uint64_t cache;            /* --cache: the page cache of ONE GPU, shared by its ranks; 0: each rank its part + 64 MiB */
  int single;                /* 1: rank 0 also runs the single-process gpufs version to compare (default) */
  int list;
  enum rio_gen_mode gen;
  char dir[256];
  char out[256];
};

extern const char rio_mpi_usage[];

/* Parse argv (every rank parses the same argv and reaches the same
 * verdict).  0: run; 1: --help; -EINVAL: err says what is wrong. */
int rio_mpi_parse_options(int argc, char **argv, struct rio_mpi_options *o, char *err, size_t errlen);

/*
 * How a benchmark is cut.  The ranks share `units`, contiguous and in rank
 * order (rio_mpi_units); a unit is
 *   2dconv      a band of CONV2D_BAND (16) rows of b: a rank reads its rows
 *               of a and one halo row above and below
 *   gesummv     a row of y: a rank reads those rows of A and B, and all of x
 *   pathfinder  a column of the last row: the DP runs down the rows, so the
 *               columns are split; a rank reads every row's window of its
 *               columns widened by rows - 1 each side (pathfinder_window),
 *               which makes its columns exact without any exchange
 * unit_bytes: a unit's bytes of the result (what rank 0 gathers).
 */
struct rio_mpi_split {
  uint64_t units;
  uint64_t unit_bytes;
};

/* The split of b for the sizes setup gave run. */
struct rio_mpi_split rio_mpi_split_of(enum rio_mpi_bench b, const struct rio_run *run);

/* Rank r of n: units [*u0, *u1), as even as possible (the first units % n
 * ranks one more), contiguous, in rank order; empty past the units. */
void rio_mpi_units(uint64_t units, int r, int n, uint64_t *u0, uint64_t *u1);

/* RIO_MPI_DONE, or RIO_MPI_BAD_CONFIG with err saying why: n ranks for
 * the split's units (every rank must get one). */
enum rio_mpi_status rio_mpi_check_ranks(enum rio_mpi_bench b, const struct rio_mpi_split *sp, int n, char *err,
                                        size_t errlen);

/* Bytes of the input files that units [u0, u1) read (halos and windows
 * included). */
uint64_t rio_mpi_part_bytes(enum rio_mpi_bench b, const struct rio_run *run, uint64_t u0, uint64_t u1);

/* A rank's GPU page cache, whole pages: --cache divided by the ranks that
 * share its GPU, or (cache 0) its part's bytes + 64 MiB.  0 when under
 * RIO_MPI_MIN_CACHE (the driver stops with RIO_MPI_BAD_CONFIG). */
#define RIO_MPI_MIN_CACHE (1ull << 20)
uint64_t rio_mpi_cache(uint64_t cache, int sharers, uint64_t part_bytes, uint64_t page);

/* The whole result in the benchmark's state (where rank 0 gathers and
 * verify looks), the reference's, and their bytes. */
void *rio_mpi_result(enum rio_mpi_bench b, const struct rio_run *run);
const void *rio_mpi_reference(enum rio_mpi_bench b, const struct rio_run *run);
uint64_t rio_mpi_result_bytes(enum rio_mpi_bench b, const struct rio_run *run);

/* cpu.c: the cpu version of units [u0, u1) of b: pread their part of the
 * input files (run->in[i].path), compute it with the benchmark's own CPU
 * code on the host's threads, the result into out (unit_bytes a unit).
 * The floats are the reference's, bit for bit.  0 or -errno (run->why). */
int rio_mpi_cpu_part(enum rio_mpi_bench b, struct rio_run *run, uint64_t u0, uint64_t u1, void *out);

/* cpu.c: nrows rows of width bytes from a file of rows of row_bytes, the
 * first at row first_row, skip bytes into each row, into dst one after
 * the other.  0 or -errno. */
int rio_mpi_read_rows(const char *path, uint64_t row_bytes, uint64_t first_row, uint64_t nrows, uint64_t skip,
                      uint64_t width, void *dst);

#ifdef __cplusplus
}
#endif
#endif /* RIO_MPI_H */
