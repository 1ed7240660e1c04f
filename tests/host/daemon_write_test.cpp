/*
 * daemon_write_test.cpp - the host half of the write path: WRITE (merged
 * like reads, exactly the named bytes), FSYNC, TRUNCATE, UNLINK, creating
 * opens, errors that reach the caller, and versions that the daemon's own
 * writes do not bump.  Every written file is compared byte for byte.
 */
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "daemon_fixture.h"

using namespace gpufs_test;

namespace {

/* The bytes a file holds. */
std::vector<uint8_t> file_bytes(const std::string &path)
{
  std::vector<uint8_t> v;
  int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) return v;
  uint8_t buf[65536];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0) v.insert(v.end(), buf, buf + n);
  close(fd);
  return v;
}

Request simple_req(uint32_t op, int32_t hfid, uint64_t offset = 0)
{
  Request r;
  r.op = op;
  r.hfid = hfid;
  r.offset = offset;
  return r;
}

std::vector<uint8_t> pattern(uint64_t seed, uint64_t off, size_t n)
{
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; i++) v[i] = pattern_byte(seed, off + i);
  return v;
}

/* fault injection: pwrite fails with g_fail_errno while it is nonzero */
std::atomic<int> g_fail_errno{0};
ssize_t hook_pwrite(int fd, const void *buf, size_t len, off_t off)
{
  int e = g_fail_errno.load();
  if (e) {
    errno = e;
    return -1;
  }
  return pwrite(fd, buf, len, off);
}
const gpufs_io_ops kFailingWrites = [] {
  gpufs_io_ops io{};
  io.pwrite = hook_pwrite;
  return io;
}();

class DaemonWrite : public DaemonFixture, public ::testing::Test {
protected:
  void SetUp() override
  {
    g_fail_errno = 0;
    start(2, 64, 16, &kFailingWrites);
  }
  int32_t open_rw(const std::string &path, uint32_t extra = 0, uint64_t out[4] = nullptr)
  {
    uint64_t o[4];
    int64_t h = client_open(*q, path, O_RDWR | extra, out ? out : o, 0644);
    return (int32_t)h;
  }
};

TEST_F(DaemonWrite, PagesMergeIntoOnePwriteAndLandExactly)
{
  std::string path = dir.file("w");
  int32_t h = open_rw(path, O_CREAT);
  ASSERT_GE(h, 0);
  std::vector<Request> reqs;
  for (uint32_t i = 0; i < 16; i++)
    reqs.push_back(write_req(h, (uint64_t)i * kStride, pattern(41, (uint64_t)i * kStride, kStride)));
  ASSERT_EQ(0, client_run(*q, reqs.data(), 16, true));
  for (auto &r : reqs) EXPECT_EQ((int64_t)kStride, r.result);
  EXPECT_EQ(1u, stats().pwrites) << "16 contiguous pages, one pwrite";
  EXPECT_EQ(15u, stats().merged);
  EXPECT_EQ(16ull * kStride, stats().bytes_written);
  std::vector<uint8_t> f = file_bytes(path);
  ASSERT_EQ(16u * kStride, f.size());
  EXPECT_EQ(-1, first_mismatch(f.data(), f.size(), 41, 0));
  EXPECT_EQ(0, client_close(*q, h));
}

TEST_F(DaemonWrite, OnlyTheNamedBytesChange)
{
  TestFile f = make_file("part", 3 * kStride, 42, false);
  int32_t h = open_rw(f.path);
  ASSERT_GE(h, 0);
  std::vector<uint8_t> piece(100, 0x5a);
  Request r = write_req(h, kStride + 37, piece);
  ASSERT_EQ(0, client_run(*q, &r, 1));
  EXPECT_EQ(100, r.result);
  std::vector<uint8_t> b = file_bytes(f.path);
  ASSERT_EQ(3u * kStride, b.size());
  for (uint64_t i = 0; i < b.size(); i++) {
    uint8_t want = (i >= kStride + 37 && i < kStride + 137) ? 0x5a : pattern_byte(42, i);
    ASSERT_EQ(want, b[i]) << "byte " << i;
  }
}

/* The GPU writes even 64-byte pieces of two pages through the daemon while
 * the CPU writes the odd ones itself: both sets survive. */
