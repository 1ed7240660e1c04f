/*
 * gpu_util.h - what the GPU tests share: skipping without a GPU, files of
 * known content, a libgpufs instance per test.
 */
#ifndef GPUFS_TESTS_GPU_UTIL_H
#define GPUFS_TESTS_GPU_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include "include/gpufs.cuh"

/* Byte at offset off of a test file made with seed. */
__host__ __device__ inline uint8_t tpat(uint64_t seed, uint64_t off)
{
  uint64_t z = (seed * 0x9e3779b97f4a7c15ull) ^ (off >> 3);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return (uint8_t)(z >> ((off & 7) * 8));
}

inline bool gpu_present()
{
  static int have = -1;
  if (have < 0) {
    int n = 0;
    have = cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
  }
  return have == 1;
}

#define REQUIRE_GPU()                                         \
  do {                                                        \
    if (!gpu_present()) GTEST_SKIP() << "no CUDA GPU here";   \
  } while (0)

#define CUDA_OK(call) ASSERT_EQ(cudaSuccess, (call)) << #call

/* A directory of test files, removed at the end. */
struct tdir {
  std::string path;
  std::vector<std::string> files;
  tdir()
  {
    char tmpl[] = "/tmp/gpufs_gpu_XXXXXX";
    const char *p = mkdtemp(tmpl);
    path = p ? p : "";
  }
  ~tdir()
  {
    for (auto &f : files) {
      chmod(f.c_str(), 0644);
      unlink(f.c_str());
    }
    rmdir(path.c_str());
  }
  /* A file of `size` pattern bytes; returns its path. */
  std::string make(const char *name, uint64_t size, uint64_t seed)
  {
    std::string f = path + "/" + name;
    FILE *fp = fopen(f.c_str(), "wb");
    std::vector<uint8_t> buf(1 << 20);
    for (uint64_t off = 0; fp && off < size;) {
      size_t n = (size_t)std::min<uint64_t>(buf.size(), size - off);
      for (size_t i = 0; i < n; i++) buf[i] = tpat(seed, off + i);
      fwrite(buf.data(), 1, n, fp);
      off += n;
    }
    if (fp) fclose(fp);
    files.push_back(f);
    return f;
  }
};

/* A device copy of a path string. */
struct dpath {
  char *d = nullptr;
  explicit dpath(const std::string &s)
  {
    cudaMalloc(&d, s.size() + 1);
    cudaMemcpy(d, s.c_str(), s.size() + 1, cudaMemcpyHostToDevice);
  }
  ~dpath() { cudaFree(d); }
};

/* Every group (a block, or each warp with warp) reads its share of the file
 * in calls of `chunk` bytes and counts the bytes that differ from the
 * pattern (bad) and the calls that failed or came short (errs); advice (if
 * >= 0) is given first by every group.  static: each test file its copy. */
static __global__ void stream_check(int fd, uint64_t fsize, uint64_t seed, uint64_t chunk,
                                    int advice, uint8_t *bufs, unsigned long long *bad,
                                    unsigned long long *errs, bool warp)
{
  uint64_t ngroups = warp ? (uint64_t)gridDim.x * blockDim.x / 32 : gridDim.x;
  uint64_t g = warp ? (blockIdx.x * blockDim.x + threadIdx.x) / 32 : blockIdx.x;
  uint32_t rank = warp ? threadIdx.x % 32 : threadIdx.x;
  uint32_t size = warp ? 32 : blockDim.x;
  if (advice >= 0) {
    int a = warp ? gfadvise_warp(fd, 0, 0, advice) : gfadvise(fd, 0, 0, advice);
    if (a != 0 && rank == 0) atomicAdd(errs, 1ull);
  }
  uint64_t share = (fsize + ngroups - 1) / ngroups;
  uint64_t lo = g * share, hi = lo + share < fsize ? lo + share : fsize;
  uint8_t *buf = bufs + g * chunk;
  for (uint64_t off = lo; off < hi; off += chunk) {
    uint64_t want = hi - off < chunk ? hi - off : chunk;
    ssize_t r = warp ? gread_warp(fd, (int64_t)off, want, buf) : gread(fd, (int64_t)off, want, buf);
    if (r != (ssize_t)want) {
      if (rank == 0) atomicAdd(errs, 1ull);
      return;
    }
    unsigned long long local = 0;
    for (uint64_t i = rank; i < want; i += size) local += buf[i] != tpat(seed, off + i);
    if (local) atomicAdd(bad, local);
    if (warp) __syncwarp(); else __syncthreads();
  }
}

/* Block-level: gread `ask` bytes of fd at off into buf, which must return
 * n (ask, or what is left before the end), and add the bytes that differ
 * from want[off..] to *bad; another result adds 1 to *errs and returns
 * false.  Every thread of the block calls it with the same arguments; it
 * ends with a block barrier (buf may be reused after). */
static __device__ bool tu_read_check(int fd, uint64_t off, uint64_t ask, uint64_t n, uint8_t *buf,
                                     const uint8_t *want, unsigned long long *bad,
                                     unsigned long long *errs)
{
  ssize_t r = gread(fd, (int64_t)off, ask, buf);
  if (r != (ssize_t)n) {
    if (threadIdx.x == 0) atomicAdd(errs, 1ull);
    return false;
  }
  unsigned long long local = 0;
  for (uint64_t i = threadIdx.x; i < n; i += blockDim.x) local += buf[i] != want[off + i];
  if (local) atomicAdd(bad, local);
  __syncthreads();
  return true;
}

