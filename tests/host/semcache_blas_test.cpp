/*
 * semcache_blas_test.cpp - SemCache's BLAS calls (semcache/src/blas.h)
 * over the cache with the CPU backend and the host BLAS as the "device":
 * every result equal, bit for bit, to the host BLAS run on plain copies;
 * transfers at the minimum for a chain of products; a CPU write resends
 * only that matrix; transposes, leading dimensions and strides (their gaps
 * untouched); aliased operands and a full cache on the host BLAS; the
 * reference BLAS's parameter numbers for bad arguments; threads (TSan);
 * single precision and scal, bit-equal to CBLAS too.
 */
#include <cblas.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <string.h>

#include <atomic>
#include <thread>
#include <vector>

#include "semcache/src/blas.h"
#include "tests/host/semcache_util.h"

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

class SemCacheBlasTest : public SemCacheCalls {
protected:
  void start(sc_protocol p, size_t cap = 0) { start_calls(p, cap, 0); }
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

TEST_P(SemCacheBlasTest, AChainOfProductsMovesEachMatrixOnce)
{
  start(GetParam());
  const int n = 96;
  Mat a(n * n, 3), b(n * n, 5), c1(n * n), c2(n * n), c3(n * n);
  std::vector<double> ra = a.copy(), rb = b.copy();
  ASSERT_EQ(0, sc_gemm(&s, SC_F64, 'N', 'N', n, n, n, 1.0, a.p, n, b.p, n, 0.0, c1.p, n));
  ASSERT_EQ(0, sc_gemm(&s, SC_F64, 'N', 'N', n, n, n, 1.0, c1.p, n, b.p, n, 0.0, c2.p, n));
  ASSERT_EQ(0, sc_gemm(&s, SC_F64, 'N', 'T', n, n, n, 0.5, c2.p, n, a.p, n, 0.0, c3.p, n));
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

TEST_P(SemCacheBlasTest, ACpuWriteResendsThatMatrixAlone)
{
  start(GetParam());
  const int n = 64;
  Mat a(n * n, 7), b(n * n, 11), c1(n * n);
  ASSERT_EQ(0, sc_gemm(&s, SC_F64, 'N', 'N', n, n, n, 1.0, a.p, n, b.p, n, 0.0, c1.p, n));
  a.p[17] = 3.25; /* the program changes A between calls */
  ASSERT_EQ(0, sc_gemm(&s, SC_F64, 'N', 'N', n, n, n, 1.0, a.p, n, b.p, n, 0.0, c1.p, n));
  EXPECT_EQ(3u, stats().to_dev) << "A twice, B once";
  std::vector<double> r = ref_gemm('N', 'N', n, n, n, 1.0, a.copy(), n, b.copy(), n, 0.0,
                                   std::vector<double>(n * n), n);
  EXPECT_EQ(r, c1.copy());
  for (Mat *m : {&a, &b, &c1}) forget(*m);
}

TEST_P(SemCacheBlasTest, TransposesLeadingDimensionsAndStridesKeepTheGaps)
{
  start(GetParam());
  const int m = 40, n = 30, k = 50, lda = 64, ldb = 56, ldc = 48;
  Mat a(lda * m, 13), b(ldb * n, 17), cm(ldc * n, 19); /* A is k x m (T), B is k x n */
  std::vector<double> ra = a.copy(), rb = b.copy(), rc = cm.copy();
  ASSERT_EQ(0, sc_gemm(&s, SC_F64, 'T', 'N', m, n, k, 1.5, a.p, lda, b.p, ldb, 0.25, cm.p, ldc));
  EXPECT_EQ(ref_gemm('T', 'N', m, n, k, 1.5, ra, lda, rb, ldb, 0.25, rc, ldc), cm.copy())
      << "the rows past m of each column (ldc > m) keep their bytes";
  /* gemv with strides, then axpy and dot */
  Mat x(2 * n, 23), y(3 * m, 29);
  std::vector<double> rx = x.copy(), ry = y.copy();
  ASSERT_EQ(0, sc_gemv(&s, SC_F64, 'N', m, n, 2.0, a.p, lda, x.p, 2, 0.0, y.p, 3));
  cblas_dgemv(CblasColMajor, CblasNoTrans, m, n, 2.0, ra.data(), lda, rx.data(), 2, 0.0, ry.data(), 3);
  EXPECT_EQ(ry, y.copy()) << "y's elements and the gaps between them";
  ASSERT_EQ(0, sc_axpy(&s, SC_F64, n, -1.0, x.p, 2, y.p, 3));
  cblas_daxpy(n, -1.0, rx.data(), 2, ry.data(), 3);
  EXPECT_EQ(ry, y.copy());
  double d = 0;
  ASSERT_EQ(0, sc_dot(&s, SC_F64, n, x.p, -2, y.p, 3, &d));
  EXPECT_EQ(cblas_ddot(n, rx.data(), -2, ry.data(), 3), d);
  EXPECT_EQ(0u, s.host_calls);
  for (Mat *mm : {&a, &b, &cm, &x, &y}) forget(*mm);
}

TEST_P(SemCacheBlasTest, AliasedOperandsAndAFullCacheRunOnTheHost)
{
  start(GetParam(), 3 * 32 * 32 * 8);
  const int n = 32;
  Mat a(2 * n * n, 31), b(n * n, 37);
  std::vector<double> ra = a.copy(), rb = b.copy();
  /* C is A's second half, A its first: no overlap, the device runs it */
  ASSERT_EQ(0, sc_gemm(&s, SC_F64, 'N', 'N', n, n, n, 1.0, a.p, n, b.p, n, 1.0, a.p + n * n, n));
  /* y overlaps x: the host runs it */
  ASSERT_EQ(0, sc_axpy(&s, SC_F64, 2 * n, 1.0, a.p, 1, a.p + 8, 1));
  EXPECT_EQ(1u, s.host_calls);
  std::vector<double> r = ra;
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, r.data(), n, rb.data(), n, 1.0,
              r.data() + n * n, n);
  cblas_daxpy(2 * n, 1.0, r.data(), 1, r.data() + 8, 1);
  EXPECT_EQ(r, a.copy());
  /* larger than the cap: the host */
  const int big = 64;
  Mat p(big * big, 41), q(big * big, 43), o(big * big);
  ASSERT_EQ(0, sc_gemm(&s, SC_F64, 'N', 'N', big, big, big, 1.0, p.p, big, q.p, big, 0.0, o.p, big));
  EXPECT_EQ(2u, s.host_calls);
  EXPECT_GE(stats().refused, 1u);
  EXPECT_EQ(ref_gemm('N', 'N', big, big, big, 1.0, p.copy(), big, q.copy(), big, 0.0,
                     std::vector<double>(big * big), big),
            o.copy());
  for (Mat *mm : {&a, &b, &p, &q, &o}) forget(*mm);
}

/* page-aligned floats */
struct FMat {
  float *p;
  size_t n;
  explicit FMat(size_t count, uint64_t seed = 0) : n(count)
  {
    p = (float *)aligned_alloc(4096, (count * 4 + 4095) / 4096 * 4096);
    for (size_t i = 0; i < count; i++) p[i] = seed ? (float)((i * 2654435761u + seed) % 1000) / 250.0f - 2.0f : 0.0f;
  }
  ~FMat() { free(p); }
  std::vector<float> copy() const { return std::vector<float>(p, p + n); }
};

TEST_P(SemCacheBlasTest, SinglePrecisionAndScalEqualCblas)
{
  start(GetParam());
  const int m = 40, n = 30, k = 50, lda = 56, ldc = 48;
  FMat a(lda * k, 3), b(k * n, 5), cm(ldc * n, 7), x(2 * n, 11), y(3 * m, 13);
  std::vector<float> ra = a.copy(), rb = b.copy(), rc = cm.copy(), rx = x.copy(), ry = y.copy();
  /* a product twice (A and B sent once), then gemv, axpy, scal, dot */
  for (int r = 0; r < 2; r++) {
    ASSERT_EQ(0, sc_gemm(&s, SC_F32, 'N', 'N', m, n, k, 0.5, a.p, lda, b.p, k, 0.25, cm.p, ldc));
    cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k, 0.5f, ra.data(), lda, rb.data(), k, 0.25f,
                rc.data(), ldc);
  }
  EXPECT_EQ(rc, cm.copy()) << "C and the rows past m of its columns";
  EXPECT_EQ(3u, stats().to_dev) << "A, B, and C (read: beta 0.25) once";
  ASSERT_EQ(0, sc_gemv(&s, SC_F32, 'N', m, n, 1.5, cm.p, ldc, x.p, 2, 0.5, y.p, -3));
  cblas_sgemv(CblasColMajor, CblasNoTrans, m, n, 1.5f, rc.data(), ldc, rx.data(), 2, 0.5f, ry.data(), -3);
  EXPECT_EQ(ry, y.copy());
  ASSERT_EQ(0, sc_axpy(&s, SC_F32, n, -0.75, x.p, -2, y.p, 3));
  cblas_saxpy(n, -0.75f, rx.data(), -2, ry.data(), 3);
  EXPECT_EQ(ry, y.copy());
  ASSERT_EQ(0, sc_scal(&s, SC_F32, m, -1.25, y.p, 3));
  cblas_sscal(m, -1.25f, ry.data(), 3);
  EXPECT_EQ(ry, y.copy()) << "y's elements scaled, the gaps between them kept";
  ASSERT_EQ(0, sc_scal(&s, SC_F32, m, 2.0, y.p, -1));
  ASSERT_EQ(0, sc_scal(&s, SC_F32, 0, 2.0, y.p, 1));
  EXPECT_EQ(ry, y.copy()) << "incx <= 0 or n 0: nothing, as the reference";
  double d = 0;
  ASSERT_EQ(0, sc_dot(&s, SC_F32, n, x.p, 2, y.p, -3, &d));
  EXPECT_EQ((double)cblas_sdot(n, rx.data(), 2, ry.data(), -3), d);
  /* double scal beside it */
  Mat dx(64, 17);
  std::vector<double> rdx = dx.copy();
  ASSERT_EQ(0, sc_scal(&s, SC_F64, 32, 3.0, dx.p, 2));
  cblas_dscal(32, 3.0, rdx.data(), 2);
  EXPECT_EQ(rdx, dx.copy());
  EXPECT_EQ(0u, s.host_calls);
  EXPECT_EQ(7u, s.calls);
  sc_forget(&c, a.p, a.n * 4), sc_forget(&c, b.p, b.n * 4), sc_forget(&c, cm.p, cm.n * 4);
  sc_forget(&c, x.p, x.n * 4), sc_forget(&c, y.p, y.n * 4);
  forget(dx);
}

