/*
 * peer_test.cu - peer caching: a miss on one instance is served from
 * another instance's cache (two instances on one GPU stand for two GPUs),
 * and host code reads through the GPU caches with gpufs_pread.  Every byte
 * is checked against what the file (or the GPU's newer bytes) holds.
 */
#include <vector>

#include "tests/gpu/instances_util.h"

/* One block opens path read-only on ref's instance and reads [off, off+n). */
static __global__ void peer_read(gpufs_ref ref, const char *path, int64_t off, uint64_t n,
                                 uint8_t *buf, int64_t *out)
{
  int fd = gopen(ref, path, GPUFS_O_RDONLY);
  ssize_t r = fd < 0 ? fd : gread(fd, off, n, buf);
  int c = fd < 0 ? 0 : gclose(fd);
  if (threadIdx.x == 0) {
    out[0] = fd;
    out[1] = r;
    out[2] = c;
  }
}

/* One block opens path read-write on ref's instance and writes n bytes of
 * src at off; the file stays open (out[0] its descriptor) unless close. */
static __global__ void peer_write(gpufs_ref ref, const char *path, int64_t off, uint64_t n,
                                  const uint8_t *src, bool close, int64_t *out)
{
  int fd = gopen(ref, path, GPUFS_O_RDWR);
  ssize_t w = fd < 0 ? fd : gwrite(fd, off, n, src);
  int c = fd >= 0 && close ? gclose(fd) : 0;
  if (threadIdx.x == 0) {
    out[0] = fd;
    out[1] = w;
    out[2] = c;
  }
}

static std::vector<uint8_t> pattern(uint64_t seed, uint64_t n)
{
  std::vector<uint8_t> v(n);
  for (uint64_t i = 0; i < n; i++) v[i] = tpat(seed, i);
  return v;
}

class PeerTest : public InstancesFixture {
protected:
  /* Read [off, off+n) on instance i and check it against want[off..]. */
  void gpu_read(int i, const std::string &path, uint64_t off, uint64_t n,
                const std::vector<uint8_t> &want)
  {
    dpath dp(path);
    uint8_t *buf;
    int64_t *out, h[3];
    ASSERT_EQ(cudaSuccess, cudaMalloc(&buf, n));
    ASSERT_EQ(cudaSuccess, cudaMalloc(&out, sizeof(h)));
    peer_read<<<1, 256>>>(ref(i), dp.d, (int64_t)off, n, buf, out);
    ASSERT_EQ(cudaSuccess, cudaDeviceSynchronize());
    std::vector<uint8_t> got(n);
    cudaMemcpy(h, out, sizeof(h), cudaMemcpyDeviceToHost);
    cudaMemcpy(got.data(), buf, n, cudaMemcpyDeviceToHost);
    cudaFree(buf);
    cudaFree(out);
    ASSERT_GE(h[0], 0) << gpufs_strerror((int)h[0]);
    ASSERT_EQ((int64_t)n, h[1]);
    EXPECT_EQ(0, h[2]);
    EXPECT_EQ(0u, ndiff(got.data(), want.data() + off, n)) << "instance " << i;
  }
  /* Write src at off on instance i; leaves it open unless close. */
  void gpu_write(int i, const std::string &path, uint64_t off, const std::vector<uint8_t> &src,
                 bool close)
  {
    dpath dp(path);
    uint8_t *d;
    int64_t *out, h[3];
    ASSERT_EQ(cudaSuccess, cudaMalloc(&d, src.size()));
    ASSERT_EQ(cudaSuccess, cudaMalloc(&out, sizeof(h)));
    cudaMemcpy(d, src.data(), src.size(), cudaMemcpyHostToDevice);
    peer_write<<<1, 256>>>(ref(i), dp.d, (int64_t)off, src.size(), d, close, out);
    ASSERT_EQ(cudaSuccess, cudaDeviceSynchronize());
    cudaMemcpy(h, out, sizeof(h), cudaMemcpyDeviceToHost);
    cudaFree(d);
    cudaFree(out);
    ASSERT_GE(h[0], 0) << gpufs_strerror((int)h[0]);
    ASSERT_EQ((int64_t)src.size(), h[1]);
    EXPECT_EQ(0, h[2]);
  }
};

TEST_F(PeerTest, SecondInstanceIsServedFromTheFirst)
{
  const uint64_t size = (6u << 20) + 777;
  std::string f = dir.make("peer", size, 21);
  std::vector<uint8_t> want = file_bytes(f);
  start(2);
  gpu_read(0, f, 0, size, want);
  gpu_read(1, f, 0, size, want);
  struct gpufs_stats a, b, all;
  ASSERT_EQ(0, gpufs_get_instance_stats(0, &a));
  ASSERT_EQ(0, gpufs_get_instance_stats(1, &b));
  ASSERT_EQ(0, gpufs_get_stats(&all));
  const uint64_t pages = (size + 4095) / 4096;
  EXPECT_EQ(0u, a.peer_hits);
  EXPECT_EQ(pages, b.peer_hits) << "every page of the second read came from the first cache";
  EXPECT_EQ(0u, b.bytes_read) << "nothing was read from the host for instance 1";
  EXPECT_EQ(size, all.bytes_read) << "the host read the file once";
  EXPECT_EQ(pages, all.peer_hits);
}

