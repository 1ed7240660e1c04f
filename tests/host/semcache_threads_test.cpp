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

#include "libgpufs/semcache/cache.h"
#include "libgpufs/semcache/protect.h"

namespace {

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
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    alarm(30);
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
        if (sc_cache_init(&c, &be, proto, cap)) _exit(2);
        pthread_t cp;
        static int started;
        if (!started++ && pthread_create(&cp, nullptr, copier::main_, nullptr)) _exit(3);
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
        if (sc_cache_destroy(&c)) _exit(5);
      }
    _exit(0);
  }
  int st = 0;
  ASSERT_EQ(pid, waitpid(pid, &st, 0));
  ASSERT_TRUE(WIFEXITED(st)) << "killed by signal " << (WIFSIGNALED(st) ? WTERMSIG(st) : 0)
                             << " (14: the watchdog, a hang; 6: an abort)";
  EXPECT_EQ(0, WEXITSTATUS(st));
}

INSTANTIATE_TEST_SUITE_P(Copier, SemCacheCopierTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool> &i) {
                           return std::string(i.param ? "MallocUnderTheDriversLock" : "Malloc");
                         });

} // namespace
