/*
 * autopin_test.cu - automatic pins on a GPU (docs/api.md, "Automatic
 * pins"): a file opened again, or read again through one open, is
 * pinned in the background (a file read once is not; older pins are
 * released for room), in windows a kernel
 * uses as they come, and later misses copy from its
 * mapping; a descriptor open during the pin learns it from READ replies;
 * a budget smaller than the file pins nothing while
 * every block reads; the least recently used pin of a closed file is
 * released for a new one; two instances share one pin; a host truncation
 * of a pinned file; gpufs_stop with pins live.  Every byte read is checked
 * against the file's pattern.
 */
#include <chrono>
#include <thread>

#include <cuda/atomic>

#include "tests/gpu/gpu_util.h"

namespace {

/* The counters now (runtime-wide and summed over instances). */
gpufs_stats ap_stats()
{
  gpufs_stats s;
  memset(&s, 0, sizeof(s));
  EXPECT_EQ(0, gpufs_get_stats(&s));
  return s;
}

/* Wait at most 10 s for `files` automatic pins made (their first window
 * pinned: the whole of a file of 64 MiB or less) and `bytes` pinned by
 * them; the registrations then. */
uint64_t ap_wait_pins(uint64_t files, uint64_t bytes = 0)
{
  const auto t0 = std::chrono::steady_clock::now();
  gpufs_stats s = ap_stats();
  while ((s.pins_auto < files || s.pins_bytes < bytes) &&
         std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    s = ap_stats();
  }
  return s.reg_files;
}

class AutoPinTest : public StartedFixture {
protected:
  void start(uint64_t cache, uint64_t budget, uint32_t ninstances = 1)
  {
    struct gpufs_config c = small_config(4096, cache);
    c.register_max = budget;
    if (ninstances > 1) {
      c.ndevices = ninstances;
      for (uint32_t i = 0; i < ninstances; i++) c.devices[i] = 0;
    }
    ASSERT_EQ(0, gpufs_start(&c)) << gpufs_error_detail();
    started = true;
  }
  void read_all(const std::string &path, uint64_t size, uint64_t seed, unsigned blocks = 32,
                int inst = 0)
  {
    read_all_checked(path, size, seed, blocks, inst);
  }
};

/* A file read once is not pinned; its second open asks for the pin, made
 * in the background; the next read copies its misses from the mapping.
 * The cache holds a quarter of the file, so every pass misses. */
TEST_F(AutoPinTest, ASecondOpenPinsTheFile)
{
  const uint64_t size = 64ull << 20;
  const std::string f = dir.make("again", size, 71);
  start(16ull << 20, 1ull << 30);
  read_all(f, size, 71);
  EXPECT_EQ(0u, ap_stats().pins_auto) << "a file read once is not pinned";
  read_all(f, size, 71);
  ASSERT_EQ(1u, ap_wait_pins(1)) << "the second open asks for the pin";
  const gpufs_stats s1 = ap_stats();
  EXPECT_EQ(1u, s1.pins_auto);
  EXPECT_EQ(size, s1.reg_bytes);
  read_all(f, size, 71);
  const gpufs_stats s2 = ap_stats();
  EXPECT_GE(s2.reg_pages - s1.reg_pages, size / 4096 / 2) << "later misses copy from the mapping";
  EXPECT_EQ(0u, s2.pins_released);
}

/* A budget smaller than the file: nothing is pinned, every pass by 64
 * blocks reads right. */
TEST_F(AutoPinTest, ABudgetSmallerThanTheFilePinsNothing)
{
  const uint64_t size = 48ull << 20;
  const std::string f = dir.make("big", size, 72);
  start(16ull << 20, 12ull << 20);
  for (int pass = 0; pass < 3; pass++) read_all(f, size, 72, 64);
  gpufs_stats s = ap_stats();
  EXPECT_EQ(0u, s.reg_files);
  EXPECT_EQ(0u, s.reg_bytes);
  EXPECT_EQ(0u, s.reg_pages);
}

/* Room for one pin: the first file is pinned at its second open; the
 * second file's second open releases the first one's pin (its file
 * closed); both files still read right, the second from its mapping. */
TEST_F(AutoPinTest, TheLeastRecentlyUsedPinMakesRoom)
{
  const uint64_t size = 24ull << 20;
  const std::string a = dir.make("a", size, 73), b = dir.make("b", size, 74);
  start(8ull << 20, 40ull << 20);
  read_all(a, size, 73);
  read_all(a, size, 73);
  ASSERT_EQ(1u, ap_wait_pins(1));
  read_all(b, size, 74);
  EXPECT_EQ(0u, ap_stats().pins_released) << "a first open asks for no pin";
  read_all(b, size, 74);
  const auto t0 = std::chrono::steady_clock::now();
  while (ap_stats().pins_auto < 2 && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10))
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  gpufs_stats s = ap_stats();
  EXPECT_EQ(2u, s.pins_auto);
  EXPECT_EQ(1u, s.pins_released) << "a's pin made room for b's";
  EXPECT_EQ(1u, s.reg_files);
  EXPECT_LE(s.reg_bytes, 40ull << 20) << "never above the budget";
  /* a is opened again: its pin is asked for again and b's (closed, least
   * recently used) makes room */
  read_all(a, size, 73);
  const auto t1 = std::chrono::steady_clock::now();
  while (ap_stats().pins_auto < 3 && std::chrono::steady_clock::now() - t1 < std::chrono::seconds(10))
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  s = ap_stats();
  EXPECT_EQ(3u, s.pins_auto);
  EXPECT_EQ(2u, s.pins_released) << "b's pin made room for a's";
  EXPECT_EQ(1u, s.reg_files);
  EXPECT_EQ(3 * size, s.pins_bytes);
  const uint64_t before = s.reg_pages;
  read_all(a, size, 73);
  EXPECT_GT(ap_stats().reg_pages, before) << "a reads from its mapping";
}

