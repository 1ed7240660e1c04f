/*
 * write_util.cuh - what the write-path GPU tests share (write_test.cu: the
 * parameterized behaviours; write_errors_test.cu: bad inputs and a failing
 * disk): device buffers, patterns, comparisons with the host file, opens,
 * closes and fsyncs from small kernels, and the group-generic device calls.
 * Kernels here are static: each test file gets its own.
 */
#ifndef GPUFS_TESTS_GPU_WRITE_UTIL_CUH
#define GPUFS_TESTS_GPU_WRITE_UTIL_CUH

#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <random>
#include <tuple>

#include "libgpufs/host/io.h"
#include "libgpufs/host/daemon.h"
#include "tests/gpu/gpu_util.h"

static_assert(GPUFS_DIRTY_GRAIN >= 64 && (GPUFS_DIRTY_GRAIN & (GPUFS_DIRTY_GRAIN - 1)) == 0,
              "the grain tests write parts [5, 50) of a grain");

static const int WT_RW_NEW = GPUFS_O_RDWR | GPUFS_O_CREAT | GPUFS_O_TRUNC;

/* ---------------- host helpers ---------------- */

/* " (ENOSPC ...)" for a negative result, for failure messages. */
static std::string wt_err(int64_t v)
{
  if (v >= 0 || v < -4095) return "";
  return std::string(" (") + gpufs_strerror((int)v) + ")";
}

/* Launch errors and the kernel's own. */
static cudaError_t wt_sync()
{
  cudaError_t e = cudaGetLastError();
  return e != cudaSuccess ? e : cudaDeviceSynchronize();
}

/* Device memory of count T, every byte set to `byte`; freed at scope end. */
template <class T> struct wt_dmem {
  T *p = nullptr;
  size_t n = 0;
  explicit wt_dmem(size_t count, int byte = 0) : n(count)
  {
    if (cudaMalloc(&p, std::max<size_t>(count, 1) * sizeof(T)) != cudaSuccess) p = nullptr;
    else cudaMemset(p, byte, std::max<size_t>(count, 1) * sizeof(T));
  }
  ~wt_dmem()
  {
    if (p) cudaFree(p);
  }
  wt_dmem(const wt_dmem &) = delete;
  wt_dmem &operator=(const wt_dmem &) = delete;
  void set(int byte) { cudaMemset(p, byte, std::max<size_t>(n, 1) * sizeof(T)); }
  std::vector<T> get() const
  {
    std::vector<T> v(n);
    if (n) cudaMemcpy(v.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost);
    return v;
  }
};

static __global__ void wt_fill(uint8_t *p, uint64_t n, uint64_t seed)
{
  for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n;
       i += (uint64_t)gridDim.x * blockDim.x)
    p[i] = tpat(seed, i);
}

/* n device bytes, byte i = tpat(seed, i): gwrite(fd, off, len, src.p + off)
 * writes the pattern of seed at its file offsets. */
struct wt_src : wt_dmem<uint8_t> {
  wt_src(uint64_t count, uint64_t seed) : wt_dmem<uint8_t>(count)
  {
    if (p) {
      wt_fill<<<256, 256>>>(p, count, seed);
      cudaDeviceSynchronize();
    }
  }
};

/* Host models of file contents. */
static std::vector<uint8_t> wt_pattern(uint64_t n, uint64_t seed)
{
  std::vector<uint8_t> v(n);
  for (uint64_t i = 0; i < n; i++) v[i] = tpat(seed, i);
  return v;
}

/* m[off, off+len) = the pattern of seed at those offsets (m grows with zeros). */
static void wt_put(std::vector<uint8_t> &m, uint64_t off, uint64_t len, uint64_t seed)
{
  if (m.size() < off + len) m.resize(off + len, 0);
  for (uint64_t i = off; i < off + len; i++) m[i] = tpat(seed, i);
}

static ::testing::AssertionResult wt_bytes_eq(const uint8_t *want, const uint8_t *got, uint64_t n,
                                              uint64_t base = 0)
{
  uint64_t bad = 0, first = 0;
  for (uint64_t i = 0; i < n; i++)
    if (want[i] != got[i]) {
      if (!bad) first = i;
      bad++;
    }
  if (!bad) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << bad << " of " << n << " bytes differ; the first at file offset " << base + first
         << ": got " << (int)got[first] << ", want " << (int)want[first];
}

