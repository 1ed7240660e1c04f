/*
 * readahead_test.cu - per-group readahead (libgpufs/device/readahead.cuh):
 * groups that read in small calls get every byte right, each page is loaded
 * once and none past the end of the file, the window follows the advice
 * (off for RANDOM, largest at once for SEQUENTIAL, off with readahead_max
 * 0), a prefetched page of a file open for writing never hides a write, and
 * readahead in a cache smaller than the data evicts without failing, and
 * warps pulling from host memory take turns and give every turn back; each
 * with the window loaded in the call and posted (readahead_async).
 */
#include <algorithm>
#include <tuple>

#include "libgpufs/device/round.cuh" /* the pull gates */
#include "tests/gpu/gpu_util.h"

/* One block: advice, then one small read at off. */
__global__ void ra_one_read(int fd, int advice, uint64_t off, uint8_t *buf, int64_t *ret)
{
  int a = advice >= 0 ? gfadvise(fd, 0, 0, advice) : 0;
  ssize_t r = gread(fd, (int64_t)off, 100, buf);
  if (threadIdx.x == 0) {
    ret[0] = a;
    ret[1] = r;
  }
}

/* (page size, readahead_async) */
class ReadaheadTest : public ::testing::TestWithParam<std::tuple<uint32_t, uint32_t>> {
protected:
  tdir dir;
  uint32_t page = 0;
  void SetUp() override
  {
    REQUIRE_GPU();
    page = std::get<0>(GetParam());
  }
  void TearDown() override { EXPECT_EQ(0, gpufs_stop()); }

  void start(uint64_t cache, uint32_t ra_max = 1u << 20, uint32_t nrings = 16)
  {
    struct gpufs_config c = small_config(page, cache);
    c.readahead_async = std::get<1>(GetParam());
    c.readahead_max = ra_max;
    c.nrings = nrings;
    ASSERT_EQ(0, gpufs_start(&c)) << gpufs_error_detail();
  }

  /* Run stream_check over the file with blocks x threads; every byte
   * checked.  Returns the stats after the kernel. */
  struct gpufs_stats read_all(int fd, uint64_t fsize, uint64_t seed, uint64_t call, int advice,
                              bool warp, unsigned blocks, unsigned threads)
  {
    struct gpufs_stats st = {};
    uint64_t groups = warp ? (uint64_t)blocks * threads / 32 : blocks;
    uint8_t *bufs = nullptr;
    unsigned long long *cnt = nullptr;
    EXPECT_EQ(cudaSuccess, cudaMalloc(&bufs, groups * call));
    EXPECT_EQ(cudaSuccess, cudaMalloc(&cnt, 2 * sizeof(unsigned long long)));
    cudaMemset(cnt, 0, 2 * sizeof(unsigned long long));
    stream_check<<<blocks, threads>>>(fd, fsize, seed, call, advice, bufs, cnt, cnt + 1, warp);
    EXPECT_EQ(cudaSuccess, cudaGetLastError());
    EXPECT_EQ(cudaSuccess, cudaDeviceSynchronize());
    unsigned long long h[2] = {1, 1};
    cudaMemcpy(h, cnt, sizeof(h), cudaMemcpyDeviceToHost);
    EXPECT_EQ(0ull, h[0]) << "bytes that differ from the file";
    EXPECT_EQ(0ull, h[1]) << "calls that failed or came short";
    EXPECT_EQ(0, gpufs_get_stats(&st));
    cudaFree(bufs);
    cudaFree(cnt);
    return st;
  }

  /* Groups read a file of 200 pages and a bit in calls smaller than, equal
   * to and larger than a page. */
  void each_page_once(bool warp, unsigned blocks, unsigned threads)
  {
    const uint64_t fsize = 200ull * page + 123;
    const uint64_t npages = 201;
    start(2048ull * page); /* rounds of 32 pages; nothing evicted */
    uint64_t before_misses = 0, before_ra = 0;
    for (uint64_t call : {(uint64_t)page / 4 + 8, (uint64_t)page, (uint64_t)3 * page + 40}) {
      /* a fresh file each time: the one before is cached */
      std::string g = dir.make(("ra" + std::to_string(call)).c_str(), fsize, 22 + call);
      int gd = host_open(g);
      ASSERT_GE(gd, 0);
      struct gpufs_stats st = read_all(gd, fsize, 22 + call, call, -1, warp, blocks, threads);
      EXPECT_EQ(npages, st.misses - before_misses)
          << "call " << call << ": each page loaded exactly once, none past the end";
      EXPECT_GE(st.ra_pages - before_ra, npages / 2)
          << "call " << call << ": most pages came in ahead of the calls";
      before_misses = st.misses;
      before_ra = st.ra_pages;
      EXPECT_EQ(0, host_close(gd));
    }
  }
};

