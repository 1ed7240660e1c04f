/*
 * routines.c - every routine SemCache serves, in both precisions, as an
 * ordinary program calls them (CBLAS, Fortran, LAPACKE), checked against
 * plain loops within a tolerance: gemm (transposes, gaps, row-major, a
 * chain reusing operands, alpha 0, a CPU write between calls), gemv, scal,
 * axpy and dot (negative strides), and gesv: a matrix copied into a work array
 * and solved three times (dgesv_ twice, LAPACKE_dgesv once: the memo's
 * case), a changed matrix, sgesv_ twice.  Run alone or under
 * libsemcache.so (semcache/tests/dropin_test.sh, tests/gpu/semcache_test.cu);
 * prints "routines: N checks ok" and exits 0, or a line per failure and
 * exits 1.  With "threads", four threads run it all at once; with
 * "bad-gesv", one dgesv_ call with a bad lda.
 */
#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the Fortran BLAS and LAPACK prototypes, as every library exports them
 * (declarations only: the program links the plain BLAS) */
#include "../../semcache/src/fortran.h"

static int checks, fails; /* relaxed atomics: threads count */

/* got against want (n values), |error| <= tol * max(1, max |want|) */
static void near(const char *what, const double *got, const double *want, size_t n, double tol)
{
  double scale = 1, err = 0;
  for (size_t i = 0; i < n; i++) scale = fmax(scale, fabs(want[i]));
  for (size_t i = 0; i < n; i++) err = fmax(err, fabs(got[i] - want[i]));
  __atomic_add_fetch(&checks, 1, __ATOMIC_RELAXED);
  if (!(err <= tol * scale)) {
    __atomic_add_fetch(&fails, 1, __ATOMIC_RELAXED);
    printf("FAILED %s: error %g, allowed %g\n", what, err, tol * scale);
  }
}

static void truth(const char *what, int ok)
{
  __atomic_add_fetch(&checks, 1, __ATOMIC_RELAXED);
  if (!ok) {
    __atomic_add_fetch(&fails, 1, __ATOMIC_RELAXED);
    printf("FAILED %s\n", what);
  }
}

static double val(size_t i, unsigned seed)
{
  return (double)((i * 2654435761u + seed * 40503u) % 1000) / 250.0 - 2.0;
}

/* ---- references, column-major, on doubles ---- */

static double at(const double *a, int lda, int tr, int i, int j) /* op(A)(i, j) */
{
  return tr ? a[j + (size_t)i * lda] : a[i + (size_t)j * lda];
}

static void ref_gemm(int ta, int tb, int m, int n, int k, double al, const double *a, int lda,
                     const double *b, int ldb, double be, double *c, int ldc)
{
  for (int j = 0; j < n; j++)
    for (int i = 0; i < m; i++) {
      double s = 0;
      for (int l = 0; l < k; l++) s += at(a, lda, ta, i, l) * at(b, ldb, tb, l, j);
      c[i + (size_t)j * ldc] = al * s + (be == 0 ? 0 : be * c[i + (size_t)j * ldc]);
    }
}

static size_t ix(int i, int n, int inc) /* BLAS's i-th element at stride inc */
{
  return inc > 0 ? (size_t)i * inc : (size_t)(n - 1 - i) * (size_t)(-inc);
}

static void ref_gemv(int tr, int m, int n, double al, const double *a, int lda, const double *x,
                     int incx, double be, double *y, int incy)
{
  const int ly = tr ? n : m, lx = tr ? m : n;
  for (int i = 0; i < ly; i++) {
    double s = 0;
    for (int l = 0; l < lx; l++) s += at(a, lda, tr, i, l) * x[ix(l, lx, incx)];
    y[ix(i, ly, incy)] = al * s + be * y[ix(i, ly, incy)];
  }
}

/* ---- one precision (T, P: d or s, tolerance) ---- */

