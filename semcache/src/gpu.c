/*
 * gpu.c - SemCache's GPU device (gpu.h): the CUDA runtime, cuBLAS and
 * cuSOLVER through dlopen.  The toolkit's headers give the types and the
 * routines' signatures (__typeof__); nothing is linked, so the drop-in
 * loads on machines without CUDA.
 *
 * Streams and handles:
 *
 *   program thread T1 --- cuBLAS handle h1, cuSOLVER handle, stream s1 ---+
 *   program thread T2 --- cuBLAS handle h2, ...              stream s2 ---+-- one GPU
 *   the cache (under its lock) -- copy stream + 2 pinned staging buffers -+
 *
 * A handle and a non-blocking stream per thread (made at the thread's
 * first call, outside the cache's lock; destroyed at its exit), so threads
 * compute at once without a lock of ours.  Every routine synchronizes its
 * stream before it returns, and every copy its copy stream: when the cache
 * hands a device copy on (to another thread's call, to a write-back,
 * to the pool after an eviction) no work on it is in flight, which is the
 * only ordering between the streams.
 *
 * The cache's lock, and how this backend keeps a fault handler that waits
 * for it from deadlocking: a CPU access to a protected page runs the
 * SIGSEGV handler, which takes the cache's lock, on whatever thread
 * faulted, and that thread may hold another lock then.  The cache protects
 * only a range's interior pages (msi.h), so the C library's allocator
 * never faults (its chunk headers lie on edge pages), and neither does a
 * CUDA call that allocates beside a program's matrix while holding the
 * driver's lock (the four-thread hang, when edge pages were protected: the
 * fault waited for the cache's lock, whose holder waited for a copy that
 * needed the driver's lock).  Still, whoever holds the cache's lock must
 * not fault itself nor wait for a lock a faulting thread may hold.  The
 * backend calls made under the cache's lock are alloc, free, to_dev and
 * to_host (msi.h); here they are:
 *   - alloc / free: the pool (pool.c), bookkeeping on its own mmap'ed
 *     pages over one cudaMalloc made at sc_gpu_open: no CUDA call, no
 *     malloc.  (cudaMalloc and cudaFree may allocate host memory and take
 *     the driver's locks; they never run under the cache's lock.)
 *   - to_dev / to_host: memcpy (sc_host_store to the host: past the pages'
 *     protection when the cache asks) between the host range and two
 *     pinned staging buffers made at open, and cudaMemcpyAsync between
 *     those and the device on the copy stream, with cudaEventRecord /
 *     cudaEventSynchronize / cudaStreamSynchronize.  A call's own takes
 *     and gives make them on the calling thread, whose runtime state is
 *     made before its call takes its operands (d_prepare, outside the
 *     lock); the fault handler, which may have interrupted malloc, and a
 *     thread whose state could not be made hand them to the copier thread
 *     (by_copier, started at open), so a CUDA call's occasional malloc
 *     never runs on a thread that may have faulted inside malloc.  One
 *     copy of each direction at open ran what the runtime initializes
 *     lazily.
 * What may allocate - handle and stream creation, cuBLAS and cuSOLVER
 * calls with their workspaces, cudaMalloc - runs without the cache's lock.
 * A free() or munmap() the CUDA libraries make inside our routines
 * (sc_gpu_busy set) skips the cache (dropin.c): it is never a program's
 * matrix, and a library holding its own lock there must not wait for the
 * cache's lock, whose holder may wait for that library.  What remains: a
 * program that hands a cached matrix to CUDA itself (docs/semcache.md,
 * "Known limits").
 */
#include "gpu.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusolverDn.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pool.h"
#include "protect.h"

__thread int sc_gpu_busy __attribute__((tls_model("initial-exec")));

/* The calling thread's CUDA runtime state is made (me(), or the opening
 * thread): d_prepare has nothing to do.  (A thread's first CUDA call sets
 * up the runtime's per-thread state, which mallocs: made before the
 * routine takes its operands, never under the cache's lock.) */
