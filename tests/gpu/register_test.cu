/*
 * register_test.cu - registered files (gpufs_register / gpufs_unregister,
 * issue 15): reads served from the pinned mapping return exactly the bytes
 * the daemon path returns (gread, gread_warp, gmmap, random reads; 4 and
 * 64 KiB pages; a tail page the daemon serves; a cache that evicts), and
 * the counters show which path served them; a descriptor opened before the
 * registration keeps the daemon path; errors and what they leave; the
 * register_max limit; gpufs_stop releases every registration; two
 * instances read one registration.  Writes, truncations and the host's
 * changes: register_write_test.cu.
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <chrono>
#include <future>

#include "tests/gpu/register_util.cuh"

/* (page size, transfer path) */
class RegisterRead : public RegParamFixture {};

/* The same reads with and without the registration: the bytes are the
 * file's both times; only the registered run copies pages from the
 * mapping, and its daemon reads only the tail page. */
TEST_P(RegisterRead, SameBytesAsTheDaemonPath)
{
  const uint64_t size = 150ull * page + 1234; /* not a multiple of 4 KiB */
  std::string f = dir.make("same", size, 3);
  const std::vector<uint8_t> want = wt_pattern(size, 3);
  uint64_t daemon_bytes[2] = {0, 0};
  for (int reg = 0; reg < 2; reg++) {
    SCOPED_TRACE(reg ? "registered" : "not registered");
    start(64ull * page); /* 64 frames for 151 pages: every pass evicts */
    if (reg) {
      ASSERT_EQ(0, gpufs_register(f.c_str())) << gpufs_error_detail();
    }
    EXPECT_EQ(reg, rg_mapped(f));
    const int fd = host_open(f);
    ASSERT_GE(fd, 0);
    for (int mode : {RG_BLOCK, RG_WARP, RG_MMAP}) EXPECT_TRUE(rg_reads(fd, want, mode, page));
    EXPECT_TRUE(rg_random(fd, want, page)) << "random reads";
    EXPECT_EQ(0, host_close(fd));
    const struct gpufs_stats st = rg_stats();
    EXPECT_GT(st.evictions, 0ull);
    daemon_bytes[reg] = st.bytes_read;
    if (reg) {
      EXPECT_GE(st.reg_pages, rg_full_pages(size, page))
          << "each page within the registered length missed once at least, into the mapping";
      EXPECT_GT(st.bytes_read, 0ull) << "the tail page (past the registered length) is the daemon's";
      EXPECT_EQ(1ull, st.reg_files);
      EXPECT_EQ((size + 4095) & ~4095ull, st.reg_bytes);
    } else {
      EXPECT_EQ(0ull, st.reg_pages);
      EXPECT_EQ(0ull, st.reg_files);
      EXPECT_EQ(0ull, st.reg_bytes);
      EXPECT_GE(st.bytes_read, size);
    }
    EXPECT_EQ(0ull, st.reg_refused);
    EXPECT_EQ(0ull, st.reg_retired);
    stop();
    EXPECT_EQ(0, rg_mapped(f)) << "gpufs_stop unmapped it";
  }
  EXPECT_LT(daemon_bytes[1] * 8, daemon_bytes[0]) << "registered, the daemon read only tails";
}

/* A descriptor open before gpufs_register (and a gopen that joins it)
 * keeps the daemon path and makes unregister -EBUSY; a gopen after its
 * gclose uses the mapping. */
TEST_P(RegisterRead, DescriptorOpenedBeforeKeepsTheDaemonPath)
{
  const uint64_t size = 64ull * page + 77, half = 32ull * page;
  std::string f = dir.make("before", size, 5);
  const std::vector<uint8_t> want = wt_pattern(size, 5);
  start(256ull * page);
  const int fd = host_open(f);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(0, gpufs_register(f.c_str())) << gpufs_error_detail();
  EXPECT_EQ(fd, host_open(f)) << "a gopen of the open path joins its descriptor";
  EXPECT_TRUE(rg_reads(fd, want, RG_BLOCK, page, 0, half));
  struct gpufs_stats st = rg_stats();
  EXPECT_EQ(0ull, st.reg_pages) << "opened before the registration: the daemon path";
  EXPECT_GE(st.bytes_read, half);
  EXPECT_EQ(-EBUSY, gpufs_unregister(f.c_str()));
  EXPECT_STRNE("", gpufs_error_detail());
  EXPECT_EQ(0, host_close(fd));
  EXPECT_EQ(-EBUSY, gpufs_unregister(f.c_str())) << "one reference is left";
  EXPECT_EQ(0, host_close(fd));

  EXPECT_TRUE(rg_reopen_reads(f, want, page));
  st = rg_stats();
  EXPECT_GE(st.reg_pages, rg_full_pages(size, page) - half / page)
      << "the second half was never cached: it came from the mapping";
  EXPECT_EQ(0, gpufs_unregister(f.c_str())) << gpufs_error_detail();
  EXPECT_EQ(0, rg_mapped(f));
  EXPECT_EQ(0ull, rg_stats().reg_files);
}