#define SC_ROUTINES(T, P, TOL)                                                              \
  static T *P##mat(size_t n, unsigned seed)                                                 \
  {                                                                                         \
    T *p = malloc(n * sizeof(T));                                                           \
    for (size_t i = 0; i < n; i++) p[i] = (T)val(i, seed);                                  \
    return p;                                                                               \
  }                                                                                         \
  static double *P##wide(const T *p, size_t n)                                              \
  {                                                                                         \
    double *d = malloc(n * sizeof(double));                                                 \
    for (size_t i = 0; i < n; i++) d[i] = p[i];                                             \
    return d;                                                                               \
  }                                                                                         \
  static void P##near(const char *what, const T *got, const double *want, size_t n)         \
  {                                                                                         \
    double *g = P##wide(got, n);                                                            \
    near(what, g, want, n, TOL);                                                            \
    free(g);                                                                                \
  }                                                                                         \
  static void P##blas(void)                                                                 \
  {                                                                                         \
    const int m = 70, n = 50, k = 60, lda = 73, ldb = 64, ldc = 75;                        \
    T *a = P##mat((size_t)lda * k, 1), *b = P##mat((size_t)ldb * n, 2);                     \
    T *c = P##mat((size_t)ldc * n, 3), *at_ = P##mat((size_t)k * m, 4);                     \
    double *wa = P##wide(a, (size_t)lda * k), *wb = P##wide(b, (size_t)ldb * n);            \
    double *wc = P##wide(c, (size_t)ldc * n), *wat = P##wide(at_, (size_t)k * m);           \
    /* a chain reusing A and B: C = A B, then C = 0.5 A B + 0.25 C twice */                  \
    cblas_##P##gemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1, a, lda, b, ldb, 0, \
                    c, ldc);                                                                \
    ref_gemm(0, 0, m, n, k, 1, wa, lda, wb, ldb, 0, wc, ldc);                               \
    for (int r = 0; r < 2; r++) {                                                           \
      cblas_##P##gemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k, 0.5, a, lda, b,   \
                      ldb, 0.25, c, ldc);                                                   \
      ref_gemm(0, 0, m, n, k, 0.5, wa, lda, wb, ldb, 0.25, wc, ldc);                        \
    }                                                                                       \
    P##near(#P "gemm chain (gaps of ldc kept)", c, wc, (size_t)ldc * n);                    \
    cblas_##P##gemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k, 0, a, lda, b, ldb,  \
                    0.5, c, ldc);                                                           \
    ref_gemm(0, 0, m, n, k, 0, wa, lda, wb, ldb, 0.5, wc, ldc);                             \
    P##near(#P "gemm alpha 0: C = beta C", c, wc, (size_t)ldc * n);                         \
    a[3] += 1, wa[3] += 1; /* the CPU changes A: sent again */                              \
    const char N = 'N', Tr = 'T';                                                           \
    const T one = 1, zero = 0;                                                              \
    P##gemm_(&N, &N, &m, &n, &k, &one, a, &lda, b, &ldb, &zero, c, &ldc);                   \
    ref_gemm(0, 0, m, n, k, 1, wa, lda, wb, ldb, 0, wc, ldc);                               \
    P##near(#P "gemm_ after a CPU write", c, wc, (size_t)ldc * n);                          \
    P##gemm_(&Tr, &N, &m, &n, &k, &one, at_, &k, b, &ldb, &zero, c, &ldc);                  \
    ref_gemm(1, 0, m, n, k, 1, wat, k, wb, ldb, 0, wc, ldc);                                \
    P##near(#P "gemm_ T N", c, wc, (size_t)ldc * n);                                        \
    /* row-major m x n = (m x k) (n x k)^T: column-major C^T = B A^T */                     \
    T *r = P##mat((size_t)m * n, 5);                                                        \
    double *wr = P##wide(r, (size_t)m * n);                                                 \
    cblas_##P##gemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1, at_, k, b, ldb, 0, \
                    r, n);                                                                  \
    ref_gemm(1, 0, n, m, k, 1, wb, ldb, wat, k, 0, wr, n);                                  \
    P##near(#P "gemm row-major", r, wr, (size_t)m * n);                                     \
    /* gemv, axpy, scal, dot with strides */                                                \
    T *x = P##mat(3 * (size_t)m, 6), *y = P##mat(3 * (size_t)m, 7);                         \
    double *wx = P##wide(x, 3 * (size_t)m), *wy = P##wide(y, 3 * (size_t)m);                \
    cblas_##P##gemv(CblasColMajor, CblasNoTrans, m, k, 1.5, a, lda, x, 2, 0.5, y, -3);      \
    ref_gemv(0, m, k, 1.5, wa, lda, wx, 2, 0.5, wy, -3);                                    \
    P##near(#P "gemv N, incx 2, incy -3", y, wy, 3 * (size_t)m);                            \
    const int inc1 = 1, incm2 = -2;                                                         \
    const T half = 0.5;                                                                     \
    P##gemv_(&Tr, &m, &k, &one, a, &lda, y, &incm2, &half, x, &inc1);                       \
    ref_gemv(1, m, k, 1, wa, lda, wy, -2, 0.5, wx, 1);                                      \
    P##near(#P "gemv_ T, incx -2", x, wx, 3 * (size_t)m);                                   \
    cblas_##P##gemv(CblasRowMajor, CblasNoTrans, k, m, 1, at_, m, y, 1, 0, x, 2);           \
    ref_gemv(1, m, k, 1, wat, m, wy, 1, 0, wx, 2);                                          \
    P##near(#P "gemv row-major", x, wx, 3 * (size_t)m);                                     \
    cblas_##P##axpy(m, -0.75, x, -2, y, 3);                                                 \
    for (int i = 0; i < m; i++) wy[ix(i, m, 3)] += -0.75 * wx[ix(i, m, -2)];                \
    P##near(#P "axpy, incx -2, incy 3", y, wy, 3 * (size_t)m);                              \
    const T two = 2;                                                                        \
    P##axpy_(&m, &two, y, &inc1, x, &inc1);                                                 \
    for (int i = 0; i < m; i++) wx[i] += 2 * wy[i];                                         \
    P##near(#P "axpy_", x, wx, 3 * (size_t)m);                                              \
    cblas_##P##scal(m, -1.25, y, 3);                                                        \
    for (int i = 0; i < m; i++) wy[(size_t)i * 3] *= -1.25;                                 \
    P##near(#P "scal, inc 3", y, wy, 3 * (size_t)m);                                        \
    const int minus1 = -1;                                                                  \
    P##scal_(&m, &two, x, &minus1); /* incx <= 0: nothing, as the reference */             \
    P##scal_(&m, &two, x, &inc1);                                                           \
    for (int i = 0; i < m; i++) wx[i] *= 2;                                                 \
    P##near(#P "scal_ (and a negative incx leaving x)", x, wx, 3 * (size_t)m);              \
    double d1 = cblas_##P##dot(m, x, 2, y, -3), w1 = 0, w2 = 0;                             \
    for (int i = 0; i < m; i++) w1 += wx[ix(i, m, 2)] * wy[ix(i, m, -3)];                   \
    double d2 = P##dot_(&m, x, &inc1, y, &inc1);                                            \
    for (int i = 0; i < m; i++) w2 += wx[i] * wy[i];                                        \
    near(#P "dot, incx 2, incy -3", &d1, &w1, 1, (TOL) * m);                                \
    near(#P "dot_", &d2, &w2, 1, (TOL) * m);                                                \
    free(a), free(b), free(c), free(at_), free(r), free(x), free(y);                        \
    free(wa), free(wb), free(wc), free(wat), free(wr), free(wx), free(wy);                  \
  }                                                                                         \
  /* K x = f in a work array (gesv overwrites it), solve number s; 0 or info */            \
  static int P##solve(const T *k, int n, T *work, int *ipiv, T *x, int lapacke)             \
  {                                                                                         \
    int info = 0, one = 1;                                                                  \
    memcpy(work, k, sizeof(T) * n * n);                                                     \
    for (int i = 0; i < n; i++) x[i] = (T)val(i, 9);                                        \
    if (lapacke) info = LAPACKE_##P##gesv(LAPACK_COL_MAJOR, n, 1, work, n, ipiv, x, n);     \
    else P##gesv_(&n, &one, work, &n, ipiv, x, &n, &info);                                  \
    /* the residual |K x - f| against |K| |x| */                                            \
    double res = 0, kx = 0;                                                                 \
    for (int i = 0; i < n; i++) {                                                           \
      double s = 0, a = 0;                                                                  \
      for (int j = 0; j < n; j++) s += (double)k[i + (size_t)j * n] * x[j],                 \
                                   a += fabs((double)k[i + (size_t)j * n] * x[j]);          \
      res = fmax(res, fabs(s - val(i, 9)));                                                 \
      kx = fmax(kx, a);                                                                     \
    }                                                                                       \
    truth(#P "gesv: |K x - f| small", info == 0 && res <= (TOL) * 10 * kx);                 \
    return info;                                                                            \
  }                                                                                         \
  static void P##gesv(int lapacke_too, int same_bytes)                                      \
  {                                                                                         \
    const int n = 200;                                                                      \
    T *k = P##mat((size_t)n * n, 8), *w1 = malloc(sizeof(T) * n * n);                       \
    T *w2 = malloc(sizeof(T) * n * n), *x1 = malloc(sizeof(T) * n);                         \
    T *x2 = malloc(sizeof(T) * n);                                                          \
    int *p1 = malloc(sizeof(int) * n), *p2 = malloc(sizeof(int) * n);                       \
    for (int i = 0; i < n; i++) k[i + (size_t)i * n] += 4 * n; /* well conditioned */      \
    P##solve(k, n, w1, p1, x1, 0);                                                          \
    for (int s = 0; s < 1 + lapacke_too; s++) {                                             \
      P##solve(k, n, w2, p2, x2, s);                                                        \
      if (same_bytes) {                                                                     \
        truth(#P "gesv again: the same LU in A", !memcmp(w1, w2, sizeof(T) * n * n));       \
        truth(#P "gesv again: the same pivots", !memcmp(p1, p2, sizeof(int) * n));          \
        truth(#P "gesv again: the same x", !memcmp(x1, x2, sizeof(T) * n));                 \
      }                                                                                     \
    }                                                                                       \
    k[7] += 1; /* a changed matrix: factored anew */                                        \
    P##solve(k, n, w2, p2, x2, 0);                                                          \
    truth(#P "gesv of a changed K: another LU", memcmp(w1, w2, sizeof(T) * n * n) != 0);    \
    free(k), free(w1), free(w2), free(x1), free(x2), free(p1), free(p2);                    \
  }

SC_ROUTINES(double, d, 1e-10)
SC_ROUTINES(float, s, 2e-4)

static int same_bytes;

static void *all(void *arg)
{
  (void)arg;
  dblas();
  sblas();
  dgesv(1, same_bytes); /* dgesv_, dgesv_, LAPACKE_dgesv, then a changed K */
  sgesv(0, same_bytes); /* sgesv_ twice, then a changed K */
  return NULL;
}

int main(int argc, char **argv)
{
  /* the protocol under test: every call on the device, whatever its size,
   * unless the caller chose crossovers (the drop-in reads the variable at
   * the first call) */
  setenv("SEMCACHE_CROSSOVER", "0", 0);
  if (argc > 1 && strcmp(argv[1], "bad-gesv") == 0) {
    int n = 4, one = 1, lda = 3, info = 0, ipiv[4];
    double a[16] = {0}, b[4] = {0};
    dgesv_(&n, &one, a, &lda, ipiv, b, &n, &info);
    printf("returned info %d\n", info);
    return 0;
  }
  /* a device whose factorization may differ run to run: only the residual */
  const char *cache = getenv("SEMCACHE_CACHE");
  same_bytes = !(cache && strcmp(cache, "off") == 0);
  if (argc > 1 && strcmp(argv[1], "threads") == 0) {
    pthread_t t[4];
    for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, all, NULL);
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
  } else {
    all(NULL);
  }
  if (fails) return 1;
  printf("routines: %d checks ok\n", checks);
  return 0;
}
