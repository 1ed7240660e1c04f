/*
 * async_readahead_test.cu - posted readahead (libgpufs/device/async.cu):
 * a warp reading page by page gets its windows posted and finishes them
 * in batches; loads posted and never read free their queue slots when the
 * queue comes round (and their frames when a ring runs out); a file closed
 * with posted loads pending, then another file, then the first again, all
 * read right.  Every byte is checked against the file.
 */
#include <algorithm>

#include "tests/gpu/gpu_util.h"

class AsyncReadaheadTest : public StartedFixture {
protected:
  void start_with(uint64_t cache_pages, uint32_t nrings, uint64_t staging_pages = 256)
  {
    struct gpufs_config c = small_config(4096, cache_pages * 4096);
    c.nrings = nrings;
    c.readahead_max = 1u << 20;
    c.readahead_async = 1;
    c.staging_size = staging_pages * 4096;
    ASSERT_EQ(0, gpufs_start(&c)) << gpufs_error_detail();
    started = true;
  }
  /* stream_check over [0, fsize) of fd; both counts must stay 0 */
  void read_checked(int fd, uint64_t fsize, uint64_t seed, uint64_t call, int advice, bool warp,
                    unsigned blocks, unsigned threads)
  {
    const uint64_t groups = warp ? (uint64_t)blocks * threads / 32 : blocks;
    uint8_t *bufs = nullptr;
    unsigned long long *cnt = nullptr;
    CUDA_OK(cudaMalloc(&bufs, groups * call));
    CUDA_OK(cudaMalloc(&cnt, 2 * sizeof(unsigned long long)));
    CUDA_OK(cudaMemset(cnt, 0, 2 * sizeof(unsigned long long)));
    stream_check<<<blocks, threads>>>(fd, fsize, seed, call, advice, bufs, cnt, cnt + 1, warp);
    CUDA_OK(cudaGetLastError());
    CUDA_OK(cudaDeviceSynchronize());
    unsigned long long h[2];
    CUDA_OK(cudaMemcpy(h, cnt, sizeof(h), cudaMemcpyDeviceToHost));
    EXPECT_EQ(0ull, h[0]) << "bytes that differ from the file";
    EXPECT_EQ(0ull, h[1]) << "calls that failed or came short";
    cudaFree(bufs);
    cudaFree(cnt);
  }
};

TEST_F(AsyncReadaheadTest, AWarpsWindowsArePostedAndFinishedInBatches)
{
  const uint64_t npages = 300;
  std::string f = dir.make("w", npages * 4096, 81);
  start_with(1024, 1);
  int fd = host_open(f);
  ASSERT_GE(fd, 0);
  read_checked(fd, npages * 4096, 81, 4096, -1, true, 1, 32);
  struct gpufs_stats st;
  ASSERT_EQ(0, gpufs_get_stats(&st));
  EXPECT_EQ(npages, st.misses) << "each page loaded once";
  EXPECT_GT(st.ra_posted, npages / 2) << "most pages posted ahead of the calls";
  EXPECT_GT(st.ra_adopted, npages / 2) << "and finished by the warp's later rounds";
  EXPECT_LT(st.rounds, npages / 4) << "a round finishes many posted pages";
  EXPECT_EQ(0, host_close(fd));
}

/* One warp reads page 4096 + 64 w of the file for w = 0..63 (advised
 * SEQUENTIAL: each read posts a window at once) and nothing else. */
__global__ void one_page_each(int fd, uint8_t *buf, unsigned long long *errs)
{
  if (gfadvise_warp(fd, 0, 0, GPUFS_FADV_SEQUENTIAL) != 0 && threadIdx.x == 0) atomicAdd(errs, 1ull);
  for (uint64_t w = 0; w < 64; w++)
    if (gread_warp(fd, (int64_t)((4096 + w * 64) * 4096), 4096, buf) != 4096 && threadIdx.x == 0)
      atomicAdd(errs, 1ull);
}

