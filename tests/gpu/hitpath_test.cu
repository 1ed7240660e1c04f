/*
 * hitpath_test.cu - the hit paths: a gmmap or a one-page gread of a cached
 * page is served by a lookup and a pin (round.cuh: gpufs_round_hit_one), a
 * gread of several cached pages by spans of lookups (read.cu: gread_hits),
 * with no round; pages not cached go through rounds as before.  Every byte
 * is checked against the file; the counters say which path ran (hits grow
 * by one per page, rounds and misses do not).
 */
#include "tests/gpu/gpu_util.h"

/* Group g (a warp or a block) makes `calls` one-page calls on pages
 * p = (g * 7 + i * 13) % pages: a gread of 1000 bytes at p * page + 37 and
 * a gmmap of 500 bytes at p * page + 100 (then gmunmap), alternately; bad
 * bytes into *bad, failed calls into *errs. */
__global__ void hit_calls(int fd, uint64_t seed, uint32_t page, uint32_t pages, int calls, bool warp,
                          uint8_t *bufs, unsigned long long *bad, unsigned long long *errs)
{
  const uint32_t g = warp ? (blockIdx.x * blockDim.x + threadIdx.x) / 32 : blockIdx.x;
  const uint32_t rank = warp ? threadIdx.x % 32 : threadIdx.x, size = warp ? 32 : blockDim.x;
  uint8_t *buf = bufs + (uint64_t)g * page;
  for (int i = 0; i < calls; i++) {
    const uint64_t p = ((uint64_t)g * 7 + (uint64_t)i * 13) % pages;
    unsigned long long local = 0;
    if (i % 2 == 0) {
      const uint64_t off = p * page + 37;
      ssize_t r = warp ? gread_warp(fd, (int64_t)off, 1000, buf) : gread(fd, (int64_t)off, 1000, buf);
      if (r != 1000) {
        if (rank == 0) atomicAdd(errs, 1ull);
        return;
      }
      for (uint32_t k = rank; k < 1000; k += size) local += buf[k] != tpat(seed, off + k);
      if (warp) __syncwarp();
      else __syncthreads(); /* buf is reused by the next gread */
    } else {
      const uint64_t off = p * page + 100;
      void *m = warp ? gmmap_warp(NULL, 500, GPUFS_PROT_READ, GPUFS_MAP_SHARED, fd, (int64_t)off)
                     : gmmap(NULL, 500, GPUFS_PROT_READ, GPUFS_MAP_SHARED, fd, (int64_t)off);
      if (GPUFS_MAP_FAILED(m)) {
        if (rank == 0) atomicAdd(errs, 1ull);
        return;
      }
      const uint8_t *b = (const uint8_t *)m;
      for (uint32_t k = rank; k < 500; k += size) local += b[k] != tpat(seed, off + k);
      int u = warp ? gmunmap_warp(m, 500) : gmunmap(m, 500);
      if (u != 0 && rank == 0) atomicAdd(errs, 1ull);
    }
    if (local) atomicAdd(bad, local);
  }
}

/* Group g reads `len` bytes at (g * 5 % pages) * page + skew into its
 * buffer at byte `shift` (an odd shift takes the page-by-page copy); bad
 * bytes into *bad, failed or short calls into *errs. */
__global__ void span_calls(int fd, uint64_t seed, uint32_t page, uint32_t pages, uint32_t skew, uint32_t len,
                           uint32_t shift, bool warp, uint8_t *bufs, uint64_t stride, unsigned long long *bad,
                           unsigned long long *errs)
{
  const uint32_t g = warp ? (blockIdx.x * blockDim.x + threadIdx.x) / 32 : blockIdx.x;
  const uint32_t rank = warp ? threadIdx.x % 32 : threadIdx.x, size = warp ? 32 : blockDim.x;
  uint8_t *buf = bufs + (uint64_t)g * stride + shift;
  const uint64_t off = (uint64_t)(g * 5 % pages) * page + skew;
  const uint64_t want = off + len > (uint64_t)pages * page ? (uint64_t)pages * page - off : len;
  ssize_t r = warp ? gread_warp(fd, (int64_t)off, len, buf) : gread(fd, (int64_t)off, len, buf);
  if (r != (ssize_t)want) {
    if (rank == 0) atomicAdd(errs, 1ull);
    return;
  }
  unsigned long long local = 0;
  for (uint64_t k = rank; k < want; k += size) local += buf[k] != tpat(seed, off + k);
  if (local) atomicAdd(bad, local);
}

