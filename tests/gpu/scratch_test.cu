/*
 * scratch_test.cu - a kernel that makes every block-level call holds one
 * block scratch of shared memory, not one per entry point (the calls share
 * the library's gpufs_block_sh, group.cuh); and such a kernel runs: each
 * call on a file of known bytes gives the result the contract says.
 */
#include "libgpufs/device/group.cuh"
#include "tests/gpu/gpu_util.h"

/* Every block-level call once; out[k] the k-th call's result. */
static __global__ void every_block_call(gpufs_ref ref, const char *path, const char *gone,
                                        uint8_t *buf, int64_t *out)
{
  int fd = gopen(path, GPUFS_O_RDWR);
  int fd2 = gopen(ref, path, GPUFS_O_RDONLY);
  int64_t r[12];
  r[0] = fd;
  r[1] = fd2;
  r[2] = gread(fd2, 0, 100, buf);
  r[3] = gwrite(fd, 4096, 100, buf);
  r[4] = gfsync(fd);
  r[5] = gfadvise(fd, 0, 0, GPUFS_FADV_SEQUENTIAL);
  struct gstat st;
  r[6] = gfstat(fd, &st) == 0 ? st.st_size : -1;
  void *m = gmmap(NULL, 64, GPUFS_PROT_READ, GPUFS_MAP_SHARED, fd2, 0);
  r[7] = GPUFS_MAP_FAILED(m) ? GPUFS_MAP_ERRNO(m) : ((const uint8_t *)m)[3];
  r[8] = GPUFS_MAP_FAILED(m) ? -1 : gmsync(m, 64, GPUFS_MS_SYNC) * 10 + gmunmap(m, 64);
  r[9] = gftruncate(fd, 8192);
  r[10] = gunlink(gone) * 10 + gunlink(ref, gone);
  r[11] = gclose(fd2) * 10 + gclose(fd);
  if (threadIdx.x == 0)
    for (int k = 0; k < 12; k++) out[k] = r[k];
}

/* One block-level call: the shared memory one call needs. */
static __global__ void one_block_call(int fd, int64_t *out)
{
  int r = gclose(fd);
  if (threadIdx.x == 0) *out = r;
}

TEST(ScratchTest, OneScratchForEveryBlockCall)
{
  REQUIRE_GPU();
  cudaFuncAttributes all, one;
  ASSERT_EQ(cudaSuccess, cudaFuncGetAttributes(&all, every_block_call));
  ASSERT_EQ(cudaSuccess, cudaFuncGetAttributes(&one, one_block_call));
  EXPECT_EQ(one.sharedSizeBytes, all.sharedSizeBytes)
      << "every block-level call costs what one costs";
  EXPECT_GE(one.sharedSizeBytes, sizeof(struct gpufs_block_scratch));
  /* in this program (the whole test binary): the scratch first, nothing
   * laid out before it (see group.cuh) */
  EXPECT_EQ(sizeof(struct gpufs_block_scratch), all.sharedSizeBytes);

  tdir dir;
  std::string f = dir.make("every", 3 * 4096, 77), gone = dir.make("gone", 10, 1);
  struct gpufs_config c = small_config(4096, 8ull << 20);
  ASSERT_EQ(0, gpufs_start(&c)) << gpufs_error_detail();
  gpufs_ref ref;
  ASSERT_EQ(0, gpufs_get_ref(0, &ref));
  dpath dp(f), dg(gone);
  uint8_t *buf;
  int64_t *out, h[12];
  CUDA_OK(cudaMalloc(&buf, 4096));
  CUDA_OK(cudaMalloc(&out, sizeof(h)));
  every_block_call<<<1, 128>>>(ref, dp.d, dg.d, buf, out);
  CUDA_OK(cudaDeviceSynchronize());
  CUDA_OK(cudaMemcpy(h, out, sizeof(h), cudaMemcpyDeviceToHost));
  EXPECT_GE(h[0], 0);
  EXPECT_GE(h[1], 0);
  EXPECT_EQ(100, h[2]);
  EXPECT_EQ(100, h[3]);
  EXPECT_EQ(0, h[4]);
  EXPECT_EQ(0, h[5]);
  EXPECT_EQ(3 * 4096, h[6]);
  EXPECT_EQ(tpat(77, 3), h[7]);
  EXPECT_EQ(0, h[8]);
  EXPECT_EQ(0, h[9]);
  EXPECT_EQ(-ENOENT, h[10] % 10) << "the second unlink finds no file";
  EXPECT_EQ(0, h[10] / 10);
  EXPECT_EQ(0, h[11]);
  EXPECT_EQ(0, gpufs_stop());
  struct stat sb;
  ASSERT_EQ(0, stat(f.c_str(), &sb));
  EXPECT_EQ(8192, sb.st_size);
  EXPECT_NE(0, access(gone.c_str(), F_OK));
  /* bytes 4096..4195 hold bytes 0..99 of the file (gread then gwrite) */
  std::vector<uint8_t> back(100);
  FILE *fp = fopen(f.c_str(), "rb");
  ASSERT_NE(nullptr, fp);
  fseek(fp, 4096, SEEK_SET);
  ASSERT_EQ(100u, fread(back.data(), 1, 100, fp));
  fclose(fp);
  for (int i = 0; i < 100; i++) EXPECT_EQ(tpat(77, i), back[i]) << i;
  cudaFree(buf);
  cudaFree(out);
}
