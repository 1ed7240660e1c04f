/*
 * rodinia_pathfinder_test.cpp - rodinia-io/pathfinder's host side: sizes
 * (columns, then rows, shrinking with the scale), the generator, the CPU
 * reference (hand-checked rows, and a naive row-by-row DP on generated
 * grids), and verify.
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "tests/host/rodinia_run.h"

namespace {

constexpr double kTinyScale = 1.0 / 8192; /* 2048 x 32, the least */
constexpr double kTestScale = 1.0 / 1024; /* 2048 x 119 */

/* The DP row by row over the whole width. */
std::vector<int32_t> naive(const std::vector<int32_t> &first, const std::vector<int32_t> &wall, uint64_t rows,
                           uint64_t cols)
{
  std::vector<int32_t> src(first), dst(cols);
  for (uint64_t r = 1; r < rows; r++) {
    for (uint64_t c = 0; c < cols; c++) {
      int32_t m = src[c];
      if (c > 0)
        m = std::min(m, src[c - 1]);
      if (c + 1 < cols)
        m = std::min(m, src[c + 1]);
      dst[c] = wall[(r - 1) * cols + c] + m;
    }
    src.swap(dst);
  }
  return src;
}

TEST(RodiniaPathfinder, SetupSizes)
{
  struct {
    double scale;
    uint64_t cols, rows;
  } cases[] = {{1.0, 262144, 953}, {0.5, 131072, 953}, {1.0 / 64, 4096, 953}, {1.0 / 128, 2048, 953},
               {kTestScale, 2048, 119}, {kTinyScale, 2048, 32}, {1e-9, 2048, 32}};
  for (const auto &k : cases) {
    PathfinderRun r(k.scale);
    ASSERT_EQ(pathfinder_setup(&r.run), 0) << r.run.why;
    EXPECT_EQ(r.st()->cols, k.cols) << k.scale;
    EXPECT_EQ(r.st()->rows, k.rows) << k.scale;
    ASSERT_EQ(r.run.ninputs, 2);
    EXPECT_STREQ(r.run.in[0].name, "first");
    EXPECT_EQ(r.run.in[0].size, 4 * k.cols);
    EXPECT_STREQ(r.run.in[1].name, "wall");
    EXPECT_EQ(r.run.in[1].size, 4 * k.cols * (k.rows - 1));
  }
}

TEST(RodiniaPathfinder, GeneratedRandomField)
{
  PathfinderRun a(kTinyScale);
  a.prepare();
  /* one random field: cell (r, c) = rio_rand(seed, 1, r * cols + c) % 10 */
  const uint64_t cols = a.st()->cols;
  EXPECT_EQ(a.in[0][5], (int32_t)(rio_rand(kRioSeed, 1, 5) % 10));
  EXPECT_EQ(a.in[1][3 * cols + 7], (int32_t)(rio_rand(kRioSeed, 1, 4 * cols + 7) % 10));
  for (int i = 0; i < 2; i++)
    for (int32_t v : a.in[i])
      ASSERT_TRUE(v >= 0 && v <= 9) << v;
}

TEST(RodiniaPathfinder, ReferenceHandChecked)
{
  PathfinderRun r(kTinyScale);
  r.prepare();
  const uint64_t cols = r.st()->cols, rows = r.st()->rows, reach = rows - 1;
  /* first: 5 everywhere but 0 at column 100 and 1 at the last column; wall:
   * 1 everywhere.  A cell of the last row pays 1 a row, plus the least
   * first-row value within reach (the cone widens one column a row). */
  std::fill(r.in[0].begin(), r.in[0].end(), 5);
  r.in[0][100] = 0;
  r.in[0][cols - 1] = 1;
  std::fill(r.in[1].begin(), r.in[1].end(), 1);
  ASSERT_EQ(pathfinder_reference(&r.run), 0) << r.run.why;
  for (uint64_t c = 0; c < cols; c++) {
    const uint64_t d100 = c > 100 ? c - 100 : 100 - c;
    const int32_t best = d100 <= reach ? 0 : cols - 1 - c <= reach ? 1 : 5;
    ASSERT_EQ(r.st()->want[c], (int32_t)reach + best) << c;
  }
  EXPECT_EQ(r.st()->want[0], 36) << "column 0: 31 rows of 1, columns 100 and cols - 1 out of reach";
  EXPECT_EQ(r.st()->want[131], 31);
  EXPECT_EQ(r.st()->want[132], 36);
  EXPECT_EQ(r.st()->want[cols - 1], 32);
}

TEST(RodiniaPathfinder, ReferenceMatchesNaiveDp)
{
  for (double scale : {kTinyScale, kTestScale}) {
    PathfinderRun r(scale);
    r.prepare();
    ASSERT_EQ(pathfinder_reference(&r.run), 0) << r.run.why;
    const std::vector<int32_t> want = naive(r.in[0], r.in[1], r.st()->rows, r.st()->cols);
    EXPECT_EQ(std::vector<int32_t>(r.st()->want, r.st()->want + r.st()->cols), want) << scale;
  }
}

TEST(RodiniaPathfinder, VerifyAcceptsReferenceAndNamesAChange)
{
  PathfinderRun r(kTinyScale);
  r.prepare();
  ASSERT_EQ(pathfinder_reference(&r.run), 0) << r.run.why;
  pathfinder_state *st = r.st();
  memcpy(st->got, st->want, st->cols * sizeof(int32_t));
  EXPECT_EQ(pathfinder_verify(&r.run), 0) << r.run.why;
  st->got[1234] += 1;
  EXPECT_EQ(pathfinder_verify(&r.run), -EBADMSG);
  EXPECT_NE(std::string(r.run.why).find("last row[1234]"), std::string::npos) << r.run.why;
}

} // namespace
