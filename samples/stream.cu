/*
 * stream.cu - the main job (`make run`): write a 1 GiB file of known
 * pseudo-random content, read all of it with gread from every SM, check
 * every byte against what the CPU reads from the file, and print the
 * throughput beside the pinned-cudaMemcpy ceiling and the naive baseline
 * (one read() + one cudaMemcpy) measured in the same run.
 *
 *   stream [--size SIZE] [--dir DIR]       exit 0 only if every byte matched
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>

#include <cuda_runtime.h>

#include "benchlib/baselines.h"
#include "benchlib/datafile.h"
#include "benchlib/opts.h"
#include "benchlib/pattern.h"
#include "benchlib/report.h"
#include "include/gpufs.cuh"

#define SEED 0x5eedull

/* Each block streams its share of the file through gread, checks every word
 * against the pattern and folds it into an order-free checksum. */
/* Two 256-thread blocks an SM: the grid below is resident at once only if
 * the kernel fits in 128 registers a thread. */
__global__ void __launch_bounds__(256, 2) stream_kernel(int fd, uint64_t fsize, uint64_t chunk, uint8_t *bufs,
                              unsigned long long *bad, unsigned long long *sum,
                              unsigned long long *errs)
{
  uint64_t share = (fsize / gridDim.x + chunk - 1) / chunk * chunk;
  uint64_t lo = blockIdx.x * share;
  uint64_t hi = lo + share < fsize ? lo + share : fsize;
  uint8_t *buf = bufs + blockIdx.x * chunk;
  unsigned long long nbad = 0, acc = 0;
  for (uint64_t off = lo; off < hi; off += chunk) {
    uint64_t want = hi - off < chunk ? hi - off : chunk;
    ssize_t r = gread(fd, (int64_t)off, want, buf);
    if (r != (ssize_t)want) {
      if (threadIdx.x == 0) atomicAdd(errs, 1ull);
      break;
    }
    /* eight independent loads in flight per thread (see benchlib/pattern.h) */
    const uint64_t *w = (const uint64_t *)buf;
    const uint64_t n = want / 8, step = blockDim.x;
    uint64_t i = threadIdx.x;
    for (; i + 7 * step < n; i += 8 * step) {
      uint64_t v[8];
#pragma unroll
      for (int k = 0; k < 8; k++) v[k] = w[i + k * step];
#pragma unroll
      for (int k = 0; k < 8; k++) {
        uint64_t idx = off / 8 + i + k * step;
        nbad += v[k] != bench_word(SEED, idx);
        acc += v[k] * (2 * idx + 1);
      }
    }
    for (; i < n; i += step) {
      uint64_t idx = off / 8 + i;
      nbad += w[i] != bench_word(SEED, idx);
      acc += w[i] * (2 * idx + 1);
    }
    __syncthreads();
  }
  atomicAdd(bad, nbad);
  atomicAdd(sum, acc);
}

/* The CPU's checksum of the file as read() returns it. */
static int cpu_checksum(const char *path, uint64_t size, unsigned long long *sum)
{
  int fd = open(path, O_RDONLY);
  if (fd < 0) return -1;
  const size_t B = 8 << 20;
  uint64_t *buf = (uint64_t *)malloc(B);
  unsigned long long acc = 0;
  uint64_t off = 0;
  while (buf && off < size) {
    ssize_t n = read(fd, buf, B);
    if (n <= 0) break;
    for (ssize_t i = 0; i < n / 8; i++) acc += buf[i] * (2 * (off / 8 + i) + 1);
    off += (uint64_t)n;
  }
  free(buf);
  close(fd);
  *sum = acc;
  return off == size ? 0 : -1;
}

#define CK(call)                                                                              \
  do {                                                                                        \
    cudaError_t e_ = (call);                                                                  \
    if (e_ != cudaSuccess) {                                                                  \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_));  \
      exit(1);                                                                                \
    }                                                                                         \
  } while (0)