class HitPathTest : public StartedFixture {
protected:
  static constexpr uint32_t kPage = 4096, kPages = 64;
  std::string file;
  int fd = -1;
  uint8_t *bufs = nullptr;
  uint8_t *span_bufs = nullptr; /* 8 groups' buffers of 65 pages */
  unsigned long long *cnt = nullptr; /* [0] bad bytes, [1] failed calls */
  void SetUp() override
  {
    StartedFixture::SetUp();
    if (IsSkipped()) return; /* no GPU: the base skipped the test */
    file = dir.make("hit", (uint64_t)kPages * kPage, 77);
    struct gpufs_config c = small_config(kPage, 256ull * kPage);
    c.readahead_max = 0; /* every one-page call is a one-page call */
    c.nrings = 1;        /* one ring holds every page: no eviction */
    ASSERT_EQ(0, gpufs_start(&c)) << gpufs_error_detail();
    started = true;
    fd = host_open(file);
    ASSERT_GE(fd, 0);
    CUDA_OK(cudaMalloc(&bufs, 64ull * kPage));
    CUDA_OK(cudaMalloc(&span_bufs, 8 * 65ull * kPage));
    CUDA_OK(cudaMalloc(&cnt, 2 * sizeof(unsigned long long)));
  }
  void TearDown() override
  {
    if (fd >= 0) EXPECT_EQ(0, host_close(fd));
    cudaFree(bufs);
    cudaFree(span_bufs);
    cudaFree(cnt);
    StartedFixture::TearDown();
  }
  /* Run span_calls (buffers of 64 pages a group); expect every byte right
   * and no call failed. */
  void spans(unsigned grid, unsigned threads, uint32_t skew, uint32_t len, uint32_t shift, bool warp)
  {
    CUDA_OK(cudaMemset(cnt, 0, 2 * sizeof(unsigned long long)));
    span_calls<<<grid, threads>>>(fd, 77, kPage, kPages, skew, len, shift, warp, span_bufs, 65ull * kPage,
                                  cnt, cnt + 1);
    CUDA_OK(cudaDeviceSynchronize());
    unsigned long long h[2];
    CUDA_OK(cudaMemcpy(h, cnt, sizeof(h), cudaMemcpyDeviceToHost));
    EXPECT_EQ(0ull, h[0]) << "bytes differing from the file";
    EXPECT_EQ(0ull, h[1]) << "calls that failed";
  }
  /* Run hit_calls; expect every byte right and no call failed. */
  void calls(unsigned grid, unsigned threads, int n, bool warp)
  {
    CUDA_OK(cudaMemset(cnt, 0, 2 * sizeof(unsigned long long)));
    hit_calls<<<grid, threads>>>(fd, 77, kPage, kPages, n, warp, bufs, cnt, cnt + 1);
    CUDA_OK(cudaDeviceSynchronize());
    unsigned long long h[2];
    CUDA_OK(cudaMemcpy(h, cnt, sizeof(h), cudaMemcpyDeviceToHost));
    EXPECT_EQ(0ull, h[0]) << "bytes differing from the file";
    EXPECT_EQ(0ull, h[1]) << "calls that failed";
  }
};