INSTANTIATE_TEST_SUITE_P(Pages, RegisterRead, RG_PARAMS, rg_param_name);

/* Before gpufs_start: both calls are -EINVAL.  Needs no GPU. */
TEST(RegisterNotStarted, BothCallsAreEINVAL)
{
  if (gpufs_instance_count() != 0) GTEST_SKIP() << "libgpufs runs (an earlier test did not stop it)";
  tdir dir;
  std::string f = dir.make("f", 3 * 4096, 1);
  EXPECT_EQ(-EINVAL, gpufs_register(f.c_str()));
  EXPECT_STRNE("", gpufs_error_detail());
  EXPECT_EQ(-EINVAL, gpufs_unregister(f.c_str()));
  EXPECT_STRNE("", gpufs_error_detail());
  EXPECT_EQ(0, rg_mapped(f));
}

class RegisterLife : public RegFixture {
protected:
  int refused = 0;
  std::string last_detail;
  /* gpufs_register(path) fails with want, says why (a new detail), and is
   * counted. */
  void refuse(int want, const char *path, const char *what)
  {
    EXPECT_EQ(want, gpufs_register(path)) << what;
    const std::string d = gpufs_error_detail();
    EXPECT_NE("", d) << what;
    EXPECT_NE(last_detail, d) << what << ": the detail of the failure before";
    last_detail = d;
    refused++;
  }
};

/* A subdirectory of the test directory, removed at the end. */
struct rg_subdir {
  std::string path;
  explicit rg_subdir(const std::string &p) : path(p) { mkdir(p.c_str(), 0755); }
  ~rg_subdir() { rmdir(path.c_str()); }
};

TEST_F(RegisterLife, RefusalsSayWhyAndLeaveNothing)
{
  const std::string ok = dir.make("ok", 3 * 4096 + 5, 1), exact = dir.make("exact", 4096, 2);
  const std::string small = dir.make("small", 100, 3), almost = dir.make("almost", 4095, 4);
  const std::string empty = dir.make("empty", 0, 5), missing = dir.path + "/missing";
  rg_subdir sub(dir.path + "/sub");
  const std::string fifo = newpath("fifo"), link = newpath("ok-link");
  ASSERT_EQ(0, mkfifo(fifo.c_str(), 0644));
  ASSERT_EQ(0, ::link(ok.c_str(), link.c_str()));
  start(4096, 64 * 4096);

  refuse(-EFAULT, nullptr, "NULL");
  refuse(-ENOENT, missing.c_str(), "a missing file");
  refuse(-EINVAL, sub.path.c_str(), "a directory");
  refuse(-EINVAL, empty.c_str(), "an empty file");
  refuse(-EINVAL, small.c_str(), "100 bytes");
  refuse(-EINVAL, almost.c_str(), "4095 bytes");
  /* A FIFO must be refused without waiting for a writer.  Should the call
   * block in open(2), a writer's open lets it return, and the test fails. */
  auto fut = std::async(std::launch::async, [&] {
    const int rc = gpufs_register(fifo.c_str());
    return std::make_pair(rc, std::string(gpufs_error_detail()));
  });
  if (fut.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
    ADD_FAILURE() << "gpufs_register of a FIFO blocked in open(2)";
    const int w = open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (w >= 0) close(w);
  }
  const std::pair<int, std::string> fr = fut.get();
  EXPECT_EQ(-EINVAL, fr.first) << "a FIFO";
  EXPECT_NE("", fr.second);
  refused++;

  ASSERT_EQ(0, gpufs_register(exact.c_str())) << "exactly 4 KiB: " << gpufs_error_detail();
  ASSERT_EQ(0, gpufs_register(ok.c_str())) << gpufs_error_detail();
  refuse(-EEXIST, ok.c_str(), "registered twice");
  refuse(-EEXIST, link.c_str(), "through a hard link");
  refuse(-EEXIST, (dir.path + "/./ok").c_str(), "another spelling");
  EXPECT_EQ(1, rg_mapped(ok)) << "a refused registration leaves no mapping";
  for (const std::string *p : {&small, &almost, &empty}) {
    EXPECT_EQ(0, rg_mapped(*p)) << *p;
  }
  struct gpufs_stats st = rg_stats();
  EXPECT_EQ((uint64_t)refused, st.reg_refused);
  EXPECT_EQ(2ull, st.reg_files);
  EXPECT_EQ(4096ull + 4 * 4096, st.reg_bytes);
  EXPECT_EQ(0ull, st.reg_retired);

  /* unregister: its failures are not gpufs_register's, so not counted */
  EXPECT_EQ(-EFAULT, gpufs_unregister(nullptr));
  EXPECT_EQ(-ENOENT, gpufs_unregister(missing.c_str()));
  EXPECT_EQ(-EINVAL, gpufs_unregister(small.c_str())) << "never registered";
  EXPECT_STRNE("", gpufs_error_detail());
  EXPECT_EQ(-EINVAL, gpufs_unregister(sub.path.c_str()));
  EXPECT_EQ(0, gpufs_unregister(link.c_str())) << "any name of the file";
  EXPECT_EQ(-EINVAL, gpufs_unregister(ok.c_str())) << "unregistered already";
  EXPECT_EQ(0, rg_mapped(ok));
  st = rg_stats();
  EXPECT_EQ((uint64_t)refused, st.reg_refused);
  EXPECT_EQ(1ull, st.reg_files);
  EXPECT_EQ(4096ull, st.reg_bytes);

  /* a one-page file is read from its mapping; a registered file open on
   * the GPU cannot be unregistered until its gclose */
  const int fd = host_open(exact);
  ASSERT_GE(fd, 0);
  EXPECT_TRUE(rg_reads(fd, wt_pattern(4096, 2), RG_BLOCK, 4096));
  EXPECT_EQ(1ull, rg_stats().reg_pages);
  EXPECT_EQ(-EBUSY, gpufs_unregister(exact.c_str()));
  EXPECT_EQ(1, rg_mapped(exact));
  EXPECT_EQ(0, host_close(fd));
  EXPECT_EQ(0, gpufs_unregister(exact.c_str())) << gpufs_error_detail();
  EXPECT_EQ(0, rg_mapped(exact));
  EXPECT_EQ((uint64_t)refused, rg_stats().reg_refused);
}

