/*
 * rodinia_bfs_test.cpp - rodinia-io/bfs's host side: sizes, the graph
 * generator (determinism, and the exact CSR against a naive adjacency-list
 * build), the CPU BFS (a hand-checked graph, and a naive level sweep on a
 * generated one), and verify.
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

#include "tests/host/rodinia_run.h"

namespace {

/* 2^-14: the smallest scale, 1024 nodes; 2^-10: 16384 nodes */
constexpr double kMinScale = 1.0 / 16384;
constexpr double kTestScale = 1.0 / 1024;

/* Input i of a set-up run, generated. */
TEST(RodiniaBfs, SetupSizes)
{
  BfsRun r(kTestScale);
  ASSERT_EQ(bfs_setup(&r.run), 0) << r.run.why;
  const uint64_t n = 16384;
  uint64_t picks = 0;
  for (uint64_t v = 0; v < n; v++)
    picks += 2 + rio_rand(kRioSeed, 0, v) % 3;
  EXPECT_EQ(r.st()->n, n);
  EXPECT_EQ(r.st()->n_edges, 2 * picks);
  ASSERT_EQ(r.run.ninputs, 2);
  EXPECT_STREQ(r.run.in[0].name, "nodes");
  EXPECT_EQ(r.run.in[0].size, 16 * n);
  EXPECT_STREQ(r.run.in[1].name, "edges");
  EXPECT_EQ(r.run.in[1].size, 8 * 2 * picks);
}

TEST(RodiniaBfs, SetupSmallestScale)
{
  BfsRun ok(kMinScale);
  ASSERT_EQ(ok.setup(), 0) << ok.run.why;
  EXPECT_EQ(ok.st()->n, 1024u);
}

TEST(RodiniaBfs, GenerateMatchesNaiveAdjacencyLists)
{
  BfsRun r(kMinScale);
  ASSERT_EQ(bfs_setup(&r.run), 0) << r.run.why;
  const uint64_t n = r.st()->n;
  std::vector<std::vector<int64_t>> own(n), incoming(n);
  for (uint64_t v = 0; v < n; v++)
    for (uint64_t m = 0; m < 2 + rio_rand(kRioSeed, 0, v) % 3; m++) {
      const uint64_t t = rio_rand(kRioSeed, 1, 4 * v + m) % n;
      own[v].push_back((int64_t)t);
      incoming[t].push_back((int64_t)v); /* v ascends: already sorted */
    }
  std::vector<uint8_t> nb = r.generate(0), eb = r.generate(1);
  const bfs_node *nodes = reinterpret_cast<const bfs_node *>(nb.data());
  const int64_t *edges = reinterpret_cast<const int64_t *>(eb.data());
  int64_t at = 0;
  for (uint64_t v = 0; v < n; v++) {
    std::vector<int64_t> want = own[v];
    want.insert(want.end(), incoming[v].begin(), incoming[v].end());
    ASSERT_EQ(nodes[v].start, at) << "node " << v;
    ASSERT_EQ(nodes[v].degree, (int64_t)want.size()) << "node " << v;
    ASSERT_EQ(std::vector<int64_t>(edges + at, edges + at + nodes[v].degree), want) << "node " << v;
    at += nodes[v].degree;
  }
  EXPECT_EQ((uint64_t)at * 8, r.run.in[1].size);
}

/* A run of 1024 nodes whose inputs are the given undirected edges (both
 * directions, lists in the order given), the other nodes isolated. */
struct HandGraph {
  std::vector<bfs_node> nodes;
  std::vector<int64_t> edges;
  HandGraph(uint64_t n, const std::vector<std::pair<int64_t, int64_t>> &pairs) : nodes(n)
  {
    std::vector<std::vector<int64_t>> adj(n);
    for (auto &p : pairs) {
      adj[p.first].push_back(p.second);
      adj[p.second].push_back(p.first);
    }
    for (uint64_t v = 0; v < n; v++) {
      nodes[v] = {(int64_t)edges.size(), (int64_t)adj[v].size()};
      edges.insert(edges.end(), adj[v].begin(), adj[v].end());
    }
  }
  void attach(rio_run *run)
  {
    run->host_in[0] = nodes.data();
    run->host_in[1] = edges.data();
    run->in[1].size = edges.size() * 8;
  }
};

