/*
 * mmap_test.cu - gmmap / gmunmap / gmsync: the bytes behind the pointer are
 * the file's; pinned pages survive eviction pressure; a cache whose frames
 * are all pinned answers -ENOMEM instead of hanging; random gread + gmmap
 * over a file 20x the cache from all SMs.
 */
#include "tests/gpu/gpu_util.h"

static __device__ unsigned long long check_bytes(const uint8_t *p, uint64_t n, uint64_t seed,
                                                 uint64_t off, uint32_t rank, uint32_t size)
{
  unsigned long long bad = 0;
  for (uint64_t i = rank; i < n; i += size) bad += p[i] != tpat(seed, off + i);
  return bad;
}

/* Block- or warp-level mapping of case g; r[g*4..]: errno-or-0, bad bytes,
 * nonzero bytes past EOF, gmsync, gmunmap, second gmunmap. */
struct mcase {
  int64_t off;
  uint64_t len;
  int prot, flags;
};

__global__ void map_cases(int fd, uint64_t fsize, uint64_t seed, uint32_t page, const mcase *cs,
                          int n, int64_t *r, bool warp)
{
  int g = warp ? (int)((blockIdx.x * blockDim.x + threadIdx.x) / 32) : (int)blockIdx.x;
  if (g >= n) return;
  uint32_t rank = warp ? threadIdx.x % 32 : threadIdx.x, size = warp ? 32 : blockDim.x;
  mcase c = cs[g];
  void *p = warp ? gmmap_warp(NULL, c.len, c.prot, c.flags, fd, c.off)
                 : gmmap(NULL, c.len, c.prot, c.flags, fd, c.off);
  int64_t *o = r + g * 6;
  if (GPUFS_MAP_FAILED(p)) {
    if (rank == 0) o[0] = GPUFS_MAP_ERRNO(p);
    return;
  }
  const uint8_t *b = (const uint8_t *)p;
  uint64_t in_file = fsize - (uint64_t)c.off < c.len ? fsize - (uint64_t)c.off : c.len;
  unsigned long long bad = check_bytes(b, in_file, seed, (uint64_t)c.off, rank, size);
  unsigned long long nz = 0;
  for (uint64_t i = in_file + rank; i < c.len; i += size) nz += b[i] != 0;
  if (bad) atomicAdd((unsigned long long *)&o[1], bad);
  if (nz) atomicAdd((unsigned long long *)&o[2], nz);
  int s = warp ? gmsync_warp(p, c.len, GPUFS_MS_SYNC) : gmsync(p, c.len, GPUFS_MS_SYNC);
  int u = warp ? gmunmap_warp(p, c.len) : gmunmap(p, c.len);
  int u2 = warp ? gmunmap_warp(p, c.len) : gmunmap(p, c.len);
  if (rank == 0) {
    o[0] = 0;
    o[3] = s;
    o[4] = u;
    o[5] = u2;
  }
}

__global__ void open_k(const char *path, int *fd) { int r = gopen(path, GPUFS_O_RDONLY); if (threadIdx.x == 0) *fd = r; }

