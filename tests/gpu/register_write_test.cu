/*
 * register_write_test.cu - registered files that change (issue 15): GPU
 * writes inside the registered length, across its end and past the end
 * reach the host file and are read back right, through the mapping where
 * the pages lie within it; gftruncate and gopen(O_TRUNC) retire the
 * registration, so no later read (after the GPU grows the file again) is
 * served from the old pinned pages; a file the host shrank is retired at
 * the next gopen; a CPU write of the same size is seen through the
 * mapping.  Every read is compared byte for byte with a model of the file;
 * the counters say which path served it.  (page size, transfer path).
 */
#include <utility>

#include "tests/gpu/register_util.cuh"

/* One block: gwrite(fd, ops[2i], ops[2i+1], src + ops[2i]) for each i in
 * order; r[i]: what it returned. */
static __global__ void rw_writes_k(int fd, const uint8_t *src, const uint64_t *ops, int n, int64_t *r)
{
  for (int i = 0; i < n; i++) {
    ssize_t w = gwrite(fd, (int64_t)ops[2 * i], ops[2 * i + 1], src + ops[2 * i]);
    if (threadIdx.x == 0) r[i] = w;
  }
}

class RegisterWrite : public RegParamFixture {
protected:
  /* gwrite each (offset, length) of the pattern of seed (at file offsets)
   * in turn, split into calls of at most 16 pages; the model m gets the
   * same bytes. */
  ::testing::AssertionResult writes(int fd, const std::vector<std::pair<uint64_t, uint64_t>> &ws,
                                    uint64_t seed, std::vector<uint8_t> &m)
  {
    std::vector<uint64_t> ops;
    uint64_t end = 0;
    for (auto &w : ws) {
      for (uint64_t o = w.first; o < w.first + w.second; o += 16ull * page) {
        ops.push_back(o);
        ops.push_back(std::min<uint64_t>(16ull * page, w.first + w.second - o));
      }
      end = std::max(end, w.first + w.second);
      wt_put(m, w.first, w.second, seed);
    }
    const int n = (int)ops.size() / 2;
    wt_src src(end, seed);
    wt_dmem<uint64_t> dops(ops.size());
    wt_dmem<int64_t> r(n, 0x7f);
    cudaMemcpy(dops.p, ops.data(), ops.size() * sizeof(uint64_t), cudaMemcpyHostToDevice);
    rw_writes_k<<<1, 256>>>(fd, src.p, dops.p, n, r.p);
    if (wt_sync() != cudaSuccess) return ::testing::AssertionFailure() << "kernel failed";
    std::vector<int64_t> h = r.get();
    for (int i = 0; i < n; i++)
      if (h[i] != (int64_t)ops[2 * i + 1])
        return ::testing::AssertionFailure() << "gwrite at " << ops[2 * i] << " of " << ops[2 * i + 1]
                                             << " returned " << h[i] << wt_err(h[i]);
    return ::testing::AssertionSuccess();
  }
  /* A registered file of `size` pattern bytes, read once whole through
   * the mapping (every page within the registered length misses). */
  std::string registered_and_read(const char *name, uint64_t size, uint64_t seed)
  {
    std::string f = dir.make(name, size, seed);
    EXPECT_EQ(0, gpufs_register(f.c_str())) << gpufs_error_detail();
    const uint64_t before = rg_stats().reg_pages;
    EXPECT_TRUE(rg_reopen_reads(f, wt_pattern(size, seed), page));
    EXPECT_GE(rg_stats().reg_pages - before, rg_full_pages(size, page));
    return f;
  }
};

/* Writes in a partial page and a whole page within the registered length,
 * across its end (growing the file) and past a gap; gfsync; read back in
 * the same open, then (gclose, new gopen) from the mapping and the daemon
 * through a cache a third the file's size. */
