/*
 * lud.h - Rodinia's LU decomposition in the rodinia-io suite.
 *
 * Input (raw little-endian):
 *   0 "matrix"  n x n float, row-major: a[i][j] = 2 u - 1 off the diagonal
 *               and a[i][i] = n + u, u = rio_rand01(seed, 0, i n + j); a
 *               strictly diagonally dominant matrix, so that LU without
 *               pivoting exists and is stable.
 * n = 8192 sqrt(scale), rounded down to a multiple of LUD_TILE and at least
 * LUD_MIN_N (256 MiB at scale 1; 256 at scale 1/1024).
 *
 * Output: the in-place LU without pivoting (L unit lower triangular below
 * the diagonal, U upper triangular on and above it), n x n float.
 *
 * Verification (the full check would be O(n^3)): entries of L U against
 * A, every entry for n <= LUD_CHECK_ALL_N, else every diagonal entry and
 * LUD_CHECK_PAIRS random ones (O(n) each, in double).  The diagonal sees
 * every element of the result once: (LU)(i,i) sums L[i][p] U[p][i] over
 * p <= i.  Tolerance: the backward-error bound of LU in float,
 * |LU - A|(i,j) <= gamma_n (|L||U|)(i,j), gamma_n = n u / (1 - n u),
 * u = 2^-24 (Higham, Accuracy and Stability of Numerical Algorithms,
 * Thm. 9.3).  It holds whatever the order of each entry's sum of products
 * (Lemma 8.4), so for the blocked GPU algorithm with FMAs too, and never
 * fails a correct result; at n = 8192, gamma_n = 4.9e-4, relative to
 * |L||U| ~ 1 + |A(i,j)| here.  reference() has nothing to do: the check
 * needs only A and the result.
 */
#ifndef RIO_LUD_H
#define RIO_LUD_H

#include <stdint.h>

#include "rodinia-io/harness/rio.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LUD_FULL_N 8192ull
#define LUD_TILE 64ull         /* the GPU algorithm's block (lud.cu) */
#define LUD_MIN_N 128ull       /* two tiles: every kernel of a step runs */
#define LUD_CHECK_ALL_N 256ull /* up to here verify checks every entry */
#define LUD_CHECK_PAIRS 2048ull

struct lud_state {
  uint64_t n;
  float *lu; /* the last run's result (n x n), written by lud_run */
};

/* n for a scale: LUD_FULL_N sqrt(scale) rounded down to a multiple of
 * LUD_TILE, at least LUD_MIN_N. */
uint64_t lud_dim(double scale);

/* The element (i, j) of the input matrix (what lud_generate writes). */
float lud_element(uint64_t seed, uint64_t n, uint64_t i, uint64_t j);

int lud_setup(struct rio_run *run);
int lud_generate(struct rio_run *run, int i, void *buf);
int lud_reference(struct rio_run *run);
/* lud.cu: the four versions */
int lud_run(struct rio_run *run, enum rio_version v);
int lud_verify(struct rio_run *run);
void lud_teardown(struct rio_run *run);

extern const struct rio_bench rio_bench_lud;

#ifdef __cplusplus
}
#endif
#endif /* RIO_LUD_H */