TEST_F(SemCacheBlasTest, NoCacheModeSendsEveryOperandEveryCall)
{
  ASSERT_EQ(0, sc_cache_init(&c, &sc_cpu_backend, SC_WRITE_BACK, 0));
  ASSERT_EQ(0, sc_blas_init(&s, &c, &sc_host_blas, SC_NO_CACHE, 1));
  EXPECT_EQ(nullptr, s.memo) << "no memo without the cache";
  const int n = 32;
  Mat a(n * n, 3), b(n * n, 5), c1(n * n), c2(n * n);
  std::vector<double> r1(n * n), r2(n * n, 0.0);
  for (int r = 0; r < 3; r++) ASSERT_EQ(0, sc_gemm(&s, SC_F64, 'N', 'N', n, n, n, 1.0, a.p, n, b.p, n, 0.0, c1.p, n));
  ASSERT_EQ(0, sc_gemm(&s, SC_F64, 'N', 'N', n, n, n, 1.0, a.p, n, c1.p, n, 1.0, c2.p, n));
  sc_stats st = stats();
  EXPECT_EQ(3u * 2 + 3, st.to_dev) << "A and B each call; then A, C1 and C2 (read: beta 1)";
  EXPECT_EQ(4u, st.to_host) << "each call's output";
  EXPECT_EQ((3u * 2 + 3) * n * n * 8, st.to_dev_bytes);
  EXPECT_EQ(0u, st.hits);
  EXPECT_EQ(-1, sc_state_of(&c, a.p, n * n * 8)) << "nothing kept";
  EXPECT_EQ(0u, c.used);
  r1 = ref_gemm('N', 'N', n, n, n, 1.0, a.copy(), n, b.copy(), n, 0.0, r1, n);
  r2 = ref_gemm('N', 'N', n, n, n, 1.0, a.copy(), n, r1, n, 1.0, r2, n);
  EXPECT_EQ(r1, c1.copy());
  EXPECT_EQ(r2, c2.copy());
  /* a cap too small for the operands: the host BLAS, counted */
  sc_blas_destroy(&s);
  EXPECT_EQ(0, sc_cache_destroy(&c));
  ASSERT_EQ(0, sc_cache_init(&c, &sc_cpu_backend, SC_WRITE_BACK, n * n * 8));
  ASSERT_EQ(0, sc_blas_init(&s, &c, &sc_host_blas, SC_NO_CACHE, 0));
  ASSERT_EQ(0, sc_gemm(&s, SC_F64, 'N', 'N', n, n, n, 1.0, a.p, n, b.p, n, 0.0, c1.p, n));
  EXPECT_EQ(r1, c1.copy());
  EXPECT_EQ(1u, s.host_calls);
  EXPECT_EQ(1u, stats().refused);
  EXPECT_EQ(0u, c.used) << "the buffer had before the refusal was given back";
}

