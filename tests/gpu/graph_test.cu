/*
 * graph_test.cu - graphs/: every algorithm in every version on small
 * generated graphs, each result verified against the CPU reference; the
 * gpufs version with a page cache a quarter of the graph (pages evicted
 * and read again), and with 64 KiB pages; a hub beside one-edge vertices
 * (a chunk's edges read together, or vertex by vertex); uvm with the rest
 * of the GPU held by a reservation; a time cap that ends a round inside it.
 */
#include <string.h>

#include <string>
#include <vector>

#include "graphs/algo.h"
#include "graphs/build.h"
#include "graphs/gen.h"
#include "graphs/versions.h"
#include "tests/gpu/gpu_util.h"

namespace {

/* A generated graph file, open (mapped) for the runs. */
struct GraphFile {
  tdir dir;
  std::string path;
  graph g = {};
  graph_header h = {};
  uint32_t source = 0;
  GraphFile() { path = dir.path + "/g.csr"; dir.files.push_back(path); }
  explicit GraphFile(graph_gen p)
  {
    graph_err err = {};
    int made;
    path = dir.path + "/g.csr";
    dir.files.push_back(path);
    EXPECT_EQ(0, graph_ensure(path.c_str(), &p, 0, &made, &err)) << err.msg;
    EXPECT_EQ(0, graph_open(path.c_str(), 1, &g, &h, &err)) << err.msg;
    source = graph_source(&g);
  }
  ~GraphFile() { graph_free(&g); }
};

/* Run a with v and verify it; the run's result for more checks. */
graph_run_result run_verified(const GraphFile &f, enum graph_algo a, enum graph_version v, uint64_t limit,
                              uint32_t page)
{
  graph_run_opts o = {f.path.c_str(), &f.g, &f.h, a, f.source, limit, page, 0, 0};
  std::vector<uint8_t> ref(graph_ref_bytes(a) * f.g.n), got(graph_out_bytes(a) * f.g.n);
  graph_run_result r;
  graph_err why = {};
  EXPECT_EQ(0, graph_reference(a, &f.g, f.source, ref.data()));
  EXPECT_EQ(0, graph_run_version(v, &o, got.data(), &r)) << graph_version_name(v) << " " << graph_algo_name(a)
                                                         << ": " << r.why;
  if (r.ok)
    EXPECT_EQ(0, graph_verify(a, &f.g, ref.data(), got.data(), &why))
        << graph_version_name(v) << " " << graph_algo_name(a) << ": " << why.msg;
  return r;
}

class GraphVersions : public ::testing::TestWithParam<graph_gen> {};

TEST_P(GraphVersions, EveryAlgorithmVerified)
{
  REQUIRE_GPU();
  GraphFile f(GetParam());
  for (int v = 0; v < GRAPH_NVERSIONS; v++)
    for (int a = 0; a < GRAPH_NALGOS; a++) {
      graph_run_result r = run_verified(f, (enum graph_algo)a, (enum graph_version)v, 0, 4096);
      if (r.ok && v != GRAPH_V_CPU)
        EXPECT_GT(r.rounds, 0u) << graph_version_name((enum graph_version)v);
      if (r.ok && v == GRAPH_V_GPUFS) {
        EXPECT_TRUE(r.has_stats);
        EXPECT_GT(r.st.misses, 0u);
      }
    }
}

INSTANTIATE_TEST_SUITE_P(Graphs, GraphVersions,
                         ::testing::Values(graph_gen{GRAPH_GEN_KRONECKER, 1, 12, 8, 3},
                                           graph_gen{GRAPH_GEN_UNIFORM, 1, 5000, 2, 3}));

/* A graph four times the page cache: every algorithm still verifies, and
 * pages were evicted and read again. */
TEST(GraphGpufs, GraphLargerThanTheCache)
{
  REQUIRE_GPU();
  GraphFile f({GRAPH_GEN_KRONECKER, 1, 15, 16, 5});
  const uint64_t limit = f.h.file_size / 4 / 4096 * 4096;
  for (int a = 0; a < GRAPH_NALGOS; a++) {
    graph_run_result r = run_verified(f, (enum graph_algo)a, GRAPH_V_GPUFS, limit, 4096);
    if (r.ok) {
      EXPECT_GT(r.st.evictions, 0u) << graph_algo_name((enum graph_algo)a);
      EXPECT_GT(r.pcie_bytes, limit) << graph_algo_name((enum graph_algo)a);
    }
  }
}

TEST(GraphGpufs, LargePages)
{
  REQUIRE_GPU();
  GraphFile f({GRAPH_GEN_UNIFORM, 1, 20000, 8, 6});
  for (int a = 0; a < GRAPH_NALGOS; a++)
    run_verified(f, (enum graph_algo)a, GRAPH_V_GPUFS, 0, 65536);
}

/* A hub joined to two thirds of the vertices (its neighbours and weights
 * span several pages) and a path through the rest: chunks of one-edge
 * vertices read together, the hub alone, frontiers with gaps (only the
 * hub, then leaves between path vertices).  Every algorithm in the GPU
 * versions that read memory and libgpufs, 4 KiB and 64 KiB pages. */
TEST(GraphGpufs, HubLeavesAndGaps)
{
  REQUIRE_GPU();
  GraphFile f;
  const uint32_t n = 12000, hub = 4321;
  graph_edges e = {};
  graph_err err = {};
  ASSERT_EQ(0, graph_edges_alloc(&e, n, n, 1));
  for (uint32_t i = 0; i + 3 < n; i++)
    if (i % 3 == 0)
      ASSERT_EQ(0, graph_edges_push(&e, i, i + 3, 1 + i % 5));
    else if (i != hub)
      ASSERT_EQ(0, graph_edges_push(&e, hub, i, 1 + i % 7));
  ASSERT_EQ(0, graph_edges_push(&e, hub, 0, 40));
  graph g = {};
  ASSERT_EQ(0, graph_build(&e, 1, &g, &err)) << err.msg;
  graph_edges_free(&e);
  ASSERT_EQ(0, graph_write(&g, NULL, f.path.c_str(), &err)) << err.msg;
  graph_free(&g);
  ASSERT_EQ(0, graph_open(f.path.c_str(), 1, &f.g, &f.h, &err)) << err.msg;
  f.source = graph_source(&f.g);
  ASSERT_EQ(hub, f.source);
  for (int a = 0; a < GRAPH_NALGOS; a++) {
    for (enum graph_version v : {GRAPH_V_RESIDENT, GRAPH_V_ZERO_COPY, GRAPH_V_GPUFS})
      run_verified(f, (enum graph_algo)a, v, 0, 4096);
    run_verified(f, (enum graph_algo)a, GRAPH_V_GPUFS, 0, 65536);
  }
}

/* uvm and uvm-rm with the GPU's memory but half the graph held */
TEST(GraphUvm, WithAReservation)
{
  REQUIRE_GPU();
  GraphFile f({GRAPH_GEN_KRONECKER, 1, 16, 16, 7});
  const uint64_t limit = f.h.file_size / 2;
  for (enum graph_version v : {GRAPH_V_UVM, GRAPH_V_UVM_RM})
    for (enum graph_algo a : {GRAPH_BFS, GRAPH_PR})
      run_verified(f, a, v, limit, 4096);
}

/* A cap already past when the rounds start: the warps of the first round
 * take no vertex, and the run is capped inside it (not after it), in the
 * pointer and the libgpufs kernels. */
TEST(GraphCap, StopsInsideARound)
{
  REQUIRE_GPU();
  GraphFile f({GRAPH_GEN_KRONECKER, 1, 14, 16, 8});
  std::vector<uint8_t> got(graph_out_bytes(GRAPH_BFS) * f.g.n); /* the larger of the two */
  for (enum graph_version v : {GRAPH_V_RESIDENT, GRAPH_V_UVM, GRAPH_V_GPUFS})
    for (enum graph_algo a : {GRAPH_BFS, GRAPH_PR}) {
      graph_run_opts o = {f.path.c_str(), &f.g, &f.h, a, f.source, 0, 4096, 0, 0, 1e-9};
      graph_run_result r;
      EXPECT_EQ(-ETIMEDOUT, graph_run_version(v, &o, got.data(), &r)) << graph_version_name(v);
      EXPECT_TRUE(r.capped) << graph_version_name(v);
      EXPECT_NE(nullptr, strstr(r.why, "inside round 1")) << graph_version_name(v) << ": " << r.why;
      EXPECT_LE(r.rounds, 1u) << graph_version_name(v);
    }
}

} // namespace