TEST_F(DaemonWrite, DisjointWritersOfOnePageBothSurvive)
{
  TestFile f = make_file("mixed", 2 * kStride, 43, false);
  int32_t h = open_rw(f.path);
  ASSERT_GE(h, 0);
  int cpu = open(f.path.c_str(), O_WRONLY);
  ASSERT_GE(cpu, 0);
  for (uint64_t off = 0; off < 2 * kStride; off += 128) {
    Request r = write_req(h, off, std::vector<uint8_t>(64, 0xee));
    ASSERT_EQ(0, client_run(*q, &r, 1));
    ASSERT_EQ(64, r.result);
    std::vector<uint8_t> odd(64, 0x11);
    ASSERT_EQ(64, pwrite(cpu, odd.data(), 64, (off_t)(off + 64)));
  }
  close(cpu);
  std::vector<uint8_t> b = file_bytes(f.path);
  ASSERT_EQ(2u * kStride, b.size());
  for (uint64_t i = 0; i < b.size(); i++) ASSERT_EQ((i / 64) % 2 ? 0x11 : 0xee, b[i]) << i;
}

TEST_F(DaemonWrite, WritesExtendTruncateShrinksAndGrows)
{
  std::string path = dir.file("grow");
  int32_t h = open_rw(path, O_CREAT | O_TRUNC);
  ASSERT_GE(h, 0);
  Request w = write_req(h, 10 * kStride + 5, pattern(44, 0, 300));
  ASSERT_EQ(0, client_run(*q, &w, 1));
  EXPECT_EQ(300, w.result);
  uint64_t out[4];
  EXPECT_EQ(0, client_fstat(*q, h, out));
  EXPECT_EQ(10ull * kStride + 305, out[0]);
  Request t = simple_req(GPUFS_OP_TRUNCATE, h, 1000);
  ASSERT_EQ(0, client_run(*q, &t, 1));
  EXPECT_EQ(0, t.result);
  EXPECT_EQ(0, client_fstat(*q, h, out));
  EXPECT_EQ(1000u, out[0]);
  t = simple_req(GPUFS_OP_TRUNCATE, h, 3 * kStride);
  ASSERT_EQ(0, client_run(*q, &t, 1));
  std::vector<uint8_t> b = file_bytes(path);
  ASSERT_EQ(3u * kStride, b.size());
  for (uint8_t c : b) ASSERT_EQ(0, c) << "a grown file reads zeros";
  Request s = simple_req(GPUFS_OP_FSYNC, h);
  ASSERT_EQ(0, client_run(*q, &s, 1));
  EXPECT_EQ(0, s.result);
}

TEST_F(DaemonWrite, CreateExclTruncUnlink)
{
  std::string path = dir.file("new");
  uint64_t out[4];
  EXPECT_EQ(-ENOENT, client_open(*q, path, O_RDWR, out));
  int32_t h = open_rw(path, O_CREAT | O_EXCL);
  ASSERT_GE(h, 0);
  EXPECT_EQ(-EEXIST, client_open(*q, path, O_RDWR | O_CREAT | O_EXCL, out, 0644));
  Request w = write_req(h, 0, pattern(45, 0, 1000));
  ASSERT_EQ(0, client_run(*q, &w, 1));
  EXPECT_EQ(0, client_close(*q, h));
  int32_t h2 = open_rw(path, O_TRUNC, out);
  ASSERT_GE(h2, 0);
  EXPECT_EQ(0u, out[0]) << "O_TRUNC empties the file";
  EXPECT_EQ(0, client_close(*q, h2));
  Request u;
  u.op = GPUFS_OP_UNLINK;
  u.path = path;
  ASSERT_EQ(0, client_run(*q, &u, 1));
  EXPECT_EQ(0, u.result);
  struct stat st;
  EXPECT_NE(0, stat(path.c_str(), &st));
  ASSERT_EQ(0, client_run(*q, &u, 1));
  EXPECT_EQ(-ENOENT, u.result);
  u.unterminated = true;
  ASSERT_EQ(0, client_run(*q, &u, 1));
  EXPECT_EQ(-ENAMETOOLONG, u.result);
}

TEST_F(DaemonWrite, WriteOnAReadOnlyDescriptorIsEbadf)
{
  TestFile f = make_file("ro", kStride, 46);
  Request w = write_req(f.hfid, 0, std::vector<uint8_t>(10, 1));
  ASSERT_EQ(0, client_run(*q, &w, 1));
  EXPECT_EQ(-EBADF, w.result);
  std::vector<uint8_t> b = file_bytes(f.path);
  EXPECT_EQ(-1, first_mismatch(b.data(), b.size(), 46, 0)) << "the file is unchanged";
}

