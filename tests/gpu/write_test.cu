/*
 * write_test.cu - the write path: gwrite / gwrite_warp, gfsync, gftruncate,
 * gunlink, creating opens, gmmap(PROT_WRITE), gpufs_sync and gpufs_stop
 * write-back.  Every byte the GPU wrote, and every byte around it, is
 * compared with what the host file must hold (read back with a host fd):
 * many groups writing disjoint odd ranges of one file, the CPU and the GPU
 * writing alternating grains of the same cached pages, a file 8x the cache
 * of dirty pages, reads of one's own writes, writable mappings, write-back
 * at gpufs_sync and gpufs_stop, write-only descriptors.  Truncation,
 * close-to-open consistency, unlink and re-create: write_files_test.cu.
 * Bad inputs and a disk that fails writes or fsyncs: write_errors_test.cu.
 * The parameterized suite (WriteTest, write_util.cuh) is instantiated here
 * for both files.
 */
#include "tests/gpu/write_util.cuh"


/* ---- 1, 2: many groups write disjoint odd ranges of one new file ---- */

struct wt_range {
  int64_t off;
  uint64_t len;
};

/* Every group opens path (sharing the descriptor the host holds), writes
 * ranges g, g + ngroups, ... and closes. */
__global__ void wt_open_write_ranges(const char *path, int flags, const wt_range *rs, int nr,
                                     const uint8_t *src, int64_t *opens, int64_t *closes,
                                     int64_t *ret, bool warp)
{
  const int g = wt_group(warp), ng = wt_ngroups(warp);
  const bool lead = wt_rank(warp) == 0;
  int fd = wt_open(warp, path, flags, 0644);
  if (lead) opens[g] = fd;
  if (fd < 0) return;
  for (int i = g; i < nr; i += ng) {
    ssize_t w = wt_write(warp, fd, rs[i].off, rs[i].len, src + rs[i].off);
    if (lead) ret[i] = w;
  }
  int c = wt_close(warp, fd);
  if (lead) closes[g] = c;
}

void WriteTest::disjoint_ranges(bool warp)
{
  start(64ull << 20);
  /* Ranges in file order, assigned round robin, so neighbours (often in
   * one grain, always several to a 64 KiB page) belong to different groups;
   * gaps of 0 to 149 bytes stay zero. */
  std::mt19937_64 rng(1234 + page + (warp ? 1 : 0));
  const int nr = 512;
  std::vector<wt_range> rs(nr);
  uint64_t pos = 0;
  for (auto &r : rs) {
    pos += rng() % 4 == 0 ? 0 : rng() % 150;
    uint64_t len = rng() % 8 == 0 ? 1 + rng() % (page + page / 2 + 500) : 1 + rng() % 700;
    r = {(int64_t)pos, len};
    pos += len;
  }
  const uint64_t end = pos;
  /* An older, longer file under the name: O_TRUNC must drop all of it. */
  std::string f = dir.make("ranges", end + 3ull * page + 77, 99);
  std::vector<uint8_t> model(end, 0);
  for (auto &r : rs) wt_put(model, (uint64_t)r.off, r.len, 5);
  wt_src src(end, 5);
  wt_dmem<wt_range> drs(nr);
  ASSERT_EQ(cudaSuccess, cudaMemcpy(drs.p, rs.data(), nr * sizeof(wt_range), cudaMemcpyHostToDevice));
  const unsigned blocks = warp ? 16 : 64, threads = 256;
  const int ng = warp ? (int)(blocks * threads / 32) : (int)blocks;
  wt_dmem<int64_t> opens(ng, 0x7f), closes(ng, 0x7f), ret(nr, 0x7f);
  dpath dp(f);
  /* O_TRUNC cuts the file at every gopen that asks for it: once here; the
   * groups open it without O_TRUNC.  Held, so every group shares one host
   * open. */
  int fd0 = wt_gopen_h(f, WT_RW_NEW);
  ASSERT_GE(fd0, 0) << wt_err(fd0);
  int fd = wt_gopen_h(f, GPUFS_O_RDWR);
  ASSERT_GE(fd, 0) << wt_err(fd);
  wt_open_write_ranges<<<blocks, threads>>>(dp.d, GPUFS_O_RDWR, drs.p, nr, src.p, opens.p, closes.p,
                                            ret.p, warp);
  ASSERT_EQ(cudaSuccess, wt_sync());
  std::vector<int64_t> ho = opens.get(), hc = closes.get(), hr = ret.get();
  for (int g = 0; g < ng; g++) {
    EXPECT_EQ(fd, ho[g]) << "gopen of group " << g << wt_err(ho[g]);
    EXPECT_EQ(0, hc[g]) << "gclose of group " << g << wt_err(hc[g]);
  }
  for (int i = 0; i < nr; i++)
    EXPECT_EQ((int64_t)rs[i].len, hr[i]) << "gwrite of range " << i << " at " << rs[i].off << wt_err(hr[i]);
  EXPECT_EQ(0, wt_gclose_h(fd)) << "the last gclose of the groups' descriptor";
  EXPECT_EQ(0, wt_gclose_h(fd0)) << "the last gclose";
  EXPECT_TRUE(wt_file_is(f, model)) << "size must be the highest end, " << end;
}

