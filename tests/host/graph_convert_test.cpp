/*
 * graph_convert_test.cpp - graphs/convert.c: text edge lists and
 * MatrixMarket files read into edges (and on to a graph file), and the
 * malformed ones refused naming the line.
 */
#include <cstdio>
#include <cstring>

#include "graphs/convert.h"
#include "tests/host/graph_util.h"

namespace {

struct Read {
  int rc;
  graph_edges e;
  graph_read_info info;
  std::string err;
};

Read read_text(const char *text, int one_based = 0)
{
  Read r;
  graph_err err = {};
  graph_read_opts o = {one_based};
  FILE *f = fmemopen((void *)text, strlen(text), "r");
  r.rc = graph_read_text(f, &o, &r.e, &r.info, &err);
  fclose(f);
  r.err = err.msg;
  return r;
}

Read read_mtx(const char *text)
{
  Read r;
  graph_err err = {};
  FILE *f = fmemopen((void *)text, strlen(text), "r");
  r.rc = graph_read_mtx(f, &r.e, &r.info, &err);
  fclose(f);
  r.err = err.msg;
  return r;
}

std::vector<uint32_t> v(const uint32_t *p, uint64_t n) { return p ? std::vector<uint32_t>(p, p + n) : std::vector<uint32_t>(); }

TEST(GraphConvert, TextPairs)
{
  Read r = read_text("# a comment\n0 1\n\n1,2\n% another\n4\t0\n");
  ASSERT_EQ(0, r.rc) << r.err;
  EXPECT_EQ(5u, r.e.n);
  EXPECT_EQ((std::vector<uint32_t>{0, 1, 4}), v(r.e.src, r.e.m));
  EXPECT_EQ((std::vector<uint32_t>{1, 2, 0}), v(r.e.dst, r.e.m));
  EXPECT_EQ(nullptr, r.e.w);
  EXPECT_EQ(0, r.info.weighted);
  graph_edges_free(&r.e);
}

TEST(GraphConvert, TextWeightedOneBased)
{
  Read r = read_text("1 2 10\n2 3 4294967295\n", 1);
  ASSERT_EQ(0, r.rc) << r.err;
  EXPECT_EQ(3u, r.e.n);
  EXPECT_EQ((std::vector<uint32_t>{0, 1}), v(r.e.src, r.e.m));
  EXPECT_EQ((std::vector<uint32_t>{10, 4294967295u}), v(r.e.w, r.e.m));
  EXPECT_EQ(1, r.info.weighted);
  graph_edges_free(&r.e);
}

TEST(GraphConvert, TextErrorsNameTheLine)
{
  Read r = read_text("0 1\n1 2 3\n");
  EXPECT_EQ(-EINVAL, r.rc);
  EXPECT_NE(std::string::npos, r.err.find("line 2")) << r.err;
  r = read_text("0 1\nx 2\n");
  EXPECT_EQ(-EINVAL, r.rc);
  EXPECT_NE(std::string::npos, r.err.find("line 2")) << r.err;
  r = read_text("0 1 -4\n");
  EXPECT_EQ(-EINVAL, r.rc);
  r = read_text("0 1\n", 1); /* 0 is no 1-based id */
  EXPECT_EQ(-EINVAL, r.rc);
  r = read_text("0 99999999999\n");
  EXPECT_EQ(-EINVAL, r.rc);
  r = read_text("0\n");
  EXPECT_EQ(-EINVAL, r.rc);
}

TEST(GraphConvert, MatrixMarketPatternGeneral)
{
  Read r = read_mtx("%%MatrixMarket matrix coordinate pattern general\n% c\n3 4 2\n1 4\n3 1\n");
  ASSERT_EQ(0, r.rc) << r.err;
  EXPECT_EQ(4u, r.e.n);
  EXPECT_EQ((std::vector<uint32_t>{0, 2}), v(r.e.src, r.e.m));
  EXPECT_EQ((std::vector<uint32_t>{3, 0}), v(r.e.dst, r.e.m));
  EXPECT_EQ(0, r.info.weighted);
  EXPECT_EQ(0, r.info.symmetric);
  graph_edges_free(&r.e);
}

TEST(GraphConvert, MatrixMarketIntegerAndRealWeights)
{
  Read r = read_mtx("%%MatrixMarket matrix coordinate integer symmetric\n2 2 1\n2 1 7\n");
  ASSERT_EQ(0, r.rc) << r.err;
  EXPECT_EQ((std::vector<uint32_t>{7}), v(r.e.w, r.e.m));
  EXPECT_EQ(1, r.info.symmetric);
  graph_edges_free(&r.e);
  r = read_mtx("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 2 2.6\n2 1 0.4\n");
  ASSERT_EQ(0, r.rc) << r.err;
  EXPECT_EQ((std::vector<uint32_t>{3, 0}), v(r.e.w, r.e.m));
  graph_edges_free(&r.e);
}

TEST(GraphConvert, MatrixMarketErrors)
{
  EXPECT_EQ(-EINVAL, read_mtx("0 1\n").rc);
  EXPECT_EQ(-EINVAL, read_mtx("%%MatrixMarket matrix array real general\n2 2\n").rc);
  EXPECT_EQ(-EINVAL, read_mtx("%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 1\n").rc);
  Read r = read_mtx("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 -1\n");
  EXPECT_EQ(-EINVAL, r.rc);
  EXPECT_NE(std::string::npos, r.err.find("line 3")) << r.err;
  r = read_mtx("%%MatrixMarket matrix coordinate pattern general\n2 2 2\n1 2\n");
  EXPECT_EQ(-EINVAL, r.rc);
  EXPECT_NE(std::string::npos, r.err.find("truncated")) << r.err;
  r = read_mtx("%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 2\n2 1\n");
  EXPECT_EQ(-EINVAL, r.rc);
  r = read_mtx("%%MatrixMarket matrix coordinate pattern general\n2 2 1\n3 1\n");
  EXPECT_EQ(-EINVAL, r.rc);
}

TEST(GraphConvert, TextToAGraphFile)
{
  GraphDir d;
  Read r = read_text("0 1 5\n1 2 6\n2 0 7\n0 1 3\n");
  ASSERT_EQ(0, r.rc) << r.err;
  graph g, back;
  graph_err err = {};
  ASSERT_EQ(0, graph_build(&r.e, 1, &g, &err)) << err.msg;
  graph_edges_free(&r.e);
  const std::string path = d.file("c.csr");
  const graph_gen gen = {GRAPH_GEN_CONVERTED, 1, 0, 0, 0};
  ASSERT_EQ(0, graph_write(&g, &gen, path.c_str(), &err)) << err.msg;
  ASSERT_EQ(0, graph_open(path.c_str(), 1, &back, nullptr, &err)) << err.msg;
  EXPECT_EQ((std::vector<uint64_t>{0, 2, 4, 6}), offsets_of(back));
  EXPECT_EQ((std::vector<uint32_t>{1, 2, 0, 2, 0, 1}), neigh_of(back));
  EXPECT_EQ((std::vector<uint32_t>{3, 7, 3, 6, 7, 6}), weights_of(back));
  graph_free(&back);
  graph_free(&g);
}

} // namespace
