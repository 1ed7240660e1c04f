/*
 * host_calls_test.cu - what every public host call leaves behind (issue
 * 35): no CUDA error of its own for the program, failed or not, while an
 * error the program had pending stays its own; and a configuration that
 * sets only some fields (a small cache) gets defaults that fit it.
 */
#include <sys/stat.h>
#include <sys/types.h>

#include "tests/gpu/gpu_util.h"

/* The calling thread's CUDA error, read and cleared, as a name. */
static std::string last_error(void) { return cudaGetErrorName(cudaGetLastError()); }

class HostCallsTest : public ::testing::Test {
protected:
  tdir dir;
  void TearDown() override
  {
    gpufs_stop();
    cudaGetLastError();
  }
};

/* Each class of call, failing and succeeding: start, register,
 * unregister, pread (pinned and pageable buffers, a missing file), stats,
 * sync, stop.  After each, the runtime's last error is cudaSuccess. */
TEST_F(HostCallsTest, NoCallLeavesACudaError)
{
  REQUIRE_GPU();
  ASSERT_EQ("cudaSuccess", last_error());
  size_t free_b = 0, total_b = 0;
  CUDA_OK(cudaMemGetInfo(&free_b, &total_b));
  struct gpufs_config c = small_config(65536, 0);
  c.cache_size = ((uint64_t)total_b * 2) & ~(uint64_t)65535; /* more than the GPU holds */
  EXPECT_EQ(-ENOMEM, gpufs_start(&c)) << gpufs_error_detail();
  EXPECT_EQ("cudaSuccess", last_error()) << "after a start refused for memory";
  c.cache_size = 4096; /* fewer than 4 pages: refused before any CUDA call */
  EXPECT_EQ(-EINVAL, gpufs_start(&c));
  EXPECT_EQ("cudaSuccess", last_error());

  c = small_config(4096, 16ull << 20);
  ASSERT_EQ(0, gpufs_start(&c)) << gpufs_error_detail();
  EXPECT_EQ("cudaSuccess", last_error()) << "after a start";
  const std::string f = dir.make("calls", 1u << 20, 41);
  const std::string missing = dir.path + "/missing";
  EXPECT_EQ(-ENOENT, gpufs_register(missing.c_str()));
  EXPECT_EQ("cudaSuccess", last_error()) << "after a failed register";
  EXPECT_EQ(0, gpufs_register(f.c_str())) << gpufs_error_detail();
  EXPECT_EQ(-EEXIST, gpufs_register(f.c_str()));
  EXPECT_EQ("cudaSuccess", last_error()) << "after register";
  EXPECT_EQ(0, gpufs_unregister(f.c_str()));
  EXPECT_EQ(-EINVAL, gpufs_unregister(f.c_str()));
  EXPECT_EQ("cudaSuccess", last_error()) << "after unregister";

  std::vector<uint8_t> pageable(1u << 20);
  uint8_t *pin = nullptr;
  CUDA_OK(cudaHostAlloc((void **)&pin, 1u << 20, cudaHostAllocDefault));
  EXPECT_EQ((ssize_t)(1u << 20), gpufs_pread(f.c_str(), pageable.data(), 1u << 20, 0));
  EXPECT_EQ("cudaSuccess", last_error()) << "after a pread into pageable memory";
  EXPECT_EQ((ssize_t)(1u << 20), gpufs_pread(f.c_str(), pin, 1u << 20, 0));
  for (size_t i = 0; i < (1u << 20); i++)
    if (pin[i] != tpat(41, i) || pageable[i] != tpat(41, i)) {
      ADD_FAILURE() << "byte " << i << " of the file read wrong";
      break;
    }
  EXPECT_EQ(-ENOENT, gpufs_pread(missing.c_str(), pin, 100, 0));
  EXPECT_EQ(-EFAULT, gpufs_pread(f.c_str(), NULL, 100, 0));
  EXPECT_EQ("cudaSuccess", last_error()) << "after preads";
  cudaFreeHost(pin);

  struct gpufs_stats st;
  EXPECT_EQ(0, gpufs_get_stats(&st));
  EXPECT_EQ(-EINVAL, gpufs_get_stats(NULL));
  EXPECT_EQ(-EINVAL, gpufs_get_instance_stats(3, &st));
  EXPECT_EQ(0, gpufs_sync());
  EXPECT_EQ("cudaSuccess", last_error()) << "after stats and sync";
  EXPECT_EQ(0, gpufs_stop());
  EXPECT_EQ(-EINVAL, gpufs_sync()) << "not started";
  EXPECT_EQ("cudaSuccess", last_error()) << "after stop";
}

/* An error the program had pending before a call is the program's: the
 * call leaves it for the program's own cudaGetLastError. */
TEST_F(HostCallsTest, TheProgramsPendingErrorStays)
{
  REQUIRE_GPU();
  void *p = nullptr;
  ASSERT_NE(cudaSuccess, cudaMalloc(&p, (size_t)1 << 52)); /* not sticky: only pending */
  struct gpufs_config c = small_config(4096, 16ull << 20);
  ASSERT_EQ(0, gpufs_start(&c)) << gpufs_error_detail();
  struct gpufs_stats st;
  EXPECT_EQ(-EINVAL, gpufs_get_stats(NULL));
  EXPECT_EQ(0, gpufs_get_stats(&st));
  EXPECT_EQ(0, gpufs_stop());
  EXPECT_EQ("cudaErrorMemoryAllocation", last_error());
  EXPECT_EQ("cudaSuccess", last_error());
}

/* A program that sets only a small cache (8 MiB of 64 KiB pages: 128
 * frames, too few for 64 rings of 4) starts with the rings and staging
 * chosen for it and reads a file 4x its cache correctly; the same cache
 * with 64 rings asked for explicitly is refused, naming the rule. */
TEST_F(HostCallsTest, SmallCacheWithDefaultRings)
{
  REQUIRE_GPU();
  struct gpufs_config c;
  gpufs_config_default(&c);
  c.cache_size = 8ull << 20;
  EXPECT_EQ(32u, gpufs_config_rings(&c));
  EXPECT_EQ(256ull * c.page_size, gpufs_config_staging(&c)) << "two slots a frame";
  ASSERT_EQ(0, gpufs_start(&c)) << gpufs_error_detail();
  const uint64_t size = 32ull << 20;
  const std::string f = dir.make("small-cache", size, 43);
  read_all_checked(f, size, 43, 16);
  EXPECT_EQ(0, gpufs_stop());
  c.nrings = 64;
  EXPECT_EQ(-EINVAL, gpufs_start(&c));
  EXPECT_NE(nullptr, strstr(gpufs_error_detail(), "nrings")) << gpufs_error_detail();
  EXPECT_EQ("cudaSuccess", last_error());
}
