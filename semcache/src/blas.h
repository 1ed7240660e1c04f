/*
 * blas.h - SemCache's BLAS and LAPACK calls over its cache (msi.h): each
 * call names its operands' ranges (a matrix from its first to its last
 * element with its leading dimension, a vector with its stride), takes
 * their device copies (sent only when stale), runs the routine on the
 * device backend, and gives the outputs back by the cache's protocol.  A
 * call whose operands overlap an output, or that cannot get device memory,
 * runs on the host BLAS instead, on host memory (the page protection
 * brings newer device bytes back first), and is counted.
 *
 * Both precisions: enum sc_prec says whether the void pointers are double
 * or float; alpha and beta come as double (a float converts exactly).
 * Arguments are checked as the reference BLAS checks them: a bad one is
 * not run, and the call returns the Fortran routine's parameter number
 * (what xerbla reports; the drop-in's entry points call it).  Column-major
 * (Fortran) order; the CBLAS entry points map row-major calls onto it.
 */
#ifndef SEMCACHE_BLAS_H
#define SEMCACHE_BLAS_H

#include "msi.h"

#ifdef __cplusplus
extern "C" {
#endif

enum sc_prec { SC_F64 = 0, SC_F32 = 1 }; /* double, float */

/* A float as a double (exactly), without the denormal-operand flag that
 * x86's conversion raises for a subnormal float: the program's own BLAS
 * never converts its float arguments, and reads none of a call with a bad
 * argument (netlib's testers pass uninitialised ones there, and gfortran
 * reports the flags raised at STOP). */
static inline double sc_widen(float f)
{
  union {
    float f;
    uint32_t u;
  } v = {f};
  if (v.u & 0x7f800000u) return (double)f;
  const double m = (double)(int32_t)(v.u & 0x007fffffu) * 0x1p-149; /* exact, normal */
  return v.u >> 31 ? -m : m;
}

/* The routines as a device runs them on device pointers (column-major;
 * trans 'N' or 'T'), every one finished when it returns (its result on the
 * device complete: the cache may hand the buffers to another thread's
 * copy).  0 or a negative errno.  getrf / getrs are LAPACK's (ipiv
 * 1-based, on the device; *info > 0: U(info, info) is zero). */
struct sc_device_blas {
  void *ctx;
  int (*gemm)(void *ctx, enum sc_prec p, char ta, char tb, int m, int n, int k, double alpha,
              const void *a, int lda, const void *b, int ldb, double beta, void *c, int ldc);
  int (*gemv)(void *ctx, enum sc_prec p, char t, int m, int n, double alpha, const void *a,
              int lda, const void *x, int incx, double beta, void *y, int incy);
  int (*axpy)(void *ctx, enum sc_prec p, int n, double alpha, const void *x, int incx, void *y,
              int incy);
  int (*scal)(void *ctx, enum sc_prec p, int n, double alpha, void *x, int incx);
  int (*dot)(void *ctx, enum sc_prec p, int n, const void *x, int incx, const void *y, int incy,
             double *out);
  int (*getrf)(void *ctx, enum sc_prec p, int n, void *a, int lda, int *ipiv, int *info);
  int (*getrs)(void *ctx, enum sc_prec p, int n, int nrhs, const void *a, int lda,
               const int *ipiv, void *b, int ldb);
  /* NULL, or run by the calling thread before a call takes its operands
   * (no cache lock held): what the thread's first device call would set
   * up (the GPU's per-thread runtime state allocates), so nothing the
   * backend does for it under the cache's lock allocates.  0 or -errno
   * (the call goes on: the backend copes, gpu.c's copier). */
  int (*prepare)(void *ctx);
};

/* The host BLAS and LAPACK on "device" copies in host memory (the cache's
 * CPU backend): the whole protocol without a GPU.  Also the host
 * fallback's routines (hostblas.c). */
extern const struct sc_device_blas sc_host_blas;

/* How calls use the cache: SC_CACHED keeps device copies between calls;
 * SC_NO_CACHE (SEMCACHE_CACHE=off) sends every call's operands and brings
 * its outputs back, keeping nothing: the plain offload baseline. */
enum sc_mode { SC_CACHED = 0, SC_NO_CACHE = 1 };

/* The routines, for their crossovers (crossover.c). */
enum sc_routine { SC_R_GEMM, SC_R_GEMV, SC_R_AXPY, SC_R_SCAL, SC_R_DOT, SC_R_GESV, SC_NROUTINES };

/* Per routine and precision, the order n of the smallest call that goes
 * to the device; a smaller one runs on the host BLAS on the program's own
 * memory (blas.c's route: unless an operand it reads is held valid on the
 * device).  The size of a call is measured as a square problem's n:
 * gemm m n k against n^3, gemv m n against n^2, a vector's length against
 * n, gesv's order against n.  All 0 (sc_blas_init's): every call goes to
 * the device. */
struct sc_crossover {
  uint32_t n[SC_NROUTINES][2]; /* [routine][enum sc_prec] */
};

/* The drop-in's defaults, measured on an H200 against the machine's
 * OpenBLAS (docs/semcache.md, "The crossover"): gemm and gesv only; level
 * 1 and 2 calls go to the device only where their operands are. */
void sc_crossover_defaults(struct sc_crossover *x);

/* Apply SEMCACHE_CROSSOVER's text to x: a number (every routine's n; 0:
 * every call to the device; "never": none by its size), or a comma list
 * of name=n where name is a routine (gemm, gemv, axpy, scal, dot, gesv:
 * both precisions) or one precision's (dgemm, sgemv, ...).  Entries that do not parse are skipped
 * and named in bad (one line, may be cut); 0 when all parsed, else -EINVAL. */
int sc_crossover_parse(struct sc_crossover *x, const char *text, char *bad, size_t badlen);

/* Whether a call of routine r whose size is `work` (gemm m n k, gemv m n,
 * a vector's n, gesv's n) is below its crossover. */
int sc_below_crossover(const struct sc_crossover *x, enum sc_routine r, enum sc_prec p,
                       uint64_t work);

struct sc_memo; /* gesv's remembered factorizations (gesv.c) */

struct sc_blas {
  struct sc_cache *cache;
  struct sc_device_blas dev;
  enum sc_mode mode;
  struct sc_memo *memo;    /* NULL: gesv factors every time */
  struct sc_crossover cross; /* all 0 after sc_blas_init: every call to the device */
  /* NULL, or what starts the device before the first call that goes
   * there (the drop-in opens the GPU only then: a program whose calls are
   * all below their crossovers never starts CUDA).  Fills dev and starts
   * the cache; 0, or nonzero when the device cannot run (every call then
   * runs on the host, counted in host_calls).  Called by every thread
   * that finds `started` 0 (it keeps its own once). */
  int (*start)(struct sc_blas *s);
  int started;             /* 1: dev and the cache run; acquire/release */
  /* counts, relaxed atomics (no order: read at exit or by tests) */
  uint64_t calls;          /* calls run on the device */
  uint64_t host_calls;     /* calls run on the host BLAS (overlap, no room) */
  uint64_t small_calls;    /* calls below their crossover, run on the host BLAS */
  uint64_t gesv_calls;     /* gesv calls, wherever they ran */
  uint64_t memo_hits;      /* gesv calls that reused remembered factors */
  uint64_t memo_ns;        /* time comparing A against remembered ones (and
                              putting a hit's factors into A) */
  uint64_t device_ns;      /* time in the device's routines, summed over the
                              calling threads: from a call's operands taken
                              (sc_take) to its release (sc_give) */
};

/* Start s over cache c (in SC_NO_CACHE too: the cache owns the device
 * memory, the lock for the backend's copies and the counters) with device routines dev; memo 1
 * remembers gesv's factors (SC_CACHED only).  Started (no start hook),
 * no crossover.  0 or -ENOMEM. */
int sc_blas_init(struct sc_blas *s, struct sc_cache *c, const struct sc_device_blas *dev,
                 enum sc_mode mode, int memo);

/* The memo's host budget by default: each remembered n x n matrix keeps
 * 2 n^2 elements (its A and its factors); least recently used ones are
 * dropped to stay within it. */
#define SC_MEMO_DEFAULT_BYTES ((size_t)1 << 30)

/* Set the memo's budget (SEMCACHE_MEMO_BYTES), before the first gesv: a
 * matrix whose 2 n^2 elements pass it is never remembered; up to 64
 * matrices are.  Nothing without a memo. */
void sc_memo_budget(struct sc_blas *s, size_t bytes);

/* The threads comparing a matrix of 1 MiB or more against a remembered
 * one (SEMCACHE_MEMO_THREADS; the caller and threads - 1 helpers, 1 to 8;
 * default 4 on 8 cores or more, else 1), before the first such compare. */
void sc_memo_threads(struct sc_blas *s, int threads);

/* Drop the remembered factors (their ranges leave the cache). */
void sc_blas_destroy(struct sc_blas *s);

/* gemm: C = alpha op(A) op(B) + beta C, op(A) m x k, op(B) k x n.
 * 0, a parameter number (1 transa ... 13 ldc) for a bad argument, or a
 * negative errno of the backend. */
int sc_gemm(struct sc_blas *s, enum sc_prec p, char ta, char tb, int m, int n, int k,
            double alpha, const void *a, int lda, const void *b, int ldb, double beta, void *c,
            int ldc);

/* gemv: y = alpha op(A) x + beta y, A m x n.  Parameter numbers 1 trans,
 * 2 m, 3 n, 6 lda, 8 incx, 11 incy. */
int sc_gemv(struct sc_blas *s, enum sc_prec p, char t, int m, int n, double alpha, const void *a,
            int lda, const void *x, int incx, double beta, void *y, int incy);

/* axpy: y += alpha x.  No parameter errors (n <= 0: nothing), as the
 * reference. */
int sc_axpy(struct sc_blas *s, enum sc_prec p, int n, double alpha, const void *x, int incx,
            void *y, int incy);

/* scal: x = alpha x.  No parameter errors (n <= 0 or incx <= 0: nothing,
 * as the reference). */
int sc_scal(struct sc_blas *s, enum sc_prec p, int n, double alpha, void *x, int incx);

/* dot into *out (0 for n <= 0; a float dot's value, exactly). */
int sc_dot(struct sc_blas *s, enum sc_prec p, int n, const void *x, int incx, const void *y,
           int incy, double *out);

/* gesv: solve A X = B (A n x n, B n x nrhs), A overwritten by its LU
 * factors and ipiv by the pivots, B by X; *info as LAPACK's (0, or i > 0:
 * U(i, i) is zero, A holds the factors and B is unchanged).  Parameter
 * numbers 1 n, 2 nrhs, 4 lda, 7 ldb (LAPACK's info is their negative).
 * With a memo (gesv.c), an A whose bytes equal those of a remembered
 * factorization's A takes its factors and runs only the solve. */
int sc_gesv(struct sc_blas *s, enum sc_prec p, int n, int nrhs, void *a, int lda, int *ipiv,
            void *b, int ldb, int *info);

#ifdef __cplusplus
}
#endif
#endif /* SEMCACHE_BLAS_H */
