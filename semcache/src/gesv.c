/*
 * gesv.c - SemCache's gesv (blas.h), with memoized factors.
 *
 * A program that solves K x = b every step with an unchanged K copies K
 * into a work array first (gesv overwrites A with its LU factors), so the
 * address says nothing: what repeats is A's bytes.  The memo keeps, for as
 * many matrices as its byte budget holds (SEMCACHE_MEMO_BYTES, 1 GiB by
 * default; at most SC_MEMO_SLOTS; least recently used dropped for room),
 * a packed copy of the A that was factored, its LU factors and its
 * pivots.  A call whose A has the same n, precision and bytes (memcmp
 * column by column against the kept copy: exact, the first column first,
 * stops at the first differing byte; 1 MiB and more in column parts over
 * helper threads, SEMCACHE_MEMO_THREADS) takes the kept
 * factors into A and ipiv, as gesv's contract says A and ipiv end (each
 * column of A replaced as soon as it compared equal, while it is in the
 * core's cache; put back from the kept copy if a later column differs),
 * and runs only getrs.  Cost of the rule: per call a read of A and of the
 * copy (2 n^2 elements, against getrf's 2/3 n^3 flops) and on a hit a
 * read of the factors and the write of A; per slot 2 n^2 elements of
 * host memory.
 * A singular A (info > 0) is not remembered, nor a matrix whose 2 n^2
 * elements pass the budget.
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
#include <unistd.h>

#define SC_MEMO_SLOTS 64
#define SC_MEMO_PAR_BYTES ((size_t)1 << 20) /* matrices compared in parallel */

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

/* A column job on A, split in column parts over the calling thread (part
 * 0) and the helpers (parts 1 ..) when A is large: memory-bound, and one
 * core does not draw the memory's bandwidth.  The jobs:
 *   SC_JOB_HIT  compare each column of A with the kept copy and, while
 *               equal, put the kept factors' column in its place (gesv's
 *               contract: A ends holding them), so each column of A is
 *               read and written while it is in the core's cache; a part
 *               stops at the first difference any part finds, and the
 *               columns it had replaced get the kept copy back (they were
 *               equal to it): A as it came
 *   SC_JOB_PUT  the factors' columns into A (a new factorization's)
 * Under the memo's lock, one job at a time. */
enum sc_job { SC_JOB_HIT, SC_JOB_PUT };
#define SC_MEMO_MAX_THREADS 8
struct sc_compare {
  pthread_mutex_t m;      /* gen, pending, started; the fields below are
                             written before gen++ and read after it */
  pthread_cond_t go, done;
  uint64_t gen;           /* compares asked for */
  int pending;            /* helpers not done with this one */
  int threads;            /* of the compare, the caller included */
  int started, helpers, tried, stop;
  int n, parts;
  enum sc_job job;
  char *a;                /* A */
  const char *orig, *lu;  /* the kept copy and factors, packed */
  size_t lda_b, col;      /* A's column stride, a column's bytes */
  int differs;            /* atomics */
  int from[SC_MEMO_MAX_THREADS], upto[SC_MEMO_MAX_THREADS]; /* a HIT part's
                             columns [from, upto) hold factors; each part
                             writes its own, read after the job's end */
};

struct sc_memo {
  pthread_mutex_t lock;
  struct sc_compare cmp;
  uint64_t clock;
  size_t budget;  /* host bytes the slots' orig and lu may hold in all */
  size_t held;    /* what they hold (2 cap each) */
  struct sc_memo_slot slot[SC_MEMO_SLOTS];
};

static void stop_helpers(struct sc_memo *m);

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
  s->started = 1;
  if (memo && mode == SC_CACHED) {
    s->memo = sc_pages_alloc(sizeof(*s->memo));
    if (!s->memo) return -ENOMEM;
    pthread_mutex_init(&s->memo->lock, NULL);
    s->memo->budget = SC_MEMO_DEFAULT_BYTES;
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    s->memo->cmp.threads = cores >= 8 ? 4 : 1;
  }
  return 0;
}

void sc_memo_threads(struct sc_blas *s, int threads)
{
  if (s->memo && !s->memo->cmp.tried)
    s->memo->cmp.threads = threads < 1 ? 1 : threads > SC_MEMO_MAX_THREADS ? SC_MEMO_MAX_THREADS : threads;
}

void sc_memo_budget(struct sc_blas *s, size_t bytes)
{
  if (!s->memo) return;
  pthread_mutex_lock(&s->memo->lock);
  s->memo->budget = bytes;
  pthread_mutex_unlock(&s->memo->lock);
}

