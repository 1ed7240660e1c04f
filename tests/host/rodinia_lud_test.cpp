/*
 * rodinia_lud_test.cpp - rodinia-io/lud's host side: sizes, the matrix
 * generator (determinism, diagonal dominance), and verify against a naive
 * unblocked LU written here (accepted; one wrong element named, in the
 * every-entry mode and in the sampled mode).
 */
#include <gtest/gtest.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "tests/host/rodinia_run.h"

namespace {

/* n = 8192 sqrt(scale): 1/4096 -> 128 (the minimum), 1/1024 -> 256 (every
 * entry checked), (384/8192)^2 -> 384 (sampled check) */
constexpr double kTinyScale = 1.0 / 4096;
constexpr double kTestScale = 1.0 / 1024;
constexpr double kSampledScale = (384.0 / 8192) * (384.0 / 8192);

/* The textbook right-looking elimination, one pivot at a time, in float:
 * what the GPU's blocked algorithm computes in another order. */
void naive_lu(const std::vector<float> &a, uint64_t n, float *lu)
{
  std::memcpy(lu, a.data(), n * n * sizeof(float));
  for (uint64_t p = 0; p < n; p++)
    for (uint64_t i = p + 1; i < n; i++) {
      lu[i * n + p] /= lu[p * n + p];
      for (uint64_t j = p + 1; j < n; j++)
        lu[i * n + j] -= lu[i * n + p] * lu[p * n + j];
    }
}

TEST(RodiniaLud, SetupSizes)
{
  LudRun r(kTestScale);
  ASSERT_EQ(lud_setup(&r.run), 0) << r.run.why;
  EXPECT_EQ(r.st()->n, 256u);
  ASSERT_EQ(r.run.ninputs, 1);
  EXPECT_STREQ(r.run.in[0].name, "matrix");
  EXPECT_EQ(r.run.in[0].size, 256u * 256u * 4u);
  EXPECT_EQ(lud_dim(1.0), 8192u);
  EXPECT_EQ(lud_dim(4.0), 16384u);
  EXPECT_EQ(lud_dim(0.5), 5760u); /* 8192 / sqrt(2) = 5792.6, down to 64 */
  EXPECT_EQ(lud_dim(kSampledScale), 384u);
  EXPECT_EQ(lud_dim(1e-9), LUD_MIN_N);
}

TEST(RodiniaLud, GeneratedDominant)
{
  LudRun a(kTinyScale);
  a.prepare();
  const uint64_t n = a.st()->n;
  const std::vector<float> &m = a.in[0];
  EXPECT_EQ(n, LUD_MIN_N);
  for (uint64_t i = 0; i < n; i++) {
    double off = 0;
    for (uint64_t j = 0; j < n; j++) {
      const float v = m[i * n + j];
      EXPECT_EQ(v, lud_element(kRioSeed, n, i, j));
      if (i != j) {
        ASSERT_GE(v, -1.0f);
        ASSERT_LT(v, 1.0f);
        off += std::fabs(v);
      }
    }
    ASSERT_GE(m[i * n + i], (float)n);
    ASSERT_LT(m[i * n + i], (float)n + 1);
    ASSERT_LT(off, m[i * n + i]);
  }
}

TEST(RodiniaLud, NaiveLuOfAHandCheckedMatrix)
{
  /* [[4, 2], [2, 3]] = [[1, 0], [0.5, 1]] [[4, 2], [0, 2]] */
  const std::vector<float> a = {4, 2, 2, 3};
  float lu[4];
  naive_lu(a, 2, lu);
  EXPECT_EQ(lu[0], 4.0f);
  EXPECT_EQ(lu[1], 2.0f);
  EXPECT_EQ(lu[2], 0.5f);
  EXPECT_EQ(lu[3], 2.0f);
}

TEST(RodiniaLud, VerifyAcceptsLuAndNamesAWrongElement)
{
  LudRun r(kTestScale);
  r.prepare();
  ASSERT_EQ(lud_reference(&r.run), 0) << r.run.why;
  const uint64_t n = r.st()->n;
  float *lu = r.st()->lu;
  naive_lu(r.in[0], n, lu);
  ASSERT_EQ(lud_verify(&r.run), 0) << r.run.why;

  /* U[5][7] enters (L U)(i, 7) for i >= 5 only: the first wrong entry in
   * row-major order is (5, 7) */
  lu[5 * n + 7] += 0.5f;
  EXPECT_EQ(lud_verify(&r.run), -EBADMSG);
  EXPECT_NE(std::string(r.run.why).find("[row 5, col 7]"), std::string::npos) << r.run.why;
  lu[5 * n + 7] -= 0.5f;
  ASSERT_EQ(lud_verify(&r.run), 0) << r.run.why;

  /* an element of L near the end: L[n-1][n-2] enters only (L U)(n-1, j >= n-2) */
  lu[(n - 1) * n + n - 2] = 1.0f;
  EXPECT_EQ(lud_verify(&r.run), -EBADMSG);
  const std::string want = "[row " + std::to_string(n - 1) + ", col " + std::to_string(n - 2) + "]";
  EXPECT_NE(std::string(r.run.why).find(want), std::string::npos) << r.run.why;
}

TEST(RodiniaLud, SampledVerifySeesAnyElementOnTheDiagonal)
{
  LudRun r(kSampledScale);
  r.prepare();
  ASSERT_EQ(lud_reference(&r.run), 0) << r.run.why;
  const uint64_t n = r.st()->n;
  ASSERT_GT(n, LUD_CHECK_ALL_N);
  float *lu = r.st()->lu;
  naive_lu(r.in[0], n, lu);
  ASSERT_EQ(lud_verify(&r.run), 0) << r.run.why;
  /* a wrong NaN: the diagonal checks come first, and (L U)(300, 300) sums
   * L[300][p] U[p][300] over p <= 300, so it is the first to see U[200][300] */
  lu[200 * n + 300] = NAN;
  EXPECT_EQ(lud_verify(&r.run), -EBADMSG);
  EXPECT_NE(std::string(r.run.why).find("[row 300, col 300]"), std::string::npos) << r.run.why;
  /* the diagonal itself, off by 1 in about 384: far outside gamma_n |L||U| */
  naive_lu(r.in[0], n, lu);
  lu[17 * n + 17] += 1.0f;
  EXPECT_EQ(lud_verify(&r.run), -EBADMSG);
  EXPECT_NE(std::string(r.run.why).find("[row 17, col 17]"), std::string::npos) << r.run.why;
}

} // namespace
