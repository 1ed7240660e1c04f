/*
 * graph_service_update_test.cpp - graphs/update.c, the updated-graph
 * service's writer: the runs a round chooses (the share of the edges
 * exactly, contiguous, disjoint, inside the section, the same for the
 * same round and different for others), what it refuses, the weights it
 * writes (every byte of the file compared), the span of a plan; and
 * graph_service's command line (graphs/service_opts.c).
 */
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <string>
#include <vector>

#include "graphs/service_run.h"
#include "graphs/update.h"
#include "tests/host/graph_util.h"

namespace {

graph_update_plan choose(uint64_t m, double share, uint32_t runs, uint64_t round, int *rc = nullptr)
{
  graph_update_plan p;
  graph_update_spec s = {m, share, runs, 7};
  const int r = graph_update_choose(&s, round, &p);
  if (rc)
    *rc = r;
  else
    EXPECT_EQ(0, r);
  return p;
}

/* Runs ascending, disjoint, inside [0, m), one per stratum, adding up. */
void expect_well_formed(const graph_update_plan &p, uint64_t m, uint32_t runs, uint64_t want)
{
  uint64_t total = 0, end = 0;
  ASSERT_EQ(std::min<uint64_t>(runs, want), p.nruns);
  for (uint32_t i = 0; i < p.nruns; i++) {
    const uint64_t a = m * i / p.nruns, b = m * (i + 1) / p.nruns;
    EXPECT_GE(p.run[i].first, a) << "run " << i;
    EXPECT_LE(p.run[i].first + p.run[i].count, b) << "run " << i;
    EXPECT_GE(p.run[i].first, end) << "run " << i;
    end = p.run[i].first + p.run[i].count;
    total += p.run[i].count;
  }
  EXPECT_EQ(want, total);
  EXPECT_EQ(want, p.total);
}

TEST(GraphServiceUpdate, EveryShareIsExactAndWellFormed)
{
  for (uint64_t m : {1ull, 7ull, 100ull, 4099ull, 1000003ull})
    for (double share : {1.0, 10.0, 25.0, 50.0, 75.0, 100.0, 0.001})
      for (uint32_t runs : {1u, 3u, 64u, 1024u}) {
        SCOPED_TRACE(::testing::Message() << "m " << m << " share " << share << " runs " << runs);
        uint64_t want = (uint64_t)llround((double)m * share / 100.0);
        want = want < 1 ? 1 : want;
        for (uint64_t round = 1; round <= 3; round++)
          expect_well_formed(choose(m, share, runs, round), m, runs, want);
      }
}

TEST(GraphServiceUpdate, SmallCasesNeverOverflowTheirStratum)
{
  /* every m, k and runs up to 80: the rounding that keeps a run inside its stratum */
  for (uint64_t m = 1; m <= 80; m++)
    for (uint64_t k = 1; k <= m; k++)
      for (uint32_t runs = 1; runs <= k; runs += 3) {
        SCOPED_TRACE(::testing::Message() << "m " << m << " k " << k << " runs " << runs);
        const graph_update_plan p = choose(m, 100.0 * (double)k / (double)m, runs, 5);
        expect_well_formed(p, m, runs, k);
      }
}

TEST(GraphServiceUpdate, SameRoundSameRunsOtherRoundsMove)
{
  const graph_update_plan a = choose(1 << 20, 10, 4, 3), b = choose(1 << 20, 10, 4, 3);
  for (uint32_t i = 0; i < a.nruns; i++) {
    EXPECT_EQ(a.run[i].first, b.run[i].first);
    EXPECT_EQ(a.run[i].count, b.run[i].count);
  }
  int moved = 0;
  for (uint64_t round = 4; round < 12; round++)
    moved += choose(1 << 20, 10, 4, round).run[0].first != a.run[0].first;
  EXPECT_GE(moved, 7);
  /* the whole section: one run from 0 whatever the round */
  const graph_update_plan all = choose(1000, 100, 1, 9);
  EXPECT_EQ(0u, all.run[0].first);
  EXPECT_EQ(1000u, all.run[0].count);
}

TEST(GraphServiceUpdate, RefusesBadSpecs)
{
  int rc;
  for (double share : {0.0, -1.0, 100.5, (double)NAN}) {
    choose(100, share, 1, 1, &rc);
    EXPECT_EQ(-EINVAL, rc) << share;
  }
  choose(100, 10, 0, 1, &rc);
  EXPECT_EQ(-EINVAL, rc);
  choose(100, 10, GRAPH_UPDATE_MAX_RUNS + 1, 1, &rc);
  EXPECT_EQ(-EINVAL, rc);
  choose(0, 10, 1, 1, &rc);
  EXPECT_EQ(-EINVAL, rc);
}

TEST(GraphServiceUpdate, WritesTheRunsWeightsAndNothingElse)
{
  GraphDir d;
  const std::string path = d.file("w.bin");
  const uint64_t off = 4096, m = 50000;
  std::vector<uint32_t> file(off / 4 + m + 100, 0xdeadbeefu);
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ((ssize_t)(file.size() * 4), pwrite(fd, file.data(), file.size() * 4, 0));
  const graph_update_plan p = choose(m, 25, 5, 2);
  ASSERT_EQ(0, graph_update_apply(fd, off, &p, 7, 2));
  for (uint32_t i = 0; i < p.nruns; i++)
    for (uint64_t e = p.run[i].first; e < p.run[i].first + p.run[i].count; e++)
      file[off / 4 + e] = graph_update_weight(7, 2, e);
  std::vector<uint32_t> got(file.size());
  ASSERT_EQ((ssize_t)(got.size() * 4), pread(fd, got.data(), got.size() * 4, 0));
  close(fd);
  EXPECT_EQ(file, got);
  for (uint64_t e = 0; e < 1000; e++) {
    const uint32_t w = graph_update_weight(7, 2, e);
    EXPECT_TRUE(w >= 1 && w <= 255) << w;
  }
  EXPECT_EQ(-EBADF, graph_update_apply(-1, off, &p, 7, 2));
}

TEST(GraphServiceUpdate, SpanCoversFirstToLastRun)
{
  const graph_update_plan p = choose(100000, 10, 8, 1);
  uint64_t o, len;
  graph_update_span(&p, 8192, &o, &len);
  EXPECT_EQ(8192 + 4 * p.run[0].first, o);
  EXPECT_EQ(8192 + 4 * (p.run[7].first + p.run[7].count), o + len);
}

int parse(std::vector<const char *> args, graph_svc_options *o, std::string *err)
{
  char buf[256] = "";
  std::vector<char *> argv{(char *)"graph_service"};
  for (const char *a : args)
    argv.push_back((char *)a);
  const int rc = graph_svc_parse((int)argv.size(), argv.data(), o, buf, sizeof(buf));
  *err = buf;
  return rc;
}

TEST(GraphServiceOptions, DefaultsQuickAndRefusals)
{
  graph_svc_options o;
  std::string err;
  ASSERT_EQ(0, parse({}, &o, &err)) << err;
  EXPECT_EQ(24u, o.gen.size);
  EXPECT_EQ(100, o.rounds);
  EXPECT_EQ(6, o.nshares);
  EXPECT_EQ(GRAPH_SVC_NVERSIONS, o.nversions);
  EXPECT_EQ(1u, o.runs);
  EXPECT_EQ(2.0, o.cache_x);
  ASSERT_EQ(0, parse({"--cache", "1.5x"}, &o, &err)) << err;
  EXPECT_EQ(1.5, o.cache_x);
  for (const char *bad : {"2", "0.5x", "17x", "x", "2xx"}) {
    EXPECT_EQ(-EINVAL, parse({"--cache", bad}, &o, &err)) << bad;
    EXPECT_NE(std::string::npos, err.find("--cache")) << err;
  }
  ASSERT_EQ(0, parse({"--quick", "--shares", "10,2.5", "--versions", "gpufs-acquire,copy"}, &o, &err)) << err;
  EXPECT_EQ(16u, o.gen.size);
  EXPECT_EQ(10, o.rounds);
  ASSERT_EQ(2, o.nshares);
  EXPECT_EQ(2.5, o.shares[1]);
  EXPECT_EQ(GRAPH_SVC_ACQUIRE, o.versions[0]);
  for (const char *bad : {"0", "101", "10,10", "x", ""}) {
    EXPECT_EQ(-EINVAL, parse({"--shares", bad}, &o, &err)) << bad;
    EXPECT_NE(std::string::npos, err.find("--shares")) << err;
  }
  EXPECT_EQ(-EINVAL, parse({"--ref", "bfs"}, &o, &err));
  EXPECT_NE(std::string::npos, err.find("dijkstra or cpu")) << err;
  EXPECT_EQ(-EINVAL, parse({"--runs", "0"}, &o, &err));
}

} // namespace