__global__ void open_kernel(const char *path, int *fd) { int r = gopen(path, GPUFS_O_RDONLY); if (threadIdx.x == 0) *fd = r; }
__global__ void close_kernel(int fd) { gclose(fd); }

/* One gread pass at one page size; returns GB/s or -1. */
static double gread_pass(const char *path, uint64_t size, uint32_t page, unsigned long long expect,
                         int *ok)
{
  struct gpufs_config cfg;
  gpufs_config_default(&cfg);
  cfg.page_size = page;
  cfg.cache_size = (size + (64ull << 20)) / page * page; /* the file fits */
  const char *bad = NULL;
  if (gpufs_config_from_env(&cfg, &bad) != 0) { /* GPUFS_* variables still apply */
    fprintf(stderr, "%s: not a valid value\n", bad);
    *ok = 0;
    return -1;
  }
  int rc = gpufs_start(&cfg);
  if (rc) {
    fprintf(stderr, "gpufs_start: %s (%s)\n", gpufs_strerror(rc), gpufs_error_detail());
    *ok = 0;
    return -1;
  }
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  unsigned blocks = 2 * sms;
  const uint64_t chunk = 1 << 20;
  char *dpath;
  int *dfd, fd = -1;
  uint8_t *bufs;
  unsigned long long *cnt, h[3];
  CK(cudaMalloc(&dpath, strlen(path) + 1));
  CK(cudaMemcpy(dpath, path, strlen(path) + 1, cudaMemcpyHostToDevice));
  CK(cudaMalloc(&dfd, sizeof(int)));
  CK(cudaMalloc(&bufs, blocks * chunk));
  CK(cudaMalloc(&cnt, 3 * sizeof(unsigned long long)));
  CK(cudaMemset(cnt, 0, 3 * sizeof(unsigned long long)));
  open_kernel<<<1, 32>>>(dpath, dfd);
  CK(cudaMemcpy(&fd, dfd, sizeof(int), cudaMemcpyDeviceToHost));
  if (fd < 0) {
    fprintf(stderr, "gopen(%s): %s\n", path, gpufs_strerror(fd));
    *ok = 0;
    gpufs_stop();
    return -1;
  }
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  CK(cudaEventRecord(a));
  stream_kernel<<<blocks, 256>>>(fd, size, chunk, bufs, cnt, cnt + 1, cnt + 2);
  CK(cudaGetLastError());
  CK(cudaEventRecord(b));
  CK(cudaEventSynchronize(b));
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, a, b));
  close_kernel<<<1, 32>>>(fd);
  CK(cudaMemcpy(h, cnt, sizeof(h), cudaMemcpyDeviceToHost));
  struct gpufs_stats st;
  gpufs_get_stats(&st);
  CK(cudaDeviceSynchronize());
  gpufs_stop();
  *ok = h[0] == 0 && h[2] == 0 && h[1] == expect;
  printf("  gread %3u KiB pages: %7.2f GB/s  %s (wrong words %llu, failed calls %llu, "
         "checksum %s; %llu misses, %llu host requests in %llu batches, %llu preads)\n",
         page >> 10, size / (ms / 1e3) / 1e9, *ok ? "verified" : "MISMATCH", h[0], h[2],
         h[1] == expect ? "= CPU" : "!= CPU", (unsigned long long)st.misses,
         (unsigned long long)st.requests, (unsigned long long)st.batches,
         (unsigned long long)st.preads);
  cudaFree(dpath);
  cudaFree(dfd);
  cudaFree(bufs);
  cudaFree(cnt);
  return size / (ms / 1e3) / 1e9;
}

static const char stream_usage[] =
    "usage: stream [--size SIZE] [--dir DIR]\n"
    "  --size SIZE   the file to stream, 1M to 1T (K, M, G, T; default 1G)\n"
    "  --dir DIR     where the file is written (default $GPUFS_RUN_DIR, else /tmp)\n"
    "Exit status 0 only when every byte read through gread matched the file.\n";

