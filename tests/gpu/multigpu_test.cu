/*
 * multigpu_test.cu - one instance per physical GPU, one daemon for all:
 * every GPU reads every byte right at once, pages cross the GPUs' link
 * (peer caching) or come from the host where the GPUs cannot reach each
 * other, close-to-open and writers of disjoint grains across GPUs, dirty
 * pages of every GPU reach the file, a ref of another GPU is refused.
 * Skipped (with a message) where fewer than two GPUs are visible; the
 * same behaviour on one GPU (instances sharing it) is instances_test.cu and
 * peer_test.cu.  Kernels of instance k run on GPU k, with GPU k's memory,
 * launched by one host thread per GPU where they run at once.
 */
#include <thread>
#include <vector>

#include "tests/gpu/instances_util.h"

#define MG_CHUNK (64u << 10)

/* Each block opens path (on ref's instance), reads its share of [0, size)
 * in MG_CHUNK calls, counts bytes that differ from want (device memory)
 * and calls that failed or came short; then closes. */
static __global__ void mg_read_check(gpufs_ref ref, const char *path, uint64_t size,
                                     const uint8_t *want, uint8_t *bufs, unsigned long long *bad,
                                     unsigned long long *errs)
{
  int fd = gopen(ref, path, GPUFS_O_RDONLY);
  if (fd < 0) {
    if (threadIdx.x == 0) atomicAdd(errs, 1ull);
    return;
  }
  const uint64_t share = (size + gridDim.x - 1) / gridDim.x;
  const uint64_t lo = blockIdx.x * share, hi = lo + share < size ? lo + share : size;
  uint8_t *buf = bufs + blockIdx.x * (uint64_t)MG_CHUNK;
  for (uint64_t off = lo; off < hi; off += MG_CHUNK) {
    const uint64_t n = hi - off < MG_CHUNK ? hi - off : MG_CHUNK;
    if (!tu_read_check(fd, off, n, n, buf, want, bad, errs)) break;
  }
  if (gclose(fd) != 0 && threadIdx.x == 0) atomicAdd(errs, 1ull);
}

/* Every warp writes the grains g of [0, size) with g % every == mine
 * (64-byte grains, src's bytes), then gfsync (if fsync) and gclose. */
static __global__ void mg_write_grains(gpufs_ref ref, const char *path, uint64_t size,
                                       uint32_t every, uint32_t mine, const uint8_t *src,
                                       bool fsync, bool close, unsigned long long *errs)
{
  __shared__ int fd;
  int f = gopen(ref, path, GPUFS_O_RDWR);
  if (threadIdx.x == 0) fd = f;
  __syncthreads();
  if (fd < 0) {
    if (threadIdx.x == 0) atomicAdd(errs, 1ull);
    return;
  }
  const uint32_t warp = threadIdx.x / 32, nwarps = blockDim.x / 32;
  unsigned long long bad = 0;
  for (uint64_t g = (uint64_t)every * warp + mine; g * GPUFS_DIRTY_GRAIN < size;
       g += (uint64_t)every * nwarps) {
    const uint64_t n = size - g * GPUFS_DIRTY_GRAIN < GPUFS_DIRTY_GRAIN
                           ? size - g * GPUFS_DIRTY_GRAIN : GPUFS_DIRTY_GRAIN;
    ssize_t w = gwrite_warp(fd, (int64_t)(g * GPUFS_DIRTY_GRAIN), n, src + g * GPUFS_DIRTY_GRAIN);
    bad += w != (ssize_t)n;
  }
  if (threadIdx.x % 32 == 0 && bad) atomicAdd(errs, bad);
  __syncthreads();
  if (fsync && gfsync(fd) != 0 && threadIdx.x == 0) atomicAdd(errs, 1ull);
  if (close && gclose(fd) != 0 && threadIdx.x == 0) atomicAdd(errs, 1ull);
}

/* One block: gopen with ref, its result to *out (closed again if it opened). */
static __global__ void mg_open_with(gpufs_ref ref, const char *path, int64_t *out)
{
  int fd = gopen(ref, path, GPUFS_O_RDONLY);
  if (fd >= 0) gclose(fd);
  if (threadIdx.x == 0) *out = fd;
}

static std::vector<uint8_t> mg_pattern(uint64_t seed, uint64_t n)
{
  std::vector<uint8_t> v(n);
  for (uint64_t i = 0; i < n; i++) v[i] = tpat(seed, i);
  return v;
}

/* Whether instance caches on GPU a are served to kernels of GPU b: the
 * condition libgpufs links peers under (docs/design.md). */
