/*
 * semcache_blas_test.cpp - SemCache's BLAS calls (libgpufs/semcache/blas.h)
 * over the cache with the CPU backend and the host BLAS as the "device":
 * every result equal, bit for bit, to the host BLAS run on plain copies;
 * transfers at the minimum for a chain of products; a CPU write resends
 * only that matrix; transposes, leading dimensions and strides (their gaps
 * untouched); aliased operands and a full cache on the host BLAS; the
 * reference BLAS's parameter numbers for bad arguments; threads (TSan).
 */
#include <cblas.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <string.h>

#include <thread>
#include <vector>

#include "libgpufs/semcache/blas.h"

namespace {

/* page-aligned doubles, so a matrix's pages are its own */
struct Mat {
  double *p;
  size_t n;
  explicit Mat(size_t count, uint64_t seed = 0) : n(count)
  {
    const size_t bytes = (count * 8 + 4095) / 4096 * 4096;
    p = (double *)aligned_alloc(4096, bytes);
    for (size_t i = 0; i < count; i++) p[i] = seed ? (double)((i * 2654435761u + seed) % 1000) / 250.0 - 2.0 : 0.0;
  }
  ~Mat() { free(p); }
  std::vector<double> copy() const { return std::vector<double>(p, p + n); }
};

class SemBlasTest : public ::testing::TestWithParam<sc_protocol> {
protected:
  sc_cache c;
  sc_blas s;
  void start(sc_protocol p, size_t cap = 0)
  {
    ASSERT_EQ(0, sc_cache_init(&c, &sc_cpu_backend, p, cap));
    s = sc_blas{&c, sc_host_blas, 0, 0};
  }
  void TearDown() override { EXPECT_EQ(0, sc_cache_destroy(&c)); }
  sc_stats stats()
  {
    sc_stats st;
    sc_get_stats(&c, &st);
    return st;
  }
  /* drop a matrix before it is freed (what the drop-in's free does) */
  void forget(Mat &m) { sc_forget(&c, m.p, m.n * 8); }
};

/* C = A B column-major on plain vectors, the reference */
static std::vector<double> ref_gemm(char ta, char tb, int m, int n, int k, double alpha,
                                    const std::vector<double> &a, int lda, const std::vector<double> &b,
                                    int ldb, double beta, std::vector<double> cc, int ldc)
{
  cblas_dgemm(CblasColMajor, ta == 'N' ? CblasNoTrans : CblasTrans, tb == 'N' ? CblasNoTrans : CblasTrans,
              m, n, k, alpha, a.data(), lda, b.data(), ldb, beta, cc.data(), ldc);
  return cc;
}

TEST_P(SemBlasTest, AChainOfProductsMovesEachMatrixOnce)
{
  start(GetParam());
  const int n = 96;
  Mat a(n * n, 3), b(n * n, 5), c1(n * n), c2(n * n), c3(n * n);
  std::vector<double> ra = a.copy(), rb = b.copy();
  ASSERT_EQ(0, sc_dgemm(&s, 'N', 'N', n, n, n, 1.0, a.p, n, b.p, n, 0.0, c1.p, n));
  ASSERT_EQ(0, sc_dgemm(&s, 'N', 'N', n, n, n, 1.0, c1.p, n, b.p, n, 0.0, c2.p, n));
  ASSERT_EQ(0, sc_dgemm(&s, 'N', 'T', n, n, n, 0.5, c2.p, n, a.p, n, 0.0, c3.p, n));
  sc_stats st = stats();
  EXPECT_EQ(2u, st.to_dev) << "A and B once; the products stay on the device";
  EXPECT_EQ(2u * n * n * 8, st.to_dev_bytes);
  EXPECT_EQ(GetParam() == SC_WRITE_THROUGH ? 3u : 0u, st.to_host);
  std::vector<double> r1 = ref_gemm('N', 'N', n, n, n, 1.0, ra, n, rb, n, 0.0, std::vector<double>(n * n), n);
  std::vector<double> r2 = ref_gemm('N', 'N', n, n, n, 1.0, r1, n, rb, n, 0.0, std::vector<double>(n * n), n);
  std::vector<double> r3 = ref_gemm('N', 'T', n, n, n, 0.5, r2, n, ra, n, 0.0, std::vector<double>(n * n), n);
  EXPECT_EQ(r1, c1.copy());
  EXPECT_EQ(r2, c2.copy());
  EXPECT_EQ(r3, c3.copy());
  EXPECT_EQ(3u, stats().to_host) << "write-back: each result once, when the CPU read it";
  EXPECT_EQ(3u, s.calls);
  EXPECT_EQ(0u, s.host_calls);
  for (Mat *m : {&a, &b, &c1, &c2, &c3}) forget(*m);
}

TEST_P(SemBlasTest, ACpuWriteResendsThatMatrixAlone)
{
  start(GetParam());
  const int n = 64;
  Mat a(n * n, 7), b(n * n, 11), c1(n * n);
  ASSERT_EQ(0, sc_dgemm(&s, 'N', 'N', n, n, n, 1.0, a.p, n, b.p, n, 0.0, c1.p, n));
  a.p[17] = 3.25; /* the program changes A between calls */
  ASSERT_EQ(0, sc_dgemm(&s, 'N', 'N', n, n, n, 1.0, a.p, n, b.p, n, 0.0, c1.p, n));
  EXPECT_EQ(3u, stats().to_dev) << "A twice, B once";
  std::vector<double> r = ref_gemm('N', 'N', n, n, n, 1.0, a.copy(), n, b.copy(), n, 0.0,
                                   std::vector<double>(n * n), n);
  EXPECT_EQ(r, c1.copy());
  for (Mat *m : {&a, &b, &c1}) forget(*m);
}

TEST_P(SemBlasTest, TransposesLeadingDimensionsAndStridesKeepTheGaps)
{
  start(GetParam());
  const int m = 40, n = 30, k = 50, lda = 64, ldb = 56, ldc = 48;
  Mat a(lda * m, 13), b(ldb * n, 17), cm(ldc * n, 19); /* A is k x m (T), B is k x n */
  std::vector<double> ra = a.copy(), rb = b.copy(), rc = cm.copy();
  ASSERT_EQ(0, sc_dgemm(&s, 'T', 'N', m, n, k, 1.5, a.p, lda, b.p, ldb, 0.25, cm.p, ldc));
  EXPECT_EQ(ref_gemm('T', 'N', m, n, k, 1.5, ra, lda, rb, ldb, 0.25, rc, ldc), cm.copy())
      << "the rows past m of each column (ldc > m) keep their bytes";
  /* gemv with strides, then axpy and dot */
  Mat x(2 * n, 23), y(3 * m, 29);
  std::vector<double> rx = x.copy(), ry = y.copy();
  ASSERT_EQ(0, sc_dgemv(&s, 'N', m, n, 2.0, a.p, lda, x.p, 2, 0.0, y.p, 3));
  cblas_dgemv(CblasColMajor, CblasNoTrans, m, n, 2.0, ra.data(), lda, rx.data(), 2, 0.0, ry.data(), 3);
  EXPECT_EQ(ry, y.copy()) << "y's elements and the gaps between them";
  ASSERT_EQ(0, sc_daxpy(&s, n, -1.0, x.p, 2, y.p, 3));
  cblas_daxpy(n, -1.0, rx.data(), 2, ry.data(), 3);
  EXPECT_EQ(ry, y.copy());
  double d = 0;
  ASSERT_EQ(0, sc_ddot(&s, n, x.p, -2, y.p, 3, &d));
  EXPECT_EQ(cblas_ddot(n, rx.data(), -2, ry.data(), 3), d);
  EXPECT_EQ(0u, s.host_calls);
  for (Mat *mm : {&a, &b, &cm, &x, &y}) forget(*mm);
}

TEST_P(SemBlasTest, AliasedOperandsAndAFullCacheRunOnTheHost)
{
  start(GetParam(), 3 * 32 * 32 * 8);
  const int n = 32;
  Mat a(2 * n * n, 31), b(n * n, 37);
  std::vector<double> ra = a.copy(), rb = b.copy();
  /* C is A's second half, A its first: no overlap, the device runs it */
  ASSERT_EQ(0, sc_dgemm(&s, 'N', 'N', n, n, n, 1.0, a.p, n, b.p, n, 1.0, a.p + n * n, n));
  /* y overlaps x: the host runs it */
  ASSERT_EQ(0, sc_daxpy(&s, 2 * n, 1.0, a.p, 1, a.p + 8, 1));
  EXPECT_EQ(1u, s.host_calls);
  std::vector<double> r = ra;
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, r.data(), n, rb.data(), n, 1.0,
              r.data() + n * n, n);
  cblas_daxpy(2 * n, 1.0, r.data(), 1, r.data() + 8, 1);
  EXPECT_EQ(r, a.copy());
  /* larger than the cap: the host */
  const int big = 64;
  Mat p(big * big, 41), q(big * big, 43), o(big * big);
  ASSERT_EQ(0, sc_dgemm(&s, 'N', 'N', big, big, big, 1.0, p.p, big, q.p, big, 0.0, o.p, big));
  EXPECT_EQ(2u, s.host_calls);
  EXPECT_GE(stats().refused, 1u);
  EXPECT_EQ(ref_gemm('N', 'N', big, big, big, 1.0, p.copy(), big, q.copy(), big, 0.0,
                     std::vector<double>(big * big), big),
            o.copy());
  for (Mat *mm : {&a, &b, &p, &q, &o}) forget(*mm);
}

