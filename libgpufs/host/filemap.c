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

int gpufs_filemap_copy(void *dst, const void *src, size_t n)
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
    return -EFAULT;
  }
  __atomic_store_n(&guard, &jb, __ATOMIC_RELAXED);
  /* the guard is set before the copy's loads, as the handler sees them */
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  memcpy(dst, src, n);
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  __atomic_store_n(&guard, NULL, __ATOMIC_RELAXED);
  return 0;
}
