/*
 * register_util.cuh - what the registered-file tests share (register_test.cu:
 * reads, life cycle, errors; register_write_test.cu: writes, truncations,
 * the host's changes): a fixture, whole-file reads by gread, gread_warp or
 * gmmap and random reads, each compared byte for byte with the bytes the
 * file must hold, and the counters that tell which path served them.
 * Kernels here are static: each test file gets its own.
 */
#ifndef GPUFS_TESTS_GPU_REGISTER_UTIL_CUH
#define GPUFS_TESTS_GPU_REGISTER_UTIL_CUH

#include <fstream>

#include "tests/gpu/write_util.cuh"

enum rg_mode { RG_BLOCK, RG_WARP, RG_MMAP };
static const char *const rg_mode_name[] = {"gread", "gread_warp", "gmmap"};

/* Groups (blocks, or warps for RG_WARP) read the chunks c of [lo, hi) with
 * c = group, group + groups, ... into out + offset (the chunk's bytes
 * within [lo, hi) and the file).  RG_MMAP maps one page per
 * chunk (chunk == page), copies the file's bytes out and counts nonzero
 * bytes of the page past EOF.  errs: calls that failed or came short, and
 * nonzero bytes past EOF. */
static __global__ void rg_read_k(int fd, uint64_t lo, uint64_t hi, uint64_t fsize, uint64_t chunk,
                                 int mode, uint8_t *out, unsigned long long *errs)
{
  const bool warp = mode == RG_WARP;
  const uint32_t rank = wt_rank(warp), n = warp ? 32 : blockDim.x;
  for (uint64_t off = lo + (uint64_t)wt_group(warp) * chunk; off < hi;
       off += (uint64_t)wt_ngroups(warp) * chunk) {
    const uint64_t end = off + chunk < fsize ? off + chunk : fsize;
    const uint64_t want = (hi < end ? hi : end) - off;
    if (mode != RG_MMAP) {
      ssize_t r = wt_read(warp, fd, (int64_t)off, want, out + off);
      if (r != (ssize_t)want && rank == 0) atomicAdd(errs, 1ull);
      continue;
    }
    const uint8_t *p = (const uint8_t *)gmmap(NULL, chunk, GPUFS_PROT_READ, GPUFS_MAP_SHARED, fd, (int64_t)off);
    if (GPUFS_MAP_FAILED(p)) {
      if (rank == 0) atomicAdd(errs, 1ull);
      continue;
    }
    unsigned long long nz = 0;
    for (uint64_t i = rank; i < chunk; i += n) {
      if (i < want) out[off + i] = p[i];
      else if (off + i >= fsize) nz += p[i] != 0;
    }
    if (nz) atomicAdd(errs, nz);
    __syncthreads();
    if (gmunmap((void *)p, chunk) != 0 && rank == 0) atomicAdd(errs, 1ull);
  }
}

/* Random reads of 1 to 3 pages at random offsets by every block, compared
 * with want (device memory, the file's fsize bytes). */
static __global__ void rg_random_k(int fd, const uint8_t *want, uint64_t fsize, uint32_t page, int iters,
                                   uint8_t *bufs, unsigned long long *bad, unsigned long long *errs)
{
  uint8_t *buf = bufs + (uint64_t)blockIdx.x * 3 * page;
  uint64_t x = 0x5eed1234ull + blockIdx.x * 7919ull;
  for (int i = 0; i < iters; i++) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    const uint64_t off = (x >> 11) % fsize, len = 1 + (x >> 7) % (3ull * page);
    const uint64_t expect = fsize - off < len ? fsize - off : len;
    if (!tu_read_check(fd, off, len, expect, buf, want, bad, errs)) return;
  }
}

static __global__ void rg_open_ref_k(gpufs_ref ref, const char *path, int flags, int64_t *r)
{
  int fd = gopen(ref, path, flags);
  if (threadIdx.x == 0) *r = fd;
}

/* [lo, hi) of fd as read by mode equals want[lo, hi): every call returned
 * its count, every byte is right. */
