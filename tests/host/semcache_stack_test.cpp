/*
 * semcache_stack_test.cpp - operands on a thread's stack
 * (semcache/src/stacks.h): copied for their call, never cached nor
 * protected, so the stack's later use of those pages (deeper calls,
 * alloca) never faults, whichever thread's stack they are on; the fault
 * handler's alternate signal stack for the threads that make calls; and
 * the program's routines found in a library loaded with dlopen(RTLD_LOCAL)
 * (find.h).  The CPU backend with the host BLAS as the "device".
 */
#include <alloca.h>
#include <cblas.h>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

#include <future>
#include <thread>
#include <vector>

#include "semcache/src/blas.h"
#include "semcache/src/find.h"
#include "semcache/src/stacks.h"
#include "tests/host/semcache_util.h"

namespace {

const int N = 48; /* 18 KiB a matrix: whole pages inside each */
const size_t BYTES = (size_t)N * N * sizeof(double);

void fill(double *p, size_t n, unsigned seed)
{
  for (size_t i = 0; i < n; i++) p[i] = (double)((i * 2654435761u + seed) % 1000) / 250.0 - 2.0;
}

/* C = A B on plain copies */
std::vector<double> ref_product(const double *a, const double *b)
{
  std::vector<double> c(N * N);
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0, a, N, b, N, 0.0, c.data(), N);
  return c;
}

/* Deep frames over the pages the operands had: each writes 1 KiB of its
 * own (a protected page there would fault with no stack for the handler). */
__attribute__((noinline)) uint64_t deep(int depth, uint64_t seed)
{
  volatile unsigned char buf[1024];
  for (int i = 0; i < 1024; i++) buf[i] = (unsigned char)(seed + (uint64_t)i);
  uint64_t sum = depth ? deep(depth - 1, seed * 31 + 7) : 0;
  for (int i = 0; i < 1024; i++) sum += buf[i];
  return sum;
}

class SemCacheStackTest : public SemCacheCalls {
protected:
  void SetUp() override { start_calls(GetParam(), 0, 0); }

  /* C = A B twice on a, b, c: right, and none of them cached (no hits) */
  void products_not_cached(double *a, double *b, double *cm)
  {
    fill(a, N * N, 3), fill(b, N * N, 5), fill(cm, N * N, 7);
    const sc_stats before = stats();
    for (int r = 0; r < 2; r++)
      ASSERT_EQ(0, sc_gemm(&s, SC_F64, 'N', 'N', N, N, N, 1.0, a, N, b, N, 0.0, cm, N));
    EXPECT_EQ(ref_product(a, b), std::vector<double>(cm, cm + N * N));
    for (const double *p : {a, b, cm})
      EXPECT_EQ(-1, sc_state_of(&c, p, BYTES)) << "an operand on a stack was cached";
    const sc_stats after = stats();
    EXPECT_EQ(before.hits, after.hits);
    EXPECT_EQ(before.to_dev + 4, after.to_dev) << "A and B sent for each call";
    EXPECT_EQ(0u, s.host_calls) << "served on the device, not passed to the host";
  }

  __attribute__((noinline)) void on_this_stack()
  {
    double a[N * N], b[N * N], cm[N * N];
    products_not_cached(a, b, cm);
  }

  __attribute__((noinline)) void on_alloca()
  {
    double *a = (double *)alloca(BYTES), *b = (double *)alloca(BYTES), *cm = (double *)alloca(BYTES);
    products_not_cached(a, b, cm);
  }
};

TEST_P(SemCacheStackTest, StackArraysAreCopiedNotCachedAndDeepCallsReuseThem)
{
  const uint64_t want = deep(300, 1);
  on_this_stack();
  EXPECT_EQ(want, deep(300, 1));
  on_alloca();
  EXPECT_EQ(want, deep(300, 1));
  /* the heap beside them is cached as ever */
  std::vector<double> a(N * N), b(N * N), cc(N * N);
  fill(a.data(), a.size(), 3), fill(b.data(), b.size(), 5);
  ASSERT_EQ(0, sc_gemm(&s, SC_F64, 'N', 'N', N, N, N, 1.0, a.data(), N, b.data(), N, 0.0, cc.data(), N));
  EXPECT_NE(-1, sc_state_of(&c, a.data(), BYTES));
  EXPECT_EQ(ref_product(a.data(), b.data()), cc);
  for (std::vector<double> *v : {&a, &b, &cc}) sc_forget(&c, v->data(), v->size() * sizeof(double));
}

