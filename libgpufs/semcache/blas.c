/*
 * blas.c - SemCache's BLAS calls over its cache (blas.h), and the host
 * BLAS as a device backend (sc_host_blas).
 */
#include "blas.h"

#include <errno.h>
#include <stdlib.h>

/* ---- the host BLAS (its Fortran routines) ---- */

/* The Fortran routines, which every BLAS has (a reference CBLAS calls
 * them too).  In libsemcache.so (SC_DROPIN) these names are the drop-in's
 * own: the host's are the next library's (the program's BLAS), looked up
 * once each (dropin.c's sc_next; a relaxed pointer: a racing second
 * lookup finds the same address). */
void dgemm_(const char *, const char *, const int *, const int *, const int *, const double *,
            const double *, const int *, const double *, const int *, const double *, double *,
            const int *);
void dgemv_(const char *, const int *, const int *, const double *, const double *, const int *,
            const double *, const int *, const double *, double *, const int *);
void daxpy_(const int *, const double *, const double *, const int *, double *, const int *);
double ddot_(const int *, const double *, const int *, const double *, const int *);

#ifdef SC_DROPIN
void *sc_next(const char *name);
#define SC_HOST(fn)                                                               \
  ({                                                                              \
    static void *p_;                                                              \
    void *q_ = __atomic_load_n(&p_, __ATOMIC_RELAXED);                            \
    if (!q_) __atomic_store_n(&p_, q_ = sc_next(#fn), __ATOMIC_RELAXED);          \
    (__typeof__(&fn))q_;                                                          \
  })
#else
#define SC_HOST(fn) (&fn)
#endif

static char tr(char t)
{
  return t == 'N' || t == 'n' ? 'N' : 'T'; /* real: C is T */
}

static int h_dgemm(void *ctx, char ta, char tb, int m, int n, int k, double alpha,
                   const double *a, int lda, const double *b, int ldb, double beta, double *c,
                   int ldc)
{
  (void)ctx;
  const char x = tr(ta), y = tr(tb);
  SC_HOST(dgemm_)(&x, &y, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc);
  return 0;
}

static int h_dgemv(void *ctx, char t, int m, int n, double alpha, const double *a, int lda,
                   const double *x, int incx, double beta, double *y, int incy)
{
  (void)ctx;
  const char u = tr(t);
  SC_HOST(dgemv_)(&u, &m, &n, &alpha, a, &lda, x, &incx, &beta, y, &incy);
  return 0;
}

static int h_daxpy(void *ctx, int n, double alpha, const double *x, int incx, double *y, int incy)
{
  (void)ctx;
  SC_HOST(daxpy_)(&n, &alpha, x, &incx, y, &incy);
  return 0;
}

static int h_ddot(void *ctx, int n, const double *x, int incx, const double *y, int incy,
                  double *out)
{
  (void)ctx;
  *out = SC_HOST(ddot_)(&n, x, &incx, y, &incy);
  return 0;
}

const struct sc_device_blas sc_host_blas = {NULL, h_dgemm, h_dgemv, h_daxpy, h_ddot};

/* ---- operands ---- */

struct sc_op {
  const void *host;
  size_t bytes;
  enum sc_use use;
  void *dev;
};

/* Bytes from a column-major matrix's first element to its last. */
static size_t mat_bytes(int rows, int cols, int ld)
{
  return rows <= 0 || cols <= 0 ? 0 : ((size_t)(cols - 1) * (size_t)ld + (size_t)rows) * 8;
}

/* Bytes a vector of n elements at stride inc spans (either sign). */
static size_t vec_bytes(int n, int inc)
{
  return n <= 0 ? 0 : (1 + (size_t)(n - 1) * (size_t)abs(inc)) * 8;
}

/* An output the routine writes at every byte of its range is SC_WRITE
 * (its old bytes are not sent); one with gaps (ld > rows, |inc| > 1), or
 * that the routine reads, is SC_READ_WRITE: the gaps' host bytes must
 * survive the copy back. */
static enum sc_use out_use(int reads, int whole)
{
  return reads || !whole ? SC_READ_WRITE : SC_WRITE;
}

static int overlap(const struct sc_op *a, const struct sc_op *b)
{
  const char *x = (const char *)a->host, *y = (const char *)b->host;
  return x < y + b->bytes && y < x + a->bytes;
}

/* Take the device copies of ops[0..n): 1 when the call must run on the
 * host instead (an output overlaps another operand, or no room), 0 when
 * every one is held, or a backend error (nothing held). */
static int take(struct sc_blas *s, struct sc_op *ops, int n)
{
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      if (i != j && (ops[i].use & SC_WRITE) && overlap(&ops[i], &ops[j])) return 1;
  for (int i = 0; i < n; i++) {
    int rc = sc_acquire(s->cache, (void *)ops[i].host, ops[i].bytes, ops[i].use, &ops[i].dev);
    if (rc == 0) continue;
    /* nothing computed: releasing as a read leaves every state as it was */
    while (--i >= 0) sc_release(s->cache, (void *)ops[i].host, ops[i].bytes, SC_READ);
    return rc == -ENOSPC || rc == -EBUSY ? 1 : rc;
  }
  return 0;
}

/* Give them back after the routine ran (rc its result): outputs by the
 * protocol; after a failed routine the outputs' device copies are dropped
 * (the host keeps its bytes). */
static int give(struct sc_blas *s, struct sc_op *ops, int n, int rc)
{
  for (int i = 0; i < n; i++) {
    if (rc && (ops[i].use & SC_WRITE)) {
      sc_release(s->cache, (void *)ops[i].host, ops[i].bytes, SC_READ);
      sc_forget(s->cache, (void *)ops[i].host, ops[i].bytes);
      continue;
    }
    int r = sc_release(s->cache, (void *)ops[i].host, ops[i].bytes, ops[i].use);
    rc = rc ? rc : r;
  }
  if (rc == 0) __atomic_add_fetch(&s->calls, 1, __ATOMIC_RELAXED); /* a count: no order */
  return rc;
}

static int is_trans(char t)
{
  return t == 'N' || t == 'n' || t == 'T' || t == 't' || t == 'C' || t == 'c';
}

static int maxi(int a, int b)
{
  return a > b ? a : b;
}

int sc_dgemm(struct sc_blas *s, char ta, char tb, int m, int n, int k, double alpha,
             const double *a, int lda, const double *b, int ldb, double beta, double *c, int ldc)
{
  const int na = ta == 'N' || ta == 'n', nb = tb == 'N' || tb == 'n';
  const int rowa = na ? m : k, rowb = nb ? k : n;
  if (!is_trans(ta)) return 1;
  if (!is_trans(tb)) return 2;
  if (m < 0) return 3;
  if (n < 0) return 4;
  if (k < 0) return 5;
  if (lda < maxi(1, rowa)) return 8;
  if (ldb < maxi(1, rowb)) return 10;
  if (ldc < maxi(1, m)) return 13;
  if (m == 0 || n == 0 || ((alpha == 0 || k == 0) && beta == 1)) return 0;
  struct sc_op ops[3];
  int nops = 0;
  if (alpha != 0 && k > 0) {
    ops[nops++] = (struct sc_op){a, mat_bytes(rowa, na ? k : m, lda), SC_READ, NULL};
    ops[nops++] = (struct sc_op){b, mat_bytes(rowb, nb ? n : k, ldb), SC_READ, NULL};
  }
  ops[nops++] = (struct sc_op){c, mat_bytes(m, n, ldc), out_use(beta != 0, ldc == m), NULL};
  int rc = take(s, ops, nops);
  if (rc == 1) {
    __atomic_add_fetch(&s->host_calls, 1, __ATOMIC_RELAXED);
    return sc_host_blas.dgemm(NULL, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
  if (rc) return rc;
  double *dc = (double *)ops[nops - 1].dev;
  rc = s->dev.dgemm(s->dev.ctx, ta, tb, m, n, k, alpha, nops == 3 ? (const double *)ops[0].dev : a,
                    lda, nops == 3 ? (const double *)ops[1].dev : b, ldb, beta, dc, ldc);
  return give(s, ops, nops, rc);
}

int sc_dgemv(struct sc_blas *s, char t, int m, int n, double alpha, const double *a, int lda,
             const double *x, int incx, double beta, double *y, int incy)
{
  const int nt = t == 'N' || t == 'n';
  const int lenx = nt ? n : m, leny = nt ? m : n;
  if (!is_trans(t)) return 1;
  if (m < 0) return 2;
  if (n < 0) return 3;
  if (lda < maxi(1, m)) return 6;
  if (incx == 0) return 8;
  if (incy == 0) return 11;
  if (m == 0 || n == 0 || (alpha == 0 && beta == 1)) return 0;
  struct sc_op ops[3] = {
      {a, mat_bytes(m, n, lda), SC_READ, NULL},
      {x, vec_bytes(lenx, incx), SC_READ, NULL},
      {y, vec_bytes(leny, incy), out_use(beta != 0, incy == 1 || incy == -1), NULL}};
  int rc = take(s, ops, 3);
  if (rc == 1) {
    __atomic_add_fetch(&s->host_calls, 1, __ATOMIC_RELAXED);
    return sc_host_blas.dgemv(NULL, t, m, n, alpha, a, lda, x, incx, beta, y, incy);
  }
  if (rc) return rc;
  rc = s->dev.dgemv(s->dev.ctx, t, m, n, alpha, (const double *)ops[0].dev, lda,
                    (const double *)ops[1].dev, incx, beta, (double *)ops[2].dev, incy);
  return give(s, ops, 3, rc);
}

int sc_daxpy(struct sc_blas *s, int n, double alpha, const double *x, int incx, double *y,
             int incy)
{
  if (n <= 0 || alpha == 0) return 0;
  struct sc_op ops[2] = {{x, vec_bytes(n, incx), SC_READ, NULL},
                         {y, vec_bytes(n, incy), SC_READ_WRITE, NULL}};
  int rc = take(s, ops, 2);
  if (rc == 1) {
    __atomic_add_fetch(&s->host_calls, 1, __ATOMIC_RELAXED);
    return sc_host_blas.daxpy(NULL, n, alpha, x, incx, y, incy);
  }
  if (rc) return rc;
  rc = s->dev.daxpy(s->dev.ctx, n, alpha, (const double *)ops[0].dev, incx, (double *)ops[1].dev,
                    incy);
  return give(s, ops, 2, rc);
}

int sc_ddot(struct sc_blas *s, int n, const double *x, int incx, const double *y, int incy,
            double *out)
{
  *out = 0;
  if (n <= 0) return 0;
  struct sc_op ops[2] = {{x, vec_bytes(n, incx), SC_READ, NULL},
                         {y, vec_bytes(n, incy), SC_READ, NULL}};
  int rc = take(s, ops, 2);
  if (rc == 1) {
    __atomic_add_fetch(&s->host_calls, 1, __ATOMIC_RELAXED);
    return sc_host_blas.ddot(NULL, n, x, incx, y, incy, out);
  }
  if (rc) return rc;
  rc = s->dev.ddot(s->dev.ctx, n, (const double *)ops[0].dev, incx, (const double *)ops[1].dev,
                   incy, out);
  return give(s, ops, 2, rc);
}
