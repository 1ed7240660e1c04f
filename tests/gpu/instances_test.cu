/*
 * instances_test.cu - several instances in one process, served by one
 * daemon: two instances on one GPU (GPUFS_DEVICES=0,0) stand for two GPUs.
 * Each instance reads every byte right; descriptors carry their instance;
 * close-to-open between instances; writers of disjoint grains on both
 * instances; gfsync, gpufs_sync and gpufs_stop per instance and for all;
 * refs and bad configurations give clear errors.
 */
#include <vector>

#include "tests/gpu/instances_util.h"

/* One block opens path on ref's instance (or the default with use_ref
 * false), reads [0, size) into buf, leaves descriptor and result. */
static __global__ void inst_read_all(gpufs_ref ref, bool use_ref, const char *path, uint64_t size,
                                     uint8_t *buf, int64_t *out)
{
  int fd = use_ref ? gopen(ref, path, GPUFS_O_RDONLY) : gopen(path, GPUFS_O_RDONLY);
  ssize_t r = fd < 0 ? fd : gread(fd, 0, size, buf);
  int c = fd < 0 ? 0 : gclose(fd);
  if (threadIdx.x == 0) {
    out[0] = fd;
    out[1] = r;
    out[2] = c;
  }
}

/* Every warp writes the grains g of [0, size) with g % 2 == parity (64-byte
 * grains, src's bytes) through one descriptor of ref's instance, then
 * gfsync if fsync, then gclose by the block. */
static __global__ void inst_write_grains(gpufs_ref ref, const char *path, uint64_t size, int parity,
                                         const uint8_t *src, bool fsync, int64_t *out)
{
  __shared__ int fd;
  int f = gopen(ref, path, GPUFS_O_RDWR);
  if (threadIdx.x == 0) fd = f;
  __syncthreads();
  if (fd < 0) {
    if (threadIdx.x == 0) out[0] = fd;
    return;
  }
  const uint32_t warp = threadIdx.x / 32, nwarps = blockDim.x / 32;
  int64_t bad = 0;
  for (uint64_t g = 2 * warp + (uint64_t)parity; g * GPUFS_DIRTY_GRAIN < size; g += 2 * nwarps) {
    ssize_t w = gwrite_warp(fd, (int64_t)(g * GPUFS_DIRTY_GRAIN), GPUFS_DIRTY_GRAIN,
                            src + g * GPUFS_DIRTY_GRAIN);
    bad += w != (ssize_t)GPUFS_DIRTY_GRAIN;
  }
  __syncthreads();
  int s = fsync ? gfsync(fd) : 0;
  int c = gclose(fd);
  if (threadIdx.x % 32 == 0 && bad) atomicAdd((unsigned long long *)&out[1], (unsigned long long)bad);
  if (threadIdx.x == 0) {
    out[0] = fd;
    out[2] = s;
    out[3] = c;
  }
}

/* One block opens path read-write on ref's instance and writes size bytes
 * of src at 0, leaving the file open (the descriptor in out[0]). */
static __global__ void inst_write_open(gpufs_ref ref, const char *path, uint64_t size,
                                       const uint8_t *src, int64_t *out)
{
  int fd = gopen(ref, path, GPUFS_O_RDWR);
  ssize_t w = fd < 0 ? fd : gwrite(fd, 0, size, src);
  if (threadIdx.x == 0) {
    out[0] = fd;
    out[1] = w;
  }
}

static __global__ void inst_raw(int fd, uint8_t *buf, int64_t *out)
{
  ssize_t r = gread(fd, 0, 16, buf);
  int c = gclose(fd);
  if (threadIdx.x == 0) {
    out[0] = r;
    out[1] = c;
  }
}

