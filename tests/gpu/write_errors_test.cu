/*
 * write_errors_test.cu - the write path's failures: bad calls and
 * permissions, and a disk that fails writes, fsyncs or a page read (the
 * daemon's io hooks): errors reach the caller, pages stay dirty until a
 * write-back succeeds, nothing is dropped silently.
 */
#include "tests/gpu/write_util.cuh"

/* ---------------- 9: bad inputs ---------------- */

__global__ void wt_error_probe(const char *path, const char *newp, const char *missing, const uint8_t *buf,
                               int64_t *r)
{
  const int RW = GPUFS_PROT_READ | GPUFS_PROT_WRITE;
  int64_t v[24];
  for (int i = 0; i < 24; i++) v[i] = 0x7f7f7f7f;
  int ro = gopen(path, GPUFS_O_RDONLY);
  v[0] = ro;
  if (ro >= 0) {
    v[1] = gwrite(ro, 0, 10, buf);
    v[2] = gftruncate(ro, 5);
    void *p = gmmap(NULL, 10, RW, GPUFS_MAP_SHARED, ro, 0);
    v[3] = GPUFS_MAP_FAILED(p) ? GPUFS_MAP_ERRNO(p) : 0;
    if (!GPUFS_MAP_FAILED(p)) gmunmap(p, 10);
    v[4] = gclose(ro);
  }
  int wo = gopen(path, GPUFS_O_WRONLY);
  v[5] = wo;
  if (wo >= 0) {
    v[6] = gread(wo, 0, 10, (void *)buf);
    v[7] = gwrite(wo, -1, 10, buf);
    v[8] = gwrite(wo, 0, 10, NULL);
    v[9] = gwrite(wo, 0, 0, buf);
    v[10] = gftruncate(wo, -1);
    v[11] = gclose(wo);
  }
  v[12] = gopen(path, GPUFS_O_RDWR | GPUFS_O_CREAT | GPUFS_O_EXCL, 0644);
  if (v[12] >= 0) gclose((int)v[12]);
  int nf = gopen(newp, GPUFS_O_RDWR | GPUFS_O_CREAT | GPUFS_O_EXCL, 0640);
  v[13] = nf;
  if (nf >= 0) {
    v[14] = gopen(newp, GPUFS_O_RDWR | GPUFS_O_CREAT | GPUFS_O_EXCL, 0640);
    if (v[14] >= 0) gclose((int)v[14]);
    v[15] = gwrite(nf, 0, 100, buf);
    void *p = gmmap(NULL, 10, RW, GPUFS_MAP_PRIVATE, nf, 0);
    v[16] = GPUFS_MAP_FAILED(p) ? GPUFS_MAP_ERRNO(p) : 0;
    if (!GPUFS_MAP_FAILED(p)) gmunmap(p, 10);
    v[17] = gclose(nf);
    v[18] = gwrite(nf, 0, 10, buf);
    v[19] = gfsync(nf);
  }
  v[20] = gunlink(missing);
  v[21] = gopen(path, GPUFS_O_RDONLY | 0x10000000);
  if (v[21] >= 0) gclose((int)v[21]);
  v[22] = gfsync(-1);
  v[23] = gftruncate(-1, 0);
  if (threadIdx.x == 0)
    for (int i = 0; i < 24; i++) r[i] = v[i];
}

class WriteErrorsTest : public ::testing::Test {
protected:
  tdir dir;
  bool started = false;
  void SetUp() override { REQUIRE_GPU(); }
  void start()
  {
    struct gpufs_config c = small_config(4096, 1 << 20);
    ASSERT_EQ(0, gpufs_start(&c)) << gpufs_error_detail();
    started = true;
  }
  void TearDown() override
  {
    if (started) EXPECT_EQ(0, gpufs_stop());
  }
};