enum { ST_SIZE = BENCH_OPTS_FIRST, ST_DIR };

/* The command line: 0, 1 for --help, -EINVAL with err; *dir stays where
 * --dir is not given. */
static int stream_options(int argc, char **argv, uint64_t *size, const char **dir, char *err, size_t len)
{
  static const struct bench_opt table[] = {{"size", BENCH_OPT_VALUE, ST_SIZE}, {"dir", BENCH_OPT_VALUE, ST_DIR}};
  struct bench_opts p;
  int id, rc = 0;
  bench_opts_init(&p, argc, argv, table, 2, err, len);
  while (rc == 0 && (id = bench_opts_next(&p)) != BENCH_OPTS_END) {
    if (id == BENCH_OPTS_HELP || id < 0)
      return id == BENCH_OPTS_HELP ? 1 : id;
    if (id == ST_SIZE)
      rc = bench_opts_size(&p, 1ull << 20, 1ull << 40, size);
    else
      *dir = p.val;
  }
  if (rc == 0)
    rc = bench_opts_operands(&p, 0);
  return rc ? rc : bench_check_input("--dir", *dir, 1, err, len);
}

int main(int argc, char **argv)
{
  uint64_t size = 1ull << 30;
  const char *dir = getenv("GPUFS_RUN_DIR") ? getenv("GPUFS_RUN_DIR") : "/tmp";
  char err[512];
  int rc = stream_options(argc, argv, &size, &dir, err, sizeof(err));
  if ((rc = bench_opts_exit("stream", rc, err, stream_usage)) >= 0)
    return rc;
  if (bench_need_gpu("stream", 0) != 0)
    return 2;
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  char path[4096];
  snprintf(path, sizeof(path), "%s/gpufs_run_%llu.bin", dir, (unsigned long long)size);
  printf("libgpufs stream: %s, %.2f GiB file %s\n", prop.name, size / 1073741824.0, path);
  if (bench_make_file(path, size, SEED) != 0 || bench_warm_file(path) != 0) {
    fprintf(stderr, "cannot write %s\n", path);
    return 1;
  }
  unsigned long long expect = 0;
  if (cpu_checksum(path, size, &expect) != 0) {
    fprintf(stderr, "cannot read back %s\n", path);
    return 1;
  }
  void *dev;
  CK(cudaMalloc(&dev, size));
  struct bench_rate ceil = {0}, naive = {0};
  int rc1 = bench_ceiling(dev, size, SEED, &ceil);
  int rc2 = bench_naive(path, dev, size, SEED, &naive);
  CK(cudaFree(dev));
  int ok64 = 0, ok4 = 0;
  double g64 = gread_pass(path, size, 64u << 10, expect, &ok64);
  double g4 = gread_pass(path, size, 4u << 10, expect, &ok4);
  printf("\n%-28s %10s %12s %10s\n", "what", "GB/s", "vs ceiling", "vs naive");
  printf("%-28s %10.2f %12s %10s\n", "ceiling (pinned cudaMemcpy)", rc1 ? 0 : ceil.gbps, "1.00", "");
  printf("%-28s %10.2f %12.2f %10s\n", "naive (read + cudaMemcpy)", rc2 ? 0 : naive.gbps,
         rc2 ? 0 : naive.gbps / ceil.gbps, "1.00");
  printf("%-28s %10.2f %12.2f %10.2f\n", "gread, 64 KiB pages", g64, g64 / ceil.gbps, g64 / naive.gbps);
  printf("%-28s %10.2f %12.2f %10.2f\n", "gread, 4 KiB pages", g4, g4 / ceil.gbps, g4 / naive.gbps);
  if (!(ok64 && ok4)) {
    printf("FAILED: the bytes read through gread differ from the file\n");
    return 1;
  }
  printf("every byte verified (%s)\n", prop.name);
  return 0;
}