/* Whether an n x n matrix of p can be remembered at all: its slot (2 n^2
 * elements) within the budget. */
static int memo_fits(const struct sc_memo *m, enum sc_prec p, int n)
{
  return (size_t)n * n * sc_esize(p) <= m->budget / 2;
}

/* Empty a slot: its ranges leave the cache (not written back), its
 * buffers go. */
static void slot_free(struct sc_blas *s, struct sc_memo_slot *sl)
{
  s->memo->held -= 2 * sl->cap;
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
  stop_helpers(s->memo);
  for (int i = 0; i < SC_MEMO_SLOTS; i++) slot_free(s, &s->memo->slot[i]);
  pthread_mutex_destroy(&s->memo->lock);
  sc_pages_free(s->memo);
  s->memo = NULL;
}

/* Part k of the job: columns [j0, j1). */
static void run_part(struct sc_compare *w, int k, int j0, int j1)
{
  int j = j0;
  for (; j < j1; j++) {
    char *aj = w->a + (size_t)j * w->lda_b;
    if (w->job == SC_JOB_HIT) {
      if (__atomic_load_n(&w->differs, __ATOMIC_RELAXED)) break;
      if (memcmp(aj, w->orig + (size_t)j * w->col, w->col)) {
        __atomic_store_n(&w->differs, 1, __ATOMIC_RELAXED);
        break;
      }
    }
    memcpy(aj, w->lu + (size_t)j * w->col, w->col);
  }
  w->from[k] = j0;
  w->upto[k] = j;
}

/* A helper: part k of each job it is woken for. */
static void *helper_main(void *arg)
{
  struct sc_memo *m = arg;
  struct sc_compare *w = &m->cmp;
  pthread_mutex_lock(&w->m);
  const int k = ++w->started;
  uint64_t seen = 0; /* compares start after every helper was made */
  for (;;) {
    while (w->gen == seen && !w->stop) pthread_cond_wait(&w->go, &w->m);
    if (w->stop) break;
    seen = w->gen;
    const int j0 = (int)((int64_t)w->n * k / w->parts);
    const int j1 = (int)((int64_t)w->n * (k + 1) / w->parts);
    pthread_mutex_unlock(&w->m);
    run_part(w, k, j0, j1);
    pthread_mutex_lock(&w->m);
    if (--w->pending == 0) pthread_cond_signal(&w->done);
  }
  w->helpers--;
  pthread_cond_signal(&w->done);
  pthread_mutex_unlock(&w->m);
  return NULL;
}

/* Stop the helpers and wait until none touches the memo (it is freed). */
static void stop_helpers(struct sc_memo *m)
{
  struct sc_compare *w = &m->cmp;
  if (!w->tried) return;
  pthread_mutex_lock(&w->m);
  w->stop = 1;
  pthread_cond_broadcast(&w->go);
  while (w->helpers) pthread_cond_wait(&w->done, &w->m);
  pthread_mutex_unlock(&w->m);
}

/* Start the helpers once (the memo's lock held; no cache lock): threads
 * - 1 of them.  Those that start are used. */
static void start_helpers(struct sc_memo *m)
{
  struct sc_compare *w = &m->cmp;
  const int want = w->threads - 1;
  w->tried = 1;
  pthread_mutex_init(&w->m, NULL);
  pthread_cond_init(&w->go, NULL);
  pthread_cond_init(&w->done, NULL);
  pthread_mutex_lock(&w->m);
  for (int i = 0; i < want; i++) {
    pthread_t t;
    if (pthread_create(&t, NULL, helper_main, m)) break;
    pthread_detach(t);
    w->helpers++;
  }
  pthread_mutex_unlock(&w->m);
}

/* Run the job set up in m->cmp on columns [first, n): over the helpers
 * when A is large (started at the first such job), else on the caller.
 * A HIT that found a difference puts the kept copy back where its parts
 * had put factors.  Returns 1 when every column was equal (PUT: 1). */
