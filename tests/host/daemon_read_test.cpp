/*
 * daemon_read_test.cpp - READs served by the host daemon, from the files'
 * mappings and, where a file cannot be mapped, with pread.  Every byte is
 * checked against the file.
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <random>
#include <string>
#include <sys/mman.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "daemon_fixture.h"

using namespace gpufs_test;

namespace {

/* A mapping that is always refused (ENODEV, as for a file that cannot be
 * mapped): every READ takes the daemon's pread fallback. */
static void *refuse_mmap(void *, size_t, int, int, int, off_t)
{
  errno = ENODEV;
  return MAP_FAILED;
}
const gpufs_io_ops kNoMap = [] {
  gpufs_io_ops io{};
  io.mmap = refuse_mmap;
  return io;
}();

/* Param: the files can be mapped (else every run is preread). */
class DaemonRead : public DaemonFixture, public ::testing::TestWithParam<bool> {
protected:
  bool map() const { return GetParam(); }
  const gpufs_io_ops *io() const { return map() ? nullptr : &kNoMap; }
  void SetUp() override { start(2, 64, 64, io()); }
  void TearDown() override
  {
    /* not every run is copied from a mapping: those that cross the end of
     * a file are preread */
    if (!d) return;
    gpufs_daemon_stats s = stats();
    if (!map()) {
      EXPECT_EQ(0u, s.map_copies);
    }
    EXPECT_EQ(0u, s.map_faults);
  }
};

TEST_P(DaemonRead, EveryPageOfAFile)
{
  TestFile f = make_file("pages", 5 * kStride + 777, 1);
  for (uint64_t off = 0; off < f.size + kStride; off += kStride) {
    Request r = read_req(f.hfid, off, kStride);
    ASSERT_EQ(0, client_run(*q, &r, 1));
    expect_read_ok(r, f.size, f.seed);
  }
}

TEST_P(DaemonRead, OddOffsetsAndLengths)
{
  TestFile f = make_file("odd", 9 * kStride + 1234, 2);
  std::mt19937_64 rng(42);
  for (int i = 0; i < 200; i++) {
    uint64_t off = rng() % (f.size + 2 * kStride);
    if (i % 3 == 0) off = (off / kStride) * kStride + 1 + rng() % (kStride - 1);
    uint32_t len = (uint32_t)(rng() % (kStride + 1));
    Request r = read_req(f.hfid, off, len);
    ASSERT_EQ(0, client_run(*q, &r, 1));
    expect_read_ok(r, f.size, f.seed);
  }
}

TEST_P(DaemonRead, ShortAtEofAndZeroPastIt)
{
  TestFile f = make_file("eof", 3 * kStride + 100, 3);
  struct { uint64_t off; uint32_t len; int64_t want; } cases[] = {
      {3 * kStride, kStride, 100},  {3 * kStride + 99, kStride, 1}, {f.size, kStride, 0},
      {f.size + 1, 10, 0},          {1ull << 40, kStride, 0},       {5, 0, 0},
      {f.size - 1, 1, 1},
  };
  for (auto &c : cases) {
    Request r = read_req(f.hfid, c.off, c.len);
    ASSERT_EQ(0, client_run(*q, &r, 1));
    EXPECT_EQ(c.want, r.result) << "off " << c.off;
    expect_read_ok(r, f.size, f.seed);
  }
  TestFile empty = make_file("empty", 0, 4);
  EXPECT_EQ(0, client_read(*q, empty.hfid, 0, kStride, nullptr));
}

/* 64 consecutive pages posted as one run (head posted last, so one worker
 * claims them all at once): one host read, 63 merged tickets. */
TEST_P(DaemonRead, ConsecutivePagesAreMerged)
{
  TestFile f = make_file("merge", 64 * kStride, 5);
  std::vector<Request> reqs;
  for (uint32_t i = 0; i < 64; i++) reqs.push_back(read_req(f.hfid, (uint64_t)i * kStride, kStride));
  gpufs_daemon_stats before = stats();
  ASSERT_EQ(0, client_run(*q, reqs.data(), 64, true));
  gpufs_daemon_stats after = stats();
  for (auto &r : reqs) expect_read_ok(r, f.size, f.seed);
  EXPECT_EQ(63u, after.merged - before.merged);
  EXPECT_EQ(1u, after.preads - before.preads);
  EXPECT_EQ(map() ? 1u : 0u, after.map_copies - before.map_copies);
  EXPECT_EQ(1u, after.batches - before.batches);
  EXPECT_EQ(64u * kStride, after.bytes_read - before.bytes_read);
}

