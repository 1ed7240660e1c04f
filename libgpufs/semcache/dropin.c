/*
 * dropin.c - libsemcache.so: SemCache as a BLAS drop-in.  Linked before
 * the program's BLAS (LD_PRELOAD, or -lsemcache ahead of it), it exports
 * the CBLAS and Fortran entry points of the routines blas.h serves and
 * runs them through one process-wide cache; every other BLAS routine, and
 * the host fallback, is the next library's (RTLD_NEXT): the program's own
 * BLAS.  It also interposes free, realloc and munmap, so a buffer the
 * program gives back is dropped from the cache before its address can be
 * reused (never served stale).
 *
 * Environment:
 *   SEMCACHE_DEVICE=host     the cache with host memory as the device and
 *                            the program's BLAS as its routines: the
 *                            protocol without a GPU (how CI tests it)
 *   (unset)                  the GPU backend (cuBLAS) when built; until
 *                            then the calls pass through to the program's
 *                            BLAS, with one warning
 *   SEMCACHE_PROTOCOL=write-through | write-back (default write-back)
 *   SEMCACHE_CAPACITY=bytes  device bytes the cache may hold (0: no cap)
 *   SEMCACHE_STATS=1         the counters on stderr at exit
 * Bad arguments go to the next library's xerbla / cblas_xerbla, as the
 * reference BLAS reports them (it prints and ends the program).
 */
#include <cblas.h>
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "blas.h"

static struct sc_cache g_cache;
static struct sc_blas g_blas;
static int g_on;                 /* the cache serves the calls; atomics only */
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* The next library's symbol (the program's BLAS), or NULL. */
void *sc_next(const char *name)
{
  return dlsym(RTLD_NEXT, name);
}

static void dropin_stats(void)
{
  struct sc_stats s;
  if (!__atomic_load_n(&g_on, __ATOMIC_ACQUIRE)) return;
  sc_get_stats(&g_cache, &s);
  fprintf(stderr,
          "semcache: calls %llu (host %llu), hits %llu, misses %llu, to_dev %llu (%llu bytes), "
          "to_host %llu (%llu bytes), invalidations %llu, faults %llu, evictions %llu, "
          "refused %llu\n",
          (unsigned long long)g_blas.calls, (unsigned long long)g_blas.host_calls,
          (unsigned long long)s.hits, (unsigned long long)s.misses, (unsigned long long)s.to_dev,
          (unsigned long long)s.to_dev_bytes, (unsigned long long)s.to_host,
          (unsigned long long)s.to_host_bytes, (unsigned long long)s.invalidations,
          (unsigned long long)s.faults, (unsigned long long)s.evictions,
          (unsigned long long)s.refused);
}

static void dropin_init(void)
{
  const char *dev = getenv("SEMCACHE_DEVICE");
  const char *proto = getenv("SEMCACHE_PROTOCOL");
  const char *cap = getenv("SEMCACHE_CAPACITY");
  const char *stats = getenv("SEMCACHE_STATS");
  if (!dev || strcmp(dev, "host") != 0) {
    fprintf(stderr, "semcache: no GPU backend in this build: BLAS calls go to the program's "
                    "BLAS (SEMCACHE_DEVICE=host runs the cache on host memory)\n");
    return;
  }
  enum sc_protocol p = proto && strcmp(proto, "write-through") == 0 ? SC_WRITE_THROUGH
                                                                      : SC_WRITE_BACK;
  if (proto && p == SC_WRITE_BACK && strcmp(proto, "write-back") != 0)
    fprintf(stderr, "semcache: SEMCACHE_PROTOCOL=%s is not write-through or write-back: "
                    "write-back\n", proto);
  if (sc_cache_init(&g_cache, &sc_cpu_backend, p, cap ? strtoull(cap, NULL, 0) : 0) != 0) {
    fprintf(stderr, "semcache: the cache did not start: BLAS calls go to the program's BLAS\n");
    return;
  }
  g_blas.cache = &g_cache;
  g_blas.dev = sc_host_blas;
  if (stats && strcmp(stats, "0") != 0) atexit(dropin_stats);
  /* release: the cache's fields before g_on; pairs with on()'s acquire */
  __atomic_store_n(&g_on, 1, __ATOMIC_RELEASE);
}