TEST_P(ReadaheadTest, SmallCallsOneBlockEachPageOnce) { each_page_once(false, 1, 128); }
TEST_P(ReadaheadTest, SmallCallsBlocksEachPageOnce) { each_page_once(false, 5, 256); }
TEST_P(ReadaheadTest, SmallCallsWarpsEachPageOnce) { each_page_once(true, 2, 128); }

TEST_P(ReadaheadTest, OffWhenConfiguredOffOrAdvisedRandom)
{
  const uint64_t fsize = 64ull * page + 5;
  std::string f = dir.make("off", fsize, 31), h = dir.make("rnd", fsize, 32);
  start(256ull * page, 0);
  int fd = host_open(f);
  ASSERT_GE(fd, 0);
  struct gpufs_stats st = read_all(fd, fsize, 31, page, -1, false, 1, 128);
  EXPECT_EQ(0ull, st.ra_pages) << "readahead_max 0";
  EXPECT_EQ(65ull, st.misses);
  EXPECT_EQ(0, host_close(fd));
  ASSERT_EQ(0, gpufs_stop());
  start(256ull * page);
  fd = host_open(h);
  ASSERT_GE(fd, 0);
  st = read_all(fd, fsize, 32, page, GPUFS_FADV_RANDOM, true, 1, 32);
  EXPECT_EQ(0ull, st.ra_pages) << "advised RANDOM";
  EXPECT_EQ(65ull, st.misses);
  EXPECT_EQ(0, host_close(fd));
}

TEST_P(ReadaheadTest, SequentialAdviceStartsAtTheLargestWindow)
{
  const uint64_t fsize = 100ull * page;
  std::string f = dir.make("seqadv", fsize, 41);
  start(256ull * page, 1u << 20, 1); /* one ring: rounds of 32 pages */
  int fd = host_open(f);
  ASSERT_GE(fd, 0);
  uint8_t *buf;
  int64_t *ret, r[2];
  CUDA_OK(cudaMalloc(&buf, 128));
  CUDA_OK(cudaMalloc(&ret, 2 * sizeof(int64_t)));
  /* no history, not at the start of the file: not sequential */
  ra_one_read<<<1, 64>>>(fd, -1, 10ull * page + 7, buf, ret);
  CUDA_OK(cudaDeviceSynchronize());
  CUDA_OK(cudaMemcpy(r, ret, sizeof(r), cudaMemcpyDeviceToHost));
  EXPECT_EQ(0, r[0]);
  EXPECT_EQ(100, r[1]);
  struct gpufs_stats st;
  ASSERT_EQ(0, gpufs_get_stats(&st));
  EXPECT_EQ(0ull, st.ra_pages) << "a lone read in the middle";
  /* advised SEQUENTIAL: the largest window at once (1 MiB, at most 32
   * pages, the request's one included) */
  ra_one_read<<<1, 64>>>(fd, GPUFS_FADV_SEQUENTIAL, 50ull * page + 7, buf, ret);
  CUDA_OK(cudaDeviceSynchronize());
  CUDA_OK(cudaMemcpy(r, ret, sizeof(r), cudaMemcpyDeviceToHost));
  EXPECT_EQ(0, r[0]);
  EXPECT_EQ(100, r[1]);
  ASSERT_EQ(0, gpufs_get_stats(&st));
  const uint64_t window = std::min<uint64_t>((1u << 20) / page, 32) - 1;
  EXPECT_EQ(window, st.ra_pages);
  std::vector<uint8_t> got(100);
  CUDA_OK(cudaMemcpy(got.data(), buf, 100, cudaMemcpyDeviceToHost));
  for (uint64_t i = 0; i < 100; i++) ASSERT_EQ(tpat(41, 50ull * page + 7 + i), got[i]) << i;
  /* the prefetched pages are there: reading them loads nothing (RANDOM
   * now, so that this read prefetches nothing itself) */
  const uint64_t misses = st.misses;
  st = read_all(fd, 50ull * page + window * page, 41, page, GPUFS_FADV_RANDOM, false, 1, 64);
  EXPECT_EQ(misses + 49, st.misses) << "pages 0..49 but 10 (read first) only";
  EXPECT_EQ(0, host_close(fd));
  cudaFree(buf);
  cudaFree(ret);
}