TEST_F(WriteErrorsTest, BadCalls)
{
  mode_t um = umask(0);
  umask(um);
  start();
  std::string f = dir.make("e", 5000, 91);
  std::string nf = dir.path + "/created";
  dir.files.push_back(nf);
  dpath pf(f), pn(nf), pm(dir.path + "/missing");
  wt_src buf(4096, 92);
  wt_dmem<int64_t> r(24, 0x7f);
  wt_error_probe<<<1, 64>>>(pf.d, pn.d, pm.d, buf.p, r.p);
  ASSERT_EQ(cudaSuccess, wt_sync());
  std::vector<int64_t> h = r.get();
  ASSERT_GE(h[0], 0) << "gopen O_RDONLY" << wt_err(h[0]);
  EXPECT_EQ(-GPUFS_EBADF, h[1]) << "gwrite on O_RDONLY" << wt_err(h[1]);
  EXPECT_EQ(-GPUFS_EINVAL, h[2]) << "gftruncate on O_RDONLY" << wt_err(h[2]);
  EXPECT_EQ(-GPUFS_EACCES, h[3]) << "gmmap(PROT_WRITE) on O_RDONLY" << wt_err(h[3]);
  EXPECT_EQ(0, h[4]) << "gclose" << wt_err(h[4]);
  ASSERT_GE(h[5], 0) << "gopen O_WRONLY" << wt_err(h[5]);
  EXPECT_EQ(-GPUFS_EBADF, h[6]) << "gread on O_WRONLY" << wt_err(h[6]);
  EXPECT_EQ(-GPUFS_EINVAL, h[7]) << "gwrite at offset -1" << wt_err(h[7]);
  EXPECT_EQ(-GPUFS_EFAULT, h[8]) << "gwrite of NULL" << wt_err(h[8]);
  EXPECT_EQ(0, h[9]) << "gwrite of 0 bytes" << wt_err(h[9]);
  EXPECT_EQ(-GPUFS_EINVAL, h[10]) << "gftruncate to -1" << wt_err(h[10]);
  EXPECT_EQ(0, h[11]) << "gclose" << wt_err(h[11]);
  EXPECT_EQ(-GPUFS_EEXIST, h[12]) << "gopen O_CREAT|O_EXCL of an existing file" << wt_err(h[12]);
  ASSERT_GE(h[13], 0) << "gopen O_CREAT|O_EXCL of a new file" << wt_err(h[13]);
  EXPECT_EQ(-GPUFS_EEXIST, h[14]) << "gopen O_CREAT|O_EXCL of a path open on the GPU" << wt_err(h[14]);
  EXPECT_EQ(100, h[15]) << "gwrite to the new file" << wt_err(h[15]);
  EXPECT_EQ(-GPUFS_EINVAL, h[16]) << "gmmap(PROT_WRITE, MAP_PRIVATE)" << wt_err(h[16]);
  EXPECT_EQ(0, h[17]) << "gclose" << wt_err(h[17]);
  EXPECT_EQ(-GPUFS_EBADF, h[18]) << "gwrite after gclose" << wt_err(h[18]);
  EXPECT_EQ(-GPUFS_EBADF, h[19]) << "gfsync after gclose" << wt_err(h[19]);
  EXPECT_EQ(-GPUFS_ENOENT, h[20]) << "gunlink of a missing file" << wt_err(h[20]);
  EXPECT_EQ(-GPUFS_EINVAL, h[21]) << "gopen with an unknown flag" << wt_err(h[21]);
  EXPECT_EQ(-GPUFS_EBADF, h[22]) << "gfsync(-1)" << wt_err(h[22]);
  EXPECT_EQ(-GPUFS_EBADF, h[23]) << "gftruncate(-1)" << wt_err(h[23]);
  EXPECT_TRUE(wt_file_is(f, wt_pattern(5000, 91))) << "failed calls change nothing";
  EXPECT_TRUE(wt_file_is(nf, wt_pattern(100, 92))) << "the file O_CREAT made";
  struct stat st;
  ASSERT_EQ(0, stat(nf.c_str(), &st));
  EXPECT_EQ((unsigned)(0640 & ~um), (unsigned)(st.st_mode & 0777)) << "O_CREAT's mode, less the umask";
}

__global__ void wt_unlink_k(const char *path, int64_t *r)
{
  int v = gunlink(path);
  if (threadIdx.x == 0) *r = v;
}

TEST_F(WriteErrorsTest, UnlinkNullPath)
{
  start();
  wt_dmem<int64_t> r(1, 0x7f);
  wt_unlink_k<<<1, 64>>>(NULL, r.p);
  ASSERT_EQ(cudaSuccess, wt_sync());
  EXPECT_EQ(-GPUFS_EFAULT, r.get()[0]) << wt_err(r.get()[0]);
}

