/*
 * graph_algo_test.cpp - graphs/ref.c and graphs/cpu.c: each reference on a
 * hand-checked graph and against a naive one (relaxing every edge until
 * nothing changes; PageRank pushed along the edges) on generated graphs;
 * the cpu version against the reference; what graph_verify refuses.
 */
#include <algorithm>
#include <cmath>

#include "graphs/algo.h"
#include "graphs/gen.h"
#include "tests/host/graph_util.h"

namespace {

/* Naive min-propagation: relax every edge until nothing changes. */
std::vector<uint64_t> naive_min(const graph &g, enum graph_algo a, uint32_t s)
{
  std::vector<uint64_t> val(g.n, GRAPH_NONE);
  if (a == GRAPH_CC)
    for (uint64_t v = 0; v < g.n; v++)
      val[v] = v;
  else
    val[s] = 0;
  for (bool changed = true; changed;) {
    changed = false;
    for (uint64_t u = 0; u < g.n; u++)
      for (uint64_t e = g.offsets[u]; val[u] != GRAPH_NONE && e < g.offsets[u + 1]; e++) {
        const uint64_t step = a == GRAPH_CC ? 0 : a == GRAPH_SSSP && g.weights ? g.weights[e] : 1;
        if (val[u] + step < val[g.neigh[e]])
          val[g.neigh[e]] = val[u] + step, changed = true;
      }
  }
  return val;
}

/* PageRank pushed along every edge (the same sums as pulling, in another order). */
std::vector<double> naive_pr(const graph &g)
{
  std::vector<double> r(g.n, 1.0 / g.n), next(g.n);
  for (int it = 0; it < GRAPH_PR_ITERS; it++) {
    std::fill(next.begin(), next.end(), (1 - GRAPH_PR_DAMPING) / g.n);
    for (uint64_t u = 0; u < g.n; u++)
      for (uint64_t e = g.offsets[u]; e < g.offsets[u + 1]; e++)
        next[g.neigh[e]] += GRAPH_PR_DAMPING * r[u] / (double)(g.offsets[u + 1] - g.offsets[u]);
    r.swap(next);
  }
  return r;
}

template <class T> std::vector<T> reference(const graph &g, enum graph_algo a, uint32_t s)
{
  std::vector<T> out(g.n);
  EXPECT_EQ(0, graph_reference(a, &g, s, out.data()));
  return out;
}

/* a triangle 0-1-2 with weights 1, 1, 5, a tail 2-3 (weight 2), and 4-5 apart */
graph hand_graph()
{
  return build_graph(6, {{0, 1, 1}, {1, 2, 1}, {0, 2, 5}, {2, 3, 2}, {4, 5, 1}}, true, true);
}

TEST(GraphRef, HandCheckedBfsSsspCc)
{
  graph g = hand_graph();
  const uint64_t N = GRAPH_NONE;
  EXPECT_EQ((std::vector<uint64_t>{0, 1, 1, 2, N, N}), reference<uint64_t>(g, GRAPH_BFS, 0));
  EXPECT_EQ((std::vector<uint64_t>{0, 1, 2, 4, N, N}), reference<uint64_t>(g, GRAPH_SSSP, 0));
  EXPECT_EQ((std::vector<uint64_t>{0, 0, 0, 0, 4, 4}), reference<uint64_t>(g, GRAPH_CC, 0));
  graph_free(&g);
}

TEST(GraphRef, HandCheckedPageRankOnAPair)
{
  /* two vertices joined: each keeps 1/2 ((1-d)/2 + d * 1/2) */
  graph g = build_graph(2, {{0, 1, 0}}, true, false);
  for (double r : reference<double>(g, GRAPH_PR, 0))
    EXPECT_NEAR(0.5, r, 1e-15);
  graph_free(&g);
}

class GraphRefGen : public ::testing::TestWithParam<graph_gen> {};

TEST_P(GraphRefGen, ReferencesMatchNaive)
{
  graph g;
  graph_err err = {};
  graph_gen p = GetParam();
  ASSERT_EQ(0, graph_generate(&p, &g, &err)) << err.msg;
  const uint32_t s = graph_source(&g);
  for (enum graph_algo a : {GRAPH_BFS, GRAPH_SSSP, GRAPH_CC}) {
    std::vector<uint64_t> ref = reference<uint64_t>(g, a, s), naive = naive_min(g, a, s);
    if (a == GRAPH_CC)
      EXPECT_EQ(0, graph_verify(a, &g, naive.data(), ref.data(), &err)) << err.msg;
    else
      EXPECT_EQ(naive, ref) << graph_algo_name(a);
  }
  std::vector<double> pr = reference<double>(g, GRAPH_PR, s), npr = naive_pr(g);
  for (uint64_t v = 0; v < g.n; v++)
    ASSERT_NEAR(npr[v], pr[v], 1e-12 * npr[v]) << v;
  graph_free(&g);
}

/* The cpu version, with one thread and with several, verified. */
TEST_P(GraphRefGen, CpuVersionVerifies)
{
  graph g;
  graph_err err = {};
  graph_gen p = GetParam();
  ASSERT_EQ(0, graph_generate(&p, &g, &err)) << err.msg;
  const uint32_t s = graph_source(&g);
  for (int a = 0; a < GRAPH_NALGOS; a++) {
    std::vector<uint8_t> ref(graph_ref_bytes((enum graph_algo)a) * g.n), got(graph_out_bytes((enum graph_algo)a) * g.n);
    ASSERT_EQ(0, graph_reference((enum graph_algo)a, &g, s, ref.data()));
    for (int threads : {1, 4}) {
      ASSERT_EQ(0, graph_cpu_run((enum graph_algo)a, &g, s, threads, got.data()));
      EXPECT_EQ(0, graph_verify((enum graph_algo)a, &g, ref.data(), got.data(), &err))
          << graph_algo_name((enum graph_algo)a) << " threads " << threads << ": " << err.msg;
    }
  }
  graph_free(&g);
}

INSTANTIATE_TEST_SUITE_P(Graphs, GraphRefGen,
                         ::testing::Values(graph_gen{GRAPH_GEN_KRONECKER, 1, 9, 8, 4},
                                           graph_gen{GRAPH_GEN_UNIFORM, 1, 1500, 1, 4}));

TEST(GraphVerify, RefusesWrongResults)
{
  graph g = hand_graph();
  graph_err why = {};
  std::vector<uint64_t> ref = reference<uint64_t>(g, GRAPH_BFS, 0), got = ref;
  got[3] = 3;
  EXPECT_EQ(-EIO, graph_verify(GRAPH_BFS, &g, ref.data(), got.data(), &why));
  EXPECT_NE(nullptr, strstr(why.msg, "vertex 3")) << why.msg;

  std::vector<uint64_t> cc = reference<uint64_t>(g, GRAPH_CC, 0);
  std::vector<uint64_t> relabelled{7, 7, 7, 7, 9, 9}, merged{1, 1, 1, 1, 1, 1}, split{0, 0, 0, 3, 4, 4};
  EXPECT_EQ(0, graph_verify(GRAPH_CC, &g, cc.data(), relabelled.data(), &why)) << why.msg;
  EXPECT_EQ(-EIO, graph_verify(GRAPH_CC, &g, cc.data(), merged.data(), &why));
  EXPECT_EQ(-EIO, graph_verify(GRAPH_CC, &g, cc.data(), split.data(), &why));

  std::vector<double> pr = reference<double>(g, GRAPH_PR, 0);
  std::vector<float> close(pr.begin(), pr.end()), far = close;
  far[2] *= 1.01f;
  EXPECT_EQ(0, graph_verify(GRAPH_PR, &g, pr.data(), close.data(), &why)) << why.msg;
  EXPECT_EQ(-EIO, graph_verify(GRAPH_PR, &g, pr.data(), far.data(), &why));
  graph_free(&g);
}

TEST(GraphVerify, PageRankAndComponentsNeedASymmetricGraph)
{
  graph g = build_graph(3, {{0, 1, 0}}, false, false);
  graph_err why = {};
  EXPECT_EQ(-EINVAL, graph_algo_check(GRAPH_PR, &g, &why));
  EXPECT_EQ(-EINVAL, graph_algo_check(GRAPH_CC, &g, &why));
  EXPECT_EQ(0, graph_algo_check(GRAPH_BFS, &g, &why));
  graph_free(&g);
}

} // namespace
