/*
 * graph_service_test.cu - graphs/service.cu, the updated-graph service's
 * versions: on a small weighted Kronecker graph, every version at every
 * share runs SSSP, then rounds in which the writer rewrites a share of
 * the weights with pwrite; every round's distances are compared with
 * Dijkstra on the file as the round left it.  gpufs-acquire reads again
 * only the pages the writer changed (its misses against the pages of the
 * changed range), gpufs-reopen reads again what SSSP touches.
 */
#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "graphs/algo.h"
#include "graphs/gen.h"
#include "graphs/service.h"
#include "graphs/update.h"
#include "tests/gpu/gpu_util.h"

namespace {

struct ServiceFile {
  tdir dir;
  std::string path;
  graph g;
  graph_header h;
  uint32_t source = 0;
  std::vector<uint32_t> weights0;
  ServiceFile()
  {
    graph_gen p = {GRAPH_GEN_KRONECKER, 1, 12, 16, 3};
    graph_err err = {};
    int made;
    path = dir.path + "/g.csr";
    dir.files.push_back(path);
    EXPECT_EQ(0, graph_ensure(path.c_str(), &p, 0, &made, &err)) << err.msg;
    EXPECT_EQ(0, graph_open(path.c_str(), 0, &g, &h, &err)) << err.msg;
    source = graph_source(&g);
    weights0.assign(g.weights, g.weights + g.m);
  }
  ~ServiceFile() { graph_free(&g); }
  void restore(int fd) const
  {
    ASSERT_EQ((ssize_t)(4 * weights0.size()), pwrite(fd, weights0.data(), 4 * weights0.size(), h.weights_off));
  }
};

/* The round's distances against Dijkstra on the file as it is now. */
void expect_verified(const ServiceFile &f, graph_svc *s, const char *what)
{
  std::vector<uint64_t> ref(f.g.n);
  graph_err why = {};
  ASSERT_EQ(0, graph_reference(GRAPH_SSSP, &f.g, f.source, ref.data()));
  EXPECT_EQ(0, graph_verify(GRAPH_SSSP, &f.g, ref.data(), graph_svc_result(s), &why)) << what << ": " << why.msg;
}

/* The pages [off, off + len) covers. */
uint64_t pages_of(uint64_t off, uint64_t len, uint64_t page) { return (off + len + page - 1) / page - off / page; }

TEST(GraphService, EveryVersionAndShareVerified)
{
  REQUIRE_GPU();
  ServiceFile f;
  const int fd = open(f.path.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  const graph_run_opts ro = {f.path.c_str(), &f.g, &f.h, GRAPH_SSSP, f.source, 0, 4096, 0, 0, 0};
  const double shares[] = {1, 10, 25, 50, 75, 100};
  for (int v = 0; v < GRAPH_SVC_NVERSIONS; v++)
    for (double share : shares) {
      const std::string what = std::string(graph_svc_names[v]) + " " + std::to_string((int)share) + "%";
      SCOPED_TRACE(what);
      f.restore(fd);
      graph_svc *s = nullptr;
      graph_run_result r;
      int64_t dropped;
      ASSERT_EQ(0, graph_svc_open((graph_svc_version)v, &ro, &s, &r)) << r.why;
      ASSERT_EQ(0, graph_svc_round(s, nullptr, &r, &dropped)) << r.why;
      expect_verified(f, s, what.c_str());
      const graph_update_spec spec = {f.h.nedges, share, share < 50 ? 1u : 3u, 11};
      int64_t dropped_all = 0;
      for (uint64_t round = 1; round <= 3; round++) {
        graph_update_plan plan;
        graph_svc_change c;
        ASSERT_EQ(0, graph_update_choose(&spec, round, &plan));
        ASSERT_EQ(0, graph_update_apply(fd, f.h.weights_off, &plan, spec.seed, round));
        graph_update_span(&plan, f.h.weights_off, &c.off, &c.len);
        ASSERT_EQ(0, graph_svc_round(s, &c, &r, &dropped)) << r.why;
        expect_verified(f, s, (what + " round " + std::to_string(round)).c_str());
        if (v == GRAPH_SVC_ACQUIRE) {
          /* only the changed range's pages are dropped and read again */
          const uint64_t most = pages_of(c.off, c.len, 4096);
          EXPECT_LE((uint64_t)dropped, most);
          EXPECT_LE(r.st.misses, most);
        }
        dropped_all += dropped;
      }
      /* the writer's pages that SSSP had read were cached, and dropped */
      if (v == GRAPH_SVC_ACQUIRE || v == GRAPH_SVC_ACQUIRE_FILE)
        EXPECT_GT(dropped_all, 0);
      graph_svc_close(s);
    }
  close(fd);
}

TEST(GraphService, AcquireReadsLessThanReopen)
{
  REQUIRE_GPU();
  ServiceFile f;
  const int fd = open(f.path.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  const graph_run_opts ro = {f.path.c_str(), &f.g, &f.h, GRAPH_SSSP, f.source, 0, 4096, 0, 0, 0};
  uint64_t misses[2] = {0, 0};
  const graph_svc_version vs[2] = {GRAPH_SVC_REOPEN, GRAPH_SVC_ACQUIRE};
  for (int k = 0; k < 2; k++) {
    f.restore(fd);
    graph_svc *s = nullptr;
    graph_run_result r;
    int64_t dropped;
    ASSERT_EQ(0, graph_svc_open(vs[k], &ro, &s, &r)) << r.why;
    ASSERT_EQ(0, graph_svc_round(s, nullptr, &r, &dropped)) << r.why;
    const graph_update_spec spec = {f.h.nedges, 1, 1, 5};
    graph_update_plan plan;
    graph_svc_change c;
    ASSERT_EQ(0, graph_update_choose(&spec, 1, &plan));
    ASSERT_EQ(0, graph_update_apply(fd, f.h.weights_off, &plan, spec.seed, 1));
    graph_update_span(&plan, f.h.weights_off, &c.off, &c.len);
    ASSERT_EQ(0, graph_svc_round(s, &c, &r, &dropped)) << r.why;
    expect_verified(f, s, graph_svc_names[vs[k]]);
    misses[k] = r.st.misses;
    graph_svc_close(s);
  }
  EXPECT_LT(10 * misses[1], misses[0]) << "reopen " << misses[0] << " acquire " << misses[1];
  close(fd);
}

TEST(GraphService, RefusesOtherAlgorithms)
{
  REQUIRE_GPU();
  ServiceFile f;
  const graph_run_opts ro = {f.path.c_str(), &f.g, &f.h, GRAPH_BFS, f.source, 0, 4096, 0, 0, 0};
  graph_svc *s = nullptr;
  graph_run_result r;
  EXPECT_EQ(-EINVAL, graph_svc_open(GRAPH_SVC_COPY, &ro, &s, &r));
  EXPECT_EQ(nullptr, s);
  EXPECT_NE(std::string::npos, std::string(r.why).find("sssp")) << r.why;
}

} // namespace