static __thread int t_ready __attribute__((tls_model("initial-exec")));

#define SC_STAGE_BYTES ((size_t)4 << 20)
#define SC_POOL_EXTENTS 65536

/* clang-format off */
#define SC_CUDART(X)                                                                   \
  X(cudaGetDeviceCount) X(cudaGetDevice) X(cudaSetDevice) X(cudaMalloc) X(cudaFree)    \
  X(cudaHostAlloc) X(cudaMemGetInfo) X(cudaMemcpyAsync) X(cudaStreamCreateWithFlags)  \
  X(cudaStreamSynchronize) X(cudaStreamDestroy) X(cudaEventCreateWithFlags)           \
  X(cudaEventRecord) X(cudaEventSynchronize)
#define SC_CUBLAS(X)                                                                   \
  X(cublasCreate_v2) X(cublasDestroy_v2) X(cublasSetStream_v2) X(cublasDgemm_v2)       \
  X(cublasSgemm_v2) X(cublasDgemv_v2) X(cublasSgemv_v2) X(cublasDaxpy_v2)              \
  X(cublasSaxpy_v2) X(cublasDscal_v2) X(cublasSscal_v2) X(cublasDdot_v2) X(cublasSdot_v2)
#define SC_CUSOLVER(X)                                                                 \
  X(cusolverDnCreate) X(cusolverDnDestroy) X(cusolverDnSetStream)                      \
  X(cusolverDnDgetrf_bufferSize) X(cusolverDnSgetrf_bufferSize) X(cusolverDnDgetrf)   \
  X(cusolverDnSgetrf) X(cusolverDnDgetrs) X(cusolverDnSgetrs)
/* clang-format on */

#define SC_MEMBER(f) __typeof__(&f) f;

struct sc_gpu {
  struct {
    SC_CUDART(SC_MEMBER) SC_CUBLAS(SC_MEMBER) SC_CUSOLVER(SC_MEMBER)
  } fn;
  int device;
  int have_solver;
  void *base;          /* the pool's device memory */
  struct sc_pool pool; /* under the cache's lock */
  cudaStream_t copy;   /* the cache's copies, under its lock */
  void *stage[2];      /* pinned */
  cudaEvent_t done[2]; /* the last copy out of / into stage[i] finished */
  pthread_key_t key;   /* struct gpu_thread of the calling thread */
  struct copier {      /* runs copies for a lock holder that is not ready */
    pthread_mutex_t m;
    pthread_cond_t cv;
    enum { CP_IDLE, CP_ASKED, CP_DONE } state;
    int to_dev, rc;
    enum sc_store how;
    void *dst;
    const void *src;
    size_t bytes;
  } cp;
};

/* A thread's handles and stream, made at its first call. */
struct gpu_thread {
  struct sc_gpu *g;
  cublasHandle_t blas;
  cusolverDnHandle_t solver; /* at its first gesv */
  cudaStream_t stream;
  void *work; /* cuSOLVER's workspace after devInfo (its first 256 bytes) */
  size_t work_bytes;
};

/* ---- loading ---- */

/* The library by its versioned name, its unversioned one, or in the
 * toolkit's usual folder. */
static void *open_lib(const char *versioned, const char *plain)
{
  char path[128];
  const char *names[3] = {versioned, plain, path};
  snprintf(path, sizeof(path), "/usr/local/cuda/lib64/%s", versioned);
  for (int i = 0; i < 3; i++) {
    void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (h) return h;
  }
  return NULL;
}

