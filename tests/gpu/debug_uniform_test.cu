/*
 * debug_uniform_test.cu - the debug build's contract (docs/api.md, "The
 * debug build"), in a binary of its own built with GPUFS_DEBUG (make
 * test-debug): a group whose threads pass different arguments gets a
 * report naming the call, the argument, the block and the thread, and
 * -EINVAL in every thread, instead of a hang; calls with equal arguments
 * (paths in each thread's own memory, gfstat's st per thread) run as in
 * the normal build, every byte checked; a broken cache invariant stops
 * with its name, on the host and on the GPU.
 * Built without GPUFS_DEBUG every test skips: there the mismatched calls
 * would hang.
 */
#include <algorithm>
#include <chrono>
#include <functional>
#include <thread>

#include "libgpufs/common/frame.h"
#include "tests/gpu/gpu_util.h"

#define DBG_THREADS 128
#define DBG_ODD 37 /* the thread of the block test that passes another value */
#define DBG_LANE 5 /* the lane of the warp test that passes another path */
#define DBG_PAGE 4096u
#define DBG_FILE_BYTES (3u * DBG_PAGE + 100u)
#define DBG_WRITE_AT 1000
#define DBG_WRITE_BYTES 5000u
#define DBG_TRUNC 20000

#if defined(GPUFS_DEBUG)
#define REQUIRE_DEBUG_BUILD() \
  do {                        \
  } while (0)
#else
#define REQUIRE_DEBUG_BUILD() GTEST_SKIP() << "built without GPUFS_DEBUG (make test-debug)"
#endif

static const uint64_t DBG_SEED = 7, DBG_WSEED = 8;

/* Wait for the device at most `seconds`; a kernel still running then is a
 * hang, which ends the test program (nothing else could run after it). */
