/*
 * semcache_gesv_test.cpp - SemCache's gesv (semcache/src/gesv.c) over
 * the cache with the CPU backend and the host LAPACK as the "device": the
 * answer equal, bit for bit, to LAPACK's dgesv_ (A's factors, the pivots,
 * x); a second solve of the same matrix bytes (copied into a work array,
 * as a program does) is a memo hit that sends only B; a changed matrix,
 * a singular one and the memo turned off are not hits; single precision;
 * the parameter numbers.  And the device memory pool (pool.c).
 */
#include <gtest/gtest.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

#include "semcache/src/blas.h"
#include "tests/host/semcache_util.h"
#include "semcache/src/fortran.h"
#include "semcache/src/pool.h"

namespace {

template <typename T> struct Arr {
  T *p;
  size_t n;
  explicit Arr(size_t count) : n(count)
  {
    p = (T *)aligned_alloc(4096, (count * sizeof(T) + 4095) / 4096 * 4096);
    memset(p, 0, count * sizeof(T));
  }
  ~Arr() { free(p); }
  std::vector<T> copy() const { return std::vector<T>(p, p + n); }
};

/* a well-conditioned n x n matrix (leading dimension ld) and a right side */
template <typename T> static void fill(T *k, int n, int ld, unsigned seed)
{
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++)
      k[i + (size_t)j * ld] = (T)((double)(((size_t)i * 2654435761u + j * 40503u + seed) % 1000) / 250.0 - 2.0) +
                              (i == j ? (T)(4 * n) : (T)0);
}

class SemCacheGesvTest : public SemCacheCalls {
protected:
  void start(sc_protocol p, int memo = 1) { start_calls(p, 0, memo); }
  template <typename T> void forget(Arr<T> &a) { sc_forget(&c, a.p, a.n * sizeof(T)); }
};

TEST_P(SemCacheGesvTest, ASecondSolveOfTheSameBytesIsAMemoHitWithLapacksAnswer)
{
  start(GetParam());
  const int n = 96, lda = 100, nrhs = 2, ldb = 98;
  Arr<double> k(lda * n), work(lda * n), b(ldb * nrhs);
  Arr<int> ipiv(n);
  fill(k.p, n, lda, 1);
  /* LAPACK's own answer on copies */
  std::vector<double> ra = k.copy(), rb(ldb * nrhs);
  for (size_t i = 0; i < rb.size(); i++) rb[i] = (double)(i % 17) - 8;
  std::vector<int> rp(n);
  int info = -1;
  dgesv_(&n, &nrhs, ra.data(), &lda, rp.data(), rb.data(), &ldb, &info);
  ASSERT_EQ(0, info);
  for (int solve = 0; solve < 2; solve++) {
    memcpy(work.p, k.p, k.n * 8); /* the program's copy of K */
    for (size_t i = 0; i < b.n; i++) b.p[i] = (double)(i % 17) - 8;
    const uint64_t sent = stats().to_dev_bytes;
    info = -1;
    ASSERT_EQ(0, sc_gesv(&s, SC_F64, n, nrhs, work.p, lda, ipiv.p, b.p, ldb, &info));
    EXPECT_EQ(0, info);
    EXPECT_EQ(ra, work.copy()) << "solve " << solve << ": A holds LAPACK's factors (the gaps kept)";
    EXPECT_EQ(rp, ipiv.copy()) << "solve " << solve;
    EXPECT_EQ(rb, b.copy()) << "solve " << solve << ": x, bit for bit";
    EXPECT_EQ((uint64_t)solve, s.memo_hits);
    if (solve == 1) { /* whole, or its unprotected edges where it has no page of its own */
      EXPECT_EQ(((size_t)(nrhs - 1) * ldb + n) * 8, stats().to_dev_bytes - sent)
          << "a hit sends B alone";
    }
  }
  EXPECT_EQ(2u, s.gesv_calls);
  EXPECT_EQ(0u, s.host_calls);
  /* the matrix changed in one element: factored anew, LAPACK's answer */
  work.p[5 + 7 * lda] = k.p[5 + 7 * lda] += 1.0;
  memcpy(work.p, k.p, k.n * 8);
  ra = k.copy();
  for (size_t i = 0; i < b.n; i++) b.p[i] = rb[i] = 1.0;
  dgesv_(&n, &nrhs, ra.data(), &lda, rp.data(), rb.data(), &ldb, &info);
  ASSERT_EQ(0, sc_gesv(&s, SC_F64, n, nrhs, work.p, lda, ipiv.p, b.p, ldb, &info));
  EXPECT_EQ(1u, s.memo_hits) << "another matrix: no hit";
  EXPECT_EQ(ra, work.copy());
  EXPECT_EQ(rb, b.copy());
  forget(k), forget(work), forget(b), forget(ipiv);
}

