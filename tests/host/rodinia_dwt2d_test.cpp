/*
 * rodinia_dwt2d_test.cpp - rodinia-io/dwt2d's host side: sizes, the
 * picture, the CPU transform (a flat picture by hand, the worst-case
 * pixel checkerboard within 16 bits, a generated picture against a naive
 * transform written here) and verify.
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "tests/host/rodinia_run.h"

namespace {

constexpr double kMinScale = 1.0 / 65536; /* n = 64 */
constexpr double kTestScale = 1.0 / 1024; /* n = 512 */

TEST(RodiniaDwt2d, SetupSizes)
{
  DwtRun r(kTestScale);
  ASSERT_EQ(dwt2d_setup(&r.run), 0) << r.run.why;
  EXPECT_EQ(r.st()->n, 512u);
  ASSERT_EQ(r.run.ninputs, 1);
  EXPECT_STREQ(r.run.in[0].name, "rgb");
  EXPECT_EQ(r.run.in[0].size, 3u * 512 * 512);
  /* 768 MiB at scale 1; the side goes with the square root of the scale,
   * down to a multiple of 64, never below 64 */
  EXPECT_EQ(dwt2d_dim(1.0), 16384u);
  EXPECT_EQ(dwt2d_dim(0.25), 8192u);
  EXPECT_EQ(dwt2d_dim(0.3), 8960u); /* 16384 sqrt(0.3) = 8973.9 */
  EXPECT_EQ(dwt2d_dim(kMinScale), 64u);
  EXPECT_EQ(dwt2d_dim(1e-9), 64u);
}

TEST(RodiniaDwt2d, GeneratedPictureSpansTheRange)
{
  DwtRun a(kTestScale);
  ASSERT_EQ(a.setup(), 0) << a.run.why;
  const std::vector<uint8_t> a0 = a.generate(0);
  for (int comp = 0; comp < 3; comp++) {
    int lo = 255, hi = 0;
    for (size_t i = comp; i < a0.size(); i += 3) {
      lo = std::min(lo, (int)a0[i]);
      hi = std::max(hi, (int)a0[i]);
    }
    EXPECT_LT(lo, 32) << "component " << comp;
    EXPECT_GT(hi, 220) << "component " << comp;
  }
}

TEST(RodiniaDwt2d, ReferenceFlatPictureByHand)
{
  /* a constant signal has no detail (d = 0) and keeps its value (s = x):
   * only the level-3 low-low square holds 200 - 128 */
  DwtRun r(kMinScale);
  ASSERT_EQ(dwt2d_setup(&r.run), 0) << r.run.why;
  const uint64_t n = r.st()->n, q = n >> DWT2D_LEVELS;
  std::vector<uint8_t> rgb(r.run.in[0].size, 200);
  r.run.host_in[0] = rgb.data();
  ASSERT_EQ(dwt2d_reference(&r.run), 0) << r.run.why;
  for (uint64_t c = 0; c < 3; c++)
    for (uint64_t y = 0; y < n; y++)
      for (uint64_t x = 0; x < n; x++)
        ASSERT_EQ(r.st()->ref[(c * n + y) * n + x], y < q && x < q ? 72 : 0)
            << "component " << c << " row " << y << " col " << x;
}

TEST(RodiniaDwt2d, ReferenceWorstPictureFitsSixteenBits)
{
  /* pixels alternating 0 and 255: the largest details; the bound in
   * dwt2d.h says 8192 at most */
  DwtRun r(kMinScale);
  ASSERT_EQ(dwt2d_setup(&r.run), 0) << r.run.why;
  const uint64_t n = r.st()->n;
  std::vector<uint8_t> rgb(r.run.in[0].size);
  for (uint64_t i = 0; i < n * n; i++)
    for (int c = 0; c < 3; c++)
      rgb[3 * i + c] = ((i / n + i % n) & 1) ? 255 : 0;
  r.run.host_in[0] = rgb.data();
  ASSERT_EQ(dwt2d_reference(&r.run), 0) << r.run.why;
  int worst = 0;
  for (uint64_t i = 0; i < 3 * n * n; i++)
    worst = std::max(worst, std::abs((int)r.st()->ref[i]));
  EXPECT_LE(worst, 8192);
  EXPECT_GT(worst, 255);
}

