/*
 * open_churn_test.cu - every group of a full grid opens, reads and closes
 * one of a few files over and over: joins without the lock by many groups
 * at once (libgpufs/common/refs.h: joins by add), last closes racing them,
 * entries freed and created again under new generations.  Each read is
 * checked byte for byte against its file (a join that took a reference on
 * another file's entry, or on an entry being closed, reads wrong bytes or
 * fails), every call's return is checked, and after the kernel every
 * entry is closed: as many other files as the table has entries can be
 * open at once.
 */
#include "tests/gpu/gpu_util.h"

#define CHURN_FILES 3
#define CHURN_TABLE 8 /* max_open_files */

struct churn_out {
  unsigned long long bad;       /* bytes that differ from their file */
  unsigned long long errs;      /* calls that failed or came short */
  unsigned long long first_err; /* the first failed call's -errno, or 0 */
};

/* Group g (a block, or a warp with warp) makes `rounds` rounds: file
 * (g + r) % CHURN_FILES, gopen, one read of `len` bytes at an offset that
 * moves with g and r, check, gclose. */
__global__ void churn_kernel(char *const *paths, const uint64_t *sizes, uint64_t len, int rounds,
                             uint8_t *bufs, struct churn_out *out, bool warp)
{
  const uint64_t g = warp ? (blockIdx.x * blockDim.x + threadIdx.x) / 32 : blockIdx.x;
  const uint32_t rank = warp ? threadIdx.x % 32 : threadIdx.x;
  const uint32_t size = warp ? 32 : blockDim.x;
  uint8_t *buf = bufs + g * len;
  for (int r = 0; r < rounds; r++) {
    const int f = (int)((g + (uint64_t)r) % CHURN_FILES);
    const int fd = warp ? gopen_warp(paths[f], GPUFS_O_RDONLY) : gopen(paths[f], GPUFS_O_RDONLY);
    if (fd < 0) {
      if (rank == 0) {
        atomicAdd(&out->errs, 1ull);
        atomicCAS(&out->first_err, 0ull, (unsigned long long)(-fd));
      }
      continue;
    }
    const uint64_t off = (g * 7919 + (uint64_t)r * 104729) % (sizes[f] - len);
    const ssize_t got = warp ? gread_warp(fd, (int64_t)off, len, buf) : gread(fd, (int64_t)off, len, buf);
    if (got != (ssize_t)len) {
      if (rank == 0) {
        atomicAdd(&out->errs, 1ull);
        if (got < 0) atomicCAS(&out->first_err, 0ull, (unsigned long long)(-got));
      }
    } else {
      unsigned long long bad = 0;
      for (uint64_t b = rank; b < len; b += size) bad += buf[b] != tpat(500 + f, off + b);
      if (bad) atomicAdd(&out->bad, bad);
    }
    const int c = warp ? gclose_warp(fd) : gclose(fd);
    if (c != 0 && rank == 0) {
      atomicAdd(&out->errs, 1ull);
      atomicCAS(&out->first_err, 0ull, (unsigned long long)(-c));
    }
  }
}

/* Block b opens file b of `paths` (100 bytes, made with seed 900 + b),
 * waits until every block of the grid has opened its file (all resident:
 * the grid is small), checks the bytes, closes.  res[3b..3b+2]: the
 * descriptor or -errno, the bytes that differ (or -1 for a failed read),
 * gclose's return. */
