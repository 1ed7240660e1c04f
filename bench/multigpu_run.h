/*
 * multigpu_run.h - what the mgpu workload's parts share (bench/multigpu.cu:
 * the rows; bench/multigpu_run.cu: running one thing on every GPU at once):
 * the run's state, a thread per GPU started together, one libgpufs read
 * per GPU, the instances' start, the rows' common fields.
 */
#ifndef BENCH_MULTIGPU_RUN_H
#define BENCH_MULTIGPU_RUN_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "benchlib/report.h"
#include "bench/workloads.h"
#include "include/gpufs.cuh"

#define MG_MAX ((int)GPUFS_MAX_INSTANCES)

struct mg_state {
  int n;                        /* GPUs in use */
  char paths[MG_MAX][4096];     /* GPU k's own file */
  uint64_t seeds[MG_MAX];
  double ceiling_sum, experts;  /* baselines of this run, GB/s (NaN: none) */
  double rand_alone;            /* M pages/s of GPU 0 alone */
  double seq_one;               /* GB/s of the scaling runs' one GPU */
  pthread_barrier_t bar;        /* mg_parallel's threads */
};

extern struct mg_state g_mg;

/* Wait at g_mg.bar: bench_read_params.before_launch (arg &g_mg.bar); and
 * the same as an expert pass hook.  Every thread of mg_parallel calls it
 * the same number of times. */
void mg_wait(void *arg);
int mg_wait_pass(void *arg, char *note, int len);

/* Run fn(&args[k]) on one thread per GPU k < n, g_mg.bar set for n. */
void mg_parallel(int n, void *(*fn)(void *), void *args, size_t arg_size);

/* A row of the mgpu group (field gpus), and its progress line. */
void mg_row(const char *name, const char *config, double v, const char *unit, const char *base,
            double base_v, int ok, const char *note);

/* One libgpufs read on one GPU (mg_read_main, on that GPU's thread). */
struct mg_read {
  int gpu, instance;
  const char *path;
  uint64_t seed;
  enum bench_access access;
  uint64_t io, rand_reads;
  int use_barrier;              /* wait at g_mg.bar right before the kernel */
  int rc;
  struct bench_read_result r;
};

void *mg_read_main(void *a);

/* Whether one read came out whole and right; its outcome appended to note. */
int mg_read_ok(const struct mg_read *m, char *note, size_t len);

/* Start one instance per GPU (0..n-1); workers 0: the default.  0, or
 * the error with note. */
int mg_start(int n, uint32_t page, uint64_t cache, uint32_t workers, char *note, size_t len);
/* The daemon workers libgpufs's default gives n instances. */
uint32_t mg_default_workers(int n);

/* Fill m[k] for GPU k reading its own file (own) or the data file. */
void mg_reads(struct mg_read *m, int n, int own, enum bench_access access, uint64_t io,
              uint64_t rand_reads);

/* The fields every mgpu libgpufs row carries, from the instances' counters. */
void mg_stats_fields(struct bench_row *row, const struct gpufs_stats *all, double seconds,
                     uint32_t workers, uint64_t file_bytes);

#endif /* BENCH_MULTIGPU_RUN_H */
