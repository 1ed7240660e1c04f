/*
 * async_readahead_test.cu - posted readahead (readahead_async;
 * libgpufs/device/post.cuh): a window posted by a group that never comes
 * back is finished by whoever needs it (another group's read, or the next
 * ticket of its queue slot), every byte right and no page loaded twice; a
 * file closed with its posts still on their way reads right when opened
 * again; and every post's budget is given back.  The readahead suites
 * (readahead_test.cu) also run with posting on.
 */
#include <tuple>

#include "libgpufs/device/internal.cuh" /* gpufs_devs: the post budgets */
#include "tests/gpu/gpu_util.h"

/* One warp reads pages [0, npages) of fd, one gread_warp a page, checking
 * every byte; so it posts windows and ends with the last one posted and
 * never claimed. */
__global__ void one_warp_pages(int fd, uint64_t seed, uint32_t page, uint32_t npages,
                               uint8_t *buf, unsigned long long *bad, unsigned long long *errs)
{
  if (threadIdx.x >= 32) return;
  for (uint32_t p = 0; p < npages; p++) {
    ssize_t r = gread_warp(fd, (int64_t)p * page, page, buf);
    if (r != (ssize_t)page) {
      if (threadIdx.x == 0) atomicAdd(errs, 1ull);
      return;
    }
    unsigned long long local = 0;
    for (uint32_t i = threadIdx.x; i < page; i += 32) local += buf[i] != tpat(seed, (uint64_t)p * page + i);
    if (local) atomicAdd(bad, local);
    __syncwarp();
  }
}

/* (page size) */
class AsyncReadaheadTest : public ::testing::TestWithParam<uint32_t> {
protected:
  tdir dir;
  uint32_t page = 0;
  uint8_t *buf = nullptr;
  unsigned long long *cnt = nullptr;
  void SetUp() override
  {
    REQUIRE_GPU();
    page = GetParam();
    CUDA_OK(cudaMalloc(&buf, 64ull * page));
    CUDA_OK(cudaMalloc(&cnt, 2 * sizeof(unsigned long long)));
  }
  void TearDown() override
  {
    EXPECT_EQ(0, gpufs_stop());
    cudaFree(buf);
    cudaFree(cnt);
  }

  /* staging of `slots` pages: the queue's slots */
  void start(uint64_t cache_pages, uint32_t slots)
  {
    struct gpufs_config c = small_config(page, cache_pages * page);
    c.readahead_async = 1;
    c.readahead_max = 32 * page; /* windows of 4, 8, 16, 32 pages */
    c.nrings = 1;
    c.staging_size = (uint64_t)slots * page;
    c.auto_pin = 0; /* every miss takes the daemon's slots */
    ASSERT_EQ(0, gpufs_start(&c)) << gpufs_error_detail();
  }

  void zero() { ASSERT_EQ(cudaSuccess, cudaMemset(cnt, 0, 2 * sizeof(unsigned long long))); }
  void expect_clean(const char *what)
  {
    unsigned long long h[2] = {1, 1};
    ASSERT_EQ(cudaSuccess, cudaDeviceSynchronize()) << what;
    ASSERT_EQ(cudaSuccess, cudaMemcpy(h, cnt, sizeof(h), cudaMemcpyDeviceToHost));
    EXPECT_EQ(0ull, h[0]) << what << ": bytes that differ from the file";
    EXPECT_EQ(0ull, h[1]) << what << ": calls that failed or came short";
  }

  /* The queue's slots and the ring's frames posted loads hold now. */
  void posted(uint32_t *slots, uint32_t *frames)
  {
    struct gpufs_dev d;
    ASSERT_EQ(cudaSuccess, cudaMemcpyFromSymbol(&d, gpufs_devs, sizeof(d)));
    ASSERT_EQ(cudaSuccess, cudaMemcpy(slots, d.ra.nposted, sizeof(*slots), cudaMemcpyDeviceToHost));
    struct gpufs_ring ring;
    ASSERT_EQ(cudaSuccess, cudaMemcpy(&ring, d.cache.rings, sizeof(ring), cudaMemcpyDeviceToHost));
    *frames = ring.posted;
  }

  /* Blocks read the whole file a page a call, advised RANDOM (so they post
   * nothing themselves), every byte checked. */
  void read_random(int fd, uint64_t fsize, uint64_t seed, unsigned blocks)
  {
    uint8_t *bufs = nullptr;
    ASSERT_EQ(cudaSuccess, cudaMalloc(&bufs, (uint64_t)blocks * page));
    stream_check<<<blocks, 128>>>(fd, fsize, seed, page, GPUFS_FADV_RANDOM, bufs, cnt, cnt + 1,
                                  false);
    ASSERT_EQ(cudaSuccess, cudaGetLastError());
    ASSERT_EQ(cudaSuccess, cudaDeviceSynchronize());
    cudaFree(bufs);
  }
};

/* A warp posts windows and its kernel ends; a second kernel's blocks read
 * every page: the posted ones are claimed and finished by them, not read
 * again. */
