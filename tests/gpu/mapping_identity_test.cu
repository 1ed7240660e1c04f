/*
 * mapping_identity_test.cu - what gmunmap and gmsync write back (issue 14).
 * A read-only mapping (of an O_RDONLY descriptor, PROT_READ only, or
 * MAP_PRIVATE) writes nothing when it is unmapped or synced, even while a
 * writable descriptor of the file is open: a CPU pwrite of the mapped bytes
 * made meanwhile survives.  Stores through a PROT_WRITE mapping whose
 * descriptor was gclosed before gmunmap reach the file (gclose and gmunmap
 * return 0), and a reopen on the GPU reads what the file holds.
 * Every byte is compared with a model built on the CPU.
 */
#include "tests/gpu/write_util.cuh"

#define MI_PAGE 4096u

static const uint64_t MI_FILE_SEED = 1, MI_GPU_SEED = 2, MI_CPU_SEED = 3;

/* The host file's [off, off + len) is model's. */
static ::testing::AssertionResult mi_range_is(const std::string &path, const std::vector<uint8_t> &model,
                                              uint64_t off, uint64_t len)
{
  std::vector<uint8_t> got(len);
  int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) return ::testing::AssertionFailure() << path << ": " << strerror(errno);
  ssize_t n = pread(fd, got.data(), len, (off_t)off);
  close(fd);
  if (n != (ssize_t)len) return ::testing::AssertionFailure() << "pread returned " << n << " of " << len;
  return wt_bytes_eq(model.data() + off, got.data(), len, off);
}

/* One block maps [off, off + len) of fd, counts the bytes that differ from
 * the pattern of seed (r[1]) and keeps the mapping (*ptr); r[0]: 0 or
 * gmmap's error. */
static __global__ void mi_map_check(int fd, int64_t off, uint64_t len, int prot, int flags, uint64_t seed,
                                    void **ptr, int64_t *r)
{
  void *p = gmmap(NULL, len, prot, flags, fd, off);
  if (GPUFS_MAP_FAILED(p)) {
    if (threadIdx.x == 0) r[0] = GPUFS_MAP_ERRNO(p);
    return;
  }
  unsigned long long bad = 0;
  for (uint64_t i = threadIdx.x; i < len; i += blockDim.x) bad += ((const uint8_t *)p)[i] != tpat(seed, off + i);
  if (bad) atomicAdd((unsigned long long *)&r[1], bad);
  if (threadIdx.x == 0) {
    r[0] = 0;
    *ptr = p;
  }
}

static __global__ void mi_write(int fd, int64_t off, uint64_t len, const uint8_t *src, int64_t *r)
{
  ssize_t w = gwrite(fd, off, len, src + off);
  if (threadIdx.x == 0) *r = w;
}

/* gmsync(MS_SYNC) (with msync) or gmunmap of the mapping *ptr by one block. */
static __global__ void mi_release(void *const *ptr, uint64_t len, bool msync, int64_t *r)
{
  int v = msync ? gmsync(*ptr, len, GPUFS_MS_SYNC) : gmunmap(*ptr, len);
  if (threadIdx.x == 0) *r = v;
}

/* gopen path O_RDONLY, gread ask bytes from 0, gclose: r[0..2]. */
static __global__ void mi_reread(const char *path, uint64_t ask, uint8_t *out, int64_t *r)
{
  int64_t v[3] = {0, 0, 0};
  int fd = gopen(path, GPUFS_O_RDONLY);
  v[0] = fd;
  if (fd >= 0) {
    v[1] = gread(fd, 0, ask, out);
    v[2] = gclose(fd);
  }
  if (threadIdx.x == 0)
    for (int i = 0; i < 3; i++) r[i] = v[i];
}

