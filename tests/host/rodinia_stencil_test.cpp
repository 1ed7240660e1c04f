/*
 * rodinia_stencil_test.cpp - rodinia-io/stencil's host side: sizes, the
 * input, the CPU reference (a single hot cell by hand, a generated grid
 * against a naive sweep written here) and verify.
 */
#include <gtest/gtest.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "tests/host/rodinia_run.h"

namespace {

constexpr double kMinScale = 1e-9;        /* 32 x 32 x 8 */
constexpr double kTestScale = 1.0 / 1024; /* 160 x 160 x 8 */

void expect_dims(double scale, uint64_t side, uint64_t nz)
{
  uint64_t x = 0, y = 0, z = 0;
  ASSERT_EQ(stencil_dims(scale, &x, &y, &z), 0) << scale;
  EXPECT_EQ(x, side) << scale;
  EXPECT_EQ(y, side) << scale;
  EXPECT_EQ(z, nz) << scale;
}

TEST(RodiniaStencil, SetupSizes)
{
  StencilRun r(kTestScale);
  ASSERT_EQ(stencil_setup(&r.run), 0) << r.run.why;
  EXPECT_EQ(r.st()->nx, 160u);
  EXPECT_EQ(r.st()->ny, 160u);
  EXPECT_EQ(r.st()->nz, 8u);
  ASSERT_EQ(r.run.ninputs, 1);
  EXPECT_STREQ(r.run.in[0].name, "grid");
  EXPECT_EQ(r.run.in[0].size, 160u * 160 * 8 * 4);
  EXPECT_FLOAT_EQ(r.st()->c0, 1.0f / 6);
  EXPECT_FLOAT_EQ(r.st()->c1, 1.0f / 36);
  /* 1 GiB at scale 1; planes of 512 x 512 go with the scale down to 8 of
   * them, then the planes shrink (side^2 x 8 <= 512^2 x 1024 scale, a
   * multiple of 32, at least 32) */
  expect_dims(1.0, 512, 1024);
  expect_dims(0.5, 512, 512);
  expect_dims(0.3, 512, 307);
  expect_dims(1.0 / 128, 512, 8);
  expect_dims(1.0 / 256, 352, 8); /* 512 sqrt(1/2) = 362.0 */
  expect_dims(kTestScale, 160, 8); /* 512 sqrt(1/8) = 181.0 */
  expect_dims(kMinScale, 32, 8);
  expect_dims(8.0, 512, 8192);
}

TEST(RodiniaStencil, GeneratedUniform)
{
  StencilRun a(kTestScale);
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

TEST(RodiniaStencil, ReferenceHotCellByHand)
{
  /* one cell of 1 in a zero grid, far enough from the boundary that no
   * path of 4 steps touches it: the value there after 4 steps is the sum
   * over the closed walks of 4 steps, each move weighing c1, each stay c0:
   * c0^4 + C(4,2) 6 c0^2 c1^2 + 90 c1^4 (6 closed walks of 2 moves in 3-D,
   * 90 of 4); at a face neighbour, C(4,1) c0^3 c1 + C(4,3) 15 c0 c1^3
   * (1 walk of 1 move to it, 15 of 3) */
  StencilRun r(kMinScale);
  ASSERT_EQ(stencil_setup(&r.run), 0) << r.run.why;
  const uint64_t nx = r.st()->nx, ny = r.st()->ny;
  ASSERT_EQ(nx, 32u);
  ASSERT_EQ(r.st()->nz, 8u);
  std::vector<float> grid(r.count(0), 0.0f);
  const uint64_t hot = (4 * ny + 16) * nx + 16; /* z 4, y 16, x 16 */
  grid[hot] = 1.0f;
  r.run.host_in[0] = grid.data();
  ASSERT_EQ(stencil_reference(&r.run), 0) << r.run.why;
  const double c0 = 1.0 / 6, c1 = 1.0 / 36;
  const double centre = std::pow(c0, 4) + 36 * c0 * c0 * c1 * c1 + 90 * std::pow(c1, 4);
  const double face = 4 * std::pow(c0, 3) * c1 + 60 * c0 * std::pow(c1, 3);
  EXPECT_NEAR(centre, 2682.0 / 1679616, 1e-12);
  EXPECT_NEAR(r.st()->ref[hot], centre, 1e-6 * centre);
  for (uint64_t n : {hot - 1, hot + 1, hot - nx, hot + nx, hot - nx * ny, hot + nx * ny})
    EXPECT_NEAR(r.st()->ref[n], face, 1e-6 * face) << "cell " << n;
  /* 5 cells away (more than 4 steps): still 0 */
  EXPECT_EQ(r.st()->ref[hot + 5], 0.0f);
}

/* STENCIL_ITERS sweeps written plainly, in double: boundary cells keep
 * their values, interior ones c0 c + c1 (sum of the 6 face neighbours). */
std::vector<double> naive(const std::vector<float> &in, uint64_t nx, uint64_t ny, uint64_t nz)
{
  std::vector<double> t(in.begin(), in.end()), next(t);
  const double c0 = 1.0 / 6, c1 = 1.0 / 36;
  auto at = [&](uint64_t x, uint64_t y, uint64_t z) { return t[(z * ny + y) * nx + x]; };
  for (int it = 0; it < STENCIL_ITERS; it++) {
    for (uint64_t z = 1; z + 1 < nz; z++)
      for (uint64_t y = 1; y + 1 < ny; y++)
        for (uint64_t x = 1; x + 1 < nx; x++)
          next[(z * ny + y) * nx + x] =
              c0 * at(x, y, z) + c1 * (at(x - 1, y, z) + at(x + 1, y, z) + at(x, y - 1, z) + at(x, y + 1, z) +
                                       at(x, y, z - 1) + at(x, y, z + 1));
    t.swap(next);
  }
  return t;
}

TEST(RodiniaStencil, ReferenceMatchesNaiveSweep)
{
  for (double scale : {kMinScale, kTestScale}) {
    StencilRun r(scale);
    ASSERT_EQ(stencil_setup(&r.run), 0) << r.run.why;
    const uint64_t nx = r.st()->nx, ny = r.st()->ny, nz = r.st()->nz;
    std::vector<float> grid = r.generate(0);
    r.run.host_in[0] = grid.data();
    ASSERT_EQ(stencil_reference(&r.run), 0) << r.run.why;
    const std::vector<double> want = naive(grid, nx, ny, nz);
    for (uint64_t i = 0; i < r.count(0); i++)
      ASSERT_NEAR(r.st()->ref[i], want[i], 1e-6 * want[i] + 1e-9) << "side " << nx << " cell " << i;
    /* boundary cells are the input's, bit for bit */
    EXPECT_EQ(r.st()->ref[5], grid[5]);
    EXPECT_EQ(r.st()->ref[r.count(0) - 3], grid[r.count(0) - 3]);
    EXPECT_EQ(r.st()->ref[(3 * ny + 7) * nx], grid[(3 * ny + 7) * nx]);
    EXPECT_NE(r.st()->ref[(3 * ny + 7) * nx + 1], grid[(3 * ny + 7) * nx + 1]);
  }
}

TEST(RodiniaStencil, VerifyAcceptsReferenceRejectsOneChange)
{
  StencilRun r(kMinScale);
  ASSERT_EQ(stencil_setup(&r.run), 0) << r.run.why;
  const uint64_t nx = r.st()->nx, ny = r.st()->ny;
  std::vector<float> grid = r.generate(0);
  r.run.host_in[0] = grid.data();
  EXPECT_EQ(stencil_verify(&r.run), -EINVAL);
  ASSERT_EQ(stencil_reference(&r.run), 0) << r.run.why;
  memcpy(r.st()->out, r.st()->ref, r.count(0) * sizeof(float));
  EXPECT_EQ(stencil_verify(&r.run), 0) << r.run.why;
  /* within the tolerance: accepted */
  const uint64_t i = (2 * ny + 5) * nx + 7; /* z 2, y 5, x 7: row 2 ny + 5 */
  r.st()->out[i] = r.st()->ref[i] * (1 + 5e-6f);
  EXPECT_EQ(stencil_verify(&r.run), 0) << r.run.why;
  r.st()->out[i] = r.st()->ref[i] * 1.001f;
  EXPECT_EQ(stencil_verify(&r.run), -EBADMSG);
  EXPECT_NE(strstr(r.run.why, "stencil"), nullptr) << r.run.why;
  EXPECT_NE(strstr(r.run.why, "row 69, col 7"), nullptr) << r.run.why;
  r.st()->out[i] = NAN;
  EXPECT_EQ(stencil_verify(&r.run), -EBADMSG);
}

}  // namespace