/* structdyn's medium size: 8 matrices solved in turn, each every round */
TEST_P(SemCacheGesvTest, EightMatricesInRotationHitAfterTheFirstRound)
{
  start(GetParam());
  const int n = 40, nk = 8, rounds = 3, one = 1;
  std::vector<Arr<double> *> k;
  for (int i = 0; i < nk; i++) {
    k.push_back(new Arr<double>(n * n));
    fill(k[i]->p, n, n, 10 + i);
  }
  Arr<double> work(n * n), b(n);
  Arr<int> ipiv(n);
  int info = -1;
  for (int r = 0; r < rounds; r++)
    for (int i = 0; i < nk; i++) {
      memcpy(work.p, k[i]->p, work.n * 8);
      for (int j = 0; j < n; j++) b.p[j] = (double)(j % 7 + i);
      std::vector<double> ra = k[i]->copy(), rb = b.copy();
      std::vector<int> rp(n);
      dgesv_(&n, &one, ra.data(), &n, rp.data(), rb.data(), &n, &info);
      ASSERT_EQ(0, sc_gesv(&s, SC_F64, n, 1, work.p, n, ipiv.p, b.p, n, &info));
      EXPECT_EQ(0, info);
      EXPECT_EQ(ra, work.copy()) << "round " << r << " matrix " << i;
      EXPECT_EQ(rp, ipiv.copy()) << "round " << r << " matrix " << i;
      EXPECT_EQ(rb, b.copy()) << "round " << r << " matrix " << i;
      EXPECT_EQ((uint64_t)(r * nk + i + 1), s.gesv_calls);
      EXPECT_EQ((uint64_t)(r == 0 ? 0 : (r - 1) * nk + i + 1), s.memo_hits) << "round " << r << " matrix " << i;
      EXPECT_EQ(-1, sc_state_of(&c, work.p, work.n * 8)) << "A is compared, never a range";
    }
  EXPECT_EQ((uint64_t)((rounds - 1) * nk), s.memo_hits);
  for (auto *a : k) delete a;
  forget(work), forget(b), forget(ipiv);
}

/* A budget of three matrices: the least recently used of four is dropped,
 * so a rotation of four never hits and one of three does. */
TEST_P(SemCacheGesvTest, TheMemoBudgetKeepsTheMostRecentlyUsed)
{
  start(GetParam());
  const int n = 32, one = 1;
  const size_t per = 2 * (size_t)n * n * 8; /* orig and lu */
  sc_memo_budget(&s, 3 * per);
  Arr<double> k[4] = {Arr<double>(n * n), Arr<double>(n * n), Arr<double>(n * n), Arr<double>(n * n)};
  for (int i = 0; i < 4; i++) fill(k[i].p, n, n, 30 + i);
  Arr<double> work(n * n), b(n);
  Arr<int> ipiv(n);
  int info = -1;
  auto solve = [&](int i) {
    memcpy(work.p, k[i].p, work.n * 8);
    for (int j = 0; j < n; j++) b.p[j] = 1.0;
    std::vector<double> ra = k[i].copy(), rb = b.copy();
    std::vector<int> rp(n);
    dgesv_(&n, &one, ra.data(), &n, rp.data(), rb.data(), &n, &info);
    EXPECT_EQ(0, sc_gesv(&s, SC_F64, n, 1, work.p, n, ipiv.p, b.p, n, &info));
    EXPECT_EQ(ra, work.copy()) << "matrix " << i;
    EXPECT_EQ(rb, b.copy()) << "matrix " << i;
  };
  for (int r = 0; r < 2; r++)
    for (int i = 0; i < 4; i++) solve(i);
  EXPECT_EQ(0u, s.memo_hits) << "four in turn, room for three: each dropped before its turn";
  for (int r = 0; r < 2; r++)
    for (int i = 1; i < 4; i++) solve(i);
  EXPECT_EQ(6u, s.memo_hits) << "three in turn: the last three solved are kept, every solve hits";
  /* a matrix over half the budget is never remembered */
  sc_memo_budget(&s, per - 1);
  solve(3);
  solve(3);
  EXPECT_EQ(6u, s.memo_hits) << "too large for the budget: factored each time";
  forget(work), forget(b), forget(ipiv);
}