TEST_F(PeerTest, OddRangesAcrossBothCaches)
{
  const uint64_t size = 300000;
  std::string f = dir.make("odd", size, 22);
  std::vector<uint8_t> want = file_bytes(f);
  start(3);
  gpu_read(0, f, 5, 100000, want);      /* pages 0 .. 24 in instance 0 */
  gpu_read(1, f, 150001, 90000, want);  /* pages 36 .. 58 in instance 1 */
  gpu_read(2, f, 0, size, want);        /* instance 2: both peers and the host */
  gpu_read(2, f, 4095, 2, want);
  struct gpufs_stats c;
  ASSERT_EQ(0, gpufs_get_instance_stats(2, &c));
  EXPECT_GT(c.peer_hits, 40u);
  EXPECT_LT(c.bytes_read, size);
  EXPECT_GT(c.bytes_read, 0u);
}

TEST_F(PeerTest, StalePagesOfAPeerAreNotServed)
{
  const uint64_t size = 128u << 10;
  std::string f = dir.make("stale", size, 23);
  std::vector<uint8_t> old = file_bytes(f);
  start(2);
  gpu_read(1, f, 0, size, old); /* instance 1 holds the old bytes */
  /* the CPU rewrites the file: the next opens see a new version */
  std::vector<uint8_t> neu = pattern(24, size);
  FILE *fp = fopen(f.c_str(), "r+b");
  ASSERT_NE(nullptr, fp);
  fwrite(neu.data(), 1, size, fp);
  fclose(fp);
  gpu_read(0, f, 0, size, neu);
  gpu_read(1, f, 0, size, neu);
}

TEST_F(PeerTest, HostReadServedFromDirtyGpuPages)
{
  const uint64_t size = 1u << 20;
  std::string f = dir.make("dirty", size, 25);
  std::vector<uint8_t> old = file_bytes(f);
  start(2);
  std::vector<uint8_t> neu = pattern(26, size);
  gpu_write(1, f, 0, neu, false); /* open and dirty on instance 1 */
  ASSERT_EQ(old, file_bytes(f)) << "not written back yet";
  /* pageable buffer */
  std::vector<uint8_t> got(size + 10, 0xee);
  ASSERT_EQ((ssize_t)size, gpufs_pread(f.c_str(), got.data(), size + 10, 0));
  EXPECT_EQ(0u, ndiff(got.data(), neu.data(), size));
  /* pinned buffer, odd range */
  uint8_t *pin;
  CUDA_OK(cudaHostAlloc((void **)&pin, size, cudaHostAllocDefault));
  ASSERT_EQ((ssize_t)(size - 4097 - 1000), gpufs_pread(f.c_str(), pin, size - 4097 - 1000, 4097));
  EXPECT_EQ(0u, ndiff(pin, neu.data() + 4097, size - 4097 - 1000));
  cudaFreeHost(pin);
  ASSERT_EQ(old, file_bytes(f)) << "a host read writes nothing back";
}

/* Large enough that the copy out of the bounce buffer is split over
 * threads, with an odd offset and length. */
TEST_F(PeerTest, LargeHostReadIntoPageableMemory)
{
  const uint64_t size = 40u << 20;
  std::string f = dir.make("large", size, 33);
  std::vector<uint8_t> old = file_bytes(f);
  start(1, 65536, 64ull << 20);
  std::vector<uint8_t> neu = pattern(34, size);
  gpu_write(0, f, 0, neu, false);
  const uint64_t off = 12345, n = size - off - 777;
  std::vector<uint8_t> got(n, 0xee);
  ASSERT_EQ((ssize_t)n, gpufs_pread(f.c_str(), got.data(), n, (int64_t)off));
  EXPECT_EQ(0u, ndiff(got.data(), neu.data() + off, n)) << "the GPU's (dirty) bytes";
  EXPECT_EQ(old, file_bytes(f)) << "a host read writes nothing back";
}

TEST_F(PeerTest, HostReadSeesBytesPastTheHostEnd)
{
  const uint64_t size = 10000;
  std::string f = dir.make("grow", size, 27);
  std::vector<uint8_t> whole = file_bytes(f);
  start(1);
  std::vector<uint8_t> more = pattern(28, 20000);
  gpu_write(0, f, size, more, false); /* the file grows on the GPU only */
  whole.insert(whole.end(), more.begin(), more.end());
  std::vector<uint8_t> got(40000, 0xee);
  ASSERT_EQ((ssize_t)whole.size(), gpufs_pread(f.c_str(), got.data(), got.size(), 0));
  EXPECT_EQ(0u, ndiff(got.data(), whole.data(), whole.size()));
  EXPECT_EQ(0, gpufs_pread(f.c_str(), got.data(), 10, (int64_t)whole.size()));
  EXPECT_EQ(10, gpufs_pread(f.c_str(), got.data(), 10, (int64_t)whole.size() - 10));
  EXPECT_EQ(0u, ndiff(got.data(), whole.data() + whole.size() - 10, 10));
}