TEST_F(SemCacheBlasTest, BadArgumentsGiveTheReferenceParameterNumbers)
{
  start(SC_WRITE_BACK);
  Mat a(100, 1), b(100, 2), cm(100, 3);
  const std::vector<double> before = cm.copy();
  EXPECT_EQ(1, sc_gemm(&s, SC_F64, 'X', 'N', 2, 2, 2, 1, a.p, 2, b.p, 2, 0, cm.p, 2));
  EXPECT_EQ(2, sc_gemm(&s, SC_F64, 'N', '?', 2, 2, 2, 1, a.p, 2, b.p, 2, 0, cm.p, 2));
  EXPECT_EQ(3, sc_gemm(&s, SC_F64, 'N', 'N', -1, 2, 2, 1, a.p, 2, b.p, 2, 0, cm.p, 2));
  EXPECT_EQ(4, sc_gemm(&s, SC_F64, 'N', 'N', 2, -1, 2, 1, a.p, 2, b.p, 2, 0, cm.p, 2));
  EXPECT_EQ(5, sc_gemm(&s, SC_F64, 'N', 'N', 2, 2, -1, 1, a.p, 2, b.p, 2, 0, cm.p, 2));
  EXPECT_EQ(8, sc_gemm(&s, SC_F64, 'N', 'N', 3, 2, 2, 1, a.p, 2, b.p, 2, 0, cm.p, 3));
  EXPECT_EQ(8, sc_gemm(&s, SC_F64, 'T', 'N', 2, 2, 3, 1, a.p, 2, b.p, 3, 0, cm.p, 2)) << "A is k x m";
  EXPECT_EQ(10, sc_gemm(&s, SC_F64, 'N', 'N', 2, 2, 3, 1, a.p, 2, b.p, 2, 0, cm.p, 2));
  EXPECT_EQ(13, sc_gemm(&s, SC_F64, 'N', 'N', 3, 2, 2, 1, a.p, 3, b.p, 2, 0, cm.p, 2));
  EXPECT_EQ(1, sc_gemv(&s, SC_F64, 'Q', 2, 2, 1, a.p, 2, b.p, 1, 0, cm.p, 1));
  EXPECT_EQ(2, sc_gemv(&s, SC_F64, 'N', -2, 2, 1, a.p, 2, b.p, 1, 0, cm.p, 1));
  EXPECT_EQ(3, sc_gemv(&s, SC_F64, 'N', 2, -2, 1, a.p, 2, b.p, 1, 0, cm.p, 1));
  EXPECT_EQ(6, sc_gemv(&s, SC_F64, 'N', 3, 2, 1, a.p, 2, b.p, 1, 0, cm.p, 1));
  EXPECT_EQ(8, sc_gemv(&s, SC_F64, 'N', 2, 2, 1, a.p, 2, b.p, 0, 0, cm.p, 1));
  EXPECT_EQ(11, sc_gemv(&s, SC_F64, 'N', 2, 2, 1, a.p, 2, b.p, 1, 0, cm.p, 0));
  EXPECT_EQ(1, sc_gemm(&s, SC_F32, 'X', 'N', 2, 2, 2, 1, a.p, 2, b.p, 2, 0, cm.p, 2));
  EXPECT_EQ(13, sc_gemm(&s, SC_F32, 'N', 'N', 3, 2, 2, 1, a.p, 3, b.p, 2, 0, cm.p, 2));
  EXPECT_EQ(6, sc_gemv(&s, SC_F32, 'T', 3, 2, 1, a.p, 2, b.p, 1, 0, cm.p, 1));
  EXPECT_EQ(11, sc_gemv(&s, SC_F32, 'N', 2, 2, 1, a.p, 2, b.p, 1, 0, cm.p, 0));
  EXPECT_EQ(before, cm.copy()) << "nothing ran";
  EXPECT_EQ(0u, stats().to_dev);
  /* quick returns: nothing read or written */
  EXPECT_EQ(0, sc_gemm(&s, SC_F64, 'N', 'N', 0, 2, 2, 1, nullptr, 1, nullptr, 2, 0, cm.p, 1));
  EXPECT_EQ(0, sc_axpy(&s, SC_F64, 0, 1, nullptr, 1, nullptr, 1));
  EXPECT_EQ(before, cm.copy());
  EXPECT_EQ(0u, s.calls + s.host_calls);
}

