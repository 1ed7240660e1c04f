/*
 * plan.h - gpufs_bench's plan: the libgpufs runs, in order, each one
 * gpufs_start / gpufs_stop of bench/driver.cu.
 * Plain C; callable from .c and .cu files.
 */
#ifndef BENCH_PLAN_H
#define BENCH_PLAN_H

#include <stdint.h>

#include "bench/workloads.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most jobs a plan holds (a full plan has 39). */
#define BENCH_MAX_JOBS 64
/* bench_job.ra: keep libgpufs's readahead_max (its default, or
 * GPUFS_READAHEAD_MAX from the environment). */
#define BENCH_RA_DEFAULT UINT32_MAX

struct bench_job {
  const char *group;    /* its --only name */
  const char *workload; /* its rows' name */
  enum bench_access access;
  uint32_t page;
  uint64_t cache;
  uint64_t io;
  int blocks;
  uint64_t rand_reads;
  int hit;     /* read everything again with the cache warm: a "hit" row */
  uint32_t ra; /* readahead_max in bytes (0: off), or BENCH_RA_DEFAULT */
  int reg;     /* gpufs_register the data file after gpufs_start, before the
                  kernel (untimed; its time is the rows' register_s), and
                  gpufs_unregister it after: a "/reg" row (bench/registered.h) */
  int64_t write_behind; /* write_behind in bytes (0: off), or -1: libgpufs's
                           default; a "/nobehind" row */
  int async;   /* readahead_async (1: posted windows), or -1: libgpufs's
                  default; a "/posted" row */
  uint32_t passes; /* 0: one pass; n > 1: the reads n times in one instance,
                      a row each named pass_names[0..n-1] (pass_names[0]
                      is workload): a "/pass" row */
  const char *const *pass_names;
  uint64_t pin_budget; /* register_max (the pin budget) in bytes, or 0:
                          libgpufs's default; a "/4xbudget" row */
  int cold;    /* drop the data file from the host page cache after
                  gpufs_start, before the kernel (and the registration):
                  a "/cold" row (bench/cold.h) */
};

/* Fill jobs (room for BENCH_MAX_JOBS) with every job of this run's options
 * (--quick), selected or not, in the order they run; returns how many. */
int bench_plan(struct bench_job *jobs);

/* The kernels job j runs (its budget share): 1, the hit runs, the passes. */
int bench_job_kernels(const struct bench_job *j);

/* Does --only select job j: its group, or "reg" for a registered job
 * (the cold group's excepted)? */
int bench_job_selected(const struct bench_job *j);

#ifdef __cplusplus
}
#endif
#endif /* BENCH_PLAN_H */