class MappingIdentityBase : public ::testing::Test {
protected:
  tdir dir;
  bool started = false;
  void SetUp() override
  {
    REQUIRE_GPU();
    struct gpufs_config c = small_config(MI_PAGE, 256ull * MI_PAGE);
    c.alloc_timeout_ms = 10000;
    ASSERT_EQ(0, gpufs_start(&c)) << gpufs_error_detail();
    started = true;
  }
  void TearDown() override
  {
    if (started) EXPECT_EQ(0, gpufs_stop()) << gpufs_error_detail();
  }
  /* A new gopen of path on the GPU reads exactly model. */
  void reopen_agrees(const std::string &path, const std::vector<uint8_t> &model)
  {
    dpath dp(path);
    wt_dmem<uint8_t> out(model.size() + MI_PAGE, 0xa5);
    wt_dmem<int64_t> r(3, 0x7f);
    mi_reread<<<1, 128>>>(dp.d, model.size() + MI_PAGE, out.p, r.p);
    ASSERT_EQ(cudaSuccess, wt_sync());
    std::vector<int64_t> h = r.get();
    ASSERT_GE(h[0], 0) << "gopen after the mapping's end" << wt_err(h[0]);
    EXPECT_EQ((int64_t)model.size(), h[1]) << "gread after reopening" << wt_err(h[1]);
    EXPECT_EQ(0, h[2]) << "gclose" << wt_err(h[2]);
    EXPECT_TRUE(wt_bytes_eq(model.data(), out.get().data(), model.size()))
        << "a reopen on the GPU reads what the file holds";
  }
};

/* ---- read-only mappings write nothing back ---- */

/* How the read-only mapping is made. */
enum mi_kind { MI_RDONLY_FD, MI_PROT_READ, MI_PRIVATE, MI_NKINDS };
static const char *const mi_kind_names[MI_NKINDS] = {"RdonlyFd", "ProtRead", "Private"};

/* Parameters: the kind, gmsync(MS_SYNC) before gmunmap. */
class ReadOnlyMappingTest : public MappingIdentityBase,
                            public ::testing::WithParamInterface<std::tuple<int, bool>> {};

/* An O_RDWR descriptor is open, with dirty bytes on the mapped page and on
 * another; the mapping sees the file's bytes; the CPU then rewrites the
 * mapped grains.  gmsync and gmunmap of the mapping must not write the
 * cache's (now stale) bytes over the CPU's: after them, and after every
 * gclose, the file holds the CPU's bytes there and the GPU's gwrites
 * elsewhere.
 * Today: gmsync and gmunmap mark the range dirty for the writable
 * descriptor; with gmsync the range check after it fails (MS_SYNC writes
 * it back at once), without it the check after the last gclose does. */
TEST_P(ReadOnlyMappingTest, UnmapAndMsyncWriteNothing)
{
  const int kind = std::get<0>(GetParam());
  const bool msync = std::get<1>(GetParam());
  const uint64_t P = MI_PAGE, G = GPUFS_DIRTY_GRAIN, S = 3 * P + 500;
  const int64_t off = (int64_t)(P + 4 * G + 3);
  const uint64_t len = 5 * G + 10; /* inside grains [4, 10) of page 1 */
  std::string f = dir.make("x", S, MI_FILE_SEED);
  wt_src src(S, MI_GPU_SEED);
  int wfd = wt_gopen_h(f, GPUFS_O_RDWR);
  ASSERT_GE(wfd, 0) << "gopen O_RDWR" << wt_err(wfd);
  int mfd = wfd;
  if (kind == MI_RDONLY_FD) {
    mfd = wt_gopen_h(f, GPUFS_O_RDONLY);
    ASSERT_GE(mfd, 0) << "gopen O_RDONLY" << wt_err(mfd);
  }
  const int flags = kind == MI_PRIVATE ? GPUFS_MAP_PRIVATE : GPUFS_MAP_SHARED;
  wt_dmem<void *> ptr(1);
  wt_dmem<int64_t> r(2, 0);
  mi_map_check<<<1, 128>>>(mfd, off, len, GPUFS_PROT_READ, flags, MI_FILE_SEED, ptr.p, r.p);
  ASSERT_EQ(cudaSuccess, wt_sync());
  std::vector<int64_t> h = r.get();
  ASSERT_EQ(0, h[0]) << "gmmap(PROT_READ)" << wt_err(h[0]);
  EXPECT_EQ(0, h[1]) << "mapped bytes that differ from the file";
  std::vector<uint8_t> m = wt_pattern(S, MI_FILE_SEED);
  /* the writable descriptor dirties page 1 (grains 0, 1) and page 2 */
  wt_dmem<int64_t> w(1, 0x7f);
  mi_write<<<1, 128>>>(wfd, (int64_t)P, 2 * G, src.p, w.p);
  ASSERT_EQ(cudaSuccess, wt_sync());
  EXPECT_EQ((int64_t)(2 * G), w.get()[0]) << "gwrite on the mapped page" << wt_err(w.get()[0]);
  mi_write<<<1, 128>>>(wfd, (int64_t)(2 * P + 100), 500, src.p, w.p);
  ASSERT_EQ(cudaSuccess, wt_sync());
  EXPECT_EQ(500, w.get()[0]) << "gwrite on page 2" << wt_err(w.get()[0]);
  wt_put(m, P, 2 * G, MI_GPU_SEED);
  wt_put(m, 2 * P + 100, 500, MI_GPU_SEED);
  /* the CPU rewrites the mapped grains */
  const uint64_t clo = P + 4 * G, clen = 6 * G;
  wt_put(m, clo, clen, MI_CPU_SEED);
  ASSERT_TRUE(wt_host_pwrite(f, m, clo, clen));
  if (msync) {
    mi_release<<<1, 128>>>(ptr.p, len, true, w.p);
    ASSERT_EQ(cudaSuccess, wt_sync());
    EXPECT_EQ(0, w.get()[0]) << "gmsync(MS_SYNC) of a read-only mapping" << wt_err(w.get()[0]);
    EXPECT_TRUE(mi_range_is(f, m, clo, clen)) << "after gmsync: the CPU's bytes";
  }
  mi_release<<<1, 128>>>(ptr.p, len, false, w.p);
  ASSERT_EQ(cudaSuccess, wt_sync());
  EXPECT_EQ(0, w.get()[0]) << "gmunmap" << wt_err(w.get()[0]);
  EXPECT_TRUE(mi_range_is(f, m, clo, clen)) << "after gmunmap: the CPU's bytes";
  if (mfd != wfd) {
    EXPECT_EQ(0, wt_gclose_h(mfd)) << "gclose O_RDONLY";
    EXPECT_TRUE(mi_range_is(f, m, clo, clen)) << "after the read-only gclose: the CPU's bytes";
  }
  EXPECT_EQ(0, wt_gclose_h(wfd)) << "gclose O_RDWR";
  EXPECT_TRUE(wt_file_is(f, m)) << "after the last gclose: the GPU's gwrites, the CPU's bytes where mapped";
}