class InstancesTest : public InstancesFixture {
protected:
  /* Read the whole file on ref's instance; checks every byte against
   * expect.  The descriptor is returned. */
  int64_t read_check(gpufs_ref r, bool use_ref, const std::string &path,
                     const std::vector<uint8_t> &expect)
  {
    dpath dp(path);
    uint8_t *buf;
    int64_t *out, h[3] = {0, 0, 0};
    EXPECT_EQ(cudaSuccess, cudaMalloc(&buf, expect.size() + 1));
    EXPECT_EQ(cudaSuccess, cudaMalloc(&out, sizeof(h)));
    inst_read_all<<<1, 256>>>(r, use_ref, dp.d, expect.size(), buf, out);
    EXPECT_EQ(cudaSuccess, cudaDeviceSynchronize());
    std::vector<uint8_t> got(expect.size());
    cudaMemcpy(h, out, sizeof(h), cudaMemcpyDeviceToHost);
    cudaMemcpy(got.data(), buf, expect.size(), cudaMemcpyDeviceToHost);
    cudaFree(buf);
    cudaFree(out);
    EXPECT_GE(h[0], 0) << gpufs_strerror((int)h[0]);
    EXPECT_EQ((int64_t)expect.size(), h[1]);
    EXPECT_EQ(0, h[2]);
    size_t bad = 0;
    for (size_t i = 0; i < expect.size(); i++) bad += got[i] != expect[i];
    EXPECT_EQ(0u, bad) << "bytes that differ from the file";
    return h[0];
  }
};

TEST_F(InstancesTest, TwoOnOneGpuBothReadEveryByte)
{
  const uint64_t size = (8u << 20) + 123;
  std::string f = dir.make("shared", size, 41);
  std::vector<uint8_t> want = file_bytes(f);
  start(2);
  ASSERT_EQ(2, gpufs_instance_count());
  EXPECT_EQ(0, gpufs_instance_device(0));
  EXPECT_EQ(0, gpufs_instance_device(1));
  int64_t fa = read_check(ref(0), true, f, want);
  int64_t fb = read_check(ref(1), true, f, want);
  /* descriptors name their instance; instance 0's are the plain ones */
  EXPECT_LT(fa, 1 << 16);
  EXPECT_GE(fb, 1 << 16);
  struct gpufs_stats a, b, all;
  ASSERT_EQ(0, gpufs_get_instance_stats(0, &a));
  ASSERT_EQ(0, gpufs_get_instance_stats(1, &b));
  ASSERT_EQ(0, gpufs_get_stats(&all));
  /* each instance has its own cache; the second read its pages from the
   * first's (peer_test.cu has the details) */
  EXPECT_GE(a.bytes_read, size);
  EXPECT_EQ(0u, b.bytes_read) << "a " << a.misses << " misses " << a.peer_hits << " peer; b "
                              << b.misses << " misses " << b.peer_hits << " peer";
  EXPECT_EQ(a.misses, b.misses);
  EXPECT_EQ(a.misses, b.peer_hits);
  EXPECT_EQ(a.bytes_read + b.bytes_read, all.bytes_read);
  EXPECT_EQ(a.misses + b.misses, all.misses);
  EXPECT_EQ(a.requests + b.requests, all.requests);
  EXPECT_EQ(a.gopens + b.gopens, all.gopens);
  EXPECT_EQ(1u, a.gopens);
  EXPECT_EQ(1u, b.gopens);
  /* a second read on instance 1 hits its cache */
  read_check(ref(1), true, f, want);
  struct gpufs_stats b2;
  ASSERT_EQ(0, gpufs_get_instance_stats(1, &b2));
  EXPECT_EQ(b.bytes_read, b2.bytes_read);
  EXPECT_EQ(b.misses, b2.misses) << b2.hits << " hits";
  EXPECT_GT(b2.hits, b.hits);
}

