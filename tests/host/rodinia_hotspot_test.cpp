/*
 * rodinia_hotspot_test.cpp - rodinia-io/hotspot's host side: sizes, the
 * chip model's coefficients against hand-computed values, the inputs, the
 * CPU reference (a uniform field by hand, a generated grid against a naive
 * simulation written here) and verify.
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

TEST(RodiniaHotspot, SetupSizes)
{
  HotspotRun r(kTestScale);
  ASSERT_EQ(hotspot_setup(&r.run), 0) << r.run.why;
  EXPECT_EQ(r.st()->n, 512u);
  ASSERT_EQ(r.run.ninputs, 2);
  EXPECT_STREQ(r.run.in[0].name, "temp");
  EXPECT_STREQ(r.run.in[1].name, "power");
  EXPECT_EQ(r.run.in[0].size, 512u * 512 * 4);
  EXPECT_EQ(r.run.in[1].size, 512u * 512 * 4);
  /* 1 GiB per input at scale 1; the side goes with the square root of the
   * scale, down to a multiple of 16, never below 64 */
  EXPECT_EQ(hotspot_dim(1.0), 16384u);
  EXPECT_EQ(hotspot_dim(0.25), 8192u);
  EXPECT_EQ(hotspot_dim(0.3), 8960u); /* 16384 sqrt(0.3) = 8973.9 */
  EXPECT_EQ(hotspot_dim(kMinScale), 64u);
  EXPECT_EQ(hotspot_dim(1e-9), 64u);
}

TEST(RodiniaHotspot, CoefficientsByHand)
{
  /* every n: cells of g = 16 mm / 1024 = 15.625 um; Rx = Ry = g / (2 k t g)
   * = 1 / (2 100 0.0005) = 10 K/W; Rz = t / (k g^2) = 20480 K/W;
   * step / Cap = (0.001 / (3e6 / (0.5 0.0005 1.75e6))) / (0.5 1.75e6 0.0005
   * g^2) = 1e-3 / (3e6 g^2) = 1 / 0.732421875 */
  {
    const hotspot_coeffs k = hotspot_model();
    EXPECT_FLOAT_EQ(k.rx_1, 0.1f);
    EXPECT_FLOAT_EQ(k.ry_1, 0.1f);
    EXPECT_FLOAT_EQ(k.rz_1, 1.0f / 20480);
    EXPECT_FLOAT_EQ(k.step_div_cap, 1.0f / 0.732421875f);
    EXPECT_FLOAT_EQ(k.amb, 80.0f);
    /* the header's claim: a checkerboard decays (|1 - 4 step/Cap (1/Rx +
     * 1/Ry)| = 0.09 < 1), at every grid size */
    EXPECT_NEAR(std::fabs(1 - 4 * k.step_div_cap * (k.rx_1 + k.ry_1)), 0.0923, 1e-3);
  }
}

TEST(RodiniaHotspot, GeneratedRanges)
{
  HotspotRun a(kTestScale);
  ASSERT_EQ(a.setup(), 0) << a.run.why;
  const std::vector<float> a0 = a.generate(0), a1 = a.generate(1);
  float tmin = 1e9f, tmax = 0, pmin = 1e9f, pmax = -1;
  for (size_t i = 0; i < a0.size(); i++) {
    tmin = std::fmin(tmin, a0[i]);
    tmax = std::fmax(tmax, a0[i]);
    pmin = std::fmin(pmin, a1[i]);
    pmax = std::fmax(pmax, a1[i]);
  }
  EXPECT_GE(tmin, 320.0f);
  EXPECT_LT(tmin, 321.0f);
  EXPECT_LE(tmax, 340.0f);
  EXPECT_GT(tmax, 339.0f);
  EXPECT_GE(pmin, 0.0f);
  EXPECT_LE(pmax, (float)HOTSPOT_POWER_MAX);
  EXPECT_GT(pmax, 0.9f * (float)HOTSPOT_POWER_MAX);
}

