/*
 * errors_test.cu - every bad input gets a clear error, never a hang: bad
 * descriptors, missing files, no permission, too many open files, long
 * names, bad offsets and flags, a directory, a failing disk, a bad
 * configuration, and libgpufs stopped while a kernel waits on it.
 */
#include <pthread.h>
#include <sys/types.h>
#include <atomic>
#include <chrono>
#include <thread>

#include "libgpufs/host/io.h"
#include "libgpufs/host/daemon.h"
#include "tests/gpu/gpu_util.h"

/* Run one block-level call sequence; results land in r[0..7]. */
enum { OP_OPEN_READ, OP_BADFD, OP_OPEN3, OP_OPEN_FLAGS };

__global__ void probe(int op, const char *p0, const char *p1, const char *p2, int64_t arg,
                      int64_t *r, uint8_t *buf)
{
  int64_t v[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  if (op == OP_OPEN_READ) {
    int fd = gopen(p0, GPUFS_O_RDONLY);
    v[0] = fd;
    if (fd >= 0) {
      v[1] = gread(fd, arg, 4096, buf);
      v[2] = gread(fd, -1, 10, buf);
      v[3] = gclose(fd);
      v[4] = gread(fd, 0, 10, buf); /* closed */
    }
  } else if (op == OP_BADFD) {
    v[0] = gread(-1, 0, 10, buf);
    v[1] = gread(100000, 0, 10, buf);
    v[2] = gread(3, 0, 10, buf); /* never opened */
    v[3] = gclose(-1);
    v[4] = gclose(3);
    struct gstat st;
    v[5] = gfstat(3, &st);
  } else if (op == OP_OPEN3) {
    v[0] = gopen(p0, GPUFS_O_RDONLY);
    v[1] = gopen(p1, GPUFS_O_RDONLY);
    v[2] = gopen(p2, GPUFS_O_RDONLY);
    if (v[0] >= 0) v[3] = gclose((int)v[0]);
    v[4] = gopen(p2, GPUFS_O_RDONLY);
    if (v[1] >= 0) gclose((int)v[1]);
    if (v[4] >= 0) gclose((int)v[4]);
  } else if (op == OP_OPEN_FLAGS) {
    v[0] = gopen(p0, (int)arg);
    v[1] = gopen_warp(p0, (int)arg);
  }
  if (threadIdx.x == 0)
    for (int i = 0; i < 8; i++) r[i] = v[i];
}

__global__ void open_for_test(const char *path, int *fd)
{
  int r = gopen(path, GPUFS_O_RDONLY);
  if (threadIdx.x == 0) *fd = r;
}

class ErrorsTest : public ::testing::Test {
protected:
  tdir dir;
  int64_t *dr = nullptr;
  uint8_t *dbuf = nullptr;
  bool started = false;
  void start(uint32_t max_files = 64)
  {
    struct gpufs_config c = small_config(4096, 1 << 20);
    c.max_open_files = max_files;
    ASSERT_EQ(0, gpufs_start(&c)) << gpufs_error_detail();
    started = true;
    ASSERT_EQ(cudaSuccess, cudaMalloc(&dr, 8 * sizeof(int64_t)));
    ASSERT_EQ(cudaSuccess, cudaMalloc(&dbuf, 1 << 16));
  }
  std::vector<int64_t> run(int op, const std::string &a, const std::string &b = "",
                           const std::string &c = "", int64_t arg = 0)
  {
    dpath pa(a), pb(b), pc(c);
    cudaMemset(dr, 0x7f, 8 * sizeof(int64_t));
    probe<<<1, 64>>>(op, pa.d, pb.d, pc.d, arg, dr, dbuf);
    EXPECT_EQ(cudaSuccess, cudaDeviceSynchronize());
    std::vector<int64_t> r(8);
    cudaMemcpy(r.data(), dr, 8 * sizeof(int64_t), cudaMemcpyDeviceToHost);
    return r;
  }
  void TearDown() override
  {
    if (dr) cudaFree(dr);
    if (dbuf) cudaFree(dbuf);
    if (started) EXPECT_EQ(0, gpufs_stop());
  }
};

TEST_F(ErrorsTest, BadDescriptors)
{
  REQUIRE_GPU();
  start();
  auto r = run(OP_BADFD, "");
  EXPECT_EQ(-GPUFS_EBADF, r[0]);
  EXPECT_EQ(-GPUFS_EBADF, r[1]);
  EXPECT_EQ(-GPUFS_EBADF, r[2]);
  EXPECT_EQ(-GPUFS_EBADF, r[3]);
  EXPECT_EQ(-GPUFS_EBADF, r[4]);
  EXPECT_EQ(-GPUFS_EBADF, r[5]);
}

TEST_F(ErrorsTest, ClosedDescriptorAndNegativeOffset)
{
  REQUIRE_GPU();
  start();
  std::string f = dir.make("a", 10000, 1);
  auto r = run(OP_OPEN_READ, f, "", "", 0);
  ASSERT_GE(r[0], 0);
  EXPECT_EQ(4096, r[1]);
  EXPECT_EQ(-GPUFS_EINVAL, r[2]);
  EXPECT_EQ(0, r[3]);
  EXPECT_EQ(-GPUFS_EBADF, r[4]);
}

TEST_F(ErrorsTest, MissingFile)
{
  REQUIRE_GPU();
  start();
  auto r = run(OP_OPEN_READ, dir.path + "/does_not_exist");
  EXPECT_EQ(-GPUFS_ENOENT, r[0]);
  r = run(OP_OPEN_READ, "");
  EXPECT_EQ(-GPUFS_ENOENT, r[0]);
}

TEST_F(ErrorsTest, NoPermission)
{
  REQUIRE_GPU();
  start();
  std::string f = dir.make("secret", 100, 1);
  ASSERT_EQ(0, chmod(f.c_str(), 0));
  bool root = geteuid() == 0;
  if (root && seteuid(65534) != 0) GTEST_SKIP() << "cannot drop root to test permissions";
  auto r = run(OP_OPEN_READ, f);
  if (root) ASSERT_EQ(0, seteuid(0));
  EXPECT_EQ(-GPUFS_EACCES, r[0]);
}

TEST_F(ErrorsTest, TooManyOpenFiles)
{
  REQUIRE_GPU();
  start(2);
  std::string a = dir.make("a", 10, 1), b = dir.make("b", 10, 2), c = dir.make("c", 10, 3);
  auto r = run(OP_OPEN3, a, b, c);
  EXPECT_GE(r[0], 0);
  EXPECT_GE(r[1], 0);
  EXPECT_EQ(-GPUFS_EMFILE, r[2]);
  EXPECT_EQ(0, r[3]);
  EXPECT_GE(r[4], 0) << "a closed descriptor's entry is reused";
}

TEST_F(ErrorsTest, NameTooLongAndBadFlags)
{
  REQUIRE_GPU();
  start();
  std::string f = dir.make("a", 10, 1);
  auto r = run(OP_OPEN_READ, std::string(5000, 'x'));
  EXPECT_EQ(-GPUFS_ENAMETOOLONG, r[0]);
  r = run(OP_OPEN_READ, dir.path + "/" + std::string(300, 'y'));
  EXPECT_EQ(-GPUFS_ENAMETOOLONG, r[0]) << "the host's limit for one name";
  r = run(OP_OPEN_FLAGS, f, "", "", 3); /* no such access mode */
  EXPECT_EQ(-GPUFS_EINVAL, r[0]);
  EXPECT_EQ(-GPUFS_EINVAL, r[1]);
  r = run(OP_OPEN_FLAGS, f, "", "", GPUFS_O_RDONLY | 02000); /* O_APPEND: not served */
  EXPECT_EQ(-GPUFS_EINVAL, r[0]);
  EXPECT_EQ(-GPUFS_EINVAL, r[1]);
}

TEST_F(ErrorsTest, Directory)
{
  REQUIRE_GPU();
  start();
  auto r = run(OP_OPEN_READ, dir.path, "", "", 0);
  if (r[0] >= 0) {
    /* a directory's size is that of its entries; reading it fails on the host */
    if (r[1] != 0) EXPECT_EQ(-GPUFS_EISDIR, r[1]);
  } else {
    EXPECT_EQ(-GPUFS_EISDIR, r[0]);
  }
}

static int plain_open(const char *path, int flags, mode_t mode) { return open(path, flags, mode); }

/* A disk that fails for every byte at or past 8 KiB. */
static ssize_t failing_pread(int fd, void *buf, size_t len, off_t off)
{
  if (off + (off_t)len > 8192) {
    errno = EIO;
    return -1;
  }
  return pread(fd, buf, len, off);
}

TEST_F(ErrorsTest, FailingDisk)
{
  REQUIRE_GPU();
  static const struct gpufs_io_ops ops = {plain_open, failing_pread, close, NULL, NULL, NULL, NULL, NULL};
  gpufs_test_set_io_ops(&ops);
  start();
  gpufs_test_set_io_ops(NULL);
  std::string f = dir.make("bad", 64 << 10, 9);
  auto r = run(OP_OPEN_READ, f, "", "", 0);
  ASSERT_GE(r[0], 0);
  EXPECT_EQ(4096, r[1]) << "the first page is readable";
  r = run(OP_OPEN_READ, f, "", "", 5 * 4096);
  ASSERT_GE(r[0], 0);
  EXPECT_EQ(-GPUFS_EIO, r[1]) << "the host's EIO reaches the kernel";
  r = run(OP_OPEN_READ, f, "", "", 5 * 4096);
  EXPECT_EQ(-GPUFS_EIO, r[1]) << "a failed page is not cached: it fails again";
}

TEST(ConfigTest, BadConfigurationIsRefused)
{
  struct gpufs_config c;
  gpufs_config_default(&c);
  c.page_size = 3000;
  EXPECT_EQ(-EINVAL, gpufs_start(&c));
  EXPECT_NE(nullptr, strstr(gpufs_error_detail(), "page_size")) << gpufs_error_detail();
  gpufs_config_default(&c);
  c.cache_size = 4096;
  EXPECT_EQ(-EINVAL, gpufs_start(&c));
  EXPECT_NE(nullptr, strstr(gpufs_error_detail(), "cache_size"));
  gpufs_config_default(&c);
  EXPECT_EQ(1ull << 30, gpufs_config_staging(&c)) << "16384 slots of 64 KiB";
  c.page_size = 4096;
  EXPECT_EQ(256ull << 20, gpufs_config_staging(&c)) << "at least 256 MiB";
  c.page_size = 2u << 20;
  EXPECT_EQ(1ull << 30, gpufs_config_staging(&c)) << "at most 1 GiB";
  c.staging_size = 100 * 4096;
  c.page_size = 4096;
  EXPECT_EQ(-EINVAL, gpufs_start(&c)) << "fewer than 128 slots";
  EXPECT_NE(nullptr, strstr(gpufs_error_detail(), "staging_size"));
  gpufs_config_default(&c);
  c.poll_max_ns = 10;
  EXPECT_EQ(-EINVAL, gpufs_start(&c));
  EXPECT_NE(nullptr, strstr(gpufs_error_detail(), "poll_max_ns"));
  setenv("GPUFS_PAGE_SIZE", "lots", 1);
  EXPECT_EQ(-EINVAL, gpufs_start(NULL));
  EXPECT_NE(nullptr, strstr(gpufs_error_detail(), "GPUFS_PAGE_SIZE"));
  unsetenv("GPUFS_PAGE_SIZE");
  EXPECT_EQ(0, gpufs_stop()) << "stop without start is harmless";
  EXPECT_EQ(-EINVAL, gpufs_get_stats(NULL));
}

TEST(ConfigTest, StartTwiceStopTwice)
{
  REQUIRE_GPU();
  struct gpufs_config c = small_config(4096, 1 << 20);
  ASSERT_EQ(0, gpufs_start(&c)) << gpufs_error_detail();
  EXPECT_EQ(-EBUSY, gpufs_start(&c));
  EXPECT_EQ(0, gpufs_stop());
  EXPECT_EQ(0, gpufs_stop());
}

/* The host stops libgpufs while a kernel waits on it: the call returns. */
TEST_F(ErrorsTest, StoppedWhileWaiting)
{
  REQUIRE_GPU();
  start();
  std::string fifo = dir.path + "/fifo";
  ASSERT_EQ(0, mkfifo(fifo.c_str(), 0644));
  dir.files.push_back(fifo);
  dpath p(fifo), e("");
  /* the daemon's worker blocks in open() of the FIFO until a writer comes */
  probe<<<1, 64>>>(OP_OPEN_READ, p.d, e.d, e.d, 0, dr, dbuf);
  usleep(300 * 1000);
  std::thread writer([&] {
    usleep(700 * 1000); /* let stop flag the queue first, then free the worker */
    int fd = open(fifo.c_str(), O_WRONLY);
    if (fd >= 0) close(fd);
  });
  EXPECT_EQ(0, gpufs_stop());
  started = false;
  writer.join();
  int64_t r[8];
  ASSERT_EQ(cudaSuccess, cudaMemcpy(r, dr, sizeof(r), cudaMemcpyDeviceToHost));
  EXPECT_EQ(-GPUFS_ESHUTDOWN, r[0]);
}

/* A disk whose reads block until the test lets them go. */
static std::atomic<int> g_release_reads{0};
static ssize_t blocking_pread(int fd, void *buf, size_t len, off_t off)
{
  while (!g_release_reads.load()) usleep(1000);
  return pread(fd, buf, len, off);
}

/* The kernels are waiting in gread (blocked preads): stop libgpufs while
 * the preads stay blocked for another 0.7 s.  gpufs_stop's result. */
static int stop_while_reads_block(void)
{
  usleep(300 * 1000);
  std::thread releaser([] {
    usleep(700 * 1000);
    g_release_reads = 1;
  });
  int rc = gpufs_stop();
  releaser.join();
  return rc;
}

__global__ void read_many(int fd, uint32_t page, uint8_t *bufs, int64_t *r)
{
  /* 32 pages a block: every meta lane loads; more requests than slots, so
   * some lanes wait for a free slot and others for the host */
  ssize_t n = gread(fd, (int64_t)blockIdx.x * 32 * page, 32ull * page, bufs + blockIdx.x * 32ull * page);
  if (threadIdx.x == 0) r[blockIdx.x] = n;
}

/* The host stops libgpufs while kernels wait in gread: every read returns
 * -ESHUTDOWN, whether it waited for a slot or for the host. */
TEST_F(ErrorsTest, StoppedDuringRead)
{
  REQUIRE_GPU();
  static const struct gpufs_io_ops ops = {plain_open, blocking_pread, close, NULL, NULL, NULL, NULL, NULL};
  g_release_reads = 0;
  gpufs_test_set_io_ops(&ops);
  struct gpufs_config c = small_config(4096, 64ull << 20);
  c.staging_size = 128 * 4096; /* 128 slots for 256 page requests */
  ASSERT_EQ(0, gpufs_start(&c)) << gpufs_error_detail();
  started = true;
  gpufs_test_set_io_ops(NULL);
  std::string f = dir.make("slow", 8 * 32 * 4096, 13);
  dpath p(f);
  int *dfd, fd = -1;
  ASSERT_EQ(cudaSuccess, cudaMalloc(&dfd, sizeof(int)));
  open_for_test<<<1, 32>>>(p.d, dfd);
  ASSERT_EQ(cudaSuccess, cudaMemcpy(&fd, dfd, sizeof(int), cudaMemcpyDeviceToHost));
  ASSERT_GE(fd, 0);
  uint8_t *bufs;
  int64_t *r;
  ASSERT_EQ(cudaSuccess, cudaMalloc(&bufs, 8 * 32 * 4096));
  ASSERT_EQ(cudaSuccess, cudaMalloc(&r, 8 * sizeof(int64_t)));
  read_many<<<8, 64>>>(fd, 4096, bufs, r);
  EXPECT_EQ(0, stop_while_reads_block());
  started = false;
  int64_t h[8];
  ASSERT_EQ(cudaSuccess, cudaMemcpy(h, r, sizeof(h), cudaMemcpyDeviceToHost));
  for (int b = 0; b < 8; b++) EXPECT_EQ(-GPUFS_ESHUTDOWN, h[b]) << "block " << b;
  cudaFree(dfd);
  cudaFree(bufs);
  cudaFree(r);
}

/* One block opens path on ref's instance and reads 32 pages from page 0. */
__global__ void read_on(gpufs_ref ref, const char *path, uint32_t page, uint8_t *buf, int64_t *r)
{
  int fd = gopen(ref, path, GPUFS_O_RDONLY);
  ssize_t n = fd < 0 ? fd : gread(fd, 0, 32ull * page, buf);
  if (threadIdx.x == 0) *r = n;
}

/* Two instances, a kernel on each waiting in gread for the host (one
 * daemon, blocked preads), and the host stops libgpufs: both reads return
 * -ESHUTDOWN, the stop returns, nothing hangs. */
TEST_F(ErrorsTest, StoppedDuringReadOnTwoInstances)
{
  REQUIRE_GPU();
  static const struct gpufs_io_ops ops = {plain_open, blocking_pread, close, NULL, NULL, NULL, NULL, NULL};
  g_release_reads = 0;
  gpufs_test_set_io_ops(&ops);
  struct gpufs_config c = small_config(4096, 16ull << 20);
  c.ndevices = 2;
  c.devices[0] = c.devices[1] = 0;
  ASSERT_EQ(0, gpufs_start(&c)) << gpufs_error_detail();
  started = true;
  gpufs_test_set_io_ops(NULL);
  std::string f = dir.make("slow2", 32 * 4096, 14);
  dpath p(f);
  uint8_t *bufs;
  int64_t *r;
  ASSERT_EQ(cudaSuccess, cudaMalloc(&bufs, 2 * 32 * 4096));
  ASSERT_EQ(cudaSuccess, cudaMalloc(&r, 2 * sizeof(int64_t)));
  ASSERT_EQ(cudaSuccess, cudaMemset(r, 0, 2 * sizeof(int64_t)));
  cudaStream_t s[2];
  for (int i = 0; i < 2; i++) {
    gpufs_ref ref;
    ASSERT_EQ(0, gpufs_get_ref(i, &ref));
    ASSERT_EQ(cudaSuccess, cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));
    read_on<<<1, 64, 0, s[i]>>>(ref, p.d, 4096, bufs + i * 32 * 4096, r + i);
  }
  EXPECT_EQ(0, stop_while_reads_block());
  started = false;
  int64_t h[2];
  ASSERT_EQ(cudaSuccess, cudaMemcpy(h, r, sizeof(h), cudaMemcpyDeviceToHost));
  EXPECT_EQ(-GPUFS_ESHUTDOWN, h[0]) << "instance 0";
  EXPECT_EQ(-GPUFS_ESHUTDOWN, h[1]) << "instance 1";
  for (int i = 0; i < 2; i++) cudaStreamDestroy(s[i]);
  cudaFree(bufs);
  cudaFree(r);
}