TEST_P(WriteTest, DisjointRangesManyBlocks) { disjoint_ranges(false); }
TEST_P(WriteTest, DisjointRangesManyWarps) { disjoint_ranges(true); }

/* ---- 3: the CPU and the GPU write alternating grains of cached pages ---- */

__global__ void wt_read_k(int fd, int64_t off, uint64_t len, uint8_t *out, int64_t *r)
{
  ssize_t n = gread(fd, off, len, out);
  if (threadIdx.x == 0) *r = n;
}

/* Block b writes the even grains of page b, one gwrite each (grains with
 * index % 4 == 2 only in part: bytes [5, 50)), then gfsyncs.  r[3b]:
 * gwrites that did not return their size, r[3b+1]: the first such result,
 * r[3b+2]: gfsync. */
__global__ void wt_even_grains(int fd, uint64_t fsize, uint32_t page, const uint8_t *src, int64_t *r)
{
  const uint64_t G = GPUFS_DIRTY_GRAIN;
  uint64_t lo = (uint64_t)blockIdx.x * page, hi = lo + page < fsize ? lo + page : fsize;
  int64_t wrong = 0, first = 0;
  for (uint64_t off = lo; off < hi; off += 2 * G) {
    uint64_t a = off, n = hi - off < G ? hi - off : G;
    if ((off / G) % 4 == 2) {
      a = off + 5;
      n = 45;
    }
    ssize_t w = gwrite(fd, (int64_t)a, n, src + a);
    if (w != (ssize_t)n) {
      if (wrong == 0) first = w;
      wrong++;
    }
  }
  int s = gfsync(fd);
  if (threadIdx.x == 0) {
    r[3 * blockIdx.x] = wrong;
    r[3 * blockIdx.x + 1] = first;
    r[3 * blockIdx.x + 2] = s;
  }
}

