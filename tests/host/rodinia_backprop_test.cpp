/*
 * rodinia_backprop_test.cpp - rodinia-io/backprop's host side: sizes, the
 * generator, the CPU reference (hand-checked units, and a naive step on
 * generated inputs), and verify (the reference passes, one changed element
 * is named, and a step summed in the GPU's float order passes the derived
 * tolerance).
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

constexpr double kMinScale = 1e-6;        /* n = 1024, the least: one chunk */
constexpr double kTestScale = 1.0 / 1024; /* n = 22528: two chunks */

/* the reference's result as the run's */
void got_is_want(BackpropRun &r)
{
  const uint64_t cells = r.st()->rows * BACKPROP_COLS;
  r.st()->got = r.st()->want;
  memcpy(r.st()->got_w, r.st()->want_w, cells * sizeof(float));
  memcpy(r.st()->got_prev, r.st()->want_prev, cells * sizeof(float));
}

double squash(double x) { return 1.0 / (1.0 + std::exp(-x)); }

TEST(RodiniaBackprop, SetupSizes)
{
  BackpropRun r(kTestScale);
  ASSERT_EQ(backprop_setup(&r.run), 0) << r.run.why;
  EXPECT_EQ(r.st()->n, 22528u);
  EXPECT_EQ(r.st()->rows, 22529u);
  EXPECT_EQ(r.st()->nchunks, 2u);
  ASSERT_EQ(r.run.ninputs, 3);
  EXPECT_STREQ(r.run.in[0].name, "input");
  EXPECT_EQ(r.run.in[0].size, 4u * 22530);
  EXPECT_STREQ(r.run.in[1].name, "weights");
  EXPECT_EQ(r.run.in[1].size, 4u * (22529 * 17 + 1));
  EXPECT_STREQ(r.run.in[2].name, "prev_weights");
  EXPECT_EQ(r.run.in[2].size, r.run.in[1].size);
  EXPECT_DOUBLE_EQ(r.st()->wbound, 3.0 / std::sqrt(22529.0));

  BackpropRun tiny(kMinScale);
  ASSERT_EQ(backprop_setup(&tiny.run), 0) << tiny.run.why;
  EXPECT_EQ(tiny.st()->n, 1024u);
  EXPECT_EQ(tiny.st()->nchunks, 1u);
  EXPECT_EQ(tiny.run.in[1].size % 8, 0u);
  /* scale 1: 22 Mi units, 3.23 GB of inputs (arithmetic only: setup would
   * reserve 6 GB of result buffers) */
  EXPECT_EQ(BACKPROP_FULL_N, 23068672u);
  EXPECT_NEAR(4.0 * ((BACKPROP_FULL_N + 2) + 2 * ((BACKPROP_FULL_N + 1) * 17 + 1)), 3.23e9, 0.01e9);
}

TEST(RodiniaBackprop, GeneratedInRange)
{
  BackpropRun a(kMinScale), c(kMinScale, kRioSeed + 1);
  a.prepare();
  c.prepare();
  EXPECT_NE(0, memcmp(a.st()->w2, c.st()->w2, sizeof(a.st()->w2)));
  const uint64_t rows = a.st()->rows, cells = rows * 17;
  const double wb = a.st()->wbound;
  EXPECT_EQ(a.in[0][0], 1.0f) << "the bias unit";
  for (uint64_t i = 1; i < rows; i++)
    ASSERT_TRUE(a.in[0][i] >= 0.0f && a.in[0][i] <= 1.0f) << i;
  EXPECT_EQ(a.in[0][rows], 0.0f) << "padding";
  for (uint64_t e = 0; e < cells; e++) {
    ASSERT_LE(std::fabs(a.in[1][e]), wb) << e;
    ASSERT_LE(std::fabs(a.in[2][e]), wb / 10) << e;
  }
  EXPECT_EQ(a.in[1][cells], 0.0f);
  EXPECT_EQ(a.in[2][cells], 0.0f);
}

