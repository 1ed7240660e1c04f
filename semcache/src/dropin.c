/*
 * dropin.c - libsemcache.so: SemCache as a BLAS and LAPACK drop-in.
 * Linked before the program's BLAS (LD_PRELOAD, or -lsemcache ahead of
 * it), it exports the CBLAS and Fortran entry points of the routines
 * blas.h serves (dropin_blas.c) and runs them through one process-wide
 * cache; every other routine, and the host fallback, is the program's
 * own BLAS and LAPACK, however they were loaded (find.h).  It also
 * interposes free, realloc, munmap, mmap (MAP_FIXED), mremap and madvise
 * (MADV_DONTNEED and the like), so a buffer the program gives back or
 * replaces is dropped from the cache before its address can be reused
 * (never served stale), and the I/O calls that read or write program memory in
 * the kernel (dropin_io.c).
 *
 * Environment (docs/semcache.md):
 *   SEMCACHE_DEVICE=gpu | host   gpu (the default): cuBLAS and cuSOLVER on
 *                            the first GPU (gpu.h); where no CUDA library
 *                            or no GPU is found, one warning and every call
 *                            goes to the program's BLAS.  host: the cache
 *                            with host memory as the device and the
 *                            program's BLAS as its routines (how CI tests
 *                            the protocol)
 *   SEMCACHE_CACHE=on | off  off: every call sends its operands and brings
 *                            its outputs back, keeping nothing (the plain
 *                            offload baseline); no gesv memo
 *   SEMCACHE_PROTOCOL=write-through | write-back (default write-back)
 *   SEMCACHE_CAPACITY=bytes  device bytes the cache may hold (0 or unset:
 *                            no cap but the device's)
 *   SEMCACHE_MEMO=on | off   gesv's remembered factors (default on)
 *   SEMCACHE_MEMO_BYTES=bytes host memory the remembered matrices may hold
 *                            (2 n^2 elements each; default 1 GiB)
 *   SEMCACHE_MEMO_THREADS=1..8 threads comparing a large A with the memo's
 *                            (default 4 on 8 cores or more, else 1)
 *   SEMCACHE_STORE=closed | open  how copies back write the host
 *                            (msi.h, enum sc_store; default closed where
 *                            this process can, else open)
 *   SEMCACHE_CROSSOVER=...   where small calls stay on the program's BLAS
 *                            (blas.h, struct sc_crossover; crossover.c):
 *                            n, or name=n,... (0: every call to the device;
 *                            never: none by its size)
 *   SEMCACHE_STATS=1         one semcache-stats line on stderr at exit
 * The device starts at the first call above its crossover.
 * A call with a bad argument goes to the program's own routine, which
 * reports it as it would without the drop-in (dropin.h, SC_BAD_ARGS).
 */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "dropin.h"
#include "gpu.h"

struct sc_blas sc_g_blas;
__thread int sc_in_host __attribute__((tls_model("initial-exec")));
static struct sc_cache g_cache;
static int g_on;                 /* the drop-in serves the calls; atomics only */
static int g_live;               /* the cache runs (started); atomics only */
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static const char *g_device = "none";
static enum sc_protocol g_protocol = SC_WRITE_BACK;
static int g_cached = 1;         /* SEMCACHE_CACHE as taken */

void *sc_next(const char *name)
{
  return sc_find(name);
}