/* 1.2 MB: compared in column parts (the caller and two helpers); a
 * change in any part is seen */
TEST_P(SemCacheGesvTest, ALargeMatrixIsComparedInPartsAndAnyChangeIsSeen)
{
  start(GetParam());
  const int n = 392, one = 1;
  sc_memo_threads(&s, 3); /* the caller and two helpers, whatever the cores */
  Arr<double> k(n * n), work(n * n), b(n);
  Arr<int> ipiv(n);
  fill(k.p, n, n, 77);
  int info = -1;
  uint64_t hits = 0;
  /* unchanged, then a change in the last column, one in the middle, one
   * in the second column: each change a miss, each repeat a hit */
  const int where[] = {-1, -1, n - 1, n - 1, n / 2, n / 2, 1, 1};
  for (int r = 0; r < 8; r++) {
    if (where[r] >= 0 && r % 2 == 0) k.p[3 + (size_t)where[r] * n] += 0.5;
    memcpy(work.p, k.p, work.n * 8);
    for (int j = 0; j < n; j++) b.p[j] = (double)(j % 9) - 4;
    std::vector<double> ra = k.copy(), rb = b.copy();
    std::vector<int> rp(n);
    dgesv_(&n, &one, ra.data(), &n, rp.data(), rb.data(), &n, &info);
    ASSERT_EQ(0, sc_gesv(&s, SC_F64, n, 1, work.p, n, ipiv.p, b.p, n, &info));
    EXPECT_EQ(0, info);
    EXPECT_EQ(ra, work.copy()) << "round " << r;
    EXPECT_EQ(rb, b.copy()) << "round " << r;
    hits += r % 2;
    EXPECT_EQ(hits, s.memo_hits) << "round " << r << (r % 2 ? ": a repeat hits" : ": a change misses");
  }
  forget(k), forget(work), forget(b), forget(ipiv);
}

TEST_P(SemCacheGesvTest, SinglePrecisionAndTwoMatricesTakeTurns)
{
  start(GetParam());
  const int n = 64, one = 1;
  Arr<float> k1(n * n), k2(n * n), work(n * n), b(n);
  Arr<int> ipiv(n);
  fill(k1.p, n, n, 2);
  fill(k2.p, n, n, 3);
  int info = -1;
  for (int r = 0; r < 4; r++) {
    const Arr<float> &k = r % 2 ? k2 : k1;
    memcpy(work.p, k.p, k.n * 4);
    for (int i = 0; i < n; i++) b.p[i] = (float)(i % 5);
    std::vector<float> ra = k.copy(), rb = b.copy();
    std::vector<int> rp(n);
    sgesv_(&n, &one, ra.data(), &n, rp.data(), rb.data(), &n, &info);
    ASSERT_EQ(0, sc_gesv(&s, SC_F32, n, 1, work.p, n, ipiv.p, b.p, n, &info));
    EXPECT_EQ(0, info);
    EXPECT_EQ(ra, work.copy()) << "round " << r;
    EXPECT_EQ(rb, b.copy()) << "round " << r;
  }
  EXPECT_EQ(2u, s.memo_hits) << "each matrix factored once, solved twice";
  forget(k1), forget(k2), forget(work), forget(b), forget(ipiv);
}

TEST_P(SemCacheGesvTest, ASingularMatrixIsLapacksInfoAndNotRemembered)
{
  start(GetParam());
  const int n = 16, one = 1;
  Arr<double> k(n * n), work(n * n), b(n);
  Arr<int> ipiv(n);
  fill(k.p, n, n, 4);
  for (int i = 0; i < n; i++) k.p[i + 3 * n] = 0; /* column 3 zero: U(4, 4) = 0 */
  std::vector<double> ra = k.copy(), rb(n, 1.0);
  std::vector<int> rp(n);
  int want = 0, info = 0;
  dgesv_(&n, &one, ra.data(), &n, rp.data(), rb.data(), &n, &want);
  ASSERT_GT(want, 0);
  for (int r = 0; r < 2; r++) {
    memcpy(work.p, k.p, k.n * 8);
    for (int i = 0; i < n; i++) b.p[i] = 1.0;
    ASSERT_EQ(0, sc_gesv(&s, SC_F64, n, 1, work.p, n, ipiv.p, b.p, n, &info));
    EXPECT_EQ(want, info);
    EXPECT_EQ(ra, work.copy()) << "the factors so far, as LAPACK leaves them";
    EXPECT_EQ(std::vector<double>(n, 1.0), b.copy()) << "B untouched";
  }
  EXPECT_EQ(0u, s.memo_hits);
  forget(k), forget(work), forget(b), forget(ipiv);
}