/* A worker stuck in a host call (open(2) of a FIFO without a writer) does
 * not hold gpufs_stop past stop_timeout_ms: it returns -EIO naming the
 * call, the kernel's gopen gives up with -ESHUTDOWN, and libgpufs starts
 * again afterwards. */
TEST_F(ErrorsTest, StopGivesUpOnAStuckHostCall)
{
  REQUIRE_GPU();
  std::string fifo = dir.path + "/stuck-fifo";
  ASSERT_EQ(0, mkfifo(fifo.c_str(), 0600));
  dir.files.push_back(fifo);
  struct gpufs_config c = small_config(4096, 16ull << 20);
  c.stop_timeout_ms = 500;
  ASSERT_EQ(0, gpufs_start(&c)) << gpufs_error_detail();
  dpath p(fifo);
  int *dfd;
  ASSERT_EQ(cudaSuccess, cudaMalloc(&dfd, sizeof(int)));
  ASSERT_EQ(cudaSuccess, cudaMemset(dfd, 0, sizeof(int)));
  cudaStream_t s;
  ASSERT_EQ(cudaSuccess, cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  open_for_test<<<1, 32, 0, s>>>(p.d, dfd);
  usleep(300 * 1000); /* the worker is inside open(2) now */
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(-EIO, gpufs_stop());
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(secs, 5.0) << "stop waited past its limit";
  EXPECT_NE(nullptr, strstr(gpufs_error_detail(), "stuck-fifo")) << gpufs_error_detail();
  int fd = 0;
  ASSERT_EQ(cudaSuccess, cudaStreamSynchronize(s));
  ASSERT_EQ(cudaSuccess, cudaMemcpy(&fd, dfd, sizeof(int), cudaMemcpyDeviceToHost));
  EXPECT_EQ(-GPUFS_ESHUTDOWN, fd);
  /* let the stuck worker finish: it leaves by itself */
  int wfd = open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  EXPECT_GE(wfd, 0) << strerror(errno);
  usleep(100 * 1000);
  if (wfd >= 0) close(wfd);
  ASSERT_EQ(0, gpufs_start(&c)) << gpufs_error_detail();
  started = true;
  std::string f = dir.make("after", 4096, 3);
  dpath pf(f);
  open_for_test<<<1, 32>>>(pf.d, dfd);
  ASSERT_EQ(cudaSuccess, cudaMemcpy(&fd, dfd, sizeof(int), cudaMemcpyDeviceToHost));
  EXPECT_GE(fd, 0) << "a new start serves again";
  cudaStreamDestroy(s);
  cudaFree(dfd);
}