TEST_F(PeerTest, HostReadOfFilesTheGpuDoesNotHold)
{
  const uint64_t size = 200000;
  std::string never = dir.make("never", size, 29), changed = dir.make("changed", size, 30);
  start(2);
  std::vector<uint8_t> got(size);
  ASSERT_EQ((ssize_t)size, gpufs_pread(never.c_str(), got.data(), size, 0));
  EXPECT_EQ(file_bytes(never), got);
  /* cached on the GPU, then changed by the CPU: the file's bytes, not the
   * GPU's stale ones */
  gpu_read(0, changed, 0, size, file_bytes(changed));
  std::vector<uint8_t> neu = pattern(31, size);
  FILE *fp = fopen(changed.c_str(), "r+b");
  ASSERT_NE(nullptr, fp);
  fwrite(neu.data(), 1, size, fp);
  fclose(fp);
  ASSERT_EQ((ssize_t)size, gpufs_pread(changed.c_str(), got.data(), size, 0));
  EXPECT_EQ(neu, got);
}

TEST_F(PeerTest, HostReadErrors)
{
  std::string f = dir.make("e", 5000, 32);
  uint8_t b[16];
  EXPECT_EQ(-EINVAL, gpufs_pread(f.c_str(), b, 16, 0)) << "not started";
  start(1);
  EXPECT_EQ(-EFAULT, gpufs_pread(NULL, b, 16, 0));
  EXPECT_EQ(-EFAULT, gpufs_pread(f.c_str(), NULL, 16, 0));
  EXPECT_EQ(-EINVAL, gpufs_pread(f.c_str(), b, 16, -1));
  EXPECT_EQ(-ENOENT, gpufs_pread((dir.path + "/missing").c_str(), b, 16, 0));
  EXPECT_EQ(-EISDIR, gpufs_pread(dir.path.c_str(), b, 16, 0));
  EXPECT_EQ(0, gpufs_pread(f.c_str(), b, 0, 0));
  EXPECT_EQ(0, gpufs_pread(f.c_str(), b, 16, 5000));
  EXPECT_EQ(8, gpufs_pread(f.c_str(), b, 16, 4992));
  std::vector<uint8_t> want = file_bytes(f);
  EXPECT_EQ(0u, ndiff(b, want.data() + 4992, 8));
}

/* A host read that comes short (the file ends) writes nothing past the
 * count it returns, as pread(2), and a read at or past the end writes
 * nothing: pageable and pinned buffers, a file no instance holds and one
 * an instance holds dirty and grown past the host's end (its last page in
 * part). */
TEST_F(PeerTest, ShortHostReadLeavesTheTailAlone)
{
  const uint64_t size = 10000, cap = 64u << 10, off = 100;
  std::string never = dir.make("short-never", size, 35), grown = dir.make("short-grown", size, 36);
  start(1);
  std::vector<uint8_t> more = pattern(37, 3000);
  gpu_write(0, grown, size, more, false); /* 13,000 bytes on the GPU, 10,000 on the host */
  std::vector<uint8_t> want_grown = file_bytes(grown);
  want_grown.insert(want_grown.end(), more.begin(), more.end());
  const std::vector<uint8_t> want_never = file_bytes(never);
  std::vector<uint8_t> pageable(cap);
  uint8_t *pin = nullptr;
  CUDA_OK(cudaHostAlloc((void **)&pin, cap, cudaHostAllocDefault));
  const struct {
    const std::string &path;
    const std::vector<uint8_t> &want;
  } files[] = {{never, want_never}, {grown, want_grown}};
  for (const auto &f : files) {
    for (uint8_t *buf : {pageable.data(), pin}) {
      const char *kind = buf == pin ? "pinned" : "pageable";
      memset(buf, 0xee, cap);
      const ssize_t r = gpufs_pread(f.path.c_str(), buf, cap, (int64_t)off);
      ASSERT_EQ((ssize_t)(f.want.size() - off), r) << f.path << ", " << kind;
      EXPECT_EQ(0u, ndiff(buf, f.want.data() + off, (size_t)r)) << f.path << ", " << kind;
      std::vector<uint8_t> tail(cap - (size_t)r, 0xee);
      EXPECT_EQ(0u, ndiff(buf + r, tail.data(), tail.size()))
          << "bytes past the count were written: " << f.path << ", " << kind;
      memset(buf, 0xee, cap);
      EXPECT_EQ(0, gpufs_pread(f.path.c_str(), buf, cap, (int64_t)f.want.size() + 5));
      std::vector<uint8_t> all(cap, 0xee);
      EXPECT_EQ(0u, ndiff(buf, all.data(), cap)) << "a read past the end wrote: " << kind;
    }
  }
  cudaFreeHost(pin);
}