/* register_max bounds what every registration pins together (the sizes
 * rounded up to 4 KiB). */
TEST_F(RegisterLife, RegisterMaxBoundsThePinnedBytes)
{
  const std::string big = dir.make("big", 20 * 4096, 1), b = dir.make("b", 8 * 4096, 2);
  const std::string c = dir.make("c", 9 * 4096 - 100, 3), d = dir.make("d", 8 * 4096 - 1, 4);
  start(4096, 64 * 4096, 16 * 4096);
  refuse(-EFBIG, big.c_str(), "one file over register_max");
  ASSERT_EQ(0, gpufs_register(b.c_str())) << gpufs_error_detail();
  refuse(-EFBIG, c.c_str(), "8 + 9 pages > 16");
  ASSERT_EQ(0, gpufs_register(d.c_str())) << "8 + 8 pages: exactly the limit; " << gpufs_error_detail();
  refuse(-EEXIST, b.c_str(), "registered already, whatever the limit");
  EXPECT_EQ(1, rg_mapped(b));
  struct gpufs_stats st = rg_stats();
  EXPECT_EQ(16ull * 4096, st.reg_bytes);
  EXPECT_EQ(2ull, st.reg_files);
  EXPECT_EQ((uint64_t)refused, st.reg_refused);
  EXPECT_EQ(0, rg_mapped(big));
  EXPECT_EQ(0, rg_mapped(c));
  ASSERT_EQ(0, gpufs_unregister(b.c_str()));
  refuse(-EFBIG, c.c_str(), "8 + 9 pages still");
  ASSERT_EQ(0, gpufs_unregister(d.c_str()));
  ASSERT_EQ(0, gpufs_register(c.c_str())) << gpufs_error_detail();
  EXPECT_EQ(9ull * 4096, rg_stats().reg_bytes);
  EXPECT_TRUE(rg_reopen_reads(c, wt_pattern(9 * 4096 - 100, 3), 4096));
  st = rg_stats();
  EXPECT_EQ(8ull, st.reg_pages) << "8 whole pages from the mapping, the 9th from the daemon";
  EXPECT_EQ((uint64_t)refused, st.reg_refused);
}

/* gpufs_stop with files registered (one open on the GPU) unmaps them; a
 * new start has no registration, and registering the same files works. */