TEST_P(WriteTest, CpuAndGpuWriteAlternatingGrains)
{
  const uint64_t G = GPUFS_DIRTY_GRAIN;
  const uint64_t fsize = 8ull * page + 10 * G;
  const unsigned npages = (unsigned)((fsize + page - 1) / page);
  std::string f = dir.make("grains", fsize, 31);
  start(256ull * page);
  int fd = wt_gopen_h(f, GPUFS_O_RDWR);
  ASSERT_GE(fd, 0) << wt_err(fd);
  /* the GPU caches every page as it is before the CPU writes */
  wt_dmem<uint8_t> out(fsize);
  wt_dmem<int64_t> r1(1, 0x7f);
  wt_read_k<<<1, 256>>>(fd, 0, fsize, out.p, r1.p);
  ASSERT_EQ(cudaSuccess, wt_sync());
  ASSERT_EQ((int64_t)fsize, r1.get()[0]) << "gread of the whole file" << wt_err(r1.get()[0]);
  std::vector<uint8_t> model = wt_pattern(fsize, 31);
  ASSERT_TRUE(wt_bytes_eq(model.data(), out.get().data(), fsize)) << "the file as first read";
  /* the CPU writes the odd grains (seed 32) */
  for (uint64_t off = G; off < fsize; off += 2 * G) wt_put(model, off, G, 32);
  {
    int hfd = open(f.c_str(), O_WRONLY);
    ASSERT_GE(hfd, 0);
    for (uint64_t off = G; off < fsize; off += 2 * G)
      ASSERT_EQ((ssize_t)G, pwrite(hfd, model.data() + off, G, (off_t)off));
    ASSERT_EQ(0, close(hfd));
  }
  /* the GPU writes the even ones (seed 33) into its cached pages */
  for (uint64_t off = 0; off < fsize; off += 2 * G) {
    if ((off / G) % 4 == 2) wt_put(model, off + 5, 45, 33);
    else wt_put(model, off, G, 33);
  }
  wt_src src(fsize, 33);
  wt_dmem<int64_t> r(3 * npages, 0x7f);
  wt_even_grains<<<npages, 128>>>(fd, fsize, page, src.p, r.p);
  ASSERT_EQ(cudaSuccess, wt_sync());
  std::vector<int64_t> h = r.get();
  for (unsigned b = 0; b < npages; b++) {
    EXPECT_EQ(0, h[3 * b]) << "page " << b << ": gwrites that failed, the first returned " << h[3 * b + 1]
                           << wt_err(h[3 * b + 1]);
    EXPECT_EQ(0, h[3 * b + 2]) << "gfsync of block " << b << wt_err(h[3 * b + 2]);
  }
  EXPECT_TRUE(wt_file_is(f, model)) << "after gfsync: even grains the GPU's, odd grains the CPU's";
  EXPECT_EQ(0, wt_gclose_h(fd));
  EXPECT_TRUE(wt_file_is(f, model)) << "after gclose";
}

/* ---- 4: a new file 8x the cache, dirty pages only ---- */

TEST_P(WriteTest, FileGrowsPastTheCache)
{
  const uint64_t cache = std::max<uint64_t>(2ull << 20, 64ull * page);
  const uint64_t fsize = (16ull << 20) + 12345;
  start(cache, 4);
  std::string f = newpath("big");
  wt_src src(fsize, 41);
  int fd = wt_gopen_h(f, WT_RW_NEW);
  ASSERT_GE(fd, 0) << wt_err(fd);
  /* 16 blocks, gwrites of 3 pages of 4 KiB and 123 bytes: page and grain
   * boundaries fall inside calls and between the blocks' shares */
  wt_stream(fd, fsize, src, 16, 3 * 4096 + 123);
  struct gpufs_stats st;
  ASSERT_EQ(0, gpufs_get_stats(&st));
  EXPECT_TRUE(st.cleanings > 0 || st.writebacks > 0)
      << "16 MiB of dirty pages cannot stay in a cache of " << cache << " bytes";
  EXPECT_GE(st.bytes_written, fsize - cache) << "only the cache can hold unwritten bytes";
  EXPECT_LE(st.dirty, cache / page);
  EXPECT_EQ(0, wt_gclose_h(fd));
  ASSERT_EQ(0, gpufs_get_stats(&st));
  EXPECT_EQ(0ull, (unsigned long long)st.dirty) << "after the last gclose";
  EXPECT_GT(st.writebacks, 0ull);
  EXPECT_GE(st.bytes_written, fsize);
  EXPECT_TRUE(wt_file_is(f, wt_pattern(fsize, 41)));
}

