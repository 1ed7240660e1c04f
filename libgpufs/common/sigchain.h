/*
 * sigchain.h - a handler for a synchronous fault signal (SIGBUS, SIGSEGV)
 * installed over the one before it, and the hand-over to that one for a
 * fault that is not ours: how libgpufs's mapping copies (host/filemap.c)
 * and SemCache's page protection (semcache/src/protect.c) share a signal with
 * the program and with each other.  Header-only: libsemcache.so is built
 * apart from libgpufs.
 */
#ifndef GPUFS_COMMON_SIGCHAIN_H
#define GPUFS_COMMON_SIGCHAIN_H

#include <signal.h>
#include <string.h>

/* Install handler for sig, the old action into *prev.  SA_NODEFER: a
 * handler that jumps out (siglongjmp) or faults again does not leave the
 * signal blocked. */
static inline void gpufs_sig_install(int sig, void (*handler)(int, siginfo_t *, void *),
                                     struct sigaction *prev)
{
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_sigaction = handler;
  sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(sig, &sa, prev);
}

/* A fault that is not ours: the handler that was there before, or the
 * default action (the access runs again and ends the process as it would
 * have without us). */
static inline void gpufs_sig_chain(int sig, siginfo_t *si, void *uc, const struct sigaction *prev)
{
  if (prev->sa_flags & SA_SIGINFO) {
    prev->sa_sigaction(sig, si, uc);
  } else if (prev->sa_handler != SIG_DFL && prev->sa_handler != SIG_IGN) {
    prev->sa_handler(sig);
  } else {
    signal(sig, SIG_DFL);
  }
}

#endif /* GPUFS_COMMON_SIGCHAIN_H */
