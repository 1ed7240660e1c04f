/*
 * graph_gen_test.cpp - graphs/build.c and graphs/gen.c: the CSR of small
 * hand-computed edge lists; the generators' graphs on 1 and 2 vertices
 * (computed by hand), their determinism and shape, and the CSR of
 * generated edges against a naive adjacency-set build.
 */
#include <algorithm>
#include <map>
#include <set>

#include "graphs/gen.h"
#include "tests/host/graph_util.h"

namespace {

TEST(GraphBuild, HandComputedSymmetric)
{
  /* self loop dropped; the repeated 0-1 keeps its smaller weight (2);
   * both directions of each edge */
  graph g = build_graph(4, {{0, 1, 5}, {1, 0, 2}, {2, 2, 9}, {3, 0, 7}, {1, 3, 1}}, true, true);
  EXPECT_EQ((std::vector<uint64_t>{0, 2, 4, 4, 6}), offsets_of(g));
  EXPECT_EQ((std::vector<uint32_t>{1, 3, 0, 3, 0, 1}), neigh_of(g));
  EXPECT_EQ((std::vector<uint32_t>{2, 7, 2, 1, 7, 1}), weights_of(g));
  EXPECT_EQ((uint32_t)(GRAPH_SYMMETRIC | GRAPH_WEIGHTED), g.flags);
  graph_free(&g);
}

TEST(GraphBuild, HandComputedDirected)
{
  graph g = build_graph(3, {{2, 0, 0}, {0, 2, 0}, {0, 1, 0}, {0, 1, 0}}, false, false);
  EXPECT_EQ((std::vector<uint64_t>{0, 2, 2, 3}), offsets_of(g));
  EXPECT_EQ((std::vector<uint32_t>{1, 2, 0}), neigh_of(g));
  EXPECT_EQ(nullptr, g.weights);
  EXPECT_EQ(0u, g.flags);
  graph_free(&g);
}

TEST(GraphBuild, EndpointPastTheLastVertexRefused)
{
  graph_edges e;
  graph g;
  graph_err err = {};
  ASSERT_EQ(0, graph_edges_alloc(&e, 3, 1, 0));
  ASSERT_EQ(0, graph_edges_push(&e, 0, 3, 0));
  EXPECT_EQ(-EINVAL, graph_build(&e, 1, &g, &err));
  EXPECT_NE(nullptr, strstr(err.msg, "past")) << err.msg;
  graph_edges_free(&e);
}

graph generate(graph_gen p)
{
  graph g;
  graph_err err = {};
  EXPECT_EQ(0, graph_generate(&p, &g, &err)) << err.msg;
  return g;
}

TEST(GraphGen, OneVertexHasNoEdges)
{
  graph g = generate({GRAPH_GEN_UNIFORM, 1, 1, 8, 3}); /* every edge a self loop */
  EXPECT_EQ(1u, g.n);
  EXPECT_EQ(0u, g.m);
  EXPECT_EQ((std::vector<uint64_t>{0, 0}), offsets_of(g));
  graph_free(&g);
}

/* Two vertices: the only edge is 0-1, kept once each way with the smallest
 * weight drawn for it (16 draws: a self loop every time is 2^-16 likely,
 * and the generator is deterministic). */
void expect_two_vertex_graph(graph_gen p)
{
  graph_edges e;
  graph_err err = {};
  ASSERT_EQ(0, graph_gen_edges(&p, &e, &err)) << err.msg;
  uint32_t wmin = UINT32_MAX;
  for (uint64_t i = 0; i < e.m; i++)
    if (e.src[i] != e.dst[i])
      wmin = std::min(wmin, e.w[i]);
  graph_edges_free(&e);
  ASSERT_NE(UINT32_MAX, wmin);
  graph g = generate(p);
  EXPECT_EQ((std::vector<uint64_t>{0, 1, 2}), offsets_of(g));
  EXPECT_EQ((std::vector<uint32_t>{1, 0}), neigh_of(g));
  EXPECT_EQ((std::vector<uint32_t>{wmin, wmin}), weights_of(g));
  graph_free(&g);
}

TEST(GraphGen, TwoVerticesUniform) { expect_two_vertex_graph({GRAPH_GEN_UNIFORM, 1, 2, 8, 5}); }
TEST(GraphGen, TwoVerticesKronecker) { expect_two_vertex_graph({GRAPH_GEN_KRONECKER, 1, 1, 8, 5}); }

TEST(GraphGen, KroneckerPermutationIsABijection)
{
  for (unsigned scale = 1; scale <= 12; scale++) {
    std::vector<uint8_t> seen(1u << scale);
    for (uint64_t x = 0; x < seen.size(); x++) {
      const uint32_t y = graph_kron_perm(x, scale, 77);
      ASSERT_LT(y, seen.size());
      EXPECT_FALSE(seen[y]) << "scale " << scale;
      seen[y] = 1;
    }
  }
}

TEST(GraphGen, DeterministicAndSeeded)
{
  const graph_gen p = {GRAPH_GEN_KRONECKER, 1, 10, 8, 11};
  graph a = generate(p), b = generate(p), c = generate({GRAPH_GEN_KRONECKER, 1, 10, 8, 12});
  EXPECT_EQ(offsets_of(a), offsets_of(b));
  EXPECT_EQ(neigh_of(a), neigh_of(b));
  EXPECT_EQ(weights_of(a), weights_of(b));
  EXPECT_NE(neigh_of(a), neigh_of(c));
  graph_free(&a);
  graph_free(&b);
  graph_free(&c);
}

TEST(GraphGen, BadParametersRefused)
{
  graph_edges e;
  graph_err err = {};
  graph_gen p = {GRAPH_GEN_KRONECKER, 0, 32, 1, 0};
  EXPECT_EQ(-EINVAL, graph_gen_edges(&p, &e, &err));
  p = {GRAPH_GEN_UNIFORM, 0, 0, 1, 0};
  EXPECT_EQ(-EINVAL, graph_gen_edges(&p, &e, &err));
  p = {GRAPH_GEN_CONVERTED, 0, 4, 1, 0};
  EXPECT_EQ(-EINVAL, graph_gen_edges(&p, &e, &err));
}

/* The CSR of p's edges, built naively with sets: sorted, no loops, no
 * repeats, both ways, the smallest weight. */
void expect_naive_build(graph_gen p)
{
  graph_edges e;
  graph_err err = {};
  ASSERT_EQ(0, graph_gen_edges(&p, &e, &err)) << err.msg;
  std::vector<std::map<uint32_t, uint32_t>> adj(e.n);
  for (uint64_t i = 0; i < e.m; i++) {
    const uint32_t u = e.src[i], v = e.dst[i], w = e.w[i];
    if (u == v)
      continue;
    for (auto [a, b] : {std::pair<uint32_t, uint32_t>{u, v}, {v, u}}) {
      auto it = adj[a].find(b);
      if (it == adj[a].end() || it->second > w)
        adj[a][b] = w;
    }
  }
  const uint64_t raw = e.m;
  graph_edges_free(&e);
  graph g = generate(p);
  std::vector<uint64_t> off{0};
  std::vector<uint32_t> nb, wt;
  for (auto &m : adj) {
    for (auto [v, w] : m)
      nb.push_back(v), wt.push_back(w);
    off.push_back(nb.size());
  }
  EXPECT_EQ(off, offsets_of(g));
  EXPECT_EQ(nb, neigh_of(g));
  EXPECT_EQ(wt, weights_of(g));
  EXPECT_LE(g.m, 2 * raw);
  for (uint64_t i = 0; i < g.m; i++)
    EXPECT_TRUE(g.weights[i] >= 1 && g.weights[i] <= GRAPH_WEIGHT_MAX);
  graph_free(&g);
}

TEST(GraphGen, KroneckerMatchesANaiveBuild) { expect_naive_build({GRAPH_GEN_KRONECKER, 1, 10, 16, 1}); }
TEST(GraphGen, UniformMatchesANaiveBuild) { expect_naive_build({GRAPH_GEN_UNIFORM, 1, 3000, 4, 1}); }

TEST(GraphGen, KroneckerIsSkewedUniformIsNot)
{
  graph k = generate({GRAPH_GEN_KRONECKER, 1, 12, 16, 2}), u = generate({GRAPH_GEN_UNIFORM, 1, 4096, 16, 2});
  auto max_deg = [](const graph &g) {
    uint64_t m = 0;
    for (uint64_t v = 0; v < g.n; v++)
      m = std::max(m, g.offsets[v + 1] - g.offsets[v]);
    return m;
  };
  EXPECT_GT(max_deg(k), 10 * k.m / k.n);
  EXPECT_LT(max_deg(u), 3 * u.m / u.n);
  graph_free(&k);
  graph_free(&u);
}

} // namespace