__global__ void hold_all_kernel(char *const *paths, unsigned int *arrived, int *res)
{
  __shared__ uint8_t buf[100];
  const int b = (int)blockIdx.x;
  const int fd = gopen(paths[b], GPUFS_O_RDONLY);
  if (threadIdx.x == 0) {
    res[3 * b] = fd;
    res[3 * b + 1] = 0;
    res[3 * b + 2] = 0;
    atomicAdd(arrived, 1u);
    /* every entry held at once; a block whose open failed holds none */
    while (atomicAdd(arrived, 0u) < gridDim.x) __nanosleep(1000);
  }
  __syncthreads();
  if (fd < 0) return;
  const ssize_t got = gread(fd, 0, 100, buf);
  if (threadIdx.x == 0) {
    int bad = 0;
    for (int i = 0; i < 100; i++) bad += buf[i] != tpat(900 + b, (uint64_t)i);
    res[3 * b + 1] = got == 100 ? bad : -1;
  }
  const int c = gclose(fd);
  if (threadIdx.x == 0) res[3 * b + 2] = c;
}

class OpenChurnTest : public StartedFixture {
protected:
  std::vector<char *> dpaths;
  std::vector<uint64_t> sizes;
  char **dp = nullptr;
  uint64_t *ds = nullptr;
  void start()
  {
    struct gpufs_config c = small_config(4096, 64ull << 20);
    c.max_open_files = CHURN_TABLE; /* entries are freed and made again all along */
    ASSERT_EQ(0, gpufs_start(&c)) << gpufs_error_detail();
    started = true;
    for (int i = 0; i < CHURN_FILES; i++) {
      sizes.push_back((1ull << 20) + (uint64_t)i * 12345);
      std::string f = dir.make(("churn" + std::to_string(i)).c_str(), sizes.back(), 500 + i);
      char *d = nullptr;
      CUDA_OK(cudaMalloc(&d, f.size() + 1));
      CUDA_OK(cudaMemcpy(d, f.c_str(), f.size() + 1, cudaMemcpyHostToDevice));
      dpaths.push_back(d);
    }
    CUDA_OK(cudaMalloc(&dp, CHURN_FILES * sizeof(char *)));
    CUDA_OK(cudaMemcpy(dp, dpaths.data(), CHURN_FILES * sizeof(char *), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMalloc(&ds, CHURN_FILES * sizeof(uint64_t)));
    CUDA_OK(cudaMemcpy(ds, sizes.data(), CHURN_FILES * sizeof(uint64_t), cudaMemcpyHostToDevice));
  }
  void TearDown() override
  {
    for (char *d : dpaths) cudaFree(d);
    cudaFree(dp);
    cudaFree(ds);
    StartedFixture::TearDown();
  }
  /* One churn kernel of `blocks` x `threads`, `rounds` rounds a group;
   * its counters. */
  void churn(int blocks, int threads, uint64_t len, int rounds, bool warp, struct churn_out *h)
  {
    const uint64_t groups = warp ? (uint64_t)blocks * threads / 32 : (uint64_t)blocks;
    uint8_t *bufs = nullptr;
    struct churn_out *dout = nullptr;
    CUDA_OK(cudaMalloc(&bufs, groups * len));
    CUDA_OK(cudaMalloc(&dout, sizeof(*dout)));
    CUDA_OK(cudaMemset(dout, 0, sizeof(*dout)));
    churn_kernel<<<blocks, threads>>>(dp, ds, len, rounds, bufs, dout, warp);
    CUDA_OK(cudaGetLastError());
    CUDA_OK(cudaDeviceSynchronize());
    CUDA_OK(cudaMemcpy(h, dout, sizeof(*h), cudaMemcpyDeviceToHost));
    cudaFree(bufs);
    cudaFree(dout);
  }
  /* A churn of `blocks` x `threads`, by warps or by blocks, `rounds`
   * rounds a group of `len` bytes; then no entry is left open.  The host
   * opens it took: every one but the first of each file made an entry
   * again after a last gclose. */
  uint64_t churn_all(int blocks, int threads, uint64_t len, int rounds, bool warp)
  {
    struct churn_out h;
    struct gpufs_stats before, after;
    EXPECT_EQ(0, gpufs_get_stats(&before));
    churn(blocks, threads, len, rounds, warp, &h);
    EXPECT_EQ(0ull, h.bad);
    EXPECT_EQ(0ull, h.errs) << "first error -" << h.first_err;
    EXPECT_EQ(0, gpufs_get_stats(&after));
    const uint64_t opens = after.opens - before.opens;
    RecordProperty("host_opens", std::to_string(opens));
    printf("[ churn    ] %llu host opens of %d files, %llu gopens\n", (unsigned long long)opens,
           CHURN_FILES, (unsigned long long)(after.gopens - before.gopens));
    expect_all_closed();
    return opens;
  }
  /* Every warp of 2 blocks of 256 an SM (2,112 warps on an H100), or every
   * block of 4 blocks of 128 an SM, 12 rounds: joins by many at once. */
  void full_grid(bool warp)
  {
    start();
    int sms = 0;
    CUDA_OK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    if (warp)
      churn_all(2 * sms, 256, 5000, 12, true);
    else
      churn_all(4 * sms, 128, 20000, 12, false);
  }
  /* After a churn: no entry is left open.  The table has max_open_files
   * (8) entries; 8 blocks open 8 other files and hold them until all are
   * open: each gets an entry only if the churn's entries were all freed. */
  void expect_all_closed()
  {
    std::vector<char *> others;
    for (int i = 0; i < CHURN_TABLE; i++) {
      std::string f = dir.make(("other" + std::to_string(i)).c_str(), 100, 900 + i);
      char *d = nullptr;
      CUDA_OK(cudaMalloc(&d, f.size() + 1));
      CUDA_OK(cudaMemcpy(d, f.c_str(), f.size() + 1, cudaMemcpyHostToDevice));
      others.push_back(d);
    }
    char **dothers = nullptr;
    int *dres = nullptr;
    unsigned int *arrived = nullptr;
    CUDA_OK(cudaMalloc(&dothers, CHURN_TABLE * sizeof(char *)));
    CUDA_OK(cudaMemcpy(dothers, others.data(), CHURN_TABLE * sizeof(char *), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMalloc(&dres, 3 * CHURN_TABLE * sizeof(int)));
    CUDA_OK(cudaMalloc(&arrived, sizeof(unsigned int)));
    CUDA_OK(cudaMemset(arrived, 0, sizeof(unsigned int)));
    hold_all_kernel<<<CHURN_TABLE, 64>>>(dothers, arrived, dres);
    CUDA_OK(cudaGetLastError());
    CUDA_OK(cudaDeviceSynchronize());
    int h[3 * CHURN_TABLE];
    CUDA_OK(cudaMemcpy(h, dres, sizeof(h), cudaMemcpyDeviceToHost));
    for (int i = 0; i < CHURN_TABLE; i++) {
      EXPECT_GE(h[3 * i], 0) << "file " << i << ": a churn entry stayed open (-EMFILE is -"
                             << GPUFS_EMFILE << ")";
      EXPECT_EQ(0, h[3 * i + 1]) << "file " << i << ": bytes differ";
      EXPECT_EQ(0, h[3 * i + 2]) << "file " << i << ": gclose";
    }
    for (char *d : others) cudaFree(d);
    cudaFree(dothers);
    cudaFree(dres);
    cudaFree(arrived);
  }
};

TEST_F(OpenChurnTest, EveryWarpOfAFullGridOpensReadsAndCloses) { full_grid(true); }

TEST_F(OpenChurnTest, EveryBlockOfAFullGridOpensReadsAndCloses) { full_grid(false); }

/* 8 warps over 3 files, 300 rounds: a file's few holders close together
 * and its entry is freed and made again all along, while the next round's
 * joiners come. */
TEST_F(OpenChurnTest, FewWarpsCloseLastAndJoinAgainAllAlong)
{
  start();
  const uint64_t opens = churn_all(1, 256, 3000, 300, true);
  EXPECT_GT(opens, (uint64_t)CHURN_FILES) << "no entry was made again: the test raced nothing";
}