TEST_F(AsyncReadaheadTest, LoadsNobodyReadsFreeTheirSlots)
{
  /* 256 queue slots; posting stops at 64 pending */
  const uint64_t npages = 8192;
  std::string f = dir.make("slots", npages * 4096, 82);
  start_with(16384, 16);
  int fd = host_open(f);
  ASSERT_GE(fd, 0);
  uint8_t *bufs;
  unsigned long long *errs, h = 0;
  CUDA_OK(cudaMalloc(&bufs, 4096));
  CUDA_OK(cudaMalloc(&errs, sizeof(*errs)));
  CUDA_OK(cudaMemset(errs, 0, sizeof(*errs)));
  one_page_each<<<1, 32>>>(fd, bufs, errs);
  CUDA_OK(cudaDeviceSynchronize());
  CUDA_OK(cudaMemcpy(&h, errs, sizeof(h), cudaMemcpyDeviceToHost));
  EXPECT_EQ(0ull, h);
  struct gpufs_stats st;
  ASSERT_EQ(0, gpufs_get_stats(&st));
  ASSERT_GT(st.ra_posted, 0ull);
  EXPECT_LE(st.ra_posted, 64ull) << "posting stops while a quarter of the slots wait";
  EXPECT_EQ(0ull, st.ra_adopted + st.ra_wrapped) << "nobody read them, no slot was needed";
  EXPECT_EQ(0, host_close(fd));
  /* another descriptor reads pages 0..1023 one at a time, no readahead:
   * its 1,024 requests go round the 256 slots four times and meet the
   * posted loads nobody read */
  fd = host_open(f);
  ASSERT_GE(fd, 0);
  read_checked(fd, 1024 * 4096, 82, 4096, GPUFS_FADV_RANDOM, true, 1, 32);
  ASSERT_EQ(0, host_close(fd));
  fd = host_open(f);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(0, gpufs_get_stats(&st));
  const uint64_t finished = st.ra_wrapped + st.ra_adopted;
  EXPECT_GT(st.ra_wrapped, 0ull) << "finished by requests that needed their slots";
  /* and the posted pages hold the file's bytes, whoever finished them */
  read_checked(fd, npages * 4096, 82, 4096, GPUFS_FADV_RANDOM, true, 4, 256);
  ASSERT_EQ(0, gpufs_get_stats(&st));
  EXPECT_GE(st.ra_wrapped + st.ra_adopted, finished);
  EXPECT_EQ(0, host_close(fd));
  cudaFree(bufs);
  cudaFree(errs);
}

TEST_F(AsyncReadaheadTest, ARingFullOfPostedLoadsIsFreedByTheStalledGroup)
{
  /* one ring of 32 frames (rounds of 8 pages): 8 warps post windows into
   * it and read on; a warp that finds no frame finishes the posted loads */
  const uint64_t fsize = 400ull * 4096 + 77;
  std::string f = dir.make("ring", fsize, 83);
  start_with(32, 1);
  int fd = host_open(f);
  ASSERT_GE(fd, 0);
  read_checked(fd, fsize, 83, 1000, GPUFS_FADV_SEQUENTIAL, true, 1, 256);
  struct gpufs_stats st;
  ASSERT_EQ(0, gpufs_get_stats(&st));
  EXPECT_GT(st.ra_posted, 0ull);
  EXPECT_GT(st.evictions, 0ull);
  EXPECT_EQ(0, host_close(fd));
}

/* A block opens path a, reads its first page (advised SEQUENTIAL: the
 * window is posted), closes it (the host descriptor goes: the posted READs
 * may come after), then opens b and reads it whole, then a again. */
__global__ void close_with_posted(const char *a, const char *b, uint64_t size, uint8_t *buf,
                                  unsigned long long *bad, unsigned long long *errs)
{
  for (int k = 0; k < 3; k++) {
    const char *p = k == 1 ? b : a;
    const uint64_t seed = k == 1 ? 85 : 84;
    int fd = gopen(p, GPUFS_O_RDONLY, 0);
    if (fd < 0) {
      if (threadIdx.x == 0) atomicAdd(errs, 1ull);
      return;
    }
    gfadvise(fd, 0, 0, GPUFS_FADV_SEQUENTIAL);
    const uint64_t end = k == 0 ? 4096 : size;
    for (uint64_t off = 0; off < end; off += 4096) {
      ssize_t r = gread(fd, (int64_t)off, 4096, buf);
      if (r != 4096) {
        if (threadIdx.x == 0) atomicAdd(errs, 1ull);
        break;
      }
      unsigned long long local = 0;
      for (uint64_t i = threadIdx.x; i < 4096; i += blockDim.x) local += buf[i] != tpat(seed, off + i);
      if (local) atomicAdd(bad, local);
      __syncthreads();
    }
    if (gclose(fd) != 0 && threadIdx.x == 0) atomicAdd(errs, 1ull);
  }
}

TEST_F(AsyncReadaheadTest, AFileClosedWithPostedLoadsThenAnotherThenItAgain)
{
  const uint64_t size = 96ull * 4096;
  std::string a = dir.make("a", size, 84), b = dir.make("b", size, 85);
  start_with(1024, 4);
  dpath da(a), db(b);
  uint8_t *buf;
  unsigned long long *cnt, h[2];
  CUDA_OK(cudaMalloc(&buf, 4096));
  CUDA_OK(cudaMalloc(&cnt, 2 * sizeof(unsigned long long)));
  for (int rep = 0; rep < 20; rep++) {
    CUDA_OK(cudaMemset(cnt, 0, 2 * sizeof(unsigned long long)));
    close_with_posted<<<1, 128>>>(da.d, db.d, size, buf, cnt, cnt + 1);
    CUDA_OK(cudaDeviceSynchronize());
    CUDA_OK(cudaMemcpy(h, cnt, sizeof(h), cudaMemcpyDeviceToHost));
    ASSERT_EQ(0ull, h[0]) << "bytes that differ, repetition " << rep;
    ASSERT_EQ(0ull, h[1]) << "calls that failed, repetition " << rep;
  }
  struct gpufs_stats st;
  ASSERT_EQ(0, gpufs_get_stats(&st));
  EXPECT_GT(st.ra_posted, 0ull);
  cudaFree(buf);
  cudaFree(cnt);
}