static int run_job(struct sc_memo *m, int n, int first, size_t bytes)
{
  struct sc_compare *w = &m->cmp;
  if (bytes >= SC_MEMO_PAR_BYTES && !w->tried && w->threads > 1) start_helpers(m);
  const int parts = bytes >= SC_MEMO_PAR_BYTES ? w->helpers + 1 : 1;
  __atomic_store_n(&w->differs, 0, __ATOMIC_RELAXED);
  if (parts == 1) {
    run_part(w, 0, first, n);
  } else {
    pthread_mutex_lock(&w->m);
    w->n = n;
    w->parts = parts;
    w->pending = parts - 1;
    w->gen++;
    pthread_cond_broadcast(&w->go);
    pthread_mutex_unlock(&w->m);
    run_part(w, 0, first, (int)((int64_t)n / parts));
    /* the helpers' columns and from/upto are theirs until pending is 0
     * (their stores happen before their unlock of w->m, our lock after) */
    pthread_mutex_lock(&w->m);
    while (w->pending) pthread_cond_wait(&w->done, &w->m);
    pthread_mutex_unlock(&w->m);
  }
  if (!__atomic_load_n(&w->differs, __ATOMIC_RELAXED)) return 1;
  for (int k = 0; k < parts; k++)
    for (int j = w->from[k]; j < w->upto[k]; j++)
      memcpy(w->a + (size_t)j * w->lda_b, w->orig + (size_t)j * w->col, w->col);
  return 0;
}

/* Whether A holds the bytes of slot sl's kept copy; if so, A holds its
 * factors now (the caller puts column 0, compared first), else A is as
 * it came. */
static int take_hit(struct sc_memo *m, const struct sc_memo_slot *sl, enum sc_prec p, int n,
                    void *a, int lda)
{
  if (sl->n != n || sl->p != p) return 0;
  struct sc_compare *w = &m->cmp;
  const size_t col = (size_t)n * sc_esize(p);
  /* the first column alone first: a changed matrix usually differs there */
  if (memcmp(a, sl->orig, col)) return 0;
  w->job = SC_JOB_HIT;
  w->a = a;
  w->orig = sl->orig;
  w->lu = sl->lu;
  w->lda_b = (size_t)lda * sc_esize(p);
  w->col = col;
  if (!run_job(m, n, 1, col * n)) return 0;
  memcpy(a, sl->lu, col);
  return 1;
}

/* The slot's new factors (or a singular A's) into A (leading dimension
 * lda), as gesv leaves them.  Reading them may fault their newest bytes
 * back from the device (on whichever thread reads first; the others wait
 * in the handler). */
static void put_factors(struct sc_memo *m, const struct sc_memo_slot *sl, enum sc_prec p, int n,
                        void *a, int lda)
{
  struct sc_compare *w = &m->cmp;
  const size_t col = (size_t)n * sc_esize(p);
  w->job = SC_JOB_PUT;
  w->a = a;
  w->lu = sl->lu;
  w->lda_b = (size_t)lda * sc_esize(p);
  w->col = col;
  run_job(m, n, 0, col * n);
}

/* Copy n x n between leading dimensions lds and ldd. */
static void copy_mat(enum sc_prec p, int n, void *d, int ldd, const void *src, int lds)
{
  const size_t es = sc_esize(p);
  for (int j = 0; j < n; j++)
    memcpy((char *)d + (size_t)j * ldd * es, (const char *)src + (size_t)j * lds * es, n * es);
}

/* gesv by the host's getrf and getrs on the program's memory. */
static int gesv_host(enum sc_prec p, int n, int nrhs, void *a, int lda, int *ipiv, void *b,
                     int ldb, int *info)
{
  sc_host_blas.getrf(NULL, p, n, a, lda, ipiv, info);
  return *info == 0 && nrhs > 0 ? sc_host_blas.getrs(NULL, p, n, nrhs, a, lda, ipiv, b, ldb) : 0;
}

/* Factor and solve without the memo (SC_NO_CACHE, no memo, or a matrix
 * too large to remember): A, ipiv and B are the call's operands. */
static int gesv_plain(struct sc_blas *s, enum sc_prec p, int n, int nrhs, void *a, int lda,
                      int *ipiv, void *b, int ldb, int *info)
{
  struct sc_op ops[3] = {{a, sc_mat_bytes(p, n, n, lda), SC_READ_WRITE, NULL, 0},
                         {ipiv, (size_t)n * sizeof(int), SC_READ_WRITE, NULL, 0},
                         {b, sc_mat_bytes(p, n, nrhs, ldb), SC_READ_WRITE, NULL, 0}};
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
  return gesv_host(p, n, nrhs, a, lda, ipiv, b, ldb, info);
}

/* The least recently used slot holding a factorization, or NULL. */
static struct sc_memo_slot *lru_slot(struct sc_memo *m)
{
  struct sc_memo_slot *v = NULL;
  for (int i = 0; i < SC_MEMO_SLOTS; i++)
    if (m->slot[i].n && (!v || m->slot[i].stamp < v->stamp)) v = &m->slot[i];
  return v;
}