/* One block reads two files in turn, one page of each a call, and checks
 * every byte: the readahead state is per group and file. */
__global__ void two_files(int fa, int fb, uint64_t fsize, uint32_t page, uint8_t *buf,
                          unsigned long long *bad, unsigned long long *errs)
{
  for (uint64_t off = 0; off < fsize; off += page) {
    for (int k = 0; k < 2; k++) {
      ssize_t r = gread(k ? fb : fa, (int64_t)off, page, buf);
      if (r != (ssize_t)page) {
        if (threadIdx.x == 0) atomicAdd(errs, 1ull);
        return;
      }
      unsigned long long local = 0;
      for (uint64_t i = threadIdx.x; i < page; i += blockDim.x)
        local += buf[i] != tpat(k ? 72 : 71, off + i);
      if (local) atomicAdd(bad, local);
      __syncthreads();
    }
  }
}

TEST_P(ReadaheadTest, ReadingTwoFilesInTurnKeepsAWindowForEach)
{
  const uint64_t fsize = 96ull * page;
  std::string a = dir.make("ta", fsize, 71), b = dir.make("tb", fsize, 72);
  start(512ull * page, 1u << 20, 1);
  int fa = host_open(a), fb = host_open(b);
  ASSERT_GE(fa, 0);
  ASSERT_GE(fb, 0);
  uint8_t *buf;
  unsigned long long *cnt;
  CUDA_OK(cudaMalloc(&buf, page));
  CUDA_OK(cudaMalloc(&cnt, 2 * sizeof(unsigned long long)));
  CUDA_OK(cudaMemset(cnt, 0, 2 * sizeof(unsigned long long)));
  two_files<<<1, 128>>>(fa, fb, fsize, page, buf, cnt, cnt + 1);
  CUDA_OK(cudaDeviceSynchronize());
  unsigned long long h[2];
  CUDA_OK(cudaMemcpy(h, cnt, sizeof(h), cudaMemcpyDeviceToHost));
  EXPECT_EQ(0ull, h[0]) << "bytes that differ from the files";
  EXPECT_EQ(0ull, h[1]) << "calls that failed or came short";
  struct gpufs_stats st;
  ASSERT_EQ(0, gpufs_get_stats(&st));
  EXPECT_EQ(2 * 96ull, st.misses) << "each page of each file loaded once";
  EXPECT_GE(st.ra_pages, 2 * 96ull * 3 / 4) << "both files read ahead";
  EXPECT_EQ(0, host_close(fa));
  EXPECT_EQ(0, host_close(fb));
  cudaFree(buf);
  cudaFree(cnt);
}

/* One block of a file open O_RDWR: read page 0 (the pages after it come in
 * ahead), overwrite part of page 2, read pages 0..4 again. */
__global__ void write_after_readahead(int fd, uint32_t page, uint8_t *buf, const uint8_t *src,
                                      int64_t *ret)
{
  ssize_t a = gread(fd, 0, 64, buf);
  ssize_t b = gwrite(fd, 2 * (int64_t)page + 100, 300, src);
  ssize_t c = gread(fd, 0, 5ull * page, buf);
  if (threadIdx.x == 0) {
    ret[0] = a;
    ret[1] = b;
    ret[2] = c;
  }
}