class MmapTest : public ::testing::Test {
protected:
  tdir dir;
  bool started = false;
  int fd = -1;
  void SetUp() override { REQUIRE_GPU(); }
  void start(uint32_t page, uint64_t cache, uint32_t rings, uint32_t timeout_ms,
             const std::string &file)
  {
    struct gpufs_config c = small_config(page, cache);
    c.nrings = rings;
    c.alloc_timeout_ms = timeout_ms;
    ASSERT_EQ(0, gpufs_start(&c)) << gpufs_error_detail();
    started = true;
    dpath p(file);
    int *d;
    ASSERT_EQ(cudaSuccess, cudaMalloc(&d, sizeof(int)));
    open_k<<<1, 32>>>(p.d, d);
    ASSERT_EQ(cudaSuccess, cudaMemcpy(&fd, d, sizeof(int), cudaMemcpyDeviceToHost));
    cudaFree(d);
    ASSERT_GE(fd, 0);
  }
  void TearDown() override
  {
    if (started) EXPECT_EQ(0, gpufs_stop());
  }
  void cases(bool warp)
  {
    const uint32_t page = 4096;
    const uint64_t fsize = 5ull * page + 100;
    std::string f = dir.make("m", fsize, 21);
    start(page, 64ull * page, 4, 2000, f);
    const int R = GPUFS_PROT_READ, S = GPUFS_MAP_SHARED;
    std::vector<mcase> cs = {
        /* the mappings that succeed use distinct pages: a second gmunmap
         * can only be refused when nobody else holds the page */
        {0, page, R, S}, {(int64_t)page + 17, 100, R, S}, {2ll * page, page, R, GPUFS_MAP_PRIVATE},
        {4ll * page - 8, 8, R, S}, {5ll * page + 10, page - 10, R, S}, /* past EOF: zeros */
        {(int64_t)page - 8, 16, R, S},                                    /* crosses: EINVAL */
        {0, 10, R | GPUFS_PROT_WRITE, S},                                 /* EACCES */
        {(int64_t)fsize, 10, R, S}, {0, 0, R, S}, {-4096, 10, R, S}, {0, 10, R, 0x10},
    };
    std::vector<int64_t> expect = {0, 0, 0, 0, 0, -GPUFS_EINVAL, -GPUFS_EACCES, -GPUFS_ENXIO,
                                   -GPUFS_EINVAL, -GPUFS_EINVAL, -GPUFS_EINVAL};
    mcase *dc;
    int64_t *dr;
    ASSERT_EQ(cudaSuccess, cudaMalloc(&dc, cs.size() * sizeof(mcase)));
    ASSERT_EQ(cudaSuccess, cudaMemcpy(dc, cs.data(), cs.size() * sizeof(mcase), cudaMemcpyHostToDevice));
    ASSERT_EQ(cudaSuccess, cudaMalloc(&dr, cs.size() * 6 * sizeof(int64_t)));
    ASSERT_EQ(cudaSuccess, cudaMemset(dr, 0, cs.size() * 6 * sizeof(int64_t)));
    if (warp) map_cases<<<(unsigned)cs.size(), 32>>>(fd, fsize, 21, page, dc, (int)cs.size(), dr, true);
    else map_cases<<<(unsigned)cs.size(), 96>>>(fd, fsize, 21, page, dc, (int)cs.size(), dr, false);
    ASSERT_EQ(cudaSuccess, cudaDeviceSynchronize());
    std::vector<int64_t> r(cs.size() * 6);
    ASSERT_EQ(cudaSuccess, cudaMemcpy(r.data(), dr, r.size() * sizeof(int64_t), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < cs.size(); i++) {
      EXPECT_EQ(expect[i], r[i * 6]) << "case " << i;
      if (expect[i] != 0) continue;
      EXPECT_EQ(0, r[i * 6 + 1]) << "bytes differing from the file, case " << i;
      EXPECT_EQ(0, r[i * 6 + 2]) << "nonzero bytes past EOF, case " << i;
      EXPECT_EQ(0, r[i * 6 + 3]) << "gmsync, case " << i;
      EXPECT_EQ(0, r[i * 6 + 4]) << "gmunmap, case " << i;
      EXPECT_EQ(-GPUFS_EINVAL, r[i * 6 + 5]) << "second gmunmap, case " << i;
    }
    cudaFree(dc);
    cudaFree(dr);
  }
};

TEST_F(MmapTest, BlockCases) { cases(false); }
TEST_F(MmapTest, WarpCases) { cases(true); }

/* Block 0 holds two mappings while the other blocks stream a file 20x the
 * cache through the same ring; its bytes must stay the file's. */
__global__ void pinned_under_pressure(int fd, uint64_t fsize, uint64_t seed, uint32_t page,
                                      uint8_t *bufs, unsigned int *done, int64_t *r)
{
  if (blockIdx.x == 0) {
    void *a = gmmap(NULL, page, GPUFS_PROT_READ, GPUFS_MAP_SHARED, fd, 3 * (int64_t)page);
    void *b = gmmap(NULL, 100, GPUFS_PROT_READ, GPUFS_MAP_SHARED, fd, 7 * (int64_t)page + 5);
    if (GPUFS_MAP_FAILED(a) || GPUFS_MAP_FAILED(b)) {
      if (threadIdx.x == 0) r[0] = -1;
      return;
    }
    if (threadIdx.x == 0) {
      /* wait for the streamers (relaxed polling of a device counter) */
      while (atomicAdd(done, 0) < gridDim.x - 1) __nanosleep(10000);
    }
    __syncthreads();
    unsigned long long bad = check_bytes((const uint8_t *)a, page, seed, 3ull * page, threadIdx.x, blockDim.x) +
                             check_bytes((const uint8_t *)b, 100, seed, 7ull * page + 5, threadIdx.x, blockDim.x);
    if (bad) atomicAdd((unsigned long long *)&r[1], bad);
    int u = gmunmap(a, page) | gmunmap(b, 100);
    if (threadIdx.x == 0) r[2] = u;
    return;
  }
  uint8_t *buf = bufs + (uint64_t)blockIdx.x * 8 * page;
  uint64_t share = (fsize + gridDim.x - 2) / (gridDim.x - 1);
  uint64_t lo = (blockIdx.x - 1) * share, hi = lo + share < fsize ? lo + share : fsize;
  for (uint64_t off = lo; off < hi; off += 8ull * page) {
    uint64_t want = hi - off < 8ull * page ? hi - off : 8ull * page;
    ssize_t n = gread(fd, (int64_t)off, want, buf);
    unsigned long long bad = n == (ssize_t)want ? check_bytes(buf, want, seed, off, threadIdx.x, blockDim.x) : 1;
    if (bad) atomicAdd((unsigned long long *)&r[3], bad);
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(done, 1u);
}

TEST_F(MmapTest, PinnedPagesSurviveEviction)
{
  const uint32_t page = 4096;
  const uint64_t frames = 256, fsize = 20 * frames * page;
  std::string f = dir.make("big", fsize, 23);
  start(page, frames * page, 1, 10000, f);
  const unsigned blocks = 32;
  uint8_t *bufs;
  unsigned int *done;
  int64_t *r;
  ASSERT_EQ(cudaSuccess, cudaMalloc(&bufs, blocks * 8ull * page));
  ASSERT_EQ(cudaSuccess, cudaMalloc(&done, sizeof(unsigned)));
  ASSERT_EQ(cudaSuccess, cudaMemset(done, 0, sizeof(unsigned)));
  ASSERT_EQ(cudaSuccess, cudaMalloc(&r, 4 * sizeof(int64_t)));
  ASSERT_EQ(cudaSuccess, cudaMemset(r, 0, 4 * sizeof(int64_t)));
  pinned_under_pressure<<<blocks, 128>>>(fd, fsize, 23, page, bufs, done, r);
  ASSERT_EQ(cudaSuccess, cudaDeviceSynchronize());
  int64_t h[4];
  ASSERT_EQ(cudaSuccess, cudaMemcpy(h, r, sizeof(h), cudaMemcpyDeviceToHost));
  EXPECT_EQ(0, h[0]) << "gmmap failed";
  EXPECT_EQ(0, h[1]) << "a pinned page changed under its mapping";
  EXPECT_EQ(0, h[2]) << "gmunmap";
  EXPECT_EQ(0, h[3]) << "streaming blocks read wrong bytes";
  struct gpufs_stats st;
  ASSERT_EQ(0, gpufs_get_stats(&st));
  EXPECT_GE(st.evictions, fsize / page - frames) << "the streamers had to evict";
  cudaFree(bufs);
  cudaFree(done);
  cudaFree(r);
}

/* Every frame pinned: gread and gmmap fail with -ENOMEM after the timeout,
 * and work again once the pins are dropped. */
__global__ void exhaust(int fd, uint32_t page, int nframes, void **maps, uint8_t *buf, int64_t *r)
{
  int ok = 0;
  for (int i = 0; i < nframes; i++) {
    maps[i] = gmmap(NULL, 8, GPUFS_PROT_READ, GPUFS_MAP_SHARED, fd, (int64_t)i * page);
    ok += !GPUFS_MAP_FAILED(maps[i]);
  }
  ssize_t n = gread(fd, (int64_t)(nframes + 1) * page, page, buf);
  void *m = gmmap(NULL, 8, GPUFS_PROT_READ, GPUFS_MAP_SHARED, fd, (int64_t)(nframes + 2) * page);
  int un = 0;
  for (int i = 0; i < nframes; i++)
    if (!GPUFS_MAP_FAILED(maps[i])) un |= gmunmap(maps[i], 8);
  ssize_t n2 = gread(fd, (int64_t)(nframes + 1) * page, page, buf);
  if (threadIdx.x == 0) {
    r[0] = ok;
    r[1] = n;
    r[2] = GPUFS_MAP_FAILED(m) ? GPUFS_MAP_ERRNO(m) : 0;
    r[3] = un;
    r[4] = n2;
  }
}

TEST_F(MmapTest, AllFramesPinnedIsENOMEM)
{
  const uint32_t page = 4096;
  const int frames = 16;
  std::string f = dir.make("ex", 64ull * page, 25);
  start(page, (uint64_t)frames * page, 1, 300, f);
  void **maps;
  uint8_t *buf;
  int64_t *r;
  ASSERT_EQ(cudaSuccess, cudaMalloc(&maps, frames * sizeof(void *)));
  ASSERT_EQ(cudaSuccess, cudaMalloc(&buf, page));
  ASSERT_EQ(cudaSuccess, cudaMalloc(&r, 5 * sizeof(int64_t)));
  exhaust<<<1, 64>>>(fd, page, frames, maps, buf, r);
  ASSERT_EQ(cudaSuccess, cudaDeviceSynchronize());
  int64_t h[5];
  ASSERT_EQ(cudaSuccess, cudaMemcpy(h, r, sizeof(h), cudaMemcpyDeviceToHost));
  EXPECT_EQ(frames, h[0]) << "every frame mapped";
  EXPECT_EQ(-GPUFS_ENOMEM, h[1]) << "gread with every frame pinned";
  EXPECT_EQ(-GPUFS_ENOMEM, h[2]) << "gmmap with every frame pinned";
  EXPECT_EQ(0, h[3]);
  EXPECT_EQ((int64_t)page, h[4]) << "reads work again after gmunmap";
  cudaFree(maps);
  cudaFree(buf);
  cudaFree(r);
}

/* All SMs: random greads and gmmaps over a file 20x the cache. */
__global__ void random_mix(int fd, uint64_t fsize, uint64_t seed, uint32_t page, int iters,
                           uint8_t *bufs, unsigned long long *bad, unsigned long long *errs)
{
  uint8_t *buf = bufs + (uint64_t)blockIdx.x * 3 * page;
  uint64_t x = 0x9876543ull + blockIdx.x * 104729ull;
  for (int i = 0; i < iters; i++) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    uint64_t off = (x >> 13) % fsize;
    if ((x >> 7) & 1) {
      uint64_t len = 1 + (x >> 20) % (2ull * page);
      uint64_t want = fsize - off < len ? fsize - off : len;
      ssize_t n = gread(fd, (int64_t)off, len, buf);
      unsigned long long b = n == (ssize_t)want ? check_bytes(buf, want, seed, off, threadIdx.x, blockDim.x) : 0;
      if (n != (ssize_t)want && threadIdx.x == 0) atomicAdd(errs, 1ull);
      if (b) atomicAdd(bad, b);
    } else {
      uint64_t in_page = off % page;
      uint64_t len = 1 + (x >> 20) % (page - in_page);
      uint64_t want = fsize - off < len ? fsize - off : len;
      void *p = gmmap(NULL, len, GPUFS_PROT_READ, GPUFS_MAP_SHARED, fd, (int64_t)off);
      if (GPUFS_MAP_FAILED(p)) {
        if (threadIdx.x == 0) atomicAdd(errs, 1ull);
      } else {
        unsigned long long b = check_bytes((const uint8_t *)p, want, seed, off, threadIdx.x, blockDim.x);
        if (b) atomicAdd(bad, b);
        if (gmunmap(p, len) != 0 && threadIdx.x == 0) atomicAdd(errs, 1ull);
      }
    }
    __syncthreads();
  }
}

TEST_F(MmapTest, RandomMixTwentyTimesTheCache)
{
  const uint32_t page = 4096;
  const uint64_t frames = 1024, fsize = 20 * frames * page + 123;
  std::string f = dir.make("mix", fsize, 27);
  start(page, frames * page, 16, 10000, f);
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  uint8_t *bufs;
  unsigned long long *cnt;
  ASSERT_EQ(cudaSuccess, cudaMalloc(&bufs, (uint64_t)sms * 3 * page));
  ASSERT_EQ(cudaSuccess, cudaMalloc(&cnt, 2 * sizeof(unsigned long long)));
  ASSERT_EQ(cudaSuccess, cudaMemset(cnt, 0, 2 * sizeof(unsigned long long)));
  random_mix<<<sms, 128>>>(fd, fsize, 27, page, 100, bufs, cnt, cnt + 1);
  ASSERT_EQ(cudaSuccess, cudaDeviceSynchronize());
  unsigned long long h[2];
  ASSERT_EQ(cudaSuccess, cudaMemcpy(h, cnt, sizeof(h), cudaMemcpyDeviceToHost));
  EXPECT_EQ(0ull, h[0]) << "bytes differing from the file";
  EXPECT_EQ(0ull, h[1]) << "calls that failed or returned a wrong count";
  struct gpufs_stats st;
  ASSERT_EQ(0, gpufs_get_stats(&st));
  EXPECT_GT(st.evictions, 0ull);
  cudaFree(bufs);
  cudaFree(cnt);
}