/* The host file holds exactly `want` (size and every byte). */
static ::testing::AssertionResult wt_file_is(const std::string &path, const std::vector<uint8_t> &want)
{
  int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) return ::testing::AssertionFailure() << path << ": " << strerror(errno);
  struct stat st;
  if (fstat(fd, &st) != 0) {
    close(fd);
    return ::testing::AssertionFailure() << "fstat: " << strerror(errno);
  }
  if ((uint64_t)st.st_size != want.size()) {
    close(fd);
    return ::testing::AssertionFailure() << "file size " << st.st_size << ", want " << want.size();
  }
  std::vector<uint8_t> got(want.size());
  uint64_t done = 0;
  while (done < got.size()) {
    ssize_t r = pread(fd, got.data() + done, got.size() - done, (off_t)done);
    if (r <= 0) break;
    done += (uint64_t)r;
  }
  close(fd);
  if (done != got.size()) return ::testing::AssertionFailure() << "read " << done << " of " << got.size();
  return wt_bytes_eq(want.data(), got.data(), want.size());
}

static bool wt_host_rewrite(const std::string &path, const std::vector<uint8_t> &data)
{
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return false;
  bool ok = pwrite(fd, data.data(), data.size(), 0) == (ssize_t)data.size();
  return close(fd) == 0 && ok;
}

/* pwrite m[off, off+len) to the host file at off. */
static bool wt_host_pwrite(const std::string &path, const std::vector<uint8_t> &m, uint64_t off, uint64_t len)
{
  int fd = open(path.c_str(), O_WRONLY);
  if (fd < 0) return false;
  bool ok = pwrite(fd, m.data() + off, len, (off_t)off) == (ssize_t)len;
  return close(fd) == 0 && ok;
}

/* Move the file's mtime `secs` past its current one, so that a rewrite of
 * the same size within one timestamp tick still looks changed. */
static bool wt_bump_mtime(const std::string &path, int secs)
{
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return false;
  struct timespec ts[2];
  ts[0].tv_sec = 0;
  ts[0].tv_nsec = UTIME_OMIT;
  ts[1] = st.st_mtim;
  ts[1].tv_sec += secs;
  return utimensat(AT_FDCWD, path.c_str(), ts, 0) == 0;
}

/* ---------------- device helpers ---------------- */

/* Block-level (w false) or warp-level (w true) forms of the calls. */
static __device__ inline uint32_t wt_rank(bool w) { return w ? threadIdx.x % 32 : threadIdx.x; }
static __device__ inline int wt_group(bool w)
{
  return w ? (int)((blockIdx.x * blockDim.x + threadIdx.x) / 32) : (int)blockIdx.x;
}
static __device__ inline int wt_ngroups(bool w)
{
  return w ? (int)(gridDim.x * blockDim.x / 32) : (int)gridDim.x;
}
static __device__ inline int wt_open(bool w, const char *p, int flags, int mode)
{
  return w ? gopen_warp(p, flags, mode) : gopen(p, flags, mode);
}
static __device__ inline int wt_close(bool w, int fd) { return w ? gclose_warp(fd) : gclose(fd); }
static __device__ inline ssize_t wt_read(bool w, int fd, int64_t off, size_t n, void *buf)
{
  return w ? gread_warp(fd, off, n, buf) : gread(fd, off, n, buf);
}
static __device__ inline ssize_t wt_write(bool w, int fd, int64_t off, size_t n, const void *buf)
{
  return w ? gwrite_warp(fd, off, n, buf) : gwrite(fd, off, n, buf);
}

static __global__ void wt_open_k(const char *path, int flags, int mode, int64_t *r)
{
  int fd = gopen(path, flags, mode);
  if (threadIdx.x == 0) *r = fd;
}

enum { WT_CLOSE, WT_FSYNC, WT_TRUNCATE };
static __global__ void wt_fd_call(int op, int fd, int64_t arg, int64_t *r)
{
  int v;
  if (op == WT_CLOSE) v = gclose(fd);
  else if (op == WT_FSYNC) v = gfsync(fd);
  else v = gftruncate(fd, arg);
  if (threadIdx.x == 0) *r = v;
}