static bool mg_peers(int a, int b)
{
  int can = 0, atomics = 0;
  return cudaDeviceCanAccessPeer(&can, b, a) == cudaSuccess && can &&
         cudaDeviceGetP2PAttribute(&atomics, cudaDevP2PAttrNativeAtomicSupported, b, a) ==
             cudaSuccess && atomics;
}

class MultiGpuTest : public InstancesFixture {
protected:
  int n = 0; /* GPUs, one instance each */
  void SetUp() override
  {
    InstancesFixture::SetUp();
    if (IsSkipped()) return;
    int count = 0;
    ASSERT_EQ(cudaSuccess, cudaGetDeviceCount(&count));
    if (count < 2) GTEST_SKIP() << count << " GPU visible: these tests need two or more";
    n = count < (int)GPUFS_MAX_INSTANCES ? count : (int)GPUFS_MAX_INSTANCES;
  }
  void TearDown() override
  {
    cudaSetDevice(0);
    InstancesFixture::TearDown();
  }
  /* Instance k on GPU k, for every GPU. */
  void start_all(uint32_t page = 4096, uint64_t cache = 64ull << 20)
  {
    struct gpufs_config c = small_config(page, cache);
    c.nrings = 1;
    c.ndevices = (uint32_t)n;
    for (int k = 0; k < n; k++) c.devices[k] = k;
    ASSERT_EQ(0, gpufs_start(&c)) << gpufs_error_detail();
    started = true;
    for (int k = 0; k < n; k++) ASSERT_EQ(k, gpufs_instance_device(k));
  }
  /* Read all of path on GPU k (its instance) with `blocks` blocks and check
   * every byte against want: the wrong bytes, or ~0 when a call failed. */
  static uint64_t read_on(int k, const std::string &path, const std::vector<uint8_t> &want,
                          int blocks = 8)
  {
    gpufs_ref r;
    if (cudaSetDevice(k) != cudaSuccess || gpufs_get_ref(k, &r) != 0) return ~0ull;
    dpath dp(path);
    uint8_t *dwant = nullptr, *bufs = nullptr;
    unsigned long long *cnt = nullptr, h[2] = {0, 0};
    cudaMalloc(&dwant, want.size());
    cudaMalloc(&bufs, (size_t)blocks * MG_CHUNK);
    cudaMalloc(&cnt, sizeof(h));
    cudaMemcpy(dwant, want.data(), want.size(), cudaMemcpyHostToDevice);
    cudaMemset(cnt, 0, sizeof(h));
    mg_read_check<<<blocks, 256>>>(r, dp.d, want.size(), dwant, bufs, cnt, cnt + 1);
    cudaError_t e = cudaDeviceSynchronize();
    cudaMemcpy(h, cnt, sizeof(h), cudaMemcpyDeviceToHost);
    cudaFree(dwant);
    cudaFree(bufs);
    cudaFree(cnt);
    return e != cudaSuccess || h[1] ? ~0ull : h[0];
  }
  /* The write kernel on GPU k: the grains g % every == mine of src. */
  static uint64_t write_on(int k, const std::string &path, const std::vector<uint8_t> &src,
                           uint32_t every, uint32_t mine, bool fsync, bool close)
  {
    gpufs_ref r;
    if (cudaSetDevice(k) != cudaSuccess || gpufs_get_ref(k, &r) != 0) return ~0ull;
    dpath dp(path);
    uint8_t *d = nullptr;
    unsigned long long *errs = nullptr, h = 0;
    cudaMalloc(&d, src.size());
    cudaMalloc(&errs, sizeof(h));
    cudaMemcpy(d, src.data(), src.size(), cudaMemcpyHostToDevice);
    cudaMemset(errs, 0, sizeof(h));
    mg_write_grains<<<1, 256>>>(r, dp.d, src.size(), every, mine, d, fsync, close, errs);
    cudaError_t e = cudaDeviceSynchronize();
    cudaMemcpy(&h, errs, sizeof(h), cudaMemcpyDeviceToHost);
    cudaFree(d);
    cudaFree(errs);
    return e != cudaSuccess ? ~0ull : h;
  }
  /* fn(k) on one host thread per GPU, all at once. */
  template <class F> void each_gpu(F fn)
  {
    std::vector<std::thread> th;
    for (int k = 0; k < n; k++) th.emplace_back([&fn, k] { fn(k); });
    for (auto &t : th) t.join();
  }
};