TEST_P(AsyncReadaheadTest, PostedPagesAreFinishedByOtherGroups)
{
  const uint64_t npages = 96, fsize = npages * page;
  std::string f = dir.make("posted", fsize, 81);
  start(1024, 256);
  int fd = host_open(f);
  ASSERT_GE(fd, 0);
  zero();
  one_warp_pages<<<1, 32>>>(fd, 81, page, 13, buf, cnt, cnt + 1);
  expect_clean("the posting warp");
  struct gpufs_stats st;
  ASSERT_EQ(0, gpufs_get_stats(&st));
  EXPECT_GT(st.ra_pages, 13ull) << "pages 0..12 read; windows posted past them";
  uint32_t slots = 0, frames = 0;
  posted(&slots, &frames);
  EXPECT_GT(slots, 0u) << "the last window is still posted";
  EXPECT_EQ(slots, frames);
  const uint64_t loaded = st.misses;
  read_random(fd, fsize, 81, 4);
  expect_clean("the other blocks");
  ASSERT_EQ(0, gpufs_get_stats(&st));
  EXPECT_EQ(npages, st.misses) << "each page loaded once: posted pages claimed, not read again ("
                               << loaded << " before)";
  posted(&slots, &frames);
  EXPECT_EQ(0u, slots) << "every post finished, its budget back";
  EXPECT_EQ(0u, frames);
  EXPECT_EQ(0, host_close(fd));
}

/* Posts that nobody reads hold their queue slots; the tickets that come to
 * those slots next (another file's reads) finish them, so the pages are
 * cached and right afterwards. */
TEST_P(AsyncReadaheadTest, SlotsHeldByPostsAreFinishedByTheirNextTicket)
{
  const uint64_t npa = 80, npb = 400;
  std::string a = dir.make("held", npa * page, 82), b = dir.make("other", npb * page, 83);
  start(2048, GPUFS_MIN_SLOTS);
  int fa = host_open(a), fb = host_open(b);
  ASSERT_GE(fa, 0);
  ASSERT_GE(fb, 0);
  zero();
  one_warp_pages<<<1, 32>>>(fa, 82, page, 13, buf, cnt, cnt + 1);
  expect_clean("the posting warp");
  uint32_t slots = 0, frames = 0;
  posted(&slots, &frames);
  EXPECT_GT(slots, 0u);
  struct gpufs_stats st;
  ASSERT_EQ(0, gpufs_get_stats(&st));
  const uint64_t loaded_a = st.misses;
  /* 400 one-page misses: over three times round the 128 slots */
  read_random(fb, npb * page, 83, 2);
  expect_clean("the other file");
  posted(&slots, &frames);
  EXPECT_EQ(0u, slots) << "every slot a post held was needed, and its post finished";
  EXPECT_EQ(0u, frames);
  ASSERT_EQ(0, gpufs_get_stats(&st));
  EXPECT_EQ(loaded_a + npb, st.misses);
  /* the posted pages of a are cached, and right */
  const uint64_t before = st.misses;
  zero();
  read_random(fa, loaded_a * page < npa * page ? loaded_a * page : npa * page, 82, 1);
  expect_clean("the posted pages");
  ASSERT_EQ(0, gpufs_get_stats(&st));
  EXPECT_EQ(before, st.misses) << "pages [0, " << loaded_a << ") all cached";
  EXPECT_EQ(0, host_close(fa));
  EXPECT_EQ(0, host_close(fb));
}

/* A file closed right after a warp posted windows of it (the posted READs
 * may still be on their way to the host: the daemon serves the CLOSE after
 * them) reads right, each page once, when opened again. */
TEST_P(AsyncReadaheadTest, CloseWithPostsOnTheirWayThenReadAgain)
{
  const uint64_t npages = 64, fsize = npages * page;
  std::string f = dir.make("closed", fsize, 84);
  start(1024, 256);
  for (int round = 0; round < 3; round++) {
    int fd = host_open(f);
    ASSERT_GE(fd, 0);
    zero();
    one_warp_pages<<<1, 32>>>(fd, 84, page, 13, buf, cnt, cnt + 1);
    expect_clean("the posting warp");
    EXPECT_EQ(0, host_close(fd));
    fd = host_open(f);
    ASSERT_GE(fd, 0);
    read_random(fd, fsize, 84, 3);
    expect_clean("read again");
    EXPECT_EQ(0, host_close(fd));
  }
  struct gpufs_stats st;
  ASSERT_EQ(0, gpufs_get_stats(&st));
  EXPECT_EQ(npages, st.misses) << "each page loaded once over the three rounds";
  uint32_t slots = 1, frames = 1;
  posted(&slots, &frames);
  EXPECT_EQ(0u, slots);
  EXPECT_EQ(0u, frames);
}

INSTANTIATE_TEST_SUITE_P(Pages, AsyncReadaheadTest, ::testing::Values(4096u, 65536u),
                         [](const ::testing::TestParamInfo<uint32_t> &i) {
                           return std::to_string(i.param / 1024) + "K";
                         });
