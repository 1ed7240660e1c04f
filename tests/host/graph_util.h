/*
 * graph_util.h - what the graph host tests share: a folder removed at the
 * end, and graphs built from edge lists given inline.
 */
#ifndef GPUFS_TESTS_HOST_GRAPH_UTIL_H
#define GPUFS_TESTS_HOST_GRAPH_UTIL_H

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "graphs/build.h"
#include "graphs/format.h"

struct GraphDir {
  std::string path;
  GraphDir()
  {
    char tmpl[] = "/tmp/gpufs_graph_test_XXXXXX";
    const char *p = mkdtemp(tmpl);
    path = p ? p : "";
  }
  ~GraphDir()
  {
    if (!path.empty() && system(("rm -rf " + path).c_str()) != 0)
      fprintf(stderr, "could not remove %s\n", path.c_str());
  }
  std::string file(const char *name) const { return path + "/" + name; }
};

struct Edge {
  uint32_t u, v, w;
};

/* The CSR of n vertices and the edges (weights kept when weighted). */
inline graph build_graph(uint64_t n, const std::vector<Edge> &edges, bool symmetric, bool weighted)
{
  graph_edges e;
  graph g;
  graph_err err = {};
  EXPECT_EQ(0, graph_edges_alloc(&e, n, edges.size(), weighted));
  for (const Edge &x : edges)
    EXPECT_EQ(0, graph_edges_push(&e, x.u, x.v, x.w));
  EXPECT_EQ(0, graph_build(&e, symmetric, &g, &err)) << err.msg;
  graph_edges_free(&e);
  return g;
}

inline std::vector<uint64_t> offsets_of(const graph &g) { return std::vector<uint64_t>(g.offsets, g.offsets + g.n + 1); }
inline std::vector<uint32_t> neigh_of(const graph &g) { return std::vector<uint32_t>(g.neigh, g.neigh + g.m); }
inline std::vector<uint32_t> weights_of(const graph &g)
{
  return g.weights ? std::vector<uint32_t>(g.weights, g.weights + g.m) : std::vector<uint32_t>();
}

#endif /* GPUFS_TESTS_HOST_GRAPH_UTIL_H */
