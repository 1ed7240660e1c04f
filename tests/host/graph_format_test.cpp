/*
 * graph_format_test.cpp - graphs/format.c: a graph written and opened
 * again is the same; bad headers, damaged data and truncated files are
 * refused with a clear error; graph_ensure keeps a current file and
 * rewrites another.
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "graphs/gen.h"
#include "tests/host/graph_util.h"

namespace {

graph small_graph()
{
  return build_graph(5, {{0, 1, 3}, {1, 2, 4}, {2, 0, 5}, {3, 4, 6}}, true, true);
}

/* A written small graph at path; its header in *h. */
void write_small(const std::string &path, graph_header *h)
{
  graph g = small_graph();
  graph_err err = {};
  ASSERT_EQ(0, graph_write(&g, nullptr, path.c_str(), &err)) << err.msg;
  graph_free(&g);
  ASSERT_EQ(0, graph_read_header(path.c_str(), h, &err)) << err.msg;
}

void poke(const std::string &path, off_t off, const void *bytes, size_t len)
{
  const int fd = open(path.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ((ssize_t)len, pwrite(fd, bytes, len, off));
  close(fd);
}

/* graph_open's rc and message. */
int open_rc(const std::string &path, int verify, std::string *why)
{
  graph g;
  graph_err err = {};
  const int rc = graph_open(path.c_str(), verify, &g, nullptr, &err);
  if (rc == 0)
    graph_free(&g);
  *why = err.msg;
  return rc;
}

TEST(GraphFormat, RoundTrip)
{
  GraphDir d;
  const std::string path = d.file("g.csr");
  graph g = small_graph(), back;
  graph_header h;
  graph_err err = {};
  const graph_gen gen = {GRAPH_GEN_UNIFORM, 1, 5, 2, 42};
  ASSERT_EQ(0, graph_write(&g, &gen, path.c_str(), &err)) << err.msg;
  ASSERT_EQ(0, graph_open(path.c_str(), 1, &back, &h, &err)) << err.msg;
  EXPECT_EQ(0, memcmp(h.magic, GRAPH_MAGIC, 8));
  EXPECT_EQ(GRAPH_VERSION, h.version);
  EXPECT_EQ(5u, h.nvertices);
  EXPECT_EQ(8u, h.nedges);
  EXPECT_EQ((uint32_t)(GRAPH_WEIGHTED | GRAPH_SYMMETRIC), h.flags);
  EXPECT_EQ(0, memcmp(&gen, &h.gen, sizeof(gen)));
  EXPECT_EQ(0u, h.offsets_off % GRAPH_ALIGN);
  EXPECT_EQ(0u, h.neigh_off % GRAPH_ALIGN);
  EXPECT_EQ(0u, h.weights_off % GRAPH_ALIGN);
  struct stat st;
  ASSERT_EQ(0, stat(path.c_str(), &st));
  EXPECT_EQ((uint64_t)st.st_size, h.file_size);
  EXPECT_EQ(offsets_of(g), offsets_of(back));
  EXPECT_EQ(neigh_of(g), neigh_of(back));
  EXPECT_EQ(weights_of(g), weights_of(back));
  EXPECT_EQ(g.flags, back.flags);
  graph_free(&back);
  graph_free(&g);
}

TEST(GraphFormat, UnweightedHasNoWeightsSection)
{
  GraphDir d;
  const std::string path = d.file("u.csr");
  graph g = build_graph(3, {{0, 1, 0}, {1, 2, 0}}, false, false), back;
  graph_header h;
  graph_err err = {};
  ASSERT_EQ(0, graph_write(&g, nullptr, path.c_str(), &err)) << err.msg;
  ASSERT_EQ(0, graph_open(path.c_str(), 1, &back, &h, &err)) << err.msg;
  EXPECT_EQ(0u, h.weights_off);
  EXPECT_EQ(nullptr, back.weights);
  EXPECT_EQ(0u, back.flags);
  EXPECT_EQ(neigh_of(g), neigh_of(back));
  graph_free(&back);
  graph_free(&g);
}

/* A header changed in place: the bytes, where, and what opening says. */
struct HeaderDamage {
  const char *what;
  size_t off;
  uint64_t bytes;
  size_t len;
  int rc;
  const char *says;
};

TEST(GraphFormat, DamagedHeadersRefused)
{
  const HeaderDamage cases[] = {
      {"magic", 0, 0x5858585858585858ull /* "XXXXXXXX" */, 8, -EINVAL, "not a graph file"},
      {"version", offsetof(graph_header, version), 99, 4, -EINVAL, "version 99"},
      {"a count", offsetof(graph_header, nvertices), 6, 8, -EBADMSG, "checksum"},
  };
  for (const HeaderDamage &c : cases) {
    GraphDir d;
    const std::string path = d.file("h.csr");
    graph_header h;
    std::string why;
    write_small(path, &h);
    poke(path, (off_t)c.off, &c.bytes, c.len);
    EXPECT_EQ(c.rc, open_rc(path, 0, &why)) << c.what;
    EXPECT_NE(std::string::npos, why.find(c.says)) << c.what << ": " << why;
  }
}

TEST(GraphFormat, DamagedDataRefusedWhenVerified)
{
  GraphDir d;
  const std::string path = d.file("d.csr");
  graph_header h;
  std::string why;
  write_small(path, &h);
  const uint32_t bad = 7;
  poke(path, (off_t)h.neigh_off, &bad, 4);
  EXPECT_EQ(0, open_rc(path, 0, &why)) << why;
  EXPECT_EQ(-EBADMSG, open_rc(path, 1, &why));
  EXPECT_NE(std::string::npos, why.find("data's checksum")) << why;
}

TEST(GraphFormat, TruncatedRefused)
{
  GraphDir d;
  const std::string path = d.file("t.csr");
  graph_header h;
  std::string why;
  write_small(path, &h);
  ASSERT_EQ(0, truncate(path.c_str(), (off_t)(h.file_size - 1)));
  EXPECT_EQ(-EIO, open_rc(path, 0, &why));
  EXPECT_NE(std::string::npos, why.find("truncated")) << why;
  ASSERT_EQ(0, truncate(path.c_str(), 100));
  EXPECT_EQ(-EIO, open_rc(path, 0, &why));
  EXPECT_NE(std::string::npos, why.find("shorter than the header")) << why;
  ASSERT_EQ(0, truncate(path.c_str(), 0));
  EXPECT_EQ(-EIO, open_rc(path, 0, &why));
}

TEST(GraphFormat, LongerFileRefused)
{
  GraphDir d;
  const std::string path = d.file("l.csr");
  graph_header h;
  std::string why;
  write_small(path, &h);
  ASSERT_EQ(0, truncate(path.c_str(), (off_t)(h.file_size + 4096)));
  EXPECT_EQ(-EINVAL, open_rc(path, 0, &why));
}

TEST(GraphFormat, MissingAndFolderRefused)
{
  GraphDir d;
  std::string why;
  EXPECT_EQ(-ENOENT, open_rc(d.file("none.csr"), 0, &why));
  EXPECT_EQ(-EINVAL, open_rc(d.path, 0, &why));
  EXPECT_NE(std::string::npos, why.find("not a regular file")) << why;
}

TEST(GraphFormat, EnsureKeepsACurrentFileAndRewritesAnother)
{
  GraphDir d;
  const std::string path = d.file("k.csr");
  graph_gen p = {GRAPH_GEN_KRONECKER, 1, 6, 4, 9};
  graph_err err = {};
  int made = -1;
  ASSERT_EQ(0, graph_ensure(path.c_str(), &p, 0, &made, &err)) << err.msg;
  EXPECT_EQ(1, made);
  ASSERT_EQ(0, graph_ensure(path.c_str(), &p, 0, &made, &err)) << err.msg;
  EXPECT_EQ(0, made);
  ASSERT_EQ(0, graph_ensure(path.c_str(), &p, 1, &made, &err)) << err.msg;
  EXPECT_EQ(1, made);
  p.seed = 10; /* another graph under the same name: rewritten */
  ASSERT_EQ(0, graph_ensure(path.c_str(), &p, 0, &made, &err)) << err.msg;
  EXPECT_EQ(1, made);
  graph_header h;
  ASSERT_EQ(0, graph_read_header(path.c_str(), &h, &err)) << err.msg;
  const uint32_t bad = 0xFFFF; /* damaged data: rewritten */
  poke(path, (off_t)h.neigh_off, &bad, 4);
  ASSERT_EQ(0, graph_ensure(path.c_str(), &p, 0, &made, &err)) << err.msg;
  EXPECT_EQ(1, made);
}

TEST(GraphFormat, DataSumOverManyPiecesIsStable)
{
  std::vector<uint8_t> buf((3u << 20) + 5);
  for (size_t i = 0; i < buf.size(); i++)
    buf[i] = (uint8_t)(i * 31 + 7);
  const uint64_t a = graph_data_sum(buf.data(), buf.size());
  EXPECT_EQ(a, graph_data_sum(buf.data(), buf.size()));
  buf[2u << 20] ^= 1;
  EXPECT_NE(a, graph_data_sum(buf.data(), buf.size()));
}

} // namespace