TEST(RodiniaBackprop, ReferenceHandChecked)
{
  BackpropRun r(kMinScale);
  r.prepare();
  backprop_state *st = r.st();
  const uint64_t rows = st->rows;
  /* every weight and previous change 0, except w[3][5] = 2 with in[3] = 0.5:
   * S_5 = 1, every other S_j = 0 */
  std::fill(r.in[1].begin(), r.in[1].end(), 0.0f);
  std::fill(r.in[2].begin(), r.in[2].end(), 0.0f);
  r.in[0][3] = 0.5f;
  r.in[1][3 * 17 + 5] = 2.0f;
  ASSERT_EQ(backprop_reference(&r.run), 0) << r.run.why;

  const backprop_units &u = st->want;
  EXPECT_EQ(u.hidden[0], 1.0f);
  EXPECT_FLOAT_EQ(u.hidden[5], 0.7310585786f); /* 1 / (1 + e^-1) */
  for (int j = 1; j < 17; j++) {
    if (j != 5) {
      EXPECT_EQ(u.hidden[j], 0.5f) << j;
    }
  }
  double z = st->w2[0];
  for (int j = 1; j < 17; j++)
    z += st->w2[j] * (j == 5 ? squash(1.0) : 0.5);
  const double o = squash(z), d_o = o * (1 - o) * (0.1 - o);
  EXPECT_FLOAT_EQ(u.output, (float)o);
  EXPECT_FLOAT_EQ(u.out_delta, (float)d_o);
  EXPECT_EQ(u.hid_delta[0], 0.0f);
  EXPECT_FLOAT_EQ(u.hid_delta[1], (float)(0.25 * st->w2[1] * d_o));
  EXPECT_FLOAT_EQ(u.hid_delta[5], (float)(squash(1.0) * (1 - squash(1.0)) * st->w2[5] * d_o));
  /* with prev 0: dw = 0.3 delta_j in_i; the bias row moves by 0.3 delta_j */
  EXPECT_FLOAT_EQ(st->want_w[0 * 17 + 2], 0.3f * u.hid_delta[2]);
  EXPECT_FLOAT_EQ(st->want_prev[0 * 17 + 2], 0.3f * u.hid_delta[2]);
  EXPECT_FLOAT_EQ(st->want_w[3 * 17 + 5], 2.0f + 0.3f * u.hid_delta[5] * 0.5f);
  EXPECT_FLOAT_EQ(st->want_w[7 * 17 + 9], 0.3f * u.hid_delta[9] * r.in[0][7]);
  for (uint64_t i = 0; i < rows; i++)
    ASSERT_EQ(st->want_w[i * 17], 0.0f) << "column 0 is not adjusted";
}

TEST(RodiniaBackprop, ReferenceMatchesNaiveStep)
{
  BackpropRun r(kTestScale);
  r.prepare();
  ASSERT_EQ(backprop_reference(&r.run), 0) << r.run.why;
  const backprop_state *st = r.st();
  const uint64_t rows = st->rows;
  const std::vector<float> &in = r.in[0], &w = r.in[1], &prev = r.in[2];

  double h[17] = {1.0}, z = st->w2[0];
  for (int j = 1; j < 17; j++) {
    long double s = 0;
    for (uint64_t i = 0; i < rows; i++)
      s += (long double)w[i * 17 + j] * in[i];
    h[j] = squash((double)s);
    z += st->w2[j] * h[j];
    EXPECT_NEAR(st->want.hidden[j], h[j], 1e-7) << j;
  }
  const double o = squash(z), d_o = o * (1 - o) * (0.1 - o);
  EXPECT_NEAR(st->want.output, o, 1e-7);
  EXPECT_NEAR(st->want.out_delta, d_o, 1e-8);
  float delta[17] = {0};
  for (int j = 1; j < 17; j++) {
    delta[j] = (float)(h[j] * (1 - h[j]) * st->w2[j] * d_o);
    EXPECT_NEAR(st->want.hid_delta[j], delta[j], 1e-8) << j;
  }
  for (uint64_t i = 0; i < rows; i++)
    for (int j = 0; j < 17; j++) {
      const uint64_t e = i * 17 + j;
      const double dw = j ? 0.3 * delta[j] * in[i] + 0.3 * prev[e] : 0.0;
      ASSERT_NEAR(st->want_w[e], j ? w[e] + dw : w[e], 1e-8) << i << "," << j;
      ASSERT_NEAR(st->want_prev[e], j ? dw : prev[e], 1e-8) << i << "," << j;
    }
}