/* The file ends inside the merged run: the page at EOF is short, the pages
 * after it get 0. */
TEST_P(DaemonRead, MergedRunAcrossEof)
{
  TestFile f = make_file("merge-eof", 40 * kStride + 2048, 6);
  std::vector<Request> reqs;
  for (uint32_t i = 0; i < 64; i++) reqs.push_back(read_req(f.hfid, (uint64_t)i * kStride, kStride));
  gpufs_daemon_stats before = stats();
  ASSERT_EQ(0, client_run(*q, reqs.data(), 64, true));
  gpufs_daemon_stats after = stats();
  for (auto &r : reqs) expect_read_ok(r, f.size, f.seed);
  EXPECT_EQ(2048, reqs[40].result);
  EXPECT_EQ(0, reqs[41].result);
  EXPECT_EQ(63u, after.merged - before.merged);
  EXPECT_LE(after.preads - before.preads, 2u);
}

/* One run mixing two files, a partial page (ends a merge), an odd offset
 * (cannot merge), an FSTAT and a past-EOF page. */
TEST_P(DaemonRead, RunMixingTwoFiles)
{
  TestFile a = make_file("a", 20 * kStride, 7);
  TestFile b = make_file("b", 7 * kStride + 5, 8);
  std::vector<Request> reqs = {
      read_req(a.hfid, 0, kStride),           read_req(a.hfid, kStride, kStride),
      read_req(a.hfid, 2 * kStride, kStride), read_req(b.hfid, 3 * kStride, kStride),
      read_req(b.hfid, 4 * kStride, kStride), read_req(b.hfid, 5 * kStride, 100),
      read_req(b.hfid, 6 * kStride, kStride), read_req(a.hfid, 3 * kStride, kStride),
      read_req(a.hfid, 4 * kStride + 3, 999), read_req(b.hfid, 7 * kStride, kStride),
      read_req(b.hfid, 8 * kStride, kStride), read_req(a.hfid, 19 * kStride, kStride),
      read_req(a.hfid, 20 * kStride, kStride), read_req(a.hfid, 21 * kStride, kStride),
  };
  Request st;
  st.op = GPUFS_OP_FSTAT;
  st.hfid = b.hfid;
  reqs.insert(reqs.begin() + 7, st);
  uint64_t merges = expected_merges(reqs);
  gpufs_daemon_stats before = stats();
  ASSERT_EQ(0, client_run(*q, reqs.data(), (uint32_t)reqs.size(), true));
  gpufs_daemon_stats after = stats();
  for (auto &r : reqs) {
    if (r.op == GPUFS_OP_FSTAT) {
      EXPECT_EQ(0, r.result);
      EXPECT_EQ(b.size, r.out[0]);
    } else {
      expect_read_ok(r, r.hfid == a.hfid ? a.size : b.size, r.hfid == a.hfid ? a.seed : b.seed);
    }
  }
  EXPECT_EQ(7u, merges);
  EXPECT_EQ(merges, after.merged - before.merged);
  EXPECT_EQ(1u, after.batches - before.batches);
}

/* Hundreds of files, opened in runs of OPENs, read in runs that touch a
 * different file per ticket, closed; reopening gives the same cids. */