/* x[j] with the signal mirrored at both ends. */
long mirrored(const std::vector<long> &x, long j)
{
  const long m = (long)x.size();
  if (j < 0)
    j = -j;
  if (j >= m)
    j = 2 * (m - 1) - j;
  return x[j];
}

/* The 5/3 lifting of one signal by its definition: predict every odd
 * sample, then update every even one; lows then highs. */
std::vector<long> lift53(const std::vector<long> &x)
{
  const long h = (long)x.size() / 2;
  std::vector<long> d(h), s(h), out;
  for (long i = 0; i < h; i++)
    d[i] = x[2 * i + 1] - (long)std::floor((mirrored(x, 2 * i) + mirrored(x, 2 * i + 2)) / 2.0);
  for (long i = 0; i < h; i++)
    s[i] = x[2 * i] + (long)std::floor((d[i ? i - 1 : 0] + d[i] + 2) / 4.0);
  out.insert(out.end(), s.begin(), s.end());
  out.insert(out.end(), d.begin(), d.end());
  return out;
}

TEST(RodiniaDwt2d, ReferenceMatchesNaiveTransform)
{
  DwtRun r(kMinScale);
  ASSERT_EQ(dwt2d_setup(&r.run), 0) << r.run.why;
  const uint64_t n = r.st()->n;
  std::vector<uint8_t> rgb = r.generate(0);
  r.run.host_in[0] = rgb.data();
  ASSERT_EQ(dwt2d_reference(&r.run), 0) << r.run.why;
  for (uint64_t c = 0; c < 3; c++) {
    std::vector<std::vector<long>> a(n, std::vector<long>(n));
    for (uint64_t y = 0; y < n; y++)
      for (uint64_t x = 0; x < n; x++)
        a[y][x] = (long)rgb[3 * (y * n + x) + c] - 128;
    for (uint64_t m = n; m > n >> DWT2D_LEVELS; m /= 2) {
      for (uint64_t y = 0; y < m; y++) {
        std::vector<long> row(a[y].begin(), a[y].begin() + m), t = lift53(row);
        std::copy(t.begin(), t.end(), a[y].begin());
      }
      for (uint64_t x = 0; x < m; x++) {
        std::vector<long> col(m);
        for (uint64_t y = 0; y < m; y++)
          col[y] = a[y][x];
        col = lift53(col);
        for (uint64_t y = 0; y < m; y++)
          a[y][x] = col[y];
      }
    }
    for (uint64_t y = 0; y < n; y++)
      for (uint64_t x = 0; x < n; x++)
        ASSERT_EQ(r.st()->ref[(c * n + y) * n + x], a[y][x]) << "component " << c << " row " << y << " col " << x;
  }
}

TEST(RodiniaDwt2d, VerifyAcceptsReferenceRejectsOneChange)
{
  DwtRun r(kMinScale);
  ASSERT_EQ(dwt2d_setup(&r.run), 0) << r.run.why;
  const uint64_t n = r.st()->n;
  std::vector<uint8_t> rgb = r.generate(0);
  r.run.host_in[0] = rgb.data();
  ASSERT_EQ(dwt2d_reference(&r.run), 0) << r.run.why;
  memcpy(r.st()->out, r.st()->ref, 3 * n * n * sizeof(int16_t));
  EXPECT_EQ(dwt2d_verify(&r.run), 0) << r.run.why;
  r.st()->out[(1 * n + 5) * n + 7] += 1;
  EXPECT_EQ(dwt2d_verify(&r.run), -EBADMSG);
  EXPECT_NE(strstr(r.run.why, "dwt2d"), nullptr) << r.run.why;
  EXPECT_NE(strstr(r.run.why, "component 1[row 5, col 7]"), nullptr) << r.run.why;
  EXPECT_NE(strstr(r.run.why, "1 of"), nullptr) << r.run.why;
}

}  // namespace