/* The counters as one line of JSON (docs/semcache.md, "Statistics"). */
static void dropin_stats(void)
{
  struct sc_stats s;
  memset(&s, 0, sizeof(s));
  /* acquire: pairs with start_device's release of g_live */
  const int live = __atomic_load_n(&g_live, __ATOMIC_ACQUIRE);
  if (live) sc_get_stats(&g_cache, &s);
  const struct sc_blas *b = &sc_g_blas;
  const double memo_s = (double)__atomic_load_n(&b->memo_ns, __ATOMIC_RELAXED) / 1e9;
  fprintf(stderr,
          "semcache-stats {\"device\":\"%s\",\"started\":%d,\"cache\":\"%s\",\"protocol\":\"%s\","
          "\"calls\":%llu,\"host_calls\":%llu,\"small_calls\":%llu,"
          "\"transfers_h2d\":%llu,\"bytes_h2d\":%llu,\"transfers_d2h\":%llu,\"bytes_d2h\":%llu,"
          "\"hits\":%llu,\"misses\":%llu,\"invalidations\":%llu,\"faults\":%llu,"
          "\"evictions\":%llu,\"refused\":%llu,\"closed_stores\":%llu,\"edge_copies\":%llu,\"edge_bytes\":%llu,\"gesv_calls\":%llu,\"gesv_memo_hits\":%llu,"
          "\"bookkeeping_s\":%.6f,\"memo_check_s\":%.6f,\"device_s\":%.6f,\"copy_s\":%.6f}\n",
          g_device, live, g_cached ? "on" : "off",
          g_protocol == SC_WRITE_THROUGH ? "write-through" : "write-back",
          (unsigned long long)b->calls, (unsigned long long)b->host_calls,
          (unsigned long long)__atomic_load_n(&b->small_calls, __ATOMIC_RELAXED),
          (unsigned long long)s.to_dev, (unsigned long long)s.to_dev_bytes,
          (unsigned long long)s.to_host, (unsigned long long)s.to_host_bytes,
          (unsigned long long)s.hits, (unsigned long long)s.misses,
          (unsigned long long)s.invalidations, (unsigned long long)s.faults,
          (unsigned long long)s.evictions, (unsigned long long)s.refused,
          (unsigned long long)s.closed_stores, (unsigned long long)s.edge_copies,
          (unsigned long long)s.edge_bytes,
          (unsigned long long)b->gesv_calls, (unsigned long long)b->memo_hits,
          (double)s.bookkeeping_ns / 1e9 + memo_s, memo_s,
          (double)__atomic_load_n(&b->device_ns, __ATOMIC_RELAXED) / 1e9, (double)s.copy_ns / 1e9);
}

/* A variable's value; NULL when unset or empty (the default). */
static const char *env(const char *name)
{
  const char *v = getenv(name);
  return v && *v ? v : NULL;
}

/* An on/off variable: 1, 0, or def (with a warning) for anything else. */
static int env_switch(const char *name, int def)
{
  const char *v = env(name);
  if (!v) return def;
  if (strcmp(v, "on") == 0 || strcmp(v, "1") == 0) return 1;
  if (strcmp(v, "off") == 0 || strcmp(v, "0") == 0) return 0;
  fprintf(stderr, "semcache: %s=%s is not on or off: %s\n", name, v, def ? "on" : "off");
  return def;
}

/* The device as configured, opened at the first call above its crossover
 * (start_device). */
static struct {
  int gpu;           /* SEMCACHE_DEVICE: gpu (1) or host (0) */
  size_t capacity;   /* SEMCACHE_CAPACITY */
} g_want;
static pthread_once_t g_start_once = PTHREAD_ONCE_INIT;
static int g_start_rc = -1; /* written once under g_start_once */

/* Open the device and start the cache over it (once, at the first call
 * that goes there: a program whose calls all stay below their crossovers
 * never loads CUDA).  Where the GPU cannot be had, one warning and every
 * call runs on the program's BLAS. */