INSTANTIATE_TEST_SUITE_P(Kinds, ReadOnlyMappingTest,
                         ::testing::Combine(::testing::Range(0, (int)MI_NKINDS), ::testing::Bool()),
                         [](const ::testing::TestParamInfo<ReadOnlyMappingTest::ParamType> &i) {
                           return std::string(mi_kind_names[std::get<0>(i.param)]) +
                                  (std::get<1>(i.param) ? "_msync" : "_unmap");
                         });

/* ---- stores through a writable mapping outlive its descriptor's gclose ---- */

class WritableMappingTest : public MappingIdentityBase {};

/* One block: map for writing, store, gclose, gmunmap, gclose again:
 * r[0] gmmap's error or 0, r[1..3] the calls. */
static __global__ void mi_store_close_unmap(int fd, int64_t off, uint64_t len, const uint8_t *src, int64_t *r)
{
  void *p = gmmap(NULL, len, GPUFS_PROT_READ | GPUFS_PROT_WRITE, GPUFS_MAP_SHARED, fd, off);
  if (GPUFS_MAP_FAILED(p)) {
    if (threadIdx.x == 0) r[0] = GPUFS_MAP_ERRNO(p);
    return;
  }
  for (uint64_t i = threadIdx.x; i < len; i += blockDim.x) ((uint8_t *)p)[i] = src[off + i];
  int c = gclose(fd);
  int u = gmunmap(p, len);
  int c2 = gclose(fd);
  if (threadIdx.x == 0) {
    r[0] = 0;
    r[1] = c;
    r[2] = u;
    r[3] = c2;
  }
}

/* Today: the gclose is the last and finds nothing dirty, the gmunmap finds
 * no writable descriptor and marks nothing: the file check fails (the
 * stored bytes never reach the file), while the reopen still reads them
 * from the cache. */