/* A slot for a new factorization of n x n, with buffers for it: an empty
 * slot whose buffers fit it, else an empty one given new buffers once the
 * budget has room (the least recently used slots emptied for it), else
 * the least recently used.  NULL when out of memory. */
static struct sc_memo_slot *slot_for(struct sc_blas *s, enum sc_prec p, int n)
{
  struct sc_memo *m = s->memo;
  const size_t bytes = (size_t)n * n * sc_esize(p);
  const size_t ipbytes = (size_t)n * sizeof(int);
  struct sc_memo_slot *v = NULL, *fit = NULL;
  for (int i = 0; i < SC_MEMO_SLOTS && !fit; i++) {
    struct sc_memo_slot *sl = &m->slot[i];
    if (sl->n) continue;
    if (sl->cap >= bytes && sl->ipcap >= ipbytes) fit = sl;
    else if (!v || (v->cap && !sl->cap)) v = sl; /* rather one with no buffers */
  }
  if (fit) {
    v = fit;
  } else {
    if (v) slot_free(s, v); /* its small buffers count against the budget no more */
    while (m->held + 2 * bytes > m->budget) {
      struct sc_memo_slot *old = lru_slot(m);
      if (!old) break; /* memo_fits: an empty memo has room */
      slot_free(s, old);
      if (!v) v = old;
    }
    if (!v) v = lru_slot(m); /* every slot taken: the least recently used */
  }
  if (v->cap < bytes || v->ipcap < ipbytes) {
    slot_free(s, v);
    v->orig = sc_pages_alloc(bytes);
    v->lu = sc_pages_alloc(bytes);
    v->ipiv = sc_pages_alloc(ipbytes);
    v->cap = bytes;
    v->ipcap = ipbytes;
    m->held += 2 * bytes;
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
  struct sc_op ops[2] = {{sl->lu, bytes, SC_READ_WRITE, NULL, 0},
                         {sl->ipiv, (size_t)n * sizeof(int), SC_READ_WRITE, NULL, 0}};
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
  struct sc_op ops[3] = {{sl->lu, (size_t)n * n * sc_esize(p), SC_READ, NULL, 0},
                         {sl->ipiv, (size_t)n * sizeof(int), SC_READ, NULL, 0},
                         {b, sc_mat_bytes(p, n, nrhs, ldb), SC_READ_WRITE, NULL, 0}};
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
    if (take_hit(m, &m->slot[i], p, n, a, lda)) sl = &m->slot[i];
  __atomic_add_fetch(&s->memo_ns, now_ns() - t0, __ATOMIC_RELAXED);
  int rc = 0;
  /* gesv's contract: A holds the factors and ipiv the pivots (a singular
   * A's too: then the slot is left empty, and B untouched).  A hit put
   * the factors into A as it compared. */
  if (sl) {
    __atomic_add_fetch(&s->memo_hits, 1, __ATOMIC_RELAXED);
  } else if (!(sl = slot_for(s, p, n))) {
    pthread_mutex_unlock(&m->lock);
    return gesv_plain(s, p, n, nrhs, a, lda, ipiv, b, ldb, info);
  } else if ((rc = factor_into(s, sl, p, n, a, lda, info)) != 0) {
    pthread_mutex_unlock(&m->lock);
    return rc;
  } else {
    put_factors(m, sl, p, n, a, lda);
  }
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
  const struct sc_op ops[3] = {{a, sc_mat_bytes(p, n, n, lda), SC_READ_WRITE, NULL, 0},
                               {ipiv, (size_t)n * sizeof(int), SC_WRITE, NULL, 0},
                               {b, sc_mat_bytes(p, n, nrhs, ldb), SC_READ_WRITE, NULL, 0}};
  if (sc_small(s, SC_R_GESV, p, (uint64_t)n, ops, nrhs > 0 ? 3 : 2))
    return gesv_host(p, n, nrhs, a, lda, ipiv, b, ldb, info);
  if (!sc_device_up(s)) {
    sc_count_host(s);
    return gesv_host(p, n, nrhs, a, lda, ipiv, b, ldb, info);
  }
  if (s->memo && memo_fits(s->memo, p, n) && s->dev.getrf)
    return gesv_memo(s, p, n, nrhs, a, lda, ipiv, b, ldb, info);
  return gesv_plain(s, p, n, nrhs, a, lda, ipiv, b, ldb, info);
}
