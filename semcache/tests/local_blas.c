/*
 * local_blas.c - a module that brings its own BLAS and LAPACK, as numpy's
 * extension modules do (make test-semcache builds it as a shared object
 * linked with -llapack -lblas).  Loaded by dlopen.c with
 * dlopen(RTLD_LOCAL), its calls bind to the drop-in's entry points (first
 * in the global scope) while the BLAS it brought stays in its local
 * scope, where dlsym(RTLD_NEXT) does not look: the drop-in must find the
 * routines there (semcache/src/find.h).
 *
 * local_blas_run: sdot, ddot, dgemm and sgemm (CBLAS and Fortran), dgemv,
 * daxpy, dscal and dgesv_ (which runs dgetrf_ and dgetrs_), each checked
 * against plain loops; returns the number of wrong results, printing a
 * line for each.
 */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../semcache/src/fortran.h"

#define N 80

static int wrong;

/* got against want within tol relative to max(1, |want|) */
static void near(const char *what, double got, double want, double tol)
{
  if (fabs(got - want) > tol * fmax(1.0, fabs(want))) {
    printf("FAILED %s: %.17g, want %.17g\n", what, got, want);
    wrong++;
  }
}

static void check(const char *what, double got, double want)
{
  near(what, got, want, 1e-9);
}

static double val(int i, int seed)
{
  return (double)((i * 2654435761u + (unsigned)seed * 40503u) % 1000) / 250.0 - 2.0;
}

static void vectors(void)
{
  float fx[N], fy[N];
  double *x = malloc(N * sizeof(double)), *y = malloc(N * sizeof(double));
  double want = 0;
  for (int i = 0; i < N; i++) {
    x[i] = val(i, 1), y[i] = val(i, 2), fx[i] = (float)x[i], fy[i] = (float)y[i];
    want += x[i] * y[i];
  }
  const int n = N, one = 1;
  check("ddot_", ddot_(&n, x, &one, y, &one), want);
  check("cblas_ddot", cblas_ddot(N, x, 1, y, 1), want);
  near("sdot_", sdot_(&n, fx, &one, fy, &one), cblas_sdot(N, fx, 1, fy, 1), 1e-5);
  const double two = 2.0, half = 0.5;
  daxpy_(&n, &two, x, &one, y, &one); /* y = 2x + y */
  dscal_(&n, &half, y, &one);         /* y = x + y / 2 */
  for (int i = 0; i < N; i++) check("daxpy_ then dscal_", y[i], x[i] + val(i, 2) / 2);
  free(x);
  free(y);
}

/* C = A B (n x n), A's and B's elements from val(), against loops. */
static void products(void)
{
  double *a = malloc(N * N * sizeof(double)), *b = malloc(N * N * sizeof(double));
  double *c = malloc(N * N * sizeof(double)), *y = malloc(N * sizeof(double));
  float *fa = malloc(N * N * sizeof(float)), *fc = malloc(N * N * sizeof(float));
  for (int i = 0; i < N * N; i++) a[i] = val(i, 3), b[i] = val(i, 4), fa[i] = (float)a[i];
  const int n = N;
  const double one = 1.0, zero = 0.0;
  const float fone = 1.0f, fzero = 0.0f;
  dgemm_("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n);
  for (int j = 0; j < N; j += 7)
    for (int i = 0; i < N; i += 5) {
      double w = 0;
      for (int k = 0; k < N; k++) w += a[i + k * N] * b[k + j * N];
      check("dgemm_", c[i + j * N], w);
    }
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0, b, N, a, N, 0.0, c, N);
  check("cblas_dgemm", c[3 + 2 * N], cblas_ddot(N, b + 3, N, a + 2 * N, 1));
  sgemm_("N", "N", &n, &n, &n, &fone, fa, &n, fa, &n, &fzero, fc, &n);
  near("sgemm_", fc[5 + 6 * N], cblas_sdot(N, fa + 5, N, fa + 6 * N, 1), 1e-5);
  const int inc = 1;
  dgemv_("T", &n, &n, &one, a, &n, b, &inc, &zero, y, &inc);
  for (int i = 0; i < N; i += 9) check("dgemv_", y[i], cblas_ddot(N, a + i * N, 1, b, 1));
  free(a), free(b), free(c), free(y), free(fa), free(fc);
}

/* A x = b for a diagonally dominant A: dgesv_ against A x recomputed. */
static void solve(void)
{
  double *a = malloc(N * N * sizeof(double)), *lu = malloc(N * N * sizeof(double));
  double *b = malloc(N * sizeof(double)), *x = malloc(N * sizeof(double));
  int *ipiv = malloc(N * sizeof(int));
  for (int i = 0; i < N * N; i++) a[i] = lu[i] = val(i, 5) + (i % (N + 1) == 0 ? 4.0 * N : 0.0);
  for (int i = 0; i < N; i++) b[i] = x[i] = val(i, 6);
  const int n = N, one = 1;
  int info = -1;
  dgesv_(&n, &one, lu, &n, ipiv, x, &n, &info);
  check("dgesv_'s info", info, 0);
  for (int i = 0; i < N; i += 3) check("dgesv_: A x", cblas_ddot(N, a + i, N, x, 1), b[i]);
  free(a), free(lu), free(b), free(x), free(ipiv);
}

int local_blas_run(void)
{
  wrong = 0;
  vectors();
  products();
  solve();
  return wrong;
}