TEST_P(DaemonRead, ManyFiles)
{
  gpufs_daemon_stop(d);
  d = nullptr;
  start(2, 64, 512, io());
  constexpr uint32_t kFiles = 300, kRun = 16;
  std::vector<TestFile> files;
  std::vector<uint64_t> cids;
  for (uint32_t i = 0; i < kFiles; i++)
    files.push_back(make_file("many" + std::to_string(i), i * 37 + 1 + (i % 3) * kStride, 100 + i, false));
  for (int round = 0; round < 2; round++) {
    for (uint32_t i = 0; i < kFiles; i += kRun) {
      std::vector<Request> reqs(kRun);
      for (uint32_t j = 0; j < kRun && i + j < kFiles; j++) {
        reqs[j].op = GPUFS_OP_OPEN;
        reqs[j].path = files[i + j].path;
        reqs[j].arg = O_RDONLY;
      }
      uint32_t n = std::min(kRun, kFiles - i);
      ASSERT_EQ(0, client_run(*q, reqs.data(), n, true));
      for (uint32_t j = 0; j < n; j++) {
        ASSERT_GE(reqs[j].result, 0);
        files[i + j].hfid = (int32_t)reqs[j].result;
        EXPECT_EQ(files[i + j].size, reqs[j].out[0]);
        if (round == 0) {
          cids.push_back(reqs[j].out[1]);
        } else {
          EXPECT_EQ(cids[i + j], reqs[j].out[1]);
          EXPECT_EQ(1u, reqs[j].out[2]);
        }
      }
    }
    std::mt19937_64 rng(round);
    for (uint32_t i = 0; i < kFiles; i += kRun) {
      uint32_t n = std::min(kRun, kFiles - i);
      std::vector<Request> reqs;
      for (uint32_t j = 0; j < n; j++) {
        const TestFile &f = files[i + j];
        reqs.push_back(read_req(f.hfid, rng() % (f.size + 1), (uint32_t)(1 + rng() % kStride)));
      }
      ASSERT_EQ(0, client_run(*q, reqs.data(), n));
      for (uint32_t j = 0; j < n; j++) expect_read_ok(reqs[j], files[i + j].size, files[i + j].seed);
    }
    for (auto &f : files) ASSERT_EQ(0, client_close(*q, f.hfid));
  }
  std::sort(cids.begin(), cids.end());
  EXPECT_EQ(cids.end(), std::unique(cids.begin(), cids.end())) << "two files share a cid";
}

/* 8 client threads hammer 4 workers with random single reads, runs of
 * consecutive pages, FSTATs and opens/closes of private files. */
TEST_P(DaemonRead, ConcurrentClients)
{
  gpufs_daemon_stop(d);
  d = nullptr;
  start(4, 32, 64, io());
  std::vector<TestFile> shared;
  for (uint32_t i = 0; i < 6; i++)
    shared.push_back(make_file("shared" + std::to_string(i), i * 61 * kStride + i * 999, 200 + i));
  constexpr int kThreads = 8, kIters = 600;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(1000 + t);
      TestFile own{dir.file("own" + std::to_string(t)), 3 * kStride + 17 * t, 300u + t, -1};
      if (write_pattern_file(own.path, own.size, own.seed) != 0) failures++;
      for (int it = 0; it < kIters && failures.load() == 0; it++) {
        if (it % 50 == 0) {
          if (own.hfid >= 0 && client_close(*q, own.hfid) != 0) failures++;
          own.hfid = (int32_t)client_open(*q, own.path, O_RDONLY, nullptr);
          if (own.hfid < 0) failures++;
        }
        uint32_t pick = (uint32_t)(rng() % 7);
        const TestFile &f = pick < shared.size() ? shared[pick] : own;
        uint32_t kind = (uint32_t)(rng() % 20);
        std::vector<Request> reqs;
        if (kind == 0) {
          Request r;
          r.op = GPUFS_OP_FSTAT;
          r.hfid = f.hfid;
          reqs.push_back(r);
        } else if (kind < 6) {
          uint64_t page = rng() % (f.size / kStride + 2);
          uint32_t n = 2 + (uint32_t)(rng() % 15);
          for (uint32_t j = 0; j < n; j++)
            reqs.push_back(read_req(f.hfid, (page + j) * kStride, kStride));
        } else {
          reqs.push_back(read_req(f.hfid, rng() % (f.size + kStride),
                                  (uint32_t)(rng() % (kStride + 1))));
        }
        if (client_run(*q, reqs.data(), (uint32_t)reqs.size(), kind % 2) != 0) failures++;
        for (auto &r : reqs) {
          bool ok;
          if (r.op == GPUFS_OP_FSTAT) {
            ok = r.result == 0 && r.out[0] == f.size;
          } else {
            uint64_t want = expected_len(f.size, r.offset, r.len);
            ok = r.result == (int64_t)want && r.data.size() == want &&
                 first_mismatch(r.data.data(), want, f.seed, r.offset) < 0;
          }
          if (!ok) failures++;
        }
      }
      if (own.hfid >= 0 && client_close(*q, own.hfid) != 0) failures++;
    });
  }
  for (auto &th : threads) th.join();
  EXPECT_EQ(0, failures.load());
  gpufs_daemon_stats s = stats();
  EXPECT_EQ(0u, s.errors);
  EXPECT_GT(s.requests, (uint64_t)kThreads * kIters);
}

