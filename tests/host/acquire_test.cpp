/*
 * acquire_test.cpp - change detection for gpufs_acquire on its own
 * (libgpufs/host/acquire_hash.h): page hashes from 1 or many threads agree and
 * cover the last partial page; the first acquire reports every page; a
 * host write to one, some or all pages reports exactly those; a write of
 * the same bytes reports nothing; another size or page size reports every
 * page; a forgotten file starts again.
 */
#include <gtest/gtest.h>

#include <cstdlib>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "daemon_fixture.h"
#include "libgpufs/host/acquire_hash.h"

using namespace gpufs_test;

namespace {

constexpr uint32_t kPage = 4096;

struct Acquire : ::testing::Test {
  TempDir dir;
  gpufs_acq_table *t = nullptr;
  void SetUp() override { ASSERT_EQ(0, gpufs_acq_table_create(&t)); }
  void TearDown() override { gpufs_acq_table_destroy(t); }

  /* Hash path's pages with nthreads and update the table: the changed
   * pages, in order. */
  std::vector<uint64_t> acquire(const std::string &path, uint32_t page = kPage,
                                uint32_t nthreads = 4)
  {
    std::vector<uint64_t> out;
    int fd = open(path.c_str(), O_RDONLY);
    EXPECT_GE(fd, 0);
    struct stat st;
    EXPECT_EQ(0, fstat(fd, &st));
    const uint64_t npages = ((uint64_t)st.st_size + page - 1) / page;
    uint64_t *hash = (uint64_t *)malloc((npages ? npages : 1) * sizeof(uint64_t));
    const gpufs_acq_pages pg = {(uint64_t)st.st_size, page, 0, npages};
    EXPECT_EQ(0, gpufs_acq_hash(fd, &pg, nthreads, hash));
    close(fd);
    uint64_t *changed = nullptr, n = 0;
    EXPECT_EQ(0, gpufs_acq_update(t, &st, page, hash, &changed, &n));
    out.assign(changed, changed + n);
    free(changed);
    return out;
  }
  void write_at(const std::string &path, uint64_t off, const std::string &bytes)
  {
    int fd = open(path.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    ASSERT_EQ((ssize_t)bytes.size(), pwrite(fd, bytes.data(), bytes.size(), (off_t)off));
    close(fd);
  }
  std::vector<uint64_t> all(uint64_t n)
  {
    std::vector<uint64_t> v;
    for (uint64_t p = 0; p < n; p++) v.push_back(p);
    return v;
  }
};

TEST_F(Acquire, ThreadsAgreeAndTheLastPageCounts)
{
  const uint64_t size = 37 * kPage + 123;
  const std::string f = dir.file("h");
  ASSERT_EQ(0, write_pattern_file(f, size, 3));
  int fd = open(f.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  std::vector<uint64_t> one(38), many(38);
  const gpufs_acq_pages pg = {size, kPage, 0, 38};
  ASSERT_EQ(0, gpufs_acq_hash(fd, &pg, 1, one.data()));
  ASSERT_EQ(0, gpufs_acq_hash(fd, &pg, 16, many.data()));
  std::vector<uint64_t> part(5);
  const gpufs_acq_pages mid = {size, kPage, 30, 35};
  ASSERT_EQ(0, gpufs_acq_hash(fd, &mid, 2, part.data()));
  for (int i = 0; i < 5; i++) EXPECT_EQ(one[30 + i], part[i]) << "a range's pages";
  EXPECT_EQ(one, many);
  close(fd);
  write_at(f, size - 1, "x"); /* the partial page's last byte */
  fd = open(f.c_str(), O_RDONLY);
  ASSERT_EQ(0, gpufs_acq_hash(fd, &pg, 3, many.data()));
  close(fd);
  for (uint64_t p = 0; p < 37; p++) EXPECT_EQ(one[p], many[p]) << p;
  EXPECT_NE(one[37], many[37]);
}

TEST_F(Acquire, ReportsExactlyThePagesThatChanged)
{
  const uint64_t npages = 64;
  const std::string f = dir.file("g");
  ASSERT_EQ(0, write_pattern_file(f, npages * kPage, 5));
  EXPECT_EQ(all(npages), acquire(f)) << "the first acquire: every page";
  EXPECT_TRUE(acquire(f).empty()) << "nothing changed";
  write_at(f, 9 * kPage + 100, "abc");
  EXPECT_EQ(std::vector<uint64_t>{9}, acquire(f)) << "one page";
  write_at(f, 1 * kPage, "a");
  write_at(f, 30 * kPage + kPage - 2, "bcde"); /* straddles 30 and 31 */
  write_at(f, 63 * kPage + 5, "f");
  EXPECT_EQ((std::vector<uint64_t>{1, 30, 31, 63}), acquire(f)) << "some pages";
  ASSERT_EQ(0, write_pattern_file(f, npages * kPage, 6)); /* truncated, rewritten */
  EXPECT_EQ(all(npages), acquire(f)) << "all pages";
  ASSERT_EQ(0, write_pattern_file(f, npages * kPage, 6));
  EXPECT_TRUE(acquire(f).empty()) << "the same bytes written again";
}

/* Unchanged since the last acquire (size, mtime, ctime): nothing to hash.
 * A range acquire compares only its pages, once the file is known. */
TEST_F(Acquire, UnchangedFilesAndRanges)
{
  const std::string f = dir.file("r");
  ASSERT_EQ(0, write_pattern_file(f, 16 * kPage, 8));
  struct stat st;
  ASSERT_EQ(0, stat(f.c_str(), &st));
  EXPECT_EQ(0, gpufs_acq_unchanged(t, &st, kPage)) << "no record";
  acquire(f);
  EXPECT_EQ(1, gpufs_acq_unchanged(t, &st, kPage));
  EXPECT_EQ(0, gpufs_acq_unchanged(t, &st, 2 * kPage)) << "another page size";
  write_at(f, 5 * kPage, "z");
  write_at(f, 12 * kPage, "z");
  ASSERT_EQ(0, stat(f.c_str(), &st));
  EXPECT_EQ(0, gpufs_acq_unchanged(t, &st, kPage)) << "written";
  /* the range [4, 8) of pages: page 5 found, page 12 left (the caller said
   * nothing else changed) */
  int fd = open(f.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  const gpufs_acq_pages pg = {16 * kPage, kPage, 4, 8};
  uint64_t h[4];
  ASSERT_EQ(0, gpufs_acq_hash(fd, &pg, 2, h));
  close(fd);
  uint64_t *changed = nullptr, n = 0;
  ASSERT_EQ(0, gpufs_acq_update_range(t, &st, &pg, h, &changed, &n));
  ASSERT_EQ(1u, n);
  EXPECT_EQ(5u, changed[0]);
  free(changed);
  EXPECT_EQ(1, gpufs_acq_unchanged(t, &st, kPage)) << "the range's acquire took the times";
  EXPECT_EQ(std::vector<uint64_t>{12}, acquire(f)) << "a whole hash finds what the range left";
  const std::string g = dir.file("unknown");
  ASSERT_EQ(0, write_pattern_file(g, 4 * kPage, 9));
  struct stat sg;
  ASSERT_EQ(0, stat(g.c_str(), &sg));
  EXPECT_EQ(-ENOENT, gpufs_acq_update_range(t, &sg, &pg, h, &changed, &n)) << "no record: acquire it whole";
}

TEST_F(Acquire, AnotherShapeReportsEveryPage)
{
  const std::string f = dir.file("s");
  ASSERT_EQ(0, write_pattern_file(f, 8 * kPage, 7));
  acquire(f);
  ASSERT_EQ(0, truncate(f.c_str(), 8 * kPage + 10));
  EXPECT_EQ(all(9), acquire(f)) << "another size";
  EXPECT_EQ(all(3), acquire(f, 4 * kPage)) << "another page size";
  EXPECT_TRUE(acquire(f, 4 * kPage).empty());
  struct stat st;
  ASSERT_EQ(0, stat(f.c_str(), &st));
  gpufs_acq_forget(t, &st);
  EXPECT_EQ(all(3), acquire(f, 4 * kPage)) << "forgotten";
  const std::string e = dir.file("empty");
  ASSERT_EQ(0, write_pattern_file(e, 0, 1));
  EXPECT_TRUE(acquire(e).empty()) << "an empty file has no page";
}

} // namespace