TEST_F(WritableMappingTest, StoresAfterCloseReachTheFile)
{
  const uint64_t P = MI_PAGE, G = GPUFS_DIRTY_GRAIN, S = 3 * P + 500;
  const int64_t off = (int64_t)(P + 2 * G + 5);
  const uint64_t len = 3 * G + 7;
  std::string f = dir.make("x", S, MI_FILE_SEED);
  wt_src src(S, MI_GPU_SEED);
  int fd = wt_gopen_h(f, GPUFS_O_RDWR);
  ASSERT_GE(fd, 0) << wt_err(fd);
  wt_dmem<int64_t> r(4, 0x7f);
  mi_store_close_unmap<<<1, 128>>>(fd, off, len, src.p, r.p);
  ASSERT_EQ(cudaSuccess, wt_sync());
  std::vector<int64_t> h = r.get();
  ASSERT_EQ(0, h[0]) << "gmmap(PROT_WRITE)" << wt_err(h[0]);
  EXPECT_EQ(0, h[1]) << "gclose with the mapping alive" << wt_err(h[1]);
  EXPECT_EQ(0, h[2]) << "gmunmap after the gclose" << wt_err(h[2]);
  EXPECT_EQ(-GPUFS_EBADF, h[3]) << "gclose again: the gmunmap closed the descriptor" << wt_err(h[3]);
  std::vector<uint8_t> m = wt_pattern(S, MI_FILE_SEED);
  wt_put(m, (uint64_t)off, len, MI_GPU_SEED);
  EXPECT_TRUE(wt_file_is(f, m)) << "the stored bytes reach the file";
  reopen_agrees(f, m);
}

/* Each warp of one block maps one range for writing and stores the
 * pattern into it; ptrs[w] its mapping, r[w] 0 or gmmap's error. */
static __global__ void mi_map_store_warps(int fd, const int64_t *offs, const uint64_t *lens, const uint8_t *src,
                                          void **ptrs, int64_t *r)
{
  const int w = threadIdx.x / 32, lane = threadIdx.x % 32;
  void *p = gmmap_warp(NULL, lens[w], GPUFS_PROT_READ | GPUFS_PROT_WRITE, GPUFS_MAP_SHARED, fd, offs[w]);
  if (GPUFS_MAP_FAILED(p)) {
    if (lane == 0) r[w] = GPUFS_MAP_ERRNO(p);
    return;
  }
  for (uint64_t i = lane; i < lens[w]; i += 32) ((uint8_t *)p)[i] = src[offs[w] + i];
  if (lane == 0) {
    r[w] = 0;
    ptrs[w] = p;
  }
}

/* gmunmap_warp of mapping k by one warp. */
static __global__ void mi_unmap_warp(void *const *ptrs, const uint64_t *lens, int k, int64_t *r)
{
  int u = gmunmap_warp(ptrs[k], lens[k]);
  if (threadIdx.x == 0) *r = u;
}

/* Two warp-level mappings on pages 0 and 2; the descriptor's gclose from
 * another kernel comes before both gmunmaps, each in its own kernel: the
 * last gmunmap writes both ranges back.
 * Today: as above, the file check fails: neither range reaches the file. */
TEST_F(WritableMappingTest, StoresAfterCloseAcrossKernelsReachTheFile)
{
  const uint64_t P = MI_PAGE, S = 3 * P + 500;
  const std::vector<int64_t> offs = {100, (int64_t)(2 * P + 1000)};
  const std::vector<uint64_t> lens = {200, 1500};
  std::string f = dir.make("x", S, MI_FILE_SEED);
  wt_src src(S, MI_GPU_SEED);
  int fd = wt_gopen_h(f, GPUFS_O_RDWR);
  ASSERT_GE(fd, 0) << wt_err(fd);
  wt_dmem<int64_t> doffs(2), r(2, 0x7f);
  wt_dmem<uint64_t> dlens(2);
  wt_dmem<void *> ptrs(2);
  ASSERT_EQ(cudaSuccess, cudaMemcpy(doffs.p, offs.data(), 2 * sizeof(int64_t), cudaMemcpyHostToDevice));
  ASSERT_EQ(cudaSuccess, cudaMemcpy(dlens.p, lens.data(), 2 * sizeof(uint64_t), cudaMemcpyHostToDevice));
  mi_map_store_warps<<<1, 64>>>(fd, doffs.p, dlens.p, src.p, ptrs.p, r.p);
  ASSERT_EQ(cudaSuccess, wt_sync());
  std::vector<int64_t> h = r.get();
  ASSERT_EQ(0, h[0]) << "gmmap_warp(PROT_WRITE) on page 0" << wt_err(h[0]);
  ASSERT_EQ(0, h[1]) << "gmmap_warp(PROT_WRITE) on page 2" << wt_err(h[1]);
  EXPECT_EQ(0, wt_gclose_h(fd)) << "gclose with both mappings alive";
  for (int k = 0; k < 2; k++) {
    r.set(0x7f);
    mi_unmap_warp<<<1, 32>>>(ptrs.p, dlens.p, k, r.p);
    ASSERT_EQ(cudaSuccess, wt_sync());
    EXPECT_EQ(0, r.get()[0]) << "gmunmap_warp of mapping " << k << wt_err(r.get()[0]);
  }
  std::vector<uint8_t> m = wt_pattern(S, MI_FILE_SEED);
  for (int k = 0; k < 2; k++) wt_put(m, (uint64_t)offs[k], lens[k], MI_GPU_SEED);
  EXPECT_TRUE(wt_file_is(f, m)) << "both mapped ranges reach the file";
  EXPECT_EQ(-GPUFS_EBADF, wt_gclose_h(fd)) << "the last gmunmap closed the descriptor";
  reopen_agrees(f, m);
}