/* One claimed batch: reads of a file, its CLOSE, then reads of it again
 * and of a second file.  The worker keeps one pin on the first file over
 * the batch's READ runs (fileops.h, struct gpufs_pin), but drops it at the
 * CLOSE: the reads after it get -EBADF, as when they come in another
 * batch, and the file is closed (its hfid is free for the next open). */
TEST_P(DaemonRead, ReadsAfterACloseInOneBatchFindItClosed)
{
  TestFile a = make_file("pin-a", 8 * kStride, 21);
  TestFile b = make_file("pin-b", 8 * kStride, 22);
  std::vector<Request> reqs = {read_req(a.hfid, 0, kStride), read_req(a.hfid, 5 * kStride, kStride),
                               read_req(b.hfid, kStride, kStride), read_req(a.hfid, 2 * kStride, 7)};
  Request c;
  c.op = GPUFS_OP_CLOSE;
  c.hfid = a.hfid;
  reqs.push_back(c);
  reqs.push_back(read_req(a.hfid, 3 * kStride, kStride));
  reqs.push_back(read_req(b.hfid, 6 * kStride, kStride));
  gpufs_daemon_stats before = stats();
  ASSERT_EQ(0, client_run(*q, reqs.data(), (uint32_t)reqs.size(), true));
  EXPECT_EQ(1u, stats().batches - before.batches);
  for (int i : {0, 1, 3}) expect_read_ok(reqs[i], a.size, a.seed);
  for (int i : {2, 6}) expect_read_ok(reqs[i], b.size, b.seed);
  EXPECT_EQ(0, reqs[4].result);
  EXPECT_EQ(-EBADF, reqs[5].result);
  EXPECT_EQ(-EBADF, client_close(*q, a.hfid)) << "closed by the batch's CLOSE";
  EXPECT_EQ(0, client_close(*q, b.hfid));
}

/* The daemon's pin hook: counts the hints and closes the descriptor each
 * one hands over. */
std::atomic<int> g_pin_hints{0};
void count_pin_hint(void *, int fd)
{
  g_pin_hints++;
  close(fd);
}

class DaemonReread : public DaemonFixture, public ::testing::Test {};

/* A first open whose READs bring more bytes than its file holds (pages it
 * read before, read again) asks for the file's pin, once; a file read once
 * asks nothing.  Two workers, one page a batch: counted at each batch's
 * end. */
TEST_F(DaemonReread, ReadingAFileAgainAsksForItsPinOnce)
{
  g_pin_hints = 0;
  pin_hint = count_pin_hint;
  start(2, 64, 64);
  TestFile f = make_file("again", 16 * kStride, 5);
  for (int pass = 0; pass < 3; pass++) {
    for (uint64_t off = 0; off < f.size; off += kStride) {
      Request r = read_req(f.hfid, off, kStride);
      ASSERT_EQ(0, client_run(*q, &r, 1));
      expect_read_ok(r, f.size, f.seed);
    }
    /* a batch's bytes count when its worker drops the pin, after it answered */
    const auto t0 = std::chrono::steady_clock::now();
    while (pass > 0 && g_pin_hints.load() == 0 && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2))
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    EXPECT_EQ(pass == 0 ? 0 : 1, g_pin_hints.load()) << "after pass " << pass;
  }
}

INSTANTIATE_TEST_SUITE_P(Source, DaemonRead, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool> &i) {
                           return std::string(i.param ? "Map" : "Pread");
                         });

} // namespace