TEST_F(InstancesTest, PlainGopenUsesTheFirstInstance)
{
  std::string f = dir.make("plain", 100000, 5);
  std::vector<uint8_t> want = file_bytes(f);
  start(2);
  int64_t fd = read_check(ref(0), false, f, want);
  EXPECT_LT(fd, 1 << 16);
  struct gpufs_stats a, b;
  ASSERT_EQ(0, gpufs_get_instance_stats(0, &a));
  ASSERT_EQ(0, gpufs_get_instance_stats(1, &b));
  EXPECT_EQ(1u, a.gopens);
  EXPECT_EQ(0u, b.gopens);
  EXPECT_EQ(0u, b.requests);
}

TEST_F(InstancesTest, CloseToOpenAcrossInstances)
{
  const uint64_t size = 256u << 10;
  std::string f = dir.make("c2o", size, 3);
  std::vector<uint8_t> old = file_bytes(f);
  start(2);
  read_check(ref(1), true, f, old); /* instance 1 caches the old bytes */
  /* instance 0 rewrites every grain and closes (write-back, no fsync) */
  std::vector<uint8_t> neu(size);
  for (uint64_t i = 0; i < size; i++) neu[i] = tpat(99, i);
  uint8_t *src;
  int64_t *out, h[4] = {0, 0, 0, 0};
  CUDA_OK(cudaMalloc(&src, size));
  CUDA_OK(cudaMemcpy(src, neu.data(), size, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMalloc(&out, sizeof(h)));
  CUDA_OK(cudaMemset(out, 0, sizeof(h)));
  dpath dp(f);
  for (int parity = 0; parity < 2; parity++) {
    inst_write_grains<<<1, 256>>>(ref(0), dp.d, size, parity, src, false, out);
    CUDA_OK(cudaDeviceSynchronize());
    CUDA_OK(cudaMemcpy(h, out, sizeof(h), cudaMemcpyDeviceToHost));
    ASSERT_GE(h[0], 0);
    EXPECT_EQ(0, h[1]);
    EXPECT_EQ(0, h[3]);
  }
  EXPECT_EQ(neu, file_bytes(f));
  /* the next open on instance 1 sees instance 0's bytes, not its cache */
  read_check(ref(1), true, f, neu);
  /* and instance 0, which wrote them, reads them too */
  read_check(ref(0), true, f, neu);
  cudaFree(src);
  cudaFree(out);
}

TEST_F(InstancesTest, DisjointGrainWritersOnBothInstances)
{
  const uint64_t size = 512u << 10;
  std::string f = dir.make("grains", size, 8);
  start(2);
  std::vector<uint8_t> neu(size);
  for (uint64_t i = 0; i < size; i++) neu[i] = tpat(1234, i);
  uint8_t *src;
  int64_t *out;
  CUDA_OK(cudaMalloc(&src, size));
  CUDA_OK(cudaMemcpy(src, neu.data(), size, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMalloc(&out, 8 * sizeof(int64_t)));
  CUDA_OK(cudaMemset(out, 0, 8 * sizeof(int64_t)));
  dpath dp(f);
  cudaStream_t s[2];
  CUDA_OK(cudaStreamCreateWithFlags(&s[0], cudaStreamNonBlocking));
  CUDA_OK(cudaStreamCreateWithFlags(&s[1], cudaStreamNonBlocking));
  /* both at once: even grains by instance 0, odd grains by instance 1 */
  inst_write_grains<<<1, 256, 0, s[0]>>>(ref(0), dp.d, size, 0, src, true, out);
  inst_write_grains<<<1, 256, 0, s[1]>>>(ref(1), dp.d, size, 1, src, false, out + 4);
  CUDA_OK(cudaDeviceSynchronize());
  int64_t h[8];
  CUDA_OK(cudaMemcpy(h, out, sizeof(h), cudaMemcpyDeviceToHost));
  for (int k = 0; k < 2; k++) {
    EXPECT_GE(h[4 * k], 0);
    EXPECT_EQ(0, h[4 * k + 1]);
    EXPECT_EQ(0, h[4 * k + 2]); /* instance 0's gfsync */
    EXPECT_EQ(0, h[4 * k + 3]);
  }
  std::vector<uint8_t> got = file_bytes(f);
  ASSERT_EQ(size, got.size());
  size_t bad = 0;
  for (uint64_t i = 0; i < size; i++) bad += got[i] != neu[i];
  EXPECT_EQ(0u, bad) << "bytes lost between the two instances' write-backs";
  cudaStreamDestroy(s[0]);
  cudaStreamDestroy(s[1]);
  cudaFree(src);
  cudaFree(out);
}

/* Files a and b, size bytes each, open and dirty (new bytes na, nb), a on
 * instance 0 and b on instance 1: nothing written back yet. */
struct TwoDirtyFiles {
  std::string fa, fb;
  std::vector<uint8_t> na, nb;
};

static void two_dirty_files(tdir &dir, uint64_t size, TwoDirtyFiles *w, gpufs_ref r0, gpufs_ref r1)
{
  w->fa = dir.make("a", size, 1);
  w->fb = dir.make("b", size, 2);
  w->na.resize(size);
  w->nb.resize(size);
  for (uint64_t i = 0; i < size; i++) w->na[i] = tpat(71, i), w->nb[i] = tpat(72, i);
  uint8_t *sa, *sb;
  int64_t *out, h[8];
  CUDA_OK(cudaMalloc(&sa, size));
  CUDA_OK(cudaMalloc(&sb, size));
  CUDA_OK(cudaMemcpy(sa, w->na.data(), size, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(sb, w->nb.data(), size, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMalloc(&out, sizeof(h)));
  dpath da(w->fa), db(w->fb);
  inst_write_open<<<1, 256>>>(r0, da.d, size, sa, out);
  inst_write_open<<<1, 256>>>(r1, db.d, size, sb, out + 4);
  CUDA_OK(cudaDeviceSynchronize());
  CUDA_OK(cudaMemcpy(h, out, sizeof(h), cudaMemcpyDeviceToHost));
  cudaFree(sa);
  cudaFree(sb);
  cudaFree(out);
  ASSERT_GE(h[0], 0);
  EXPECT_EQ((int64_t)size, h[1]);
  ASSERT_GE(h[4], 1 << 16) << "instance 1's descriptor";
  EXPECT_EQ((int64_t)size, h[5]);
  EXPECT_NE(w->na, file_bytes(w->fa)) << "still only in the caches";
  EXPECT_NE(w->nb, file_bytes(w->fb));
}

TEST_F(InstancesTest, GpufsSyncWritesBackEveryInstance)
{
  start(2);
  TwoDirtyFiles w;
  two_dirty_files(dir, 64u << 10, &w, ref(0), ref(1));
  struct gpufs_stats st;
  ASSERT_EQ(0, gpufs_get_stats(&st));
  EXPECT_GE(st.dirty, 2u);
  ASSERT_EQ(0, gpufs_sync()) << gpufs_error_detail();
  EXPECT_EQ(w.na, file_bytes(w.fa));
  EXPECT_EQ(w.nb, file_bytes(w.fb));
  ASSERT_EQ(0, gpufs_get_stats(&st));
  EXPECT_EQ(0u, st.dirty);
}

TEST_F(InstancesTest, StopWritesBackEveryInstance)
{
  start(2);
  TwoDirtyFiles w;
  two_dirty_files(dir, 96u << 10, &w, ref(0), ref(1));
  started = false;
  EXPECT_EQ(0, gpufs_stop()) << gpufs_error_detail();
  EXPECT_EQ(0, gpufs_instance_count());
  EXPECT_EQ(w.na, file_bytes(w.fa));
  EXPECT_EQ(w.nb, file_bytes(w.fb));
}

TEST_F(InstancesTest, BadRefsAndDescriptors)
{
  std::string f = dir.make("x", 4096, 1);
  start(2);
  gpufs_ref r;
  EXPECT_EQ(-EINVAL, gpufs_get_ref(2, &r));
  EXPECT_EQ(-EINVAL, gpufs_get_ref(-1, &r));
  EXPECT_EQ(-EINVAL, gpufs_get_ref(0, nullptr));
  EXPECT_EQ(-EINVAL, gpufs_instance_device(2));
  struct gpufs_stats st;
  EXPECT_EQ(-EINVAL, gpufs_get_instance_stats(2, &st));
  EXPECT_EQ(-EINVAL, gpufs_get_instance_stats(0, nullptr));
  /* a ref of an instance that does not run: -ENODEV, no hang */
  dpath dp(f);
  int64_t *out, h[3];
  uint8_t *buf;
  CUDA_OK(cudaMalloc(&out, sizeof(h)));
  CUDA_OK(cudaMalloc(&buf, 4096));
  inst_read_all<<<1, 64>>>(gpufs_ref{5}, true, dp.d, 16, buf, out);
  CUDA_OK(cudaDeviceSynchronize());
  CUDA_OK(cudaMemcpy(h, out, sizeof(h), cudaMemcpyDeviceToHost));
  EXPECT_EQ(-ENODEV, h[0]);
  inst_read_all<<<1, 64>>>(gpufs_ref{1u << 30}, true, dp.d, 16, buf, out);
  CUDA_OK(cudaDeviceSynchronize());
  CUDA_OK(cudaMemcpy(h, out, sizeof(h), cudaMemcpyDeviceToHost));
  EXPECT_EQ(-ENODEV, h[0]);
  /* descriptors whose instance bits name no instance: -EBADF */
  for (int fd : {2 << 16, 7 << 16, (1 << 16) + 4000, 0x7fff0000}) {
    inst_raw<<<1, 64>>>(fd, buf, out);
    CUDA_OK(cudaDeviceSynchronize());
    CUDA_OK(cudaMemcpy(h, out, 2 * sizeof(int64_t), cudaMemcpyDeviceToHost));
    EXPECT_EQ(-EBADF, h[0]) << fd;
    EXPECT_EQ(-EBADF, h[1]) << fd;
  }
  cudaFree(out);
  cudaFree(buf);
}

TEST_F(InstancesTest, BadDeviceLists)
{
  int ndev = 0;
  ASSERT_EQ(cudaSuccess, cudaGetDeviceCount(&ndev));
  struct gpufs_config c = small_config(4096, 16ull << 20);
  c.ndevices = 2;
  c.devices[0] = 0;
  c.devices[1] = ndev; /* no such device */
  EXPECT_EQ(-EINVAL, gpufs_start(&c));
  EXPECT_NE(nullptr, strstr(gpufs_error_detail(), "devices"));
  EXPECT_EQ(0, gpufs_instance_count());
  c.ndevices = GPUFS_MAX_INSTANCES + 1;
  EXPECT_EQ(-EINVAL, gpufs_start(&c));
  c.ndevices = 1;
  c.devices[0] = -1;
  EXPECT_EQ(-EINVAL, gpufs_start(&c));
  /* and a good list after the bad ones starts */
  c.devices[0] = 0;
  ASSERT_EQ(0, gpufs_start(&c)) << gpufs_error_detail();
  started = true;
  EXPECT_EQ(1, gpufs_instance_count());
}

TEST_F(InstancesTest, EnvironmentListsDevices)
{
  std::string f = dir.make("env", 50000, 9);
  std::vector<uint8_t> want = file_bytes(f);
  setenv("GPUFS_DEVICES", "0, 0", 1);
  setenv("GPUFS_CACHE_SIZE", "32M", 1);
  setenv("GPUFS_STAGING_SIZE", "8M", 1);
  int rc = gpufs_start(NULL);
  unsetenv("GPUFS_DEVICES");
  unsetenv("GPUFS_CACHE_SIZE");
  unsetenv("GPUFS_STAGING_SIZE");
  ASSERT_EQ(0, rc) << gpufs_error_detail();
  started = true;
  EXPECT_EQ(2, gpufs_instance_count());
  read_check(ref(1), true, f, want);
}
