/*
 * app.cu - a program built against an installed libgpufs, the way a user
 * builds one: with CMake (CMakeLists.txt: find_package(gpufs)) or with a
 * plain Makefile and pkg-config (Makefile).  It reads the file named on its
 * command line with gread on every block and compares the sum of its bytes
 * with the CPU's.
 *
 *   app FILE        exit 0 when the sums agree
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>
#include <gpufs.cuh>

#define CHUNK (64u << 10)

/* Every block reads its share of the file in CHUNK-byte greads and adds up
 * the bytes; *err ends at the lowest error. */
__global__ void __launch_bounds__(256, 2) sum_file(const char *path, unsigned long long size, unsigned char *bufs,
                                                   unsigned long long *sum, int *err)
{
  unsigned char *buf = bufs + (size_t)blockIdx.x * CHUNK;
  int fd = gopen(path, GPUFS_O_RDONLY);
  if (fd < 0) {
    if (threadIdx.x == 0)
      atomicMin(err, fd);
    return;
  }
  unsigned long long s = 0;
  for (unsigned long long off = (unsigned long long)blockIdx.x * CHUNK; off < size; off += (unsigned long long)gridDim.x * CHUNK) {
    ssize_t n = gread(fd, (int64_t)off, CHUNK, buf);
    if (n < 0) {
      if (threadIdx.x == 0)
        atomicMin(err, (int)n);
      break;
    }
    for (ssize_t i = threadIdx.x; i < n; i += blockDim.x)
      s += buf[i];
    __syncthreads();
  }
  atomicAdd(sum, s);
  int c = gclose(fd);
  if (threadIdx.x == 0 && c < 0)
    atomicMin(err, c);
}

int main(int argc, char **argv)
{
  /* one operand and --help: the programs' convention (benchlib/opts.h),
   * written out here because this program links libgpufs alone */
  static const char usage[] = "usage: app FILE   (sums FILE's bytes on the GPU through gread and on the CPU)\n";
  if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
    fputs(usage, stdout);
    return 0;
  }
  if (argc != 2 || argv[1][0] == '-') {
    fprintf(stderr, "app: %s\n%s", argc == 2 ? "unknown option (app takes a FILE only)" : "one FILE, please", usage);
    return 2;
  }
  printf("libgpufs %s (built against %s)\n", gpufs_version(NULL, NULL, NULL), GPUFS_VERSION_STRING);
  FILE *f = fopen(argv[1], "rb");
  if (!f) {
    perror(argv[1]);
    return 1;
  }
  unsigned long long size = 0, want = 0;
  for (int c; (c = fgetc(f)) != EOF; size++)
    want += (unsigned char)c;
  fclose(f);
  int rc = gpufs_start(NULL);
  if (rc == -ENODEV) {
    fprintf(stderr, "app needs a CUDA GPU and this machine has none usable (%s).\n", gpufs_error_detail());
    return 2;
  }
  if (rc) {
    fprintf(stderr, "gpufs_start: %s (%s)\n", gpufs_strerror(rc), gpufs_error_detail());
    return 1;
  }
  const unsigned blocks = 64;
  char *path;
  unsigned char *bufs;
  unsigned long long *sum, got = 0;
  int *err, e = 0;
  cudaMalloc(&path, strlen(argv[1]) + 1);
  cudaMemcpy(path, argv[1], strlen(argv[1]) + 1, cudaMemcpyHostToDevice);
  cudaMalloc(&bufs, (size_t)blocks * CHUNK);
  cudaMalloc(&sum, sizeof(*sum));
  cudaMalloc(&err, sizeof(*err));
  cudaMemset(sum, 0, sizeof(*sum));
  cudaMemset(err, 0, sizeof(*err));
  sum_file<<<blocks, 256>>>(path, size, bufs, sum, err);
  cudaError_t ce = cudaDeviceSynchronize();
  cudaMemcpy(&got, sum, sizeof(got), cudaMemcpyDeviceToHost);
  cudaMemcpy(&e, err, sizeof(e), cudaMemcpyDeviceToHost);
  cudaFree(path);
  cudaFree(bufs);
  cudaFree(sum);
  cudaFree(err);
  int stop = gpufs_stop();
  if (ce != cudaSuccess || e || stop) {
    fprintf(stderr, "failed: %s, %s, gpufs_stop %d\n", cudaGetErrorString(ce), e ? gpufs_strerror(e) : "no error", stop);
    return 1;
  }
  printf("%llu bytes, sum %llu on the GPU, %llu on the CPU: %s\n", size, got, want, got == want ? "equal" : "DIFFERENT");
  return got == want ? 0 : 1;
}
