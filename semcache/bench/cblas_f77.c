/*
 * cblas_f77.c - libcblas_f77.so: a CBLAS layer that calls the Fortran
 * BLAS symbols, for the benchmark's NVBLAS configuration only.
 *
 * Why: NVBLAS intercepts the Fortran symbols (dgemm_, dgemm) and nothing
 * else, while the benchmark programs are C programs that call CBLAS.  With
 * OpenBLAS as the program's BLAS, cblas_dgemm runs OpenBLAS's kernels
 * directly and NVBLAS never sees the call.  A CBLAS layer that reaches the
 * Fortran routines through the dynamic linker (as netlib's CBLAS does) lets
 * LD_PRELOAD="libcblas_f77.so libnvblas.so" route cblas_dgemm to NVBLAS's
 * dgemm_, and everything NVBLAS does not serve to the BLAS below it
 * (OpenBLAS).  Neither program is changed or rebuilt for it.
 *
 * It covers the CBLAS calls the programs make: dgemm (both layouts), daxpy,
 * dscal, ddot.  Arguments are checked by the Fortran routines (parameter
 * numbers are theirs, not CBLAS's).
 */
#include <cblas.h>
#include <stddef.h>

void dgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
            const double *alpha, const double *a, const int *lda, const double *b, const int *ldb,
            const double *beta, double *c, const int *ldc);
void daxpy_(const int *n, const double *alpha, const double *x, const int *incx, double *y,
            const int *incy);
void dscal_(const int *n, const double *alpha, double *x, const int *incx);
double ddot_(const int *n, const double *x, const int *incx, const double *y, const int *incy);

static char f77_trans(CBLAS_TRANSPOSE t)
{
  return t == CblasNoTrans ? 'N' : t == CblasTrans ? 'T' : t == CblasConjTrans ? 'C' : '?';
}

void cblas_dgemm(CBLAS_LAYOUT layout, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, const CBLAS_INT m,
                 const CBLAS_INT n, const CBLAS_INT k, const double alpha, const double *a,
                 const CBLAS_INT lda, const double *b, const CBLAS_INT ldb, const double beta,
                 double *c, const CBLAS_INT ldc)
{
  const int im = (int)m, in = (int)n, ik = (int)k, ilda = (int)lda, ildb = (int)ldb,
            ildc = (int)ldc;
  char ca = f77_trans(ta), cb = f77_trans(tb);
  if (layout == CblasRowMajor) {
    /* row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T */
    dgemm_(&cb, &ca, &in, &im, &ik, &alpha, b, &ildb, a, &ilda, &beta, c, &ildc);
    return;
  }
  if (layout != CblasColMajor) ca = '?'; /* dgemm_ reports parameter 1 */
  dgemm_(&ca, &cb, &im, &in, &ik, &alpha, a, &ilda, b, &ildb, &beta, c, &ildc);
}

void cblas_daxpy(const CBLAS_INT n, const double alpha, const double *x, const CBLAS_INT incx,
                 double *y, const CBLAS_INT incy)
{
  const int in = (int)n, ix = (int)incx, iy = (int)incy;
  daxpy_(&in, &alpha, x, &ix, y, &iy);
}

void cblas_dscal(const CBLAS_INT n, const double alpha, double *x, const CBLAS_INT incx)
{
  const int in = (int)n, ix = (int)incx;
  dscal_(&in, &alpha, x, &ix);
}

double cblas_ddot(const CBLAS_INT n, const double *x, const CBLAS_INT incx, const double *y,
                  const CBLAS_INT incy)
{
  const int in = (int)n, ix = (int)incx, iy = (int)incy;
  return ddot_(&in, x, &ix, y, &iy);
}
