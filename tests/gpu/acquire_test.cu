/*
 * acquire_test.cu - gpufs_acquire and gpufs_release on a GPU (docs/api.md,
 * "gpufs_acquire, gpufs_release"): after CPU writes to one, some or all
 * pages of a file the GPU has cached, an acquire drops exactly those pages
 * (the next reads miss on them alone, by the counters) and every byte the
 * GPU then reads is the host's, with the descriptor kept open and after a
 * new gopen; the first acquire of a file drops every cached page; a page
 * the GPU holds dirty stays the GPU's, and gpufs_release writes it to the
 * file; every instance drops; bad inputs get their errors.
 */
#include <fcntl.h>
#include <unistd.h>

#include <vector>

#include "tests/gpu/gpu_util.h"

namespace {

constexpr uint32_t kPage = 4096;
constexpr uint64_t kPages = 64, kSize = kPages * kPage;

/* Read [0, size) of fd into out, one block per 64 KiB; err[0] counts
 * calls that failed or came short. */
static __global__ void acq_read(int fd, uint64_t size, uint8_t *out, unsigned long long *err)
{
  const uint64_t off = (uint64_t)blockIdx.x << 16;
  if (off >= size) return;
  const uint64_t len = size - off < (1u << 16) ? size - off : (1u << 16);
  const ssize_t r = gread(fd, (int64_t)off, len, out + off);
  if (threadIdx.x == 0 && r != (ssize_t)len) atomicAdd(err, 1ull);
}

static __global__ void acq_write(int fd, uint64_t off, uint64_t len, const uint8_t *src, int64_t *r)
{
  const ssize_t w = gwrite(fd, (int64_t)off, len, src);
  if (threadIdx.x == 0) *r = w;
}

class AcquireTest : public StartedFixture {
protected:
  std::string path;
  std::vector<uint8_t> model;
  void make(uint64_t seed)
  {
    path = dir.make("graph", kSize, seed);
    model.resize(kSize);
    for (uint64_t i = 0; i < kSize; i++) model[i] = tpat(seed, i);
  }
  void start(uint32_t ninstances = 1)
  {
    struct gpufs_config c = small_config(kPage, 4ull << 20);
    c.ndevices = ninstances > 1 ? ninstances : 0;
    for (uint32_t i = 0; i < ninstances && ninstances > 1; i++) c.devices[i] = 0;
    ASSERT_EQ(0, gpufs_start(&c)) << gpufs_error_detail();
    started = true;
  }
  /* The host changes bytes [off, off+len) of the file (and the model). */
  void cpu_write(uint64_t off, uint64_t len, uint64_t seed)
  {
    std::vector<uint8_t> b(len);
    for (uint64_t i = 0; i < len; i++) model[off + i] = b[i] = tpat(seed, off + i);
    int fd = open(path.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    ASSERT_EQ((ssize_t)len, pwrite(fd, b.data(), len, (off_t)off));
    close(fd);
  }
  uint64_t misses()
  {
    gpufs_stats s;
    memset(&s, 0, sizeof(s));
    EXPECT_EQ(0, gpufs_get_stats(&s));
    return s.misses;
  }
  /* Read the whole file through fd and compare every byte with the model;
   * the misses the read took. */
  uint64_t read_check(int fd, const char *what)
  {
    uint8_t *d = nullptr;
    unsigned long long *err = nullptr, herr = 0;
    std::vector<uint8_t> got(kSize);
    const uint64_t before = misses();
    EXPECT_EQ(cudaSuccess, cudaMalloc(&d, kSize));
    EXPECT_EQ(cudaSuccess, cudaMalloc(&err, sizeof(*err)));
    cudaMemset(err, 0, sizeof(*err));
    acq_read<<<(unsigned)(kSize >> 16), 128>>>(fd, kSize, d, err);
    EXPECT_EQ(cudaSuccess, cudaDeviceSynchronize());
    cudaMemcpy(got.data(), d, kSize, cudaMemcpyDeviceToHost);
    cudaMemcpy(&herr, err, sizeof(herr), cudaMemcpyDeviceToHost);
    cudaFree(d);
    cudaFree(err);
    EXPECT_EQ(0ull, herr) << what << ": calls that failed";
    uint64_t bad = 0, first = kSize;
    for (uint64_t i = 0; i < kSize; i++)
      if (got[i] != model[i]) {
        bad++;
        first = first < i ? first : i;
      }
    EXPECT_EQ(0u, bad) << what << ": bytes that differ from the host's, the first at " << first;
    return misses() - before;
  }
};

TEST_F(AcquireTest, OnlyTheChangedPagesAreReadAgain)
{
  make(11);
  start();
  EXPECT_EQ(0, gpufs_acquire(path.c_str())) << "nothing cached yet";
  int fd = host_open(path);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(kPages, read_check(fd, "first read"));
  cpu_write(9 * kPage + 100, 3, 12);
  EXPECT_EQ(1, gpufs_acquire(path.c_str())) << gpufs_error_detail();
  EXPECT_EQ(1u, read_check(fd, "one page changed"));
  cpu_write(1 * kPage, 1, 13);
  cpu_write(31 * kPage - 2, 4, 13); /* pages 30 and 31 */
  cpu_write(63 * kPage + 5, 1, 13);
  EXPECT_EQ(4, gpufs_acquire(path.c_str()));
  EXPECT_EQ(4u, read_check(fd, "some pages changed"));
  cpu_write(0, kSize, 14);
  EXPECT_EQ((int64_t)kPages, gpufs_acquire(path.c_str()));
  EXPECT_EQ(kPages, read_check(fd, "every page changed"));
  EXPECT_EQ(0, gpufs_acquire(path.c_str())) << "nothing changed";
  EXPECT_EQ(0u, read_check(fd, "unchanged"));
  EXPECT_EQ(0, host_close(fd));
  cpu_write(17 * kPage, 8, 15);
  EXPECT_EQ(1, gpufs_acquire(path.c_str()));
  fd = host_open(path);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(1u, read_check(fd, "a new gopen keeps the unchanged pages"));
  EXPECT_EQ(0, host_close(fd));
}

/* gpufs_acquire_range hashes only its pages; an acquire of a file as the
 * last acquire left it reads nothing and drops nothing. */
TEST_F(AcquireTest, ARangeAcquireLooksAtItsPagesAlone)
{
  make(61);
  start();
  int fd = host_open(path);
  ASSERT_GE(fd, 0);
  read_check(fd, "first read");
  EXPECT_EQ((int64_t)kPages, gpufs_acquire_range(path.c_str(), 0, kPage)) << "the first: whole";
  read_check(fd, "refilled");
  cpu_write(20 * kPage + 9, 4, 62);
  EXPECT_EQ(1, gpufs_acquire_range(path.c_str(), 20 * kPage, kPage));
  EXPECT_EQ(1u, read_check(fd, "page 20"));
  EXPECT_EQ(0, gpufs_acquire(path.c_str())) << "unchanged since";
  EXPECT_EQ(0u, read_check(fd, "nothing dropped"));
  cpu_write(40 * kPage + kPage - 1, 2, 63); /* pages 40 and 41 */
  EXPECT_EQ(2, gpufs_acquire_range(path.c_str(), 40 * kPage + 100, kPage));
  EXPECT_EQ(2u, read_check(fd, "pages 40 and 41"));
  EXPECT_EQ(-EINVAL, gpufs_acquire_range(path.c_str(), -1, 10));
  EXPECT_EQ(0, host_close(fd));
}

/* Two ranges written before either is acquired: each range acquire
 * hashes its own pages, though the first recorded the file's times. */
TEST_F(AcquireTest, RangesWrittenTogetherAreAcquiredOneByOne)
{
  make(71);
  start();
  int fd = host_open(path);
  ASSERT_GE(fd, 0);
  read_check(fd, "first read");
  EXPECT_EQ((int64_t)kPages, gpufs_acquire(path.c_str())) << "the first: whole";
  read_check(fd, "refilled");
  cpu_write(5 * kPage + 1, 10, 72);
  cpu_write(50 * kPage + 7, 3, 72);
  EXPECT_EQ(1, gpufs_acquire_range(path.c_str(), 5 * kPage, kPage)) << gpufs_error_detail();
  EXPECT_EQ(1, gpufs_acquire_range(path.c_str(), 50 * kPage, kPage)) << "the second range";
  EXPECT_EQ(2u, read_check(fd, "pages 5 and 50"));
  EXPECT_EQ(0, gpufs_acquire_range(path.c_str(), 50 * kPage, kPage)) << "acquired already";
  EXPECT_EQ(0u, read_check(fd, "nothing dropped"));
  EXPECT_EQ(0, host_close(fd));
}

TEST_F(AcquireTest, TheFirstAcquireDropsEveryCachedPage)
{
  make(21);
  start();
  int fd = host_open(path);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(kPages, read_check(fd, "first read"));
  cpu_write(3 * kPage, 10, 22);
  EXPECT_EQ((int64_t)kPages, gpufs_acquire(path.c_str()));
  EXPECT_EQ(kPages, read_check(fd, "after the first acquire"));
  EXPECT_EQ(0, host_close(fd));
}

TEST_F(AcquireTest, TheGpusDirtyPagesWinAndReleaseWritesThem)
{
  make(31);
  start();
  int fd = host_open(path, GPUFS_O_RDWR);
  ASSERT_GE(fd, 0);
  read_check(fd, "first read");
  EXPECT_EQ((int64_t)kPages, gpufs_acquire(path.c_str()));
  read_check(fd, "refilled");
  /* the GPU writes page 2 (dirty, not written back) */
  std::vector<uint8_t> g(kPage);
  for (uint64_t i = 0; i < kPage; i++) g[i] = tpat(32, 2 * kPage + i);
  uint8_t *dg = nullptr;
  int64_t *dr = nullptr, hr = 0;
  CUDA_OK(cudaMalloc(&dg, kPage));
  CUDA_OK(cudaMalloc(&dr, sizeof(*dr)));
  CUDA_OK(cudaMemcpy(dg, g.data(), kPage, cudaMemcpyHostToDevice));
  acq_write<<<1, 128>>>(fd, 2 * kPage, kPage, dg, dr);
  CUDA_OK(cudaDeviceSynchronize());
  CUDA_OK(cudaMemcpy(&hr, dr, sizeof(hr), cudaMemcpyDeviceToHost));
  ASSERT_EQ((int64_t)kPage, hr);
  /* the host writes pages 2 and 5 */
  cpu_write(2 * kPage + 7, 9, 33);
  cpu_write(5 * kPage + 7, 9, 33);
  std::copy(g.begin(), g.end(), model.begin() + 2 * kPage); /* the GPU's page wins */
  EXPECT_EQ(1, gpufs_acquire(path.c_str())) << "page 5 only";
  EXPECT_EQ(1u, read_check(fd, "dirty page kept, page 5 new"));
  EXPECT_EQ(0, gpufs_release(path.c_str())) << gpufs_error_detail();
  std::vector<uint8_t> file(kSize);
  int h = open(path.c_str(), O_RDONLY);
  ASSERT_GE(h, 0);
  ASSERT_EQ((ssize_t)kSize, pread(h, file.data(), kSize, 0));
  close(h);
  EXPECT_TRUE(file == model) << "the file after gpufs_release: the GPU's page 2, the host's page 5";
  EXPECT_EQ(0, host_close(fd));
  cudaFree(dg);
  cudaFree(dr);
}


TEST_F(AcquireTest, EveryInstanceDrops)
{
  make(41);
  start(2);
  int fd0 = host_open(path), fd1 = host_open_on(path, 1);
  ASSERT_GE(fd0, 0);
  ASSERT_GE(fd1, 0) << gpufs_strerror(fd1);
  read_check(fd0, "instance 0");
  read_check(fd1, "instance 1");
  EXPECT_EQ((int64_t)(2 * kPages), gpufs_acquire(path.c_str())) << "both caches";
  read_check(fd0, "instance 0 refilled");
  read_check(fd1, "instance 1 refilled");
  cpu_write(40 * kPage, 1, 42);
  EXPECT_EQ(2, gpufs_acquire(path.c_str())) << "the page on each instance";
  EXPECT_EQ(1u, read_check(fd0, "instance 0 after the acquire"));
  EXPECT_EQ(1u, read_check(fd1, "instance 1 after the acquire"));
  EXPECT_EQ(0, host_close(fd0));
  EXPECT_EQ(0, host_close(fd1));
}

TEST_F(AcquireTest, BadInputs)
{
  EXPECT_EQ(-EINVAL, gpufs_acquire("/tmp")) << "not started";
  EXPECT_EQ(-EINVAL, gpufs_release("/tmp")) << "not started";
  make(51);
  start();
  EXPECT_EQ(-EFAULT, gpufs_acquire(nullptr));
  EXPECT_EQ(-EFAULT, gpufs_release(nullptr));
  EXPECT_EQ(-ENOENT, gpufs_acquire((dir.path + "/missing").c_str()));
  EXPECT_EQ(-ENOENT, gpufs_release((dir.path + "/missing").c_str()));
  EXPECT_EQ(-EISDIR, gpufs_acquire(dir.path.c_str()));
  EXPECT_EQ(0, gpufs_release(path.c_str())) << "nothing of it is open: nothing to write";
  EXPECT_EQ(cudaSuccess, cudaGetLastError()) << "no CUDA error left behind";
}

} // namespace