TEST_F(SemBlasTest, BadArgumentsGiveTheReferenceParameterNumbers)
{
  start(SC_WRITE_BACK);
  Mat a(100, 1), b(100, 2), cm(100, 3);
  const std::vector<double> before = cm.copy();
  EXPECT_EQ(1, sc_dgemm(&s, 'X', 'N', 2, 2, 2, 1, a.p, 2, b.p, 2, 0, cm.p, 2));
  EXPECT_EQ(2, sc_dgemm(&s, 'N', '?', 2, 2, 2, 1, a.p, 2, b.p, 2, 0, cm.p, 2));
  EXPECT_EQ(3, sc_dgemm(&s, 'N', 'N', -1, 2, 2, 1, a.p, 2, b.p, 2, 0, cm.p, 2));
  EXPECT_EQ(4, sc_dgemm(&s, 'N', 'N', 2, -1, 2, 1, a.p, 2, b.p, 2, 0, cm.p, 2));
  EXPECT_EQ(5, sc_dgemm(&s, 'N', 'N', 2, 2, -1, 1, a.p, 2, b.p, 2, 0, cm.p, 2));
  EXPECT_EQ(8, sc_dgemm(&s, 'N', 'N', 3, 2, 2, 1, a.p, 2, b.p, 2, 0, cm.p, 3));
  EXPECT_EQ(8, sc_dgemm(&s, 'T', 'N', 2, 2, 3, 1, a.p, 2, b.p, 3, 0, cm.p, 2)) << "A is k x m";
  EXPECT_EQ(10, sc_dgemm(&s, 'N', 'N', 2, 2, 3, 1, a.p, 2, b.p, 2, 0, cm.p, 2));
  EXPECT_EQ(13, sc_dgemm(&s, 'N', 'N', 3, 2, 2, 1, a.p, 3, b.p, 2, 0, cm.p, 2));
  EXPECT_EQ(1, sc_dgemv(&s, 'Q', 2, 2, 1, a.p, 2, b.p, 1, 0, cm.p, 1));
  EXPECT_EQ(2, sc_dgemv(&s, 'N', -2, 2, 1, a.p, 2, b.p, 1, 0, cm.p, 1));
  EXPECT_EQ(3, sc_dgemv(&s, 'N', 2, -2, 1, a.p, 2, b.p, 1, 0, cm.p, 1));
  EXPECT_EQ(6, sc_dgemv(&s, 'N', 3, 2, 1, a.p, 2, b.p, 1, 0, cm.p, 1));
  EXPECT_EQ(8, sc_dgemv(&s, 'N', 2, 2, 1, a.p, 2, b.p, 0, 0, cm.p, 1));
  EXPECT_EQ(11, sc_dgemv(&s, 'N', 2, 2, 1, a.p, 2, b.p, 1, 0, cm.p, 0));
  EXPECT_EQ(before, cm.copy()) << "nothing ran";
  EXPECT_EQ(0u, stats().to_dev);
  /* quick returns: nothing read or written */
  EXPECT_EQ(0, sc_dgemm(&s, 'N', 'N', 0, 2, 2, 1, nullptr, 1, nullptr, 2, 0, cm.p, 1));
  EXPECT_EQ(0, sc_daxpy(&s, 0, 1, nullptr, 1, nullptr, 1));
  EXPECT_EQ(before, cm.copy());
  EXPECT_EQ(0u, s.calls + s.host_calls);
}