static void wait_or_die(int seconds)
{
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (cudaStreamQuery(0) == cudaErrorNotReady) {
    if (std::chrono::steady_clock::now() > end) {
      fprintf(stderr, "debug_uniform_test: the kernel still runs after %d s: a hang\n", seconds);
      std::_Exit(1);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ(cudaSuccess, cudaDeviceSynchronize());
}

/* Block test: thread DBG_ODD passes another offset to gread, another buf to
 * gwrite and another offset to gmmap; then the block reads two pages with
 * equal arguments.  r[k * blockDim + t]: thread t's result of call k. */
static __global__ void dbg_block_mismatch(int fd, uint8_t *buf, int64_t *r)
{
  const uint32_t t = threadIdx.x, n = blockDim.x;
  const bool odd = t == DBG_ODD;
  r[t] = gread(fd, odd ? DBG_PAGE : 0, DBG_PAGE, buf);
  r[n + t] = gwrite(fd, 0, 16, odd ? buf + 64 : buf);
  void *p = gmmap(NULL, 16, GPUFS_PROT_READ, GPUFS_MAP_SHARED, fd, odd ? 32 : 0);
  r[2 * n + t] = GPUFS_MAP_FAILED(p) ? GPUFS_MAP_ERRNO(p) : 0;
  r[3 * n + t] = gread(fd, 0, 2 * DBG_PAGE, buf);
}

/* Warp test, two warps: in warp 0 lane DBG_LANE opens another path; warp 1
 * opens, reads DBG_FILE_BYTES into its buffer and closes, all with equal
 * arguments.  r[k * 64 + t]: thread t's result of call k. */
static __global__ void dbg_warp_mismatch(const char *path, const char *other, uint8_t *buf,
                                         int64_t *r)
{
  const uint32_t t = threadIdx.x, w = t / 32;
  const char *mine = (w == 0 && t % 32 == DBG_LANE) ? other : path;
  const int fd = gopen_warp(mine, GPUFS_O_RDONLY);
  r[t] = fd;
  if (w == 0) return;
  r[64 + t] = gread_warp(fd, 0, DBG_FILE_BYTES, buf);
  r[128 + t] = gclose_warp(fd);
}

/* Matched block calls, each thread with its own copy of the path and its
 * own gstat: open O_RDWR, fstat, read the file, write DBG_WRITE_BYTES of
 * src, fsync, map page 0 and copy 64 bytes out of it, unmap, truncate,
 * close.  r[k]: thread 0's result of call k; bad: results that differ
 * between threads. */
static __global__ void dbg_block_matched(const char *path, const uint8_t *src, uint8_t *buf,
                                         uint8_t *mapped, int64_t *r, unsigned long long *bad)
{
  char own[256];
  uint32_t i = 0;
  for (; path[i] != '\0' && i < sizeof own - 1; i++) own[i] = path[i];
  own[i] = '\0';
  int64_t v[9];
  struct gstat st;
  const int fd = gopen(own, GPUFS_O_RDWR);
  v[0] = fd;
  v[1] = gfstat(fd, &st);
  v[2] = st.st_size;
  v[3] = gread(fd, 0, DBG_FILE_BYTES, buf);
  v[4] = gwrite(fd, DBG_WRITE_AT, DBG_WRITE_BYTES, src);
  v[5] = gfsync(fd);
  void *p = gmmap(NULL, 64, GPUFS_PROT_READ, GPUFS_MAP_PRIVATE, fd, 0);
  if (!GPUFS_MAP_FAILED(p) && threadIdx.x < 64) mapped[threadIdx.x] = ((const uint8_t *)p)[threadIdx.x];
  __syncthreads();
  v[6] = GPUFS_MAP_FAILED(p) ? GPUFS_MAP_ERRNO(p) : gmunmap(p, 64);
  v[7] = gftruncate(fd, DBG_TRUNC);
  v[8] = gclose(fd);
  __shared__ int64_t first[9];
  if (threadIdx.x == 0)
    for (int k = 0; k < 9; k++) first[k] = r[k] = v[k];
  __syncthreads();
  for (int k = 0; k < 9; k++)
    if (v[k] != first[k]) atomicAdd(bad, 1ull);
}

/* A frame whose state word holds no pin, unpinned (an invariant broken). */
static __global__ void dbg_unpin_unpinned(struct gpufs_frame *frames)
{
  struct gpufs_cache c = {};
  c.frames = frames;
  gpufs_frame_unpin(&c, 0);
}

class DebugUniformTest : public StartedFixture {
protected:
  std::string path, other;
  void SetUp() override
  {
    REQUIRE_DEBUG_BUILD();
    StartedFixture::SetUp();
    if (IsSkipped()) return;
    path = dir.make("f", DBG_FILE_BYTES, DBG_SEED);
    other = dir.make("g", DBG_FILE_BYTES, DBG_SEED + 1);
    struct gpufs_config c = small_config(DBG_PAGE, 16u << 20);
    c.readahead_max = 0;
    ASSERT_EQ(0, gpufs_start(&c)) << gpufs_error_detail();
    started = true;
  }
};

/* What a kernel printed (device printf reaches stdout at the synchronize). */
static std::string run_captured(const std::function<void()> &launch)
{
  testing::internal::CaptureStdout();
  launch();
  wait_or_die(60);
  fflush(stdout);
  return testing::internal::GetCapturedStdout();
}

static std::vector<int64_t> dev_results(int64_t *d, size_t n)
{
  std::vector<int64_t> h(n);
  EXPECT_EQ(cudaSuccess, cudaMemcpy(h.data(), d, n * sizeof(int64_t), cudaMemcpyDeviceToHost));
  return h;
}

TEST_F(DebugUniformTest, BlockCallWithAnotherOffsetIsReportedNotHung)
{
  const int fd = host_open(path, GPUFS_O_RDONLY);
  ASSERT_GE(fd, 0) << gpufs_strerror(fd);
  uint8_t *buf;
  int64_t *r;
  CUDA_OK(cudaMalloc(&buf, 2 * DBG_PAGE));
  CUDA_OK(cudaMalloc(&r, 4 * DBG_THREADS * sizeof(int64_t)));
  const std::string out = run_captured([&] { dbg_block_mismatch<<<1, DBG_THREADS>>>(fd, buf, r); });
  const std::vector<int64_t> h = dev_results(r, 4 * DBG_THREADS);
  for (uint32_t t = 0; t < DBG_THREADS; t++) {
    EXPECT_EQ(-GPUFS_EINVAL, h[t]) << "gread, thread " << t;
    EXPECT_EQ(-GPUFS_EINVAL, h[DBG_THREADS + t]) << "gwrite, thread " << t;
    EXPECT_EQ(-GPUFS_EINVAL, h[2 * DBG_THREADS + t]) << "gmmap, thread " << t;
    EXPECT_EQ((int64_t)(2 * DBG_PAGE), h[3 * DBG_THREADS + t]) << "matched gread after, thread " << t;
  }
  EXPECT_NE(std::string::npos,
            out.find("gpufs debug: gread: argument offset differs within the block: block (0,0,0) "
                     "thread (37,0,0) passed 0x1000, the block's first thread 0x0"))
      << out;
  EXPECT_NE(std::string::npos, out.find("gpufs debug: gwrite: argument buf differs within the block"))
      << out;
  EXPECT_NE(std::string::npos,
            out.find("gpufs debug: gmmap: argument offset differs within the block: block (0,0,0) "
                     "thread (37,0,0) passed 0x20"))
      << out;
  EXPECT_EQ(3u, (unsigned)std::count(out.begin(), out.end(), '\n')) << "one line a call:\n" << out;
  std::vector<uint8_t> got(2 * DBG_PAGE);
  CUDA_OK(cudaMemcpy(got.data(), buf, got.size(), cudaMemcpyDeviceToHost));
  for (uint32_t i = 0; i < got.size(); i++) ASSERT_EQ(tpat(DBG_SEED, i), got[i]) << "byte " << i;
  EXPECT_EQ(0, host_close(fd));
  cudaFree(buf);
  cudaFree(r);
}

TEST_F(DebugUniformTest, WarpCallWithAnotherPathIsReported)
{
  dpath dp(path), dother(other);
  uint8_t *buf;
  int64_t *r;
  CUDA_OK(cudaMalloc(&buf, DBG_FILE_BYTES));
  CUDA_OK(cudaMalloc(&r, 3 * 64 * sizeof(int64_t)));
  CUDA_OK(cudaMemset(r, 0, 3 * 64 * sizeof(int64_t)));
  const std::string out =
      run_captured([&] { dbg_warp_mismatch<<<1, 64>>>(dp.d, dother.d, buf, r); });
  const std::vector<int64_t> h = dev_results(r, 3 * 64);
  for (uint32_t t = 0; t < 32; t++) EXPECT_EQ(-GPUFS_EINVAL, h[t]) << "gopen_warp, lane " << t;
  for (uint32_t t = 32; t < 64; t++) {
    EXPECT_GE(h[t], 0) << "gopen_warp of warp 1, thread " << t;
    EXPECT_EQ((int64_t)DBG_FILE_BYTES, h[64 + t]) << "gread_warp, thread " << t;
    EXPECT_EQ(0, h[128 + t]) << "gclose_warp, thread " << t;
  }
  EXPECT_NE(std::string::npos,
            out.find("gpufs debug: gopen_warp: argument path (a hash of its bytes) differs within "
                     "the warp: block (0,0,0) thread (5,0,0) passed 0x"))
      << out;
  EXPECT_EQ(1u, (unsigned)std::count(out.begin(), out.end(), '\n')) << out;
  std::vector<uint8_t> got(DBG_FILE_BYTES);
  CUDA_OK(cudaMemcpy(got.data(), buf, got.size(), cudaMemcpyDeviceToHost));
  for (uint32_t i = 0; i < got.size(); i++) ASSERT_EQ(tpat(DBG_SEED, i), got[i]) << "byte " << i;
  cudaFree(buf);
  cudaFree(r);
}

TEST_F(DebugUniformTest, MatchedCallsRunAsInTheNormalBuild)
{
  dpath dp(path);
  std::vector<uint8_t> src(DBG_WRITE_BYTES);
  for (uint32_t i = 0; i < src.size(); i++) src[i] = tpat(DBG_WSEED, i);
  uint8_t *dsrc, *buf, *mapped;
  int64_t *r;
  unsigned long long *bad, hbad = 1;
  CUDA_OK(cudaMalloc(&dsrc, src.size()));
  CUDA_OK(cudaMemcpy(dsrc, src.data(), src.size(), cudaMemcpyHostToDevice));
  CUDA_OK(cudaMalloc(&buf, DBG_FILE_BYTES));
  CUDA_OK(cudaMalloc(&mapped, 64));
  CUDA_OK(cudaMalloc(&r, 9 * sizeof(int64_t)));
  CUDA_OK(cudaMalloc(&bad, sizeof(hbad)));
  CUDA_OK(cudaMemset(bad, 0, sizeof(hbad)));
  const std::string out = run_captured(
      [&] { dbg_block_matched<<<1, DBG_THREADS>>>(dp.d, dsrc, buf, mapped, r, bad); });
  EXPECT_EQ(std::string::npos, out.find("gpufs debug")) << out;
  const std::vector<int64_t> h = dev_results(r, 9);
  CUDA_OK(cudaMemcpy(&hbad, bad, sizeof(hbad), cudaMemcpyDeviceToHost));
  EXPECT_EQ(0ull, hbad) << "results that differ between threads";
  EXPECT_GE(h[0], 0) << "gopen";
  EXPECT_EQ(0, h[1]) << "gfstat";
  EXPECT_EQ((int64_t)DBG_FILE_BYTES, h[2]) << "st_size";
  EXPECT_EQ((int64_t)DBG_FILE_BYTES, h[3]) << "gread";
  EXPECT_EQ((int64_t)DBG_WRITE_BYTES, h[4]) << "gwrite";
  EXPECT_EQ(0, h[5]) << "gfsync";
  EXPECT_EQ(0, h[6]) << "gmmap, gmunmap";
  EXPECT_EQ(0, h[7]) << "gftruncate";
  EXPECT_EQ(0, h[8]) << "gclose";
  std::vector<uint8_t> got(DBG_FILE_BYTES), map(64);
  CUDA_OK(cudaMemcpy(got.data(), buf, got.size(), cudaMemcpyDeviceToHost));
  CUDA_OK(cudaMemcpy(map.data(), mapped, map.size(), cudaMemcpyDeviceToHost));
  for (uint32_t i = 0; i < got.size(); i++) ASSERT_EQ(tpat(DBG_SEED, i), got[i]) << "read byte " << i;
  for (uint32_t i = 0; i < map.size(); i++) ASSERT_EQ(tpat(DBG_SEED, i), map[i]) << "mapped byte " << i;
  /* the host file: the old bytes, the written ones, zeros to the new size */
  std::vector<uint8_t> file(DBG_TRUNC + 1);
  FILE *fp = fopen(path.c_str(), "rb");
  ASSERT_NE(nullptr, fp);
  const size_t n = fread(file.data(), 1, file.size(), fp);
  fclose(fp);
  ASSERT_EQ((size_t)DBG_TRUNC, n);
  for (uint32_t i = 0; i < DBG_TRUNC; i++) {
    uint8_t want = 0;
    if (i >= DBG_WRITE_AT && i < DBG_WRITE_AT + DBG_WRITE_BYTES) want = src[i - DBG_WRITE_AT];
    else if (i < DBG_FILE_BYTES) want = tpat(DBG_SEED, i);
    ASSERT_EQ(want, file[i]) << "file byte " << i;
  }
  cudaFree(dsrc);
  cudaFree(buf);
  cudaFree(mapped);
  cudaFree(r);
  cudaFree(bad);
}

/* The invariant checks need no GPU on the host side: frame.h compiles for
 * both, and the host tests' cache stress runs the same code. */
TEST(DebugInvariantDeathTest, UnpinOfAnUnpinnedFrameStopsOnTheHost)
{
  REQUIRE_DEBUG_BUILD();
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  struct gpufs_frame fr = {};
  struct gpufs_cache c = {};
  c.frames = &fr;
  EXPECT_DEATH(gpufs_frame_unpin(&c, 0), "gpufs invariant: frame_unpin_of_a_pinned_frame");
}

/* On the GPU: the kernel traps with the invariant's name (the context is
 * lost, so in a child process). */
static void unpin_on_the_gpu()
{
  dup2(2, 1); /* the device's assertion message, wherever it goes, to stderr */
  struct gpufs_frame *frames = nullptr;
  if (cudaMalloc(&frames, sizeof(*frames)) != cudaSuccess) std::_Exit(3);
  cudaMemset(frames, 0, sizeof(*frames));
  dbg_unpin_unpinned<<<1, 1>>>(frames);
  const cudaError_t e = cudaDeviceSynchronize();
  fflush(stdout);
  fprintf(stderr, "kernel: %s\n", cudaGetErrorString(e));
  std::_Exit(e == cudaSuccess ? 0 : 1);
}

TEST(DebugInvariantDeathTest, UnpinOfAnUnpinnedFrameStopsOnTheGpu)
{
  REQUIRE_DEBUG_BUILD();
  REQUIRE_GPU();
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(unpin_on_the_gpu(), testing::ExitedWithCode(1),
              "gpufs invariant: frame_unpin_of_a_pinned_frame");
}