TEST_F(MultiGpuTest, EveryGpuReadsEveryByteAtOnce)
{
  const uint64_t size = (12u << 20) + 4321;
  std::vector<std::string> own;
  std::vector<std::vector<uint8_t>> want;
  for (int k = 0; k < n; k++) {
    own.push_back(dir.make(("own" + std::to_string(k)).c_str(), size - 1000 * k, 100 + k));
    want.push_back(file_bytes(own[k]));
  }
  std::string shared = dir.make("shared", size, 99);
  std::vector<uint8_t> wshared = file_bytes(shared);
  start_all(4096, 48ull << 20);
  std::vector<uint64_t> bad_own(n, ~0ull), bad_shared(n, ~0ull);
  each_gpu([&](int k) {
    bad_own[k] = read_on(k, own[k], want[k]);
    bad_shared[k] = read_on(k, shared, wshared);
  });
  uint64_t read = 0;
  for (int k = 0; k < n; k++) {
    EXPECT_EQ(0u, bad_own[k]) << "GPU " << k << ", its own file";
    EXPECT_EQ(0u, bad_shared[k]) << "GPU " << k << ", the shared file";
    struct gpufs_stats s;
    ASSERT_EQ(0, gpufs_get_instance_stats(k, &s));
    EXPECT_EQ(16u, s.gopens) << "8 blocks, two files: GPU " << k;
    EXPECT_GE(s.bytes_read, want[k].size()) << "its own file comes from the host: GPU " << k;
    read += s.bytes_read;
  }
  struct gpufs_stats all;
  ASSERT_EQ(0, gpufs_get_stats(&all));
  EXPECT_EQ(read, all.bytes_read);
}

TEST_F(MultiGpuTest, PagesCrossTheLinkOrComeFromTheHost)
{
  const uint64_t size = (8u << 20) + 99;
  std::string f = dir.make("peer", size, 7);
  std::vector<uint8_t> want = file_bytes(f);
  start_all();
  ASSERT_EQ(0u, read_on(0, f, want));
  struct gpufs_stats before;
  ASSERT_EQ(0, gpufs_get_stats(&before));
  const int b = n - 1;
  ASSERT_EQ(0u, read_on(b, f, want));
  struct gpufs_stats s;
  ASSERT_EQ(0, gpufs_get_instance_stats(b, &s));
  const uint64_t pages = (size + 4095) / 4096;
  if (mg_peers(0, b)) {
    EXPECT_EQ(pages, s.peer_hits) << "every page from GPU 0's cache";
    EXPECT_EQ(0u, s.bytes_read) << "nothing from the host for GPU " << b;
  } else {
    EXPECT_EQ(0u, s.peer_hits) << "GPU " << b << " cannot reach GPU 0: no peer pages";
    EXPECT_GE(s.bytes_read, size);
  }
  /* every other GPU at once, bytes still right */
  std::vector<uint64_t> bad(n, ~0ull);
  each_gpu([&](int k) { bad[k] = read_on(k, f, want); });
  for (int k = 0; k < n; k++) EXPECT_EQ(0u, bad[k]) << "GPU " << k;
}

TEST_F(MultiGpuTest, CloseToOpenAcrossGpus)
{
  const uint64_t size = 300u << 10;
  std::string f = dir.make("c2o", size, 11);
  std::vector<uint8_t> old = file_bytes(f);
  start_all();
  const int b = n - 1;
  ASSERT_EQ(0u, read_on(b, f, old)) << "GPU " << b << " caches the old bytes";
  std::vector<uint8_t> neu = mg_pattern(12, size);
  ASSERT_EQ(0u, write_on(0, f, neu, 1, 0, false, true)) << "GPU 0 rewrites it and closes";
  EXPECT_EQ(neu, file_bytes(f));
  EXPECT_EQ(0u, read_on(b, f, neu)) << "GPU " << b << "'s next open sees GPU 0's bytes";
  /* the CPU rewrites it: no GPU serves its (or a peer's) old pages */
  std::vector<uint8_t> cpu = mg_pattern(13, size);
  FILE *fp = fopen(f.c_str(), "r+b");
  ASSERT_NE(nullptr, fp);
  fwrite(cpu.data(), 1, size, fp);
  fclose(fp);
  std::vector<uint64_t> bad(n, ~0ull);
  each_gpu([&](int k) { bad[k] = read_on(k, f, cpu); });
  for (int k = 0; k < n; k++) EXPECT_EQ(0u, bad[k]) << "GPU " << k;
}

