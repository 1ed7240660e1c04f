/*
 * rodinia_bicg_test.cpp - rodinia-io/bicg's host side: sizes, the
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

TEST(RodiniaBicg, SetupSizes)
{
  BicgRun full(1.0);
  ASSERT_EQ(bicg_setup(&full.run), 0) << full.run.why;
  EXPECT_EQ(full.st()->n, 16384u);
  EXPECT_EQ(full.st()->nout, 2u * 16384);
  ASSERT_EQ(full.run.ninputs, 3);
  EXPECT_STREQ(full.run.in[BICG_IN_A].name, "A");
  EXPECT_EQ(full.run.in[BICG_IN_A].size, 1ull << 30);
  EXPECT_STREQ(full.run.in[BICG_IN_R].name, "r");
  EXPECT_EQ(full.run.in[BICG_IN_R].size, 16384u * 4);
  EXPECT_STREQ(full.run.in[BICG_IN_P].name, "p");
  EXPECT_EQ(full.run.in[BICG_IN_P].size, 16384u * 4);

  BicgRun test(kTestScale);
  ASSERT_EQ(bicg_setup(&test.run), 0) << test.run.why;
  EXPECT_EQ(test.st()->n, 512u);
  EXPECT_EQ(test.run.in[BICG_IN_A].size, 512u * 512 * 4);
  BicgRun tiny(kTinyScale);
  ASSERT_EQ(bicg_setup(&tiny.run), 0) << tiny.run.why;
  EXPECT_EQ(tiny.st()->n, 64u);
}

TEST(RodiniaBicg, GeneratedVectorsDiffer)
{
  BicgRun a(kTinyScale);
  a.prepare();
  EXPECT_NE(0, memcmp(a.in[BICG_IN_R].data(), a.in[BICG_IN_P].data(), 64 * 4));
}

TEST(RodiniaBicg, ReferenceHandChecked)
{
  BicgRun r(kTinyScale);
  r.prepare();
  std::vector<float> &a = r.in[BICG_IN_A], &rv = r.in[BICG_IN_R], &p = r.in[BICG_IN_P];
  std::fill(a.begin(), a.end(), 0.0f);
  a[0 * 64 + 0] = 1;
  a[0 * 64 + 5] = 2;
  a[3 * 64 + 5] = 4;
  a[63 * 64 + 63] = 0.5f;
  for (int i = 0; i < 64; i++) {
    p[i] = (float)i;
    rv[i] = (float)(i + 1);
  }
  ASSERT_EQ(bicg_reference(&r.run), 0) << r.run.why;
  const float *q = r.st()->want, *s = r.st()->want + 64;
  for (int i = 0; i < 64; i++) {
    EXPECT_EQ(q[i], i == 0 ? 10.0f : i == 3 ? 20.0f : i == 63 ? 31.5f : 0.0f) << i; /* q = A p */
    EXPECT_EQ(s[i], i == 0 ? 1.0f : i == 5 ? 18.0f : i == 63 ? 32.0f : 0.0f) << i;  /* s = A^T r */
  }
}

TEST(RodiniaBicg, ReferenceMatchesNaiveSums)
{
  BicgRun r(kTestScale);
  r.prepare();
  ASSERT_EQ(bicg_reference(&r.run), 0) << r.run.why;
  const uint64_t n = r.st()->n;
  const std::vector<float> &a = r.in[BICG_IN_A], &rv = r.in[BICG_IN_R], &p = r.in[BICG_IN_P];
  for (uint64_t i = 0; i < n; i++) {
    long double q = 0, s = 0;
    for (uint64_t j = 0; j < n; j++) {
      q += (long double)a[i * n + j] * p[j];
      s += (long double)a[j * n + i] * rv[j];
    }
    ASSERT_NEAR(r.st()->want[i], (double)q, 1e-6 * (double)q) << i;
    ASSERT_NEAR(r.st()->want[n + i], (double)s, 1e-6 * (double)s) << i;
  }
}

TEST(RodiniaBicg, VerifyAcceptsReferenceAndNamesAChange)
{
  BicgRun r(kTestScale);
  r.prepare();
  ASSERT_EQ(bicg_reference(&r.run), 0) << r.run.why;
  matvec_state *st = r.st();
  const uint64_t n = st->n;
  memcpy(st->got, st->want, st->nout * sizeof(float));
  EXPECT_EQ(bicg_verify(&r.run), 0) << r.run.why;
  st->got[n + 7] *= 1.001f; /* 0.1 %: twice the tolerance */
  EXPECT_EQ(bicg_verify(&r.run), -EBADMSG);
  EXPECT_NE(std::string(r.run.why).find("s[7]"), std::string::npos) << r.run.why;
  memcpy(st->got, st->want, st->nout * sizeof(float));
  st->got[n - 1] = NAN;
  EXPECT_EQ(bicg_verify(&r.run), -EBADMSG);
  EXPECT_NE(std::string(r.run.why).find("q[511]"), std::string::npos) << r.run.why;
}

} // namespace