__global__ void wt_open_flags(const char *path, int64_t *r)
{
  int64_t v[3];
  v[0] = gopen(path, GPUFS_O_WRONLY);
  v[1] = gopen(path, GPUFS_O_RDWR);
  v[2] = gopen(path, GPUFS_O_RDONLY);
  for (int i = 0; i < 3; i++)
    if (v[i] >= 0) gclose((int)v[i]);
  if (threadIdx.x == 0)
    for (int i = 0; i < 3; i++) r[i] = v[i];
}

TEST_F(WriteErrorsTest, OpenForWritingWithoutPermission)
{
  if (geteuid() == 0) GTEST_SKIP() << "root may write any file";
  start();
  std::string f = dir.make("ro", 100, 93);
  ASSERT_EQ(0, chmod(f.c_str(), 0444));
  dpath pf(f);
  wt_dmem<int64_t> r(3, 0x7f);
  wt_open_flags<<<1, 64>>>(pf.d, r.p);
  ASSERT_EQ(cudaSuccess, wt_sync());
  std::vector<int64_t> h = r.get();
  EXPECT_EQ(-GPUFS_EACCES, h[0]) << "O_WRONLY" << wt_err(h[0]);
  EXPECT_EQ(-GPUFS_EACCES, h[1]) << "O_RDWR" << wt_err(h[1]);
  EXPECT_GE(h[2], 0) << "O_RDONLY" << wt_err(h[2]);
}

/* ---------------- 10: a disk that fails writes or fsyncs ---------------- */

static std::atomic<bool> g_wt_fail_pwrite{false}, g_wt_fail_fsync{false};
static std::atomic<int> g_wt_pwrite_failures{0}, g_wt_fsync_failures{0};

static ssize_t wt_failing_pwrite(int fd, const void *buf, size_t len, off_t off)
{
  if (g_wt_fail_pwrite.load()) {
    g_wt_pwrite_failures++;
    errno = ENOSPC;
    return -1;
  }
  return pwrite(fd, buf, len, off);
}

static int wt_failing_fsync(int fd)
{
  if (g_wt_fail_fsync.load()) {
    g_wt_fsync_failures++;
    errno = EIO;
    return -1;
  }
  return fsync(fd);
}

/* Reads of the file's first page fail while set (the other pages read). */
static std::atomic<bool> g_wt_fail_first_page{false};

static ssize_t wt_failing_pread(int fd, void *buf, size_t len, off_t off)
{
  if (g_wt_fail_first_page.load() && off < 4096) {
    errno = EIO;
    return -1;
  }
  return pread(fd, buf, len, off);
}

class WriteFaultTest : public ::testing::Test {
protected:
  tdir dir;
  bool started = false;
  void SetUp() override
  {
    REQUIRE_GPU();
    g_wt_fail_pwrite = false;
    g_wt_fail_fsync = false;
    g_wt_pwrite_failures = 0;
    g_wt_fsync_failures = 0;
  }
  void start()
  {
    static const struct gpufs_io_ops ops = {NULL, wt_failing_pread, NULL, wt_failing_pwrite,
                                            wt_failing_fsync, NULL, NULL, NULL};
    gpufs_test_set_io_ops(&ops);
    struct gpufs_config c = small_config(4096, 1 << 20);
    int rc = gpufs_start(&c);
    gpufs_test_set_io_ops(NULL);
    ASSERT_EQ(0, rc) << gpufs_error_detail();
    started = true;
  }
  void TearDown() override
  {
    g_wt_fail_pwrite = false;
    g_wt_fail_fsync = false;
    g_wt_fail_first_page = false;
    if (started) EXPECT_EQ(0, gpufs_stop());
  }
  /* A new file, opened O_RDWR|O_CREAT|O_TRUNC on the GPU, with fsize
   * pattern bytes written into the cache (not yet to the host). */
  int new_dirty_file(const std::string &f, uint64_t fsize, const wt_src &src)
  {
    int fd = wt_gopen_h(f, WT_RW_NEW);
    EXPECT_GE(fd, 0) << wt_err(fd);
    if (fd >= 0) wt_stream(fd, fsize, src, 4, 5000);
    return fd;
  }
};

static const uint64_t WT_FAULT_SIZE = 3 * 4096 + 1000;

/* One block: r[0] gwrite of [100, 100 + 3 pages) of src, whose first page
 * must be read and fails; after the host lets reads go (flag), r[1] gread
 * of pages 1 and 2 into out; r[2] gclose. */
