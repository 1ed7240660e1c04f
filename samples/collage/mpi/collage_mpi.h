/*
 * collage_mpi.h - `collage_mpi`, the LSH image collage as an MPI program
 * (issue 17, "Beyond one machine"): its command line and the rules that
 * place the work (plan.c), shared by the driver (main.c).
 *
 * Every rule here is a pure function of the rank's numbers, so that every
 * rank computes every other rank's share without asking (the driver still
 * sends the counts it gathers and scatters with).  docs/mpi.md explains
 * them to users.
 *
 * This folder is built only by `make mpi` (it needs mpi.h); `make all`
 * never compiles it.
 */
#ifndef COLLAGE_MPI_H
#define COLLAGE_MPI_H

#include <stddef.h>
#include <stdint.h>

#include "samples/collage/collage.h"
#include "samples/collage/options.h"

#ifdef __cplusplus
extern "C" {
#endif

#define COLLAGE_MPI_MIN_CACHE (1ull << 20)   /* a rank's GPU page cache at least (as collage --cache) */
#define COLLAGE_MPI_MAX_THREADS 16            /* default host threads a rank at most (as collage) */

/* The command line.  The options the collage shares are parsed by
 * collage_parse_options into o (its checks and messages); collage_mpi adds
 * --version and --size and refuses what only the benchmark has. */
struct collage_mpi_options {
  struct collage_options o;          /* tiles, dir, seeds, fetch, rebuild, L/K/cap, cache, threads */
  enum collage_version version;      /* the one version every rank runs (default gpufs-warp) */
  int have_size;                     /* 1: --size WxH, the generated input instead of IN */
  int w, h;                          /* --size */
  char in[4096], out[4096];          /* IN ("" with --size) and OUT */
};

extern const char collage_mpi_usage[];

/* Parse argv (every rank parses the same argv, so every rank reaches the
 * same verdict).  0: run; 1: --help; -EINVAL: err says what is wrong. */
int collage_mpi_parse_options(int argc, char **argv, struct collage_mpi_options *m, char *err, size_t errlen);

/* The split of a picture's bh block rows among n ranks, as even as
 * possible: rank r gets rows [*first, *first + *count); the first bh % n
 * ranks get one row more than the others; a rank past the rows (n > bh)
 * gets none.  Contiguous and in rank order, so the choices gather back in
 * picture order. */
void collage_mpi_rows(int bh, int r, int n, int *first, int *count);

/* A rank's GPU page cache: the cache of one GPU (`total`: --cache) divided
 * by the ranks that share that GPU, rounded down to whole pages.  0 when
 * that is less than COLLAGE_MPI_MIN_CACHE (the driver then stops with exit
 * status 2). */
uint64_t collage_mpi_cache_share(uint64_t total, int sharers, uint64_t page);

/* A rank's GPU page cache without --cache: the dataset + 64 MiB, for every
 * rank reads candidates from all of it, as long as the `sharers` ranks of
 * one GPU together take at most three quarters of its memory (`gpu_mem`
 * bytes; 0: unknown, no limit); otherwise their share of those three
 * quarters.  Whole pages; 0 as collage_mpi_cache_share. */
uint64_t collage_mpi_cache_default(uint64_t dataset, int sharers, uint64_t gpu_mem, uint64_t page);

/* A rank's host threads when --threads is not given: the CPUs the rank
 * may run on (its binding: `allowed`), at most the node's CPUs divided by
 * the ranks on the node (`online` / `nlocal`), at most
 * COLLAGE_MPI_MAX_THREADS, at least 1. */
int collage_mpi_threads(int allowed, int online, int nlocal);

/* The CPUs this process may run on (sched_getaffinity), and online. */
int collage_mpi_cpus_allowed(void);
int collage_mpi_cpus_online(void);

#ifdef __cplusplus
}
#endif

#endif /* COLLAGE_MPI_H */
