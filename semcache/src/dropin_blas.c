/*
 * dropin_blas.c - libsemcache.so's entry points: CBLAS and Fortran gemm,
 * gemv, axpy, scal and dot in double and single precision, and LAPACK's
 * gesv (dgesv_, sgesv_: LAPACKE_dgesv and a Fortran program reach them
 * through the LAPACK library, so interposing these covers both).  Each
 * runs through the process's cache (dropin.c), or, where the cache did not
 * start, is the program's own routine.  A row-major CBLAS call runs as the
 * column-major transposed problem, its parameter numbers mapped back.
 * A call with a bad argument goes to the program's own routine with the
 * arguments it came with (SC_BAD_ARGS), so it is reported, and the program
 * ended or not, exactly as without the drop-in.
 * One macro per routine writes both precisions (P: d or s, T: its type).
 */
#include <cblas.h>

#include "dropin.h"
#include "fortran.h"

static char tch(CBLAS_TRANSPOSE t)
{
  return t == CblasNoTrans ? 'N' : t == CblasTrans ? 'T' : t == CblasConjTrans ? 'C' : '?';
}

/* ---- gemm ---- */

#define SC_GEMM(P, T, PREC, NAME)                                                          \
  void cblas_##P##gemm(CBLAS_LAYOUT layout, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb,        \
                       const CBLAS_INT m, const CBLAS_INT n, const CBLAS_INT k,            \
                       const T alpha, const T *a, const CBLAS_INT lda, const T *b,         \
                       const CBLAS_INT ldb, const T beta, T *c, const CBLAS_INT ldc)       \
  {                                                                                        \
    if (SC_PASS()) {                                                                        \
      SC_NEXT(cblas_##P##gemm)(layout, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c,    \
                               ldc);                                                       \
      return;                                                                              \
    }                                                                                      \
    int r = 0, at = 1; /* the bad parameter's number, if r > 0 */                          \
    if (layout == CblasColMajor) {                                                         \
      r = sc_gemm(&sc_g_blas, PREC, tch(ta), tch(tb), m, n, k, SC_WIDEN(alpha), a, lda, b, \
                  ldb, SC_WIDEN(beta), c, ldc);                                            \
      at = r + 1;                                                                          \
    } else if (layout == CblasRowMajor) {                                                  \
      /* C^T = op(B)^T op(A)^T, column-major: the operands swap */                         \
      static const int pos[14] = {0, 3, 2, 5, 4, 6, 0, 0, 11, 0, 9, 0, 0, 14};             \
      r = sc_gemm(&sc_g_blas, PREC, tch(tb), tch(ta), n, m, k, SC_WIDEN(alpha), b, ldb, a, \
                  lda, SC_WIDEN(beta), c, ldc);                                            \
      at = r > 0 && r < 14 ? pos[r] : r + 1;                                               \
    }                                                                                      \
    if (r > 0 || (layout != CblasColMajor && layout != CblasRowMajor))                     \
      SC_BAD_ARGS(cblas_##P##gemm, sc_cblas_error(at, "cblas_" #P "gemm"), layout, ta, tb, \
                  m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);                           \
  }                                                                                        \
  void P##gemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,  \
                const T *alpha, const T *a, const int *lda, const T *b, const int *ldb,    \
                const T *beta, T *c, const int *ldc)                                       \
  {                                                                                        \
    if (SC_PASS()) {                                                                        \
      SC_NEXT(P##gemm_)(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);            \
      return;                                                                              \
    }                                                                                      \
    int r = sc_gemm(&sc_g_blas, PREC, *ta, *tb, *m, *n, *k, SC_WIDEN(*alpha), a, *lda, b,  \
                    *ldb, SC_WIDEN(*beta), c, *ldc);                                       \
    if (r > 0)                                                                             \
      SC_BAD_ARGS(P##gemm_, sc_fortran_error(NAME, r), ta, tb, m, n, k, alpha, a, lda, b,  \
                  ldb, beta, c, ldc);                                                      \
  }

SC_GEMM(d, double, SC_F64, "DGEMM ")
SC_GEMM(s, float, SC_F32, "SGEMM ")

/* ---- gemv ---- */

#define SC_GEMV(P, T, PREC, NAME)                                                          \
  void cblas_##P##gemv(CBLAS_LAYOUT layout, CBLAS_TRANSPOSE t, const CBLAS_INT m,          \
                       const CBLAS_INT n, const T alpha, const T *a, const CBLAS_INT lda,  \
                       const T *x, const CBLAS_INT incx, const T beta, T *y,               \
                       const CBLAS_INT incy)                                               \
  {                                                                                        \
    if (SC_PASS()) {                                                                        \
      SC_NEXT(cblas_##P##gemv)(layout, t, m, n, alpha, a, lda, x, incx, beta, y, incy);    \
      return;                                                                              \
    }                                                                                      \
    int r = 0, at = 1; /* the bad parameter's number, if r > 0 */                          \
    if (layout == CblasColMajor) {                                                         \
      r = sc_gemv(&sc_g_blas, PREC, tch(t), m, n, SC_WIDEN(alpha), a, lda, x, incx,        \
                  SC_WIDEN(beta), y, incy);                                                \
      at = r + 1;                                                                          \
    } else if (layout == CblasRowMajor) {                                                  \
      /* a row-major m x n A is a column-major n x m one: the other transpose */           \
      static const int pos[12] = {0, 2, 4, 3, 0, 0, 7, 0, 9, 0, 0, 12};                    \
      const char other = t == CblasNoTrans                               ? 'T'             \
                         : t == CblasTrans || t == CblasConjTrans ? 'N'                    \
                                                                  : '?';                   \
      r = sc_gemv(&sc_g_blas, PREC, other, n, m, SC_WIDEN(alpha), a, lda, x, incx,         \
                  SC_WIDEN(beta), y, incy);                                                \
      at = r > 0 && r < 12 ? pos[r] : r + 1;                                               \
    }                                                                                      \
    if (r > 0 || (layout != CblasColMajor && layout != CblasRowMajor))                     \
      SC_BAD_ARGS(cblas_##P##gemv, sc_cblas_error(at, "cblas_" #P "gemv"), layout, t, m,   \
                  n, alpha, a, lda, x, incx, beta, y, incy);                               \
  }                                                                                        \
  void P##gemv_(const char *t, const int *m, const int *n, const T *alpha, const T *a,     \
                const int *lda, const T *x, const int *incx, const T *beta, T *y,          \
                const int *incy)                                                           \
  {                                                                                        \
    if (SC_PASS()) {                                                                        \
      SC_NEXT(P##gemv_)(t, m, n, alpha, a, lda, x, incx, beta, y, incy);                  \
      return;                                                                              \
    }                                                                                      \
    int r = sc_gemv(&sc_g_blas, PREC, *t, *m, *n, SC_WIDEN(*alpha), a, *lda, x, *incx,     \
                    SC_WIDEN(*beta), y, *incy);                                            \
    if (r > 0)                                                                             \
      SC_BAD_ARGS(P##gemv_, sc_fortran_error(NAME, r), t, m, n, alpha, a, lda, x, incx,    \
                  beta, y, incy);                                                          \
  }

SC_GEMV(d, double, SC_F64, "DGEMV ")
SC_GEMV(s, float, SC_F32, "SGEMV ")

/* ---- axpy, scal, dot: no argument errors ---- */

#define SC_VEC(P, T, PREC)                                                                 \
  void cblas_##P##axpy(const CBLAS_INT n, const T alpha, const T *x, const CBLAS_INT incx, \
                       T *y, const CBLAS_INT incy)                                         \
  {                                                                                        \
    if (SC_PASS()) SC_NEXT(cblas_##P##axpy)(n, alpha, x, incx, y, incy);                   \
    else sc_axpy(&sc_g_blas, PREC, n, SC_WIDEN(alpha), x, incx, y, incy);                  \
  }                                                                                        \
  void P##axpy_(const int *n, const T *alpha, const T *x, const int *incx, T *y,           \
                const int *incy)                                                           \
  {                                                                                        \
    if (SC_PASS()) SC_NEXT(P##axpy_)(n, alpha, x, incx, y, incy);                          \
    else sc_axpy(&sc_g_blas, PREC, *n, SC_WIDEN(*alpha), x, *incx, y, *incy);              \
  }                                                                                        \
  void cblas_##P##scal(const CBLAS_INT n, const T alpha, T *x, const CBLAS_INT incx)       \
  {                                                                                        \
    if (SC_PASS()) SC_NEXT(cblas_##P##scal)(n, alpha, x, incx);                            \
    else sc_scal(&sc_g_blas, PREC, n, SC_WIDEN(alpha), x, incx);                           \
  }                                                                                        \
  void P##scal_(const int *n, const T *alpha, T *x, const int *incx)                       \
  {                                                                                        \
    if (SC_PASS()) SC_NEXT(P##scal_)(n, alpha, x, incx);                                   \
    else sc_scal(&sc_g_blas, PREC, *n, SC_WIDEN(*alpha), x, *incx);                        \
  }                                                                                        \
  T cblas_##P##dot(const CBLAS_INT n, const T *x, const CBLAS_INT incx, const T *y,        \
                   const CBLAS_INT incy)                                                   \
  {                                                                                        \
    double d = 0;                                                                          \
    if (SC_PASS()) return SC_NEXT(cblas_##P##dot)(n, x, incx, y, incy);                    \
    sc_dot(&sc_g_blas, PREC, n, x, incx, y, incy, &d);                                     \
    return (T)d;                                                                           \
  }                                                                                        \
  T P##dot_(const int *n, const T *x, const int *incx, const T *y, const int *incy)        \
  {                                                                                        \
    double d = 0;                                                                          \
    if (SC_PASS()) return SC_NEXT(P##dot_)(n, x, incx, y, incy);                           \
    sc_dot(&sc_g_blas, PREC, *n, x, *incx, y, *incy, &d);                                  \
    return (T)d;                                                                           \
  }

SC_VEC(d, double, SC_F64)
SC_VEC(s, float, SC_F32)

/* ---- gesv (LAPACK: info = -i and xerbla for a bad parameter i) ---- */

#define SC_GESV(P, T, PREC, NAME)                                                          \
  void P##gesv_(const int *n, const int *nrhs, T *a, const int *lda, int *ipiv, T *b,      \
                const int *ldb, int *info)                                                 \
  {                                                                                        \
    if (SC_PASS()) {                                                                        \
      SC_NEXT(P##gesv_)(n, nrhs, a, lda, ipiv, b, ldb, info);                             \
      return;                                                                              \
    }                                                                                      \
    int r = sc_gesv(&sc_g_blas, PREC, *n, *nrhs, a, *lda, ipiv, b, *ldb, info);            \
    if (r > 0) {                                                                           \
      *info = -r;                                                                          \
      SC_BAD_ARGS(P##gesv_, sc_fortran_error(NAME, r), n, nrhs, a, lda, ipiv, b, ldb,      \
                  info);                                                                   \
    }                                                                                      \
  }

SC_GESV(d, double, SC_F64, "DGESV ")
SC_GESV(s, float, SC_F32, "SGESV ")