/* One block-level call from the host; -10000 when CUDA failed. */
static int wt_gopen_h(const std::string &path, int flags, int mode = 0644)
{
  dpath dp(path);
  wt_dmem<int64_t> r(1, 0x7f);
  wt_open_k<<<1, 64>>>(dp.d, flags, mode, r.p);
  if (wt_sync() != cudaSuccess) return -10000;
  return (int)r.get()[0];
}

static int wt_fd_op(int op, int fd, int64_t arg = 0)
{
  wt_dmem<int64_t> r(1, 0x7f);
  wt_fd_call<<<1, 64>>>(op, fd, arg, r.p);
  if (wt_sync() != cudaSuccess) return -10000;
  return (int)r.get()[0];
}
static int wt_gclose_h(int fd) { return wt_fd_op(WT_CLOSE, fd); }
static int wt_gfsync_h(int fd) { return wt_fd_op(WT_FSYNC, fd); }

/* Block b writes [lo, hi), its share of [0, fsize), in gwrites of `chunk`
 * bytes.  r[2b]: the offset of the first gwrite that did not return its
 * size (-1: none), r[2b+1]: what it returned. */
static __global__ void wt_stream_write(int fd, uint64_t fsize, uint64_t chunk, const uint8_t *src, int64_t *r)
{
  uint64_t share = (fsize + gridDim.x - 1) / gridDim.x;
  uint64_t lo = blockIdx.x * share, hi = lo + share < fsize ? lo + share : fsize;
  int64_t bad_off = -1, bad_ret = 0;
  for (uint64_t off = lo; off < hi; off += chunk) {
    uint64_t n = hi - off < chunk ? hi - off : chunk;
    ssize_t w = gwrite(fd, (int64_t)off, n, src + off);
    if (w != (ssize_t)n) {
      bad_off = (int64_t)off;
      bad_ret = w;
      break;
    }
  }
  if (threadIdx.x == 0) {
    r[2 * blockIdx.x] = bad_off;
    r[2 * blockIdx.x + 1] = bad_ret;
  }
}

/* Run wt_stream_write over [0, fsize) of fd with the pattern in src. */
static void wt_stream(int fd, uint64_t fsize, const wt_src &src, unsigned blocks, uint64_t chunk)
{
  wt_dmem<int64_t> r(2 * blocks, 0x7f);
  wt_stream_write<<<blocks, 256>>>(fd, fsize, chunk, src.p, r.p);
  ASSERT_EQ(cudaSuccess, wt_sync());
  std::vector<int64_t> h = r.get();
  for (unsigned b = 0; b < blocks; b++)
    EXPECT_EQ(-1, h[2 * b]) << "block " << b << ": the gwrite at this offset returned " << h[2 * b + 1]
                            << wt_err(h[2 * b + 1]);
}

/* The parameterized write tests (write_test.cu, write_files_test.cu):
 * (page size); instantiated once, in write_test.cu. */

class WriteTest : public ::testing::TestWithParam<uint32_t> {
protected:
  tdir dir;
  uint32_t page = 0;
  bool started = false;
  void SetUp() override
  {
    REQUIRE_GPU();
    page = GetParam();
  }
  void start(uint64_t cache, uint32_t rings = 16)
  {
    struct gpufs_config c = small_config(page, cache);
    c.nrings = rings;
    c.alloc_timeout_ms = 10000;
    ASSERT_EQ(0, gpufs_start(&c)) << gpufs_error_detail();
    started = true;
  }
  void TearDown() override
  {
    if (started) EXPECT_EQ(0, gpufs_stop());
  }
  /* A path in the test directory that the test (or the GPU) creates. */
  std::string newpath(const char *name)
  {
    std::string p = dir.path + "/" + name;
    dir.files.push_back(p);
    return p;
  }
  void disjoint_ranges(bool warp);
  void read_own_writes(bool warp);
  void map_write(bool msync);
};

#endif /* GPUFS_TESTS_GPU_WRITE_UTIL_CUH */