TEST_F(HitPathTest, CachedPagesAreServedWithoutARound)
{
  /* every page once through the round path: a page of misses */
  calls(1, 32, 2 * kPages, true);
  struct gpufs_stats s0, s1;
  ASSERT_EQ(0, gpufs_get_stats(&s0));
  EXPECT_EQ((uint64_t)kPages, s0.misses);
  /* then 16 warps and 4 blocks, 40 calls each, all on cached pages */
  calls(4, 128, 40, true);
  calls(4, 128, 40, false);
  ASSERT_EQ(0, gpufs_get_stats(&s1));
  EXPECT_EQ(s0.rounds, s1.rounds) << "a one-page call on a cached page took a round";
  EXPECT_EQ(s0.misses, s1.misses);
  EXPECT_EQ(s0.hits + 16 * 40 + 4 * 40, s1.hits);
}

TEST_F(HitPathTest, AMissStillTakesARoundAndThenHits)
{
  struct gpufs_stats s0, s1, s2;
  ASSERT_EQ(0, gpufs_get_stats(&s0));
  calls(1, 32, 1, true); /* one gread of page 0: not cached */
  ASSERT_EQ(0, gpufs_get_stats(&s1));
  EXPECT_EQ(s0.misses + 1, s1.misses);
  EXPECT_EQ(s0.rounds + 1, s1.rounds);
  calls(1, 64, 1, false); /* the same page by a block: cached now */
  ASSERT_EQ(0, gpufs_get_stats(&s2));
  EXPECT_EQ(s1.misses, s2.misses);
  EXPECT_EQ(s1.rounds, s2.rounds);
  EXPECT_EQ(s1.hits + 1, s2.hits);
}

/* Pages [first, last] of a read of len bytes at offset off. */
static uint64_t pages_of(uint64_t off, uint64_t len, uint64_t page)
{
  return (off + len - 1) / page - off / page + 1;
}

TEST_F(HitPathTest, ReadsOfSeveralCachedPagesTakeNoRound)
{
  spans(1, 32, 0, kPages * kPage, 0, true); /* the whole file into the cache: rounds */
  struct gpufs_stats s0, s1;
  ASSERT_EQ(0, gpufs_get_stats(&s0));
  EXPECT_EQ((uint64_t)kPages, s0.misses);
  /* 4 warps and 2 blocks (of 32 and 96 threads: spans of 32 and 64 pages,
   * a quarter of the cache) read 5 pages and 137 bytes from byte 300 of a
   * page, into aligned and odd buffers; then a block reads the whole file
   * (two or one spans) */
  const uint32_t len = 5 * kPage + 137;
  spans(1, 128, 300, len, 0, true);
  spans(1, 128, 300, len, 3, true);
  spans(2, 32, 300, len, 0, false);
  spans(2, 96, 300, len, 5, false);
  spans(1, 32, 0, kPages * kPage, 0, false);
  spans(1, 96, 16, kPages * kPage, 0, false); /* to the end of the file: 16 bytes short */
  ASSERT_EQ(0, gpufs_get_stats(&s1));
  EXPECT_EQ(s0.rounds, s1.rounds) << "a read of cached pages took a round";
  EXPECT_EQ(s0.misses, s1.misses);
  const uint64_t per = pages_of(300, len, kPage); /* 6 pages; none runs past the end (g * 5 <= 15) */
  EXPECT_EQ(s0.hits + 8 * per + 4 * per + 2 * kPages, s1.hits);
}

TEST_F(HitPathTest, APartlyCachedReadHitsItsPrefixThenTakesRounds)
{
  struct gpufs_stats s0, s1, s2;
  ASSERT_EQ(0, gpufs_get_stats(&s0));
  spans(1, 32, 0, 4 * kPage, 0, true); /* pages 0-3: one round of misses */
  ASSERT_EQ(0, gpufs_get_stats(&s1));
  EXPECT_EQ(s0.misses + 4, s1.misses);
  EXPECT_EQ(s0.rounds + 1, s1.rounds);
  spans(1, 64, 100, 10 * kPage, 7, false); /* pages 0-10: 4 hits, then 7 pages by one round */
  ASSERT_EQ(0, gpufs_get_stats(&s2));
  EXPECT_EQ(s1.hits + 4, s2.hits);
  EXPECT_EQ(s1.misses + 7, s2.misses);
  EXPECT_EQ(s1.rounds + 1, s2.rounds);
}