static int on(void)
{
  pthread_once(&g_once, dropin_init);
  return __atomic_load_n(&g_on, __ATOMIC_ACQUIRE);
}

/* ---- errors as the program's BLAS reports them ---- */

static void fortran_error(const char *name, int info)
{
  void (*xerbla)(const char *, const int *, size_t) =
      (void (*)(const char *, const int *, size_t))sc_next("xerbla_");
  if (xerbla) xerbla(name, &info, strlen(name));
  else fprintf(stderr, " ** On entry to %s parameter number %d had an illegal value\n", name, info);
}

static void cblas_error(int pos, const char *rout)
{
  void (*x)(int, const char *, const char *, ...) =
      (void (*)(int, const char *, const char *, ...))sc_next("cblas_xerbla");
  if (x) x(pos, rout, "");
  else fprintf(stderr, "Parameter %d to routine %s was incorrect\n", pos, rout);
}

static char tch(CBLAS_TRANSPOSE t)
{
  return t == CblasNoTrans ? 'N' : t == CblasTrans ? 'T' : t == CblasConjTrans ? 'C' : '?';
}

/* ---- dgemm ---- */

void cblas_dgemm(CBLAS_LAYOUT layout, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, const CBLAS_INT m,
                 const CBLAS_INT n, const CBLAS_INT k, const double alpha, const double *a,
                 const CBLAS_INT lda, const double *b, const CBLAS_INT ldb, const double beta,
                 double *c, const CBLAS_INT ldc)
{
  if (!on()) {
    ((void (*)(CBLAS_LAYOUT, CBLAS_TRANSPOSE, CBLAS_TRANSPOSE, CBLAS_INT, CBLAS_INT, CBLAS_INT,
               double, const double *, CBLAS_INT, const double *, CBLAS_INT, double, double *,
               CBLAS_INT))sc_next("cblas_dgemm"))(layout, ta, tb, m, n, k, alpha, a, lda, b, ldb,
                                                 beta, c, ldc);
    return;
  }
  int r;
  if (layout == CblasColMajor) {
    r = sc_dgemm(&g_blas, tch(ta), tch(tb), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    if (r > 0) cblas_error(r + 1, "cblas_dgemm");
  } else if (layout == CblasRowMajor) {
    /* C^T = op(B)^T op(A)^T, column-major: the operands swap */
    static const int pos[14] = {0, 3, 2, 5, 4, 6, 0, 0, 11, 0, 9, 0, 0, 14};
    r = sc_dgemm(&g_blas, tch(tb), tch(ta), n, m, k, alpha, b, ldb, a, lda, beta, c, ldc);
    if (r > 0) cblas_error(r < 14 ? pos[r] : r + 1, "cblas_dgemm");
  } else {
    cblas_error(1, "cblas_dgemm");
  }
}

void dgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,
            const double *alpha, const double *a, const int *lda, const double *b, const int *ldb,
            const double *beta, double *c, const int *ldc)
{
  if (!on()) {
    ((void (*)(const char *, const char *, const int *, const int *, const int *, const double *,
               const double *, const int *, const double *, const int *, const double *, double *,
               const int *))sc_next("dgemm_"))(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  int r = sc_dgemm(&g_blas, *ta, *tb, *m, *n, *k, *alpha, a, *lda, b, *ldb, *beta, c, *ldc);
  if (r > 0) fortran_error("DGEMM ", r);
}

/* ---- dgemv ---- */

void cblas_dgemv(CBLAS_LAYOUT layout, CBLAS_TRANSPOSE t, const CBLAS_INT m, const CBLAS_INT n,
                 const double alpha, const double *a, const CBLAS_INT lda, const double *x,
                 const CBLAS_INT incx, const double beta, double *y, const CBLAS_INT incy)
{
  if (!on()) {
    ((void (*)(CBLAS_LAYOUT, CBLAS_TRANSPOSE, CBLAS_INT, CBLAS_INT, double, const double *,
               CBLAS_INT, const double *, CBLAS_INT, double, double *,
               CBLAS_INT))sc_next("cblas_dgemv"))(layout, t, m, n, alpha, a, lda, x, incx, beta,
                                                 y, incy);
    return;
  }
  int r;
  if (layout == CblasColMajor) {
    r = sc_dgemv(&g_blas, tch(t), m, n, alpha, a, lda, x, incx, beta, y, incy);
    if (r > 0) cblas_error(r + 1, "cblas_dgemv");
  } else if (layout == CblasRowMajor) {
    /* a row-major m x n A is a column-major n x m one: the other transpose */
    static const int pos[12] = {0, 2, 4, 3, 0, 0, 7, 0, 9, 0, 0, 12};
    const char other = t == CblasNoTrans ? 'T' : t == CblasTrans || t == CblasConjTrans ? 'N' : '?';
    r = sc_dgemv(&g_blas, other, n, m, alpha, a, lda, x, incx, beta, y, incy);
    if (r > 0) cblas_error(r < 12 ? pos[r] : r + 1, "cblas_dgemv");
  } else {
    cblas_error(1, "cblas_dgemv");
  }
}

void dgemv_(const char *t, const int *m, const int *n, const double *alpha, const double *a,
            const int *lda, const double *x, const int *incx, const double *beta, double *y,
            const int *incy)
{
  if (!on()) {
    ((void (*)(const char *, const int *, const int *, const double *, const double *, const int *,
               const double *, const int *, const double *, double *,
               const int *))sc_next("dgemv_"))(t, m, n, alpha, a, lda, x, incx, beta, y, incy);
    return;
  }
  int r = sc_dgemv(&g_blas, *t, *m, *n, *alpha, a, *lda, x, *incx, *beta, y, *incy);
  if (r > 0) fortran_error("DGEMV ", r);
}

/* ---- daxpy, ddot ---- */

void cblas_daxpy(const CBLAS_INT n, const double alpha, const double *x, const CBLAS_INT incx,
                 double *y, const CBLAS_INT incy)
{
  if (!on()) {
    ((void (*)(CBLAS_INT, double, const double *, CBLAS_INT, double *,
               CBLAS_INT))sc_next("cblas_daxpy"))(n, alpha, x, incx, y, incy);
    return;
  }
  sc_daxpy(&g_blas, n, alpha, x, incx, y, incy);
}

void daxpy_(const int *n, const double *alpha, const double *x, const int *incx, double *y,
            const int *incy)
{
  if (!on()) {
    ((void (*)(const int *, const double *, const double *, const int *, double *,
               const int *))sc_next("daxpy_"))(n, alpha, x, incx, y, incy);
    return;
  }
  sc_daxpy(&g_blas, *n, *alpha, x, *incx, y, *incy);
}

double cblas_ddot(const CBLAS_INT n, const double *x, const CBLAS_INT incx, const double *y,
                  const CBLAS_INT incy)
{
  double d = 0;
  if (!on())
    return ((double (*)(CBLAS_INT, const double *, CBLAS_INT, const double *,
                        CBLAS_INT))sc_next("cblas_ddot"))(n, x, incx, y, incy);
  sc_ddot(&g_blas, n, x, incx, y, incy, &d);
  return d;
}

double ddot_(const int *n, const double *x, const int *incx, const double *y, const int *incy)
{
  double d = 0;
  if (!on())
    return ((double (*)(const int *, const double *, const int *, const double *,
                        const int *))sc_next("ddot_"))(n, x, incx, y, incy);
  sc_ddot(&g_blas, *n, x, *incx, y, *incy, &d);
  return d;
}

/* ---- buffers the program gives back ---- */

extern void __libc_free(void *);
extern void *__libc_realloc(void *, size_t);

/* Drop what the cache holds of [p, p + len) before the memory goes: only
 * when the cache runs (relaxed: a cache that started after this buffer was
 * cached cannot hold it). */
static void forget(void *p, size_t len)
{
  if (!p || !len || !__atomic_load_n(&g_on, __ATOMIC_RELAXED)) return;
  /* the cache's own frees (its entries, its "device" buffers) happen with
   * its lock held: they are never the program's ranges */
  if (__atomic_load_n(&g_cache.owner, __ATOMIC_RELAXED) == (uint64_t)pthread_self()) return;
  sc_forget(&g_cache, p, len);
}

void free(void *p)
{
  if (p) forget(p, malloc_usable_size(p));
  __libc_free(p);
}

void *realloc(void *p, size_t n)
{
  if (p) forget(p, malloc_usable_size(p));
  return __libc_realloc(p, n);
}

int munmap(void *addr, size_t len)
{
  forget(addr, len);
  return (int)syscall(SYS_munmap, addr, len);
}
