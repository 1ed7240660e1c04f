/*
 * blas.h - SemCache's BLAS calls over its cache (cache.h): each call names
 * its operands' ranges (a matrix from its first to its last element with
 * its leading dimension, a vector with its stride), takes their device
 * copies (sent only when stale), runs the routine on the device backend,
 * and gives the outputs back by the cache's protocol.  A call whose
 * operands overlap an output, or that cannot get device memory, runs on
 * the host BLAS instead, on host memory (the page protection brings
 * newer device bytes back first), and is counted.
 *
 * Arguments are checked as the reference BLAS checks them: a bad one is
 * not run, and the call returns the Fortran routine's parameter number
 * (what xerbla reports; the drop-in's entry points call it).  Column-major
 * (Fortran) order; the CBLAS entry points map row-major calls onto it.
 */
#ifndef SEMCACHE_BLAS_H
#define SEMCACHE_BLAS_H

#include "cache.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The routines as a device runs them on device pointers (column-major;
 * trans: 'N' or 'T').  0 or a negative errno. */
struct sc_device_blas {
  void *ctx;
  int (*dgemm)(void *ctx, char ta, char tb, int m, int n, int k, double alpha, const double *a,
               int lda, const double *b, int ldb, double beta, double *c, int ldc);
  int (*dgemv)(void *ctx, char t, int m, int n, double alpha, const double *a, int lda,
               const double *x, int incx, double beta, double *y, int incy);
  int (*daxpy)(void *ctx, int n, double alpha, const double *x, int incx, double *y, int incy);
  int (*ddot)(void *ctx, int n, const double *x, int incx, const double *y, int incy,
              double *out);
};

/* The host BLAS on device copies in host memory (the cache's CPU backend):
 * the whole protocol without a GPU.  Also the host fallback's routines. */
extern const struct sc_device_blas sc_host_blas;

struct sc_blas {
  struct sc_cache *cache;
  struct sc_device_blas dev;
  uint64_t calls;          /* calls run on the device (relaxed atomics) */
  uint64_t host_calls;     /* calls run on the host BLAS (overlap, no room) */
};

/* dgemm: C = alpha op(A) op(B) + beta C, op(A) m x k, op(B) k x n.
 * 0, a parameter number (1 transa ... 13 ldc) for a bad argument, or a
 * negative errno of the backend. */
int sc_dgemm(struct sc_blas *s, char ta, char tb, int m, int n, int k, double alpha,
             const double *a, int lda, const double *b, int ldb, double beta, double *c, int ldc);

/* dgemv: y = alpha op(A) x + beta y, A m x n.  Parameter numbers 1 trans,
 * 2 m, 3 n, 6 lda, 8 incx, 11 incy. */
int sc_dgemv(struct sc_blas *s, char t, int m, int n, double alpha, const double *a, int lda,
             const double *x, int incx, double beta, double *y, int incy);

/* daxpy: y += alpha x.  No parameter errors (n <= 0: nothing), as the
 * reference. */
int sc_daxpy(struct sc_blas *s, int n, double alpha, const double *x, int incx, double *y,
             int incy);

/* ddot into *out (0 for n <= 0). */
int sc_ddot(struct sc_blas *s, int n, const double *x, int incx, const double *y, int incy,
            double *out);

#ifdef __cplusplus
}
#endif
#endif /* SEMCACHE_BLAS_H */