TEST(RodiniaBackprop, VerifyAcceptsReferenceAndNamesAChange)
{
  BackpropRun r(kTestScale);
  r.prepare();
  ASSERT_EQ(backprop_reference(&r.run), 0) << r.run.why;
  backprop_state *st = r.st();
  got_is_want(r);
  EXPECT_EQ(backprop_verify(&r.run), 0) << r.run.why;

  st->got_w[7 * 17 + 3] += 0.01f;
  EXPECT_EQ(backprop_verify(&r.run), -EBADMSG);
  EXPECT_NE(std::string(r.run.why).find("weights[row 7, col 3]"), std::string::npos) << r.run.why;

  got_is_want(r);
  st->got_prev[(st->rows - 1) * 17 + 16] = -st->got_prev[(st->rows - 1) * 17 + 16] + 0.01f;
  EXPECT_EQ(backprop_verify(&r.run), -EBADMSG);
  EXPECT_NE(std::string(r.run.why).find("prev_weights[row 22528, col 16]"), std::string::npos) << r.run.why;

  got_is_want(r);
  st->got.hidden[4] += 0.1f;
  EXPECT_EQ(backprop_verify(&r.run), -EBADMSG);
  EXPECT_NE(std::string(r.run.why).find("hidden[4]"), std::string::npos) << r.run.why;

  got_is_want(r);
  st->got.hid_delta[9] = NAN;
  EXPECT_EQ(backprop_verify(&r.run), -EBADMSG);
  EXPECT_NE(std::string(r.run.why).find("hid_delta[9]"), std::string::npos) << r.run.why;
}

/*
 * The GPU's step emulated on the host in its float order (backprop.cu:
 * thread t of a 512-thread block sums rows t, t + 512, ... of its chunk
 * with fmaf, the warps reduce by xor shuffles, lane 0's sum goes on in
 * double; the adjustment in float with fmaf): verify must accept it.
 */
TEST(RodiniaBackprop, VerifyAcceptsTheGpuOrder)
{
  BackpropRun r(kTestScale);
  r.prepare();
  ASSERT_EQ(backprop_reference(&r.run), 0) << r.run.why;
  backprop_state *st = r.st();
  const std::vector<float> &in = r.in[0], &w = r.in[1], &prev = r.in[2];
  const uint64_t rows = st->rows;
  double sum[17] = {0};
  for (uint64_t c = 0; c < st->nchunks; c++) {
    const uint64_t lo = c * BACKPROP_CHUNK_ROWS;
    const uint64_t hi = std::min<uint64_t>(rows, lo + BACKPROP_CHUNK_ROWS);
    for (int j = 1; j < 17; j++) {
      float s[BACKPROP_THREADS] = {0};
      for (uint64_t i = lo; i < hi; i++)
        s[(i - lo) % BACKPROP_THREADS] = fmaf(w[i * 17 + j], in[i], s[(i - lo) % BACKPROP_THREADS]);
      double chunk = 0;
      for (int wp = 0; wp < BACKPROP_THREADS / 32; wp++) {
        float lane[32];
        memcpy(lane, s + 32 * wp, sizeof(lane));
        for (int o = 16; o > 0; o >>= 1) {
          float next[32];
          for (int l = 0; l < 32; l++)
            next[l] = lane[l] + lane[l ^ o];
          memcpy(lane, next, sizeof(lane));
        }
        chunk += lane[0];
      }
      sum[j] += chunk;
    }
  }
  backprop_backward(sum, st->w2, &st->got);
  for (uint64_t i = 0; i < rows; i++)
    for (int j = 0; j < 17; j++) {
      const uint64_t e = i * 17 + j;
      float nw = w[e], np = prev[e];
      if (j) {
        np = fmaf(0.3f * st->got.hid_delta[j], in[i], 0.3f * prev[e]);
        nw = w[e] + np;
      }
      st->got_w[e] = nw;
      st->got_prev[e] = np;
    }
  EXPECT_EQ(backprop_verify(&r.run), 0) << r.run.why;
}

} // namespace
