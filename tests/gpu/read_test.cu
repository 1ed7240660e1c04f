/*
 * read_test.cu - gread and gread_warp return exactly the file's bytes:
 * odd offsets and sizes, page boundaries, EOF, many groups, many files, a
 * cache smaller than the data; for both page sizes, through the daemon
 * (its workers copy from a mapping of the file), and again with every data
 * file registered (gpufs_register: pages within the registered length come
 * from the pinned mapping, instance "Registered").
 */
#include <algorithm>
#include <random>
#include <tuple>

#include "tests/gpu/gpu_util.h"

struct rcase {
  int64_t off;
  uint64_t len;
};

/* Group g reads case g into out + g * stride; block-level or warp-level. */
__global__ void read_cases(int fd, const rcase *cases, int ncases, uint8_t *out, uint64_t stride,
                           int64_t *ret, bool warp)
{
  int g = warp ? (int)((blockIdx.x * blockDim.x + threadIdx.x) / 32) : (int)blockIdx.x;
  if (g >= ncases) return;
  ssize_t r = warp ? gread_warp(fd, cases[g].off, cases[g].len, out + g * stride)
                   : gread(fd, cases[g].off, cases[g].len, out + g * stride);
  if ((warp ? threadIdx.x % 32 : threadIdx.x) == 0) ret[g] = r;
}

__global__ void open_close(const char *path, int *fd_out, int *close_ret, bool warp)
{
  int fd = warp ? gopen_warp(path, GPUFS_O_RDONLY) : gopen(path, GPUFS_O_RDONLY);
  int g = warp ? (int)((blockIdx.x * blockDim.x + threadIdx.x) / 32) : (int)blockIdx.x;
  if ((warp ? threadIdx.x % 32 : threadIdx.x) == 0) fd_out[g] = fd;
  if (fd >= 0) {
    int c = warp ? gclose_warp(fd) : gclose(fd);
    if ((warp ? threadIdx.x % 32 : threadIdx.x) == 0) close_ret[g] = c;
  }
}

/* Where missing pages come from: the daemon (its copies from its own
 * mappings of the files; automatic pins off), the registered mappings,
 * or either as automatic pins come (the default configuration). */
enum read_source { SRC_DAEMON = 0, SRC_REGISTERED = 1, SRC_AUTO_PIN = 2 };

/* (page size, enum read_source) */
class ReadTest : public ::testing::TestWithParam<std::tuple<uint32_t, int>> {
protected:
  tdir dir;
  uint32_t page = 0;
  bool started = false;
  std::vector<std::string> registered;
  void SetUp() override
  {
    REQUIRE_GPU();
    page = std::get<0>(GetParam());
  }
  void start(uint64_t cache, uint32_t timeout_ms = 10000)
  {
    struct gpufs_config c = small_config(page, cache);
    c.alloc_timeout_ms = timeout_ms;
    if (std::get<1>(GetParam()) != SRC_AUTO_PIN) c.auto_pin = 0;
    ASSERT_EQ(0, gpufs_start(&c)) << gpufs_error_detail();
    started = true;
    register_files();
  }
  /* Registered runs: register the files made so far (those of 4 KiB or
   * more: gpufs_register refuses shorter ones) before the test opens them. */
  void register_files()
  {
    if (std::get<1>(GetParam()) != SRC_REGISTERED) return;
    for (const std::string &f : dir.files) {
      struct stat s;
      if (stat(f.c_str(), &s) != 0 || s.st_size < 4096 ||
          std::find(registered.begin(), registered.end(), f) != registered.end())
        continue;
      ASSERT_EQ(0, gpufs_register(f.c_str())) << f << ": " << gpufs_error_detail();
      registered.push_back(f);
    }
  }
  /* Registered runs loaded pages within a registered length from the
   * mapping (when they loaded any and such pages exist); the others none. */
  void check_registration()
  {
    struct gpufs_stats st;
    ASSERT_EQ(0, gpufs_get_stats(&st));
    EXPECT_EQ(0ull, st.map_faults);
    if (std::get<1>(GetParam()) == SRC_AUTO_PIN) return; /* pins come when they come */
    EXPECT_EQ((uint64_t)registered.size(), st.reg_files);
    EXPECT_EQ(0ull, st.reg_refused);
    bool mappable = false;
    for (const std::string &f : registered) {
      struct stat s;
      mappable = mappable || (stat(f.c_str(), &s) == 0 && ((uint64_t)s.st_size & ~4095ull) >= page);
    }
    if (mappable && st.misses > 0) {
      EXPECT_GT(st.reg_pages, 0ull) << "no page came from a mapping";
    }
    if (registered.empty()) {
      EXPECT_EQ(0ull, st.reg_pages);
    }
    /* the daemon's runs copy from its mappings; a file that no one shrinks
     * never faults */
    bool big = false; /* a data file of 2+ pages: its first lies inside its mapping */
    for (const std::string &f : dir.files) {
      struct stat s;
      big = big || (stat(f.c_str(), &s) == 0 && (uint64_t)s.st_size >= 2ull * page);
    }
    if (std::get<1>(GetParam()) == SRC_DAEMON && big && st.misses >= 64 && st.bytes_read > 0) {
      EXPECT_GT(st.map_copies, 0ull) << "64+ pages loaded, none copied from a mapping";
    }
    EXPECT_EQ(0ull, st.map_faults);
  }
  void TearDown() override
  {
    if (started) check_registration();
    EXPECT_EQ(0, gpufs_stop());
  }