TEST_P(SemBlasTest, ThreadsShareAnOperand)
{
  start(GetParam());
  const int n = 48, nt = 4, iters = 5;
  Mat shared(n * n, 53);
  const std::vector<double> rs = shared.copy();
  std::vector<int> bad(nt, 0);
  std::vector<std::thread> th;
  for (int t = 0; t < nt; t++)
    th.emplace_back([&, t] {
      Mat in(n * n, 60 + t), out(n * n);
      std::vector<double> r = in.copy();
      for (int i = 0; i < iters; i++) {
        if (sc_dgemm(&s, 'N', 'N', n, n, n, 1.0 / n, shared.p, n, in.p, n, 0.0, out.p, n)) bad[t]++;
        r = ref_gemm('N', 'N', n, n, n, 1.0 / n, rs, n, r, n, 0.0, std::vector<double>(n * n), n);
        if (r != out.copy()) bad[t]++;
        memcpy(in.p, out.p, n * n * 8); /* the CPU writes in: it is resent */
      }
      forget(in);
      forget(out);
    });
  for (auto &x : th) x.join();
  for (int t = 0; t < nt; t++) EXPECT_EQ(0, bad[t]) << "thread " << t;
  forget(shared);
}

INSTANTIATE_TEST_SUITE_P(Protocols, SemBlasTest, ::testing::Values(SC_WRITE_THROUGH, SC_WRITE_BACK),
                         [](const ::testing::TestParamInfo<sc_protocol> &i) {
                           return std::string(i.param == SC_WRITE_THROUGH ? "WriteThrough" : "WriteBack");
                         });

} // namespace
