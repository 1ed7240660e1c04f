/*
 * hostfiles_test.cpp - the daemon's host file table under concurrency: pins
 * are lock-free (one atomic word per entry), so many threads pin, read and
 * unpin while others close and reopen entries; a pinned descriptor must stay
 * open and keep naming the file it was pinned for, every descriptor opened
 * is closed exactly once, and ThreadSanitizer must stay silent.
 */
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <fcntl.h>
#include <random>
#include <string>
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
  int h = gpufs_hostfiles_open(hf, p.c_str(), O_RDONLY, 0, &id);
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
      int h = gpufs_hostfiles_open(hf, paths[f].c_str(), O_RDONLY, 0, &id);
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