static __global__ void tu_open(const char *path, int flags, int *fd)
{
  int r = gopen(path, flags, 0644);
  if (threadIdx.x == 0) *fd = r;
}

static __global__ void tu_open_on(gpufs_ref ref, const char *path, int flags, int *fd)
{
  int r = gopen(ref, path, flags, 0644);
  if (threadIdx.x == 0) *fd = r;
}

static __global__ void tu_close(int fd, int *r)
{
  int c = gclose(fd);
  if (threadIdx.x == 0) *r = c;
}

/* gopen / gclose by one warp-sized block, from the host: the descriptor (or
 * -errno), gclose's result. */
inline int host_open(const std::string &path, int flags = GPUFS_O_RDONLY)
{
  dpath dp(path);
  int *d, fd = -1000;
  cudaMalloc(&d, sizeof(int));
  tu_open<<<1, 32>>>(dp.d, flags, d);
  cudaDeviceSynchronize();
  cudaMemcpy(&fd, d, sizeof(int), cudaMemcpyDeviceToHost);
  cudaFree(d);
  return fd;
}

inline int host_close(int fd)
{
  int *d, r = -1000;
  cudaMalloc(&d, sizeof(int));
  tu_close<<<1, 32>>>(fd, d);
  cudaDeviceSynchronize();
  cudaMemcpy(&r, d, sizeof(int), cudaMemcpyDeviceToHost);
  cudaFree(d);
  return r;
}

/* gopen path read-only on instance `inst` (-1: the default instance) by
 * one warp-sized block: the descriptor, or -errno. */
inline int host_open_on(const std::string &path, int inst)
{
  if (inst < 0) return host_open(path);
  gpufs_ref ref;
  if (gpufs_get_ref(inst, &ref) != 0) return -GPUFS_EINVAL;
  dpath dp(path);
  int *d, fd = -1000;
  cudaMalloc(&d, sizeof(int));
  tu_open_on<<<1, 32>>>(ref, dp.d, GPUFS_O_RDONLY, d);
  cudaDeviceSynchronize();
  cudaMemcpy(&fd, d, sizeof(int), cudaMemcpyDeviceToHost);
  cudaFree(d);
  return fd;
}

/* Open path on instance inst (-1: the default), read all of it with
 * `blocks` blocks in 256 KiB calls checking every byte against seed's
 * pattern (stream_check), and close it. */
inline void read_all_checked(const std::string &path, uint64_t size, uint64_t seed,
                             unsigned blocks = 32, int inst = -1)
{
  const int fd = host_open_on(path, inst);
  ASSERT_GE(fd, 0) << gpufs_strerror(fd);
  uint8_t *bufs = nullptr;
  unsigned long long *cnt = nullptr, h[2] = {0, 0};
  const uint64_t chunk = 256u << 10;
  ASSERT_EQ(cudaSuccess, cudaMalloc(&bufs, blocks * chunk));
  ASSERT_EQ(cudaSuccess, cudaMalloc(&cnt, sizeof(h)));
  ASSERT_EQ(cudaSuccess, cudaMemset(cnt, 0, sizeof(h)));
  stream_check<<<blocks, 256>>>(fd, size, seed, chunk, -1, bufs, cnt, cnt + 1, false);
  EXPECT_EQ(cudaSuccess, cudaDeviceSynchronize());
  EXPECT_EQ(cudaSuccess, cudaMemcpy(h, cnt, sizeof(h), cudaMemcpyDeviceToHost));
  EXPECT_EQ(0ull, h[0]) << "bytes that differ from the file " << path;
  EXPECT_EQ(0ull, h[1]) << "calls that failed or came short";
  EXPECT_EQ(0, host_close(fd)) << "gclose";
  cudaFree(bufs);
  cudaFree(cnt);
}

inline struct gpufs_config small_config(uint32_t page, uint64_t cache)
{
  struct gpufs_config c;
  gpufs_config_default(&c);
  c.page_size = page;
  c.cache_size = cache;
  c.nrings = 16;
  c.daemon_threads = 4;
  c.staging_size = 256ull * page;
  c.max_open_files = 64;
  /* `make sanitize` runs memcheck with GPUFS_AUTO_PIN=0: memcheck reports
   * a kernel's reads of memory pinned after its launch as out of bounds
   * (bench/probes/late_register_probe.cu), and files read are pinned
   * while the kernels read them */
  const char *pin = getenv("GPUFS_AUTO_PIN");
  if (pin && strcmp(pin, "0") == 0) c.auto_pin = 0;
  return c;
}

/* A test that starts libgpufs itself: a directory of its files, skipped
 * without a GPU, and at the end gpufs_stop (checked) if `started`. */
class StartedFixture : public ::testing::Test {
protected:
  tdir dir;
  bool started = false;
  void SetUp() override { REQUIRE_GPU(); }
  void TearDown() override
  {
    if (started) EXPECT_EQ(0, gpufs_stop()) << gpufs_error_detail();
  }
};

#endif
