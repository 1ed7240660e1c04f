/*
 * gesv.c - SemCache's gesv (blas.h), with memoized factors.
 *
 * A program that solves K x = b every step with an unchanged K copies K
 * into a work array first (gesv overwrites A with its LU factors), so the
 * address says nothing: what repeats is A's bytes.  The memo keeps, for up
 * to SC_MEMO_SLOTS matrices (least recently used replaced), a packed copy
 * of the A that was factored, its LU factors and its pivots.  A call whose
 * A has the same n, precision and bytes (memcmp column by column against
 * the kept copy: exact, stops at the first differing byte) takes the kept
 * factors into A and ipiv, as gesv's contract says A and ipiv end, and
 * runs only getrs.  Cost of the rule: per call a read of A and of the
 * copy (2 n^2 elements, against getrf's 2/3 n^3 flops) and on a hit the
 * write of the factors into A; per slot 2 n^2 elements of host memory.
 * A singular A (info > 0) is not remembered.  Matrices over
 * SC_MEMO_MAX_BYTES are not remembered either.
 *
 *   A (program) --memcmp--> slot.orig     hit: slot.lu -> A, slot.ipiv -> ipiv
 *                              |          miss: A -> slot.orig, slot.lu;
 *                    slot.lu, slot.ipiv         getrf on slot.lu's device copy
 *                    = ranges of the cache   then getrs(slot.lu, slot.ipiv, B)
 *
 * The factors live in the cache as ranges of the slot's own host buffers
 * (their own pages), so they stay on the device between solves, are
 * evicted like any matrix (written back to the slot first) and come back
 * when needed; reading slot.lu on the host (to put it in A) faults the
 * newer device bytes back once.  One lock over the memo: gesv calls run
 * one at a time.  Lock order: the memo's, then the cache's (the fault
 * handler takes only the cache's).
 */
#include "blas_ops.h"
#include "protect.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SC_MEMO_SLOTS 4
#define SC_MEMO_MAX_BYTES ((size_t)1 << 30)

struct sc_memo_slot {
  enum sc_prec p;
  int n;        /* 0: empty */
  void *orig;   /* A as it was passed, packed (leading dimension n) */
  void *lu;     /* its factors, packed: a range of the cache */
  int *ipiv;    /* its pivots: a range of the cache */
  size_t cap;   /* bytes orig and lu can hold */
  size_t ipcap; /* bytes ipiv can hold */
  uint64_t stamp;
};

struct sc_memo {
  pthread_mutex_t lock;
  uint64_t clock;
  struct sc_memo_slot slot[SC_MEMO_SLOTS];
};

