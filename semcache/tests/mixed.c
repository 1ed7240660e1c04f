/*
 * mixed.c - calls on both sides of the crossover on the same matrices
 * (semcache/tests/dropin_test.sh, run with SEMCACHE_CROSSOVER=gemm=64): a
 * 96 x 96 dgemm goes to the device and leaves C there (write-back:
 * MODIFIED), then small calls on parts of C and B run on the host BLAS and
 * must see C's newest bytes, and a small write into B must reach the next
 * large call.  Prints a checksum of everything the calls produced: the
 * same as the BLAS alone gives.
 */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>

#define N 96

static double *mat(int seed)
{
  double *m = malloc(sizeof(double) * N * N);
  for (int i = 0; i < N * N; i++) m[i] = (double)((i * 7 + seed * 13) % 17) / 8.0 - 1.0;
  return m;
}

int main(void)
{
  double *a = mat(1), *b = mat(2), *c = mat(3), *d = mat(4);
  double v[N], w[N], sum = 0;
  for (int i = 0; i < N; i++) v[i] = 1.0 / (i + 1), w[i] = 0;
  for (int step = 0; step < 3; step++) {
    /* large: C = A B (the device; C MODIFIED there under write-back) */
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0, a, N, b, N, 0.0, c, N);
    /* small, on part of C: w = C(0:8, 0:8) v (the host: C comes back) */
    cblas_dgemv(CblasColMajor, CblasNoTrans, 8, 8, 1.0, c, N, v, 1, 0.0, w, 1);
    /* small, into a column of B, which the device holds: the next large
     * call must send B again */
    cblas_daxpy(N, 0.5, w, 1, b + (size_t)N * step, 1);
    sum += cblas_ddot(8, w, 1, v, 1);
    /* large: D = C A (C and A as the device has them) */
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0, c, N, a, N, 0.0, d, N);
  }
  for (int i = 0; i < N * N; i++) sum += d[i] * (1 + i % 5) + b[i] - c[i];
  printf("%.12e\n", sum);
  free(a);
  free(b);
  free(c);
  free(d);
  return 0;
}