/* A failing disk: the error reaches the caller, nothing is written; once the
 * disk works again the same write lands. */
TEST_F(DaemonWrite, FailuresReachTheCallerAndTheRetryLands)
{
  TestFile f = make_file("full", 2 * kStride, 47, false);
  int32_t h = open_rw(f.path);
  ASSERT_GE(h, 0);
  std::vector<Request> reqs = {write_req(h, 0, std::vector<uint8_t>(kStride, 7)),
                               write_req(h, kStride, std::vector<uint8_t>(kStride, 8))};
  g_fail_errno = ENOSPC;
  ASSERT_EQ(0, client_run(*q, reqs.data(), 2, true));
  EXPECT_EQ(-ENOSPC, reqs[0].result);
  EXPECT_EQ(-ENOSPC, reqs[1].result);
  std::vector<uint8_t> b = file_bytes(f.path);
  EXPECT_EQ(-1, first_mismatch(b.data(), b.size(), 47, 0));
  g_fail_errno = EIO;
  Request one = write_req(h, 0, std::vector<uint8_t>(10, 9));
  ASSERT_EQ(0, client_run(*q, &one, 1));
  EXPECT_EQ(-EIO, one.result);
  g_fail_errno = 0;
  ASSERT_EQ(0, client_run(*q, reqs.data(), 2, true));
  EXPECT_EQ((int64_t)kStride, reqs[0].result);
  EXPECT_EQ((int64_t)kStride, reqs[1].result);
  b = file_bytes(f.path);
  ASSERT_EQ(2u * kStride, b.size());
  for (uint64_t i = 0; i < b.size(); i++) ASSERT_EQ(i < kStride ? 7 : 8, b[i]) << i;
}

/* Close-to-open: the daemon's own writes do not make the GPU's pages stale;
 * its truncation renews the version once (the GPU drops the file's pages);
 * a change made by someone else bumps it. */
TEST_F(DaemonWrite, OwnWritesKeepTheVersionOthersBumpIt)
{
  TestFile f = make_file("ver", kStride, 48, false);
  uint64_t out[4];
  int32_t h = open_rw(f.path, 0, out);
  ASSERT_GE(h, 0);
  uint64_t cid = out[1], version = out[2];
  Request w = write_req(h, 5000, std::vector<uint8_t>(100, 3));
  ASSERT_EQ(0, client_run(*q, &w, 1));
  EXPECT_EQ(0, client_close(*q, h));
  h = open_rw(f.path, 0, out);
  ASSERT_GE(h, 0);
  EXPECT_EQ(cid, out[1]);
  EXPECT_EQ(version, out[2]) << "the GPU's own writes leave its cache valid";
  Request t = simple_req(GPUFS_OP_TRUNCATE, h, 3 * kStride);
  ASSERT_EQ(0, client_run(*q, &t, 1));
  ASSERT_EQ(0, t.result);
  EXPECT_EQ(version + 1, t.out[0]) << "a truncation renews the version";
  EXPECT_EQ(0, client_close(*q, h));
  h = open_rw(f.path, 0, out);
  ASSERT_GE(h, 0);
  EXPECT_EQ(version + 1, out[2]) << "and the next open keeps the renewed one";
  EXPECT_EQ(0, client_close(*q, h));
  int cpu = open(f.path.c_str(), O_WRONLY | O_APPEND);
  ASSERT_GE(cpu, 0);
  ASSERT_EQ(1, write(cpu, "x", 1));
  close(cpu);
  h = open_rw(f.path, 0, out);
  ASSERT_GE(h, 0);
  EXPECT_EQ(version + 2, out[2]) << "a change by the CPU makes cached pages stale";
}

/* FADVISE reaches posix_fadvise on the daemon's descriptor: every advice
 * is taken, an unknown one is -EINVAL, a closed file -EBADF. */