TEST_F(RegisterLife, StopReleasesEveryRegistration)
{
  const uint64_t sa = 40 * 4096 + 9, sb = 12 * 4096;
  const std::string a = dir.make("a", sa, 1), b = dir.make("b", sb, 2);
  start(4096, 256 * 4096);
  ASSERT_EQ(0, gpufs_register(a.c_str())) << gpufs_error_detail();
  ASSERT_EQ(0, gpufs_register(b.c_str())) << gpufs_error_detail();
  EXPECT_EQ(1, rg_mapped(a));
  EXPECT_EQ(1, rg_mapped(b));
  const int fd = host_open(a);
  ASSERT_GE(fd, 0);
  EXPECT_TRUE(rg_reads(fd, wt_pattern(sa, 1), RG_WARP, 4096));
  EXPECT_GE(rg_stats().reg_pages, 40ull);
  stop(); /* a still open on the GPU, both registered */
  EXPECT_EQ(0, rg_mapped(a));
  EXPECT_EQ(0, rg_mapped(b));
  EXPECT_EQ(-EINVAL, gpufs_register(a.c_str())) << "stopped";

  start(4096, 256 * 4096);
  struct gpufs_stats st = rg_stats();
  EXPECT_EQ(0ull, st.reg_files);
  EXPECT_EQ(0ull, st.reg_bytes);
  EXPECT_EQ(0ull, st.reg_refused) << "counters of this start";
  EXPECT_EQ(0ull, st.reg_pages);
  EXPECT_EQ(-EINVAL, gpufs_unregister(a.c_str())) << "the stop unregistered it";
  ASSERT_EQ(0, gpufs_register(a.c_str())) << gpufs_error_detail();
  ASSERT_EQ(0, gpufs_register(b.c_str())) << gpufs_error_detail();
  EXPECT_TRUE(rg_reopen_reads(a, wt_pattern(sa, 1), 4096));
  EXPECT_TRUE(rg_reopen_reads(b, wt_pattern(sb, 2), 4096, RG_MMAP));
  st = rg_stats();
  EXPECT_GE(st.reg_pages, 40ull + 12);
  EXPECT_EQ(2ull, st.reg_files);
  /* the fixture's gpufs_stop releases them again */
}

/* Two instances on one GPU: each reads its half first (nothing in the
 * other's cache: both must use the mapping), then the whole file. */
TEST_F(RegisterLife, TwoInstancesBothReadTheMapping)
{
  const uint64_t size = 96 * 4096 + 700, half = 48 * 4096;
  const std::string f = dir.make("shared", size, 9);
  const std::vector<uint8_t> want = wt_pattern(size, 9);
  struct gpufs_config c = small_config(4096, 256 * 4096);
  c.ndevices = 2;
  c.devices[0] = c.devices[1] = 0;
  c.readahead_max = 0; /* no page of the other half is loaded ahead */
  start_cfg(c);
  ASSERT_EQ(2, gpufs_instance_count());
  ASSERT_EQ(0, gpufs_register(f.c_str())) << gpufs_error_detail();
  int fds[2];
  dpath dp(f);
  for (int i = 0; i < 2; i++) {
    gpufs_ref ref{~0u};
    ASSERT_EQ(0, gpufs_get_ref(i, &ref));
    wt_dmem<int64_t> r(1, 0x7f);
    rg_open_ref_k<<<1, 32>>>(ref, dp.d, GPUFS_O_RDONLY, r.p);
    ASSERT_EQ(cudaSuccess, wt_sync());
    fds[i] = (int)r.get()[0];
    ASSERT_GE(fds[i], 0) << "instance " << i;
  }
  EXPECT_NE(fds[0], fds[1]) << "one descriptor per instance";
  EXPECT_TRUE(rg_reads(fds[0], want, RG_BLOCK, 4096, 0, half));
  EXPECT_TRUE(rg_reads(fds[1], want, RG_BLOCK, 4096, half, size));
  for (int i = 0; i < 2; i++) {
    struct gpufs_stats st;
    ASSERT_EQ(0, gpufs_get_instance_stats(i, &st));
    EXPECT_GE(st.reg_pages, 48ull) << "instance " << i << " read its half from the mapping";
    EXPECT_EQ(1ull, st.reg_files) << "runtime-wide";
  }
  EXPECT_TRUE(rg_reads(fds[0], want, RG_WARP, 4096));
  EXPECT_TRUE(rg_reads(fds[1], want, RG_MMAP, 4096));
  EXPECT_GE(rg_stats().reg_pages, 96ull);
  EXPECT_EQ(0, host_close(fds[0]));
  EXPECT_EQ(-EBUSY, gpufs_unregister(f.c_str())) << "open on instance 1";
  EXPECT_EQ(0, host_close(fds[1]));
  EXPECT_EQ(0, gpufs_unregister(f.c_str())) << gpufs_error_detail();
}
