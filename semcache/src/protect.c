/*
 * protect.c - SemCache's SIGSEGV handler and what goes with it
 * (protect.h): the registry of caches the handler looks in, pages of the
 * cache's own, the pages recently dropped, and stores past a page's
 * protection (msi.h, sc_host_store).
 *
 * A fault on a page a registered cache protects is the cache's
 * (sc_cache_fault, cache.c, on the faulting thread): it brings the range's
 * newest bytes back or invalidates its device copy and opens the page, and
 * the access runs again.  A fault on no cache's page goes to the handler
 * installed before ours (or the default action, which ends the process as
 * without SemCache).  It runs on the faulting thread's alternate signal
 * stack where it has one (stacks.h).
 */
#include "protect.h"

#include "libgpufs/common/sigchain.h"

#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <ucontext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SC_MAX_CACHES 8

uintptr_t sc_page_size(void)
{
  static uintptr_t ps; /* relaxed: every thread computes the same value */
  uintptr_t v = __atomic_load_n(&ps, __ATOMIC_RELAXED);
  if (!v) {
    v = (uintptr_t)sysconf(_SC_PAGESIZE);
    __atomic_store_n(&ps, v, __ATOMIC_RELAXED);
  }
  return v;
}

/* Freed mappings kept for reuse, by length.  The cache makes and drops an
 * entry (and on the host device a "device" buffer) for each new range,
 * and LAPACK's calls on sub-blocks make new ranges all the time: an mmap
 * and a munmap each were most of a call's bookkeeping there.  Up to
 * SC_KEEP mappings of at most SC_KEEP_BYTES; never from the fault
 * handler (it allocates and frees nothing). */
#define SC_KEEP 32
#define SC_KEEP_BYTES ((size_t)1 << 20)
static struct {
  pthread_mutex_t m;
  char *map[SC_KEEP];
  int n;
} kept = {PTHREAD_MUTEX_INITIALIZER, {NULL}, 0};

/* A kept mapping of len bytes, or NULL. */
static char *take_kept(size_t len)
{
  char *m = NULL;
  pthread_mutex_lock(&kept.m);
  for (int i = 0; i < kept.n && !m; i++)
    if (*(size_t *)kept.map[i] == len) {
      m = kept.map[i];
      kept.map[i] = kept.map[--kept.n];
    }
  pthread_mutex_unlock(&kept.m);
  return m;
}

/* The mapping's length sits in its first 64 bytes. */
void *sc_pages_alloc(size_t bytes)
{
  const size_t len = (bytes + 64 + sc_page_size() - 1) / sc_page_size() * sc_page_size();
  char *m = len <= SC_KEEP_BYTES ? take_kept(len) : NULL;
  if (m) {
    memset(m + 64, 0, len - 64);
    return m + 64;
  }
  m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return NULL;
  *(size_t *)m = len;
  return m + 64;
}

void sc_pages_free(void *p)
{
  if (!p) return;
  char *m = (char *)p - 64;
  const size_t len = *(size_t *)m;
  if (len <= SC_KEEP_BYTES) {
    pthread_mutex_lock(&kept.m);
    const int keep = kept.n < SC_KEEP;
    if (keep) kept.map[kept.n++] = m;
    pthread_mutex_unlock(&kept.m);
    if (keep) return;
  }
  munmap(m, len);
}

/* The last SC_DROPPED spans dropped (page numbers), written under a
 * cache's lock, read by the handler under it (relaxed atomics: two caches
 * may write at once). */
#define SC_DROPPED 1024
static uintptr_t dropped_lo[SC_DROPPED], dropped_hi[SC_DROPPED];
static unsigned dropped_next;

void sc_note_dropped(uintptr_t lo, uintptr_t hi)
{
  const unsigned i = __atomic_fetch_add(&dropped_next, 1, __ATOMIC_RELAXED) % SC_DROPPED;
  __atomic_store_n(&dropped_lo[i], lo, __ATOMIC_RELAXED);
  __atomic_store_n(&dropped_hi[i], hi, __ATOMIC_RELAXED);
}