/* Look the routines of one library up: the first missing name, or NULL. */
#define SC_LOOKUP(f)                                                                               \
  if (!(g->fn.f = (__typeof__(g->fn.f))dlsym(h, #f)) && !missing) missing = #f;

static const char *load_cudart(struct sc_gpu *g, void *h)
{
  const char *missing = NULL;
  SC_CUDART(SC_LOOKUP)
  return missing;
}

static const char *load_cublas(struct sc_gpu *g, void *h)
{
  const char *missing = NULL;
  SC_CUBLAS(SC_LOOKUP)
  return missing;
}

static const char *load_cusolver(struct sc_gpu *g, void *h)
{
  const char *missing = NULL;
  SC_CUSOLVER(SC_LOOKUP)
  return missing;
}

/* ---- the backend: pool memory, staged copies (under the cache's lock) ---- */

static int g_alloc(void *ctx, size_t bytes, void **dev)
{
  struct sc_gpu *g = ctx;
  uintptr_t at;
  int rc = sc_pool_alloc(&g->pool, bytes, &at);
  if (rc == 0) *dev = (void *)at;
  return rc;
}

static void g_free(void *ctx, void *dev, size_t bytes)
{
  struct sc_gpu *g = ctx;
  sc_pool_free(&g->pool, (uintptr_t)dev, bytes);
}

static int copy_to_dev(struct sc_gpu *g, void *dev, const void *host, size_t bytes);
static int copy_to_host(struct sc_gpu *g, void *host, const void *dev, size_t bytes,
                        enum sc_store how);

/* Every copy under the cache's lock is made by the copier thread: the
 * lock's holder makes no CUDA call itself.  The holder may be a fault
 * handler on a thread that holds a lock of its own where it faulted, or a
 * thread whose first CUDA call would malloc beside its own matrices (the
 * first four-thread abort, when edge pages were protected).  The copier's
 * CUDA state is made at open; it touches no program memory but the range
 * the holder opened, stores past its protection (to_host) or made
 * readable (to_dev); a fault on it aborts (sc_fault_fatal).  One request
 * at a time: the cache's lock is held.  glibc's mutex and condition
 * variable do not allocate. */
static int by_copier(struct sc_gpu *g, int to_dev, void *dst, const void *src, size_t bytes,
                     enum sc_store how)
{
  struct copier *cp = &g->cp;
  pthread_mutex_lock(&cp->m);
  cp->to_dev = to_dev;
  cp->how = how;
  cp->dst = dst;
  cp->src = src;
  cp->bytes = bytes;
  cp->state = CP_ASKED;
  pthread_cond_broadcast(&cp->cv);
  while (cp->state != CP_DONE) pthread_cond_wait(&cp->cv, &cp->m);
  const int rc = cp->rc;
  cp->state = CP_IDLE;
  pthread_mutex_unlock(&cp->m);
  return rc;
}

static void *copier_main(void *arg)
{
  struct sc_gpu *g = arg;
  struct copier *cp = &g->cp;
  sc_gpu_busy = 1; /* its frees are the CUDA libraries' (dropin.c) */
  t_ready = 1;
  sc_fault_fatal = 1; /* its fault would wait for its requester's lock */
  g->fn.cudaSetDevice(g->device); /* the copy stream's device */
  pthread_mutex_lock(&cp->m);
  for (;;) {
    while (cp->state != CP_ASKED) pthread_cond_wait(&cp->cv, &cp->m);
    cp->rc = cp->to_dev ? copy_to_dev(g, cp->dst, cp->src, cp->bytes)
                        : copy_to_host(g, cp->dst, cp->src, cp->bytes, cp->how);
    cp->state = CP_DONE;
    pthread_cond_broadcast(&cp->cv);
  }
  return NULL;
}

/* Whether the lock's holder may make a copy's CUDA calls itself: its
 * runtime state is made (nothing of the runtime's to set up, so no malloc
 * on its first use), and it is not in the fault handler (which may have
 * interrupted the C library's allocator).  A call's own takes and gives
 * are so: they skip the copier's two thread switches (its wait on the
 * driver is the same as the copier's would be). */
static int copy_here(void)
{
  return t_ready && !sc_in_fault;
}

static int g_to_dev(void *ctx, void *dev, const void *host, size_t bytes)
{
  return copy_here() ? copy_to_dev(ctx, dev, host, bytes)
                     : by_copier(ctx, 1, dev, host, bytes, SC_STORE_OPEN);
}

static int g_to_host(void *ctx, void *host, const void *dev, size_t bytes, enum sc_store how)
{
  return copy_here() ? copy_to_host(ctx, host, dev, bytes, how)
                     : by_copier(ctx, 0, host, dev, bytes, how);
}

/* Host to device in staged pieces: piece i is copied into stage[i % 2]
 * while piece i - 1 crosses. */
static int copy_to_dev(struct sc_gpu *g, void *dev, const void *host, size_t bytes)
{
  int b = 0;
  for (size_t off = 0; off < bytes; off += SC_STAGE_BYTES, b ^= 1) {
    const size_t len = bytes - off < SC_STAGE_BYTES ? bytes - off : SC_STAGE_BYTES;
    if (g->fn.cudaEventSynchronize(g->done[b])) return -EIO; /* stage[b] free again */
    memcpy(g->stage[b], (const char *)host + off, len);
    if (g->fn.cudaMemcpyAsync((char *)dev + off, g->stage[b], len, cudaMemcpyHostToDevice,
                              g->copy) ||
        g->fn.cudaEventRecord(g->done[b], g->copy))
      return -EIO;
  }
  return g->fn.cudaStreamSynchronize(g->copy) ? -EIO : 0;
}

/* Device to host: piece i crosses into stage[i % 2] while piece i - 1 is
 * stored out of the other (sc_host_store, as `how` says). */
static int copy_to_host(struct sc_gpu *g, void *host, const void *dev, size_t bytes,
                        enum sc_store how)
{
  size_t prev = 0, prev_len = 0;
  int b = 0;
  for (size_t off = 0; off < bytes || prev_len; off += SC_STAGE_BYTES, b ^= 1) {
    const size_t len = off >= bytes                   ? 0
                       : bytes - off < SC_STAGE_BYTES ? bytes - off
                                                      : SC_STAGE_BYTES;
    if (len && (g->fn.cudaMemcpyAsync(g->stage[b], (const char *)dev + off, len,
                                      cudaMemcpyDeviceToHost, g->copy) ||
                g->fn.cudaEventRecord(g->done[b], g->copy)))
      return -EIO;
    if (prev_len) {
      if (g->fn.cudaEventSynchronize(g->done[b ^ 1])) return -EIO;
      const int rc = sc_host_store(how, (char *)host + prev, g->stage[b ^ 1], prev_len);
      if (rc) return rc;
    }
    prev = off;
    prev_len = len;
  }
  return 0;
}

/* ---- the routines (no cache lock held) ---- */

static void thread_end(void *p)
{
  struct gpu_thread *t = p;
  sc_gpu_busy++; /* the libraries' frees from here on; the thread ends */
  t_ready = 0;
  if (t->solver) t->g->fn.cusolverDnDestroy(t->solver);
  if (t->work) t->g->fn.cudaFree(t->work);
  t->g->fn.cublasDestroy_v2(t->blas);
  t->g->fn.cudaStreamDestroy(t->stream);
  free(t);
}

/* The calling thread's handle and stream; NULL when they cannot be made. */
static struct gpu_thread *me(struct sc_gpu *g)
{
  struct gpu_thread *t = pthread_getspecific(g->key);
  if (t) return t;
  if (!(t = calloc(1, sizeof(*t)))) return NULL;
  t->g = g;
  if (g->fn.cudaSetDevice(g->device) ||
      g->fn.cudaStreamCreateWithFlags(&t->stream, cudaStreamNonBlocking)) {
    free(t);
    return NULL;
  }
  if (g->fn.cublasCreate_v2(&t->blas) != CUBLAS_STATUS_SUCCESS) {
    g->fn.cudaStreamDestroy(t->stream);
    free(t);
    return NULL;
  }
  g->fn.cublasSetStream_v2(t->blas, t->stream);
  pthread_setspecific(g->key, t);
  t_ready = 1;
  return t;
}

/* Before a call takes its operands (no cache lock held): the thread's
 * CUDA state, so the copies made for it under the lock allocate nothing.
 * 0, or -EIO when it cannot be made (its copies then go to the copier). */
static int d_prepare(void *ctx)
{
  if (t_ready) return 0;
  sc_gpu_busy++;
  const struct gpu_thread *t = me(ctx);
  sc_gpu_busy--;
  return t ? 0 : -EIO;
}

/* The start of a routine: the calling thread's state, sc_gpu_busy set
 * until its finish(); NULL (and not busy) when the state cannot be made. */
static struct gpu_thread *enter(struct sc_gpu *g)
{
  sc_gpu_busy++;
  struct gpu_thread *t = me(g);
  if (!t) sc_gpu_busy--;
  return t;
}

/* The end of a routine: its status, then its stream drained: 0 or -EIO. */
static int finish(struct gpu_thread *t, int status)
{
  const int sync = t->g->fn.cudaStreamSynchronize(t->stream);
  sc_gpu_busy--;
  return status || sync ? -EIO : 0;
}

static cublasOperation_t op(char t)
{
  return t == 'N' || t == 'n' ? CUBLAS_OP_N : CUBLAS_OP_T;
}

static int d_gemm(void *ctx, enum sc_prec p, char ta, char tb, int m, int n, int k, double alpha,
                  const void *a, int lda, const void *b, int ldb, double beta, void *c, int ldc)
{
  struct gpu_thread *t = enter(ctx);
  if (!t) return -EIO;
  const float fa = (float)alpha, fb = (float)beta;
  return finish(t, p == SC_F64 ? t->g->fn.cublasDgemm_v2(t->blas, op(ta), op(tb), m, n, k, &alpha,
                                                         a, lda, b, ldb, &beta, c, ldc)
                               : t->g->fn.cublasSgemm_v2(t->blas, op(ta), op(tb), m, n, k, &fa, a,
                                                         lda, b, ldb, &fb, c, ldc));
}

static int d_gemv(void *ctx, enum sc_prec p, char tr, int m, int n, double alpha, const void *a,
                  int lda, const void *x, int incx, double beta, void *y, int incy)
{
  struct gpu_thread *t = enter(ctx);
  if (!t) return -EIO;
  const float fa = (float)alpha, fb = (float)beta;
  return finish(t, p == SC_F64 ? t->g->fn.cublasDgemv_v2(t->blas, op(tr), m, n, &alpha, a, lda, x,
                                                         incx, &beta, y, incy)
                               : t->g->fn.cublasSgemv_v2(t->blas, op(tr), m, n, &fa, a, lda, x,
                                                         incx, &fb, y, incy));
}

static int d_axpy(void *ctx, enum sc_prec p, int n, double alpha, const void *x, int incx, void *y,
                  int incy)
{
  struct gpu_thread *t = enter(ctx);
  if (!t) return -EIO;
  const float fa = (float)alpha;
  return finish(t, p == SC_F64 ? t->g->fn.cublasDaxpy_v2(t->blas, n, &alpha, x, incx, y, incy)
                               : t->g->fn.cublasSaxpy_v2(t->blas, n, &fa, x, incx, y, incy));
}

static int d_scal(void *ctx, enum sc_prec p, int n, double alpha, void *x, int incx)
{
  struct gpu_thread *t = enter(ctx);
  if (!t) return -EIO;
  const float fa = (float)alpha;
  return finish(t, p == SC_F64 ? t->g->fn.cublasDscal_v2(t->blas, n, &alpha, x, incx)
                               : t->g->fn.cublasSscal_v2(t->blas, n, &fa, x, incx));
}

static int d_dot(void *ctx, enum sc_prec p, int n, const void *x, int incx, const void *y, int incy,
                 double *out)
{
  struct gpu_thread *t = enter(ctx);
  if (!t) return -EIO;
  float f = 0;
  const int st = p == SC_F64 ? t->g->fn.cublasDdot_v2(t->blas, n, x, incx, y, incy, out)
                             : t->g->fn.cublasSdot_v2(t->blas, n, x, incx, y, incy, &f);
  if (p == SC_F32) *out = f;
  return finish(t, st);
}

/* The thread's cuSOLVER handle, and a workspace of at least bytes after
 * devInfo: 0, or nonzero when they cannot be had. */
static int solver(struct gpu_thread *t, size_t bytes)
{
  struct sc_gpu *g = t->g;
  if (!t->solver) {
    if (g->fn.cusolverDnCreate(&t->solver) != CUSOLVER_STATUS_SUCCESS) return 1;
    g->fn.cusolverDnSetStream(t->solver, t->stream);
  }
  if (t->work_bytes < bytes + 256) {
    if (t->work) g->fn.cudaFree(t->work);
    t->work = NULL;
    t->work_bytes = 0;
    if (g->fn.cudaMalloc(&t->work, bytes + 256)) return 1;
    t->work_bytes = bytes + 256;
  }
  return 0;
}

static int d_getrf(void *ctx, enum sc_prec p, int n, void *a, int lda, int *ipiv, int *info)
{
  struct sc_gpu *g = ctx;
  struct gpu_thread *t = enter(g);
  int lwork = 0, hinfo = 0; /* a local: info may be the program's, on a protected page */
  if (!t) return -EIO;
  if (solver(t, 0) ||
      (p == SC_F64 ? g->fn.cusolverDnDgetrf_bufferSize(t->solver, n, n, a, lda, &lwork)
                   : g->fn.cusolverDnSgetrf_bufferSize(t->solver, n, n, a, lda, &lwork)) ||
      solver(t, (size_t)lwork * (p == SC_F64 ? 8 : 4)))
    return finish(t, 1);
  int *dinfo = t->work;
  void *w = (char *)t->work + 256;
  const int rc = p == SC_F64 ? g->fn.cusolverDnDgetrf(t->solver, n, n, a, lda, w, ipiv, dinfo)
                             : g->fn.cusolverDnSgetrf(t->solver, n, n, a, lda, w, ipiv, dinfo);
  const int done = finish(t, rc || g->fn.cudaMemcpyAsync(&hinfo, dinfo, sizeof(int),
                                                      cudaMemcpyDeviceToHost, t->stream));
  *info = hinfo;
  return done;
}

static int d_getrs(void *ctx, enum sc_prec p, int n, int nrhs, const void *a, int lda,
                   const int *ipiv, void *b, int ldb)
{
  struct sc_gpu *g = ctx;
  struct gpu_thread *t = enter(g);
  if (!t) return -EIO;
  if (solver(t, 0)) return finish(t, 1);
  int *dinfo = t->work;
  return finish(t, p == SC_F64 ? g->fn.cusolverDnDgetrs(t->solver, CUBLAS_OP_N, n, nrhs, a, lda,
                                                        ipiv, b, ldb, dinfo)
                               : g->fn.cusolverDnSgetrs(t->solver, CUBLAS_OP_N, n, nrhs, a, lda,
                                                        ipiv, b, ldb, dinfo));
}

/* ---- opening ---- */

/* Reserve the pool: the bytes asked (in 2 MiB steps), or as much below
 * them as cudaMalloc gives (halving). */
static int reserve(struct sc_gpu *g, size_t want, size_t *got)
{
  const size_t step = (size_t)2 << 20;
  for (size_t b = (want + step - 1) / step * step; b >= step; b = b / 2 / step * step)
    if (g->fn.cudaMalloc(&g->base, b) == cudaSuccess) {
      *got = b;
      return sc_pool_init(&g->pool, (uintptr_t)g->base, b, SC_POOL_EXTENTS);
    }
  return -ENOMEM;
}

enum sc_gpu_result sc_gpu_open(size_t capacity, struct sc_backend *be, struct sc_device_blas *dev,
                               size_t *pool_bytes, char *why, size_t whylen)
{
  struct sc_gpu *g = calloc(1, sizeof(*g));
  void *rt = open_lib("libcudart.so.13", "libcudart.so");
  const char *missing = NULL;
  int count = 0;
  if (!g) return SC_GPU_FAILED;
  if (!rt || (missing = load_cudart(g, rt))) {
    snprintf(why, whylen, "no CUDA runtime (libcudart.so.13%s%s)", missing ? " lacks " : "",
             missing ? missing : " not found");
    free(g);
    return SC_GPU_NO_LIBRARY;
  }
  if (g->fn.cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    snprintf(why, whylen, "no CUDA GPU");
    free(g);
    return SC_GPU_NO_DEVICE;
  }
  void *bl = open_lib("libcublas.so.13", "libcublas.so");
  if (!bl || (missing = load_cublas(g, bl))) {
    snprintf(why, whylen, "no cuBLAS (libcublas.so.13%s%s)", missing ? " lacks " : "",
             missing ? missing : " not found");
    free(g);
    return SC_GPU_NO_LIBRARY;
  }
  void *so = open_lib("libcusolver.so.12", "libcusolver.so");
  g->have_solver = so && !load_cusolver(g, so);
  size_t free_b = 0, total = 0;
  if (g->fn.cudaGetDevice(&g->device) || g->fn.cudaMemGetInfo(&free_b, &total)) {
    snprintf(why, whylen, "the GPU did not start");
    free(g);
    return SC_GPU_FAILED;
  }
  const size_t want = capacity && capacity < free_b / 4 * 3 ? capacity : free_b / 4 * 3;
  int rc = reserve(g, want, pool_bytes);
  for (int i = 0; i < 2 && rc == 0; i++)
    if (g->fn.cudaHostAlloc(&g->stage[i], SC_STAGE_BYTES, cudaHostAllocDefault) ||
        g->fn.cudaEventCreateWithFlags(&g->done[i], cudaEventDisableTiming))
      rc = -ENOMEM;
  if (rc == 0 && (g->fn.cudaStreamCreateWithFlags(&g->copy, cudaStreamNonBlocking) ||
                  pthread_key_create(&g->key, thread_end)))
    rc = -ENOMEM;
  /* one copy each way: what the runtime sets up lazily, outside the lock;
   * then the same through the copier (its CUDA state made now) */
  uint64_t probe = 0x5e3c;
  t_ready = 1;
  pthread_t copier;
  if (rc == 0 && (copy_to_dev(g, g->base, &probe, sizeof(probe)) ||
                  copy_to_host(g, &probe, g->base, sizeof(probe), SC_STORE_OPEN) || probe != 0x5e3c))
    rc = -EIO;
  if (rc == 0) {
    pthread_mutex_init(&g->cp.m, NULL);
    pthread_cond_init(&g->cp.cv, NULL);
    rc = pthread_create(&copier, NULL, copier_main, g) ? -ENOMEM : 0;
    if (rc == 0) pthread_detach(copier);
  }
  probe = 0xc0b1;
  if (rc == 0 && (by_copier(g, 1, g->base, &probe, sizeof(probe), SC_STORE_OPEN) ||
                  by_copier(g, 0, &probe, g->base, sizeof(probe), SC_STORE_OPEN) || probe != 0xc0b1))
    rc = -EIO;
  if (rc) {
    snprintf(why, whylen, "the GPU's memory or streams could not be had");
    return SC_GPU_FAILED; /* what was had stays: the process goes on without the GPU */
  }
  *be = (struct sc_backend){g, g_alloc, g_free, g_to_dev, g_to_host};
  *dev = (struct sc_device_blas){g,
                                 d_gemm,
                                 d_gemv,
                                 d_axpy,
                                 d_scal,
                                 d_dot,
                                 g->have_solver ? d_getrf : NULL,
                                 g->have_solver ? d_getrs : NULL,
                                 d_prepare};
  return SC_GPU_READY;
}