static uint64_t now_ns(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

int sc_blas_init(struct sc_blas *s, struct sc_cache *c, const struct sc_device_blas *dev,
                 enum sc_mode mode, int memo)
{
  memset(s, 0, sizeof(*s));
  s->cache = c;
  s->dev = *dev;
  s->mode = mode;
  if (memo && mode == SC_CACHED) {
    s->memo = sc_pages_alloc(sizeof(*s->memo));
    if (!s->memo) return -ENOMEM;
    pthread_mutex_init(&s->memo->lock, NULL);
  }
  return 0;
}

/* Empty a slot: its ranges leave the cache (not written back), its
 * buffers go. */
static void slot_free(struct sc_blas *s, struct sc_memo_slot *sl)
{
  if (sl->lu) sc_forget(s->cache, sl->lu, sl->cap);
  if (sl->ipiv) sc_forget(s->cache, sl->ipiv, sl->ipcap);
  sc_pages_free(sl->orig);
  sc_pages_free(sl->lu);
  sc_pages_free(sl->ipiv);
  memset(sl, 0, sizeof(*sl));
}

void sc_blas_destroy(struct sc_blas *s)
{
  if (!s->memo) return;
  for (int i = 0; i < SC_MEMO_SLOTS; i++) slot_free(s, &s->memo->slot[i]);
  pthread_mutex_destroy(&s->memo->lock);
  sc_pages_free(s->memo);
  s->memo = NULL;
}

static int same_a(const struct sc_memo_slot *sl, enum sc_prec p, int n, const void *a, int lda)
{
  if (sl->n != n || sl->p != p) return 0;
  const size_t col = (size_t)n * sc_esize(p);
  for (int j = 0; j < n; j++)
    if (memcmp((const char *)a + (size_t)j * lda * sc_esize(p), (const char *)sl->orig + j * col,
               col))
      return 0;
  return 1;
}

/* Copy n x n between leading dimensions lds and ldd. */
static void copy_mat(enum sc_prec p, int n, void *d, int ldd, const void *src, int lds)
{
  const size_t es = sc_esize(p);
  for (int j = 0; j < n; j++)
    memcpy((char *)d + (size_t)j * ldd * es, (const char *)src + (size_t)j * lds * es, n * es);
}

/* Factor and solve without the memo (SC_NO_CACHE, no memo, or a matrix
 * too large to remember): A, ipiv and B are the call's operands. */
static int gesv_plain(struct sc_blas *s, enum sc_prec p, int n, int nrhs, void *a, int lda,
                      int *ipiv, void *b, int ldb, int *info)
{
  struct sc_op ops[3] = {{a, sc_mat_bytes(p, n, n, lda), SC_READ_WRITE, NULL},
                         {ipiv, (size_t)n * sizeof(int), SC_READ_WRITE, NULL},
                         {b, sc_mat_bytes(p, n, nrhs, ldb), SC_READ_WRITE, NULL}};
  const int nops = nrhs > 0 ? 3 : 2;
  int rc = s->dev.getrf ? sc_take(s, ops, nops) : 1; /* no device LAPACK: the host's */
  if (rc == 0) {
    rc = s->dev.getrf(s->dev.ctx, p, n, ops[0].dev, lda, ops[1].dev, info);
    if (rc == 0 && *info == 0 && nrhs > 0)
      rc = s->dev.getrs(s->dev.ctx, p, n, nrhs, ops[0].dev, lda, ops[1].dev, ops[2].dev, ldb);
    rc = sc_give(s, ops, nops, rc);
  }
  if (rc == 0) return 0;
  sc_count_host(s); /* overlap, no room, or the device failed: A and B as they came */
  sc_host_blas.getrf(NULL, p, n, a, lda, ipiv, info);
  return *info == 0 && nrhs > 0 ? sc_host_blas.getrs(NULL, p, n, nrhs, a, lda, ipiv, b, ldb) : 0;
}

/* A slot for a new factorization of n x n: an empty one or the least
 * recently used, with buffers for it; NULL when out of memory. */
static struct sc_memo_slot *slot_for(struct sc_blas *s, enum sc_prec p, int n)
{
  struct sc_memo_slot *v = NULL;
  for (int i = 0; i < SC_MEMO_SLOTS; i++) {
    struct sc_memo_slot *sl = &s->memo->slot[i];
    if (!v || (v->n && (!sl->n || sl->stamp < v->stamp))) v = sl;
  }
  const size_t bytes = (size_t)n * n * sc_esize(p);
  const size_t ipbytes = (size_t)n * sizeof(int);
  if (v->cap < bytes || v->ipcap < ipbytes) {
    slot_free(s, v);
    v->orig = sc_pages_alloc(bytes);
    v->lu = sc_pages_alloc(bytes);
    v->ipiv = sc_pages_alloc(ipbytes);
    v->cap = bytes;
    v->ipcap = ipbytes;
    if (!v->orig || !v->lu || !v->ipiv) {
      slot_free(s, v);
      return NULL;
    }
  } else {
    /* reused buffers: their old ranges leave the cache (a different n is
     * another range) */
    sc_forget(s->cache, v->lu, v->cap);
    sc_forget(s->cache, v->ipiv, v->ipcap);
  }
  v->n = 0;
  v->p = p;
  return v;
}

/* Factor A into a new slot: 0 with *info (the slot kept only when 0). */
static int factor_into(struct sc_blas *s, struct sc_memo_slot *sl, enum sc_prec p, int n,
                       const void *a, int lda, int *info)
{
  const size_t bytes = (size_t)n * n * sc_esize(p);
  copy_mat(p, n, sl->orig, n, a, lda);
  copy_mat(p, n, sl->lu, n, a, lda);
  struct sc_op ops[2] = {{sl->lu, bytes, SC_READ_WRITE, NULL},
                         {sl->ipiv, (size_t)n * sizeof(int), SC_READ_WRITE, NULL}};
  int rc = sc_take(s, ops, 2);
  if (rc == 0)
    rc = sc_give(s, ops, 2, s->dev.getrf(s->dev.ctx, p, n, ops[0].dev, n, ops[1].dev, info));
  if (rc) { /* no room, or the device failed: the slot's copy of A is intact */
    sc_count_host(s);
    rc = sc_host_blas.getrf(NULL, p, n, sl->lu, n, sl->ipiv, info);
  }
  sl->n = rc == 0 && *info == 0 ? n : 0;
  return rc;
}

/* getrs with a slot's factors on B. */
static int solve_with(struct sc_blas *s, struct sc_memo_slot *sl, int nrhs, void *b, int ldb)
{
  const enum sc_prec p = sl->p;
  const int n = sl->n;
  struct sc_op ops[3] = {{sl->lu, (size_t)n * n * sc_esize(p), SC_READ, NULL},
                         {sl->ipiv, (size_t)n * sizeof(int), SC_READ, NULL},
                         {b, sc_mat_bytes(p, n, nrhs, ldb), SC_READ_WRITE, NULL}};
  int rc = sc_take(s, ops, 3);
  if (rc == 0)
    rc = sc_give(s, ops, 3,
                 s->dev.getrs(s->dev.ctx, p, n, nrhs, ops[0].dev, n, ops[1].dev, ops[2].dev, ldb));
  if (rc == 0) return 0;
  sc_count_host(s); /* no room, or the device failed: B as it came */
  return sc_host_blas.getrs(NULL, p, n, nrhs, sl->lu, n, sl->ipiv, b, ldb);
}

static int gesv_memo(struct sc_blas *s, enum sc_prec p, int n, int nrhs, void *a, int lda,
                     int *ipiv, void *b, int ldb, int *info)
{
  struct sc_memo *m = s->memo;
  pthread_mutex_lock(&m->lock);
  const uint64_t t0 = now_ns();
  struct sc_memo_slot *sl = NULL;
  for (int i = 0; i < SC_MEMO_SLOTS && !sl; i++)
    if (same_a(&m->slot[i], p, n, a, lda)) sl = &m->slot[i];
  __atomic_add_fetch(&s->memo_ns, now_ns() - t0, __ATOMIC_RELAXED);
  int rc = 0;
  if (sl) {
    __atomic_add_fetch(&s->memo_hits, 1, __ATOMIC_RELAXED);
  } else if (!(sl = slot_for(s, p, n))) {
    pthread_mutex_unlock(&m->lock);
    return gesv_plain(s, p, n, nrhs, a, lda, ipiv, b, ldb, info);
  } else if ((rc = factor_into(s, sl, p, n, a, lda, info)) != 0) {
    pthread_mutex_unlock(&m->lock);
    return rc;
  }
  /* gesv's contract: A holds the factors and ipiv the pivots (a singular
   * A's too: then the slot is left empty, and B untouched) */
  copy_mat(p, n, a, lda, sl->lu, n);
  memcpy(ipiv, sl->ipiv, (size_t)n * sizeof(int));
  if (*info == 0 && nrhs > 0) rc = solve_with(s, sl, nrhs, b, ldb);
  if (*info == 0) sl->stamp = ++m->clock;
  pthread_mutex_unlock(&m->lock);
  return rc;
}

static int maxi(int a, int b)
{
  return a > b ? a : b;
}

int sc_gesv(struct sc_blas *s, enum sc_prec p, int n, int nrhs, void *a, int lda, int *ipiv,
            void *b, int ldb, int *info)
{
  *info = 0;
  if (n < 0) return 1;
  if (nrhs < 0) return 2;
  if (lda < maxi(1, n)) return 4;
  if (ldb < maxi(1, n)) return 7;
  if (n == 0) return 0;
  __atomic_add_fetch(&s->gesv_calls, 1, __ATOMIC_RELAXED);
  if (s->memo && (size_t)n * n * sc_esize(p) <= SC_MEMO_MAX_BYTES && s->dev.getrf)
    return gesv_memo(s, p, n, nrhs, a, lda, ipiv, b, ldb, info);
  return gesv_plain(s, p, n, nrhs, a, lda, ipiv, b, ldb, info);
}