int sc_was_dropped(uintptr_t p)
{
  for (unsigned i = 0; i < SC_DROPPED; i++)
    if (__atomic_load_n(&dropped_lo[i], __ATOMIC_RELAXED) <= p &&
        p < __atomic_load_n(&dropped_hi[i], __ATOMIC_RELAXED))
      return 1;
  return 0;
}

/* ---- stores past the protection (msi.h, sc_host_store) ---- */

/* /proc/self/mem, opened by the process that uses it: a descriptor
 * inherited across fork() still names the parent's memory, so the pid it
 * was opened by goes with it, (pid << 32) | fd in one word (relaxed: the
 * word is the whole state; open's result is not published otherwise). */
static uint64_t mem_file;
static int mem_file_busy; /* a spin lock around the reopen */

static int mem_fd(void)
{
  const uint64_t me = (uint64_t)(uint32_t)getpid();
  uint64_t f = __atomic_load_n(&mem_file, __ATOMIC_RELAXED);
  if (f && f >> 32 == me) return (int)(uint32_t)f;
  /* acquire / release: the lock's holder's view of mem_file passes on */
  while (__atomic_exchange_n(&mem_file_busy, 1, __ATOMIC_ACQUIRE)) sched_yield();
  f = __atomic_load_n(&mem_file, __ATOMIC_RELAXED);
  if (!f || f >> 32 != me) {
    if (f) close((int)(uint32_t)f); /* the parent's, in a child */
    const int fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC); /* async-signal-safe */
    f = fd >= 0 ? me << 32 | (uint32_t)fd : 0;
    __atomic_store_n(&mem_file, f, __ATOMIC_RELAXED);
  }
  __atomic_store_n(&mem_file_busy, 0, __ATOMIC_RELEASE);
  return f ? (int)(uint32_t)f : -1;
}

int sc_host_store(enum sc_store how, void *dst, const void *src, size_t n)
{
  if (how == SC_STORE_OPEN) {
    memcpy(dst, src, n);
    return 0;
  }
  const int fd = mem_fd();
  if (fd < 0) return -EACCES;
  for (size_t off = 0; off < n;) {
    /* the system call itself: libsemcache.so interposes pwrite */
    const ssize_t w = syscall(SYS_pwrite64, fd, (const char *)src + off, n - off,
                              (off_t)((uintptr_t)dst + off));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return w < 0 ? -errno : -EFAULT;
    off += (size_t)w;
  }
  return 0;
}

/* -1 not probed, 0 no, 1 yes (relaxed: the one word is the state). */
static int closed_ok = -1;

static int probe_closed(void);

/* Probed at the first call (system calls only, so safe under the cache's
 * lock; two threads probing at once store the same answer). */
int sc_store_closed_ok(void)
{
  int ok = __atomic_load_n(&closed_ok, __ATOMIC_RELAXED);
  if (ok < 0) {
    const char *want = getenv("SEMCACHE_STORE");
    ok = !(want && strcmp(want, "open") == 0) && probe_closed();
    __atomic_store_n(&closed_ok, ok, __ATOMIC_RELAXED);
  }
  return ok == 1;
}

void sc_store_set_closed(int on)
{
  __atomic_store_n(&closed_ok, on ? 1 : 0, __ATOMIC_RELAXED);
}

