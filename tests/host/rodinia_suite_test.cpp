/*
 * rodinia_suite_test.cpp - what every rodinia-io benchmark's host side
 * must do, one table row a benchmark: setup refuses a scale it cannot
 * run, naming it; every input is the same bytes (and checksum) from the
 * same seed, whatever the order the inputs are made in, and other bytes
 * from another seed (the inputs that do not depend on the seed: the same);
 * an input past the last is refused.  Each benchmark's own tests
 * (rodinia_<bench>_test.cpp) check its sizes, contents and reference.
 */
#include <gtest/gtest.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "tests/host/rodinia_run.h"

namespace {

struct RioCase {
  const char *name;
  const rio_fns *fns;
  double scale;               /* a small scale the benchmark runs at */
  std::vector<double> bad;    /* scales setup refuses */
  const char *why;            /* what its message names */
  unsigned seed_free;         /* inputs (bit i) that do not depend on the seed */
};

const RioCase kCases[] = {
    {"hotspot", &kRioHotspot, 1.0 / 1024, {0.0, -1.0, NAN, 1e6}, "scale", 0},
    {"lud", &kRioLud, 1.0 / 4096, {0.0, -1.0}, "lud", 0},
    {"backprop", &kRioBackprop, 1e-6, {0.0, -1.0}, "backprop", 0},
    {"bfs", &kRioBfs, 1.0 / 1024, {0.0, -1.0, 1.0 / 32768}, "bfs", 0},
    {"dwt2d", &kRioDwt2d, 1.0 / 1024, {0.0, -1.0, NAN, 1e6}, "scale", 0},
    {"nw", &kRioNw, 1.0 / 65536, {0.0, -0.5}, "nw", 1u << NW_IN_ITEMSETS},
    {"pathfinder", &kRioPathfinder, 1.0 / 8192, {0.0, -0.5}, "pathfinder", 0},
    {"stencil", &kRioStencil, 1.0 / 1024, {0.0, -1.0, NAN, INFINITY, 8.01, 1e6}, "scale", 0},
    {"2dconv", &kRioConv2d, 1.0 / 1024, {0.0, -1.0, NAN, 1e6}, "scale", 0},
    {"3dconv", &kRioConv3d, 1.0 / 1024, {0.0, -1.0, NAN, INFINITY, 9.0, 1e300}, "scale", 0},
    {"gesummv", &kRioGesummv, 1e-6, {0.0, -1.0, 100.0}, "gesummv", 0},
    {"mvt", &kRioMvt, 1e-6, {0.0, -1.0, 100.0}, "mvt", 0},
    {"bicg", &kRioBicg, 1e-6, {0.0, -1.0, 100.0}, "bicg", 0},
    {"atax", &kRioAtax, 1e-6, {0.0, -1.0, 100.0}, "atax", 0},
};

class RodiniaSuite : public ::testing::TestWithParam<RioCase> {};

TEST_P(RodiniaSuite, SetupRefusesABadScale)
{
  const RioCase &c = GetParam();
  for (double scale : c.bad) {
    RioRunAny r(c.fns, scale, kRioSeed);
    EXPECT_EQ(r.setup(), -EINVAL) << scale;
    EXPECT_NE(std::string(r.run.why).find(c.why), std::string::npos) << scale << ": " << r.run.why;
  }
}

TEST_P(RodiniaSuite, GenerateIsDeterministic)
{
  const RioCase &c = GetParam();
  RioRunAny a(c.fns, c.scale, kRioSeed), b(c.fns, c.scale, kRioSeed), o(c.fns, c.scale, kRioSeed + 1);
  for (RioRunAny *r : {&a, &b, &o})
    ASSERT_EQ(r->setup(), 0) << r->run.why;
  const int n = a.run.ninputs;
  ASSERT_GE(n, 1);
  ASSERT_LE(n, RIO_MAX_INPUTS);
  std::vector<std::vector<uint8_t>> in_a(n), in_b(n);
  /* a in order, b backwards and the first input twice: a generator that
   * builds one input for another (bfs's graph) rebuilds it alike */
  for (int i = 0; i < n; i++)
    in_a[i] = a.generate<uint8_t>(i);
  for (int i = n - 1; i >= 0; i--)
    in_b[i] = b.generate<uint8_t>(i);
  EXPECT_EQ(b.generate<uint8_t>(0), in_b[0]);
  for (int i = 0; i < n; i++) {
    const uint64_t size = a.run.in[i].size;
    ASSERT_EQ(size % 8, 0u) << i;
    EXPECT_EQ(in_a[i], in_b[i]) << "input " << i;
    EXPECT_EQ(rio_checksum(in_a[i].data(), size), rio_checksum(in_b[i].data(), size)) << i;
    const std::vector<uint8_t> other = o.generate<uint8_t>(i);
    if (c.seed_free & (1u << i)) {
      EXPECT_EQ(other, in_a[i]) << "input " << i << " does not depend on the seed";
    } else {
      EXPECT_NE(other, in_a[i]) << "input " << i;
      /* the other seed's input may have another size (bfs's edge count) */
      EXPECT_NE(rio_checksum(other.data(), o.run.in[i].size), rio_checksum(in_a[i].data(), size)) << i;
    }
  }
}

TEST_P(RodiniaSuite, GenerateRefusesAnInputPastTheLast)
{
  const RioCase &c = GetParam();
  RioRunAny r(c.fns, c.scale, kRioSeed);
  ASSERT_EQ(r.setup(), 0) << r.run.why;
  std::vector<uint8_t> buf(r.run.in[0].size);
  EXPECT_EQ(r.fns->generate(&r.run, r.run.ninputs, buf.data()), -EINVAL);
}

std::string case_name(const ::testing::TestParamInfo<RioCase> &info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(Benchmarks, RodiniaSuite, ::testing::ValuesIn(kCases), case_name);

} // namespace
