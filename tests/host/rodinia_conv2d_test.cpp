/*
 * rodinia_conv2d_test.cpp - rodinia-io/conv2d's (2dconv's) host side:
 * sizes, the generator, the CPU reference (impulses and a uniform image by
 * hand, generated images against a naive convolution in double written
 * here) and verify.
 */
#include <gtest/gtest.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "tests/host/rodinia_run.h"

namespace {

constexpr double kMinScale = 1.0 / 65536; /* n = 64 */
constexpr double kTestScale = 1.0 / 1024; /* n = 512 */

TEST(RodiniaConv2d, SetupSizes)
{
  Conv2dRun r(kTestScale);
  ASSERT_EQ(conv2d_setup(&r.run), 0) << r.run.why;
  EXPECT_EQ(r.st()->n, 512u);
  ASSERT_EQ(r.run.ninputs, 1);
  EXPECT_STREQ(r.run.in[0].name, "a");
  EXPECT_EQ(r.run.in[0].size, 512u * 512 * 4);
  /* 1 GiB at scale 1; the side goes with the square root of the scale,
   * down to a multiple of 32, never below 64 */
  EXPECT_EQ(conv2d_dim(1.0), 16384u);
  EXPECT_EQ(conv2d_dim(0.25), 8192u);
  EXPECT_EQ(conv2d_dim(0.3), 8960u); /* 16384 sqrt(0.3) = 8973.9 */
  EXPECT_EQ(conv2d_dim(0.001), 512u); /* 518.1 */
  EXPECT_EQ(conv2d_dim(kMinScale), 64u);
  EXPECT_EQ(conv2d_dim(1e-9), 64u);
  EXPECT_EQ(r.st()->n % CONV2D_MULTIPLE, 0u);
}

TEST(RodiniaConv2d, GeneratedUniformInSteps)
{
  Conv2dRun a(kTestScale);
  ASSERT_EQ(a.setup(), 0) << a.run.why;
  const std::vector<float> a0 = a.generate(0);
  /* [0, 1), in steps of 2^-24, and spread over it */
  float lo = 2, hi = -1;
  for (float u : a0) {
    ASSERT_GE(u, 0.0f);
    ASSERT_LT(u, 1.0f);
    ASSERT_EQ(u * 16777216.0f, std::floor(u * 16777216.0f)) << u;
    lo = std::fmin(lo, u);
    hi = std::fmax(hi, u);
  }
  EXPECT_LT(lo, 0.001f);
  EXPECT_GT(hi, 0.999f);
}

/* The reference of an image that is 0 but for one 1 at (y, x). */
std::vector<float> impulse_response(Conv2dRun &r, uint64_t y, uint64_t x)
{
  const uint64_t n = r.st()->n;
  std::vector<float> a(n * n, 0.0f);
  a[y * n + x] = 1.0f;
  r.run.host_in[0] = a.data();
  EXPECT_EQ(conv2d_reference(&r.run), 0) << r.run.why;
  r.run.host_in[0] = nullptr;
  return std::vector<float>(r.st()->ref, r.st()->ref + n * n);
}

TEST(RodiniaConv2d, ReferenceImpulseByHand)
{
  Conv2dRun r(kMinScale);
  ASSERT_EQ(conv2d_setup(&r.run), 0) << r.run.why;
  const uint64_t n = r.st()->n, y = 10, x = 20;
  /* b[i][j] takes a[y][x] with the coefficient of offset (y - i, x - j):
   * cXY weighs a[i + Y - 2][j + X - 2], so b[y - Y + 2][x - X + 2] = cXY */
  std::vector<float> want(n * n, 0.0f);
  want[(y + 1) * n + x + 1] = 0.2f;  /* c11 */
  want[(y + 0) * n + x + 1] = -0.3f; /* c12 */
  want[(y - 1) * n + x + 1] = 0.4f;  /* c13 */
  want[(y + 1) * n + x + 0] = 0.5f;  /* c21 */
  want[(y + 0) * n + x + 0] = 0.6f;  /* c22 */
  want[(y - 1) * n + x + 0] = 0.7f;  /* c23 */
  want[(y + 1) * n + x - 1] = -0.8f; /* c31 */
  want[(y + 0) * n + x - 1] = -0.9f; /* c32 */
  want[(y - 1) * n + x - 1] = 0.1f;  /* c33 */
  const std::vector<float> got = impulse_response(r, y, x);
  for (uint64_t i = 0; i < n * n; i++)
    ASSERT_EQ(got[i], want[i]) << "row " << i / n << " col " << i % n;
  /* at the corner only b[1][1] sees it; the border stays 0 */
  const std::vector<float> corner = impulse_response(r, 0, 0);
  for (uint64_t i = 0; i < n * n; i++)
    ASSERT_EQ(corner[i], i == n + 1 ? 0.2f : 0.0f) << "row " << i / n << " col " << i % n;
  const std::vector<float> last = impulse_response(r, n - 1, n - 1);
  for (uint64_t i = 0; i < n * n; i++)
    ASSERT_EQ(last[i], i == (n - 2) * n + n - 2 ? 0.1f : 0.0f) << "row " << i / n << " col " << i % n;
}

TEST(RodiniaConv2d, ReferenceUniformByHand)
{
  /* the coefficients add up to 0.5: a uniform 1 gives 0.5 inside, 0 on
   * the border */
  Conv2dRun r(kMinScale);
  ASSERT_EQ(conv2d_setup(&r.run), 0) << r.run.why;
  const uint64_t n = r.st()->n;
  std::vector<float> a(n * n, 1.0f);
  r.run.host_in[0] = a.data();
  ASSERT_EQ(conv2d_reference(&r.run), 0) << r.run.why;
  for (uint64_t i = 0; i < n; i++)
    for (uint64_t j = 0; j < n; j++) {
      const bool border = i == 0 || j == 0 || i == n - 1 || j == n - 1;
      if (border)
        ASSERT_EQ(r.st()->ref[i * n + j], 0.0f) << i << " " << j;
      else
        ASSERT_NEAR(r.st()->ref[i * n + j], 0.5, 1e-6) << i << " " << j;
    }
}

TEST(RodiniaConv2d, ReferenceMatchesNaiveConvolution)
{
  /* the 3x3 weights as a table, w[di + 1][dj + 1] for a[i + di][j + dj] */
  const double w[3][3] = {{0.2, 0.5, -0.8}, {-0.3, 0.6, -0.9}, {0.4, 0.7, 0.1}};
  for (double scale : {kMinScale, kTestScale}) {
    Conv2dRun r(scale);
    ASSERT_EQ(conv2d_setup(&r.run), 0) << r.run.why;
    const int64_t n = (int64_t)r.st()->n;
    std::vector<float> a = r.generate(0);
    r.run.host_in[0] = a.data();
    ASSERT_EQ(conv2d_reference(&r.run), 0) << r.run.why;
    double lo = 0, hi = 0;
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < n; j++) {
        double want = 0;
        if (i > 0 && j > 0 && i < n - 1 && j < n - 1)
          for (int di = -1; di <= 1; di++)
            for (int dj = -1; dj <= 1; dj++)
              want += w[di + 1][dj + 1] * a[(i + di) * n + j + dj];
        const float got = r.st()->ref[i * n + j];
        /* float rounding of 17 operations on sums below 4.5, and the
         * float coefficients' distance from the decimal ones (conv2d.h) */
        ASSERT_NEAR(got, want, 5e-6) << "n " << n << " row " << i << " col " << j;
        lo = std::fmin(lo, got);
        hi = std::fmax(hi, got);
      }
    /* both signs, far from 0: the comparison saw real sums */
    EXPECT_LT(lo, -0.5) << "n " << n;
    EXPECT_GT(hi, 1.0) << "n " << n;
  }
}

