/*
 * rodinia_atax_test.cpp - rodinia-io/atax's host side: sizes, the
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

TEST(RodiniaAtax, SetupSizes)
{
  AtaxRun full(1.0);
  ASSERT_EQ(atax_setup(&full.run), 0) << full.run.why;
  EXPECT_EQ(full.st()->n, 16384u);
  EXPECT_EQ(full.st()->nout, 2u * 16384);
  ASSERT_EQ(full.run.ninputs, 2);
  EXPECT_STREQ(full.run.in[ATAX_IN_A].name, "A");
  EXPECT_EQ(full.run.in[ATAX_IN_A].size, 1ull << 30);
  EXPECT_STREQ(full.run.in[ATAX_IN_X].name, "x");
  EXPECT_EQ(full.run.in[ATAX_IN_X].size, 16384u * 4);

  AtaxRun test(kTestScale);
  ASSERT_EQ(atax_setup(&test.run), 0) << test.run.why;
  EXPECT_EQ(test.st()->n, 512u);
  EXPECT_EQ(test.run.in[ATAX_IN_A].size, 512u * 512 * 4);
  AtaxRun tiny(kTinyScale);
  ASSERT_EQ(atax_setup(&tiny.run), 0) << tiny.run.why;
  EXPECT_EQ(tiny.st()->n, 64u);
}

TEST(RodiniaAtax, ReferenceHandChecked)
{
  AtaxRun r(kTinyScale);
  r.prepare();
  std::vector<float> &a = r.in[ATAX_IN_A], &x = r.in[ATAX_IN_X];
  std::fill(a.begin(), a.end(), 0.0f);
  a[0 * 64 + 0] = 1;
  a[0 * 64 + 5] = 2;
  a[3 * 64 + 5] = 4;
  a[63 * 64 + 63] = 0.5f;
  for (int i = 0; i < 64; i++)
    x[i] = (float)i;
  ASSERT_EQ(atax_reference(&r.run), 0) << r.run.why;
  const float *tmp = r.st()->want, *y = r.st()->want + 64;
  for (int i = 0; i < 64; i++) {
    /* tmp = A x: row 0 = 0 + 2 * 5, row 3 = 4 * 5, row 63 = 0.5 * 63 */
    EXPECT_EQ(tmp[i], i == 0 ? 10.0f : i == 3 ? 20.0f : i == 63 ? 31.5f : 0.0f) << i;
    /* y = A^T tmp: column 0 = 10 * 1, column 5 = 10 * 2 + 20 * 4, column 63 = 31.5 * 0.5 */
    EXPECT_EQ(y[i], i == 0 ? 10.0f : i == 5 ? 100.0f : i == 63 ? 15.75f : 0.0f) << i;
  }
}

TEST(RodiniaAtax, ReferenceMatchesNaiveSums)
{
  AtaxRun r(kTestScale);
  r.prepare();
  ASSERT_EQ(atax_reference(&r.run), 0) << r.run.why;
  const uint64_t n = r.st()->n;
  const std::vector<float> &a = r.in[ATAX_IN_A], &x = r.in[ATAX_IN_X];
  std::vector<long double> tmp(n, 0.0L);
  for (uint64_t i = 0; i < n; i++) {
    for (uint64_t j = 0; j < n; j++)
      tmp[i] += (long double)a[i * n + j] * x[j];
    ASSERT_NEAR(r.st()->want[i], (double)tmp[i], 1e-6 * (double)tmp[i]) << i;
  }
  for (uint64_t j = 0; j < n; j++) {
    long double y = 0;
    for (uint64_t i = 0; i < n; i++)
      y += tmp[i] * a[i * n + j];
    ASSERT_NEAR(r.st()->want[n + j], (double)y, 1e-6 * (double)y) << j;
  }
}

TEST(RodiniaAtax, VerifyAcceptsReferenceAndNamesAChange)
{
  AtaxRun r(kTestScale);
  r.prepare();
  ASSERT_EQ(atax_reference(&r.run), 0) << r.run.why;
  matvec_state *st = r.st();
  const uint64_t n = st->n;
  memcpy(st->got, st->want, st->nout * sizeof(float));
  EXPECT_EQ(atax_verify(&r.run), 0) << r.run.why;
  st->got[n + 511] *= 1.001f; /* 0.1 %: twice the tolerance */
  EXPECT_EQ(atax_verify(&r.run), -EBADMSG);
  EXPECT_NE(std::string(r.run.why).find("y[511]"), std::string::npos) << r.run.why;
  memcpy(st->got, st->want, st->nout * sizeof(float));
  st->got[42] = 0.0f;
  EXPECT_EQ(atax_verify(&r.run), -EBADMSG);
  EXPECT_NE(std::string(r.run.why).find("tmp[42]"), std::string::npos) << r.run.why;
}

} // namespace