TEST_F(DaemonWrite, FadviseReachesTheHost)
{
  TestFile f = make_file("adv", 4 * kStride, 51, false);
  uint64_t out[4];
  int64_t h = client_open(*q, f.path, O_RDONLY, out);
  ASSERT_GE(h, 0);
  const uint32_t advice[] = {POSIX_FADV_SEQUENTIAL, POSIX_FADV_RANDOM, POSIX_FADV_WILLNEED,
                             POSIX_FADV_DONTNEED, POSIX_FADV_NOREUSE, POSIX_FADV_NORMAL};
  for (uint32_t a : advice) {
    Request r = simple_req(GPUFS_OP_FADVISE, (int32_t)h, kStride);
    r.len = kStride;
    r.arg = a;
    ASSERT_EQ(0, client_run(*q, &r, 1));
    EXPECT_EQ(0, r.result) << "advice " << a;
  }
  Request bad = simple_req(GPUFS_OP_FADVISE, (int32_t)h, 0);
  bad.arg = 99;
  ASSERT_EQ(0, client_run(*q, &bad, 1));
  EXPECT_EQ(-EINVAL, bad.result);
  Request r = read_req((int32_t)h, 100, 300); /* the file reads as before */
  ASSERT_EQ(0, client_run(*q, &r, 1));
  ASSERT_EQ(300, r.result);
  EXPECT_EQ(pattern(51, 100, 300), r.data);
  EXPECT_EQ(0, client_close(*q, (int32_t)h));
  Request closed = simple_req(GPUFS_OP_FADVISE, (int32_t)h, 0);
  closed.arg = POSIX_FADV_WILLNEED;
  ASSERT_EQ(0, client_run(*q, &closed, 1));
  EXPECT_EQ(-EBADF, closed.result);
}

/* The GPU reads a page before it writes part of it, also through a
 * write-only descriptor: the daemon opens such files for reading too where
 * the permissions allow it, and as asked where they do not. */
TEST_F(DaemonWrite, WriteOnlyFilesServeReadsWherePermitted)
{
  TestFile f = make_file("wo", kStride, 50, false);
  uint64_t out[4];
  int64_t h = client_open(*q, f.path, O_WRONLY, out);
  ASSERT_GE(h, 0);
  Request r = read_req((int32_t)h, 100, 300);
  ASSERT_EQ(0, client_run(*q, &r, 1));
  ASSERT_EQ(300, r.result);
  EXPECT_EQ(pattern(50, 100, 300), r.data);
  EXPECT_EQ(0, client_close(*q, (int32_t)h));
  if (geteuid() == 0) return; /* root reads anything: the fallback cannot be seen */
  ASSERT_EQ(0, chmod(f.path.c_str(), 0200));
  h = client_open(*q, f.path, O_WRONLY, out);
  ASSERT_GE(h, 0) << "a write-only file still opens for writing";
  r = read_req((int32_t)h, 0, 10);
  ASSERT_EQ(0, client_run(*q, &r, 1));
  EXPECT_EQ(-EBADF, r.result);
  EXPECT_EQ(0, client_close(*q, (int32_t)h));
}

/* Unlink and re-create of a path is a new file, even when the file system
 * hands out the same inode number and the same times and size. */
TEST_F(DaemonWrite, UnlinkedThenRecreatedIsNew)
{
  std::string path = dir.file("again");
  uint64_t out[4];
  int32_t h = open_rw(path, O_CREAT | O_EXCL, out);
  ASSERT_GE(h, 0);
  uint64_t cid = out[1], version = out[2];
  EXPECT_EQ(0, client_close(*q, h));
  Request u;
  u.op = GPUFS_OP_UNLINK;
  u.path = path;
  ASSERT_EQ(0, client_run(*q, &u, 1));
  ASSERT_EQ(0, u.result);
  h = open_rw(path, O_CREAT | O_EXCL, out);
  ASSERT_GE(h, 0);
  EXPECT_TRUE(out[1] != cid || out[2] != version) << "the cache must not serve the old file";
  EXPECT_EQ(0, client_close(*q, h));
}


} // namespace