TEST_P(SemCacheStackTest, AnotherThreadsStackIsNotCachedEither)
{
  /* main's array in a worker's call */
  double x[N];
  fill(x, N, 11);
  std::vector<double> want(x, x + N);
  cblas_dscal(N, 3.0, want.data(), 1);
  std::thread([&] { EXPECT_EQ(0, sc_scal(&s, SC_F64, N, 3.0, x, 1)); }).join();
  EXPECT_EQ(want, std::vector<double>(x, x + N));
  EXPECT_EQ(-1, sc_state_of(&c, x, sizeof(x)));
  /* a worker's array (the worker has made a call) in main's call */
  std::promise<double *> lent;
  std::promise<void> done;
  std::thread worker([&] {
    double y[N * N];
    double d = 0;
    EXPECT_EQ(0, sc_dot(&s, SC_F64, N, x, 1, x, 1, &d));
    lent.set_value(y);
    done.get_future().wait();
  });
  double *y = lent.get_future().get();
  std::vector<double> a(N * N), b(N * N);
  fill(a.data(), a.size(), 13), fill(b.data(), b.size(), 17);
  ASSERT_EQ(0, sc_gemm(&s, SC_F64, 'N', 'N', N, N, N, 1.0, a.data(), N, b.data(), N, 0.0, y, N));
  EXPECT_EQ(-1, sc_state_of(&c, y, BYTES)) << "the worker's stack array was cached";
  EXPECT_EQ(ref_product(a.data(), b.data()), std::vector<double>(y, y + N * N));
  done.set_value();
  worker.join();
  for (std::vector<double> *v : {&a, &b}) sc_forget(&c, v->data(), v->size() * sizeof(double));
}

INSTANTIATE_TEST_SUITE_P(Protocols, SemCacheStackTest, ::testing::Values(SC_WRITE_THROUGH, SC_WRITE_BACK),
                         [](const ::testing::TestParamInfo<sc_protocol> &i) {
                           return std::string(i.param == SC_WRITE_BACK ? "WriteBack" : "WriteThrough");
                         });

TEST(SemCacheStacks, TheHeapIsNoStackAndEveryThreadsStackIs)
{
  std::vector<double> heap(64);
  double local[64];
  sc_thread_ready();
  EXPECT_FALSE(sc_on_stack(heap.data(), sizeof(double) * heap.size()));
  EXPECT_TRUE(sc_on_stack(local, sizeof(local)));
  std::thread([&] {
    EXPECT_TRUE(sc_on_stack(local, sizeof(local))) << "main's stack, from another thread";
    double mine[8];
    EXPECT_TRUE(sc_on_stack(mine, sizeof(mine)));
  }).join();
}

TEST(SemCacheStacks, CallingThreadsGetASignalStackAndTheHandlerUsesIt)
{
  sc_cache c;
  ASSERT_EQ(0, sc_cache_init(&c, &sc_cpu_backend, SC_WRITE_BACK, 0));
  struct sigaction sa;
  ASSERT_EQ(0, sigaction(SIGSEGV, nullptr, &sa));
  EXPECT_TRUE(sa.sa_flags & SA_ONSTACK) << "the fault handler runs on the alternate stack";
  std::thread([] {
    stack_t ss;
    ASSERT_EQ(0, sigaltstack(nullptr, &ss));
    EXPECT_TRUE(ss.ss_flags & SS_DISABLE) << "a new thread starts without one";
    sc_thread_ready();
    ASSERT_EQ(0, sigaltstack(nullptr, &ss));
    EXPECT_FALSE(ss.ss_flags & SS_DISABLE);
    EXPECT_GE(ss.ss_size, (size_t)64 << 10);
  }).join();
  std::thread([] {
    /* a thread's own alternate stack stays */
    std::vector<char> own(1 << 16);
    stack_t ss = {}, now;
    ss.ss_sp = own.data();
    ss.ss_size = own.size();
    ASSERT_EQ(0, sigaltstack(&ss, nullptr));
    sc_thread_ready();
    ASSERT_EQ(0, sigaltstack(nullptr, &now));
    EXPECT_EQ(own.data(), now.ss_sp);
    ss.ss_flags = SS_DISABLE;
    sigaltstack(&ss, nullptr);
  }).join();
  EXPECT_EQ(0, sc_cache_destroy(&c));
}

TEST(SemCacheFind, ARoutineInALibraryLoadedLocally)
{
  /* LAPACKE is not linked into the tests: loaded here with RTLD_LOCAL */
  const char *lib = "liblapacke.so.3", *name = "LAPACKE_dlange";
  if (dlopen(lib, RTLD_LAZY | RTLD_NOLOAD)) GTEST_SKIP() << lib << " is loaded already";
  EXPECT_EQ(nullptr, sc_find(name));
  void *h = dlopen(lib, RTLD_LAZY | RTLD_LOCAL);
  if (!h) GTEST_SKIP() << "no " << lib << " (liblapacke): " << dlerror();
  EXPECT_EQ(nullptr, dlsym(RTLD_DEFAULT, name)) << "not in the global scope";
  EXPECT_EQ(dlsym(h, name), sc_find(name)) << "found through the library's own handle";
  EXPECT_EQ(dlsym(RTLD_DEFAULT, "dgemm_"), sc_find("dgemm_")) << "a linked routine: RTLD_NEXT";
  EXPECT_EQ(nullptr, sc_find("semcache_no_such_routine_"));
  dlclose(h);
}

} // namespace