/* Two instances on one GPU: instance 0 reads the file, instance 1's open
 * is the second: one pin, then both read from it. */
TEST_F(AutoPinTest, TwoInstancesShareOnePin)
{
  const uint64_t size = 32ull << 20;
  const std::string f = dir.make("shared", size, 75);
  start(8ull << 20, 1ull << 30, 2);
  read_all(f, size, 75, 32, 0);
  read_all(f, size, 75, 32, 1);
  ASSERT_EQ(1u, ap_wait_pins(1));
  gpufs_stats r0, r1, a0, a1;
  ASSERT_EQ(0, gpufs_get_instance_stats(0, &r0));
  ASSERT_EQ(0, gpufs_get_instance_stats(1, &r1));
  read_all(f, size, 75, 32, 0);
  read_all(f, size, 75, 32, 1);
  ASSERT_EQ(0, gpufs_get_instance_stats(0, &a0));
  ASSERT_EQ(0, gpufs_get_instance_stats(1, &a1));
  EXPECT_GT(a0.reg_pages, r0.reg_pages) << "instance 0 reads the mapping";
  EXPECT_GT(a1.reg_pages + a1.peer_hits, r1.reg_pages + r1.peer_hits) << "instance 1 too (or its peer)";
  EXPECT_EQ(1u, ap_stats().pins_auto);
}

/* The host truncates a pinned file: the next open finds it shorter and
 * reads the new, shorter file right (the pin retired). */
TEST_F(AutoPinTest, AHostTruncationOfAPinnedFile)
{
  const uint64_t size = 16ull << 20;
  const std::string f = dir.make("cut", size, 76);
  start(8ull << 20, 1ull << 30);
  read_all(f, size, 76);
  read_all(f, size, 76);
  ASSERT_EQ(1u, ap_wait_pins(1));
  ASSERT_EQ(0, truncate(f.c_str(), (off_t)(size / 2 + 100)));
  read_all(f, size / 2 + 100, 76);
  EXPECT_EQ(1u, ap_stats().reg_retired);
}

/* The host rewrites a pinned file in place, same size (a truncation, then
 * new bytes: the pinned pages are no longer the file's): the next open
 * sees the change, retires the pin, and reads the new bytes. */
TEST_F(AutoPinTest, AHostRewriteOfAPinnedFile)
{
  const uint64_t size = 16ull << 20;
  const std::string f = dir.make("rewrite", size, 79);
  start(8ull << 20, 1ull << 30);
  read_all(f, size, 79);
  read_all(f, size, 79);
  ASSERT_EQ(1u, ap_wait_pins(1));
  dir.make("rewrite", size, 80);
  read_all(f, size, 80);
  EXPECT_EQ(1u, ap_stats().reg_retired);
}

/* Automatic pins off (auto_pin 0): a file opened again stays on the
 * daemon path. */
TEST_F(AutoPinTest, OffPinsNothing)
{
  const uint64_t size = 8ull << 20;
  const std::string f = dir.make("off", size, 81);
  struct gpufs_config c = small_config(4096, 4ull << 20);
  c.auto_pin = 0;
  ASSERT_EQ(0, gpufs_start(&c)) << gpufs_error_detail();
  started = true;
  for (int i = 0; i < 3; i++) read_all(f, size, 81);
  const gpufs_stats s = ap_stats();
  EXPECT_EQ(0u, s.pins_auto);
  EXPECT_EQ(0u, s.reg_files);
  EXPECT_EQ(0u, s.reg_pages);
}

