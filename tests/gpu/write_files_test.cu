/*
 * write_files_test.cu - the write path's file operations, for both page
 * sizes and transfer paths (WriteTest, write_util.cuh; instantiated in
 * write_test.cu): gftruncate shrinking and growing a file with dirty pages,
 * close-to-open consistency with the host's changes between two gopens,
 * gunlink and re-create.  Every byte is compared with what the host file
 * must hold.
 */
#include "tests/gpu/write_util.cuh"

/* ---- 6: gftruncate ---- */

/* Read everything, dirty bytes before and after l1, shrink to l1, read. */
__global__ void wt_trunc_shrink(int fd, uint32_t page, uint64_t s0, int64_t l1, const uint8_t *src,
                                uint8_t *out_a, uint8_t *out_b, uint8_t *scratch, int64_t *r)
{
  int64_t v[6];
  v[0] = gread(fd, 0, s0, out_a);
  v[1] = gwrite(fd, 100, 200, src + 100);
  v[2] = gwrite(fd, 2 * (int64_t)page + 10, 200, src + 2 * (uint64_t)page + 10);
  v[3] = gftruncate(fd, l1);
  v[4] = gread(fd, 0, s0, out_b);
  v[5] = gread(fd, l1, 10, scratch);
  if (threadIdx.x == 0)
    for (int i = 0; i < 6; i++) r[i] = v[i];
}

/* Grow to l2 and read. */
__global__ void wt_trunc_grow(int fd, uint64_t s0, int64_t l2, uint8_t *out_c, uint8_t *scratch, int64_t *r)
{
  int64_t v[3];
  v[0] = gftruncate(fd, l2);
  v[1] = gread(fd, 0, s0, out_c);
  v[2] = gread(fd, l2, 10, scratch);
  if (threadIdx.x == 0)
    for (int i = 0; i < 3; i++) r[i] = v[i];
}

TEST_P(WriteTest, TruncateShrinksAndGrows)
{
  const uint64_t s0 = 5ull * page + 300, l1 = page + 777, l2 = 3ull * page + 5;
  std::string f = dir.make("trunc", s0, 61);
  start(256ull * page);
  wt_src src(s0, 62);
  wt_dmem<uint8_t> oa(s0, 0xa5), ob(s0, 0xa5), oc(s0, 0xa5), scratch(64);
  wt_dmem<int64_t> r(6, 0x7f);
  int fd = wt_gopen_h(f, GPUFS_O_RDWR);
  ASSERT_GE(fd, 0) << wt_err(fd);
  /* model1: the old bytes up to l1 with the dirty bytes at 100; the dirty
   * bytes at 2 pages + 10 are cut off */
  std::vector<uint8_t> model = wt_pattern(s0, 61);
  std::vector<uint8_t> model1 = model;
  wt_put(model1, 100, 200, 62);
  model1.resize(l1);
  wt_trunc_shrink<<<1, 128>>>(fd, page, s0, (int64_t)l1, src.p, oa.p, ob.p, scratch.p, r.p);
  ASSERT_EQ(cudaSuccess, wt_sync());
  std::vector<int64_t> h = r.get();
  EXPECT_EQ((int64_t)s0, h[0]) << "gread before" << wt_err(h[0]);
  EXPECT_EQ(200, h[1]) << "gwrite below the new length" << wt_err(h[1]);
  EXPECT_EQ(200, h[2]) << "gwrite above it" << wt_err(h[2]);
  EXPECT_EQ(0, h[3]) << "gftruncate(shrink)" << wt_err(h[3]);
  EXPECT_EQ((int64_t)l1, h[4]) << "gread after shrinking: short at the new length" << wt_err(h[4]);
  EXPECT_EQ(0, h[5]) << "gread at the new length";
  EXPECT_TRUE(wt_bytes_eq(model.data(), oa.get().data(), s0)) << "gread before";
  EXPECT_TRUE(wt_bytes_eq(model1.data(), ob.get().data(), l1)) << "gread after shrinking";
  EXPECT_TRUE(wt_file_is(f, model1)) << "host file after shrinking: the dirty bytes below the length written";
  /* model2: model1 and zeros up to l2; the cached old pages are stale */
  std::vector<uint8_t> model2 = model1;
  model2.resize(l2, 0);
  r.set(0x7f);
  wt_trunc_grow<<<1, 128>>>(fd, s0, (int64_t)l2, oc.p, scratch.p, r.p);
  ASSERT_EQ(cudaSuccess, wt_sync());
  h = r.get();
  EXPECT_EQ(0, h[0]) << "gftruncate(grow)" << wt_err(h[0]);
  EXPECT_EQ((int64_t)l2, h[1]) << "gread after growing" << wt_err(h[1]);
  EXPECT_EQ(0, h[2]) << "gread at the new length";
  EXPECT_TRUE(wt_bytes_eq(model2.data(), oc.get().data(), l2)) << "gread after growing: new bytes are zeros";
  EXPECT_TRUE(wt_file_is(f, model2)) << "host file after growing";
  EXPECT_EQ(0, wt_gclose_h(fd));
  EXPECT_TRUE(wt_file_is(f, model2)) << "host file after gclose";
}

