/*
 * semcache_threads_test.cpp - SemCache's cache with program threads that
 * fault where the cache cannot wait for them: inside malloc, and inside
 * malloc called under a lock the cache's copies need too (the CUDA
 * driver's), with every copy made by a copier thread as the GPU backend
 * makes them (gpu.c).
 */
#include <gtest/gtest.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>
#include <vector>

#include "semcache/src/msi.h"
#include "semcache/src/protect.h"

namespace {

/* Run body (returning an exit status) in a child process with a watchdog
 * of secs seconds; the child's exit status, 128 + the signal that ended
 * it (142: the watchdog, a hang; 134: an abort), or -1. */
template <typename F> int in_child(unsigned secs, F body)
{
  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    alarm(secs);
    _exit(body());
  }
  int st = 0;
  if (waitpid(pid, &st, 0) != pid) return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

/* gpu.c's rule, on the host: every copy under the cache's lock made by a
 * copier thread, which mallocs (as a CUDA call may), the lock's holder
 * waiting.  Four threads each write back a malloc'ed matrix and then
 * malloc beside it (from the top of their arena, the new chunk's header
 * beside the matrix's last byte).  With "the driver's lock", the copier
 * holds a lock around each copy, as the CUDA driver does, and the threads
 * malloc while holding it, as a CUDA call that allocates does (cuSOLVER's
 * handle, a workspace): a fault there while another thread holds the
 * cache's lock and waits for the copier is a deadlock (the four-thread GPU
 * hang), unless malloc never faults.  In a child with a watchdog: a hang
 * fails. */
namespace copier {
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
pthread_mutex_t driver = PTHREAD_MUTEX_INITIALIZER; /* the copier holds it around a copy */
int state, to_dev_q, rc_q;
sc_store how_q;
void *ctx_q, *dst_q;
const void *src_q;
size_t bytes_q;

void mallocs()
{
  void *p[8];
  for (int i = 0; i < 8; i++) p[i] = malloc(3000 + 512 * i); /* past the tcache */
  for (int i = 0; i < 8; i++) free(p[i]);
}

void *main_(void *)
{
  sc_fault_fatal = 1;
  pthread_mutex_lock(&m);
  for (;;) {
    while (state != 1) pthread_cond_wait(&cv, &m);
    mallocs();
    pthread_mutex_lock(&driver);
    rc_q = to_dev_q ? sc_cpu_backend.to_dev(ctx_q, dst_q, src_q, bytes_q)
                    : sc_cpu_backend.to_host(ctx_q, dst_q, src_q, bytes_q, how_q);
    pthread_mutex_unlock(&driver);
    state = 2;
    pthread_cond_broadcast(&cv);
  }
  return nullptr;
}

int ask(int to_dev, void *ctx, void *dst, const void *src, size_t bytes, sc_store how)
{
  pthread_mutex_lock(&m);
  how_q = how, to_dev_q = to_dev, ctx_q = ctx, dst_q = dst, src_q = src, bytes_q = bytes, state = 1;
  pthread_cond_broadcast(&cv);
  while (state != 2) pthread_cond_wait(&cv, &m);
  state = 0;
  const int rc = rc_q;
  pthread_mutex_unlock(&m);
  return rc;
}
/* The test thread's read that faults: TSan records it before the fault,
 * so not the happens-before of the handler's lock and the copier's */
__attribute__((no_sanitize("thread"), noinline)) int ends_are(const uint8_t *x, size_t n, uint8_t v)
{
  return x[0] == v && x[n - 1] == v;
}
int to_dev(void *ctx, void *d, const void *h, size_t b) { return ask(1, ctx, d, h, b, SC_STORE_OPEN); }
int to_host(void *ctx, void *h, const void *d, size_t b, sc_store how) { return ask(0, ctx, h, d, b, how); }
} // namespace copier

class SemCacheCopierTest : public ::testing::TestWithParam<bool> {};

TEST_P(SemCacheCopierTest, FaultsInsideMallocWithEveryCopyOnACopierThread)
{
  const bool driver = GetParam();
  const int status = in_child(30, [driver] {
    /* With eviction (a 40000-byte cap) a thread reads its MODIFIED matrix
     * while another thread's eviction writes it back: with the pages
     * opened for that copy it saw old bytes about 1 run in 6 (exit 41);
     * closed stores keep them without access until the copy ends.  Where
     * this host takes no closed stores the race is a known limit
     * (docs/semcache.md), and only the cap 0 case runs. */
    std::vector<size_t> caps = {0};
    if (sc_store_closed_ok()) caps.push_back(40000);
    for (sc_protocol proto : {SC_WRITE_BACK, SC_WRITE_THROUGH})
      for (size_t cap : caps) {
        static sc_cache c;
        sc_backend be = sc_cpu_backend;
        be.to_dev = copier::to_dev;
        be.to_host = copier::to_host;
        if (sc_cache_init(&c, &be, proto, cap)) return 2;
        pthread_t cp;
        static int started;
        if (!started++ && pthread_create(&cp, nullptr, copier::main_, nullptr)) return 3;
        std::vector<std::thread> ts;
        for (int t = 0; t < 4; t++)
          ts.emplace_back([proto, cap, driver] {
            const size_t n = 12800 + 72; /* ends off a page boundary */
            for (int r = 0; r < 50; r++) {
              /* x's block has 64 bytes past the range, on its last page */
              uint8_t *a = (uint8_t *)malloc(n), *x = (uint8_t *)malloc(n + 64);
              memset(a, 1, n);
              memset(x, 2, n);
              void *d;
              if (sc_acquire(&c, a, n, SC_READ, &d) == 0) sc_release(&c, a, n, SC_READ);
              uint8_t want = 2; /* a full cache (every range pinned) may refuse */
              if (sc_acquire(&c, x, n, (sc_use)(SC_READ | SC_WRITE), &d) == 0) {
                memset(d, 3, n);
                sc_release(&c, x, n, SC_WRITE);
                want = 3;
              }
              if (driver) pthread_mutex_lock(&copier::driver);
              void *more = malloc(9000); /* from the top, beside x */
              if (driver) x[n + 8] = 7;  /* what malloc writes beside a chunk */
              if (driver) pthread_mutex_unlock(&copier::driver);
              if (!copier::ends_are(x, n, want)) _exit(cap ? 40 + (proto == SC_WRITE_BACK) : 30 + (proto == SC_WRITE_BACK));
              sc_forget(&c, a, n);
              sc_forget(&c, x, n);
              free(more);
              free(a);
              free(x);
            }
          });
        for (auto &t : ts) t.join();
        if (sc_cache_destroy(&c)) return 5;
      }
    return 0;
  });
  EXPECT_EQ(0, status) << "142: the watchdog (a hang); 134: an abort; 30-31, 40-41: old bytes read";
}

/* System calls on cached matrices while other threads evict them and
 * fault on theirs: each of four threads computes into its own matrix
 * (MODIFIED), writes it to a pipe after sc_host_access(SC_READ) as the
 * drop-in's write does, reads it back into a plain buffer and checks every
 * byte; then reads new bytes from the pipe into the matrix after
 * sc_host_access(SC_WRITE), as the drop-in's read does, and checks that the
 * next call's device copy holds them.  Two matrices a thread and a cap of
 * one and a half make every acquire evict, the threads' ranges each
 * other's too.  In a child with a watchdog. */
TEST(SemCacheThreadsTest, SystemCallsBesideEvictionsAndFaults)
{
  const int status = in_child(60, [] {
    const size_t n = 3 * 4096 + 200;
    for (sc_protocol proto : {SC_WRITE_BACK, SC_WRITE_THROUGH}) {
      static sc_cache c;
      if (sc_cache_init(&c, &sc_cpu_backend, proto, n + n / 2)) return 2;
      std::vector<std::thread> ts;
      for (int t = 0; t < 4; t++)
        ts.emplace_back([t] {
          int fds[2];
          if (pipe(fds)) _exit(3);
          uint8_t *bufs[2] = {(uint8_t *)aligned_alloc(4096, 4 * 4096), (uint8_t *)aligned_alloc(4096, 4 * 4096)};
          std::vector<uint8_t> back(n), fresh(n);
          for (int r = 0; r < 40; r++) {
            uint8_t *const x = bufs[r % 2]; /* two matrices: each evicts the other */
            const uint8_t v = (uint8_t)(t * 50 + r);
            void *d;
            if (sc_acquire(&c, x + 100, n, SC_WRITE, &d) != 0) continue; /* a full cache may refuse */
            memset(d, v, n);
            sc_release(&c, x + 100, n, SC_WRITE);
            sc_host_access(&c, x + 100, n, SC_READ);
            for (size_t done = 0; done < n;) { /* a pipe takes 64 KiB; n is less */
              const ssize_t w = write(fds[1], x + 100 + done, n - done);
              if (w <= 0) _exit(10);
              done += (size_t)w;
            }
            if (read(fds[0], back.data(), n) != (ssize_t)n) _exit(11);
            for (size_t i = 0; i < n; i++)
              if (back[i] != v) _exit(12);
            memset(fresh.data(), (uint8_t)(v ^ 0xff), n);
            if (write(fds[1], fresh.data(), n) != (ssize_t)n) _exit(13);
            sc_host_access(&c, x + 100, n, SC_WRITE);
            if (read(fds[0], x + 100, n) != (ssize_t)n) _exit(14);
            if (sc_acquire(&c, x + 100, n, SC_READ, &d) == 0) {
              const int same = memcmp(d, fresh.data(), n) == 0;
              sc_release(&c, x + 100, n, SC_READ);
              if (!same) _exit(15);
            }
          }
          for (uint8_t *x : bufs) {
            sc_forget(&c, x + 100, n);
            free(x);
          }
          close(fds[0]);
          close(fds[1]);
        });
      for (auto &t : ts) t.join();
      sc_stats st;
      sc_get_stats(&c, &st);
      if (st.evictions == 0) return 6; /* the cap made no room: the test proved nothing */
      if (sc_cache_destroy(&c)) return 5;
    }
    return 0;
  });
  EXPECT_EQ(0, status) << "142: the watchdog (a hang); 6: no eviction; 10-11: a write or read "
                          "failed (EFAULT?); 12: old bytes written; 15: the device missed the bytes read";
}

INSTANTIATE_TEST_SUITE_P(Copier, SemCacheCopierTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool> &i) {
                           return std::string(i.param ? "MallocUnderTheDriversLock" : "Malloc");
                         });

} // namespace
