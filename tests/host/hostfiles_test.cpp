/*
 * hostfiles_test.cpp - the daemon's host file table under concurrency: pins
 * are lock-free (one atomic word per entry), so many threads pin, read and
 * unpin while others close and reopen entries; a pinned descriptor must stay
 * open and keep naming the file it was pinned for, every descriptor opened
 * is closed exactly once, and ThreadSanitizer must stay silent.  Also the
 * cache identities the table gives the queues (instances) that share it:
 * one queue's write is news to the others at their next open.
 */
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <fcntl.h>
#include <random>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "daemon_fixture.h"
#include "libgpufs/host/fileops.h"
#include "libgpufs/host/hostfiles.h"

using namespace gpufs_test;

namespace {

std::atomic<int64_t> g_opens{0}, g_closes{0};

int count_open(const char *path, int flags, mode_t mode)
{
  int fd = open(path, flags, mode);
  if (fd >= 0) g_opens++;
  return fd;
}

int count_close(int fd)
{
  g_closes++;
  return close(fd);
}

struct HostFiles : ::testing::Test {
  TempDir dir;
  gpufs_io_ops io{};
  gpufs_hostfiles *hf = nullptr;
  void SetUp() override
  {
    g_opens = 0;
    g_closes = 0;
    io.open = count_open;
    io.close = count_close;
    gpufs_io_defaults(&io);
  }
  void TearDown() override { gpufs_hostfiles_destroy(hf); }
};

TEST_F(HostFiles, PinCloseUnpinOrder)
{
  ASSERT_EQ(0, gpufs_hostfiles_create(4, &io, &hf));
  std::string p = dir.file("a");
  ASSERT_EQ(0, write_pattern_file(p, 100, 1));
  gpufs_hostfile_id id;
  int h = gpufs_hostfiles_open(hf, p.c_str(), O_RDONLY, 0, 0, &id);
  ASSERT_GE(h, 0);
  int fd = gpufs_hostfiles_pin(hf, h);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(0, gpufs_hostfiles_close(hf, h)) << "close while pinned succeeds";
  EXPECT_EQ(-EBADF, gpufs_hostfiles_pin(hf, h)) << "no new pins after close";
  EXPECT_EQ(-EBADF, gpufs_hostfiles_close(hf, h));
  EXPECT_EQ(0, g_closes.load()) << "the descriptor stays open while pinned";
  uint8_t b;
  EXPECT_EQ(1, pread(fd, &b, 1, 5));
  EXPECT_EQ(pattern_byte(1, 5), b);
  gpufs_hostfiles_unpin(hf, h);
  EXPECT_EQ(1, g_closes.load()) << "the last unpin closes";
  EXPECT_EQ(-EBADF, gpufs_hostfiles_pin(hf, -1));
  EXPECT_EQ(-EBADF, gpufs_hostfiles_pin(hf, 4));
}

/* The version queue q's open of path gets; the entry is closed again. */
uint32_t version_at_open(gpufs_hostfiles *hf, const std::string &path, uint32_t q)
{
  gpufs_hostfile_id id{};
  int h = gpufs_hostfiles_open(hf, path.c_str(), O_RDONLY, 0, q, &id);
  EXPECT_GE(h, 0) << "queue " << q;
  EXPECT_EQ(0, gpufs_hostfiles_close(hf, h));
  return id.version;
}

/* What the daemon does for queue q's WRITE: pwrite through the table's
 * descriptor, then refresh the record as the one who wrote. */
void daemon_write(gpufs_hostfiles *hf, int32_t h, uint32_t q, off_t off, size_t n)
{
  int fd = gpufs_hostfiles_pin(hf, h);
  ASSERT_GE(fd, 0);
  struct stat before;
  ASSERT_EQ(0, fstat(fd, &before));
  std::vector<uint8_t> bytes(n, 0x5a);
  EXPECT_EQ((ssize_t)n, pwrite(fd, bytes.data(), n, off));
  gpufs_hostfiles_refresh(hf, fd, &before, q);
  gpufs_hostfiles_unpin(hf, h);
}

/* Close-to-open between queues sharing one table: a queue's own write
 * keeps its version, every other queue's next open gets a new one (once:
 * the bump clears the mask), a truncation renews it for all, a write that
 * follows someone else's change leaves the record for the next open to
 * bump, and a queue number out of range is refused. */
TEST_F(HostFiles, WritesOfOneQueueAreNewsToTheOthers)
{
  ASSERT_EQ(0, gpufs_hostfiles_create(8, &io, &hf));
  std::string p = dir.file("shared");
  ASSERT_EQ(0, write_pattern_file(p, 2 * 4096, 3));
  gpufs_hostfile_id id{};
  const int h0 = gpufs_hostfiles_open(hf, p.c_str(), O_RDWR, 0, 0, &id);
  ASSERT_GE(h0, 0);
  const uint32_t cid = id.cid, v = id.version;
  EXPECT_EQ(v, version_at_open(hf, p, 1)) << "nobody wrote";

  daemon_write(hf, h0, 0, 100, 50); /* in place: the size stays */
  EXPECT_EQ(v, version_at_open(hf, p, 0)) << "queue 0's own write";
  EXPECT_EQ(v + 1, version_at_open(hf, p, 2)) << "queue 2 cached pages before it";
  EXPECT_EQ(v + 1, version_at_open(hf, p, 1)) << "one bump serves every queue";
  EXPECT_EQ(v + 1, version_at_open(hf, p, 0));

  const int h1 = gpufs_hostfiles_open(hf, p.c_str(), O_RDWR, 0, 1, &id);
  ASSERT_GE(h1, 0);
  EXPECT_EQ(cid, id.cid);
  daemon_write(hf, h1, 1, 5000, 10);
  daemon_write(hf, h0, 0, 10, 10); /* both wrote: both must see news */
  EXPECT_EQ(v + 2, version_at_open(hf, p, 1));
  EXPECT_EQ(v + 2, version_at_open(hf, p, 0));

  daemon_write(hf, h1, 1, 0, 10);
  int fd = gpufs_hostfiles_pin(hf, h1);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(0, ftruncate(fd, 4096));
  EXPECT_EQ(v + 3, gpufs_hostfiles_renew(hf, fd));
  gpufs_hostfiles_unpin(hf, h1);
  EXPECT_EQ(v + 3, version_at_open(hf, p, 0)) << "the renewal already made pages stale";
  EXPECT_EQ(v + 3, version_at_open(hf, p, 1));

  int cpu = open(p.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  ASSERT_GE(cpu, 0);
  ASSERT_EQ(1, write(cpu, "x", 1));
  close(cpu);
  daemon_write(hf, h0, 0, 0, 10); /* after the CPU's change: no refresh */
  EXPECT_EQ(v + 4, version_at_open(hf, p, 0)) << "the CPU's change is news to the writer too";
  EXPECT_EQ(v + 4, version_at_open(hf, p, 1));

  const int64_t opens = g_opens.load();
  EXPECT_EQ(-EINVAL, gpufs_hostfiles_open(hf, p.c_str(), O_RDONLY, 0, GPUFS_HOSTFILES_MAX_QUEUES, &id));
  EXPECT_EQ(opens, g_opens.load()) << "refused before any open";
  EXPECT_EQ(0, gpufs_hostfiles_close(hf, h0));
  EXPECT_EQ(0, gpufs_hostfiles_close(hf, h1));
  EXPECT_EQ(g_opens.load(), g_closes.load());
}

/* gpufs_pread's question: do GPU caches hold the current bytes of a file?
 * Only of a file some queue opened, and only while nobody but the daemon
 * changed it since. */
TEST_F(HostFiles, IdentOnlyWhileTheRecordIsCurrent)
{
  ASSERT_EQ(0, gpufs_hostfiles_create(4, &io, &hf));
  std::string p = dir.file("ident"), q = dir.file("never");
  ASSERT_EQ(0, write_pattern_file(p, 3 * 4096, 5));
  ASSERT_EQ(0, write_pattern_file(q, 4096, 6));
  struct stat st;
  gpufs_hostfile_id id{}, got{};
  ASSERT_EQ(0, stat(q.c_str(), &st));
  EXPECT_EQ(-ENOENT, gpufs_hostfiles_ident(hf, &st, &got)) << "no queue opened it";

  const int h = gpufs_hostfiles_open(hf, p.c_str(), O_RDWR, 0, 0, &id);
  ASSERT_GE(h, 0);
  ASSERT_EQ(0, stat(p.c_str(), &st));
  ASSERT_EQ(0, gpufs_hostfiles_ident(hf, &st, &got));
  EXPECT_EQ(id.cid, got.cid);
  EXPECT_EQ(id.version, got.version);
  EXPECT_EQ(3u * 4096, got.size);

  daemon_write(hf, h, 0, 100, 50); /* the GPU's own write: still current */
  ASSERT_EQ(0, stat(p.c_str(), &st));
  ASSERT_EQ(0, gpufs_hostfiles_ident(hf, &st, &got));
  EXPECT_EQ(id.version, got.version);

  int cpu = open(p.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC); /* the CPU's change */
  ASSERT_GE(cpu, 0);
  ASSERT_EQ(1, write(cpu, "x", 1));
  close(cpu);
  ASSERT_EQ(0, stat(p.c_str(), &st));
  EXPECT_EQ(-ENOENT, gpufs_hostfiles_ident(hf, &st, &got)) << "the GPU's pages are older";
  EXPECT_EQ(0, gpufs_hostfiles_close(hf, h));
}

/* Readers pin random entries and check that the pinned descriptor reads the
 * file the entry was opened for; churners close and reopen the entries
 * with other files all the while. */
TEST_F(HostFiles, PinsRaceClosesAndReopens)
{
  const int kFiles = 6, kSlots = 4, kReaders = 8, kChurners = 2;
  ASSERT_EQ(0, gpufs_hostfiles_create(kSlots, &io, &hf));
  std::vector<std::string> paths;
  for (int i = 0; i < kFiles; i++) {
    paths.push_back(dir.file("f" + std::to_string(i)));
    /* file i holds pattern(100 + i): its first bytes tell which file it is */
    ASSERT_EQ(0, write_pattern_file(paths.back(), 4096, 100 + i));
  }
  /* which file each entry holds, written by the churners before the open is
   * published and read by readers after their pin */
  std::vector<std::atomic<int>> owner(kSlots);
  for (auto &o : owner) o = -1;
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> pinned_reads{0}, bad{0}, opens_ok{0};

  auto churn = [&](int seed) {
    std::mt19937 rng(seed);
    while (!stop.load()) {
      int f = (int)(rng() % kFiles);
      gpufs_hostfile_id id;
      int h = gpufs_hostfiles_open(hf, paths[f].c_str(), O_RDONLY, 0, 0, &id);
      if (h < 0) {
        if (h != -EMFILE) bad++;
        /* full: close a random entry (it may be closed already: EBADF) */
        int v = (int)(rng() % kSlots);
        int rc = gpufs_hostfiles_close(hf, v);
        if (rc != 0 && rc != -EBADF) bad++;
        continue;
      }
      opens_ok++;
      owner[h].store(f);
      std::this_thread::yield();
    }
  };
  auto read = [&](int seed) {
    std::mt19937 rng(seed);
    while (!stop.load()) {
      int h = (int)(rng() % kSlots);
      int fd = gpufs_hostfiles_pin(hf, h);
      if (fd < 0) {
        if (fd != -EBADF) bad++;
        continue;
      }
      uint8_t b[8];
      if (pread(fd, b, 8, 0) != 8) {
        bad++; /* a pinned descriptor was closed under us */
      } else {
        int which = -1;
        for (int f = 0; f < kFiles; f++) {
          bool same = true;
          for (int k = 0; k < 8; k++) same = same && b[k] == pattern_byte(100 + f, k);
          if (same) which = f;
        }
        if (which < 0) bad++;
        pinned_reads++;
      }
      gpufs_hostfiles_unpin(hf, h);
    }
  };
  std::vector<std::thread> th;
  for (int i = 0; i < kChurners; i++) th.emplace_back(churn, 1 + i);
  for (int i = 0; i < kReaders; i++) th.emplace_back(read, 100 + i);
  std::this_thread::sleep_for(std::chrono::seconds(2));
  stop = true;
  for (auto &t : th) t.join();
  EXPECT_EQ(0u, bad.load());
  EXPECT_GT(pinned_reads.load(), 1000u);
  EXPECT_GT(opens_ok.load(), 100u);
  for (int h = 0; h < kSlots; h++) gpufs_hostfiles_close(hf, h);
  EXPECT_EQ(g_opens.load(), g_closes.load()) << "every descriptor closed exactly once";
}

} // namespace
