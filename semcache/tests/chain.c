/*
 * chain.c - an ordinary CBLAS program, for the drop-in check
 * (dropin_test.sh): chains of products that reuse their operands through
 * both entry points (cblas_dgemm, dgemm_), a CPU write between calls, a
 * row-major call, gemv/axpy/dot with strides, buffers freed and allocated
 * again; it prints every result's bytes as one checksum line, so a run
 * against the plain BLAS and one through libsemcache.so must print the
 * same.  With an argument "bad" it makes one call with a bad argument.
 */
#include <cblas.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dgemm_(const char *, const char *, const int *, const int *, const int *, const double *,
            const double *, const int *, const double *, const int *, const double *, double *,
            const int *);

static uint64_t sum(const double *p, size_t n)
{
  uint64_t h = 1469598103934665603ull, w;
  for (size_t i = 0; i < n; i++) {
    memcpy(&w, &p[i], 8);
    h = (h ^ w) * 1099511628211ull;
  }
  return h;
}

static double *mat(size_t n, unsigned seed)
{
  double *p = malloc(n * sizeof(double));
  for (size_t i = 0; i < n; i++) p[i] = (double)((i * 2654435761u + seed) % 1000) / 250.0 - 2.0;
  return p;
}

int main(int argc, char **argv)
{
  /* the protocol under test: every call on the device, whatever its size,
   * unless the caller chose crossovers (the drop-in reads the variable at
   * the first call) */
  setenv("SEMCACHE_CROSSOVER", "0", 0);
  const int n = 128, steps = 6;
  double *a = mat((size_t)n * n, 1), *b = mat((size_t)n * n, 2), *c = mat((size_t)n * n, 3);
  double *t = malloc(sizeof(double) * n * n);
  uint64_t h = 0;
  if (argc > 1 && strcmp(argv[1], "bad") == 0) {
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a, n - 1, b, n, 0.0, c, n);
    printf("returned\n");
    return 0;
  }
  for (int s = 0; s < steps; s++) {
    /* t = A B; c = 0.5 t A^T + c: A and B reused every step */
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a, n, b, n, 0.0, t, n);
    const char N = 'N', T = 'T';
    const double half = 0.5, one = 1.0;
    dgemm_(&N, &T, &n, &n, &n, &half, t, &n, a, &n, &one, c, &n);
    h ^= sum(c, (size_t)n * n) + (uint64_t)s;
    if (s == 3) b[5] += 1.0; /* the CPU changes B once */
  }
  /* row-major, rectangular */
  double *r = malloc(sizeof(double) * 64 * 96);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, 64, 96, n, 1.0, a, n, b, n, 0.0, r, 96);
  h ^= sum(r, 64 * 96) * 3;
  /* vectors with strides */
  double *x = mat(2 * n, 4), *y = mat(3 * n, 5);
  cblas_dgemv(CblasColMajor, CblasTrans, n, n, 1.0, c, n, x, 2, 0.5, y, 3);
  cblas_daxpy(n, -0.25, x, 2, y, 3);
  double d = cblas_ddot(n, x, 2, y, 3);
  h ^= sum(y, 3 * (size_t)n) * 5 + sum(&d, 1);
  /* a buffer freed and allocated again (often at the same address) */
  free(t);
  t = mat((size_t)n * n, 6);
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, t, n, b, n, 0.0, c, n);
  h ^= sum(c, (size_t)n * n) * 7;
  printf("checksum %016llx\n", (unsigned long long)h);
  free(a), free(b), free(c), free(t), free(r), free(x), free(y);
  return 0;
}
