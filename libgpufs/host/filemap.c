/*
 * filemap.c - the daemon's file mappings for READs, and the copy that catches
 * SIGBUS (filemap.h).
 *
 * The guard: a thread about to copy from a mapping stores the address of
 * its jump buffer in its thread-local `guard`; the SIGBUS handler, running
 * on the faulting thread, jumps back to it.  The handler is installed with
 * SA_NODEFER, so SIGBUS is not left blocked after the jump and sigsetjmp
 * need not save the signal mask (which would cost a system call a copy);
 * the rare caught fault unblocks it all the same.
 */
#include "libgpufs/host/filemap.h"

#include "libgpufs/common/sigchain.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#if defined(__x86_64__) && defined(__SSE2__)
#include <emmintrin.h>
#define FILEMAP_STREAM 1
#endif

/* The jump buffer of this thread's copy in progress, or NULL.  Read by the
 * SIGBUS handler on the same thread: relaxed atomics and a signal fence
 * order it against the copy (nothing crosses threads). */
static __thread sigjmp_buf *guard;
static struct sigaction prev_bus;
static pthread_once_t bus_once = PTHREAD_ONCE_INIT;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
  sigjmp_buf *g = __atomic_load_n(&guard, __ATOMIC_RELAXED);
  if (g) {
    __atomic_store_n(&guard, NULL, __ATOMIC_RELAXED);
    siglongjmp(*g, 1);
  }
  /* not a guarded copy's: the handler that was there before */
  gpufs_sig_chain(sig, si, uc, &prev_bus);
}

static void install_bus_handler(void)
{
  gpufs_sig_install(SIGBUS, on_sigbus, &prev_bus);
}

void *gpufs_filemap_map(const struct gpufs_io_ops *io, int fd, uint64_t len)
{
  pthread_once(&bus_once, install_bus_handler);
  void *a = io->mmap(NULL, (size_t)len, PROT_READ, MAP_SHARED, fd, 0);
  return a == MAP_FAILED ? NULL : a;
}

void gpufs_filemap_unmap(void *addr, uint64_t len)
{
  if (addr) munmap(addr, (size_t)len);
}

#ifdef FILEMAP_STREAM
/* Order this thread's non-temporal stores before its later stores: the
 * staging bytes before the ticket's completion (daemon.c's release store of
 * the slot's answer, which x86 orders only after ordinary stores) and
 * before a pread that rewrites a run a SIGBUS cut short. */
static void filemap_fence(void) { _mm_sfence(); }

/* Copy n bytes with non-temporal stores where both ends are 16-byte
 * aligned (a READ run: page-aligned in the mapping, into its slots), the
 * rest with memcpy.  An ordinary store reads the destination line before
 * it writes it; when staging is larger than the last-level cache that read
 * goes to memory, and a copy moves three bytes over the host's memory for
 * each byte, while the GPU's reads of staging use the same memory. */
static void filemap_stream(uint8_t *dst, const uint8_t *src, size_t n)
{
  size_t done = 0;
  if ((((uintptr_t)dst | (uintptr_t)src) & 15) == 0) {
    __m128i *d = (__m128i *)dst;
    const __m128i *s = (const __m128i *)src;
    for (; done + 64 <= n; done += 64, d += 4, s += 4) {
      const __m128i a = _mm_load_si128(s), b = _mm_load_si128(s + 1);
      const __m128i c = _mm_load_si128(s + 2), e = _mm_load_si128(s + 3);
      _mm_stream_si128(d, a);
      _mm_stream_si128(d + 1, b);
      _mm_stream_si128(d + 2, c);
      _mm_stream_si128(d + 3, e);
    }
  }
  memcpy(dst + done, src + done, n - done);
  filemap_fence();
}

enum gpufs_copy_stores gpufs_filemap_stores(uint64_t staging_bytes)
{
  const long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
  return llc > 0 && staging_bytes > (uint64_t)llc ? GPUFS_COPY_STREAM : GPUFS_COPY_CACHED;
}
#else
static void filemap_fence(void) {}
static void filemap_stream(uint8_t *dst, const uint8_t *src, size_t n) { memcpy(dst, src, n); }
enum gpufs_copy_stores gpufs_filemap_stores(uint64_t staging_bytes)
{
  (void)staging_bytes;
  return GPUFS_COPY_CACHED;
}
#endif

int gpufs_filemap_copy(void *dst, const void *src, size_t n, enum gpufs_copy_stores how)
{
  sigjmp_buf jb;
  if (sigsetjmp(jb, 0) != 0) {
    /* SA_NODEFER leaves SIGBUS unblocked, but a wrapper around our handler
     * (ThreadSanitizer's blocks every signal while it runs) may have left
     * signals blocked: unblock the synchronous fault signals, which the
     * kernel turns into a kill when they come blocked (a later SIGSEGV of
     * SemCache's page protection, say), on this rare path only */
    sigset_t sync;
    sigemptyset(&sync);
    sigaddset(&sync, SIGBUS);
    sigaddset(&sync, SIGSEGV);
    sigaddset(&sync, SIGILL);
    sigaddset(&sync, SIGFPE);
    sigaddset(&sync, SIGTRAP);
    pthread_sigmask(SIG_UNBLOCK, &sync, NULL);
    filemap_fence(); /* the stores made before the fault, before the pread's */
    return -EFAULT;
  }
  __atomic_store_n(&guard, &jb, __ATOMIC_RELAXED);
  /* the guard is set before the copy's loads, as the handler sees them */
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  if (how == GPUFS_COPY_STREAM) filemap_stream((uint8_t *)dst, (const uint8_t *)src, n);
  else memcpy(dst, src, n);
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  __atomic_store_n(&guard, NULL, __ATOMIC_RELAXED);
  return 0;
}