TEST_P(RegisterWrite, GpuWritesAreReadBackThroughTheMapping)
{
  const uint64_t size0 = 200ull * page + 100;
  start(64ull * page);
  std::string f = dir.make("w", size0, 1);
  ASSERT_EQ(0, gpufs_register(f.c_str())) << gpufs_error_detail();
  std::vector<uint8_t> m = wt_pattern(size0, 1);
  const int fd = wt_gopen_h(f, GPUFS_O_RDWR);
  ASSERT_GE(fd, 0) << wt_err(fd);
  const uint64_t grown = size0 - 50 + 3ull * page + 7;
  ASSERT_TRUE(writes(fd,
                     {{3ull * page + 10, 2ull * page},  /* two partial pages */
                      {10ull * page, page},             /* one whole page */
                      {size0 - 50, 3ull * page + 7},    /* across the end: grows */
                      {grown + 2ull * page + 5, 100}},  /* past a gap of zeros */
                     77, m));
  EXPECT_EQ(0, wt_gfsync_h(fd));
  EXPECT_TRUE(wt_file_is(f, m)) << "the host file after gfsync";
  EXPECT_TRUE(rg_reads(fd, m, RG_BLOCK, page)) << "read back in the same open";
  EXPECT_EQ(0, wt_gclose_h(fd));
  EXPECT_TRUE(wt_file_is(f, m)) << "the host file after gclose";

  const struct gpufs_stats before = rg_stats();
  for (int mode : {RG_WARP, RG_MMAP}) EXPECT_TRUE(rg_reopen_reads(f, m, page, mode));
  const int rfd = host_open(f);
  ASSERT_GE(rfd, 0);
  EXPECT_TRUE(rg_random(rfd, m, page));
  EXPECT_EQ(0, host_close(rfd));
  const struct gpufs_stats after = rg_stats();
  EXPECT_GE(after.reg_pages - before.reg_pages, rg_full_pages(size0, page) - 64)
      << "pages not in the 64 frames came from the mapping (the registered length stays)";
  EXPECT_EQ(0ull, after.reg_retired);
  EXPECT_EQ(0, gpufs_unregister(f.c_str())) << gpufs_error_detail();
}

/* gftruncate retires the registration at once (this descriptor's misses
 * leave the mapping); the GPU grows the file again with other bytes; no
 * read, in this open or a later one, returns the old pinned pages.
 * Unregistering the retired registration works, and so does registering
 * the file again. */
TEST_P(RegisterWrite, GftruncateRetires)
{
  const uint64_t size0 = 100ull * page + 300, cut = 5ull * page + 7, regrown = 110ull * page;
  start(64ull * page);
  std::string f = registered_and_read("t", size0, 1);
  std::vector<uint8_t> m = wt_pattern(size0, 1);
  const int fd = wt_gopen_h(f, GPUFS_O_RDWR);
  ASSERT_GE(fd, 0) << wt_err(fd);
  EXPECT_TRUE(rg_reads(fd, m, RG_BLOCK, page, 0, 64ull * page)) << "cache the first 64 pages";
  ASSERT_EQ(0, wt_fd_op(WT_TRUNCATE, fd, (int64_t)cut));
  m.resize(cut);
  struct gpufs_stats st = rg_stats();
  EXPECT_EQ(1ull, st.reg_retired);
  EXPECT_EQ(1ull, st.reg_files) << "retired, still pinned until unregistered";
  const uint64_t reg_before = st.reg_pages;
  ASSERT_TRUE(writes(fd, {{cut, regrown - cut}}, 88, m)) << "grow it again with other bytes";
  EXPECT_TRUE(rg_reads(fd, m, RG_BLOCK, page)) << "the same open";
  EXPECT_EQ(0, wt_gclose_h(fd));
  EXPECT_TRUE(wt_file_is(f, m));
  EXPECT_TRUE(rg_reopen_reads(f, m, page, RG_WARP)) << "a new open";
  EXPECT_TRUE(rg_reopen_reads(f, m, page, RG_MMAP));
  st = rg_stats();
  EXPECT_EQ(reg_before, st.reg_pages) << "retired: nothing from the mapping";
  EXPECT_EQ(1ull, st.reg_retired);

  EXPECT_EQ(0, gpufs_unregister(f.c_str())) << "a retired registration: " << gpufs_error_detail();
  EXPECT_EQ(0, rg_mapped(f));
  st = rg_stats();
  EXPECT_EQ(0ull, st.reg_files);
  EXPECT_EQ(0ull, st.reg_bytes);
  EXPECT_EQ(1ull, st.reg_retired) << "counted since the start";
  ASSERT_EQ(0, gpufs_register(f.c_str())) << "again, at the new size: " << gpufs_error_detail();
  EXPECT_TRUE(rg_reopen_reads(f, m, page));
  EXPECT_GE(rg_stats().reg_pages - st.reg_pages, 110ull - 64) << "live again";
}

/* gopen(O_TRUNC) of a registered file retires it before a byte is read;
 * what the GPU writes then is what every later read returns. */