  void odd_cases(bool warp)
  {
    const uint64_t fsize = 3ull * page + page / 2 + 17;
    std::string f = dir.make("odd", fsize, 7);
    start(64ull * page);
    std::vector<rcase> cs = {
        {0, 1}, {1, page}, {(int64_t)page - 3, 7}, {(int64_t)page - 1, 2ull * page + 5},
        {0, fsize}, {7, fsize}, {(int64_t)fsize - 5, 100}, {(int64_t)fsize - 1, 1},
        {(int64_t)fsize, 10}, {(int64_t)fsize + 100, 10}, {2ll * page + 13, 3ull * page},
        {(int64_t)page, page}, {3, 0}, {(int64_t)(3ull * page), page / 2 + 17},
    };
    const uint64_t stride = fsize + 256;
    rcase *dc;
    uint8_t *dout;
    int64_t *dret;
    CUDA_OK(cudaMalloc(&dc, cs.size() * sizeof(rcase)));
    CUDA_OK(cudaMemcpy(dc, cs.data(), cs.size() * sizeof(rcase), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMalloc(&dout, cs.size() * stride));
    CUDA_OK(cudaMemset(dout, 0xa5, cs.size() * stride));
    CUDA_OK(cudaMalloc(&dret, cs.size() * sizeof(int64_t)));
    int fd = host_open(f);
    ASSERT_GE(fd, 0);
    if (warp) read_cases<<<(unsigned)cs.size(), 32>>>(fd, dc, (int)cs.size(), dout, stride, dret, true);
    else read_cases<<<(unsigned)cs.size(), 128>>>(fd, dc, (int)cs.size(), dout, stride, dret, false);
    CUDA_OK(cudaGetLastError());
    CUDA_OK(cudaDeviceSynchronize());
    std::vector<uint8_t> out(cs.size() * stride);
    std::vector<int64_t> ret(cs.size());
    CUDA_OK(cudaMemcpy(out.data(), dout, out.size(), cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(ret.data(), dret, ret.size() * sizeof(int64_t), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < cs.size(); i++) {
      uint64_t off = (uint64_t)cs[i].off;
      uint64_t expect = off >= fsize ? 0 : std::min<uint64_t>(cs[i].len, fsize - off);
      ASSERT_EQ((int64_t)expect, ret[i]) << "case " << i << " off " << off << " len " << cs[i].len;
      const uint8_t *o = out.data() + i * stride;
      for (uint64_t b = 0; b < expect; b++)
        ASSERT_EQ(tpat(7, off + b), o[b]) << "case " << i << " byte " << b;
      for (uint64_t b = expect; b < std::min<uint64_t>(stride, expect + 256); b++)
        ASSERT_EQ(0xa5, o[b]) << "case " << i << " wrote past its count at " << b;
    }
    EXPECT_EQ(0, host_close(fd));
    cudaFree(dc);
    cudaFree(dout);
    cudaFree(dret);
  }

  void stream(bool warp, uint64_t fsize, uint64_t cache, unsigned blocks, int passes)
  {
    std::string f = dir.make("stream", fsize, 11);
    start(cache);
    int fd = host_open(f);
    ASSERT_GE(fd, 0);
    const uint64_t chunk = 256 << 10;
    unsigned threads = 256;
    uint64_t groups = warp ? (uint64_t)blocks * threads / 32 : blocks;
    uint8_t *bufs;
    unsigned long long *cnt;
    CUDA_OK(cudaMalloc(&bufs, groups * chunk));
    CUDA_OK(cudaMalloc(&cnt, 2 * sizeof(unsigned long long)));
    for (int p = 0; p < passes; p++) {
      CUDA_OK(cudaMemset(cnt, 0, 2 * sizeof(unsigned long long)));
      stream_check<<<blocks, threads>>>(fd, fsize, 11, chunk, -1, bufs, cnt, cnt + 1, warp);
      CUDA_OK(cudaGetLastError());
      CUDA_OK(cudaDeviceSynchronize());
      unsigned long long h[2];
      CUDA_OK(cudaMemcpy(h, cnt, sizeof(h), cudaMemcpyDeviceToHost));
      EXPECT_EQ(0ull, h[0]) << "bytes that differ from the file, pass " << p;
      EXPECT_EQ(0ull, h[1]) << "greads that returned a wrong count, pass " << p;
    }
    struct gpufs_stats st;
    ASSERT_EQ(0, gpufs_get_stats(&st));
    uint64_t pages = (fsize + page - 1) / page;
    EXPECT_GE(st.misses, pages);
    EXPECT_GE(st.bytes_read + st.reg_pages * page, fsize) << "from the daemon or a mapping";
    if (passes > 1 && cache >= fsize) EXPECT_GE(st.hits, pages) << "second pass should hit";
    EXPECT_EQ(0, host_close(fd));
    cudaFree(bufs);
    cudaFree(cnt);
  }
};

TEST_P(ReadTest, OddOffsetsBlock) { odd_cases(false); }
TEST_P(ReadTest, OddOffsetsWarp) { odd_cases(true); }

TEST_P(ReadTest, StreamAllSmsBlock)
{
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  stream(false, 48ull << 20, 256ull << 20, 2 * sms, 2);
}

TEST_P(ReadTest, StreamAllSmsWarp)
{
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  stream(true, 48ull << 20, 256ull << 20, sms, 2);
}

TEST_P(ReadTest, OneBlock) { stream(false, 3ull << 20, 64ull << 20, 1, 1); }

TEST_P(ReadTest, CacheSmallerThanData)
{
  /* 128 frames, a file of 2048 pages, 64 blocks streaming at once */
  stream(false, 2048ull * page, 128ull * page, 64, 1);
}

TEST_P(ReadTest, CacheSmallerThanDataWarp) { stream(true, 2048ull * page, 128ull * page, 16, 1); }

/* Random small reads of a file 16x the cache by many blocks. */
__global__ void random_reads(int fd, uint64_t fsize, uint64_t seed, uint32_t page, int iters,
                             uint8_t *bufs, unsigned long long *bad, unsigned long long *errs)
{
  uint8_t *buf = bufs + (uint64_t)blockIdx.x * 4 * page;
  uint64_t x = 0x1234567ull + blockIdx.x * 7919ull;
  for (int i = 0; i < iters; i++) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    uint64_t off = (x >> 11) % fsize;
    uint64_t len = 1 + (x >> 7) % (3ull * page);
    uint64_t expect = fsize - off < len ? fsize - off : len;
    ssize_t r = gread(fd, (int64_t)off, len, buf);
    if (r != (ssize_t)expect) {
      if (threadIdx.x == 0) atomicAdd(errs, 1ull);
      return;
    }
    unsigned long long local = 0;
    for (uint64_t b = threadIdx.x; b < expect; b += blockDim.x) local += buf[b] != tpat(seed, off + b);
    if (local) atomicAdd(bad, local);
    __syncthreads();
  }
}

TEST_P(ReadTest, RandomReadsSmallCache)
{
  const uint64_t fsize = 1024ull * page + 333;
  std::string f = dir.make("rand", fsize, 5);
  start(64ull * page);
  int fd = host_open(f);
  ASSERT_GE(fd, 0);
  uint8_t *bufs;
  unsigned long long *cnt;
  CUDA_OK(cudaMalloc(&bufs, 48ull * 4 * page));
  CUDA_OK(cudaMalloc(&cnt, 2 * sizeof(unsigned long long)));
  CUDA_OK(cudaMemset(cnt, 0, 2 * sizeof(unsigned long long)));
  random_reads<<<48, 128>>>(fd, fsize, 5, page, 40, bufs, cnt, cnt + 1);
  CUDA_OK(cudaGetLastError());
  CUDA_OK(cudaDeviceSynchronize());
  unsigned long long h[2];
  CUDA_OK(cudaMemcpy(h, cnt, sizeof(h), cudaMemcpyDeviceToHost));
  EXPECT_EQ(0ull, h[0]);
  EXPECT_EQ(0ull, h[1]);
  struct gpufs_stats st;
  ASSERT_EQ(0, gpufs_get_stats(&st));
  EXPECT_GT(st.evictions, 0ull) << "a cache 16x smaller than the file must evict";
  EXPECT_EQ(0, host_close(fd));
  cudaFree(bufs);
  cudaFree(cnt);
}

/* Many blocks open one path: one descriptor, one host open. */
TEST_P(ReadTest, SharedDescriptor)
{
  std::string f = dir.make("shared", 5000, 3);
  start(64ull * page);
  dpath dp(f);
  const int n = 64;
  int *dfd, *dcl;
  CUDA_OK(cudaMalloc(&dfd, n * sizeof(int)));
  CUDA_OK(cudaMalloc(&dcl, n * sizeof(int)));
  int keep = host_open(f); /* held open so every block shares it */
  ASSERT_GE(keep, 0);
  open_close<<<n, 64>>>(dp.d, dfd, dcl, false);
  CUDA_OK(cudaDeviceSynchronize());
  std::vector<int> fds(n), cls(n);
  CUDA_OK(cudaMemcpy(fds.data(), dfd, n * sizeof(int), cudaMemcpyDeviceToHost));
  CUDA_OK(cudaMemcpy(cls.data(), dcl, n * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) {
    EXPECT_EQ(keep, fds[i]);
    EXPECT_EQ(0, cls[i]);
  }
  struct gpufs_stats st;
  ASSERT_EQ(0, gpufs_get_stats(&st));
  EXPECT_EQ(1ull, st.opens);
  EXPECT_EQ(0, host_close(keep));
  EXPECT_EQ(-GPUFS_EBADF, host_close(keep)) << "closed twice";
  cudaFree(dfd);
  cudaFree(dcl);
}

/* 16 files, each block reads one whole file. */
__global__ void many_files(char *const *paths, const uint64_t *sizes, int nfiles, uint8_t *bufs,
                           uint64_t stride, unsigned long long *bad, unsigned long long *errs)
{
  int f = blockIdx.x % nfiles;
  int fd = gopen(paths[f], GPUFS_O_RDONLY);
  if (fd < 0) {
    if (threadIdx.x == 0) atomicAdd(errs, 1ull);
    return;
  }
  uint8_t *buf = bufs + blockIdx.x * stride;
  ssize_t r = gread(fd, 0, sizes[f] + 10, buf);
  if (r != (ssize_t)sizes[f]) {
    if (threadIdx.x == 0) atomicAdd(errs, 1ull);
  } else {
    unsigned long long local = 0;
    for (uint64_t b = threadIdx.x; b < sizes[f]; b += blockDim.x) local += buf[b] != tpat(100 + f, b);
    if (local) atomicAdd(bad, local);
  }
  if (gclose(fd) != 0 && threadIdx.x == 0) atomicAdd(errs, 1ull);
}

TEST_P(ReadTest, ManyFiles)
{
  const int nf = 16, blocks = 64;
  start(512ull * page);
  std::vector<char *> dpaths(nf);
  std::vector<uint64_t> sizes(nf);
  uint64_t stride = 0;
  for (int i = 0; i < nf; i++) {
    sizes[i] = 1000 + (uint64_t)i * 37 * page / 8;
    stride = std::max(stride, sizes[i]);
    std::string f = dir.make(("f" + std::to_string(i)).c_str(), sizes[i], 100 + i);
    CUDA_OK(cudaMalloc(&dpaths[i], f.size() + 1));
    CUDA_OK(cudaMemcpy(dpaths[i], f.c_str(), f.size() + 1, cudaMemcpyHostToDevice));
  }
  register_files(); /* made after the start */
  stride += 16;
  char **dp;
  uint64_t *ds;
  uint8_t *bufs;
  unsigned long long *cnt;
  CUDA_OK(cudaMalloc(&dp, nf * sizeof(char *)));
  CUDA_OK(cudaMemcpy(dp, dpaths.data(), nf * sizeof(char *), cudaMemcpyHostToDevice));
  CUDA_OK(cudaMalloc(&ds, nf * sizeof(uint64_t)));
  CUDA_OK(cudaMemcpy(ds, sizes.data(), nf * sizeof(uint64_t), cudaMemcpyHostToDevice));
  CUDA_OK(cudaMalloc(&bufs, blocks * stride));
  CUDA_OK(cudaMalloc(&cnt, 2 * sizeof(unsigned long long)));
  CUDA_OK(cudaMemset(cnt, 0, 2 * sizeof(unsigned long long)));
  many_files<<<blocks, 128>>>(dp, ds, nf, bufs, stride, cnt, cnt + 1);
  CUDA_OK(cudaGetLastError());
  CUDA_OK(cudaDeviceSynchronize());
  unsigned long long h[2];
  CUDA_OK(cudaMemcpy(h, cnt, sizeof(h), cudaMemcpyDeviceToHost));
  EXPECT_EQ(0ull, h[0]);
  EXPECT_EQ(0ull, h[1]);
  for (auto p : dpaths) cudaFree(p);
  cudaFree(dp);
  cudaFree(ds);
  cudaFree(bufs);
  cudaFree(cnt);
}

__global__ void stat_kernel(int fd, struct gstat *out, int *ret)
{
  struct gstat st; /* each thread's own: every thread gets the fields */
  int r = gfstat(fd, &st);
  if (threadIdx.x == 37) {
    *out = st;
    *ret = r;
  }
}

TEST_P(ReadTest, Fstat)
{
  std::string f = dir.make("stat", 12345, 1);
  start(64ull * page);
  int fd = host_open(f);
  ASSERT_GE(fd, 0);
  struct gstat *dst;
  int *dr;
  CUDA_OK(cudaMalloc(&dst, sizeof(struct gstat)));
  CUDA_OK(cudaMalloc(&dr, sizeof(int)));
  stat_kernel<<<1, 64>>>(fd, dst, dr);
  CUDA_OK(cudaDeviceSynchronize());
  struct gstat st;
  int r;
  CUDA_OK(cudaMemcpy(&st, dst, sizeof(st), cudaMemcpyDeviceToHost));
  CUDA_OK(cudaMemcpy(&r, dr, sizeof(int), cudaMemcpyDeviceToHost));
  struct stat hs;
  ASSERT_EQ(0, stat(f.c_str(), &hs));
  EXPECT_EQ(0, r);
  EXPECT_EQ(12345, st.st_size);
  EXPECT_EQ((uint64_t)hs.st_ino, st.st_ino);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(0, host_close(fd));
  cudaFree(dst);
  cudaFree(dr);
}

/* Hints, then a read that must still return the file's bytes: r[0..6] as
 * listed, block and warp calls. */
__global__ void advise_kernel(int fd, uint64_t size, uint8_t *buf, int64_t *r)
{
  int64_t v[8];
  v[0] = gfadvise(fd, 0, 0, GPUFS_FADV_SEQUENTIAL);
  v[1] = gfadvise(fd, 4096, 1ll << 40, GPUFS_FADV_WILLNEED); /* past 4 GiB: to the end */
  v[2] = gfadvise(fd, 0, 0, 99);
  v[3] = gfadvise(fd, -1, 10, GPUFS_FADV_RANDOM);
  v[4] = gfadvise(12345, 0, 0, GPUFS_FADV_NORMAL);
  v[5] = threadIdx.x < 32 ? gfadvise_warp(fd, 0, 100, GPUFS_FADV_DONTNEED) : 0;
  __syncthreads();
  v[6] = gread(fd, 0, size, buf);
  v[7] = 0;
  if (threadIdx.x == 0)
    for (int i = 0; i < 8; i++) r[i] = v[i];
}

TEST_P(ReadTest, AdviceReachesTheHostAndChangesNoByte)
{
  const uint64_t size = 5 * (uint64_t)page + 77;
  std::string f = dir.make("advise", size, 9);
  start(64ull * page);
  int fd = host_open(f);
  ASSERT_GE(fd, 0);
  uint8_t *dbuf;
  int64_t *dr;
  CUDA_OK(cudaMalloc(&dbuf, size));
  CUDA_OK(cudaMalloc(&dr, 8 * sizeof(int64_t)));
  advise_kernel<<<1, 128>>>(fd, size, dbuf, dr);
  CUDA_OK(cudaDeviceSynchronize());
  int64_t r[8];
  CUDA_OK(cudaMemcpy(r, dr, sizeof(r), cudaMemcpyDeviceToHost));
  EXPECT_EQ(0, r[0]);
  EXPECT_EQ(0, r[1]);
  EXPECT_EQ(-GPUFS_EINVAL, r[2]) << "unknown advice";
  EXPECT_EQ(-GPUFS_EINVAL, r[3]) << "negative offset";
  EXPECT_EQ(-GPUFS_EBADF, r[4]);
  EXPECT_EQ(0, r[5]) << "warp call";
  ASSERT_EQ((int64_t)size, r[6]);
  std::vector<uint8_t> got(size);
  CUDA_OK(cudaMemcpy(got.data(), dbuf, size, cudaMemcpyDeviceToHost));
  for (uint64_t i = 0; i < size; i++) ASSERT_EQ(tpat(9, i), got[i]) << i;
  EXPECT_EQ(0, host_close(fd));
  cudaFree(dbuf);
  cudaFree(dr);
}

static std::string read_param_name(const ::testing::TestParamInfo<ReadTest::ParamType> &i)
{
  return std::to_string(std::get<0>(i.param) / 1024) + "K";
}

INSTANTIATE_TEST_SUITE_P(Pages, ReadTest,
                         ::testing::Combine(::testing::Values(4096u, 65536u),
                                            ::testing::Values((int)SRC_DAEMON)),
                         read_param_name);
INSTANTIATE_TEST_SUITE_P(Registered, ReadTest,
                         ::testing::Combine(::testing::Values(4096u, 65536u),
                                            ::testing::Values((int)SRC_REGISTERED)),
                         read_param_name);
INSTANTIATE_TEST_SUITE_P(AutoPinned, ReadTest,
                         ::testing::Combine(::testing::Values(4096u, 65536u),
                                            ::testing::Values((int)SRC_AUTO_PIN)),
                         read_param_name);