TEST(RodiniaBfs, ReferenceOnHandGraph)
{
  BfsRun r(kMinScale);
  ASSERT_EQ(bfs_setup(&r.run), 0) << r.run.why;
  /* 0 - 1 - 3 - 4 and 0 - 2 - 3 (two ways to 3), a 5 - 6 island, a self
   * loop on 6 and a repeated edge 0 - 1 */
  HandGraph g(1024, {{0, 1}, {0, 2}, {1, 3}, {2, 3}, {3, 4}, {5, 6}, {6, 6}, {1, 0}});
  g.attach(&r.run);
  ASSERT_EQ(bfs_reference(&r.run), 0) << r.run.why;
  const int32_t want[7] = {0, 1, 1, 2, 3, -1, -1};
  for (int v = 0; v < 7; v++)
    EXPECT_EQ(r.st()->want[v], want[v]) << "node " << v;
  for (int v = 7; v < 1024; v++)
    ASSERT_EQ(r.st()->want[v], -1) << "node " << v;
}

TEST(RodiniaBfs, ReferenceRefusesEdgeOutOfRange)
{
  BfsRun r(kMinScale);
  ASSERT_EQ(bfs_setup(&r.run), 0) << r.run.why;
  HandGraph g(1024, {{0, 1}, {1, 2}});
  g.edges[2] = 1024; /* node 1's second edge */
  g.attach(&r.run);
  EXPECT_EQ(bfs_reference(&r.run), -EINVAL);
}

TEST(RodiniaBfs, ReferenceMatchesNaiveLevelSweep)
{
  BfsRun r(kTestScale);
  ASSERT_EQ(bfs_setup(&r.run), 0) << r.run.why;
  const uint64_t n = r.st()->n;
  std::vector<uint8_t> nb = r.generate(0), eb = r.generate(1);
  r.run.host_in[0] = nb.data();
  r.run.host_in[1] = eb.data();
  ASSERT_EQ(bfs_reference(&r.run), 0) << r.run.why;
  /* level L + 1 = the unreached nodes with an edge from level L, found by
   * a sweep over every edge per level */
  const bfs_node *nodes = reinterpret_cast<const bfs_node *>(nb.data());
  const int64_t *edges = reinterpret_cast<const int64_t *>(eb.data());
  std::vector<int32_t> cost(n, -1);
  cost[0] = 0;
  for (int32_t level = 0;; level++) {
    bool grew = false;
    for (uint64_t v = 0; v < n; v++)
      if (cost[v] == level)
        for (int64_t e = nodes[v].start; e < nodes[v].start + nodes[v].degree; e++)
          if (cost[edges[e]] < 0) {
            cost[edges[e]] = level + 1;
            grew = true;
          }
    if (!grew)
      break;
  }
  EXPECT_EQ(std::vector<int32_t>(r.st()->want, r.st()->want + n), cost);
  EXPECT_GT(*std::max_element(cost.begin(), cost.end()), 2);
}

TEST(RodiniaBfs, VerifyAcceptsReferenceRejectsOneChange)
{
  BfsRun r(kMinScale);
  ASSERT_EQ(bfs_setup(&r.run), 0) << r.run.why;
  std::vector<uint8_t> nb = r.generate(0), eb = r.generate(1);
  r.run.host_in[0] = nb.data();
  r.run.host_in[1] = eb.data();
  ASSERT_EQ(bfs_reference(&r.run), 0) << r.run.why;
  const uint64_t n = r.st()->n;
  memcpy(r.st()->got, r.st()->want, n * sizeof(int32_t));
  EXPECT_EQ(bfs_verify(&r.run), 0) << r.run.why;
  r.st()->got[777] += 1;
  EXPECT_EQ(bfs_verify(&r.run), -EBADMSG);
  EXPECT_NE(strstr(r.run.why, "cost"), nullptr) << r.run.why;
  EXPECT_NE(strstr(r.run.why, "777"), nullptr) << r.run.why;
}

}  // namespace
