/*
 * hostblas.c - the host BLAS and LAPACK as a SemCache device
 * (sc_host_blas, blas.h): the routines of the CPU backend's "device", and
 * the host fallback's.
 */
#include "blas.h"

#include <errno.h>
#include <stddef.h>

#include "fortran.h"

/* The Fortran routines (fortran.h), which every BLAS and LAPACK has (a
 * reference CBLAS and LAPACKE call them too).  In libsemcache.so (SC_DROPIN) these names
 * are the drop-in's own: the host's are the program's BLAS and LAPACK,
 * wherever they were loaded (find.h), looked up once each. */
#ifdef SC_DROPIN
#include "find.h"
#define SC_HOST(fn) SC_ROUTINE(fn)
/* While a host routine runs, the BLAS calls it makes itself (LAPACK's
 * getrf calls dgemm_, which is the drop-in's) go straight to the next
 * library: they name the CPU backend's "device" buffers or sub-blocks of
 * an operand, never the program's matrices (dropin.h's SC_PASS). */
extern __thread int sc_in_host __attribute__((tls_model("initial-exec")));
#define SC_ENTER() (sc_in_host++)
#define SC_LEAVE() (sc_in_host--)
#else
#define SC_HOST(fn) (&fn)
#define SC_ENTER() ((void)0)
#define SC_LEAVE() ((void)0)
#endif

static char tr(char t)
{
  return t == 'N' || t == 'n' ? 'N' : 'T'; /* real: C is T */
}

static int h_gemm(void *ctx, enum sc_prec p, char ta, char tb, int m, int n, int k, double alpha,
                  const void *a, int lda, const void *b, int ldb, double beta, void *c, int ldc)
{
  (void)ctx;
  SC_ENTER();
  const char x = tr(ta), y = tr(tb);
  if (p == SC_F64) {
    SC_HOST(dgemm_)(&x, &y, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc);
  } else {
    const float fa = (float)alpha, fb = (float)beta;
    SC_HOST(sgemm_)(&x, &y, &m, &n, &k, &fa, a, &lda, b, &ldb, &fb, c, &ldc);
  }
  SC_LEAVE();
  return 0;
}

static int h_gemv(void *ctx, enum sc_prec p, char t, int m, int n, double alpha, const void *a,
                  int lda, const void *x, int incx, double beta, void *y, int incy)
{
  (void)ctx;
  SC_ENTER();
  const char u = tr(t);
  if (p == SC_F64) {
    SC_HOST(dgemv_)(&u, &m, &n, &alpha, a, &lda, x, &incx, &beta, y, &incy);
  } else {
    const float fa = (float)alpha, fb = (float)beta;
    SC_HOST(sgemv_)(&u, &m, &n, &fa, a, &lda, x, &incx, &fb, y, &incy);
  }
  SC_LEAVE();
  return 0;
}

static int h_axpy(void *ctx, enum sc_prec p, int n, double alpha, const void *x, int incx, void *y,
                  int incy)
{
  (void)ctx;
  SC_ENTER();
  if (p == SC_F64) {
    SC_HOST(daxpy_)(&n, &alpha, x, &incx, y, &incy);
  } else {
    const float fa = (float)alpha;
    SC_HOST(saxpy_)(&n, &fa, x, &incx, y, &incy);
  }
  SC_LEAVE();
  return 0;
}

static int h_scal(void *ctx, enum sc_prec p, int n, double alpha, void *x, int incx)
{
  (void)ctx;
  SC_ENTER();
  if (p == SC_F64) {
    SC_HOST(dscal_)(&n, &alpha, x, &incx);
  } else {
    const float fa = (float)alpha;
    SC_HOST(sscal_)(&n, &fa, x, &incx);
  }
  SC_LEAVE();
  return 0;
}

static int h_dot(void *ctx, enum sc_prec p, int n, const void *x, int incx, const void *y, int incy,
                 double *out)
{
  (void)ctx;
  SC_ENTER();
  *out = p == SC_F64 ? SC_HOST(ddot_)(&n, x, &incx, y, &incy)
                     : sc_widen(SC_HOST(sdot_)(&n, x, &incx, y, &incy));
  SC_LEAVE();
  return 0;
}

static int h_getrf(void *ctx, enum sc_prec p, int n, void *a, int lda, int *ipiv, int *info)
{
  (void)ctx;
  SC_ENTER();
  if (p == SC_F64)
    SC_HOST(dgetrf_)(&n, &n, a, &lda, ipiv, info);
  else
    SC_HOST(sgetrf_)(&n, &n, a, &lda, ipiv, info);
  SC_LEAVE();
  return 0;
}

static int h_getrs(void *ctx, enum sc_prec p, int n, int nrhs, const void *a, int lda,
                   const int *ipiv, void *b, int ldb)
{
  (void)ctx;
  SC_ENTER();
  int info = 0;
  if (p == SC_F64)
    SC_HOST(dgetrs_)("N", &n, &nrhs, a, &lda, ipiv, b, &ldb, &info, 1);
  else
    SC_HOST(sgetrs_)("N", &n, &nrhs, a, &lda, ipiv, b, &ldb, &info, 1);
  SC_LEAVE();
  return info == 0 ? 0 : -EINVAL;
}

const struct sc_device_blas sc_host_blas = {NULL,  h_gemm, h_gemv,  h_axpy, h_scal,
                                            h_dot, h_getrf, h_getrs, NULL};