/* ---- 5: read your own writes ---- */

/* One group: r[] as listed; out1..out3 the greads' bytes. */
__global__ void wt_rw_own(const char *path, uint32_t page, uint64_t s0, const uint8_t *src,
                          uint8_t *out1, uint8_t *out2, uint8_t *out3, int64_t *r, bool warp)
{
  const bool lead = wt_rank(warp) == 0;
  int64_t v[8];
  for (int i = 0; i < 8; i++) v[i] = 0x7f7f7f7f;
  const int64_t a = (int64_t)page - 100;          /* 300 bytes across pages 0 and 1 */
  const int64_t woff = (int64_t)s0 + 5003;        /* 777 bytes past the end, a gap before */
  const int64_t end = woff + 777;
  int fd = wt_open(warp, path, GPUFS_O_RDWR, 0644);
  v[0] = fd;
  if (fd >= 0) {
    v[1] = wt_write(warp, fd, a, 300, src + a);
    v[2] = wt_read(warp, fd, a - 50, 400, out1);
    v[3] = wt_write(warp, fd, woff, 777, src + woff);
    v[4] = wt_read(warp, fd, (int64_t)s0 - 50, (uint64_t)(end - ((int64_t)s0 - 50)) + 64, out2);
    v[5] = wt_read(warp, fd, end, 10, out3);
    v[6] = wt_read(warp, fd, 0, (uint64_t)end + 100, out3);
    v[7] = wt_close(warp, fd);
  }
  if (lead)
    for (int i = 0; i < 8; i++) r[i] = v[i];
}

void WriteTest::read_own_writes(bool warp)
{
  const uint64_t s0 = 2ull * page + 300;
  std::string f = dir.make("own", s0, 51);
  start(256ull * page);
  const uint64_t a = page - 100, woff = s0 + 5003, end = woff + 777;
  std::vector<uint8_t> model = wt_pattern(s0, 51);
  wt_put(model, a, 300, 52);
  model.resize(woff, 0);
  wt_put(model, woff, 777, 52);
  ASSERT_EQ(end, model.size());
  wt_src src(end, 52);
  wt_dmem<uint8_t> o1(400, 0xa5), o2(end - (s0 - 50) + 64, 0xa5), o3(end + 100, 0xa5);
  wt_dmem<int64_t> r(8, 0x7f);
  dpath dp(f);
  wt_rw_own<<<1, warp ? 32 : 128>>>(dp.d, page, s0, src.p, o1.p, o2.p, o3.p, r.p, warp);
  ASSERT_EQ(cudaSuccess, wt_sync());
  std::vector<int64_t> h = r.get();
  ASSERT_GE(h[0], 0) << "gopen" << wt_err(h[0]);
  EXPECT_EQ(300, h[1]) << "gwrite across a page boundary" << wt_err(h[1]);
  EXPECT_EQ(400, h[2]) << "gread around it" << wt_err(h[2]);
  EXPECT_EQ(777, h[3]) << "gwrite past the end" << wt_err(h[3]);
  EXPECT_EQ((int64_t)(end - (s0 - 50)), h[4]) << "gread over the old end, the gap and the new bytes"
                                              << wt_err(h[4]);
  EXPECT_EQ(0, h[5]) << "gread at the new end";
  EXPECT_EQ((int64_t)end, h[6]) << "gread of the whole file" << wt_err(h[6]);
  EXPECT_EQ(0, h[7]) << "gclose" << wt_err(h[7]);
  EXPECT_TRUE(wt_bytes_eq(model.data() + a - 50, o1.get().data(), 400, a - 50)) << "gread around the write";
  if (h[4] == (int64_t)(end - (s0 - 50)))
    EXPECT_TRUE(wt_bytes_eq(model.data() + s0 - 50, o2.get().data(), end - (s0 - 50), s0 - 50))
        << "old tail, zero gap, new bytes";
  if (h[6] == (int64_t)end) EXPECT_TRUE(wt_bytes_eq(model.data(), o3.get().data(), end)) << "the whole file";
  EXPECT_TRUE(wt_file_is(f, model)) << "the host file after gclose";
}

