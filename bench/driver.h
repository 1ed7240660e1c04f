/*
 * driver.h - state shared by gpufs_bench's main (bench/main.cu: options,
 * data file, baselines) and its libgpufs runs (bench/driver.cu).
 */
#ifndef BENCH_DRIVER_H
#define BENCH_DRIVER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The pattern of the data file; a file from an earlier run is reused only
 * when its words match this seed. */
#define BENCH_SEED 0x6770756673ull /* "gpufs" */
/* The pattern the write workload and its baseline write.  The seeds differ
 * only in high bits and bench_word is a bijection of seed ^ index, so no word
 * of it appears anywhere in a BENCH_SEED file (under 2^59 bytes): bytes that
 * came from the data file never pass the check. */
#define BENCH_WRITE_SEED (BENCH_SEED ^ 0x7772697465000000ull) /* "write" */

struct bench_options {
  const char *out;  /* JSON lines file, or NULL */
  const char *dir;  /* data file folder */
  const char *only; /* comma-separated workload groups, or NULL: all */
  double size_gib;
  int quick;
  int threads;      /* expert_write's host threads; expert's too when threads_given */
  int threads_given; /* --threads given: expert at that count alone, not 4, 8 and 16 */
  double cap;       /* seconds a kernel may keep issuing calls */
  double budget;    /* seconds for all libgpufs runs together */
  int device;
  int gpus;         /* mgpu: the first N GPUs (0: all) */
};

struct bench_state {
  struct bench_options opt;
  char path[4096]; /* the data file */
  uint64_t size;   /* its bytes */
  uint64_t seed;
  int sms;
  double t_start;
  /* rates measured in this run, GB/s; NaN when not measured */
  double ceiling_gbps, naive_gbps, expert_gbps, d2d_gbps;
  int expert_threads;        /* the thread count of expert_gbps: the best one measured */
  double seq64_gbps;         /* seq, 64 KiB pages, default transfer path: big's baseline */
  double ra64_gbps;          /* ra, 64 KiB pages and calls, no readahead: ra's ra64K */
  double expert_write_gbps;  /* the write workload's baseline */
};

extern struct bench_state g_bench;

/* One line on stderr, prefixed with the seconds since the start. */
void bench_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

struct bench_row;
struct bench_read_result;
struct gpufs_stats;
/* One progress line for a read run's row: its rate and outcome, the
 * libgpufs counters st (the run's own) and where its time went. */
void bench_print_outcome(const char *what, const struct bench_row *row,
                         const struct bench_read_result *r, const struct gpufs_stats *st);

/* Exit (status 3, with a message naming step) unless the next bench_watch
 * call comes within seconds; seconds 0 disarms.  For hangs only: rows
 * already measured are in the --out file. */
void bench_watch(const char *step, double seconds);

/* Is workload group name (seq, seq_warp, rand, big, ra, write, cold,
 * or reg: the registered jobs of seq and rand) selected by --only?  Without
 * --only every group is, but cold under --quick (bench/plan.c). */
int bench_selected(const char *name);

/* Run the libgpufs workloads that --only selects, adding their rows. */
void bench_plan_run(void);

/* The files the write workload (suffix "") and its expert_write baseline
 * (suffix "_expert") create in --dir, and remove again, into buf. */
void bench_write_path(char *buf, int len, const char *suffix);

#ifdef __cplusplus
}
#endif
#endif /* BENCH_DRIVER_H */