TEST(RodiniaConv2d, VerifyAcceptsReferenceRejectsOneChange)
{
  Conv2dRun r(kMinScale);
  ASSERT_EQ(conv2d_setup(&r.run), 0) << r.run.why;
  const uint64_t n = r.st()->n;
  EXPECT_EQ(conv2d_verify(&r.run), -EINVAL); /* no reference yet */
  std::vector<float> a = r.generate(0);
  r.run.host_in[0] = a.data();
  ASSERT_EQ(conv2d_reference(&r.run), 0) << r.run.why;
  float *out = r.st()->out, *ref = r.st()->ref;
  memcpy(out, ref, n * n * sizeof(float));
  EXPECT_EQ(conv2d_verify(&r.run), 0) << r.run.why;
  /* within the tolerance: accepted */
  out[3 * n + 3] = ref[3 * n + 3] + 2e-6f;
  EXPECT_EQ(conv2d_verify(&r.run), 0) << r.run.why;
  out[5 * n + 7] += 1e-4f;
  EXPECT_EQ(conv2d_verify(&r.run), -EBADMSG);
  EXPECT_NE(strstr(r.run.why, "2dconv"), nullptr) << r.run.why;
  EXPECT_NE(strstr(r.run.why, "row 5, col 7"), nullptr) << r.run.why;
  out[5 * n + 7] = NAN;
  EXPECT_EQ(conv2d_verify(&r.run), -EBADMSG);
  out[5 * n + 7] = ref[5 * n + 7];
  /* a border element that is not 0 */
  out[(n - 1) * n + 9] = 0.25f;
  EXPECT_EQ(conv2d_verify(&r.run), -EBADMSG);
  EXPECT_NE(strstr(r.run.why, "col 9"), nullptr) << r.run.why;
}

}  // namespace