/* What a reading kernel checks against: the file's pattern seed, and
 * device counters of the bytes that differ and of the calls that failed. */
struct ap_check {
  uint64_t seed;
  unsigned long long *bad, *errs;
};

/* The whole block reads chunk bytes at off through fd into buf and counts
 * the bytes that differ from the pattern; false (a failed call counted)
 * when the call failed or came short.  Every thread calls it. */
static __device__ bool ap_read_chunk(int fd, uint64_t off, uint64_t chunk, uint8_t *buf, ap_check c)
{
  if (gread(fd, (int64_t)off, chunk, buf) != (ssize_t)chunk) {
    if (threadIdx.x == 0) atomicAdd(c.errs, 1ull);
    return false;
  }
  unsigned long long local = 0;
  for (uint64_t i = threadIdx.x; i < chunk; i += blockDim.x) local += buf[i] != tpat(c.seed, off + i);
  if (local) atomicAdd(c.bad, local);
  __syncthreads();
  return true;
}

/* One block holds the file open across the pin: it reads the first half,
 * the host waits for the pin (at most 5 s), then the block reads the rest.
 * Every byte is right either way; the test records whether the pin came
 * while the kernel ran and whether the open descriptor used it. */
static __global__ void ap_two_halves(int fd, uint64_t size, unsigned *go, uint8_t *buf, ap_check c)
{
  const uint64_t chunk = 256u << 10;
  for (uint64_t off = 0; off < size; off += chunk) {
    if (off == size / 2) {
      if (threadIdx.x == 0)
        /* relaxed: a go signal; nothing is read through it */
        while (cuda::atomic_ref<unsigned, cuda::thread_scope_system>(*go).load(cuda::memory_order_relaxed) == 0)
          __nanosleep(100000);
      __syncthreads();
    }
    if (!ap_read_chunk(fd, off, chunk, buf, c)) return;
  }
}

TEST_F(AutoPinTest, AnOpenDescriptorLearnsThePinFromReadReplies)
{
  const uint64_t size = 32ull << 20;
  const std::string f = dir.make("midway", size, 77);
  start(8ull << 20, 1ull << 30);
  read_all(f, size, 77);
  const int fd = host_open(f); /* the second open: the pin is asked for */
  ASSERT_GE(fd, 0);
  unsigned *go = nullptr, *dgo = nullptr;
  CUDA_OK(cudaHostAlloc((void **)&go, sizeof(unsigned), cudaHostAllocMapped));
  *go = 0;
  CUDA_OK(cudaHostGetDevicePointer((void **)&dgo, go, 0));
  uint8_t *buf = nullptr;
  unsigned long long *cnt = nullptr, h[2] = {0, 0};
  CUDA_OK(cudaMalloc(&buf, 256u << 10));
  CUDA_OK(cudaMalloc(&cnt, sizeof(h)));
  CUDA_OK(cudaMemset(cnt, 0, sizeof(h)));
  const uint64_t before = ap_stats().reg_pages;
  ap_two_halves<<<1, 256>>>(fd, size, dgo, buf, ap_check{77, cnt, cnt + 1});
  const uint64_t pinned = ap_wait_pins(1); /* while the kernel waits for go */
  cuda::atomic_ref<unsigned, cuda::thread_scope_system>(*go).store(1u, cuda::memory_order_relaxed);
  CUDA_OK(cudaDeviceSynchronize());
  CUDA_OK(cudaMemcpy(h, cnt, sizeof(h), cudaMemcpyDeviceToHost));
  EXPECT_EQ(0ull, h[0]) << "bytes that differ";
  EXPECT_EQ(0ull, h[1]) << "calls that failed";
  EXPECT_EQ(0, host_close(fd));
  const uint64_t used = ap_stats().reg_pages - before;
  RecordProperty("pinned_while_kernel_ran", (int)pinned);
  RecordProperty("reg_pages_of_open_descriptor", (int)used);
  printf("[ note     ] pin made while the kernel ran: %s; pages the open descriptor copied from it: %llu\n",
         pinned ? "yes" : "no", (unsigned long long)used);
  if (pinned) EXPECT_GT(used, 0u) << "the open descriptor learns the pin from its READ replies";
  EXPECT_EQ(1u, ap_wait_pins(1));
  cudaFreeHost(go);
  cudaFree(buf);
  cudaFree(cnt);
}

/* Every block reads its chunks of [0, size) through fd `passes` times,
 * checking every byte. */
static __global__ void ap_read_passes(int fd, uint64_t size, int passes, uint8_t *buf, ap_check c)
{
  const uint64_t chunk = 256u << 10;
  uint8_t *mine = buf + blockIdx.x * chunk;
  for (int pass = 0; pass < passes; pass++)
    for (uint64_t off = blockIdx.x * chunk; off < size; off += gridDim.x * chunk)
      if (!ap_read_chunk(fd, off, chunk, mine, c)) return;
}