/* Two writable mappings stored through and never unmapped, their
 * descriptor closed: gpufs_sync writes both ranges back (as gmsync would),
 * and gpufs_stop then finds nothing dirty.  With one mapping left, the
 * same through gpufs_stop alone: it drops no store. */
TEST_F(WritableMappingTest, SyncAndStopWriteLiveMappings)
{
  const uint64_t P = MI_PAGE, S = 3 * P + 500;
  const std::vector<int64_t> offs = {64 * 3 + 1, (int64_t)(2 * P + 700)};
  const std::vector<uint64_t> lens = {333, 2000};
  std::string f = dir.make("x", S, MI_FILE_SEED);
  wt_src src(S, MI_GPU_SEED);
  int fd = wt_gopen_h(f, GPUFS_O_RDWR);
  ASSERT_GE(fd, 0) << wt_err(fd);
  wt_dmem<int64_t> doffs(2), r(2, 0x7f);
  wt_dmem<uint64_t> dlens(2);
  wt_dmem<void *> ptrs(2);
  ASSERT_EQ(cudaSuccess, cudaMemcpy(doffs.p, offs.data(), 2 * sizeof(int64_t), cudaMemcpyHostToDevice));
  ASSERT_EQ(cudaSuccess, cudaMemcpy(dlens.p, lens.data(), 2 * sizeof(uint64_t), cudaMemcpyHostToDevice));
  mi_map_store_warps<<<1, 64>>>(fd, doffs.p, dlens.p, src.p, ptrs.p, r.p);
  ASSERT_EQ(cudaSuccess, wt_sync());
  ASSERT_EQ(0, r.get()[0]) << wt_err(r.get()[0]);
  ASSERT_EQ(0, r.get()[1]) << wt_err(r.get()[1]);
  EXPECT_EQ(0, wt_gclose_h(fd)) << "gclose with both mappings alive";
  std::vector<uint8_t> m = wt_pattern(S, MI_FILE_SEED);
  wt_put(m, (uint64_t)offs[0], lens[0], MI_GPU_SEED);
  EXPECT_FALSE(wt_file_is(f, m)) << "nothing is written before a sync";
  EXPECT_EQ(0, gpufs_sync());
  wt_put(m, (uint64_t)offs[1], lens[1], MI_GPU_SEED);
  EXPECT_TRUE(wt_file_is(f, m)) << "gpufs_sync writes the live mappings' ranges";
  /* mapping 0 ends; mapping 1 is stored again and never unmapped:
   * gpufs_stop writes it */
  mi_unmap_warp<<<1, 32>>>(ptrs.p, dlens.p, 0, r.p);
  ASSERT_EQ(cudaSuccess, wt_sync());
  EXPECT_EQ(0, r.get()[0]) << "gmunmap of mapping 0" << wt_err(r.get()[0]);
  std::vector<uint8_t> bytes(lens[1]);
  for (uint64_t i = 0; i < lens[1]; i++) bytes[i] = tpat(MI_CPU_SEED, (uint64_t)offs[1] + i);
  void *p1 = ptrs.get()[1];
  ASSERT_EQ(cudaSuccess, cudaMemcpy(p1, bytes.data(), lens[1], cudaMemcpyHostToDevice))
      << "store through the live mapping (from the host, between kernels)";
  EXPECT_EQ(0, gpufs_stop()) << gpufs_error_detail();
  started = false;
  wt_put(m, (uint64_t)offs[1], lens[1], MI_CPU_SEED);
  EXPECT_TRUE(wt_file_is(f, m)) << "gpufs_stop writes the range of a mapping never unmapped";
}
