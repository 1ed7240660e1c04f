/*
 * util.h - what both SemCache benchmark programs (chain.c, structdyn.c)
 * need beside their BLAS: a clock, page-aligned matrices, deterministic
 * fill values and the result summary they print.  Plain C; nothing here
 * knows about SemCache or a GPU.
 *
 * The summary of a result X is two numbers that two BLAS implementations
 * agree on within rounding, so a run can be checked against another
 * within a relative tolerance instead of bit for bit:
 *   norm   the Frobenius norm of X
 *   probe  sum of X[i] * w(i), w(i) = +-1 by a fixed pattern: catches a
 *          wrong entry that the norm hides, such as a sign.  Rounding
 *          errors of relative size e in the entries move it by about
 *          e * norm (random signs), so probes are compared against the
 *          norm: |probe_a - probe_b| <= tol * norm.
 */
#ifndef SEMCACHE_BENCH_UTIL_H
#define SEMCACHE_BENCH_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline double bench_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* count doubles on pages of their own (start page-aligned, size rounded
 * up to whole pages), as codes that align their arrays get them: two
 * matrices never share a page, so a CPU write to one never touches the
 * protection of another.  Exits on failure. */
static inline double *bench_matrix(size_t count)
{
  const size_t page = 4096;
  size_t bytes = (count * sizeof(double) + page - 1) / page * page;
  void *p = NULL;
  if (posix_memalign(&p, page, bytes ? bytes : page) != 0) {
    fprintf(stderr, "out of memory: %zu bytes\n", bytes);
    exit(2);
  }
  return p;
}

/* A value in [-1, 1) from an index and a seed (a multiplicative hash):
 * the same on every machine, cheap enough to fill 16k x 16k matrices. */
static inline double bench_value(uint64_t i, uint64_t seed)
{
  uint64_t h = (i + 1) * 0x9e3779b97f4a7c15ull ^ (seed * 0xbf58476d1ce4e5b9ull);
  h ^= h >> 31;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 29;
  return (double)(h >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

struct bench_summary {
  double norm, probe;
};

/* Accumulates x[0 .. count) into s (start from {0}; call bench_finish). */
static inline void bench_add(struct bench_summary *s, const double *x, size_t count)
{
  double sq = 0, pr = 0;
  for (size_t i = 0; i < count; i++) {
    sq += x[i] * x[i];
    pr += (i * 0x9e3779b1u >> 7) & 1 ? x[i] : -x[i];
  }
  s->norm += sq; /* the sum of squares until bench_finish */
  s->probe += pr;
}

static inline void bench_finish(struct bench_summary *s)
{
  s->norm = sqrt(s->norm);
}

#endif /* SEMCACHE_BENCH_UTIL_H */