/* One open, the file read twice through a cache a quarter of its size:
 * the second pass reads pages that went to the GPU before, which earns
 * the file its pin with no second open; the next open reads from it. */
TEST_F(AutoPinTest, ReadingAFileAgainInOneOpenPinsIt)
{
  const uint64_t size = 32ull << 20;
  const std::string f = dir.make("twice", size, 84);
  start(8ull << 20, 1ull << 30);
  const int fd = host_open(f);
  ASSERT_GE(fd, 0);
  uint8_t *buf = nullptr;
  unsigned long long *cnt = nullptr, h[2] = {0, 0};
  CUDA_OK(cudaMalloc(&buf, 16 * (256u << 10)));
  CUDA_OK(cudaMalloc(&cnt, sizeof(h)));
  CUDA_OK(cudaMemset(cnt, 0, sizeof(h)));
  ap_read_passes<<<16, 256>>>(fd, size, 1, buf, ap_check{84, cnt, cnt + 1});
  CUDA_OK(cudaDeviceSynchronize());
  EXPECT_EQ(0u, ap_stats().pins_auto) << "read once: no pin";
  ap_read_passes<<<16, 256>>>(fd, size, 2, buf, ap_check{84, cnt, cnt + 1});
  CUDA_OK(cudaDeviceSynchronize());
  CUDA_OK(cudaMemcpy(h, cnt, sizeof(h), cudaMemcpyDeviceToHost));
  EXPECT_EQ(0ull, h[0]) << "bytes that differ";
  EXPECT_EQ(0ull, h[1]) << "calls that failed";
  EXPECT_EQ(0, host_close(fd));
  ASSERT_EQ(1u, ap_wait_pins(1)) << "read again in one open: pinned";
  const uint64_t before = ap_stats().reg_pages;
  read_all(f, size, 84);
  EXPECT_GT(ap_stats().reg_pages, before) << "the next open reads from the mapping";
  cudaFree(buf);
  cudaFree(cnt);
}

/* gpufs_stop with pins live releases them and returns 0 (TearDown checks
 * the stop); a new start pins again. */
TEST_F(AutoPinTest, StopWithPinsLive)
{
  const uint64_t size = 8ull << 20;
  const std::string f = dir.make("live", size, 78);
  start(4ull << 20, 1ull << 30);
  read_all(f, size, 78);
  read_all(f, size, 78);
  ASSERT_EQ(1u, ap_wait_pins(1));
  EXPECT_EQ(0, gpufs_stop());
  started = false;
  start(4ull << 20, 1ull << 30);
  EXPECT_EQ(0u, ap_stats().reg_files) << "a new start begins with no pin";
  read_all(f, size, 78);
}

/* A file opened again is pinned at once, in 64 MiB windows, while 64
 * blocks read it (every byte checked; misses in the pinned prefix may
 * copy from the mapping mid-kernel); the next read copies its misses from
 * the whole mapping.  A second file's second open releases the first
 * one's pin for room. */
TEST_F(AutoPinTest, ASecondOpenPinsInWindowsWhileTheFileIsRead)
{
  const uint64_t size = (160ull << 20) + 4096 * 3 + 17, pinned = (size + 4095) & ~4095ull;
  const std::string f = dir.make("first", size, 82), g = dir.make("later", 64ull << 20, 83);
  struct gpufs_config c = small_config(4096, 32ull << 20);
  c.register_max = pinned + (32ull << 20);
  ASSERT_EQ(0, gpufs_start(&c)) << gpufs_error_detail();
  started = true;
  read_all(f, size, 82, 64);
  read_all(f, size, 82, 64);
  ASSERT_EQ(1u, ap_wait_pins(1, pinned)) << "the second open pins the file";
  gpufs_stats s1 = ap_stats();
  EXPECT_EQ(pinned, s1.reg_bytes);
  read_all(f, size, 82, 64);
  gpufs_stats s2 = ap_stats();
  EXPECT_GE(s2.reg_pages - s1.reg_pages, size / 4096 / 2) << "later misses copy from the mapping";
  read_all(g, 64ull << 20, 83);
  EXPECT_EQ(1u, ap_stats().reg_files) << "a first open asks for no pin";
  read_all(g, 64ull << 20, 83);
  EXPECT_EQ(1u, ap_wait_pins(2));
  EXPECT_EQ(2u, ap_stats().pins_auto) << "the second open earns it";
  EXPECT_EQ(1u, ap_stats().pins_released) << "the first file's pin made room";
  read_all(g, 64ull << 20, 83);
}

}  // namespace