/* ---- 7: close-to-open: the host's changes between two gopens ---- */

__global__ void wt_open_read_close(const char *path, int flags, uint64_t ask, uint8_t *out, int64_t *r)
{
  int64_t v[3] = {0, 0, 0};
  int fd = gopen(path, flags);
  v[0] = fd;
  if (fd >= 0) {
    v[1] = gread(fd, 0, ask, out);
    v[2] = gclose(fd);
  }
  if (threadIdx.x == 0)
    for (int i = 0; i < 3; i++) r[i] = v[i];
}

__global__ void wt_open_write_close(const char *path, int flags, int64_t off, uint64_t len,
                                    const uint8_t *src, int64_t *r)
{
  int64_t v[3] = {0, 0, 0};
  int fd = gopen(path, flags);
  v[0] = fd;
  if (fd >= 0) {
    v[1] = gwrite(fd, off, len, src + off);
    v[2] = gclose(fd);
  }
  if (threadIdx.x == 0)
    for (int i = 0; i < 3; i++) r[i] = v[i];
}

TEST_P(WriteTest, CloseToOpenSeesHostChanges)
{
  const uint64_t sa = 3ull * page + 11, sb = 2ull * page + 999, ask = sa + 100;
  std::string f = dir.make("c2o", sa, 71);
  start(256ull * page);
  dpath dp(f);
  wt_dmem<uint8_t> out(ask);
  wt_dmem<int64_t> r(3, 0x7f);
  auto read_pass = [&](int flags, const std::vector<uint8_t> &model, const char *what) {
    out.set(0xa5);
    r.set(0x7f);
    wt_open_read_close<<<1, 128>>>(dp.d, flags, ask, out.p, r.p);
    ASSERT_EQ(cudaSuccess, wt_sync());
    std::vector<int64_t> h = r.get();
    ASSERT_GE(h[0], 0) << what << ": gopen" << wt_err(h[0]);
    EXPECT_EQ((int64_t)model.size(), h[1]) << what << ": gread returns the size at this open" << wt_err(h[1]);
    EXPECT_EQ(0, h[2]) << what << ": gclose" << wt_err(h[2]);
    EXPECT_TRUE(wt_bytes_eq(model.data(), out.get().data(), model.size())) << what;
  };
  read_pass(GPUFS_O_RDONLY, wt_pattern(sa, 71), "first open");
  /* other content, another size */
  std::vector<uint8_t> mb = wt_pattern(sb, 72);
  ASSERT_TRUE(wt_host_rewrite(f, mb));
  read_pass(GPUFS_O_RDONLY, mb, "after the host rewrote it shorter");
  /* other content, the same size; an mtime that surely differs */
  std::vector<uint8_t> mc = wt_pattern(sb, 73);
  ASSERT_TRUE(wt_host_rewrite(f, mc));
  ASSERT_TRUE(wt_bump_mtime(f, 1));
  read_pass(GPUFS_O_RDONLY, mc, "after the host rewrote it, same size");
  /* the GPU writes and closes, then the host changes other bytes */
  wt_src sd(sb, 74);
  r.set(0x7f);
  wt_open_write_close<<<1, 128>>>(dp.d, GPUFS_O_RDWR, 100, 192, sd.p, r.p);
  ASSERT_EQ(cudaSuccess, wt_sync());
  std::vector<int64_t> h = r.get();
  ASSERT_GE(h[0], 0) << "gopen O_RDWR" << wt_err(h[0]);
  EXPECT_EQ(192, h[1]) << "gwrite" << wt_err(h[1]);
  EXPECT_EQ(0, h[2]) << "gclose" << wt_err(h[2]);
  wt_put(mc, 100, 192, 74);
  EXPECT_TRUE(wt_file_is(f, mc)) << "the GPU's write after gclose";
  wt_put(mc, 1000, 100, 75);
  ASSERT_TRUE(wt_host_pwrite(f, mc, 1000, 100));
  ASSERT_TRUE(wt_bump_mtime(f, 2));
  read_pass(GPUFS_O_RDWR, mc, "after the host changed a file the GPU had written");
}

/* ---- 8: gunlink ---- */

/* Open, unlink, read, write, read, unlink again, close. */
__global__ void wt_unlink_open(const char *path, uint64_t s, const uint8_t *src, uint8_t *oa, uint8_t *ob,
                               int64_t *r)
{
  int64_t v[7] = {0, 0, 0, 0, 0, 0, 0};
  int fd = gopen(path, GPUFS_O_RDWR);
  v[0] = fd;
  if (fd >= 0) {
    v[1] = gunlink(path);
    v[2] = gread(fd, 0, s + 10, oa);
    v[3] = gwrite(fd, 10, 100, src + 10);
    v[4] = gread(fd, 0, s + 10, ob);
    v[5] = gunlink(path);
    v[6] = gclose(fd);
  }
  if (threadIdx.x == 0)
    for (int i = 0; i < 7; i++) r[i] = v[i];
}

