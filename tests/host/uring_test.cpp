/*
 * uring_test.cpp - the daemon workers' io_uring (libgpufs/host/uring.h) on
 * its own, and its failure paths through the daemon (read_engine uring):
 * errors and short reads reach the tickets as they do with pread.  The
 * DaemonRead suite (daemon_read_test.cpp) runs every read case with uring
 * too.
 */
#include <gtest/gtest.h>

#include <cerrno>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "daemon_fixture.h"
#include "libgpufs/host/uring.h"

using namespace gpufs_test;

namespace {

/* Every read of a batch gets its bytes: several files, odd offsets and
 * lengths, reads that end at or start past the end of the file. */
TEST(Uring, BatchOfReadsGetsEveryByte)
{
  TempDir dir;
  const uint64_t size = 10 * kStride + 321;
  std::vector<int> fds;
  for (int f = 0; f < 3; f++) {
    std::string path = dir.file("u" + std::to_string(f));
    ASSERT_EQ(0, write_pattern_file(path, size, 100 + f));
    fds.push_back(open(path.c_str(), O_RDONLY));
    ASSERT_GE(fds.back(), 0);
  }
  gpufs_uring *u = nullptr;
  ASSERT_EQ(0, gpufs_uring_create(16, &u));
  EXPECT_EQ(16u, gpufs_uring_depth(u));
  std::vector<uint8_t> buf(16 * 2 * kStride, 0xEE);
  gpufs_uring_read rd[16];
  int64_t res[16];
  const uint64_t offs[16] = {0, 1, kStride, 3 * kStride + 7, size - 10, size, size + 5, 9 * kStride,
                             2, 5 * kStride, 4 * kStride + 4095, 0, kStride * 7, 123, 8 * kStride, 6};
  for (uint32_t i = 0; i < 16; i++)
    rd[i] = {fds[i % 3], buf.data() + i * 2 * kStride, (uint64_t)(i % 4 == 3 ? 2 * kStride : kStride - i),
             offs[i]};
  ASSERT_EQ(0, gpufs_uring_read_all(u, rd, 16, res));
  for (uint32_t i = 0; i < 16; i++) {
    const uint64_t want = expected_len(size, rd[i].off, (uint32_t)rd[i].len);
    ASSERT_EQ((int64_t)want, res[i]) << "read " << i;
    ASSERT_EQ(-1, first_mismatch(rd[i].buf, want, 100 + i % 3, rd[i].off)) << "read " << i;
  }
  /* the ring is reusable: a second batch on the same ring */
  ASSERT_EQ(0, gpufs_uring_read_all(u, rd, 5, res));
  for (uint32_t i = 0; i < 5; i++)
    EXPECT_EQ((int64_t)expected_len(size, rd[i].off, (uint32_t)rd[i].len), res[i]);
  gpufs_uring_destroy(u);
  for (int fd : fds) close(fd);
}

TEST(Uring, ErrorsArePerRead)
{
  TempDir dir;
  std::string path = dir.file("ok");
  ASSERT_EQ(0, write_pattern_file(path, 2 * kStride, 7));
  int fd = open(path.c_str(), O_RDONLY);
  int dfd = open(dir.path.c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(fd, 0);
  ASSERT_GE(dfd, 0);
  gpufs_uring *u = nullptr;
  ASSERT_EQ(0, gpufs_uring_create(4, &u));
  std::vector<uint8_t> buf(4 * kStride);
  gpufs_uring_read rd[4] = {{fd, buf.data(), kStride, 0},
                            {dfd, buf.data() + kStride, kStride, 0},
                            {1 << 20, buf.data() + 2 * kStride, kStride, 0}, /* no such fd */
                            {fd, buf.data() + 3 * kStride, kStride, kStride}};
  int64_t res[4];
  ASSERT_EQ(0, gpufs_uring_read_all(u, rd, 4, res));
  EXPECT_EQ((int64_t)kStride, res[0]);
  EXPECT_EQ(-EISDIR, res[1]);
  EXPECT_EQ(-EBADF, res[2]);
  EXPECT_EQ((int64_t)kStride, res[3]);
  EXPECT_EQ(-1, first_mismatch(buf.data() + 3 * kStride, kStride, 7, kStride));
  EXPECT_EQ(-EINVAL, gpufs_uring_read_all(u, rd, 5, res)) << "more reads than the depth";
  EXPECT_EQ(-EINVAL, gpufs_uring_create(0, &u));
  gpufs_uring_destroy(u);
  gpufs_uring_destroy(nullptr);
  close(fd);
  close(dfd);
}

/* Through the daemon: a failing read in a batch fails its own ticket only;
 * a run across the end of the file is short as with pread; a closed hfid
 * is -EBADF; every byte read is the file's. */
class DaemonUring : public DaemonFixture, public ::testing::Test {
protected:
  void SetUp() override
  {
    read_engine = GPUFS_READ_URING;
    start(false, 1, 64);
  }
};

TEST_F(DaemonUring, FailuresStayWithTheirTickets)
{
  TestFile f = make_file("f", 6 * kStride + 50, 11);
  uint64_t out[4];
  const int64_t dh = client_open(*q, dir.path, O_RDONLY, out);
  ASSERT_GE(dh, 0);
  TestFile g = make_file("g", 3 * kStride, 12);
  ASSERT_EQ(0, client_close(*q, g.hfid));
  std::vector<Request> reqs;
  for (uint32_t p = 0; p < 8; p++) reqs.push_back(read_req(f.hfid, p * kStride, kStride));
  reqs.push_back(read_req((int32_t)dh, 0, kStride));
  reqs.push_back(read_req(g.hfid, 0, kStride));
  reqs.push_back(read_req(f.hfid, 2 * kStride + 3, 100));
  ASSERT_EQ(0, client_run(*q, reqs.data(), (uint32_t)reqs.size()));
  for (uint32_t p = 0; p < 8; p++) expect_read_ok(reqs[p], f.size, f.seed);
  EXPECT_EQ(-EISDIR, reqs[8].result);
  EXPECT_EQ(-EBADF, reqs[9].result);
  expect_read_ok(reqs[10], f.size, f.seed);
  gpufs_daemon_stats s = stats();
  EXPECT_GT(s.uring_batches, 0u);
  EXPECT_EQ(2u, s.errors);
  EXPECT_EQ(f.size + 100, s.bytes_read);
}

/* A run of READs, then a WRITE, then READs: the write lands between them
 * (order kept across an op that is not a read), and the read after it sees
 * its bytes. */
TEST_F(DaemonUring, ReadsAroundAWriteKeepTheirOrder)
{
  TestFile f = make_file("w", 4 * kStride, 13, false);
  uint64_t out[4];
  const int64_t h = client_open(*q, f.path, O_RDWR, out);
  ASSERT_GE(h, 0);
  std::vector<uint8_t> bytes(kStride, 0x5A);
  std::vector<Request> reqs = {read_req((int32_t)h, kStride, kStride),
                               write_req((int32_t)h, kStride, bytes),
                               read_req((int32_t)h, kStride, kStride)};
  ASSERT_EQ(0, client_run(*q, reqs.data(), 3));
  expect_read_ok(reqs[0], f.size, f.seed);
  EXPECT_EQ((int64_t)kStride, reqs[1].result);
  ASSERT_EQ((int64_t)kStride, reqs[2].result);
  EXPECT_EQ(bytes, reqs[2].data);
}

} // namespace