__global__ void wt_write_fail_read(int fd, const uint8_t *src, uint8_t *out, volatile int *go,
                                   int64_t *r)
{
  int64_t v0 = gwrite(fd, 100, 3 * 4096, src + 100);
  if (threadIdx.x == 0)
    while (*go == 0) __nanosleep(1000);
  __syncthreads();
  int64_t v1 = gread(fd, 4096, 2 * 4096, out);
  int64_t v2 = gclose(fd);
  if (threadIdx.x == 0) {
    r[0] = v0;
    r[1] = v1;
    r[2] = v2;
  }
}

/* A gwrite whose partly written first page cannot be read: the pages it
 * covers whole, loaded in the same round without a read, hold its bytes
 * (never zeros), read back so, and reach the file; the first page keeps
 * the file's bytes. */
TEST_F(WriteFaultTest, PagesAWriteCoversWholeNeverShowZeros)
{
  start();
  const uint64_t fsize = 4 * 4096 + 100;
  std::vector<uint8_t> old = wt_pattern(fsize, 7);
  std::string f = dir.path + "/partfail";
  dir.files.push_back(f);
  ASSERT_TRUE(wt_host_rewrite(f, old));
  wt_src src(fsize, 8);
  int fd = wt_gopen_h(f, GPUFS_O_RDWR);
  ASSERT_GE(fd, 0) << wt_err(fd);
  g_wt_fail_first_page = true;
  uint8_t *out;
  int *go;
  int64_t *dr;
  ASSERT_EQ(cudaSuccess, cudaMalloc(&out, 2 * 4096));
  ASSERT_EQ(cudaSuccess, cudaMallocHost(&go, sizeof(int)));
  ASSERT_EQ(cudaSuccess, cudaMalloc(&dr, 3 * sizeof(int64_t)));
  *go = 0;
  wt_write_fail_read<<<1, 128>>>(fd, src.p, out, go, dr);
  usleep(200 * 1000);
  g_wt_fail_first_page = false;
  __atomic_store_n(go, 1, __ATOMIC_RELEASE);
  ASSERT_EQ(cudaSuccess, cudaDeviceSynchronize());
  int64_t r[3];
  ASSERT_EQ(cudaSuccess, cudaMemcpy(r, dr, sizeof(r), cudaMemcpyDeviceToHost));
  EXPECT_EQ(-GPUFS_EIO, r[0]) << "the first page could not be read";
  ASSERT_EQ((int64_t)(2 * 4096), r[1]);
  EXPECT_EQ(0, r[2]);
  std::vector<uint8_t> got(2 * 4096), want = wt_pattern(fsize, 8);
  ASSERT_EQ(cudaSuccess, cudaMemcpy(got.data(), out, got.size(), cudaMemcpyDeviceToHost));
  EXPECT_TRUE(wt_bytes_eq(want.data() + 4096, got.data(), got.size(), 4096))
      << "pages 1 and 2 hold the write's bytes";
  std::vector<uint8_t> model = old;
  for (uint64_t i = 4096; i < 3 * 4096; i++) model[i] = want[i];
  EXPECT_TRUE(wt_file_is(f, model)) << "pages 1 and 2 written back, the rest as it was";
  cudaFree(out);
  cudaFreeHost(go);
  cudaFree(dr);
}

TEST_F(WriteFaultTest, FsyncWriteBackFailsThenSucceeds)
{
  start();
  std::string f = dir.path + "/nospc";
  dir.files.push_back(f);
  wt_src src(WT_FAULT_SIZE, 101);
  g_wt_fail_pwrite = true;
  int fd = new_dirty_file(f, WT_FAULT_SIZE, src);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(-GPUFS_ENOSPC, wt_gfsync_h(fd)) << "gfsync while the disk is full";
  EXPECT_GT(g_wt_pwrite_failures.load(), 0);
  EXPECT_EQ(-ENOSPC, gpufs_sync()) << "gpufs_sync while the disk is full";
  struct gpufs_stats st;
  ASSERT_EQ(0, gpufs_get_stats(&st));
  EXPECT_GT(st.dirty, 0ull) << "the pages that failed stay dirty";
  g_wt_fail_pwrite = false;
  EXPECT_EQ(0, wt_gfsync_h(fd)) << "gfsync once there is room";
  std::vector<uint8_t> model = wt_pattern(WT_FAULT_SIZE, 101);
  EXPECT_TRUE(wt_file_is(f, model)) << "after the second gfsync";
  ASSERT_EQ(0, gpufs_get_stats(&st));
  EXPECT_EQ(0ull, (unsigned long long)st.dirty);
  EXPECT_EQ(0, gpufs_sync());
  EXPECT_EQ(0, wt_gclose_h(fd));
  EXPECT_TRUE(wt_file_is(f, model)) << "after gclose";
}

