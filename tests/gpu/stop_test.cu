/*
 * stop_test.cu - gpufs_stop while a kernel still runs (issue 14).  A
 * kernel opens a file, writes 64 KiB to it, never closes it, tells the
 * host (a counter in mapped pinned memory) and spins for 3 s on
 * %globaltimer; the host calls gpufs_stop while it spins.  On a healthy
 * disk the stop must write every dirty page back without waiting for the
 * kernel to end: it returns 0 and the file holds every byte.  Run with one
 * block, with one block per SM, and with one block on a stream of its own.
 *
 * And with a block of 1024 threads on every SM that holds all the SM's
 * shared memory: then gpufs_sync's kernel cannot start beside it, and the
 * stop must write the pages back once the kernel has ended (it waits for
 * the kernels anyway), still returning 0 with every byte in the file.
 *
 * stop_timeout_ms is 1 s, shorter than the spin: the write-back beside the
 * kernel is given up after it, and the stop's own duration is bounded by
 * the spin plus that timeout.
 */
#include <chrono>
#include <cuda/atomic>

#include "tests/gpu/write_util.cuh"

#define ST_BYTES (64ull << 10)
#define ST_SPIN_NS 3000000000ull
#define ST_TIMEOUT_MS 1000u

static const uint64_t ST_SEED = 7;