TEST(RodiniaHotspot, ReferenceUniformFieldByHand)
{
  /* no lateral flow and no power: each step moves every cell by
   * step/Cap (amb - T)/Rz = (80 - T) / 15000 */
  HotspotRun r(kMinScale);
  ASSERT_EQ(hotspot_setup(&r.run), 0) << r.run.why;
  const uint64_t n = r.st()->n;
  std::vector<float> temp(n * n, 330.0f), power(n * n, 0.0f);
  r.run.host_in[0] = temp.data();
  r.run.host_in[1] = power.data();
  ASSERT_EQ(hotspot_reference(&r.run), 0) << r.run.why;
  double t = 330;
  for (int it = 0; it < HOTSPOT_ITERS; it++)
    t += (80 - t) / 15000;
  EXPECT_NEAR(t, 329.93334, 1e-6);
  for (uint64_t i = 0; i < n * n; i++)
    ASSERT_NEAR(r.st()->ref[i], t, 1e-4) << "cell " << i;
}

/* HOTSPOT_ITERS steps written plainly: out-of-grid neighbours are the cell
 * itself; the float operations in the order of the model's formula. */
std::vector<float> naive(const std::vector<float> &t0, const std::vector<float> &p, uint64_t n, const hotspot_coeffs &k)
{
  std::vector<float> t = t0, next(n * n);
  auto at = [&](int64_t y, int64_t x, int64_t y0, int64_t x0) {
    if (y < 0 || y >= (int64_t)n || x < 0 || x >= (int64_t)n)
      return t[y0 * n + x0];
    return t[y * n + x];
  };
  for (int it = 0; it < HOTSPOT_ITERS; it++) {
    for (int64_t y = 0; y < (int64_t)n; y++)
      for (int64_t x = 0; x < (int64_t)n; x++) {
        const float c = t[y * n + x];
        const float vert = (at(y + 1, x, y, x) + at(y - 1, x, y, x)) - 2.0f * c;
        const float horiz = (at(y, x + 1, y, x) + at(y, x - 1, y, x)) - 2.0f * c;
        float flow = p[y * n + x] + vert * k.ry_1;
        flow = flow + horiz * k.rx_1;
        flow = flow + (k.amb - c) * k.rz_1;
        next[y * n + x] = c + k.step_div_cap * flow;
      }
    t.swap(next);
  }
  return t;
}

TEST(RodiniaHotspot, ReferenceMatchesNaiveSimulation)
{
  for (double scale : {kMinScale, kTestScale}) {
    HotspotRun r(scale);
    ASSERT_EQ(hotspot_setup(&r.run), 0) << r.run.why;
    const uint64_t n = r.st()->n;
    std::vector<float> temp = r.generate(0), power = r.generate(1);
    /* a hot corner and a hot edge cell, where the clamping shows */
    temp[0] = 400.0f;
    temp[n * (n / 2) + n - 1] = 390.0f;
    r.run.host_in[0] = temp.data();
    r.run.host_in[1] = power.data();
    ASSERT_EQ(hotspot_reference(&r.run), 0) << r.run.why;
    const std::vector<float> want = naive(temp, power, n, r.st()->k);
    for (uint64_t i = 0; i < n * n; i++)
      ASSERT_NEAR(r.st()->ref[i], want[i], 1e-6 * std::fabs(want[i])) << "n " << n << " cell " << i;
    EXPECT_NE(r.st()->ref[0], temp[0]);
  }
}

TEST(RodiniaHotspot, VerifyAcceptsReferenceRejectsOneChange)
{
  HotspotRun r(kMinScale);
  ASSERT_EQ(hotspot_setup(&r.run), 0) << r.run.why;
  const uint64_t n = r.st()->n;
  std::vector<float> temp = r.generate(0), power = r.generate(1);
  r.run.host_in[0] = temp.data();
  r.run.host_in[1] = power.data();
  ASSERT_EQ(hotspot_reference(&r.run), 0) << r.run.why;
  memcpy(r.st()->out, r.st()->ref, n * n * sizeof(float));
  EXPECT_EQ(hotspot_verify(&r.run), 0) << r.run.why;
  /* within the tolerance: accepted */
  r.st()->out[3] = r.st()->ref[3] * (1 + 2e-6f);
  EXPECT_EQ(hotspot_verify(&r.run), 0) << r.run.why;
  r.st()->out[5 * n + 7] += 0.01f;
  EXPECT_EQ(hotspot_verify(&r.run), -EBADMSG);
  EXPECT_NE(strstr(r.run.why, "hotspot"), nullptr) << r.run.why;
  EXPECT_NE(strstr(r.run.why, "row 5, col 7"), nullptr) << r.run.why;
  r.st()->out[5 * n + 7] = NAN;
  EXPECT_EQ(hotspot_verify(&r.run), -EBADMSG);
}

}  // namespace