TEST_P(WriteTest, ReadOwnWritesBlock) { read_own_writes(false); }
TEST_P(WriteTest, ReadOwnWritesWarp) { read_own_writes(true); }

/* ---- 11: gmmap(PROT_WRITE, MAP_SHARED) ---- */

/* Map [off1, +len1) and [off2, +len2) (the second crosses the end of the
 * file) for writing, store the pattern through the pointers, gread around
 * the first, optionally gmsync both; the mappings stay (ptrs). */
__global__ void wt_map_write(int fd, int64_t off1, uint64_t len1, int64_t off2, uint64_t len2,
                             const uint8_t *src, bool msync, void **ptrs, uint8_t *out, int64_t *r)
{
  const int prot = GPUFS_PROT_READ | GPUFS_PROT_WRITE;
  void *p1 = gmmap(NULL, len1, prot, GPUFS_MAP_SHARED, fd, off1);
  void *p2 = gmmap(NULL, len2, prot, GPUFS_MAP_SHARED, fd, off2);
  bool ok1 = !GPUFS_MAP_FAILED(p1), ok2 = !GPUFS_MAP_FAILED(p2);
  if (threadIdx.x == 0) {
    r[0] = ok1 ? 0 : GPUFS_MAP_ERRNO(p1);
    r[1] = ok2 ? 0 : GPUFS_MAP_ERRNO(p2);
    ptrs[0] = ok1 ? p1 : NULL;
    ptrs[1] = ok2 ? p2 : NULL;
  }
  if (!ok1 || !ok2) return;
  for (uint64_t i = threadIdx.x; i < len1; i += blockDim.x) ((uint8_t *)p1)[i] = src[off1 + i];
  for (uint64_t i = threadIdx.x; i < len2; i += blockDim.x) ((uint8_t *)p2)[i] = src[off2 + i];
  __threadfence();
  __syncthreads();
  ssize_t n = gread(fd, off1 - 40, len1 + 80, out);
  int s1 = 0, s2 = 0;
  if (msync) {
    s1 = gmsync(p1, len1, GPUFS_MS_SYNC);
    s2 = gmsync(p2, len2, GPUFS_MS_SYNC);
  }
  if (threadIdx.x == 0) {
    r[2] = n;
    r[3] = s1;
    r[4] = s2;
  }
}

__global__ void wt_unmap_close(void *const *ptrs, uint64_t len1, uint64_t len2, int fd, int64_t *r)
{
  void *p1 = ptrs[0], *p2 = ptrs[1];
  int u1 = p1 ? gmunmap(p1, len1) : -1000;
  int u2 = p2 ? gmunmap(p2, len2) : -1000;
  int c = gclose(fd);
  if (threadIdx.x == 0) {
    r[0] = u1;
    r[1] = u2;
    r[2] = c;
  }
}