static void start_device(void)
{
  struct sc_backend be = sc_cpu_backend;
  struct sc_device_blas routines = sc_host_blas;
  size_t capacity = g_want.capacity;
  if (g_want.gpu) {
    char why[160] = "";
    size_t pool = 0;
    if (sc_gpu_open(capacity, &be, &routines, &pool, why, sizeof(why)) != SC_GPU_READY) {
      fprintf(stderr, "semcache: %s: BLAS calls go to the program's BLAS on the CPU "
                      "(SEMCACHE_DEVICE=host runs the cache on host memory)\n", why);
      g_device = "none";
      return;
    }
    if (!capacity || capacity > pool) capacity = pool; /* evict before the pool runs dry */
  }
  if (sc_cache_init(&g_cache, &be, g_protocol, capacity) != 0) {
    fprintf(stderr, "semcache: the cache did not start: BLAS calls go to the program's BLAS\n");
    g_device = "none";
    return;
  }
  sc_g_blas.dev = routines;
  g_start_rc = 0;
  /* release: the cache's fields before g_live; pairs with the acquire of
   * sc_live_cache (the I/O calls) */
  __atomic_store_n(&g_live, 1, __ATOMIC_RELEASE);
}

/* sc_g_blas's start hook (blas.h): pthread_once orders start_device's
 * writes before every caller's return. */
static int dropin_start(struct sc_blas *s)
{
  (void)s;
  pthread_once(&g_start_once, start_device);
  return g_start_rc;
}

/* SEMCACHE_CAPACITY or SEMCACHE_MEMO_BYTES: bytes, or def (warned). */
static size_t env_bytes(const char *name, size_t def)
{
  const char *v = env(name);
  char *end = NULL;
  const size_t b = v ? strtoull(v, &end, 0) : def;
  if (v && (end == v || *end || v[0] == '-')) {
    fprintf(stderr, "semcache: %s=%s is not a number of bytes: %zu\n", name, v, def);
    return def;
  }
  return b;
}

/* The calls' crossovers: the defaults, then SEMCACHE_CROSSOVER. */
static void crossover_init(struct sc_crossover *x)
{
  char bad[96];
  const char *v = env("SEMCACHE_CROSSOVER");
  sc_crossover_defaults(x);
  if (v && sc_crossover_parse(x, v, bad, sizeof(bad)) != 0)
    fprintf(stderr, "semcache: SEMCACHE_CROSSOVER: %s not taken (name=n or name=never, names "
                    "gemm, gemv, axpy, scal, dot, gesv, d or s before one: one precision)\n",
            bad);
}

static void dropin_init(void)
{
  const char *dev = env("SEMCACHE_DEVICE");
  const char *proto = env("SEMCACHE_PROTOCOL");
  const char *stats = env("SEMCACHE_STATS");
  const int cached = env_switch("SEMCACHE_CACHE", 1), memo = env_switch("SEMCACHE_MEMO", 1);
  g_cached = cached;
  g_want.capacity = env_bytes("SEMCACHE_CAPACITY", 0);
  const size_t memo_bytes = env_bytes("SEMCACHE_MEMO_BYTES", SC_MEMO_DEFAULT_BYTES);
  const char *memo_t = env("SEMCACHE_MEMO_THREADS");
  char *end = NULL;
  const long memo_threads = memo_t ? strtol(memo_t, &end, 10) : 0;
  if (memo_t && (end == memo_t || *end || memo_threads < 1 || memo_threads > 8)) {
    fprintf(stderr, "semcache: SEMCACHE_MEMO_THREADS=%s is not 1 to 8: the default\n", memo_t);
    memo_t = NULL;
  }
  if (stats && strcmp(stats, "0") != 0) atexit(dropin_stats);
  g_protocol = proto && strcmp(proto, "write-through") == 0 ? SC_WRITE_THROUGH : SC_WRITE_BACK;
  if (proto && g_protocol == SC_WRITE_BACK && strcmp(proto, "write-back") != 0)
    fprintf(stderr, "semcache: SEMCACHE_PROTOCOL=%s is not write-through or write-back: "
                    "write-back\n", proto);
  if (dev && strcmp(dev, "host") != 0 && strcmp(dev, "gpu") != 0)
    fprintf(stderr, "semcache: SEMCACHE_DEVICE=%s is not gpu or host: gpu\n", dev);
  g_want.gpu = !(dev && strcmp(dev, "host") == 0);
  g_device = g_want.gpu ? "gpu" : "host";
  if (sc_blas_init(&sc_g_blas, &g_cache, &sc_host_blas, cached ? SC_CACHED : SC_NO_CACHE, memo)) {
    fprintf(stderr, "semcache: the cache did not start: BLAS calls go to the program's BLAS\n");
    g_device = "none";
    return;
  }
  sc_g_blas.started = 0;
  sc_g_blas.start = dropin_start;
  crossover_init(&sc_g_blas.cross);
  sc_memo_budget(&sc_g_blas, memo_bytes);
  if (memo_t) sc_memo_threads(&sc_g_blas, memo_threads);
  /* release: sc_g_blas's fields before g_on; pairs with sc_on()'s acquire */
  __atomic_store_n(&g_on, 1, __ATOMIC_RELEASE);
}