__global__ void wt_close_then_read(int fd, uint64_t n, uint8_t *out, int64_t *r)
{
  int c = gclose(fd);
  ssize_t g = gread(fd, 0, n + 10, out);
  if (threadIdx.x == 0) {
    r[0] = c;
    r[1] = g;
  }
}

TEST_F(WriteFaultTest, LastCloseFailsAndKeepsTheDescriptor)
{
  start();
  std::string f = dir.path + "/nospc_close";
  dir.files.push_back(f);
  wt_src src(WT_FAULT_SIZE, 102);
  int fd = new_dirty_file(f, WT_FAULT_SIZE, src);
  ASSERT_GE(fd, 0);
  g_wt_fail_pwrite = true;
  wt_dmem<uint8_t> out(WT_FAULT_SIZE + 10, 0xa5);
  wt_dmem<int64_t> r(2, 0x7f);
  wt_close_then_read<<<1, 128>>>(fd, WT_FAULT_SIZE, out.p, r.p);
  ASSERT_EQ(cudaSuccess, wt_sync());
  std::vector<int64_t> h = r.get();
  EXPECT_EQ(-GPUFS_ENOSPC, h[0]) << "the last gclose while the disk is full" << wt_err(h[0]);
  EXPECT_GT(g_wt_pwrite_failures.load(), 0);
  EXPECT_EQ((int64_t)WT_FAULT_SIZE, h[1]) << "gread: the descriptor stays open" << wt_err(h[1]);
  std::vector<uint8_t> model = wt_pattern(WT_FAULT_SIZE, 102);
  EXPECT_TRUE(wt_bytes_eq(model.data(), out.get().data(), WT_FAULT_SIZE)) << "the dirty pages are kept";
  g_wt_fail_pwrite = false;
  EXPECT_EQ(0, wt_gclose_h(fd)) << "gclose again once there is room";
  EXPECT_TRUE(wt_file_is(f, model));
  EXPECT_EQ(-GPUFS_EBADF, wt_gclose_h(fd)) << "now it is closed";
}

TEST_F(WriteFaultTest, FsyncErrorReachesGfsync)
{
  start();
  std::string f = dir.path + "/eio";
  dir.files.push_back(f);
  wt_src src(WT_FAULT_SIZE, 103);
  int fd = new_dirty_file(f, WT_FAULT_SIZE, src);
  ASSERT_GE(fd, 0);
  g_wt_fail_fsync = true;
  EXPECT_EQ(-GPUFS_EIO, wt_gfsync_h(fd)) << "gfsync when fsync(2) fails";
  EXPECT_GT(g_wt_fsync_failures.load(), 0);
  g_wt_fail_fsync = false;
  EXPECT_EQ(0, wt_gfsync_h(fd));
  std::vector<uint8_t> model = wt_pattern(WT_FAULT_SIZE, 103);
  EXPECT_TRUE(wt_file_is(f, model));
  EXPECT_EQ(0, wt_gclose_h(fd));
  EXPECT_TRUE(wt_file_is(f, model));
}

TEST_F(WriteFaultTest, StopReportsPagesItCouldNotWrite)
{
  start();
  std::string f = dir.path + "/lost";
  dir.files.push_back(f);
  wt_src src(WT_FAULT_SIZE, 104);
  int fd = new_dirty_file(f, WT_FAULT_SIZE, src);
  ASSERT_GE(fd, 0);
  g_wt_fail_pwrite = true;
  EXPECT_EQ(-EIO, gpufs_stop()) << "dirty bytes that could not be written back";
  started = false;
  EXPECT_STRNE("", gpufs_error_detail()) << "says how many pages";
  g_wt_fail_pwrite = false;
  EXPECT_EQ(0, gpufs_stop()) << "stopping again is harmless";
}