void WriteTest::map_write(bool msync)
{
  const uint64_t G = GPUFS_DIRTY_GRAIN;
  const uint64_t fsize = 3ull * page + 500;
  std::string f = dir.make("mapw", fsize, 111);
  start(256ull * page);
  /* [off1, off1 + len1) lies in grains [page + 2G, page + 8G) */
  const int64_t off1 = (int64_t)page + 2 * G + 2;
  const uint64_t len1 = 5 * G + 13;
  const int64_t off2 = (int64_t)fsize - 100;
  const uint64_t len2 = 300;
  wt_src src((uint64_t)off2 + len2, 112);
  int fd = wt_gopen_h(f, GPUFS_O_RDWR);
  ASSERT_GE(fd, 0) << wt_err(fd);
  wt_dmem<void *> ptrs(2);
  wt_dmem<uint8_t> out(len1 + 80, 0xa5);
  wt_dmem<int64_t> r(5, 0x7f);
  wt_map_write<<<1, 128>>>(fd, off1, len1, off2, len2, src.p, msync, ptrs.p, out.p, r.p);
  ASSERT_EQ(cudaSuccess, wt_sync());
  std::vector<int64_t> h = r.get();
  ASSERT_EQ(0, h[0]) << "gmmap(PROT_WRITE) of [off1, +len1)" << wt_err(h[0]);
  ASSERT_EQ(0, h[1]) << "gmmap(PROT_WRITE) across the end of the file" << wt_err(h[1]);
  EXPECT_EQ((int64_t)len1 + 80, h[2]) << "gread of the mapped bytes" << wt_err(h[2]);
  std::vector<uint8_t> model = wt_pattern(fsize, 111);
  wt_put(model, (uint64_t)off1, len1, 112);
  wt_put(model, (uint64_t)off2, fsize - (uint64_t)off2, 112); /* not the bytes past the end */
  ASSERT_EQ(fsize, model.size());
  EXPECT_TRUE(wt_bytes_eq(model.data() + off1 - 40, out.get().data(), len1 + 80, off1 - 40))
      << "a gread sees the bytes stored through the mapping at once";
  if (msync) {
    EXPECT_EQ(0, h[3]) << "gmsync(MS_SYNC)" << wt_err(h[3]);
    EXPECT_EQ(0, h[4]) << "gmsync(MS_SYNC) across the end" << wt_err(h[4]);
    EXPECT_TRUE(wt_file_is(f, model)) << "after gmsync(MS_SYNC): the mapped bytes, the size unchanged";
  }
  /* the CPU changes bytes of the same page outside the mapped range's grains */
  wt_put(model, page, 2 * G, 113);
  wt_put(model, page + 8 * G, 8 * G, 113);
  wt_put(model, 2ull * page - G, G, 113);
  ASSERT_TRUE(wt_host_pwrite(f, model, page, 2 * G));
  ASSERT_TRUE(wt_host_pwrite(f, model, page + 8 * G, 8 * G));
  ASSERT_TRUE(wt_host_pwrite(f, model, 2ull * page - G, G));
  r.set(0x7f);
  wt_unmap_close<<<1, 128>>>(ptrs.p, len1, len2, fd, r.p);
  ASSERT_EQ(cudaSuccess, wt_sync());
  h = r.get();
  EXPECT_EQ(0, h[0]) << "gmunmap" << wt_err(h[0]);
  EXPECT_EQ(0, h[1]) << "gmunmap" << wt_err(h[1]);
  EXPECT_EQ(0, h[2]) << "gclose" << wt_err(h[2]);
  EXPECT_TRUE(wt_file_is(f, model)) << "the mapped bytes and the CPU's bytes around them";
}

TEST_P(WriteTest, MmapWriteUnmap) { map_write(false); }
TEST_P(WriteTest, MmapWriteMsync) { map_write(true); }

/* ---- 12: gpufs_sync and gpufs_stop write back files left open ---- */

TEST_P(WriteTest, HostSyncWritesBackOpenFiles)
{
  EXPECT_EQ(-EINVAL, gpufs_sync()) << "not started";
  const uint64_t fsize = 40ull * page + 77;
  start(16ull << 20);
  std::string f = newpath("sync");
  wt_src src(fsize, 121);
  int fd = wt_gopen_h(f, WT_RW_NEW);
  ASSERT_GE(fd, 0) << wt_err(fd);
  wt_stream(fd, fsize, src, 8, 3 * 4096 + 123);
  struct gpufs_stats st;
  ASSERT_EQ(0, gpufs_get_stats(&st));
  EXPECT_GT(st.dirty, 0ull) << "nothing needed the frames: the pages are still dirty";
  EXPECT_EQ(0, gpufs_sync());
  std::vector<uint8_t> model = wt_pattern(fsize, 121);
  EXPECT_TRUE(wt_file_is(f, model)) << "after gpufs_sync, the file still open on the GPU";
  ASSERT_EQ(0, gpufs_get_stats(&st));
  EXPECT_EQ(0ull, (unsigned long long)st.dirty) << "after gpufs_sync";
  EXPECT_GE(st.bytes_written, fsize);
  EXPECT_EQ(0, wt_gclose_h(fd));
  EXPECT_TRUE(wt_file_is(f, model)) << "after gclose";
}

