/*
 * stats_json_test.cpp - what GPUFS_STATS=FILE writes at gpufs_stop
 * (libgpufs/host/stats_json.c): every field of struct gpufs_stats of every
 * instance, by name, in the struct's order, parsed back here.
 */
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

#include "libgpufs/host/stats_json.h"

namespace {

constexpr size_t kFields = sizeof(struct gpufs_stats) / sizeof(uint64_t);

/* Instance i's field k holds 1000 * i + k. */
std::vector<gpufs_stats> Numbered(uint32_t n)
{
  std::vector<gpufs_stats> st(n);
  for (uint32_t i = 0; i < n; i++) {
    uint64_t w[kFields];
    for (size_t k = 0; k < kFields; k++)
      w[k] = 1000 * i + k;
    memcpy(&st[i], w, sizeof(w));
  }
  return st;
}

std::string Written(const std::vector<gpufs_stats> &st)
{
  char *buf = nullptr;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  EXPECT_EQ(0, gpufs_stats_json_write(f, st.data(), (uint32_t)st.size()));
  fclose(f);
  std::string s(buf, len);
  free(buf);
  return s;
}

/* The "key": value pairs of one instance's line, in order. */
std::vector<std::pair<std::string, unsigned long long>> Pairs(const std::string &line)
{
  std::vector<std::pair<std::string, unsigned long long>> out;
  size_t at = 0;
  while ((at = line.find('"', at)) != std::string::npos) {
    size_t end = line.find('"', at + 1);
    unsigned long long v = 0;
    int used = 0;
    if (sscanf(line.c_str() + end + 1, ": %llu%n", &v, &used) != 1)
      break;
    out.emplace_back(line.substr(at + 1, end - at - 1), v);
    at = end + 1 + used;
  }
  return out;
}

TEST(StatsJson, EveryFieldOfEveryInstanceInOrder)
{
  std::string s = Written(Numbered(2));
  ASSERT_EQ(0u, s.rfind("{\"version\": \"", 0)) << s;
  std::vector<std::string> lines;
  for (size_t a = 0, b; (b = s.find('\n', a)) != std::string::npos; a = b + 1)
    lines.push_back(s.substr(a, b - a));
  ASSERT_EQ(4u, lines.size()) << s;
  EXPECT_EQ("]}", lines[3]);
  EXPECT_EQ(',', lines[1].back()) << "instances are separated";
  EXPECT_EQ('}', lines[2].back());
  for (uint32_t i = 0; i < 2; i++) {
    auto pairs = Pairs(lines[1 + i]);
    ASSERT_EQ(kFields + 1, pairs.size()) << lines[1 + i];
    EXPECT_EQ("instance", pairs[0].first);
    EXPECT_EQ(i, pairs[0].second);
    for (size_t k = 0; k < kFields; k++)
      EXPECT_EQ(1000 * i + k, pairs[1 + k].second) << pairs[1 + k].first;
    EXPECT_EQ("hits", pairs[1].first);
    EXPECT_EQ("misses", pairs[2].first);
    EXPECT_EQ("pins_bytes", pairs.back().first);
  }
}

TEST(StatsJson, ExactTextOfTheFirstFields)
{
  gpufs_stats st;
  memset(&st, 0, sizeof(st));
  st.hits = 7;
  st.misses = 3;
  st.bytes_read = 1ull << 40;
  std::string s = Written({st});
  EXPECT_NE(std::string::npos, s.find("\n{\"instance\": 0, \"hits\": 7, \"misses\": 3, \"evictions\": 0,")) << s;
  EXPECT_NE(std::string::npos, s.find(", \"bytes_read\": 1099511627776,")) << s;
  EXPECT_EQ("}\n]}\n", s.substr(s.size() - 5));
}

TEST(StatsJson, NoInstancesIsAnEmptyArray)
{
  std::string s = Written({});
  EXPECT_EQ("\"instances\": [\n]}\n", s.substr(s.find("\"instances\"")));
}

TEST(StatsJson, FileIsWrittenOrTheErrorReturned)
{
  char path[] = "/tmp/stats_json_test_XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  auto st = Numbered(1);
  ASSERT_EQ(0, gpufs_stats_json_file(path, st.data(), 1));
  FILE *f = fopen(path, "r");
  ASSERT_NE(nullptr, f);
  char buf[4096];
  size_t n = fread(buf, 1, sizeof(buf), f);
  fclose(f);
  unlink(path);
  EXPECT_EQ(Written(st), std::string(buf, n));
  EXPECT_EQ(-ENOENT, gpufs_stats_json_file("/no/such/folder/stats.json", st.data(), 1));
}

} // namespace
