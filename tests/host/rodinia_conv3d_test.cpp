/*
 * rodinia_conv3d_test.cpp - rodinia-io/conv3d's (3dconv's) host side:
 * sizes, the input, the CPU reference (a constant cube and a single point
 * by hand, a generated cube against a naive convolution written here) and
 * verify.
 */
#include <gtest/gtest.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "tests/host/rodinia_run.h"

namespace {

constexpr double kMinScale = 1e-9;        /* n = 16 */
constexpr double kTestScale = 1.0 / 1024; /* n = 48 */

TEST(RodiniaConv3d, SetupSizes)
{
  Conv3dRun r(kTestScale);
  ASSERT_EQ(conv3d_setup(&r.run), 0) << r.run.why;
  EXPECT_EQ(r.st()->n, 48u);
  ASSERT_EQ(r.run.ninputs, 1);
  EXPECT_STREQ(r.run.in[0].name, "a");
  EXPECT_EQ(r.run.in[0].size, 48u * 48 * 48 * 4);
  /* 512 MiB at scale 1; the side goes with the cube root of the scale,
   * down to a multiple of 16, never below 16 */
  EXPECT_EQ(conv3d_side(1.0), 512u);
  EXPECT_EQ(conv3d_side(1.0 / 8), 256u);
  EXPECT_EQ(conv3d_side(0.5), 400u);        /* 512 cbrt(0.5) = 406.4 */
  EXPECT_EQ(conv3d_side(kTestScale), 48u);  /* 512 / cbrt(1024) = 50.8 */
  EXPECT_EQ(conv3d_side(1.0 / 32768), 16u); /* 512 / 32 exactly */
  EXPECT_EQ(conv3d_side(kMinScale), 16u);
  EXPECT_EQ(conv3d_side(8.0), 1024u);
  EXPECT_EQ(conv3d_side(9.0), 0u); /* 1064.9: past CONV3D_MAX_N */
}

TEST(RodiniaConv3d, GeneratedUniform)
{
  Conv3dRun a(kTestScale);
  ASSERT_EQ(a.setup(), 0) << a.run.why;
  float lo = 2, hi = -1;
  for (float v : a.generate(0)) {
    lo = std::fmin(lo, v);
    hi = std::fmax(hi, v);
  }
  EXPECT_GE(lo, 0.0f);
  EXPECT_LT(lo, 0.01f);
  EXPECT_LT(hi, 1.0f);
  EXPECT_GT(hi, 0.99f);
}

/* The point (i, j, k) of an n-cube. */
uint64_t at(uint64_t n, uint64_t i, uint64_t j, uint64_t k) { return (i * n + j) * n + k; }

TEST(RodiniaConv3d, ReferenceConstantCubeByHand)
{
  /* a = 1: every interior point is the sum of the 15 coefficients,
   * 2 (2 + 4 + 5 + 7 - 8 + 10) + (-3 + 6 - 9) = 34; the border 0 */
  Conv3dRun r(kMinScale);
  ASSERT_EQ(conv3d_setup(&r.run), 0) << r.run.why;
  const uint64_t n = r.st()->n;
  std::vector<float> a(r.count(0), 1.0f);
  r.run.host_in[0] = a.data();
  ASSERT_EQ(conv3d_reference(&r.run), 0) << r.run.why;
  for (uint64_t i = 0; i < n; i++)
    for (uint64_t j = 0; j < n; j++)
      for (uint64_t k = 0; k < n; k++) {
        const bool border = i == 0 || j == 0 || k == 0 || i == n - 1 || j == n - 1 || k == n - 1;
        ASSERT_EQ(r.st()->ref[at(n, i, j, k)], border ? 0.0f : 34.0f) << i << " " << j << " " << k;
      }
}

TEST(RodiniaConv3d, ReferenceSinglePointByHand)
{
  /* a = 1 at p = (8, 8, 8) only: b[q] is the sum of the coefficients of
   * the taps of q that land on p.  b[i][j][k] takes a[i-1][j-1][k-1] with
   * c11 + c21 + c31 = -1, a[i+1][j-1][k-1] with c13 + c23 + c33 = 21, and
   * each other tap once */
  Conv3dRun r(kMinScale);
  ASSERT_EQ(conv3d_setup(&r.run), 0) << r.run.why;
  const uint64_t n = r.st()->n;
  std::vector<float> a(r.count(0), 0.0f);
  a[at(n, 8, 8, 8)] = 1.0f;
  r.run.host_in[0] = a.data();
  ASSERT_EQ(conv3d_reference(&r.run), 0) << r.run.why;
  struct {
    int di, dj, dk; /* q = p + (di, dj, dk) */
    float want;
  } const hits[] = {
      {1, 1, 1, -1},  /* q's [i-1][j-1][k-1] */
      {-1, 1, 1, 21}, /* [i+1][j-1][k-1] */
      {0, 1, 0, -3},  /* c12 [i][j-1][k] */
      {0, 0, 0, 6},   /* c22 [i][j][k] */
      {0, -1, 0, -9}, /* c32 [i][j+1][k] */
      {1, 1, -1, 2},  /* c11 [i-1][j-1][k+1] */
      {-1, 1, -1, 4}, /* c13 [i+1][j-1][k+1] */
      {1, 0, -1, 5},  /* c21 [i-1][j][k+1] */
      {-1, 0, -1, 7}, /* c23 [i+1][j][k+1] */
      {1, -1, -1, -8},/* c31 [i-1][j+1][k+1] */
      {-1, -1, -1, 10}/* c33 [i+1][j+1][k+1] */
  };
  double total = 0;
  int nonzero = 0;
  for (uint64_t q = 0; q < r.count(0); q++) {
    total += r.st()->ref[q];
    nonzero += r.st()->ref[q] != 0.0f;
  }
  for (const auto &h : hits)
    EXPECT_EQ(r.st()->ref[at(n, 8 + h.di, 8 + h.dj, 8 + h.dk)], h.want) << h.di << " " << h.dj << " " << h.dk;
  EXPECT_EQ(nonzero, 11);
  EXPECT_EQ(total, 34.0);
}

/* The convolution written plainly from PolyBench's definition, in double. */
std::vector<double> naive(const std::vector<float> &a, uint64_t n)
{
  std::vector<double> b(a.size(), 0.0);
  /* {coefficient, di, dj, dk} of the 15 terms */
  const double terms[15][4] = {{2, -1, -1, -1}, {4, 1, -1, -1}, {5, -1, -1, -1}, {7, 1, -1, -1}, {-8, -1, -1, -1},
                               {10, 1, -1, -1}, {-3, 0, -1, 0}, {6, 0, 0, 0},    {-9, 0, 1, 0},  {2, -1, -1, 1},
                               {4, 1, -1, 1},   {5, -1, 0, 1},  {7, 1, 0, 1},    {-8, -1, 1, 1}, {10, 1, 1, 1}};
  for (uint64_t i = 1; i + 1 < n; i++)
    for (uint64_t j = 1; j + 1 < n; j++)
      for (uint64_t k = 1; k + 1 < n; k++) {
        double s = 0;
        for (const auto &t : terms)
          s += t[0] * a[at(n, i + (int64_t)t[1], j + (int64_t)t[2], k + (int64_t)t[3])];
        b[at(n, i, j, k)] = s;
      }
  return b;
}

TEST(RodiniaConv3d, ReferenceMatchesNaiveConvolution)
{
  for (double scale : {kMinScale, kTestScale}) {
    Conv3dRun r(scale);
    ASSERT_EQ(conv3d_setup(&r.run), 0) << r.run.why;
    const uint64_t n = r.st()->n;
    std::vector<float> a = r.generate(0);
    r.run.host_in[0] = a.data();
    ASSERT_EQ(conv3d_reference(&r.run), 0) << r.run.why;
    const std::vector<double> want = naive(a, n);
    for (uint64_t q = 0; q < r.count(0); q++)
      ASSERT_NEAR(r.st()->ref[q], want[q], 1e-5) << "n " << n << " point " << q;
  }
}

TEST(RodiniaConv3d, VerifyAcceptsReferenceRejectsOneChange)
{
  Conv3dRun r(kMinScale);
  ASSERT_EQ(conv3d_setup(&r.run), 0) << r.run.why;
  const uint64_t n = r.st()->n;
  std::vector<float> a = r.generate(0);
  r.run.host_in[0] = a.data();
  EXPECT_EQ(conv3d_verify(&r.run), -EINVAL);
  ASSERT_EQ(conv3d_reference(&r.run), 0) << r.run.why;
  memcpy(r.st()->out, r.st()->ref, r.count(0) * sizeof(float));
  EXPECT_EQ(conv3d_verify(&r.run), 0) << r.run.why;
  /* within PolyBench's 0.05%: accepted; a border point off 0 by less than
   * atol: accepted */
  const uint64_t q = at(n, 3, 5, 7); /* row 3 n + 5 = 53, col 7 */
  r.st()->out[q] = r.st()->ref[q] * (1 + 4e-4f);
  r.st()->out[0] = 5e-5f;
  EXPECT_EQ(conv3d_verify(&r.run), 0) << r.run.why;
  r.st()->out[q] = r.st()->ref[q] + 0.01f * std::fabs(r.st()->ref[q]) + 0.01f;
  EXPECT_EQ(conv3d_verify(&r.run), -EBADMSG);
  EXPECT_NE(strstr(r.run.why, "3dconv"), nullptr) << r.run.why;
  EXPECT_NE(strstr(r.run.why, "row 53, col 7"), nullptr) << r.run.why;
  r.st()->out[q] = NAN;
  EXPECT_EQ(conv3d_verify(&r.run), -EBADMSG);
}

}  // namespace