TEST_F(SemCacheGesvTest, TheMemoTurnedOffFactorsEveryTime)
{
  start(SC_WRITE_BACK, 0);
  const int n = 32;
  Arr<double> k(n * n), work(n * n), b(n);
  Arr<int> ipiv(n);
  fill(k.p, n, n, 5);
  int info = -1;
  for (int r = 0; r < 2; r++) {
    memcpy(work.p, k.p, k.n * 8);
    ASSERT_EQ(0, sc_gesv(&s, SC_F64, n, 1, work.p, n, ipiv.p, b.p, n, &info));
    EXPECT_EQ(0, info);
  }
  EXPECT_EQ(0u, s.memo_hits);
  EXPECT_EQ(2u, s.gesv_calls);
  forget(k), forget(work), forget(b), forget(ipiv);
}

TEST_F(SemCacheGesvTest, BadArgumentsGiveLapacksParameterNumbers)
{
  start(SC_WRITE_BACK);
  Arr<double> a(16), b(4);
  Arr<int> ipiv(4);
  int info = 0;
  EXPECT_EQ(1, sc_gesv(&s, SC_F64, -1, 1, a.p, 4, ipiv.p, b.p, 4, &info));
  EXPECT_EQ(2, sc_gesv(&s, SC_F64, 4, -1, a.p, 4, ipiv.p, b.p, 4, &info));
  EXPECT_EQ(4, sc_gesv(&s, SC_F64, 4, 1, a.p, 3, ipiv.p, b.p, 4, &info));
  EXPECT_EQ(7, sc_gesv(&s, SC_F32, 4, 1, a.p, 4, ipiv.p, b.p, 3, &info));
  EXPECT_EQ(4, sc_gesv(&s, SC_F64, 0, 1, a.p, 0, ipiv.p, b.p, 1, &info)) << "lda >= 1 even for n 0";
  EXPECT_EQ(0, sc_gesv(&s, SC_F64, 0, 1, nullptr, 1, nullptr, nullptr, 1, &info)) << "n 0: nothing";
  EXPECT_EQ(0u, s.gesv_calls + s.calls + stats().to_dev);
}

INSTANTIATE_TEST_SUITE_P(SemCache, SemCacheGesvTest, ::testing::Values(SC_WRITE_THROUGH, SC_WRITE_BACK),
                         [](const ::testing::TestParamInfo<sc_protocol> &i) {
                           return std::string(i.param == SC_WRITE_THROUGH ? "WriteThrough" : "WriteBack");
                         });

TEST(SemCachePoolTest, FirstFitAlignedCoalescedAndFull)
{
  sc_pool p;
  const uintptr_t base = 1 << 20;
  ASSERT_EQ(0, sc_pool_init(&p, base, 4096, 4));
  uintptr_t a, b, c, d;
  ASSERT_EQ(0, sc_pool_alloc(&p, 1, &a));
  ASSERT_EQ(0, sc_pool_alloc(&p, 300, &b));
  ASSERT_EQ(0, sc_pool_alloc(&p, 256, &c));
  EXPECT_EQ(base, a);
  EXPECT_EQ(base + 256, b) << "rounded to SC_POOL_ALIGN";
  EXPECT_EQ(base + 768, c);
  EXPECT_EQ(-ENOMEM, sc_pool_alloc(&p, 4096, &d)) << "more than is free";
  EXPECT_EQ(-EINVAL, sc_pool_alloc(&p, 0, &d));
  sc_pool_free(&p, b, 300);
  ASSERT_EQ(0, sc_pool_alloc(&p, 512, &d));
  EXPECT_EQ(b, d) << "first fit: the freed hole";
  sc_pool_free(&p, a, 1);
  sc_pool_free(&p, c, 256);
  sc_pool_free(&p, d, 512);
  EXPECT_EQ(1, p.nfree) << "freed neighbours coalesce into the whole pool";
  ASSERT_EQ(0, sc_pool_alloc(&p, 4096, &d));
  EXPECT_EQ(base, d);
  EXPECT_EQ(-ENOMEM, sc_pool_alloc(&p, 1, &a)) << "full";
  sc_pool_destroy(&p);
}

} // namespace
