/*
 * rodinia_matvec_test.cpp - rodinia-io/matvec's host side: the row-block
 * shape and shares (every row read once, in file order, within 1 MiB), the
 * side, the generator, the reference's products against naive sums, and
 * the check, including that the GPU engine's float order (matvec.cu,
 * emulated here) stays inside the tolerance.
 */
#include <gtest/gtest.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "rodinia-io/matvec/matvec.h"

namespace {

constexpr uint64_t kSeed = 42;

std::vector<float> uniform(uint64_t count, uint64_t stream)
{
  std::vector<float> v(count);
  for (uint64_t e = 0; e < count; e++)
    v[e] = (float)rio_rand01(kSeed, stream, e);
  return v;
}

TEST(RodiniaMatvec, ShapeAtTheSuitesSizes)
{
  const matvec_shape a = matvec_shape_of(16384, 1);
  EXPECT_EQ(a.block_rows, 16u); /* 16 rows of 64 KiB: 1 MiB */
  EXPECT_EQ(a.nblocks, 1024u);
  EXPECT_EQ(a.total, 1024u);
  EXPECT_EQ(a.groups, 128u);
  const matvec_shape g = matvec_shape_of(11584, 2); /* gesummv's A and B */
  EXPECT_EQ(g.block_rows, 22u);                     /* 22 x 46336 B = 995.5 KiB */
  EXPECT_EQ(g.nblocks, 527u);                       /* the last holds 12 rows */
  EXPECT_EQ(g.total, 1054u);
  EXPECT_EQ(g.groups, 128u);
  const matvec_shape t = matvec_shape_of(64, 1);
  EXPECT_EQ(t.block_rows, 64u); /* the whole matrix, 16 KiB */
  EXPECT_EQ(t.nblocks, 1u);
  EXPECT_EQ(t.groups, 1u);
  EXPECT_EQ(matvec_shape_of(512, 1).block_rows, MATVEC_MAX_BLOCK_ROWS);
  EXPECT_EQ(matvec_shape_of(65536, 1).block_rows, 4u);
}

TEST(RodiniaMatvec, EveryRowOnceInFileOrderWithinAMiB)
{
  for (uint64_t n = MATVEC_MIN_N; n <= MATVEC_MAX_N; n += n < 4096 ? MATVEC_STEP : 4096 + MATVEC_STEP) {
    for (uint64_t parts = 1; parts <= 2; parts++) {
      const matvec_shape sh = matvec_shape_of(n, parts);
      ASSERT_LE(sh.block_rows, MATVEC_MAX_BLOCK_ROWS) << n;
      ASSERT_LE(sh.block_rows * n * sizeof(float), MATVEC_BLOCK_BYTES) << n;
      ASSERT_GE(sh.groups, 1u);
      ASSERT_LE(sh.groups, MATVEC_GROUPS);
      /* the shares tile [0, total) in order, none empty; their row blocks
       * tile each part's rows in order */
      uint64_t next_rb = 0, next_row[2] = {0, 0};
      for (uint64_t g = 0; g < sh.groups; g++) {
        uint64_t lo, hi;
        matvec_share(&sh, g, &lo, &hi);
        ASSERT_EQ(lo, next_rb) << n << " share " << g;
        ASSERT_LT(lo, hi) << n << " share " << g;
        next_rb = hi;
        for (uint64_t rb = lo; rb < hi; rb++) {
          uint64_t part, row0, rows;
          matvec_rows_of(&sh, rb, &part, &row0, &rows);
          ASSERT_LT(part, parts);
          ASSERT_EQ(row0, next_row[part]) << n << " row block " << rb;
          ASSERT_GE(rows, 1u);
          ASSERT_LE(rows, sh.block_rows);
          next_row[part] = row0 + rows;
        }
      }
      ASSERT_EQ(next_rb, sh.total);
      for (uint64_t p = 0; p < parts; p++)
        ASSERT_EQ(next_row[p], n) << n;
    }
  }
}

TEST(RodiniaMatvec, Side)
{
  EXPECT_EQ(matvec_side(1.0, 16384), 16384u);
  EXPECT_EQ(matvec_side(1.0, 11584), 11584u);
  EXPECT_EQ(matvec_side(1.0 / 1024, 16384), 512u);
  EXPECT_EQ(matvec_side(1.0 / 1024, 11584), 320u); /* 362 down to a multiple of 64 */
  EXPECT_EQ(matvec_side(1e-9, 16384), MATVEC_MIN_N);
  EXPECT_EQ(matvec_side(16.0, 16384), MATVEC_MAX_N);
  EXPECT_EQ(matvec_side(17.0, 16384), 0u);
  EXPECT_EQ(matvec_side(0.0, 16384), 0u);
  EXPECT_EQ(matvec_side(-1.0, 16384), 0u);
}

TEST(RodiniaMatvec, GenerateIsDeterministicUniformAndPerInput)
{
  rio_run a{}, b{};
  a.scale = b.scale = 1e-6;
  a.seed = kSeed;
  b.seed = kSeed + 1;
  for (rio_run *r : {&a, &b}) {
    ASSERT_EQ(matvec_setup(r, "test", 16384, 1), 0) << r->why;
    matvec_input(r, "A", 64 * 64);
    matvec_input(r, "x", 64);
  }
  EXPECT_EQ(a.ninputs, 2);
  EXPECT_STREQ(a.in[1].name, "x");
  EXPECT_EQ(a.in[0].size, 64u * 64 * 4);
  std::vector<float> a0(64 * 64), a0again(64 * 64), b0(64 * 64), a1(64);
  ASSERT_EQ(matvec_generate(&a, 0, a0.data()), 0);
  ASSERT_EQ(matvec_generate(&a, 0, a0again.data()), 0);
  ASSERT_EQ(matvec_generate(&b, 0, b0.data()), 0);
  ASSERT_EQ(matvec_generate(&a, 1, a1.data()), 0);
  EXPECT_EQ(0, memcmp(a0.data(), a0again.data(), a0.size() * 4));
  EXPECT_EQ(rio_checksum(a0.data(), a0.size() * 4), rio_checksum(a0again.data(), a0.size() * 4));
  EXPECT_NE(0, memcmp(a0.data(), b0.data(), a0.size() * 4));
  EXPECT_NE(0, memcmp(a0.data(), a1.data(), a1.size() * 4)) << "inputs are different streams";
  for (float v : a0)
    ASSERT_TRUE(v >= 0.0f && v < 1.0f) << v;
  EXPECT_EQ(a0[5], (float)rio_rand01(kSeed, 1, 5)) << "input i is stream i + 1";
  EXPECT_EQ(matvec_generate(&a, 2, a1.data()), -EINVAL);
  matvec_teardown(&a);
  matvec_teardown(&b);
  EXPECT_EQ(a.state, nullptr);
}

TEST(RodiniaMatvec, SetupRefusesABadScale)
{
  for (double scale : {0.0, -1.0, 17.0}) {
    rio_run r{};
    r.scale = scale;
    EXPECT_EQ(matvec_setup(&r, "test", 16384, 1), -EINVAL) << scale;
    EXPECT_NE(std::string(r.why).find("test: scale"), std::string::npos) << r.why;
    matvec_teardown(&r);
  }
}

TEST(RodiniaMatvec, ReferenceProductsHandChecked)
{
  /* 3 rows of 4 columns */
  const float a[12] = {1, 2, 3, 4, /**/ 0, 1, 0, 1, /**/ 2, 0, 0, 0.5f};
  const float x[4] = {1, 1, 2, 4};
  const double w[3] = {1, 10, 100};
  double rows[3], cols[4];
  ASSERT_EQ(matvec_ref_rows(a, 3, 4, x, rows), 0);
  EXPECT_EQ(rows[0], 1 + 2 + 6 + 16);
  EXPECT_EQ(rows[1], 1 + 4);
  EXPECT_EQ(rows[2], 2 + 2);
  ASSERT_EQ(matvec_ref_cols(a, 3, 4, w, cols), 0);
  EXPECT_EQ(cols[0], 1 + 200);
  EXPECT_EQ(cols[1], 2 + 10);
  EXPECT_EQ(cols[2], 3);
  EXPECT_EQ(cols[3], 4 + 10 + 50);
}

TEST(RodiniaMatvec, ReferenceProductsMatchNaiveSums)
{
  const uint64_t rows = 200, n = 192;
  const std::vector<float> a = uniform(rows * n, 1), x = uniform(n, 2);
  std::vector<double> w(rows), got_r(rows), got_c(n);
  for (uint64_t i = 0; i < rows; i++)
    w[i] = rio_rand01(kSeed, 3, i) - 0.5;
  ASSERT_EQ(matvec_ref_rows(a.data(), rows, n, x.data(), got_r.data()), 0);
  ASSERT_EQ(matvec_ref_cols(a.data(), rows, n, w.data(), got_c.data()), 0);
  for (uint64_t i = 0; i < rows; i++) {
    long double s = 0;
    for (uint64_t j = 0; j < n; j++)
      s += (long double)a[i * n + j] * x[j];
    ASSERT_NEAR(got_r[i], (double)s, 1e-12) << i;
  }
  for (uint64_t j = 0; j < n; j++) {
    long double s = 0;
    for (uint64_t i = 0; i < rows; i++)
      s += (long double)w[i] * a[i * n + j];
    ASSERT_NEAR(got_c[j], (double)s, 1e-12) << j;
  }
}

/* A run whose state's got and want are v (matvec_teardown frees them). */
struct CheckRun {
  rio_run run{};
  explicit CheckRun(const std::vector<float> &v)
  {
    matvec_state *st = static_cast<matvec_state *>(calloc(1, sizeof(matvec_state)));
    run.state = st;
    st->nout = v.size();
    st->got = static_cast<float *>(malloc(v.size() * 4));
    st->want = static_cast<float *>(malloc(v.size() * 4));
    memcpy(st->got, v.data(), v.size() * 4);
    memcpy(st->want, v.data(), v.size() * 4);
  }
  ~CheckRun() { matvec_teardown(&run); }
  matvec_state *st() { return static_cast<matvec_state *>(run.state); }
};

TEST(RodiniaMatvec, CheckIsPolybenchsPercentDifference)
{
  CheckRun c(uniform(64, 1));
  EXPECT_EQ(matvec_check(&c.run, "v", 0, 64), 0) << c.run.why;
  c.st()->want[9] = 1000.0f;
  c.st()->got[9] = 1000.49f; /* 0.049 % */
  EXPECT_EQ(matvec_check(&c.run, "v", 0, 64), 0) << c.run.why;
  c.st()->got[9] = 1000.51f; /* 0.051 % */
  EXPECT_EQ(matvec_check(&c.run, "v", 0, 64), -EBADMSG);
  EXPECT_NE(std::string(c.run.why).find("v[9]"), std::string::npos) << c.run.why;
  /* an offset check names the element of its own vector */
  EXPECT_EQ(matvec_check(&c.run, "s", 8, 56), -EBADMSG);
  EXPECT_NE(std::string(c.run.why).find("s[1]"), std::string::npos) << c.run.why;
  EXPECT_EQ(matvec_check(&c.run, "s", 10, 54), 0) << c.run.why;
}

/*
 * The engine's float order (matvec.cu), emulated: row products by warps
 * (lane l fmas float4s l, l + 32, ... component by component, then a xor
 * tree, then += into y), column products by shares of row blocks (each
 * row block's column sums in float, fma per row, then into the share's
 * double partial; the partials added to c in share order).  Here the
 * weights are the row products (atax), the longest chains: verify's
 * tolerance must hold with room to spare.
 */
void engine_order(const std::vector<float> &a, uint64_t n, const std::vector<float> &x, std::vector<float> &y,
                  std::vector<float> &c)
{
  const matvec_shape sh = matvec_shape_of(n, 1);
  std::vector<double> partial(sh.groups * n, 0.0);
  y.assign(n, 0.0f);
  c.assign(n, 0.0f);
  for (uint64_t i = 0; i < n; i++) {
    float lane[32] = {0};
    for (uint64_t q = 0; q < n / 4; q++)
      for (int k = 0; k < 4; k++)
        lane[q % 32] = fmaf(a[i * n + 4 * q + k], x[4 * q + k], lane[q % 32]);
    for (int o = 16; o > 0; o >>= 1) {
      float next[32];
      for (int l = 0; l < 32; l++)
        next[l] = lane[l] + lane[l ^ o];
      memcpy(lane, next, sizeof(lane));
    }
    y[i] += lane[0];
  }
  for (uint64_t g = 0; g < sh.groups; g++) {
    uint64_t lo, hi, part, row0, rows;
    matvec_share(&sh, g, &lo, &hi);
    for (uint64_t rb = lo; rb < hi; rb++) {
      matvec_rows_of(&sh, rb, &part, &row0, &rows);
      for (uint64_t j = 0; j < n; j++) {
        float acc = 0.0f;
        for (uint64_t r = row0; r < row0 + rows; r++)
          acc = fmaf(y[r], a[r * n + j], acc);
        partial[g * n + j] += acc;
      }
    }
  }
  for (uint64_t j = 0; j < n; j++) {
    double s = c[j];
    for (uint64_t g = 0; g < sh.groups; g++)
      s += partial[g * n + j];
    c[j] = (float)s;
  }
}

TEST(RodiniaMatvec, EngineOrderPassesTheCheck)
{
  for (uint64_t n : {512ull, 1024ull}) { /* 512: the longest column chain (512 rows a row block) */
    const std::vector<float> a = uniform(n * n, 1), x = uniform(n, 2);
    std::vector<double> tmp(n), col(n);
    ASSERT_EQ(matvec_ref_rows(a.data(), n, n, x.data(), tmp.data()), 0);
    ASSERT_EQ(matvec_ref_cols(a.data(), n, n, tmp.data(), col.data()), 0);
    std::vector<float> want(2 * n), got_y, got_c;
    for (uint64_t i = 0; i < n; i++) {
      want[i] = (float)tmp[i];
      want[n + i] = (float)col[i];
    }
    engine_order(a, n, x, got_y, got_c);
    CheckRun c(want);
    memcpy(c.st()->got, got_y.data(), n * 4);
    memcpy(c.st()->got + n, got_c.data(), n * 4);
    EXPECT_EQ(matvec_check(&c.run, "tmp", 0, n), 0) << c.run.why;
    EXPECT_EQ(matvec_check(&c.run, "y", n, n), 0) << c.run.why;
    /* with room: the float order errs by far less than the tolerance */
    for (uint64_t i = 0; i < 2 * n; i++)
      ASSERT_LE(std::fabs((double)c.st()->got[i] - want[i]), 1e-5 * std::fabs((double)want[i])) << i;
  }
}

} // namespace