/* Whether a closed store reaches a page without access, and nothing else. */
static int probe_closed(void)
{
  const size_t ps = sc_page_size();
  unsigned char *p = mmap(NULL, 2 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return 0;
  static const unsigned char v[3] = {0x5c, 0xa7, 0x3e};
  int ok = mprotect(p, 2 * ps, PROT_NONE) == 0 && sc_host_store(SC_STORE_CLOSED, p + ps - 1, v, 3) == 0 &&
           mprotect(p, 2 * ps, PROT_READ) == 0 && p[ps - 2] == 0 && !memcmp(p + ps - 1, v, 3) &&
           p[ps + 2] == 0;
  munmap(p, 2 * ps);
  return ok;
}

/* ---- the handler ---- */

/* The registered caches; written under reg_lock, read by the handler
 * (acquire loads pair with the release stores of sc_register). */
__thread int sc_in_fault __attribute__((tls_model("initial-exec")));
__thread int sc_fault_fatal __attribute__((tls_model("initial-exec")));

static struct sc_cache *caches[SC_MAX_CACHES];
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sigaction prev_segv;
static int installed;

/* Whether the fault was a write, where the context says (x86-64's page
 * fault error code); -1 where unknown. */
static int fault_was_write(const void *uc)
{
#if defined(__x86_64__) && defined(REG_ERR)
  return (((const ucontext_t *)uc)->uc_mcontext.gregs[REG_ERR] & 2) != 0;
#else
  (void)uc;
  return -1;
#endif
}

/* The checks before the cache's own handling: a fault on a thread that
 * holds the cache's lock, or on its copier, can never be served. */
static int on_cache_fault(struct sc_cache *c, uintptr_t p, int is_write)
{
  if (__atomic_load_n(&c->owner, __ATOMIC_RELAXED) == (uint64_t)pthread_self()) {
    static const char msg[] = "semcache: a protection fault inside the cache: aborting\n";
    (void)!write(2, msg, sizeof(msg) - 1);
    abort();
  }
  if (sc_fault_fatal) {
    static const char msg[] = "semcache: a protection fault on the cache's copier thread: aborting\n";
    (void)!write(2, msg, sizeof(msg) - 1);
    abort();
  }
  sc_in_fault++; /* the copies it makes go to a copier (gpu.c) */
  const int mine = sc_cache_fault(c, p, is_write);
  sc_in_fault--;
  return mine;
}

static void on_segv(int sig, siginfo_t *si, void *uc)
{
  const uintptr_t p = (uintptr_t)si->si_addr / sc_page_size();
  for (int i = 0; i < SC_MAX_CACHES; i++) {
    struct sc_cache *c = __atomic_load_n(&caches[i], __ATOMIC_ACQUIRE);
    if (c && on_cache_fault(c, p, fault_was_write(uc))) return; /* the access runs again */
  }
  gpufs_sig_chain(sig, si, uc, &prev_segv);
}

/* As gpufs_sig_install (sigchain.h: SA_NODEFER, so a fault inside the
 * handler, a backend copy into a page it has not opened, is not blocked
 * into a hang), and SA_ONSTACK: the handler runs on the thread's
 * alternate signal stack (stacks.h), so a fault whose thread has no stack
 * left for the handler's frame is still handled; a thread without one
 * runs it on its own stack. */
static void install(void)
{
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_sigaction = on_segv;
  sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_RESTART | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, &prev_segv);
}

int sc_register(struct sc_cache *c)
{
  int rc = -ENOSPC;
  pthread_mutex_lock(&reg_lock);
  sc_store_closed_ok(); /* probed here, outside any cache's lock */
  if (!installed) {
    install();
    installed = 1;
  }
  for (int i = 0; i < SC_MAX_CACHES && rc; i++)
    if (!caches[i]) {
      /* release: publishes the cache's fields; pairs with on_segv's acquire */
      __atomic_store_n(&caches[i], c, __ATOMIC_RELEASE);
      rc = 0;
    }
  pthread_mutex_unlock(&reg_lock);
  return rc;
}

void sc_unregister(struct sc_cache *c)
{
  pthread_mutex_lock(&reg_lock);
  for (int i = 0; i < SC_MAX_CACHES; i++)
    if (caches[i] == c) __atomic_store_n(&caches[i], NULL, __ATOMIC_RELAXED);
  pthread_mutex_unlock(&reg_lock);
}
