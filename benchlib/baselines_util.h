/*
 * baselines_util.h - what the baselines' files share (baselines.cu,
 * expert.cu): rates, failure notes, inputs.  Internal to benchlib.
 */
#ifndef BENCHLIB_BASELINES_UTIL_H
#define BENCHLIB_BASELINES_UTIL_H

#include <stdint.h>

#include "benchlib/baselines.h"

#define BENCH_MAX_REPS 5
#define BENCH_EXPERT_CHUNK BENCH_MIB
#define BENCH_EXPERT_BUFS 4
#define BENCH_EXPERT_THREADS 8

void bench_rate_init(struct bench_rate *out, uint64_t bytes);

/* Set out->note (why it failed) and return rc. */
int bench_fail(struct bench_rate *out, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The median of v[0..n) (sorts v). */
double bench_median(double *v, int n);

/* out's reps, median seconds and GB/s from seconds[0..reps). */
void bench_rate_set(struct bench_rate *out, double *seconds, int reps);

/* Open path for reading and make sure it holds at least bytes (a multiple
 * of 8).  The fd, or -errno with out->note set. */
int bench_open_input(const char *path, uint64_t bytes, struct bench_rate *out);

#endif /* BENCHLIB_BASELINES_UTIL_H */
