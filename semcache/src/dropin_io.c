/*
 * dropin_io.c - libsemcache.so's I/O interposers: the calls whose kernel
 * side reads or writes the program's memory.
 *
 * The cache protects the pages of its ranges (msi.h); a CPU access to
 * them faults and the handler makes them coherent, but the kernel's own
 * access on a system call's behalf does not fault: it fails the call with
 * EFAULT.  So write(2) of a result still on the device (MODIFIED: no
 * access) or read(2) into a matrix the device holds (SHARED: read-only)
 * would fail where the program without SemCache succeeds.  Each call below
 * first asks the cache to make its buffers ready (sc_host_access: a
 * MODIFIED range comes back; one the call writes becomes INVALID and
 * writable), then is the C library's own.  The stdio calls are here too:
 * a large fread or fwrite moves the bytes with the C library's internal
 * read and write, which no interposer sees.
 *
 * Passed straight through: before the cache runs, inside the CUDA
 * libraries (sc_gpu_busy), in a fault handler, and on the thread that
 * holds the cache's lock; and any buffer outside every range ever cached
 * (a test without the lock).  Any other thread's call into a buffer within
 * those bounds takes the cache's lock for a directory scan: a CUDA
 * library thread's read into its own buffer may wait there for a copy in
 * progress, which never waits for such a thread (the copier's waits spin
 * on events and streams: gpu.c).  Not covered: other system calls that take a
 * buffer (getrandom, ioctl, aio, io_uring, splice's vmsplice): docs/
 * semcache.md, "Known limits".
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "dropin.h"
#include "gpu.h"
#include "protect.h"

/* glibc may define these as macros over the stream's buffer (bits/stdio.h) */
#undef fread_unlocked
#undef fwrite_unlocked

/* Make [p, p + len) ready for the kernel to read (use SC_READ) or write
 * (SC_WRITE) it. */
static void ready(const void *p, size_t len, enum sc_use use)
{
  struct sc_cache *c = sc_live_cache();
  if (!c || !p || !len || sc_gpu_busy || sc_in_fault ||
      __atomic_load_n(&c->owner, __ATOMIC_RELAXED) == (uint64_t)pthread_self())
    return;
  sc_host_access(c, p, len, use);
}

static void ready_iov(const struct iovec *iov, int n, enum sc_use use)
{
  for (int i = 0; iov && i < n; i++) ready(iov[i].iov_base, iov[i].iov_len, use);
}

/* size * n bytes, saturated (fread and fwrite take two counts) */
static size_t items(size_t size, size_t n)
{
  return n && size > SIZE_MAX / n ? SIZE_MAX : size * n;
}

/* The next library's fn, looked up once (relaxed: every thread finds the
 * same address). */
#define SC_REAL(fn)                                                                        \
  static __typeof__(&fn) real_;                                                            \
  __typeof__(&fn) r_ = __atomic_load_n(&real_, __ATOMIC_RELAXED);                          \
  if (!r_) {                                                                               \
    r_ = (__typeof__(&fn))sc_next(#fn);                                                    \
    __atomic_store_n(&real_, r_, __ATOMIC_RELAXED);                                        \
  }

/* An interposer: ret name params, whose buffers `prep` makes ready, then
 * the next library's name args. */
#define SC_IO(ret, name, params, args, prep)                                               \
  ret name params                                                                          \
  {                                                                                        \
    SC_REAL(name);                                                                         \
    prep;                                                                                  \
    return r_ args;                                                                        \
  }

/* the kernel writes the buffers */
SC_IO(ssize_t, read, (int fd, void *buf, size_t n), (fd, buf, n), ready(buf, n, SC_WRITE))
SC_IO(ssize_t, pread, (int fd, void *buf, size_t n, off_t off), (fd, buf, n, off),
      ready(buf, n, SC_WRITE))
SC_IO(ssize_t, pread64, (int fd, void *buf, size_t n, off64_t off), (fd, buf, n, off),
      ready(buf, n, SC_WRITE))
SC_IO(ssize_t, readv, (int fd, const struct iovec *iov, int n), (fd, iov, n),
      ready_iov(iov, n, SC_WRITE))
SC_IO(ssize_t, preadv, (int fd, const struct iovec *iov, int n, off_t off), (fd, iov, n, off),
      ready_iov(iov, n, SC_WRITE))
SC_IO(ssize_t, recv, (int fd, void *buf, size_t n, int flags), (fd, buf, n, flags),
      ready(buf, n, SC_WRITE))
SC_IO(ssize_t, recvfrom,
      (int fd, void *buf, size_t n, int flags, struct sockaddr *from, socklen_t *len),
      (fd, buf, n, flags, from, len), ready(buf, n, SC_WRITE))
SC_IO(ssize_t, recvmsg, (int fd, struct msghdr *msg, int flags), (fd, msg, flags),
      if (msg) ready_iov(msg->msg_iov, (int)msg->msg_iovlen, SC_WRITE))
SC_IO(size_t, fread, (void *p, size_t size, size_t n, FILE *f), (p, size, n, f),
      ready(p, items(size, n), SC_WRITE))
SC_IO(size_t, fread_unlocked, (void *p, size_t size, size_t n, FILE *f), (p, size, n, f),
      ready(p, items(size, n), SC_WRITE))

/* the kernel reads the buffers */
SC_IO(ssize_t, write, (int fd, const void *buf, size_t n), (fd, buf, n), ready(buf, n, SC_READ))
SC_IO(ssize_t, pwrite, (int fd, const void *buf, size_t n, off_t off), (fd, buf, n, off),
      ready(buf, n, SC_READ))
SC_IO(ssize_t, pwrite64, (int fd, const void *buf, size_t n, off64_t off), (fd, buf, n, off),
      ready(buf, n, SC_READ))
SC_IO(ssize_t, writev, (int fd, const struct iovec *iov, int n), (fd, iov, n),
      ready_iov(iov, n, SC_READ))
SC_IO(ssize_t, pwritev, (int fd, const struct iovec *iov, int n, off_t off), (fd, iov, n, off),
      ready_iov(iov, n, SC_READ))
SC_IO(ssize_t, send, (int fd, const void *buf, size_t n, int flags), (fd, buf, n, flags),
      ready(buf, n, SC_READ))
SC_IO(ssize_t, sendto,
      (int fd, const void *buf, size_t n, int flags, const struct sockaddr *to, socklen_t len),
      (fd, buf, n, flags, to, len), ready(buf, n, SC_READ))
SC_IO(ssize_t, sendmsg, (int fd, const struct msghdr *msg, int flags), (fd, msg, flags),
      if (msg) ready_iov(msg->msg_iov, (int)msg->msg_iovlen, SC_READ))
SC_IO(size_t, fwrite, (const void *p, size_t size, size_t n, FILE *f), (p, size, n, f),
      ready(p, items(size, n), SC_READ))
SC_IO(size_t, fwrite_unlocked, (const void *p, size_t size, size_t n, FILE *f), (p, size, n, f),
      ready(p, items(size, n), SC_READ))
