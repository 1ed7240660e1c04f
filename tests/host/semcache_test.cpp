/*
 * semcache_test.cpp - SemCache's cache and MSI protocol (semcache/src)
 * with the CPU backend standing for the GPU: operands sent once while the
 * CPU leaves them alone, a CPU write between calls invalidating (through
 * the protection fault), write-through and write-back results, neighbours
 * on one page, a range replaced by an overlapping one, buffers freed and
 * allocated again at the same address, eviction under a memory cap, bad
 * input, and threads (under ThreadSanitizer).  Every byte a "device" copy
 * or a host buffer must hold is compared.
 */
#include <gtest/gtest.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>
#include <vector>

#include "semcache/src/msi.h"
#include "semcache/src/protect.h"

namespace {

const size_t kPage = 4096;

/* page-aligned host memory, n bytes (a multiple of the page) */
struct Buf {
  uint8_t *p;
  size_t n;
  explicit Buf(size_t bytes, uint8_t fill = 0) : n(bytes)
  {
    p = (uint8_t *)aligned_alloc(kPage, bytes);
    memset(p, fill, bytes);
  }
  ~Buf() { free(p); }
};

class SemCacheTest : public ::testing::TestWithParam<sc_protocol> {
protected:
  sc_cache c;
  bool live = false;
  void start(sc_protocol p, size_t cap = 0)
  {
    ASSERT_EQ(0, sc_cache_init(&c, &sc_cpu_backend, p, cap));
    live = true;
  }
  void TearDown() override
  {
    if (live) {
      EXPECT_EQ(0, sc_cache_destroy(&c));
    }
  }
  sc_stats stats()
  {
    sc_stats s;
    sc_get_stats(&c, &s);
    return s;
  }
  /* the device copy of b for a READ, released at once */
  std::vector<uint8_t> device_view(Buf &b)
  {
    void *d = nullptr;
    EXPECT_EQ(0, sc_acquire(&c, b.p, b.n, SC_READ, &d));
    std::vector<uint8_t> v((uint8_t *)d, (uint8_t *)d + b.n);
    EXPECT_EQ(0, sc_release(&c, b.p, b.n, SC_READ));
    return v;
  }
  /* a "kernel" writing out's device copy whole with value v */
  void compute_into(Buf &out, uint8_t v)
  {
    void *d = nullptr;
    ASSERT_EQ(0, sc_acquire(&c, out.p, out.n, SC_WRITE, &d));
    memset(d, v, out.n);
    ASSERT_EQ(0, sc_release(&c, out.p, out.n, SC_WRITE));
  }
};

TEST_F(SemCacheTest, AnOperandIsSentOnceWhileTheCpuLeavesItAlone)
{
  start(SC_WRITE_BACK);
  Buf a(16 * kPage, 7);
  for (int i = 0; i < 5; i++) EXPECT_EQ(std::vector<uint8_t>(a.p, a.p + a.n), device_view(a));
  sc_stats s = stats();
  EXPECT_EQ(1u, s.to_dev);
  EXPECT_EQ(a.n, s.to_dev_bytes);
  EXPECT_EQ(4u, s.hits);
  EXPECT_EQ(1u, s.misses);
  EXPECT_EQ(SC_SHARED, sc_state_of(&c, a.p, a.n));
  volatile uint8_t r = a.p[100]; /* reads of a SHARED range do not fault */
  (void)r;
  EXPECT_EQ(0u, stats().faults);
}

TEST_F(SemCacheTest, ACpuWriteBetweenCallsInvalidates)
{
  start(SC_WRITE_THROUGH);
  Buf a(8 * kPage, 1);
  device_view(a);
  a.p[5 * kPage + 3] = 99; /* faults once, invalidates, then writes */
  EXPECT_EQ(99, a.p[5 * kPage + 3]);
  EXPECT_EQ(SC_INVALID, sc_state_of(&c, a.p, a.n));
  a.p[0] = 42; /* writable now: no second fault */
  sc_stats s = stats();
  EXPECT_EQ(1u, s.faults);
  EXPECT_EQ(1u, s.invalidations);
  std::vector<uint8_t> d = device_view(a);
  EXPECT_EQ(99, d[5 * kPage + 3]);
  EXPECT_EQ(42, d[0]);
  EXPECT_EQ(std::vector<uint8_t>(a.p, a.p + a.n), d);
  EXPECT_EQ(2u, stats().to_dev);
}

TEST_F(SemCacheTest, WriteThroughResultsAreOnTheHostAtOnce)
{
  start(SC_WRITE_THROUGH);
  Buf out(4 * kPage, 0);
  compute_into(out, 0x5a);
  for (size_t i = 0; i < out.n; i++) ASSERT_EQ(0x5a, out.p[i]) << i;
  sc_stats s = stats();
  EXPECT_EQ(1u, s.to_host);
  EXPECT_EQ(0u, s.to_dev) << "an output overwritten whole is not sent";
  EXPECT_EQ(0u, s.faults);
  EXPECT_EQ(SC_SHARED, sc_state_of(&c, out.p, out.n));
  device_view(out); /* the next call reads it: no transfer */
  EXPECT_EQ(0u, stats().to_dev);
}

TEST_F(SemCacheTest, WriteBackResultsComeBackAtTheFirstTouch)
{
  start(SC_WRITE_BACK);
  Buf out(4 * kPage, 0);
  compute_into(out, 0x33);
  EXPECT_EQ(SC_MODIFIED, sc_state_of(&c, out.p, out.n));
  EXPECT_EQ(0u, stats().to_host);
  EXPECT_EQ(0x33, out.p[kPage + 1]); /* a read faults and copies it back */
  sc_stats s = stats();
  EXPECT_EQ(1u, s.to_host);
  EXPECT_EQ(1u, s.faults);
  EXPECT_EQ(SC_SHARED, sc_state_of(&c, out.p, out.n));
  for (size_t i = 0; i < out.n; i++) ASSERT_EQ(0x33, out.p[i]) << i;
  EXPECT_EQ(1u, stats().faults) << "SHARED: reads do not fault";
  out.p[2] = 1; /* a write faults again and invalidates */
  EXPECT_EQ(SC_INVALID, sc_state_of(&c, out.p, out.n));
  std::vector<uint8_t> d = device_view(out);
  EXPECT_EQ(1, d[2]);
  EXPECT_EQ(0x33, d[3]);
}

TEST_F(SemCacheTest, ACpuWriteToAModifiedRangeTakesOneFault)
{
  start(SC_WRITE_BACK);
  Buf out(3 * kPage, 0);
  compute_into(out, 0x44);
  compute_into(out, 0x45); /* MODIFIED again: no change of protection needed */
  EXPECT_EQ(SC_MODIFIED, sc_state_of(&c, out.p, out.n));
  out.p[kPage + 7] = 9; /* the newest bytes come back, then the write lands */
  sc_stats s = stats();
#if defined(__x86_64__)
  EXPECT_EQ(1u, s.faults) << "a write is told from a read: one fault";
#else
  EXPECT_LE(s.faults, 2u);
#endif
  EXPECT_EQ(1u, s.to_host);
  EXPECT_EQ(1u, s.invalidations);
  EXPECT_EQ(SC_INVALID, sc_state_of(&c, out.p, out.n));
  for (size_t i = 0; i < out.n; i++) ASSERT_EQ(i == kPage + 7 ? 9 : 0x45, out.p[i]) << i;
  out.p[0] = 1; /* writable now */
  EXPECT_EQ(s.faults, stats().faults);
  std::vector<uint8_t> d = device_view(out); /* sent again, with the CPU's bytes */
  EXPECT_EQ(1, d[0]);
  EXPECT_EQ(9, d[kPage + 7]);
  EXPECT_EQ(0x45, d[kPage + 8]);
}

TEST_F(SemCacheTest, WriteBackResultsFeedTheNextCallWithoutCopies)
{
  start(SC_WRITE_BACK);
  Buf out(2 * kPage, 0);
  compute_into(out, 9);
  void *d = nullptr;
  ASSERT_EQ(0, sc_acquire(&c, out.p, out.n, SC_READ, &d));
  EXPECT_EQ(9, ((uint8_t *)d)[77]);
  ASSERT_EQ(0, sc_release(&c, out.p, out.n, SC_READ));
  sc_stats s = stats();
  EXPECT_EQ(0u, s.to_dev);
  EXPECT_EQ(0u, s.to_host);
  ASSERT_EQ(0, sc_flush(&c));
  EXPECT_EQ(1u, stats().to_host);
  EXPECT_EQ(SC_SHARED, sc_state_of(&c, out.p, out.n));
  EXPECT_EQ(0u, stats().faults);
  for (size_t i = 0; i < out.n; i++) ASSERT_EQ(9, out.p[i]) << i;
}

TEST_F(SemCacheTest, NeighboursOnOnePageAreNeverStale)
{
  start(SC_WRITE_BACK);
  Buf b(3 * kPage, 0);
  for (size_t i = 0; i < b.n; i++) b.p[i] = (uint8_t)i;
  /* x: 1000 bytes on page 0; y: from x's end across page 1 into page 2
   * (page 1 its interior); both share page 0, y shares page 2 with what
   * follows */
  uint8_t *x = b.p, *y = b.p + 1000;
  const size_t ny = 2 * kPage;
  void *dx, *dy;
  ASSERT_EQ(0, sc_acquire(&c, x, 1000, SC_READ, &dx));
  ASSERT_EQ(0, sc_release(&c, x, 1000, SC_READ));
  ASSERT_EQ(0, sc_acquire(&c, y, ny, SC_WRITE, &dy));
  memset(dy, 0xee, ny);
  ASSERT_EQ(0, sc_release(&c, y, ny, SC_WRITE)); /* y MODIFIED: page 1 inaccessible */
  EXPECT_EQ(2u, stats().to_host) << "y's head and tail edges, at its release";
  EXPECT_EQ(2u, stats().edge_copies);
  EXPECT_EQ(ny - kPage, stats().to_host_bytes);
  EXPECT_EQ(0xee, y[0]) << "y's edges came back at its release: no fault";
  EXPECT_EQ(0xee, y[ny - 1]);
  EXPECT_EQ((uint8_t)((1000 + ny) & 0xff), b.p[1000 + ny]) << "past y: untouched";
  EXPECT_EQ(0u, stats().faults);
  b.p[1000 + ny] = 5; /* beside y, on its last page (as malloc writes a header): no fault */
  x[1] = 77;          /* x, on a page it shares: no fault either */
  EXPECT_EQ(0u, stats().faults);
  EXPECT_EQ(SC_MODIFIED, sc_state_of(&c, y, ny));
  EXPECT_EQ(0xee, y[kPage]) << "y's interior faults back";
  EXPECT_EQ(1u, stats().faults);
  ASSERT_EQ(0, sc_acquire(&c, x, 1000, SC_READ, &dx)); /* x's changed bytes are sent */
  EXPECT_EQ(0, memcmp(dx, x, 1000));
  ASSERT_EQ(0, sc_release(&c, x, 1000, SC_READ));
  y[3] = 1; /* y's head edge: the next call sends it */
  ASSERT_EQ(0, sc_acquire(&c, y, ny, SC_READ, &dy));
  EXPECT_EQ(0, memcmp(dy, y, ny));
  ASSERT_EQ(0, sc_release(&c, y, ny, SC_READ));
  for (size_t i = 0; i < b.n; i++)
    ASSERT_EQ(i == 1 ? 77 : i == 1003 ? 1 : i >= 1000 && i < 1000 + ny ? 0xee : i == 1000 + ny ? 5 : (uint8_t)i, b.p[i]) << i;
}

TEST_F(SemCacheTest, ACpuWriteToAModifiedRangesEdgeSurvivesItsCopyBack)
{
  start(SC_WRITE_BACK);
  Buf b(4 * kPage, 1);
  uint8_t *y = b.p + 100; /* interior pages 1-2; edges on pages 0 and 3 */
  const size_t ny = 3 * kPage;
  void *d;
  ASSERT_EQ(0, sc_acquire(&c, y, ny, SC_WRITE, &d));
  memset(d, 0x40, ny);
  ASSERT_EQ(0, sc_release(&c, y, ny, SC_WRITE)); /* MODIFIED; its edges back now */
  y[0] = 0x41;      /* head edge: no fault */
  y[ny - 1] = 0x42; /* tail edge: no fault */
  EXPECT_EQ(0u, stats().faults);
  EXPECT_EQ(0x40, y[kPage]) << "the interior faults back";
  EXPECT_EQ(1u, stats().faults);
  EXPECT_EQ(0x41, y[0]) << "the copy back of the interior left the CPU's edge write";
  EXPECT_EQ(0x42, y[ny - 1]);
  ASSERT_EQ(0, sc_acquire(&c, y, ny, SC_READ, &d)); /* the changed edges are sent */
  EXPECT_EQ(0, memcmp(d, y, ny));
  ASSERT_EQ(0, sc_release(&c, y, ny, SC_READ));
  for (size_t i = 0; i < b.n; i++)
    ASSERT_EQ(i < 100 || i >= 100 + ny ? 1 : i == 100 ? 0x41 : i == 99 + ny ? 0x42 : 0x40, b.p[i]) << i;
}

TEST_F(SemCacheTest, AnOverlappingRangeReplacesTheOld)
{
  start(SC_WRITE_BACK);
  Buf b(4 * kPage, 3);
  void *d;
  ASSERT_EQ(0, sc_acquire(&c, b.p, 2 * kPage, SC_WRITE, &d));
  memset(d, 4, 2 * kPage);
  ASSERT_EQ(0, sc_release(&c, b.p, 2 * kPage, SC_WRITE));
  /* the whole buffer as one operand: the old range's bytes go home first */
  ASSERT_EQ(0, sc_acquire(&c, b.p, b.n, SC_READ, &d));
  EXPECT_EQ(-1, sc_state_of(&c, b.p, 2 * kPage));
  EXPECT_EQ(4, ((uint8_t *)d)[0]);
  EXPECT_EQ(3, ((uint8_t *)d)[3 * kPage]);
  ASSERT_EQ(0, sc_release(&c, b.p, b.n, SC_READ));
  EXPECT_EQ(4, b.p[kPage]);
}

TEST_F(SemCacheTest, FreedAndMappedAgainAtTheSameAddressIsSentAgain)
{
  start(SC_WRITE_BACK);
  const size_t n = 8 * kPage;
  uint8_t *m = (uint8_t *)mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(MAP_FAILED, (void *)m);
  memset(m, 1, n);
  void *d;
  ASSERT_EQ(0, sc_acquire(&c, m, n, SC_READ, &d));
  ASSERT_EQ(0, sc_release(&c, m, n, SC_READ));
  /* what the drop-in's munmap does before the real one */
  sc_forget(&c, m, n);
  ASSERT_EQ(0, munmap(m, n));
  uint8_t *m2 = (uint8_t *)mmap(m, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  ASSERT_EQ(m, m2);
  memset(m2, 2, n);
  ASSERT_EQ(0, sc_acquire(&c, m2, n, SC_READ, &d));
  EXPECT_EQ(2, ((uint8_t *)d)[n - 1]) << "never the old copy";
  ASSERT_EQ(0, sc_release(&c, m2, n, SC_READ));
  EXPECT_EQ(2u, stats().to_dev);
  EXPECT_EQ(1u, stats().invalidations);
  sc_forget(&c, m2, n);
  munmap(m2, n);
}

TEST_F(SemCacheTest, ForgetDropsAModifiedRangeWithoutWritingIt)
{
  start(SC_WRITE_BACK);
  Buf out(2 * kPage, 5);
  compute_into(out, 6);
  sc_forget(&c, out.p + 10, 1); /* any byte of it */
  EXPECT_EQ(-1, sc_state_of(&c, out.p, out.n));
  EXPECT_EQ(0u, stats().to_host);
  out.p[0] = 8; /* writable again, no fault */
  EXPECT_EQ(5, out.p[1]);
  EXPECT_EQ(0u, stats().faults);
}

TEST_F(SemCacheTest, EvictionUnderAMemoryCap)
{
  start(SC_WRITE_BACK, 3 * 4 * kPage);
  std::vector<Buf *> m;
  for (int i = 0; i < 4; i++) m.push_back(new Buf(4 * kPage, (uint8_t)(10 + i)));
  compute_into(*m[0], 50); /* MODIFIED, the least recently used */
  device_view(*m[1]);
  device_view(*m[2]);
  device_view(*m[3]); /* evicts m[0], writing it back */
  sc_stats s = stats();
  EXPECT_EQ(1u, s.evictions);
  EXPECT_EQ(1u, s.to_host);
  EXPECT_EQ(-1, sc_state_of(&c, m[0]->p, m[0]->n));
  EXPECT_EQ(50, m[0]->p[123]);
  /* all pinned: no room for a fourth, the call goes to the CPU */
  void *d[4];
  for (int i = 1; i < 4; i++) ASSERT_EQ(0, sc_acquire(&c, m[i]->p, m[i]->n, SC_READ, &d[i]));
  EXPECT_EQ(-ENOSPC, sc_acquire(&c, m[0]->p, m[0]->n, SC_READ, &d[0]));
  EXPECT_EQ(1u, stats().refused);
  for (int i = 1; i < 4; i++) ASSERT_EQ(0, sc_release(&c, m[i]->p, m[i]->n, SC_READ));
  Buf huge(16 * kPage);
  EXPECT_EQ(-ENOSPC, sc_acquire(&c, huge.p, huge.n, SC_READ, &d[0])) << "larger than the cap";
  for (Buf *b : m) {
    sc_forget(&c, b->p, b->n);
    delete b;
  }
}

TEST_F(SemCacheTest, BadInput)
{
  sc_cache x;
  EXPECT_EQ(-EINVAL, sc_cache_init(&x, nullptr, SC_WRITE_BACK, 0));
  EXPECT_EQ(-EINVAL, sc_cache_init(&x, &sc_cpu_backend, (sc_protocol)7, 0));
  start(SC_WRITE_THROUGH);
  Buf a(kPage);
  void *d;
  EXPECT_EQ(-EINVAL, sc_acquire(&c, nullptr, 10, SC_READ, &d));
  EXPECT_EQ(-EINVAL, sc_acquire(&c, a.p, 0, SC_READ, &d));
  EXPECT_EQ(-EINVAL, sc_acquire(&c, (void *)~(uintptr_t)0, 10, SC_READ, &d)) << "wraps";
  EXPECT_EQ(-ENOENT, sc_release(&c, a.p, a.n, SC_READ)) << "never acquired";
  ASSERT_EQ(0, sc_acquire(&c, a.p, a.n, SC_READ, &d));
  EXPECT_EQ(-EBUSY, sc_acquire(&c, a.p, 100, SC_READ, &d)) << "overlaps a range in use";
  ASSERT_EQ(0, sc_release(&c, a.p, a.n, SC_READ));
  EXPECT_EQ(-ENOENT, sc_release(&c, a.p, a.n, SC_READ)) << "released twice";
}

TEST_F(SemCacheTest, DestroyWritesBackAndUnprotects)
{
  ASSERT_EQ(0, sc_cache_init(&c, &sc_cpu_backend, SC_WRITE_BACK, 0));
  Buf out(2 * kPage, 0), in(2 * kPage, 1);
  compute_into(out, 12);
  device_view(in);
  ASSERT_EQ(0, sc_cache_destroy(&c));
  in.p[0] = 2; /* no cache: plain memory again */
  for (size_t i = 0; i < out.n; i++) ASSERT_EQ(12, out.p[i]) << i;
}

/* Threads: each computes its own outputs from shared inputs and its own,
 * writes its own inputs on the CPU between calls (faults from many
 * threads), and checks every result it reads back. */
TEST_P(SemCacheTest, ThreadsKeepEveryCopyCoherent)
{
  start(GetParam());
  const int nt = 6, iters = 60;
  Buf shared(8 * kPage, 0x11);
  std::vector<std::thread> th;
  std::vector<int> bad(nt, 0);
  for (int t = 0; t < nt; t++)
    th.emplace_back([&, t] {
      Buf in(2 * kPage, (uint8_t)t), out(2 * kPage, 0);
      for (int i = 0; i < iters; i++) {
        const uint8_t v = (uint8_t)(t * 31 + i);
        in.p[(i * 97) % in.n] = v; /* the CPU changes an input */
        void *ds, *di, *dout;
        if (sc_acquire(&c, shared.p, shared.n, SC_READ, &ds) || sc_acquire(&c, in.p, in.n, SC_READ, &di) ||
            sc_acquire(&c, out.p, out.n, SC_WRITE, &dout)) {
          bad[t]++;
          return;
        }
        /* the "kernel": out = in + shared[0] */
        for (size_t k = 0; k < out.n; k++)
          ((uint8_t *)dout)[k] = (uint8_t)(((uint8_t *)di)[k] + ((uint8_t *)ds)[0]);
        sc_release(&c, out.p, out.n, SC_WRITE);
        sc_release(&c, in.p, in.n, SC_READ);
        sc_release(&c, shared.p, shared.n, SC_READ);
        for (size_t k = 0; k < out.n; k++) bad[t] += out.p[k] != (uint8_t)(in.p[k] + 0x11);
      }
      sc_forget(&c, in.p, in.n);
      sc_forget(&c, out.p, out.n);
    });
  for (auto &x : th) x.join();
  for (int t = 0; t < nt; t++) EXPECT_EQ(0, bad[t]) << "thread " << t;
  /* the shared input once; each thread's input at every iteration (the
   * CPU wrote it since); outputs, overwritten whole, never */
  EXPECT_EQ(1u + (uint64_t)nt * iters, stats().to_dev);
  EXPECT_GE(stats().faults, (uint64_t)nt * (iters - 1));
}

INSTANTIATE_TEST_SUITE_P(Protocols, SemCacheTest, ::testing::Values(SC_WRITE_THROUGH, SC_WRITE_BACK),
                         [](const ::testing::TestParamInfo<sc_protocol> &i) {
                           return std::string(i.param == SC_WRITE_THROUGH ? "WriteThrough" : "WriteBack");
                         });

} // namespace
