/*
 * graph_options_test.cpp - graphs/options.c: the `graphs` command line
 * (defaults, lists in table order, --limit as a size or a divisor,
 * --quick's defaults) and what it refuses, naming the option.
 */
#include <cerrno>
#include <string>
#include <vector>

#include "graphs/options.h"
#include "tests/host/graph_util.h"

namespace {

struct Parsed {
  int rc;
  graph_options o;
  std::string err;
};

Parsed parse(std::vector<const char *> args)
{
  Parsed p;
  char err[256] = "";
  std::vector<char *> argv{(char *)"graphs"};
  for (const char *a : args)
    argv.push_back((char *)a);
  p.rc = graph_parse_options((int)argv.size(), argv.data(), &p.o, err, sizeof(err));
  p.err = err;
  return p;
}

TEST(GraphOptions, Defaults)
{
  Parsed p = parse({});
  ASSERT_EQ(0, p.rc) << p.err;
  EXPECT_EQ(GRAPH_NALGOS, p.o.nalgos);
  EXPECT_EQ(GRAPH_NVERSIONS, p.o.nversions);
  ASSERT_EQ(2, p.o.ngraphs);
  EXPECT_EQ((uint32_t)GRAPH_GEN_KRONECKER, p.o.graphs[0].kind);
  EXPECT_EQ(26u, p.o.graphs[0].size);
  EXPECT_EQ(16u, p.o.graphs[0].edge_factor);
  EXPECT_EQ(1u, p.o.graphs[0].weighted);
  EXPECT_EQ(4096u, p.o.page);
  EXPECT_EQ(60.0, p.o.cap_s);
  EXPECT_EQ(GRAPH_REF_SERIAL, p.o.ref);
  EXPECT_EQ(0u, graph_limit_for(&p.o, 1ull << 30, 4096));
}

TEST(GraphOptions, ListsKeepTheTableOrder)
{
  Parsed p = parse({"--versions=gpufs,cpu", "--algos", "cc,bfs"});
  ASSERT_EQ(0, p.rc) << p.err;
  ASSERT_EQ(2, p.o.nversions);
  EXPECT_EQ(GRAPH_V_CPU, p.o.versions[0]);
  EXPECT_EQ(GRAPH_V_GPUFS, p.o.versions[1]);
  ASSERT_EQ(2, p.o.nalgos);
  EXPECT_EQ(GRAPH_BFS, p.o.algos[0]);
  EXPECT_EQ(GRAPH_CC, p.o.algos[1]);
}

TEST(GraphOptions, GraphsAndQuick)
{
  Parsed p = parse({"--graphs", "kron:20,uniform:2M", "--edge-factor", "8", "--seed", "7"});
  ASSERT_EQ(0, p.rc) << p.err;
  ASSERT_EQ(2, p.o.ngraphs);
  EXPECT_EQ(20u, p.o.graphs[0].size);
  EXPECT_EQ(2000000u, p.o.graphs[1].size);
  EXPECT_EQ(8u, p.o.graphs[1].edge_factor);
  EXPECT_EQ(7u, p.o.graphs[1].seed);
  p = parse({"--quick"});
  ASSERT_EQ(0, p.rc) << p.err;
  EXPECT_EQ(18u, p.o.graphs[0].size);
  EXPECT_EQ(256000u, p.o.graphs[1].size);
  EXPECT_EQ(2.0, p.o.cap_s);
  p = parse({"--quick", "--cap=30"});
  EXPECT_EQ(30.0, p.o.cap_s);
  p = parse({"--ref", "cpu"});
  ASSERT_EQ(0, p.rc) << p.err;
  EXPECT_EQ(GRAPH_REF_CPU, p.o.ref);
}

TEST(GraphOptions, LimitAsSizeOrDivisor)
{
  Parsed p = parse({"--limit", "4x"});
  ASSERT_EQ(0, p.rc) << p.err;
  EXPECT_EQ(1ull << 28, graph_limit_for(&p.o, 1ull << 30, 4096));
  EXPECT_EQ(16ull << 20, graph_limit_for(&p.o, 1ull << 20, 4096)); /* at least 16 MiB */
  p = parse({"--limit=2G"});
  ASSERT_EQ(0, p.rc) << p.err;
  EXPECT_EQ(2ull << 30, graph_limit_for(&p.o, 1ull << 40, 4096));
}

TEST(GraphOptions, Refusals)
{
  const std::vector<std::vector<const char *>> bad = {
      {"--versions", "cpu,nope"}, {"--versions", "cpu,cpu"}, {"--algos", ""},     {"--graphs", "kron:40"},
      {"--graphs", "grid:3"},     {"--limit", "0.5x"},       {"--limit", "abc"},  {"--page", "12K"},
      {"--reps", "0"},            {"--cap", "-1"},           {"--edge-factor", "x"}, {"--bogus"},
      {"--ref", "dijkstra"},      {"extra"},
  };
  for (const auto &args : bad) {
    Parsed p = parse(args);
    EXPECT_EQ(-EINVAL, p.rc) << args[0];
    EXPECT_FALSE(p.err.empty()) << args[0];
  }
  EXPECT_EQ(1, parse({"--help"}).rc);
}

} // namespace
