/*
 * daemon_test.cpp - the host daemon's metadata requests, errors and io
 * hooks, served through the CPU test client (cpu_client.h).
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <random>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "daemon_fixture.h"

using namespace gpufs_test;

namespace {

/* ---- metadata: FSTAT, cache identity and versions ---- */

class DaemonMeta : public DaemonFixture, public ::testing::Test {
protected:
  void SetUp() override { start(); }
};

TEST_F(DaemonMeta, FstatReportsTheHostFile)
{
  TestFile f = make_file("st", 12345, 9);
  uint64_t out[4];
  ASSERT_EQ(0, client_fstat(*q, f.hfid, out));
  struct stat st;
  ASSERT_EQ(0, stat(f.path.c_str(), &st));
  EXPECT_EQ(12345u, out[0]);
  EXPECT_EQ((uint64_t)st.st_mode, out[1]);
  EXPECT_TRUE(S_ISREG((mode_t)out[1]));
  EXPECT_EQ((uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec, out[2]);
  EXPECT_EQ((uint64_t)st.st_ino, out[3]);
}

TEST_F(DaemonMeta, CidAndVersionFollowTheInode)
{
  TestFile a = make_file("va", 5000, 10, false);
  TestFile b = make_file("vb", 5000, 11, false);
  uint64_t o1[4], o2[4], o3[4], o4[4], o5[4], ob[4];
  int64_t h1 = client_open(*q, a.path, O_RDONLY, o1);
  int64_t h2 = client_open(*q, a.path, O_RDONLY, o2);
  ASSERT_GE(h1, 0);
  ASSERT_GE(h2, 0);
  EXPECT_NE(h1, h2);
  EXPECT_NE(0u, o1[1]);
  EXPECT_EQ(o1[1], o2[1]);
  EXPECT_EQ(o1[2], o2[2]);
  ASSERT_EQ(0, client_close(*q, (int32_t)h1));
  ASSERT_EQ(0, client_close(*q, (int32_t)h2));

  /* A new size: same inode, next version. */
  ASSERT_EQ(0, write_pattern_file(a.path, 6000, 10));
  int64_t h3 = client_open(*q, a.path, O_RDONLY, o3);
  ASSERT_GE(h3, 0);
  EXPECT_EQ(6000u, o3[0]);
  EXPECT_EQ(o1[1], o3[1]);
  EXPECT_EQ(o1[2] + 1, o3[2]);

  /* Same size, another mtime: next version again, while h3 is still open. */
  struct timespec ts[2] = {{0, UTIME_OMIT}, {1000000000, 123456789}};
  ASSERT_EQ(0, utimensat(AT_FDCWD, a.path.c_str(), ts, 0));
  int64_t h4 = client_open(*q, a.path, O_RDONLY, o4);
  ASSERT_GE(h4, 0);
  EXPECT_EQ(o1[1], o4[1]);
  EXPECT_EQ(o3[2] + 1, o4[2]);

  /* Another name of the same inode is the same cached file. */
  std::string link = dir.file("va-link");
  ASSERT_EQ(0, ::link(a.path.c_str(), link.c_str()));
  int64_t h5 = client_open(*q, link, O_RDONLY, o5);
  ASSERT_GE(h5, 0);
  EXPECT_EQ(o1[1], o5[1]);
  EXPECT_EQ(o4[2] + 1, o5[2]) << "link(2) changes the inode's ctime";

  int64_t hb = client_open(*q, b.path, O_RDONLY, ob);
  ASSERT_GE(hb, 0);
  EXPECT_NE(o1[1], ob[1]);
  EXPECT_EQ(1u, ob[2]);
  EXPECT_EQ(6u, stats().opens);
}

/* ---- errors: each a negative errno in the ticket's result ---- */

class DaemonErrors : public DaemonFixture, public ::testing::Test {};

TEST_F(DaemonErrors, BadHfid)
{
  start(2, 64, 8);
  TestFile f = make_file("bad", 100, 12);
  for (int32_t h : {-1, 8, 12345, INT32_MAX}) {
    EXPECT_EQ(-EBADF, client_read(*q, h, 0, 10, nullptr)) << h;
    EXPECT_EQ(-EBADF, client_read(*q, h, 0, 0, nullptr)) << h;
    EXPECT_EQ(-EBADF, client_fstat(*q, h, nullptr)) << h;
    EXPECT_EQ(-EBADF, client_close(*q, h)) << h;
  }
  EXPECT_EQ(-EBADF, client_read(*q, f.hfid + 1, 0, 10, nullptr)) << "never opened";
  ASSERT_EQ(0, client_close(*q, f.hfid));
  EXPECT_EQ(-EBADF, client_close(*q, f.hfid)) << "closed twice";
  EXPECT_EQ(-EBADF, client_read(*q, f.hfid, 0, 10, nullptr));
  EXPECT_EQ(-EBADF, client_fstat(*q, f.hfid, nullptr));
  EXPECT_GE(stats().errors, 19u);
}

TEST_F(DaemonErrors, BadRequests)
{
  start();
  TestFile f = make_file("req", 3 * kStride, 13);
  EXPECT_EQ(-EINVAL, client_read(*q, f.hfid, 0, kStride + 1, nullptr)) << "len > stride";
  EXPECT_EQ(-EINVAL, client_read(*q, f.hfid, UINT64_MAX - 5, 10, nullptr)) << "offset overflow";
  for (uint32_t op : {(uint32_t)GPUFS_OP_NONE, 99u, 0xffffffffu}) {
    Request r;
    r.op = op;
    r.hfid = f.hfid;
    ASSERT_EQ(0, client_run(*q, &r, 1));
    EXPECT_EQ(-ENOSYS, r.result) << "op " << op;
  }
  Request open_long;
  open_long.op = GPUFS_OP_OPEN;
  open_long.unterminated = true;
  ASSERT_EQ(0, client_run(*q, &open_long, 1));
  EXPECT_EQ(-ENAMETOOLONG, open_long.result);
  /* The daemon still serves after all that. */
  Request r = read_req(f.hfid, kStride, kStride);
  ASSERT_EQ(0, client_run(*q, &r, 1));
  expect_read_ok(r, f.size, f.seed);
}

TEST_F(DaemonErrors, MissingFile)
{
  start();
  EXPECT_EQ(-ENOENT, client_open(*q, dir.file("no-such-file"), O_RDONLY, nullptr));
  EXPECT_EQ(-ENOENT, client_open(*q, "", O_RDONLY, nullptr));
  EXPECT_EQ(-ENOTDIR, client_open(*q, make_file("plain", 1, 1, false).path + "/x", O_RDONLY, nullptr));
  EXPECT_EQ(0u, stats().opens);
}

TEST_F(DaemonErrors, NoPermission)
{
  start();
  std::string secret = make_file("secret", 100, 14, false).path;
  std::string open_one = make_file("open", 100, 15, false).path;
  ASSERT_EQ(0, chmod(secret.c_str(), 0));
  bool root = geteuid() == 0;
  if (root) {
    /* root ignores permissions: ask as nobody, who may enter the directory */
    ASSERT_EQ(0, chmod(dir.path.c_str(), 0711));
    if (seteuid(65534) != 0) GTEST_SKIP() << "root, and seteuid(65534) failed: " << strerror(errno);
  }
  int64_t denied = client_open(*q, secret, O_RDONLY, nullptr);
  int64_t allowed = client_open(*q, open_one, O_RDONLY, nullptr);
  if (root) {
    ASSERT_EQ(0, seteuid(0));
  }
  EXPECT_EQ(-EACCES, denied);
  EXPECT_GE(allowed, 0) << "the directory itself must be readable";
}

TEST_F(DaemonErrors, TooManyOpenFiles)
{
  start(2, 64, 2);
  TestFile a = make_file("m1", 10, 16), b = make_file("m2", 20, 17);
  ASSERT_GE(a.hfid, 0);
  ASSERT_GE(b.hfid, 0);
  EXPECT_EQ(-EMFILE, client_open(*q, a.path, O_RDONLY, nullptr));
  ASSERT_EQ(0, client_close(*q, a.hfid));
  int64_t again = client_open(*q, a.path, O_RDONLY, nullptr);
  ASSERT_GE(again, 0);
  EXPECT_EQ(-EMFILE, client_open(*q, b.path, O_RDONLY, nullptr));
  Request r = read_req(b.hfid, 0, 20);
  ASSERT_EQ(0, client_run(*q, &r, 1));
  expect_read_ok(r, b.size, b.seed);
}

/* ---- io hooks: failing, short and blocking preads, counted closes ---- */

std::atomic<uint64_t> g_fail_from{UINT64_MAX}; /* preads at or past this offset fail */
std::atomic<uint64_t> g_fail_whole_from{UINT64_MAX}; /* preads reaching past this fail whole */
std::atomic<uint32_t> g_max_chunk{UINT32_MAX}; /* bytes one pread returns at most */
std::atomic<bool> g_block_next{false};         /* the next pread waits for g_unblock */
std::atomic<bool> g_blocked{false}, g_unblock{false};
std::atomic<int> g_closes{0};

int hook_open(const char *path, int flags, mode_t mode) { return open(path, flags, mode); }

ssize_t hook_pread(int fd, void *buf, size_t len, off_t off)
{
  bool expect = true;
  if (g_block_next.compare_exchange_strong(expect, false)) {
    g_blocked = true;
    while (!g_unblock.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  uint64_t fail = g_fail_from.load();
  if ((uint64_t)off + len > g_fail_whole_from.load()) { /* fails the whole call */
    errno = EIO;
    return -1;
  }
  if ((uint64_t)off >= fail) {
    errno = EIO;
    return -1;
  }
  len = std::min<uint64_t>({len, g_max_chunk.load(), fail - (uint64_t)off});
  return pread(fd, buf, len, off);
}

int hook_close(int fd)
{
  g_closes++;
  return close(fd);
}

std::atomic<int> g_advice[8]; /* fadvise calls by advice */

int hook_fadvise(int fd, off_t off, off_t len, int advice)
{
  if (advice >= 0 && advice < 8) g_advice[advice]++;
  return posix_fadvise(fd, off, len, advice);
}

const gpufs_io_ops kHookIo = [] {
  gpufs_io_ops io{};
  io.open = hook_open;
  io.pread = hook_pread;
  io.close = hook_close;
  io.fadvise = hook_fadvise;
  return io;
}();

/* READs of pages 0 .. n-1 of a file (every step-th page). */
static std::vector<Request> page_reads(int32_t hfid, uint32_t n, uint32_t step = 1)
{
  std::vector<Request> reqs;
  for (uint32_t i = 0; i < n; i++) reqs.push_back(read_req(hfid, (uint64_t)(i * step) * kStride, kStride));
  return reqs;
}

class DaemonHooks : public DaemonFixture, public ::testing::Test {
protected:
  void SetUp() override
  {
    g_fail_from = UINT64_MAX;
    g_fail_whole_from = UINT64_MAX;
    g_max_chunk = UINT32_MAX;
    g_block_next = false;
    g_blocked = false;
    g_unblock = false;
    g_closes = 0;
    for (auto &a : g_advice) a = 0;
  }
  void TearDown() override
  {
    gpufs_daemon_stop(d);
    d = nullptr;
    g_fail_from = UINT64_MAX;
    g_fail_whole_from = UINT64_MAX;
    g_max_chunk = UINT32_MAX;
  }
  /* 16 pages in one merged run, page 8 bad from byte 100 on: pages 0..7
   * are served, 8..15 get the error. */
  void run_past_a_bad_page(const TestFile &f)
  {
    std::vector<Request> reqs = page_reads(f.hfid, 16);
    ASSERT_EQ(0, client_run(*q, reqs.data(), 16, true));
    for (uint32_t i = 0; i < 8; i++) expect_read_ok(reqs[i], f.size, f.seed);
    for (uint32_t i = 8; i < 16; i++) EXPECT_EQ(-EIO, reqs[i].result) << i;
  }
};

TEST_F(DaemonHooks, FailingPreadIsEio)
{
  start(2, 64, 8, &kHookIo);
  TestFile f = make_file("eio", 10 * kStride, 18);
  g_fail_from = 0;
  EXPECT_EQ(-EIO, client_read(*q, f.hfid, 0, kStride, nullptr));
  std::vector<Request> reqs = page_reads(f.hfid, 8);
  ASSERT_EQ(0, client_run(*q, reqs.data(), 8, true));
  for (auto &r : reqs) EXPECT_EQ(-EIO, r.result);
  EXPECT_EQ(9u, stats().errors);
  EXPECT_EQ(7u, stats().merged);
}

/* A merged pread that fails part way (short reads up to the bad byte). */
TEST_F(DaemonHooks, FailureInsideAMergedRun)
{
  start(2, 64, 8, &kHookIo);
  TestFile f = make_file("eio-mid", 16 * kStride, 19);
  g_fail_from = 8 * kStride + 100;
  run_past_a_bad_page(f);
}

/* A disk that fails every call touching a bad byte, good bytes before it
 * included: the merged call fails, and each page is tried alone (a gread's
 * readahead pages past a bad page must not fail the page it asked for). */
TEST_F(DaemonHooks, WholeCallFailureServesThePagesBeforeIt)
{
  start(2, 64, 8, &kHookIo);
  TestFile f = make_file("eio-whole", 16 * kStride, 23);
  g_fail_whole_from = 8 * kStride + 100;
  run_past_a_bad_page(f);
  EXPECT_EQ(8u * kStride, stats().bytes_read);
}

/* A merged run of 8+ pages (a sequential reader) makes the daemon advise
 * the host's readahead for the file, once per open; short runs do not, and
 * advice the GPU gave first (gfadvise) is never overridden. */
TEST_F(DaemonHooks, LongRunsAdviseHostReadaheadOnce)
{
  start(1, 8, 8, &kHookIo);
  TestFile a = make_file("seq-a", 32 * kStride, 24), b = make_file("seq-b", 32 * kStride, 25),
           c = make_file("seq-c", 32 * kStride, 26);
  std::vector<Request> reqs = page_reads(b.hfid, 4, 4);
  ASSERT_EQ(0, client_run(*q, reqs.data(), 4, true));
  EXPECT_EQ(0, g_advice[POSIX_FADV_SEQUENTIAL].load()) << "scattered pages are no run";
  reqs = page_reads(a.hfid, 24);
  ASSERT_EQ(0, client_run(*q, reqs.data(), 24, true));
  for (uint32_t i = 0; i < 24; i++) expect_read_ok(reqs[i], a.size, a.seed);
  EXPECT_EQ(1, g_advice[POSIX_FADV_SEQUENTIAL].load()) << "three runs of 8, one hint";
  Request adv;
  adv.op = GPUFS_OP_FADVISE;
  adv.hfid = c.hfid;
  adv.arg = POSIX_FADV_RANDOM;
  ASSERT_EQ(0, client_run(*q, &adv, 1));
  EXPECT_EQ(0, adv.result);
  reqs = page_reads(c.hfid, 16);
  ASSERT_EQ(0, client_run(*q, reqs.data(), 16, true));
  EXPECT_EQ(1, g_advice[POSIX_FADV_RANDOM].load());
  EXPECT_EQ(1, g_advice[POSIX_FADV_SEQUENTIAL].load()) << "the caller's RANDOM stands";
}

TEST_F(DaemonHooks, ShortPreadsAreRetried)
{
  start(2, 64, 8, &kHookIo);
  TestFile f = make_file("short", 8 * kStride + 10, 20);
  g_max_chunk = 1000;
  std::vector<Request> reqs;
  for (uint32_t i = 0; i < 9; i++) reqs.push_back(read_req(f.hfid, (uint64_t)i * kStride, kStride));
  reqs.push_back(read_req(f.hfid, 3, 4000));
  ASSERT_EQ(0, client_run(*q, reqs.data(), (uint32_t)reqs.size(), true));
  for (auto &r : reqs) expect_read_ok(r, f.size, f.seed);
  EXPECT_GE(stats().preads, f.size / 1000);
}

/* CLOSE while another worker still serves a READ of the file claimed
 * before it (a GPU group's posted readahead does not wait for its READs
 * before the file's last gclose): the CLOSE is served after the READ, the
 * READ gets the file's bytes, the descriptor is closed once, and later
 * requests see -EBADF. */
TEST_F(DaemonHooks, CloseWaitsForTheReadsClaimedBeforeIt)
{
  start(2, 64, 8, &kHookIo);
  TestFile f = make_file("busy", 2 * kStride, 22);
  g_block_next = true;
  Request slow = read_req(f.hfid, 100, kStride);
  std::thread reader([&] { EXPECT_EQ(0, client_run(*q, &slow, 1)); });
  while (!g_blocked.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::atomic<bool> closed{false};
  std::thread closer([&] {
    EXPECT_EQ(0, client_close(*q, f.hfid));
    closed = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(closed.load()) << "the CLOSE was served while the READ before it was not";
  EXPECT_EQ(0, g_closes.load());
  g_unblock = true;
  reader.join();
  closer.join();
  expect_read_ok(slow, f.size, f.seed);
  EXPECT_EQ(1, g_closes.load());
  EXPECT_EQ(-EBADF, client_read(*q, f.hfid, 0, 10, nullptr));
  EXPECT_EQ(-EBADF, client_close(*q, f.hfid));
}

} // namespace