namespace {

/* The CPU changes the file while the GPU has it open, then the daemon
 * writes too: the CPU's change must still bump the version at the next
 * open (the daemon's refresh may not hide it). */
TEST_F(DaemonWrite, OthersChangesStayVisibleAfterOwnWrites)
{
  TestFile f = make_file("ver2", kStride, 49, false);
  uint64_t out[4];
  int32_t h = open_rw(f.path, 0, out);
  ASSERT_GE(h, 0);
  uint64_t version = out[2];
  int cpu = open(f.path.c_str(), O_WRONLY);
  ASSERT_GE(cpu, 0);
  ASSERT_EQ(4, pwrite(cpu, "abcd", 4, 0));
  close(cpu);
  Request w = write_req(h, 3000, std::vector<uint8_t>(100, 3));
  ASSERT_EQ(0, client_run(*q, &w, 1));
  ASSERT_EQ(100, w.result);
  EXPECT_EQ(0, client_close(*q, h));
  h = open_rw(f.path, 0, out);
  ASSERT_GE(h, 0);
  EXPECT_EQ(version + 1, out[2]) << "the CPU's write must make the GPU's pages stale";
}

/* write_behind: the daemon starts a file's write-out (sync_file_range
 * WRITE over the whole file, not waiting) each time it has written that
 * many more bytes to it; a failed start changes nothing. */
std::atomic<int> g_starts{0}, g_start_fd{-1}, g_start_fail{0};
std::atomic<unsigned> g_start_flags{0};
int hook_sync_range(int fd, off_t off, off_t len, unsigned int flags)
{
  g_starts++;
  g_start_fd = fd;
  g_start_flags = flags;
  if (off != 0 || len != 0) return -2; /* the whole file, always: the test sees it */
  if (g_start_fail.load()) {
    errno = EIO;
    return -1;
  }
  return sync_file_range(fd, off, len, flags);
}
const gpufs_io_ops kCountedStarts = {nullptr, nullptr, nullptr, nullptr, nullptr,
                                     nullptr, nullptr, nullptr, nullptr, hook_sync_range};

class DaemonWriteBehind : public DaemonFixture, public ::testing::TestWithParam<uint64_t> {
protected:
  void SetUp() override
  {
    g_starts = 0;
    g_start_fd = -1;
    g_start_fail = 0;
    g_start_flags = 0;
    write_behind = GetParam();
    start(2, 64, 16, &kCountedStarts);
  }
  /* n one-page WRITEs of pages 0, 2, 4 ... (never merged), one at a time;
   * the file then compared byte for byte */
  void write_pages(const std::string &path, uint32_t n)
  {
    uint64_t o[4];
    int32_t h = (int32_t)client_open(*q, path, O_RDWR | O_CREAT, o, 0644);
    ASSERT_GE(h, 0);
    for (uint32_t i = 0; i < n; i++) {
      const uint64_t off = 2ull * i * kStride;
      Request r = write_req(h, off, pattern(77, off, kStride));
      ASSERT_EQ(0, client_run(*q, &r, 1));
      ASSERT_EQ((int64_t)kStride, r.result) << "page " << i;
    }
    Request s = simple_req(GPUFS_OP_FSYNC, h);
    ASSERT_EQ(0, client_run(*q, &s, 1));
    EXPECT_EQ(0, s.result);
    EXPECT_EQ(0, client_close(*q, h));
    std::vector<uint8_t> f = file_bytes(path);
    ASSERT_EQ((2ull * n - 1) * kStride, f.size());
    for (uint32_t i = 0; i < n; i++)
      ASSERT_EQ(-1, first_mismatch(f.data() + 2ull * i * kStride, kStride, 77, 2ull * i * kStride))
          << "page " << i;
  }
};

TEST_P(DaemonWriteBehind, StartsTheWriteOutEveryThatManyBytes)
{
  write_pages(dir.file("wb"), 8);
  const uint64_t every = GetParam();
  /* 8 pages one by one: a start at each multiple of `every` pages */
  const uint64_t want = every == 0 ? 0 : 8 * kStride / every;
  EXPECT_EQ(want, (uint64_t)g_starts.load());
  EXPECT_EQ(want, stats().write_starts);
  if (want) {
    EXPECT_GE(g_start_fd.load(), 0);
    EXPECT_EQ((unsigned)SYNC_FILE_RANGE_WRITE, g_start_flags.load()) << "never waits";
  }
}

TEST_P(DaemonWriteBehind, AFailedStartLosesNothing)
{
  g_start_fail = 1;
  write_pages(dir.file("wbfail"), 8);
  EXPECT_EQ(0u, stats().errors);
}

INSTANTIATE_TEST_SUITE_P(Every, DaemonWriteBehind,
                         ::testing::Values(0ull, 3ull * kStride, 4ull * kStride, 1ull << 40),
                         [](const ::testing::TestParamInfo<uint64_t> &i) {
                           return i.param == 0 ? std::string("off")
                                  : i.param >= (1ull << 40)
                                      ? std::string("never_reached")
                                      : std::to_string(i.param / kStride) + "_pages";
                         });

} // namespace
