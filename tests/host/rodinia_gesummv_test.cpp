/*
 * rodinia_gesummv_test.cpp - rodinia-io/gesummv's host side: sizes, the
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
constexpr double kTestScale = 1.0 / 1024; /* n = 320 (362 rounded down to a multiple of 64) */

TEST(RodiniaGesummv, SetupSizes)
{
  GesummvRun full(1.0);
  ASSERT_EQ(gesummv_setup(&full.run), 0) << full.run.why;
  EXPECT_EQ(full.st()->n, 11584u);
  EXPECT_EQ(full.st()->nout, 11584u);
  ASSERT_EQ(full.run.ninputs, 3);
  EXPECT_STREQ(full.run.in[GESUMMV_IN_A].name, "A");
  EXPECT_EQ(full.run.in[GESUMMV_IN_A].size, 11584ull * 11584 * 4);
  EXPECT_STREQ(full.run.in[GESUMMV_IN_B].name, "B");
  EXPECT_EQ(full.run.in[GESUMMV_IN_B].size, 11584ull * 11584 * 4);
  EXPECT_NEAR(2.0 * full.run.in[GESUMMV_IN_A].size, 1.07e9, 0.01e9);
  EXPECT_STREQ(full.run.in[GESUMMV_IN_X].name, "x");
  EXPECT_EQ(full.run.in[GESUMMV_IN_X].size, 11584u * 4);

  GesummvRun test(kTestScale);
  ASSERT_EQ(gesummv_setup(&test.run), 0) << test.run.why;
  EXPECT_EQ(test.st()->n, 320u);
  GesummvRun tiny(kTinyScale);
  ASSERT_EQ(gesummv_setup(&tiny.run), 0) << tiny.run.why;
  EXPECT_EQ(tiny.st()->n, 64u);
}

TEST(RodiniaGesummv, GeneratedMatricesDiffer)
{
  GesummvRun a(kTinyScale);
  a.prepare();
  EXPECT_NE(0, memcmp(a.in[GESUMMV_IN_A].data(), a.in[GESUMMV_IN_B].data(), 64 * 64 * 4)) << "A and B";
}

TEST(RodiniaGesummv, ReferenceHandChecked)
{
  GesummvRun r(kTinyScale);
  r.prepare();
  std::vector<float> &a = r.in[GESUMMV_IN_A], &b = r.in[GESUMMV_IN_B], &x = r.in[GESUMMV_IN_X];
  std::fill(a.begin(), a.end(), 0.0f);
  std::fill(b.begin(), b.end(), 0.0f);
  a[0 * 64 + 0] = 1;
  a[0 * 64 + 5] = 2;
  a[3 * 64 + 5] = 4;
  a[63 * 64 + 63] = 0.5f;
  b[1 * 64 + 2] = 3;
  b[0 * 64 + 5] = 1;
  for (int i = 0; i < 64; i++)
    x[i] = (float)i;
  ASSERT_EQ(gesummv_reference(&r.run), 0) << r.run.why;
  /* A x = 10 at 0, 20 at 3, 31.5 at 63; B x = 5 at 0, 6 at 1 */
  const float *y = r.st()->want;
  EXPECT_EQ(y[0], 43532.0f * 10 + 12313.0f * 5);
  EXPECT_EQ(y[1], 12313.0f * 6);
  EXPECT_EQ(y[3], 43532.0f * 20);
  EXPECT_EQ(y[63], 43532.0f * 31.5f);
  for (int i = 0; i < 64; i++) {
    if (i != 0 && i != 1 && i != 3 && i != 63) {
      EXPECT_EQ(y[i], 0.0f) << i;
    }
  }
}

TEST(RodiniaGesummv, ReferenceMatchesNaiveSums)
{
  GesummvRun r(kTestScale);
  r.prepare();
  ASSERT_EQ(gesummv_reference(&r.run), 0) << r.run.why;
  const uint64_t n = r.st()->n;
  const std::vector<float> &a = r.in[GESUMMV_IN_A], &b = r.in[GESUMMV_IN_B], &x = r.in[GESUMMV_IN_X];
  for (uint64_t i = 0; i < n; i++) {
    long double ax = 0, bx = 0;
    for (uint64_t j = 0; j < n; j++) {
      ax += (long double)a[i * n + j] * x[j];
      bx += (long double)b[i * n + j] * x[j];
    }
    const long double y = 43532.0L * ax + 12313.0L * bx;
    ASSERT_NEAR(r.st()->want[i], (double)y, 1e-6 * (double)y) << i;
  }
}

TEST(RodiniaGesummv, VerifyAcceptsReferenceAndNamesAChange)
{
  GesummvRun r(kTestScale);
  r.prepare();
  ASSERT_EQ(gesummv_reference(&r.run), 0) << r.run.why;
  matvec_state *st = r.st();
  memcpy(st->got, st->want, st->nout * sizeof(float));
  EXPECT_EQ(gesummv_verify(&r.run), 0) << r.run.why;
  st->got[123] *= 1.001f; /* 0.1 %: twice the tolerance */
  EXPECT_EQ(gesummv_verify(&r.run), -EBADMSG);
  EXPECT_NE(std::string(r.run.why).find("y[123]"), std::string::npos) << r.run.why;
  st->got[123] = st->want[123] * 1.0004f; /* 0.04 %: inside */
  EXPECT_EQ(gesummv_verify(&r.run), 0) << r.run.why;
}

} // namespace