TEST_P(WriteTest, StopWritesBackOpenFiles)
{
  const uint64_t fsize = 40ull * page + 77;
  start(16ull << 20);
  std::string f = newpath("stop");
  wt_src src(fsize, 122);
  int fd = wt_gopen_h(f, WT_RW_NEW);
  ASSERT_GE(fd, 0) << wt_err(fd);
  wt_stream(fd, fsize, src, 8, 3 * 4096 + 123);
  /* no gclose */
  EXPECT_EQ(0, gpufs_stop()) << gpufs_error_detail();
  started = false;
  EXPECT_TRUE(wt_file_is(f, wt_pattern(fsize, 122))) << "after gpufs_stop";
}

/* ---- 13: an O_WRONLY descriptor writes parts of grains of an old file ---- */

/* One block writes rs[0..nr); ret[i] each result, then gcloses (ret[nr]). */
__global__ void wt_write_list_close(int fd, const wt_range *rs, int nr, const uint8_t *src, int64_t *ret)
{
  for (int i = 0; i < nr; i++) {
    ssize_t w = gwrite(fd, rs[i].off, rs[i].len, src + rs[i].off);
    if (threadIdx.x == 0) ret[i] = w;
  }
  int c = gclose(fd);
  if (threadIdx.x == 0) ret[nr] = c;
}

TEST_P(WriteTest, WriteOnlyPartialGrainsKeepTheirNeighbours)
{
  const uint64_t s0 = 3ull * page + 200;
  std::string f = dir.make("wronly", s0, 131);
  start(256ull * page);
  /* inside one grain; across a page boundary; across the old end */
  std::vector<wt_range> rs = {{(int64_t)page + 7, 10}, {2ll * page - 5, 11}, {(int64_t)s0 - 3, 20}};
  std::vector<uint8_t> model = wt_pattern(s0, 131);
  for (auto &x : rs) wt_put(model, (uint64_t)x.off, x.len, 132);
  wt_src src(s0 + 17, 132);
  wt_dmem<wt_range> drs(rs.size());
  ASSERT_EQ(cudaSuccess, cudaMemcpy(drs.p, rs.data(), rs.size() * sizeof(wt_range), cudaMemcpyHostToDevice));
  wt_dmem<int64_t> r(rs.size() + 1, 0x7f);
  int fd = wt_gopen_h(f, GPUFS_O_WRONLY);
  ASSERT_GE(fd, 0) << wt_err(fd);
  wt_write_list_close<<<1, 128>>>(fd, drs.p, (int)rs.size(), src.p, r.p);
  ASSERT_EQ(cudaSuccess, wt_sync());
  std::vector<int64_t> h = r.get();
  for (size_t i = 0; i < rs.size(); i++) EXPECT_EQ((int64_t)rs[i].len, h[i]) << "gwrite " << i << wt_err(h[i]);
  EXPECT_EQ(0, h[rs.size()]) << "gclose" << wt_err(h[rs.size()]);
  EXPECT_TRUE(wt_file_is(f, model)) << "the rest of each written grain keeps the file's bytes";
}

INSTANTIATE_TEST_SUITE_P(Pages, WriteTest, ::testing::Values(4096u, 65536u),
                         [](const ::testing::TestParamInfo<uint32_t> &i) {
                           return std::to_string(i.param / 1024) + "K";
                         });