TEST_P(ReadaheadTest, PrefetchedPageNeverHidesAWrite)
{
  const uint64_t fsize = 40ull * page;
  std::string f = dir.make("rw", fsize, 51);
  start(256ull * page, 1u << 20, 1);
  int fd = host_open(f, GPUFS_O_RDWR);
  ASSERT_GE(fd, 0);
  std::vector<uint8_t> src(300);
  for (size_t i = 0; i < src.size(); i++) src[i] = (uint8_t)(i * 7 + 3);
  uint8_t *dbuf, *dsrc;
  int64_t *dret, r[3];
  CUDA_OK(cudaMalloc(&dbuf, 5ull * page));
  CUDA_OK(cudaMalloc(&dsrc, src.size()));
  CUDA_OK(cudaMalloc(&dret, sizeof(r)));
  CUDA_OK(cudaMemcpy(dsrc, src.data(), src.size(), cudaMemcpyHostToDevice));
  write_after_readahead<<<1, 128>>>(fd, page, dbuf, dsrc, dret);
  CUDA_OK(cudaDeviceSynchronize());
  CUDA_OK(cudaMemcpy(r, dret, sizeof(r), cudaMemcpyDeviceToHost));
  EXPECT_EQ(64, r[0]);
  EXPECT_EQ(300, r[1]);
  ASSERT_EQ((int64_t)(5ull * page), r[2]);
  struct gpufs_stats st;
  ASSERT_EQ(0, gpufs_get_stats(&st));
  EXPECT_GE(st.ra_pages, 3ull) << "pages 1..3 came in with page 0 (a window of 4)";
  std::vector<uint8_t> got(5ull * page);
  CUDA_OK(cudaMemcpy(got.data(), dbuf, got.size(), cudaMemcpyDeviceToHost));
  for (uint64_t i = 0; i < got.size(); i++) {
    uint64_t w = i - (2ull * page + 100);
    uint8_t want = w < 300 ? src[w] : tpat(51, i);
    ASSERT_EQ(want, got[i]) << "byte " << i;
  }
  EXPECT_EQ(0, host_close(fd));
  /* and the host file holds the write */
  std::vector<uint8_t> host(fsize);
  FILE *fp = fopen(f.c_str(), "rb");
  ASSERT_NE(nullptr, fp);
  ASSERT_EQ(fsize, fread(host.data(), 1, fsize, fp));
  fclose(fp);
  for (uint64_t i = 0; i < fsize; i++) {
    uint64_t w = i - (2ull * page + 100);
    ASSERT_EQ(w < 300 ? src[w] : tpat(51, i), host[i]) << "file byte " << i;
  }
  cudaFree(dbuf);
  cudaFree(dsrc);
  cudaFree(dret);
}

TEST_P(ReadaheadTest, CacheSmallerThanDataEvictsAndReadsRight)
{
  /* one ring of 64 frames, rounds of at most 16 pages, 4 blocks: windows
   * evict the pages of other blocks and their own */
  const uint64_t fsize = 600ull * page + 9;
  std::string f = dir.make("big", fsize, 61);
  start(64ull * page, 1u << 20, 1);
  int fd = host_open(f);
  ASSERT_GE(fd, 0);
  struct gpufs_stats st = read_all(fd, fsize, 61, page / 2, -1, false, 4, 128);
  EXPECT_GT(st.evictions, 0ull);
  EXPECT_GT(st.ra_pages, 0ull);
  EXPECT_EQ(0, host_close(fd));
}

/* Warp groups that copy from host memory take turns at their SM's pull
 * gate (round.cuh): 512 warps, 16 to a block, read a file in one-page
 * calls with readahead, every byte checked, and afterwards every SM's gate
 * is back at 0 (a turn not given back would hold that SM's warps forever). */
TEST_P(ReadaheadTest, ManyWarpsTakeTurnsAtThePullGate)
{
  const uint64_t fsize = 2048ull * page + 77;
  std::string f = dir.make("gate", fsize, 71);
  start(4096ull * page);
  int fd = host_open(f);
  ASSERT_GE(fd, 0);
  struct gpufs_stats st = read_all(fd, fsize, 71, page, -1, true, 32, 512);
  EXPECT_EQ(2049ull, st.misses) << "each page loaded once";
  EXPECT_GT(st.ra_pages, 0ull);
  std::vector<uint32_t> gates(GPUFS_PULL_GATES, 1);
  CUDA_OK(cudaMemcpyFromSymbol(gates.data(), gpufs_pull_gates, GPUFS_PULL_GATES * sizeof(uint32_t)));
  for (uint32_t i = 0; i < GPUFS_PULL_GATES; i++) ASSERT_EQ(0u, gates[i]) << "SM " << i;
  EXPECT_EQ(0, host_close(fd));
}

INSTANTIATE_TEST_SUITE_P(Pages, ReadaheadTest,
                         ::testing::Combine(::testing::Values(4096u, 65536u), ::testing::Values(0u, 1u)),
                         [](const ::testing::TestParamInfo<ReadaheadTest::ParamType> &i) {
                           return std::to_string(std::get<0>(i.param) / 1024) + "K" +
                                  (std::get<1>(i.param) ? "_posted" : "");
                         });
