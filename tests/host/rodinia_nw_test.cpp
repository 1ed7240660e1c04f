/*
 * rodinia_nw_test.cpp - rodinia-io/nw's host side: sizes, the BLOSUM62
 * table, the two generated matrices (determinism, content), the CPU
 * reference (hand-computed cells, and a recursive evaluation of the
 * recurrence written here), and verify.
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

/* w = 16384 sqrt(scale): 1/65536 -> 64 (the minimum), 1/1024 -> 512 */
constexpr double kTinyScale = 1.0 / 65536;
constexpr double kTestScale = 1.0 / 1024;

/* M[i][j] by memoized recursion on the recurrence itself (column by
 * column, unlike the reference's rows). */
int32_t recurse(const std::vector<int32_t> &ref, const std::vector<int32_t> &init, uint64_t w,
                std::vector<int32_t> &memo, std::vector<char> &known, uint64_t i, uint64_t j)
{
  if (i == 0 || j == 0)
    return init[i * w + j];
  if (!known[i * w + j]) {
    const int32_t d = recurse(ref, init, w, memo, known, i - 1, j - 1) + ref[i * w + j];
    const int32_t u = recurse(ref, init, w, memo, known, i - 1, j) - NW_PENALTY;
    const int32_t l = recurse(ref, init, w, memo, known, i, j - 1) - NW_PENALTY;
    memo[i * w + j] = std::max(d, std::max(u, l));
    known[i * w + j] = 1;
  }
  return memo[i * w + j];
}

TEST(RodiniaNw, SetupSizes)
{
  NwRun r(kTestScale);
  ASSERT_EQ(nw_setup(&r.run), 0) << r.run.why;
  EXPECT_EQ(r.st()->w, 512u);
  ASSERT_EQ(r.run.ninputs, 2);
  EXPECT_STREQ(r.run.in[NW_IN_REFERENCE].name, "reference");
  EXPECT_STREQ(r.run.in[NW_IN_ITEMSETS].name, "itemsets");
  EXPECT_EQ(r.run.in[0].size, 512u * 512u * 4u);
  EXPECT_EQ(r.run.in[1].size, 512u * 512u * 4u);
  EXPECT_EQ(nw_dim(1.0), 16384u);
  EXPECT_EQ(nw_dim(0.5), 11584u); /* 16384 / sqrt(2) = 11585.2, down to 32 */
  EXPECT_EQ(nw_dim(kTinyScale), NW_MIN_W);
  EXPECT_EQ(nw_dim(1e-12), NW_MIN_W);
}

TEST(RodiniaNw, Blosum62)
{
  /* symmetric, with a few entries of the published table (ARNDCQEGHILKMFPSTWYV) */
  for (int a = 0; a < NW_AMINO; a++)
    for (int b = 0; b < NW_AMINO; b++)
      EXPECT_EQ(nw_blosum62[a][b], nw_blosum62[b][a]) << a << " " << b;
  EXPECT_EQ(nw_blosum62[0][0], 4);    /* A A */
  EXPECT_EQ(nw_blosum62[4][4], 9);    /* C C */
  EXPECT_EQ(nw_blosum62[17][17], 11); /* W W */
  EXPECT_EQ(nw_blosum62[13][14], -4); /* F P */
  EXPECT_EQ(nw_blosum62[18][8], 2);   /* Y H */
  EXPECT_EQ(nw_blosum62[19][9], 3);   /* V I */
}

TEST(RodiniaNw, GeneratedContent)
{
  NwRun r(kTinyScale);
  r.prepare();
  const uint64_t w = r.st()->w;
  const std::vector<int32_t> &ref = r.in[NW_IN_REFERENCE], &m = r.in[NW_IN_ITEMSETS];
  for (uint64_t i = 0; i < w; i++)
    for (uint64_t j = 0; j < w; j++) {
      const int32_t want_ref =
          i && j ? nw_blosum62[rio_rand(kRioSeed, 0, i) % 20][rio_rand(kRioSeed, 1, j) % 20] : 0;
      const int32_t want_m = i == 0 ? -10 * (int32_t)j : j == 0 ? -10 * (int32_t)i : 0;
      ASSERT_EQ(ref[i * w + j], want_ref) << i << " " << j;
      ASSERT_EQ(m[i * w + j], want_m) << i << " " << j;
    }
}

TEST(RodiniaNw, ReferenceHandChecked)
{
  NwRun r(kTinyScale);
  r.prepare();
  const uint64_t w = r.st()->w;
  /* a hand-made corner: ref rows 1..2, columns 1..2 */
  std::vector<int32_t> &ref = r.in[NW_IN_REFERENCE];
  ref[1 * w + 1] = 4;
  ref[1 * w + 2] = -1;
  ref[2 * w + 1] = 2;
  ref[2 * w + 2] = 9;
  ASSERT_EQ(nw_reference(&r.run), 0) << r.run.why;
  const int32_t *m = r.st()->want;
  EXPECT_EQ(m[0], 0);
  EXPECT_EQ(m[1], -10);
  EXPECT_EQ(m[1 * w], -10);
  /* M11 = max(0 + 4, -10 - 10, -10 - 10) = 4
   * M12 = max(-10 - 1, -20 - 10, 4 - 10) = -6
   * M21 = max(-10 + 2, 4 - 10, -20 - 10) = -6
   * M22 = max(4 + 9, -6 - 10, -6 - 10) = 13 */
  EXPECT_EQ(m[1 * w + 1], 4);
  EXPECT_EQ(m[1 * w + 2], -6);
  EXPECT_EQ(m[2 * w + 1], -6);
  EXPECT_EQ(m[2 * w + 2], 13);
}

TEST(RodiniaNw, ReferenceMatchesRecursion)
{
  NwRun r(kTinyScale);
  r.prepare();
  const uint64_t w = r.st()->w;
  ASSERT_EQ(nw_reference(&r.run), 0) << r.run.why;
  std::vector<int32_t> memo(w * w);
  std::vector<char> known(w * w, 0);
  for (uint64_t j = 0; j < w; j++)
    for (uint64_t i = 0; i < w; i++)
      ASSERT_EQ(r.st()->want[i * w + j],
                recurse(r.in[NW_IN_REFERENCE], r.in[NW_IN_ITEMSETS], w, memo, known, i, j))
          << i << " " << j;
}

TEST(RodiniaNw, VerifyAcceptsReferenceAndNamesAWrongElement)
{
  NwRun r(kTestScale);
  r.prepare();
  const uint64_t w = r.st()->w;
  ASSERT_EQ(nw_reference(&r.run), 0) << r.run.why;
  std::memcpy(r.st()->got, r.st()->want, w * w * sizeof(int32_t));
  ASSERT_EQ(nw_verify(&r.run), 0) << r.run.why;
  r.st()->got[300 * w + 411] += 1;
  EXPECT_EQ(nw_verify(&r.run), -EBADMSG);
  EXPECT_NE(std::string(r.run.why).find("[row 300, col 411]"), std::string::npos) << r.run.why;
}

} // namespace