struct sc_cache *sc_live_cache(void)
{
  /* acquire: pairs with start_device's release of g_live */
  return __atomic_load_n(&g_live, __ATOMIC_ACQUIRE) ? &g_cache : NULL;
}

int sc_on(void)
{
  pthread_once(&g_once, dropin_init);
  return __atomic_load_n(&g_on, __ATOMIC_ACQUIRE);
}

/* ---- errors as the program's BLAS reports them ---- */

void sc_fortran_error(const char *name, int info)
{
  void (*xerbla)(const char *, const int *, size_t) =
      (void (*)(const char *, const int *, size_t))sc_next("xerbla_");
  if (xerbla) xerbla(name, &info, strlen(name));
  else fprintf(stderr, " ** On entry to %s parameter number %d had an illegal value\n", name, info);
}

void sc_cblas_error(int pos, const char *rout)
{
  void (*x)(int, const char *, const char *, ...) =
      (void (*)(int, const char *, const char *, ...))sc_next("cblas_xerbla");
  if (x) x(pos, rout, "");
  else fprintf(stderr, "Parameter %d to routine %s was incorrect\n", pos, rout);
}

/* ---- buffers the program gives back ---- */

extern void __libc_free(void *);
extern void *__libc_realloc(void *, size_t);

/* Drop what the cache holds of [p, p + len) before the memory goes: only
 * when the cache runs (relaxed: a cache that started after this buffer was
 * cached cannot hold it). */
static void forget(void *p, size_t len)
{
  if (!p || !len || !__atomic_load_n(&g_live, __ATOMIC_RELAXED)) return;
  /* the cache's own frees (its entries, its "device" buffers) happen with
   * its lock held, and the CUDA libraries' inside the GPU routines
   * (sc_gpu_busy, gpu.h): they are never the program's ranges */
  if (sc_gpu_busy ||
      __atomic_load_n(&g_cache.owner, __ATOMIC_RELAXED) == (uint64_t)pthread_self())
    return;
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

/* New pages over old ones: a fixed mapping replaces them, a moved one
 * leaves the old addresses, and MADV_DONTNEED / MADV_FREE / MADV_REMOVE
 * may hand back zeros: each is memory the cached copy no longer matches. */
void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
  if (flags & MAP_FIXED) forget(addr, len);
  return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off)
{
  return mmap(addr, len, prot, flags, fd, (off_t)off);
}

void *mremap(void *old, size_t old_len, size_t len, int flags, ...)
{
  va_list ap;
  va_start(ap, flags);
  void *to = flags & MREMAP_FIXED ? va_arg(ap, void *) : NULL;
  va_end(ap);
  forget(old, old_len);
  if (to) forget(to, len);
  return (void *)syscall(SYS_mremap, old, old_len, len, flags, to);
}

int madvise(void *addr, size_t len, int advice)
{
  if (advice == MADV_DONTNEED || advice == MADV_FREE || advice == MADV_REMOVE) forget(addr, len);
  return (int)syscall(SYS_madvise, addr, len, advice);
}