/* Unlink, create anew on the GPU, read (empty), write, read, close. */
__global__ void wt_unlink_create(const char *path, uint64_t len, const uint8_t *src, uint8_t *out, int64_t *r)
{
  int64_t v[6] = {0, 0, 0, 0, 0, 0};
  v[0] = gunlink(path);
  int fd = gopen(path, GPUFS_O_RDWR | GPUFS_O_CREAT | GPUFS_O_EXCL, 0644);
  v[1] = fd;
  if (fd >= 0) {
    v[2] = gread(fd, 0, 100, out);
    v[3] = gwrite(fd, 0, len, src);
    v[4] = gread(fd, 0, len + 10, out);
    v[5] = gclose(fd);
  }
  if (threadIdx.x == 0)
    for (int i = 0; i < 6; i++) r[i] = v[i];
}

TEST_P(WriteTest, UnlinkAndRecreate)
{
  const uint64_t s = 2ull * page + 33;
  std::string f = dir.make("unl", s, 81);
  start(256ull * page);
  dpath dp(f);
  wt_src sb(s, 82);
  wt_dmem<uint8_t> oa(s + 10, 0xa5), ob(s + 10, 0xa5);
  wt_dmem<int64_t> r(7, 0x7f);
  wt_unlink_open<<<1, 128>>>(dp.d, s, sb.p, oa.p, ob.p, r.p);
  ASSERT_EQ(cudaSuccess, wt_sync());
  std::vector<int64_t> h = r.get();
  ASSERT_GE(h[0], 0) << "gopen" << wt_err(h[0]);
  EXPECT_EQ(0, h[1]) << "gunlink" << wt_err(h[1]);
  EXPECT_EQ((int64_t)s, h[2]) << "gread of the unlinked file" << wt_err(h[2]);
  EXPECT_EQ(100, h[3]) << "gwrite to the unlinked file" << wt_err(h[3]);
  EXPECT_EQ((int64_t)s, h[4]) << "gread after it" << wt_err(h[4]);
  EXPECT_EQ(-GPUFS_ENOENT, h[5]) << "second gunlink" << wt_err(h[5]);
  EXPECT_EQ(0, h[6]) << "gclose" << wt_err(h[6]);
  std::vector<uint8_t> ma = wt_pattern(s, 81);
  EXPECT_TRUE(wt_bytes_eq(ma.data(), oa.get().data(), s)) << "the unlinked file stays readable";
  wt_put(ma, 10, 100, 82);
  EXPECT_TRUE(wt_bytes_eq(ma.data(), ob.get().data(), s)) << "and writable";
  struct stat st;
  int stat_rc = stat(f.c_str(), &st), stat_errno = errno;
  EXPECT_EQ(-1, stat_rc) << "the name is gone on the host";
  EXPECT_EQ(ENOENT, stat_errno);
  /* the host creates a new file under the name, of the same size */
  std::vector<uint8_t> mc = wt_pattern(s, 83);
  ASSERT_TRUE(wt_host_rewrite(f, mc));
  wt_dmem<uint8_t> oc(s + 10, 0xa5);
  r.set(0x7f);
  wt_open_read_close<<<1, 128>>>(dp.d, GPUFS_O_RDONLY, s + 10, oc.p, r.p);
  ASSERT_EQ(cudaSuccess, wt_sync());
  h = r.get();
  ASSERT_GE(h[0], 0) << "gopen of the new file" << wt_err(h[0]);
  EXPECT_EQ((int64_t)s, h[1]) << wt_err(h[1]);
  EXPECT_EQ(0, h[2]);
  EXPECT_TRUE(wt_bytes_eq(mc.data(), oc.get().data(), s)) << "the new file's bytes, not the old cached pages";
  /* the GPU unlinks it and creates a new one itself */
  const uint64_t len = page + 100;
  wt_src sd(len, 84);
  wt_dmem<uint8_t> od(len + 10, 0xa5);
  r.set(0x7f);
  wt_unlink_create<<<1, 128>>>(dp.d, len, sd.p, od.p, r.p);
  ASSERT_EQ(cudaSuccess, wt_sync());
  h = r.get();
  EXPECT_EQ(0, h[0]) << "gunlink" << wt_err(h[0]);
  ASSERT_GE(h[1], 0) << "gopen O_CREAT|O_EXCL after gunlink" << wt_err(h[1]);
  EXPECT_EQ(0, h[2]) << "gread of the new, empty file" << wt_err(h[2]);
  EXPECT_EQ((int64_t)len, h[3]) << "gwrite" << wt_err(h[3]);
  EXPECT_EQ((int64_t)len, h[4]) << "gread" << wt_err(h[4]);
  EXPECT_EQ(0, h[5]) << "gclose" << wt_err(h[5]);
  std::vector<uint8_t> md = wt_pattern(len, 84);
  EXPECT_TRUE(wt_bytes_eq(md.data(), od.get().data(), len));
  EXPECT_TRUE(wt_file_is(f, md));
}