TEST_F(MultiGpuTest, DisjointGrainWritersOnEveryGpu)
{
  const uint64_t size = (640u << 10) + 40;
  std::string f = dir.make("grains", size, 14);
  start_all();
  std::vector<uint8_t> neu = mg_pattern(15, size);
  std::vector<uint64_t> errs(n, ~0ull);
  /* GPU k writes the grains g % n == k, all at once, each gfsyncs */
  each_gpu([&](int k) { errs[k] = write_on(k, f, neu, (uint32_t)n, (uint32_t)k, true, true); });
  for (int k = 0; k < n; k++) EXPECT_EQ(0u, errs[k]) << "GPU " << k;
  std::vector<uint8_t> got = file_bytes(f);
  ASSERT_EQ(size, got.size());
  EXPECT_EQ(0u, ndiff(got.data(), neu.data(), size)) << "bytes lost between the GPUs' write-backs";
}

TEST_F(MultiGpuTest, DirtyPagesOfEveryGpuReachTheFile)
{
  const uint64_t size = 200u << 10;
  std::vector<std::string> fs;
  std::vector<std::vector<uint8_t>> old, neu;
  for (int k = 0; k < n; k++) {
    fs.push_back(dir.make(("d" + std::to_string(k)).c_str(), size, 20 + k));
    old.push_back(file_bytes(fs[k]));
    neu.push_back(mg_pattern(40 + k, size));
  }
  start_all();
  std::vector<uint64_t> errs(n, ~0ull);
  /* each GPU dirties its file and leaves it open */
  each_gpu([&](int k) { errs[k] = write_on(k, fs[k], neu[k], 1, 0, false, false); });
  for (int k = 0; k < n; k++) {
    ASSERT_EQ(0u, errs[k]) << "GPU " << k;
    EXPECT_EQ(old[k], file_bytes(fs[k])) << "not written back yet: GPU " << k;
    /* the host reads the GPU's newer bytes through the caches */
    std::vector<uint8_t> got(size, 0xee);
    ASSERT_EQ((ssize_t)size, gpufs_pread(fs[k].c_str(), got.data(), size, 0));
    EXPECT_EQ(0u, ndiff(got.data(), neu[k].data(), size)) << "GPU " << k;
  }
  ASSERT_EQ(0, gpufs_sync()) << gpufs_error_detail();
  for (int k = 0; k < n; k++) EXPECT_EQ(neu[k], file_bytes(fs[k])) << "GPU " << k;
  struct gpufs_stats st;
  ASSERT_EQ(0, gpufs_get_stats(&st));
  EXPECT_EQ(0u, st.dirty);
}

TEST_F(MultiGpuTest, StopWritesBackEveryGpu)
{
  const uint64_t size = 96u << 10;
  std::vector<std::string> fs;
  std::vector<std::vector<uint8_t>> neu;
  for (int k = 0; k < n; k++) {
    fs.push_back(dir.make(("s" + std::to_string(k)).c_str(), size, 60 + k));
    neu.push_back(mg_pattern(70 + k, size));
  }
  start_all();
  std::vector<uint64_t> errs(n, ~0ull);
  each_gpu([&](int k) { errs[k] = write_on(k, fs[k], neu[k], 1, 0, false, false); });
  for (int k = 0; k < n; k++) ASSERT_EQ(0u, errs[k]) << "GPU " << k;
  started = false;
  cudaSetDevice(0);
  EXPECT_EQ(0, gpufs_stop()) << gpufs_error_detail();
  for (int k = 0; k < n; k++) EXPECT_EQ(neu[k], file_bytes(fs[k])) << "GPU " << k;
}

TEST_F(MultiGpuTest, RefOfAnotherGpuIsRefused)
{
  std::string f = dir.make("x", 5000, 3);
  start_all();
  for (int k = 0; k < n; k++) {
    const int other = (k + 1) % n;
    CUDA_OK(cudaSetDevice(k));
    dpath dp(f);
    int64_t *out, h = 0;
    CUDA_OK(cudaMalloc(&out, sizeof(h)));
    mg_open_with<<<1, 32>>>(ref(other), dp.d, out);
    CUDA_OK(cudaDeviceSynchronize());
    CUDA_OK(cudaMemcpy(&h, out, sizeof(h), cudaMemcpyDeviceToHost));
    EXPECT_EQ(-ENODEV, h) << "a kernel on GPU " << k << " with GPU " << other << "'s ref";
    mg_open_with<<<1, 32>>>(ref(k), dp.d, out);
    CUDA_OK(cudaDeviceSynchronize());
    CUDA_OK(cudaMemcpy(&h, out, sizeof(h), cudaMemcpyDeviceToHost));
    EXPECT_GE(h, 0) << "its own GPU's ref: " << gpufs_strerror((int)h);
    cudaFree(out);
  }
}