static __device__ uint64_t st_globaltimer(void)
{
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/* Block b's share of [0, ST_BYTES). */
static __host__ __device__ void st_share(unsigned b, unsigned nb, uint64_t *lo, uint64_t *hi)
{
  const uint64_t share = (ST_BYTES + nb - 1) / nb;
  *lo = (uint64_t)b * share < ST_BYTES ? (uint64_t)b * share : ST_BYTES;
  *hi = *lo + share < ST_BYTES ? *lo + share : ST_BYTES;
}

/* Every block opens path (creating it), writes its share of the pattern in
 * src, leaves the file open, counts itself in *ready and spins spin_ns
 * before it returns.  r[2b]: block b's gopen, r[2b+1]: its gwrite. */
static __global__ void st_write_and_spin(const char *path, const uint8_t *src, unsigned *ready, uint64_t spin_ns,
                                         int64_t *r)
{
  uint64_t lo, hi;
  st_share(blockIdx.x, gridDim.x, &lo, &hi);
  int fd = gopen(path, GPUFS_O_RDWR | GPUFS_O_CREAT, 0644);
  ssize_t w = fd >= 0 && hi > lo ? gwrite(fd, (int64_t)lo, hi - lo, src + lo) : 0;
  if (threadIdx.x == 0) {
    r[2 * blockIdx.x] = fd;
    r[2 * blockIdx.x + 1] = w;
    /* relaxed: the host only counts the blocks; it reads r after the
     * kernel has ended */
    cuda::atomic_ref<unsigned, cuda::thread_scope_system>(*ready).fetch_add(1u, cuda::memory_order_relaxed);
  }
  const uint64_t t0 = st_globaltimer();
  while (st_globaltimer() - t0 < spin_ns) __nanosleep(100000);
}

/* How the spinning kernel runs. */
enum st_kind { ST_ONE_BLOCK, ST_EVERY_SM, ST_ONE_BLOCK_OWN_STREAM, ST_FILLS_EVERY_SM, ST_NKINDS };
static const char *const st_kind_names[ST_NKINDS] = {"OneBlock", "EverySm", "OneBlockOwnStream",
                                                     "FillsEverySm"};

class StopDuringKernelTest : public ::testing::TestWithParam<int> {
protected:
  tdir dir;
  bool started = false;
  unsigned *ready = nullptr;
  cudaStream_t stream = 0; /* the legacy default stream, or one of the test's */
  cudaEvent_t done = nullptr;
  void SetUp() override
  {
    REQUIRE_GPU();
    struct gpufs_config c = small_config(4096, 16ull << 20);
    c.stop_timeout_ms = ST_TIMEOUT_MS;
    ASSERT_EQ(0, gpufs_start(&c)) << gpufs_error_detail();
    started = true;
    CUDA_OK(cudaHostAlloc((void **)&ready, sizeof(unsigned), cudaHostAllocMapped));
    *ready = 0;
    CUDA_OK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
    if (GetParam() == ST_ONE_BLOCK_OWN_STREAM) CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  }
  void TearDown() override
  {
    /* a test that failed before its stop: stop first (calls waiting on the
     * host return), then wait for the kernel */
    if (started) gpufs_stop();
    cudaDeviceSynchronize();
    if (done) cudaEventDestroy(done);
    if (stream) cudaStreamDestroy(stream);
    if (ready) cudaFreeHost(ready);
  }
};

TEST_P(StopDuringKernelTest, WritesBackFilesLeftOpen)
{
  int dev = 0, sms = 0;
  CUDA_OK(cudaGetDevice(&dev));
  CUDA_OK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  /* FillsEverySm: on every SM a block as large as the kernel allows
   * (its registers: 1024 threads or fewer) holding all the SM's shared
   * memory, so that no other block (gpufs_sync's kernel) can start on any
   * SM until the kernel ends: the write-back must wait for it */
  const bool fill = GetParam() == ST_FILLS_EVERY_SM;
  const unsigned blocks = GetParam() == ST_EVERY_SM || fill ? (unsigned)sms : 1u;
  struct cudaFuncAttributes fa;
  CUDA_OK(cudaFuncGetAttributes(&fa, st_write_and_spin));
  const unsigned threads = fill ? (unsigned)fa.maxThreadsPerBlock / 32 * 32 : 128u;
  int smem = 0;
  if (fill) {
    CUDA_OK(cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    smem -= (int)fa.sharedSizeBytes; /* the library's own scratch is static */
    CUDA_OK(cudaFuncSetAttribute(st_write_and_spin, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    int per_sm = 0;
    CUDA_OK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, st_write_and_spin, (int)threads, (size_t)smem));
    ASSERT_EQ(1, per_sm) << "one block fills an SM (" << threads << " threads)";
  }
  const std::string path = dir.path + "/left-open";
  dir.files.push_back(path);
  wt_src src(ST_BYTES, ST_SEED);
  dpath dp(path);
  wt_dmem<int64_t> r(2 * blocks, 0x7f);
  unsigned *dready = nullptr;
  CUDA_OK(cudaHostGetDevicePointer((void **)&dready, ready, 0));

  st_write_and_spin<<<blocks, threads, (size_t)smem, stream>>>(dp.d, src.p, dready, ST_SPIN_NS, r.p);
  CUDA_OK(cudaGetLastError());
  CUDA_OK(cudaEventRecord(done, stream));
  /* relaxed: a count; the kernel's results are read after it ended */
  cuda::atomic_ref<unsigned, cuda::thread_scope_system> count(*ready);
  const auto t0 = std::chrono::steady_clock::now();
  while (count.load(cuda::memory_order_relaxed) < blocks &&
         std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10))
    usleep(1000);
  ASSERT_EQ(blocks, count.load(cuda::memory_order_relaxed)) << "blocks that wrote their share within 10 s";
  ASSERT_EQ(cudaErrorNotReady, cudaEventQuery(done)) << "the kernel must still run when gpufs_stop is called";

  const auto ts = std::chrono::steady_clock::now();
  const int rc = gpufs_stop();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - ts).count();
  started = false;
  EXPECT_EQ(0, rc) << "gpufs_stop with the kernel running" << wt_err(rc) << ": " << gpufs_error_detail();
  /* the stop may wait for the kernel's spin; a write-back that waited for
   * the kernel's end would add its timeout to that */
  EXPECT_LT(secs, ST_SPIN_NS / 1e9 + ST_TIMEOUT_MS / 1e3) << "gpufs_stop took " << secs << " s";

  ASSERT_EQ(cudaSuccess, cudaEventSynchronize(done));
  std::vector<int64_t> h = r.get();
  for (unsigned b = 0; b < blocks; b++) {
    uint64_t lo, hi;
    st_share(b, blocks, &lo, &hi);
    EXPECT_GE(h[2 * b], 0) << "gopen of block " << b << wt_err(h[2 * b]);
    EXPECT_EQ((int64_t)(hi - lo), h[2 * b + 1]) << "gwrite of block " << b << wt_err(h[2 * b + 1]);
  }
  EXPECT_TRUE(wt_file_is(path, wt_pattern(ST_BYTES, ST_SEED))) << "every byte written before gpufs_stop";
}

INSTANTIATE_TEST_SUITE_P(Kernels, StopDuringKernelTest, ::testing::Range(0, (int)ST_NKINDS),
                         [](const ::testing::TestParamInfo<int> &i) { return std::string(st_kind_names[i.param]); });
