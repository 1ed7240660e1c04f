/*
 * rodinia_mvt_test.cpp - rodinia-io/mvt's host side: sizes, the
 * generator, the CPU reference (hand-checked, and against naive sums on
 * generated inputs), and verify (the reference passes, one changed element
 * is named, a bad scale is refused).
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "tests/host/rodinia_run.h"

namespace {

constexpr double kTinyScale = 1e-6;       /* n = 64 */
constexpr double kTestScale = 1.0 / 1024; /* n = 512 */

TEST(RodiniaMvt, SetupSizes)
{
  MvtRun full(1.0);
  ASSERT_EQ(mvt_setup(&full.run), 0) << full.run.why;
  EXPECT_EQ(full.st()->n, 16384u);
  EXPECT_EQ(full.st()->nout, 2u * 16384);
  ASSERT_EQ(full.run.ninputs, 3);
  EXPECT_STREQ(full.run.in[MVT_IN_A].name, "A");
  EXPECT_EQ(full.run.in[MVT_IN_A].size, 1ull << 30);
  EXPECT_STREQ(full.run.in[MVT_IN_Y].name, "y");
  EXPECT_EQ(full.run.in[MVT_IN_Y].size, 2u * 16384 * 4);
  EXPECT_STREQ(full.run.in[MVT_IN_X].name, "x");
  EXPECT_EQ(full.run.in[MVT_IN_X].size, 2u * 16384 * 4);

  MvtRun test(kTestScale);
  ASSERT_EQ(mvt_setup(&test.run), 0) << test.run.why;
  EXPECT_EQ(test.st()->n, 512u);
  EXPECT_EQ(test.run.in[MVT_IN_A].size, 512u * 512 * 4);
  MvtRun tiny(kTinyScale);
  ASSERT_EQ(mvt_setup(&tiny.run), 0) << tiny.run.why;
  EXPECT_EQ(tiny.st()->n, 64u);
}

TEST(RodiniaMvt, GeneratedVectorsDiffer)
{
  MvtRun a(kTinyScale);
  a.prepare();
  EXPECT_NE(0, memcmp(a.in[MVT_IN_Y].data(), a.in[MVT_IN_Y].data() + 64, 64 * 4)) << "y1 and y2";
}

TEST(RodiniaMvt, ReferenceHandChecked)
{
  MvtRun r(kTinyScale);
  r.prepare();
  std::vector<float> &a = r.in[MVT_IN_A], &y = r.in[MVT_IN_Y], &x = r.in[MVT_IN_X];
  std::fill(a.begin(), a.end(), 0.0f);
  a[0 * 64 + 0] = 1;
  a[0 * 64 + 5] = 2;
  a[3 * 64 + 5] = 4;
  a[63 * 64 + 63] = 0.5f;
  for (int i = 0; i < 64; i++) {
    y[i] = (float)i;            /* y1 */
    y[64 + i] = (float)(i + 1); /* y2 */
    x[i] = 1000.0f;             /* x1 */
    x[64 + i] = -1.0f;          /* x2 */
  }
  ASSERT_EQ(mvt_reference(&r.run), 0) << r.run.why;
  const float *x1 = r.st()->want, *x2 = r.st()->want + 64;
  for (int i = 0; i < 64; i++) {
    EXPECT_EQ(x1[i], 1000.0f + (i == 0 ? 10.0f : i == 3 ? 20.0f : i == 63 ? 31.5f : 0.0f)) << i; /* + A y1 */
    EXPECT_EQ(x2[i], -1.0f + (i == 0 ? 1.0f : i == 5 ? 18.0f : i == 63 ? 32.0f : 0.0f)) << i;    /* + A^T y2 */
  }
}

TEST(RodiniaMvt, ReferenceMatchesNaiveSums)
{
  MvtRun r(kTestScale);
  r.prepare();
  ASSERT_EQ(mvt_reference(&r.run), 0) << r.run.why;
  const uint64_t n = r.st()->n;
  const std::vector<float> &a = r.in[MVT_IN_A], &y = r.in[MVT_IN_Y], &x = r.in[MVT_IN_X];
  for (uint64_t i = 0; i < n; i++) {
    long double x1 = x[i], x2 = x[n + i];
    for (uint64_t j = 0; j < n; j++) {
      x1 += (long double)a[i * n + j] * y[j];
      x2 += (long double)a[j * n + i] * y[n + j];
    }
    ASSERT_NEAR(r.st()->want[i], (double)x1, 1e-6 * (double)x1) << i;
    ASSERT_NEAR(r.st()->want[n + i], (double)x2, 1e-6 * (double)x2) << i;
  }
}

TEST(RodiniaMvt, VerifyAcceptsReferenceAndNamesAChange)
{
  MvtRun r(kTestScale);
  r.prepare();
  ASSERT_EQ(mvt_reference(&r.run), 0) << r.run.why;
  matvec_state *st = r.st();
  const uint64_t n = st->n;
  memcpy(st->got, st->want, st->nout * sizeof(float));
  EXPECT_EQ(mvt_verify(&r.run), 0) << r.run.why;
  st->got[n + 300] *= 0.999f; /* 0.1 %: twice the tolerance */
  EXPECT_EQ(mvt_verify(&r.run), -EBADMSG);
  EXPECT_NE(std::string(r.run.why).find("x2[300]"), std::string::npos) << r.run.why;
  memcpy(st->got, st->want, st->nout * sizeof(float));
  st->got[0] = -st->got[0];
  EXPECT_EQ(mvt_verify(&r.run), -EBADMSG);
  EXPECT_NE(std::string(r.run.why).find("x1[0]"), std::string::npos) << r.run.why;
}

} // namespace