TEST_P(RegisterWrite, OTruncRetires)
{
  const uint64_t size0 = 100ull * page + 300;
  start(64ull * page);
  std::string f = dir.make("o", size0, 2);
  ASSERT_EQ(0, gpufs_register(f.c_str())) << gpufs_error_detail();
  const int fd = wt_gopen_h(f, GPUFS_O_RDWR | GPUFS_O_TRUNC);
  ASSERT_GE(fd, 0) << wt_err(fd);
  EXPECT_EQ(1ull, rg_stats().reg_retired);
  std::vector<uint8_t> m;
  ASSERT_TRUE(writes(fd, {{0, 30ull * page + 11}}, 99, m));
  EXPECT_TRUE(rg_reads(fd, m, RG_WARP, page));
  EXPECT_EQ(0, wt_gclose_h(fd));
  EXPECT_TRUE(wt_file_is(f, m));
  EXPECT_TRUE(rg_reopen_reads(f, m, page));
  EXPECT_TRUE(rg_reopen_reads(f, m, page, RG_MMAP));
  const struct gpufs_stats st = rg_stats();
  EXPECT_EQ(0ull, st.reg_pages) << "the old pages are pinned; none may be read";
  EXPECT_EQ(1ull, st.reg_retired);
  EXPECT_EQ(0, gpufs_unregister(f.c_str())) << gpufs_error_detail();
  EXPECT_EQ(0, rg_mapped(f));
}

/* The host cuts the file (and writes other bytes after the cut, short of
 * the registered length) between two gopens: the next gopen finds it
 * shorter and retires the registration. */
TEST_P(RegisterWrite, HostShrinkRetiresAtTheNextOpen)
{
  const uint64_t size0 = 100ull * page + 300, cut = 10ull * page + 33, end = 30ull * page;
  start(64ull * page);
  std::string f = registered_and_read("h", size0, 4);
  std::vector<uint8_t> m = wt_pattern(size0, 4);
  m.resize(cut);
  ASSERT_EQ(0, truncate(f.c_str(), (off_t)cut));
  wt_put(m, cut, end - cut, 44);
  ASSERT_TRUE(wt_host_pwrite(f, m, cut, end - cut));
  const struct gpufs_stats before = rg_stats();
  EXPECT_EQ(0ull, before.reg_retired);
  EXPECT_TRUE(rg_reopen_reads(f, m, page));
  EXPECT_TRUE(rg_reopen_reads(f, m, page, RG_MMAP));
  const int fd = host_open(f);
  ASSERT_GE(fd, 0);
  EXPECT_TRUE(rg_random(fd, m, page));
  EXPECT_EQ(0, host_close(fd));
  const struct gpufs_stats after = rg_stats();
  EXPECT_EQ(1ull, after.reg_retired);
  EXPECT_EQ(before.reg_pages, after.reg_pages) << "retired: nothing from the old pinned pages";
  EXPECT_EQ(0, gpufs_unregister(f.c_str())) << gpufs_error_detail();
  EXPECT_EQ(0ull, rg_stats().reg_files);
}

/* A CPU write that keeps the size, between two gopens: the next gopen
 * gets a new version, and its misses copy the new bytes from the mapping
 * (the page cache the CPU wrote). */
TEST_P(RegisterWrite, CpuWriteIsSeenThroughTheMapping)
{
  const uint64_t size0 = 100ull * page + 300;
  start(64ull * page);
  std::string f = registered_and_read("c", size0, 6);
  std::vector<uint8_t> m = wt_pattern(size0, 6);
  wt_put(m, 5ull * page + 100, 3ull * page, 66);
  ASSERT_TRUE(wt_host_pwrite(f, m, 5ull * page + 100, 3ull * page));
  ASSERT_TRUE(wt_bump_mtime(f, 1)) << "a change the next gopen cannot miss";
  const struct gpufs_stats before = rg_stats();
  EXPECT_TRUE(rg_reopen_reads(f, m, page));
  EXPECT_TRUE(rg_reopen_reads(f, m, page, RG_WARP));
  const struct gpufs_stats after = rg_stats();
  EXPECT_GE(after.reg_pages - before.reg_pages, rg_full_pages(size0, page))
      << "a new version: every page loaded again, from the mapping";
  EXPECT_LE(after.bytes_read - before.bytes_read, 2ull * page) << "the daemon read the tail only";
  EXPECT_EQ(0ull, after.reg_retired);
  EXPECT_EQ(0, gpufs_unregister(f.c_str())) << gpufs_error_detail();
}

INSTANTIATE_TEST_SUITE_P(Pages, RegisterWrite, RG_PARAMS, rg_param_name);
