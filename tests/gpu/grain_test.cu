/*
 * grain_test.cu - the unit of write-back, dirty_grain (issue 14, item 5):
 * with dirty_grain 1 a GPU write and a CPU write to disjoint bytes of one
 * 64-byte grain both survive; with a coarser grain (64 by default) the
 * GPU's write-back carries the whole grains it touched, the CPU's bytes in
 * them as the cache held them.
 *
 * The GPU caches a page, the CPU then writes bytes [0, 10) and [20, 30) of
 * it in the host file, the GPU writes [10, 20) and gfsyncs: every byte of
 * the file is compared with a CPU model of each rule.
 */
#include "tests/gpu/write_util.cuh"

#define GR_PAGE 4096u
static const uint64_t GR_FILE = 1, GR_GPU = 2, GR_CPU = 3;

/* One block: gread [off, off+n) of fd into out, then r[0] its count. */
static __global__ void gr_read(int fd, int64_t off, uint64_t n, uint8_t *out, int64_t *r)
{
  ssize_t got = gread(fd, off, n, out);
  if (threadIdx.x == 0) r[0] = got;
}

/* One block: gwrite src[off, off+n) at off of fd, then gfsync; r[0], r[1]. */
static __global__ void gr_write_sync(int fd, int64_t off, uint64_t n, const uint8_t *src, int64_t *r)
{
  ssize_t w = gwrite(fd, off, n, src + off);
  int s = gfsync(fd);
  if (threadIdx.x == 0) {
    r[0] = w;
    r[1] = s;
  }
}

class GrainTest : public ::testing::TestWithParam<uint32_t> {
protected:
  tdir dir;
  bool started = false;
  void SetUp() override
  {
    REQUIRE_GPU();
    struct gpufs_config c = small_config(GR_PAGE, 64ull * GR_PAGE);
    c.dirty_grain = GetParam();
    ASSERT_EQ(0, gpufs_start(&c)) << gpufs_error_detail();
    started = true;
  }
  void TearDown() override
  {
    if (started) EXPECT_EQ(0, gpufs_stop()) << gpufs_error_detail();
  }
};

TEST_P(GrainTest, CpuAndGpuBytesOfOneGrain)
{
  const uint32_t grain = GetParam() ? GetParam() : GPUFS_DIRTY_GRAIN;
  const uint64_t S = 2 * GR_PAGE;
  std::string f = dir.make("x", S, GR_FILE);
  wt_src src(S, GR_GPU);
  int fd = wt_gopen_h(f, GPUFS_O_RDWR);
  ASSERT_GE(fd, 0) << wt_err(fd);
  wt_dmem<uint8_t> out(GR_PAGE, 0xa5);
  wt_dmem<int64_t> r(2, 0x7f);
  gr_read<<<1, 128>>>(fd, 0, GR_PAGE, out.p, r.p);
  ASSERT_EQ(cudaSuccess, wt_sync());
  ASSERT_EQ((int64_t)GR_PAGE, r.get()[0]) << "gread of page 0 (now cached)" << wt_err(r.get()[0]);
  std::vector<uint8_t> cpu = wt_pattern(S, GR_CPU);
  ASSERT_TRUE(wt_host_pwrite(f, cpu, 0, 10));
  ASSERT_TRUE(wt_host_pwrite(f, cpu, 20, 10));
  r.set(0x7f);
  gr_write_sync<<<1, 128>>>(fd, 10, 10, src.p, r.p);
  ASSERT_EQ(cudaSuccess, wt_sync());
  EXPECT_EQ(10, r.get()[0]) << "gwrite of [10, 20)" << wt_err(r.get()[0]);
  EXPECT_EQ(0, r.get()[1]) << "gfsync" << wt_err(r.get()[1]);
  /* the grains [10, 20) touches are written back whole, as the cache holds
   * them (the file's bytes from before the CPU wrote, and the GPU's); the
   * CPU's bytes outside them stay */
  const uint64_t w0 = 10 / grain * grain, w1 = (20 + grain - 1) / grain * grain;
  std::vector<uint8_t> m = wt_pattern(S, GR_FILE);
  for (uint64_t i = 0; i < 30; i++)
    if ((i < 10 || i >= 20) && (i < w0 || i >= w1)) m[i] = tpat(GR_CPU, i);
  wt_put(m, 10, 10, GR_GPU);
  EXPECT_TRUE(wt_file_is(f, m)) << "dirty_grain " << grain;
  EXPECT_EQ(0, wt_gclose_h(fd));
  EXPECT_TRUE(wt_file_is(f, m)) << "after gclose";
}

/* Byte-exact merges across the whole page: the GPU writes every other
 * 8-byte run of page 1, the CPU (after the GPU cached it) the others. */
TEST_P(GrainTest, InterleavedRunsOfOnePage)
{
  const uint32_t grain = GetParam() ? GetParam() : GPUFS_DIRTY_GRAIN;
  if (grain > 8) GTEST_SKIP() << "runs of 8 bytes need a grain of 8 or less";
  const uint64_t S = 2 * GR_PAGE;
  std::string f = dir.make("x", S, GR_FILE);
  wt_src src(S, GR_GPU);
  int fd = wt_gopen_h(f, GPUFS_O_RDWR);
  ASSERT_GE(fd, 0) << wt_err(fd);
  wt_dmem<uint8_t> out(GR_PAGE, 0xa5);
  wt_dmem<int64_t> r(2, 0x7f);
  gr_read<<<1, 128>>>(fd, GR_PAGE, GR_PAGE, out.p, r.p);
  ASSERT_EQ(cudaSuccess, wt_sync());
  ASSERT_EQ((int64_t)GR_PAGE, r.get()[0]) << wt_err(r.get()[0]);
  std::vector<uint8_t> cpu = wt_pattern(S, GR_CPU);
  std::vector<uint8_t> m = wt_pattern(S, GR_FILE);
  for (uint64_t o = GR_PAGE; o < S; o += 16) {
    ASSERT_TRUE(wt_host_pwrite(f, cpu, o + 8, 8));
    wt_put(m, o + 8, 8, GR_CPU);
  }
  for (uint64_t o = GR_PAGE; o < S; o += 16) {
    r.set(0x7f);
    gr_write_sync<<<1, 64>>>(fd, (int64_t)o, 8, src.p, r.p);
    ASSERT_EQ(cudaSuccess, wt_sync());
    ASSERT_EQ(8, r.get()[0]) << "gwrite at " << o << wt_err(r.get()[0]);
    ASSERT_EQ(0, r.get()[1]) << "gfsync" << wt_err(r.get()[1]);
    wt_put(m, o, 8, GR_GPU);
  }
  EXPECT_TRUE(wt_file_is(f, m)) << "every CPU run and every GPU run survives, dirty_grain " << grain;
  EXPECT_EQ(0, wt_gclose_h(fd));
}

INSTANTIATE_TEST_SUITE_P(Grains, GrainTest, ::testing::Values(1u, 8u, 0u),
                         [](const ::testing::TestParamInfo<uint32_t> &i) {
                           return "grain" + std::to_string(i.param ? i.param : GPUFS_DIRTY_GRAIN);
                         });
