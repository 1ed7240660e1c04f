/*
 * filemap_test.cpp - the daemon's reads from file mappings
 * (libgpufs/host/filemap.h and the host file table's mappings) and their
 * pread fallback: the guarded copy survives a file shrunk under
 * its mapping, and through the daemon every such case gets the bytes or
 * the end of file that pread gives: a file shrunk by another process, a
 * truncation by the daemon, a file that grew or was empty at the first
 * READ, a mapping the kernel refuses, and many workers making the mapping
 * of a file at once.  The DaemonRead suite (daemon_read_test.cpp) runs
 * every read case mapped and with the mapping refused.
 */
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <fcntl.h>
#include <random>
#include <string>
#include <sys/mman.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "daemon_fixture.h"
#include "libgpufs/host/filemap.h"

using namespace gpufs_test;

namespace {

/* Append pattern(seed) bytes [from, to) to the file at path. */
void grow_pattern_file(const std::string &path, uint64_t from, uint64_t to, uint64_t seed)
{
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  std::vector<uint8_t> buf(to - from);
  for (uint64_t i = 0; i < buf.size(); i++) buf[i] = pattern_byte(seed, from + i);
  ASSERT_EQ((ssize_t)buf.size(), pwrite(fd, buf.data(), buf.size(), (off_t)from));
  close(fd);
}

/* A pattern file of len bytes (seed), open for reading and writing and
 * mapped with gpufs_filemap_map; unmapped and closed at the end. */
struct MappedFile {
  TempDir dir;
  uint64_t len = 0;
  int fd = -1;
  uint8_t *m = nullptr;
  void make(const char *name, uint64_t size, uint64_t seed)
  {
    const std::string path = dir.file(name);
    ASSERT_EQ(0, write_pattern_file(path, size, seed));
    fd = open(path.c_str(), O_RDWR);
    ASSERT_GE(fd, 0);
    gpufs_io_ops io = {};
    io.mmap = mmap;
    m = (uint8_t *)gpufs_filemap_map(&io, fd, size);
    ASSERT_NE(nullptr, m);
    len = size;
  }
  ~MappedFile()
  {
    gpufs_filemap_unmap(m, len);
    if (fd >= 0) close(fd);
  }
};

TEST(Filemap, CopyCatchesThePagesOfAShrunkFile)
{
  MappedFile f;
  ASSERT_NO_FATAL_FAILURE(f.make("shrink", 16 * kStride, 7));
  const int fd = f.fd;
  const uint8_t *m = f.m;
  std::vector<uint8_t> buf(2 * kStride);
  ASSERT_EQ(0, gpufs_filemap_copy(buf.data(), m + 3 * kStride, 2 * kStride, GPUFS_COPY_STREAM));
  EXPECT_EQ(-1, first_mismatch(buf.data(), 2 * kStride, 7, 3 * kStride));

  ASSERT_EQ(0, ftruncate(fd, kStride));
  /* twice: the first fault must not leave SIGBUS blocked */
  EXPECT_EQ(-EFAULT, gpufs_filemap_copy(buf.data(), m + 3 * kStride, kStride, GPUFS_COPY_STREAM));
  EXPECT_EQ(-EFAULT, gpufs_filemap_copy(buf.data(), m + 8 * kStride, 100, GPUFS_COPY_CACHED));
  ASSERT_EQ(0, gpufs_filemap_copy(buf.data(), m, kStride, GPUFS_COPY_CACHED));
  EXPECT_EQ(-1, first_mismatch(buf.data(), kStride, 7, 0));
}

/* Both kinds of stores (streaming: 64-byte blocks where both ends are
 * 16-byte aligned, the rest plainly): every length and alignment around
 * those bounds gives exactly the mapping's bytes, and nothing past n
 * changes. */
TEST(Filemap, CopyGivesEveryByteAtEveryAlignmentAndLength)
{
  MappedFile f;
  ASSERT_NO_FATAL_FAILURE(f.make("align", 4 * kStride, 9));
  const uint8_t *m = f.m;
  alignas(64) static uint8_t buf[2 * kStride + 256];
  const size_t lens[] = {0, 1, 15, 16, 63, 64, 65, 127, 128, 4095, 4096, 4097, kStride + 48};
  const size_t offs[] = {0, 1, 8, 16, 17, 64, kStride - 16};
  const size_t dsts[] = {0, 3, 16, 64};
  for (gpufs_copy_stores how : {GPUFS_COPY_CACHED, GPUFS_COPY_STREAM}) {
    for (size_t len : lens) {
      for (size_t off : offs) {
        for (size_t d : dsts) {
          memset(buf, 0xA5, sizeof(buf));
          ASSERT_EQ(0, gpufs_filemap_copy(buf + d, m + off, len, how));
          ASSERT_EQ(-1, first_mismatch(buf + d, len, 9, off))
              << len << " " << off << " " << d << " " << how;
          for (size_t i = 0; i < d; i++) ASSERT_EQ(0xA5, buf[i]) << "before " << d;
          for (size_t i = d + len; i < sizeof(buf); i++) ASSERT_EQ(0xA5, buf[i]) << "past " << len;
        }
      }
    }
  }
}

/* Streaming stores only for staging larger than the last-level cache, and
 * never where that size is unknown. */
TEST(Filemap, StreamsOnlyStagingLargerThanTheLastLevelCache)
{
  const long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
  EXPECT_EQ(GPUFS_COPY_CACHED, gpufs_filemap_stores(0));
  if (llc <= 0) {
    EXPECT_EQ(GPUFS_COPY_CACHED, gpufs_filemap_stores(1ull << 50));
    return;
  }
  EXPECT_EQ(GPUFS_COPY_CACHED, gpufs_filemap_stores((uint64_t)llc));
#if defined(__x86_64__) && defined(__SSE2__)
  EXPECT_EQ(GPUFS_COPY_STREAM, gpufs_filemap_stores((uint64_t)llc + 1));
#else
  EXPECT_EQ(GPUFS_COPY_CACHED, gpufs_filemap_stores((uint64_t)llc + 1));
#endif
}

class DaemonMap : public DaemonFixture, public ::testing::Test {
protected:
  Request read_one(int32_t hfid, uint64_t off, uint32_t len = kStride)
  {
    Request r = read_req(hfid, off, len);
    EXPECT_EQ(0, client_run(*q, &r, 1));
    return r;
  }
};

/* Another process cuts the file under the mapping: a page past the new
 * end raises SIGBUS in the worker's copy, which the pread after it
 * answers with the end of the file; the pages before it still come from
 * the mapping. */
TEST_F(DaemonMap, FileShrunkByAnotherProcessReadsAsEof)
{
  start();
  TestFile f = make_file("cut", 16 * kStride, 3);
  expect_read_ok(read_one(f.hfid, 10 * kStride), f.size, f.seed);
  EXPECT_EQ(1u, stats().map_copies);
  ASSERT_EQ(0, truncate(f.path.c_str(), 4 * kStride));
  Request r = read_one(f.hfid, 10 * kStride);
  EXPECT_EQ(0, r.result);
  EXPECT_EQ(1u, stats().map_faults);
  expect_read_ok(read_one(f.hfid, 2 * kStride), 4 * kStride, f.seed);
  EXPECT_EQ(2u, stats().map_copies);
}

/* The daemon's own TRUNCATE retires the mapping: reads past the cut are
 * preread (no SIGBUS), and so is everything after, until the file is
 * opened again. */
TEST_F(DaemonMap, TruncateByTheDaemonRetiresTheMapping)
{
  start();
  TestFile f = make_file("trunc", 16 * kStride, 4, false);
  uint64_t out[4];
  const int32_t h = (int32_t)client_open(*q, f.path, O_RDWR, out);
  ASSERT_GE(h, 0);
  expect_read_ok(read_one(h, 9 * kStride), f.size, f.seed);
  Request t;
  t.op = GPUFS_OP_TRUNCATE;
  t.hfid = h;
  t.offset = 3 * kStride;
  ASSERT_EQ(0, client_run(*q, &t, 1));
  ASSERT_EQ(0, t.result);
  const gpufs_daemon_stats before = stats();
  EXPECT_EQ(0, read_one(h, 9 * kStride).result);
  expect_read_ok(read_one(h, kStride), 3 * kStride, f.seed);
  const gpufs_daemon_stats after = stats();
  EXPECT_EQ(0u, after.map_faults);
  EXPECT_EQ(before.map_copies, after.map_copies);
  EXPECT_EQ(2u, after.preads - before.preads) << "both preread, none copied";
}

/* The mapping has the file's length at the first READ: pages the file
 * gained later are preread, with their bytes. */
TEST_F(DaemonMap, BytesPastTheMappingArePreread)
{
  start();
  TestFile f = make_file("grow", 4 * kStride, 5);
  expect_read_ok(read_one(f.hfid, kStride), f.size, f.seed);
  grow_pattern_file(f.path, f.size, 8 * kStride + 10, f.seed);
  const gpufs_daemon_stats before = stats();
  expect_read_ok(read_one(f.hfid, 6 * kStride), 8 * kStride + 10, f.seed);
  expect_read_ok(read_one(f.hfid, 8 * kStride), 8 * kStride + 10, f.seed);
  expect_read_ok(read_one(f.hfid, 3 * kStride), 8 * kStride + 10, f.seed);
  const gpufs_daemon_stats after = stats();
  /* page 6, then page 8 (its 10 bytes and the pread that finds the end),
   * then page 3 from the mapping */
  EXPECT_EQ(4u, after.preads - before.preads);
  EXPECT_EQ(1u, after.map_copies - before.map_copies);
}

/* An empty file is not mapped; once it has bytes, a later READ maps it. */
TEST_F(DaemonMap, EmptyFileIsMappedOnceItHasBytes)
{
  start();
  TestFile f = make_file("empty", 0, 6);
  EXPECT_EQ(0, read_one(f.hfid, 0).result);
  grow_pattern_file(f.path, 0, 3 * kStride, f.seed);
  expect_read_ok(read_one(f.hfid, kStride), 3 * kStride, f.seed);
  EXPECT_EQ(1u, stats().map_copies);
}

ssize_t refuse_mmap_calls;
void *refuse_mmap(void *, size_t, int, int, int, off_t)
{
  refuse_mmap_calls++;
  errno = ENOMEM;
  return MAP_FAILED;
}

/* A mapping the kernel refuses leaves the file on pread, asked once. */
TEST_F(DaemonMap, RefusedMappingReadsWithPread)
{
  static gpufs_io_ops io = {};
  io.mmap = refuse_mmap;
  refuse_mmap_calls = 0;
  start(2, 64, 64, &io);
  TestFile f = make_file("refused", 8 * kStride + 5, 8);
  for (uint64_t p = 0; p < 9; p++) expect_read_ok(read_one(f.hfid, p * kStride), f.size, f.seed);
  EXPECT_EQ(0u, stats().map_copies);
  EXPECT_EQ(10u, stats().preads) << "8 pages, then 5 bytes and the pread that finds the end";
  EXPECT_EQ(1, refuse_mmap_calls);
}

std::atomic<int> hooked_preads{0};
ssize_t counting_pread(int fd, void *buf, size_t len, off_t off)
{
  hooked_preads++;
  return pread(fd, buf, len, off);
}

/* A caller who replaces pread (fault injection) and not mmap gets no
 * mapping: every READ goes through their pread. */
TEST_F(DaemonMap, ReplacedPreadSeesEveryRead)
{
  static gpufs_io_ops io = {};
  io.pread = counting_pread;
  hooked_preads = 0;
  start(2, 64, 64, &io);
  TestFile f = make_file("hooked", 6 * kStride, 10);
  for (uint64_t p = 0; p < 6; p++) expect_read_ok(read_one(f.hfid, p * kStride), f.size, f.seed);
  EXPECT_EQ(0u, stats().map_copies);
  EXPECT_EQ(6, hooked_preads.load());
}

/* Many clients read a file right after its open, so that several workers
 * race to make its mapping; then it is closed (the last unpin unmaps) and
 * opened again, 20 times.  Every byte is checked (ThreadSanitizer watches
 * the mapping's publication). */
TEST_F(DaemonMap, WorkersRaceToMapAFile)
{
  start(4);
  TestFile f = make_file("race", 64 * kStride, 9, false);
  for (int round = 0; round < 20; round++) {
    uint64_t out[4];
    const int32_t h = (int32_t)client_open(*q, f.path, O_RDONLY, out);
    ASSERT_GE(h, 0);
    std::atomic<int> bad{0};
    std::vector<std::thread> th;
    for (int c = 0; c < 4; c++)
      th.emplace_back([&, c] {
        std::mt19937 rng(round * 16 + c);
        for (int i = 0; i < 8; i++) {
          Request r = read_req(h, (uint64_t)(rng() % 64) * kStride, kStride);
          if (client_run(*q, &r, 1) != 0 || r.result != (int64_t)kStride ||
              first_mismatch(r.data.data(), kStride, f.seed, r.offset) != -1)
            bad++;
        }
      });
    for (auto &t : th) t.join();
    EXPECT_EQ(0, bad.load()) << "round " << round;
    ASSERT_EQ(0, client_close(*q, h));
  }
  EXPECT_GT(stats().map_copies, 0u);
  EXPECT_EQ(0u, stats().map_faults);
}

} // namespace