TEST_P(SemCacheBlasTest, ThreadsShareAnOperand)
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
        if (sc_gemm(&s, SC_F64, 'N', 'N', n, n, n, 1.0 / n, shared.p, n, in.p, n, 0.0, out.p, n)) bad[t]++;
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

/* A backend like the GPU's: a thread's first copy would set up its
 * runtime state and malloc (cudart does), unless the thread was prepared
 * before the call took the cache's lock (sc_device_blas.prepare). */
thread_local int t_prepared;
std::atomic<int> g_unprepared_copies;

int prep_mark(void *)
{
  t_prepared = 1;
  return 0;
}

/* what the runtime's lazy set-up does, under the lock */
void lazy_setup()
{
  if (!t_prepared) {
    g_unprepared_copies++;
    free(malloc(48));
    t_prepared = 1;
  }
}

int lazy_to_dev(void *ctx, void *dst, const void *src, size_t bytes)
{
  lazy_setup();
  return sc_cpu_backend.to_dev(ctx, dst, src, bytes);
}

int lazy_to_host(void *ctx, void *dst, const void *src, size_t bytes, sc_store how)
{
  lazy_setup();
  return sc_cpu_backend.to_host(ctx, dst, src, bytes, how);
}

TEST_P(SemCacheBlasTest, FourThreadsFirstCopiesComeAfterThePrepareHook)
{
  sc_backend be = sc_cpu_backend;
  be.to_dev = lazy_to_dev;
  be.to_host = lazy_to_host;
  sc_device_blas dev = sc_host_blas;
  dev.prepare = prep_mark;
  ASSERT_EQ(0, sc_cache_init(&c, &be, GetParam(), 0));
  ASSERT_EQ(0, sc_blas_init(&s, &c, &dev, SC_CACHED, 0));
  g_unprepared_copies = 0;
  const int n = 24, nt = 4;
  std::vector<int> bad(nt, 0);
  std::vector<std::thread> th;
  for (int t = 0; t < nt; t++)
    th.emplace_back([&, t] {
      /* malloc'ed as routines.c does: the chunks share pages, the thread's
       * arena has headers beside the protected matrices */
      double *a = (double *)malloc(n * n * 8), *b = (double *)malloc(n * n * 8);
      double *x = (double *)malloc(n * n * 8);
      for (int i = 0; i < n * n; i++) a[i] = (i * 7 + t) % 11 - 5, b[i] = (i * 3 + t) % 13 - 6;
      std::vector<double> ra(a, a + n * n), rb(b, b + n * n);
      for (int i = 0; i < 3; i++) {
        if (sc_gemm(&s, SC_F64, 'N', 'N', n, n, n, 1.0, a, n, b, n, 0.0, x, n)) bad[t]++;
        const std::vector<double> want =
            ref_gemm('N', 'N', n, n, n, 1.0, ra, n, rb, n, 0.0, std::vector<double>(n * n), n);
        if (want != std::vector<double>(x, x + n * n)) bad[t]++; /* x's fault: copied back */
        double *m = (double *)malloc(n * 8); /* the CPU allocates beside them */
        free(m);
      }
      sc_forget(&c, a, n * n * 8);
      sc_forget(&c, b, n * n * 8);
      sc_forget(&c, x, n * n * 8);
      free(a), free(b), free(x);
    });
  for (auto &x : th) x.join();
  for (int t = 0; t < nt; t++) EXPECT_EQ(0, bad[t]) << "thread " << t;
  EXPECT_EQ(0, g_unprepared_copies.load()) << "a thread's first copy ran under the lock unprepared";
  EXPECT_GE(stats().to_dev, (uint64_t)(2 * nt));
}

INSTANTIATE_TEST_SUITE_P(Protocols, SemCacheBlasTest, ::testing::Values(SC_WRITE_THROUGH, SC_WRITE_BACK),
                         [](const ::testing::TestParamInfo<sc_protocol> &i) {
                           return std::string(i.param == SC_WRITE_THROUGH ? "WriteThrough" : "WriteBack");
                         });

} // namespace
