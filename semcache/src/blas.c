/*
 * blas.c - SemCache's BLAS calls over its cache (blas.h): their argument
 * checks, their operands' ranges, and taking and giving back the device
 * copies, through the directory (SC_CACHED) or as plain copies in and out
 * (SC_NO_CACHE, and operands on a stack: stacks.h), or, for a call below
 * its routine's crossover (crossover.c), the host BLAS on the program's
 * memory made current.  gesv is gesv.c; the host routines hostblas.c.
 */
#include "blas_ops.h"
#include "stacks.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>

/* When the calling thread's last sc_take returned (its device routine's
 * start, for device_ns). */
static __thread uint64_t t_taken __attribute__((tls_model("initial-exec")));

static uint64_t now_ns(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

size_t sc_esize(enum sc_prec p)
{
  return p == SC_F32 ? sizeof(float) : sizeof(double);
}

size_t sc_mat_bytes(enum sc_prec p, int rows, int cols, int ld)
{
  return rows <= 0 || cols <= 0 ? 0
                                : ((size_t)(cols - 1) * (size_t)ld + (size_t)rows) * sc_esize(p);
}

/* Bytes a vector of n elements at stride inc spans (either sign). */
static size_t vec_bytes(enum sc_prec p, int n, int inc)
{
  return n <= 0 ? 0 : (1 + (size_t)(n - 1) * (size_t)abs(inc)) * sc_esize(p);
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

/* One operand's device copy: the cache's, or a buffer of its own for the
 * call (op->copied: SC_NO_CACHE, or an operand on a stack, stacks.h),
 * sent when the call reads it.  0, -ENOSPC (no room), or an error. */
static int take_one(struct sc_blas *s, struct sc_op *op)
{
  if (!op->copied) return sc_acquire(s->cache, (void *)op->host, op->bytes, op->use, &op->dev);
  /* a cached range there (cached before its thread was known) gives its
   * newest bytes back and leaves the pages open for the copies */
  if (s->mode == SC_CACHED) sc_host_access(s->cache, op->host, op->bytes, op->use);
  int rc = sc_dev_alloc(s->cache, op->bytes, &op->dev);
  if (rc == 0 && (op->use & SC_READ)) {
    rc = sc_copy_to_dev(s->cache, op->dev, op->host, op->bytes);
    if (rc) sc_dev_free(s->cache, op->dev, op->bytes);
  }
  return rc;
}

/* Undo take_one for a call that did not run: every state as it was. */
static void untake_one(struct sc_blas *s, struct sc_op *op)
{
  if (op->copied) sc_dev_free(s->cache, op->dev, op->bytes);
  else sc_release(s->cache, (void *)op->host, op->bytes, SC_READ);
}

int sc_device_up(struct sc_blas *s)
{
  /* acquire: pairs with the release below (s->dev and the cache, filled
   * by the start, before started) */
  if (__atomic_load_n(&s->started, __ATOMIC_ACQUIRE)) return 1;
  if (!s->start || s->start(s) != 0) return 0;
  __atomic_store_n(&s->started, 1, __ATOMIC_RELEASE);
  return 1;
}

int sc_small(struct sc_blas *s, enum sc_routine r, enum sc_prec p, uint64_t work,
             const struct sc_op *ops, int n)
{
  if (!sc_below_crossover(&s->cross, r, p, work)) return 0;
  /* acquire: as sc_device_up's */
  const int live = __atomic_load_n(&s->started, __ATOMIC_ACQUIRE);
  /* an operand the device holds valid: the call runs there, where its
   * data is (on the host a MODIFIED one would come back, and the next
   * call on the device would send it again) */
  if (live && s->mode == SC_CACHED)
    for (int i = 0; i < n; i++)
      if ((ops[i].use & SC_READ) && sc_state_of(s->cache, ops[i].host, ops[i].bytes) > SC_INVALID)
        return 0;
  /* the host's bytes current for the host routine: a MODIFIED range
   * there comes back, one the call writes is INVALID and writable (no
   * fault then) */
  if (live)
    for (int i = 0; i < n; i++) sc_host_access(s->cache, ops[i].host, ops[i].bytes, ops[i].use);
  __atomic_add_fetch(&s->small_calls, 1, __ATOMIC_RELAXED);
  return 1;
}

int sc_take(struct sc_blas *s, struct sc_op *ops, int n)
{
  if (!sc_device_up(s)) return 1;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      if (i != j && (ops[i].use & SC_WRITE) && overlap(&ops[i], &ops[j])) return 1;
  if (s->dev.prepare) s->dev.prepare(s->dev.ctx); /* before the lock: blas.h */
  sc_thread_ready();
  for (int i = 0; i < n; i++)
    ops[i].copied = s->mode == SC_NO_CACHE || sc_on_stack(ops[i].host, ops[i].bytes);
  for (int i = 0; i < n; i++) {
    int rc = take_one(s, &ops[i]);
    if (rc == 0) continue;
    while (--i >= 0) untake_one(s, &ops[i]);
    return rc == -ENOSPC || rc == -EBUSY ? 1 : rc;
  }
  t_taken = now_ns();
  return 0;
}

int sc_give(struct sc_blas *s, struct sc_op *ops, int n, int rc)
{
  __atomic_add_fetch(&s->device_ns, now_ns() - t_taken, __ATOMIC_RELAXED);
  for (int i = 0; i < n; i++) {
    if (ops[i].copied) {
      if (rc == 0 && (ops[i].use & SC_WRITE))
        rc = sc_copy_to_host(s->cache, (void *)ops[i].host, ops[i].dev, ops[i].bytes);
      sc_dev_free(s->cache, ops[i].dev, ops[i].bytes);
    } else if (rc && (ops[i].use & SC_WRITE)) {
      /* a failed routine: the outputs' device copies go, the host keeps its bytes */
      sc_release(s->cache, (void *)ops[i].host, ops[i].bytes, SC_READ);
      sc_forget(s->cache, (void *)ops[i].host, ops[i].bytes);
    } else {
      int r = sc_release(s->cache, (void *)ops[i].host, ops[i].bytes, ops[i].use);
      rc = rc ? rc : r;
    }
  }
  if (rc == 0) __atomic_add_fetch(&s->calls, 1, __ATOMIC_RELAXED);
  return rc;
}

void sc_count_host(struct sc_blas *s)
{
  __atomic_add_fetch(&s->host_calls, 1, __ATOMIC_RELAXED);
}

static int is_trans(char t)
{
  return t == 'N' || t == 'n' || t == 'T' || t == 't' || t == 'C' || t == 'c';
}

static int maxi(int a, int b)
{
  return a > b ? a : b;
}

int sc_gemm(struct sc_blas *s, enum sc_prec p, char ta, char tb, int m, int n, int k, double alpha,
            const void *a, int lda, const void *b, int ldb, double beta, void *c, int ldc)
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
    ops[nops++] = (struct sc_op){a, sc_mat_bytes(p, rowa, na ? k : m, lda), SC_READ, NULL, 0};
    ops[nops++] = (struct sc_op){b, sc_mat_bytes(p, rowb, nb ? n : k, ldb), SC_READ, NULL, 0};
  }
  ops[nops++] =
      (struct sc_op){c, sc_mat_bytes(p, m, n, ldc), out_use(beta != 0, ldc == m), NULL, 0};
  if (sc_small(s, SC_R_GEMM, p, (uint64_t)m * (uint64_t)n * (uint64_t)(nops == 3 ? k : 1), ops,
               nops))
    return sc_host_blas.gemm(NULL, p, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  int rc = sc_take(s, ops, nops);
  /* alpha 0 (or k 0): C = beta C, as gemm with k 0 computes it; A and B
   * are not on the device, so C's copy stands for them (never read) */
  void *dc = ops[nops - 1].dev;
  if (rc == 0)
    rc = sc_give(s, ops, nops,
                 s->dev.gemm(s->dev.ctx, p, ta, tb, m, n, nops == 3 ? k : 0, alpha,
                             nops == 3 ? ops[0].dev : dc, lda, nops == 3 ? ops[1].dev : dc, ldb,
                             beta, dc, ldc));
  if (rc == 0) return 0;
  sc_count_host(s); /* overlap, no room, or the device failed */
  return sc_host_blas.gemm(NULL, p, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

int sc_gemv(struct sc_blas *s, enum sc_prec p, char t, int m, int n, double alpha, const void *a,
            int lda, const void *x, int incx, double beta, void *y, int incy)
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
      {a, sc_mat_bytes(p, m, n, lda), SC_READ, NULL, 0},
      {x, vec_bytes(p, lenx, incx), SC_READ, NULL, 0},
      {y, vec_bytes(p, leny, incy), out_use(beta != 0, incy == 1 || incy == -1), NULL, 0}};
  if (sc_small(s, SC_R_GEMV, p, (uint64_t)m * (uint64_t)n, ops, 3))
    return sc_host_blas.gemv(NULL, p, t, m, n, alpha, a, lda, x, incx, beta, y, incy);
  int rc = sc_take(s, ops, 3);
  if (rc == 0)
    rc = sc_give(s, ops, 3,
                 s->dev.gemv(s->dev.ctx, p, t, m, n, alpha, ops[0].dev, lda, ops[1].dev, incx, beta,
                             ops[2].dev, incy));
  if (rc == 0) return 0;
  sc_count_host(s); /* overlap, no room, or the device failed */
  return sc_host_blas.gemv(NULL, p, t, m, n, alpha, a, lda, x, incx, beta, y, incy);
}

int sc_axpy(struct sc_blas *s, enum sc_prec p, int n, double alpha, const void *x, int incx,
            void *y, int incy)
{
  if (n <= 0 || alpha == 0) return 0;
  struct sc_op ops[2] = {{x, vec_bytes(p, n, incx), SC_READ, NULL, 0},
                         {y, vec_bytes(p, n, incy), SC_READ_WRITE, NULL, 0}};
  if (sc_small(s, SC_R_AXPY, p, (uint64_t)n, ops, 2))
    return sc_host_blas.axpy(NULL, p, n, alpha, x, incx, y, incy);
  int rc = sc_take(s, ops, 2);
  if (rc == 0)
    rc = sc_give(s, ops, 2,
                 s->dev.axpy(s->dev.ctx, p, n, alpha, ops[0].dev, incx, ops[1].dev, incy));
  if (rc == 0) return 0;
  sc_count_host(s); /* overlap, no room, or the device failed */
  return sc_host_blas.axpy(NULL, p, n, alpha, x, incx, y, incy);
}

int sc_scal(struct sc_blas *s, enum sc_prec p, int n, double alpha, void *x, int incx)
{
  if (n <= 0 || incx <= 0) return 0;
  struct sc_op op = {x, vec_bytes(p, n, incx), SC_READ_WRITE, NULL, 0};
  if (sc_small(s, SC_R_SCAL, p, (uint64_t)n, &op, 1))
    return sc_host_blas.scal(NULL, p, n, alpha, x, incx);
  int rc = sc_take(s, &op, 1);
  if (rc == 0) rc = sc_give(s, &op, 1, s->dev.scal(s->dev.ctx, p, n, alpha, op.dev, incx));
  if (rc == 0) return 0;
  sc_count_host(s); /* overlap, no room, or the device failed */
  return sc_host_blas.scal(NULL, p, n, alpha, x, incx);
}

int sc_dot(struct sc_blas *s, enum sc_prec p, int n, const void *x, int incx, const void *y,
           int incy, double *out)
{
  *out = 0;
  if (n <= 0) return 0;
  struct sc_op ops[2] = {{x, vec_bytes(p, n, incx), SC_READ, NULL, 0},
                         {y, vec_bytes(p, n, incy), SC_READ, NULL, 0}};
  if (sc_small(s, SC_R_DOT, p, (uint64_t)n, ops, 2))
    return sc_host_blas.dot(NULL, p, n, x, incx, y, incy, out);
  int rc = sc_take(s, ops, 2);
  if (rc == 0)
    rc = sc_give(s, ops, 2, s->dev.dot(s->dev.ctx, p, n, ops[0].dev, incx, ops[1].dev, incy, out));
  if (rc == 0) return 0;
  sc_count_host(s); /* overlap, no room, or the device failed */
  return sc_host_blas.dot(NULL, p, n, x, incx, y, incy, out);
}