static ::testing::AssertionResult rg_reads(int fd, const std::vector<uint8_t> &want, int mode, uint32_t page,
                                           uint64_t lo = 0, uint64_t hi = ~0ull)
{
  const uint64_t fsize = want.size();
  hi = std::min(hi, fsize);
  const uint64_t chunk = mode == RG_MMAP ? page : 3ull * page + 100; /* calls that cross pages */
  wt_dmem<uint8_t> out(fsize + 1, 0xa5);
  wt_dmem<unsigned long long> errs(1);
  rg_read_k<<<24, 128>>>(fd, lo, hi, fsize, chunk, mode, out.p, errs.p);
  if (wt_sync() != cudaSuccess) return ::testing::AssertionFailure() << "kernel failed";
  const unsigned long long e = errs.get()[0];
  if (e) return ::testing::AssertionFailure() << rg_mode_name[mode] << ": " << e << " calls failed or came short";
  std::vector<uint8_t> got = out.get();
  return wt_bytes_eq(want.data() + lo, got.data() + lo, hi - lo, lo) << " (" << rg_mode_name[mode] << ")";
}

static ::testing::AssertionResult rg_random(int fd, const std::vector<uint8_t> &want, uint32_t page,
                                            unsigned blocks = 48, int iters = 40)
{
  wt_dmem<uint8_t> dwant(want.size()), bufs((uint64_t)blocks * 3 * page);
  wt_dmem<unsigned long long> cnt(2);
  cudaMemcpy(dwant.p, want.data(), want.size(), cudaMemcpyHostToDevice);
  rg_random_k<<<blocks, 128>>>(fd, dwant.p, want.size(), page, iters, bufs.p, cnt.p, cnt.p + 1);
  if (wt_sync() != cudaSuccess) return ::testing::AssertionFailure() << "kernel failed";
  std::vector<unsigned long long> h = cnt.get();
  if (h[0] || h[1])
    return ::testing::AssertionFailure() << h[0] << " bytes differ, " << h[1] << " reads failed or came short";
  return ::testing::AssertionSuccess();
}

/* The whole file through a fresh gopen (block), then gclose. */
static ::testing::AssertionResult rg_reopen_reads(const std::string &path, const std::vector<uint8_t> &want,
                                                  uint32_t page, int mode = RG_BLOCK)
{
  int fd = host_open(path);
  if (fd < 0) return ::testing::AssertionFailure() << "gopen: " << gpufs_strerror(fd);
  ::testing::AssertionResult r = rg_reads(fd, want, mode, page);
  int c = host_close(fd);
  if (r && c != 0) return ::testing::AssertionFailure() << "gclose: " << gpufs_strerror(c);
  return r;
}

static struct gpufs_stats rg_stats()
{
  struct gpufs_stats s;
  memset(&s, 0xff, sizeof(s));
  EXPECT_EQ(0, gpufs_get_stats(&s));
  return s;
}

/* How often path appears in this process's mappings (a registered file is
 * mapped once; an unregistered one not at all). */
static int rg_mapped(const std::string &name)
{
  char *real = realpath(name.c_str(), nullptr); /* as the kernel names it */
  const std::string path = real ? real : name;
  free(real);
  std::ifstream maps("/proc/self/maps");
  std::string line;
  int n = 0;
  while (std::getline(maps, line))
    if (line.size() >= path.size() && line.compare(line.size() - path.size(), path.size(), path) == 0) n++;
  return n;
}

/* Pages wholly within the registered length (the size rounded down to
 * 4 KiB): the ones a miss copies from the mapping. */
static uint64_t rg_full_pages(uint64_t size, uint32_t page) { return (size & ~4095ull) / page; }

class RegFixture : public StartedFixture {
protected:
  void start_cfg(struct gpufs_config c)
  {
    ASSERT_EQ(0, gpufs_start(&c)) << gpufs_error_detail();
    started = true;
  }
  void start(uint32_t page, uint64_t cache, uint64_t register_max = 0)
  {
    struct gpufs_config c = small_config(page, cache);
    c.alloc_timeout_ms = 10000;
    c.register_max = register_max;
    c.auto_pin = 0; /* what is pinned is what the test registers */
    start_cfg(c);
  }
  void stop()
  {
    ASSERT_EQ(0, gpufs_stop()) << gpufs_error_detail();
    started = false;
  }
  std::string newpath(const char *name)
  {
    std::string p = dir.path + "/" + name;
    dir.files.push_back(p);
    return p;
  }
};

/* (page size) */
class RegParamFixture : public RegFixture, public ::testing::WithParamInterface<uint32_t> {
protected:
  uint32_t page = 0;
  void SetUp() override
  {
    RegFixture::SetUp();
    page = GetParam();
  }
  void start(uint64_t cache) { RegFixture::start(page, cache); }
};

static std::string rg_param_name(const ::testing::TestParamInfo<uint32_t> &i)
{
  return std::to_string(i.param / 1024) + "K";
}

#define RG_PARAMS ::testing::Values(4096u, 65536u)

#endif /* GPUFS_TESTS_GPU_REGISTER_UTIL_CUH */
