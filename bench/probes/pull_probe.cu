/*
 * pull_probe.cu - how fast kernels pull pinned host memory into device
 * memory, by who pulls: the question behind gread_warp's readahead rows
 * (docs/design-read.md 7, "The pull gate"), where 2,112 warps each copying a 128 KiB
 * round from mapped staging made 27-35 GB/s and 264 blocks copying the same
 * rounds made 40-45.
 *
 * Each group (a warp, or a block of 256 threads) copies chunks of `chunk`
 * bytes from a 256 MiB pinned host buffer (cudaHostAlloc, mapped) into a
 * device buffer of the same size: group g takes chunks g, g + G, ... until
 * `total` bytes are copied, 8 16-byte loads in flight per thread, as
 * libgpufs's round copy does (gpufs_round_copy_whole).  Optional load
 * beside it:
 *   cpu     8 host threads memcpy into the pinned buffer all along (the
 *           daemon's preads into staging);
 *   poll    one more kernel, on another stream, whose warps' first lanes
 *           poll a host word with a 32 us pause (the rounds' waits for the
 *           daemon's answer).
 * The copy engine's rate (cudaMemcpy of the buffer) is measured first: the
 * ceiling of every row.  Every byte copied is checked once per config (the
 * device buffer against the host's pattern, before the cpu writer starts).
 *
 * With "mix": host pulls by some warps of every block beside device-to-device
 * copies of 4 KiB by the others (probe_mix_run): does a pull slow the SM's
 * other memory work?
 *
 * Usage: pull_probe [--size SIZE] [--mix]   (default 8G)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime.h>

#include "benchlib/cuda_check.h"
#include "benchlib/opts.h"
#include "benchlib/report.h"

#define PROBE_BUF (256ull << 20)
#define PROBE_LOADS 8
#define PROBE_CPU_THREADS 8

struct probe_cpu {
  uint8_t *buf;
  volatile int stop;
  unsigned long long bytes;
};

/* Group `g` of `ngroups` (size `gs`, rank `rk`) copies its chunks. */
__device__ void probe_copy(const uint4 *src, uint4 *dst, uint64_t total, uint64_t chunk, uint64_t g,
                           uint64_t ngroups, uint32_t rk, uint32_t gs)
{
  const uint64_t nchunks = total / chunk;
  const uint64_t per_buf = PROBE_BUF / chunk;
  const uint32_t words = (uint32_t)(chunk / 16);
  for (uint64_t c = g; c < nchunks; c += ngroups) {
    const uint64_t base = (c % per_buf) * (chunk / 16);
    for (uint32_t i0 = rk; i0 < words; i0 += PROBE_LOADS * gs) {
      uint4 v[PROBE_LOADS];
#pragma unroll
      for (int u = 0; u < PROBE_LOADS; u++)
        if (i0 + u * gs < words) v[u] = src[base + i0 + u * gs];
#pragma unroll
      for (int u = 0; u < PROBE_LOADS; u++)
        if (i0 + u * gs < words) dst[base + i0 + u * gs] = v[u];
    }
  }
}

__global__ void probe_warps(const uint4 *src, uint4 *dst, uint64_t total, uint64_t chunk)
{
  const uint64_t g = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const uint64_t ng = (uint64_t)gridDim.x * blockDim.x / 32;
  probe_copy(src, dst, total, chunk, g, ng, threadIdx.x % 32, 32);
}

__global__ void probe_blocks(const uint4 *src, uint4 *dst, uint64_t total, uint64_t chunk)
{
  probe_copy(src, dst, total, chunk, blockIdx.x, gridDim.x, threadIdx.x, blockDim.x);
}

/* Lane 0 of every warp polls a host word until *stop (device): word 0, or
 * with `spread` its own (128 bytes apart), pausing pause_ns between polls. */
__global__ void probe_poll(const volatile unsigned long long *word, const volatile int *stop,
                           unsigned long long *polls, int spread, unsigned pause_ns)
{
  if (threadIdx.x % 32) return;
  const volatile unsigned long long *w =
      word + (spread ? ((blockIdx.x * blockDim.x + threadIdx.x) / 32) * 16 : 0);
  unsigned long long n = 0, sink = 0;
  while (!*stop) {
    sink += *w;
    n++;
    __nanosleep(pause_ns);
  }
  atomicAdd(polls, n + (sink == 12345 ? 1 : 0));
}

static void *probe_cpu_main(void *arg)
{
  struct probe_cpu *c = (struct probe_cpu *)arg;
  const size_t n = 128 << 10;
  uint8_t *src = (uint8_t *)malloc(n);
  memset(src, 0x5a, n);
  uint64_t at = (uint64_t)(uintptr_t)&c * 7919 % (PROBE_BUF / n);
  unsigned long long b = 0;
  while (!c->stop) {
    memcpy(c->buf + at * n, src, n);
    at = (at + 17) % (PROBE_BUF / n);
    b += n;
  }
  __atomic_fetch_add(&c->bytes, b, __ATOMIC_RELAXED);
  free(src);
  return NULL;
}

/* Host pulls beside device copies: of each block's 8 warps, the first
 * `pullers` pull 128 KiB chunks from host memory as probe_copy does (or,
 * with pullers < 0, the first -pullers do nothing), the others copy 4 KiB pieces from device to device memory (a cached gread's
 * copy); every warp goes on for `ns` from its block's start and counts its
 * bytes (the grid starts within microseconds). */
__global__ void probe_mix_run(const uint4 *host, const uint4 *dsrc, uint4 *ddst, int pullers,
                              uint64_t ns, unsigned long long *pulled, unsigned long long *copied)
{
  uint64_t now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  const uint32_t lane = threadIdx.x % 32, wib = threadIdx.x / 32;
  const uint64_t w = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const uint64_t nw = (uint64_t)gridDim.x * blockDim.x / 32;
  if (pullers < 0 && (int)wib < -pullers) return; /* the same warps, idle */
  const bool pull = (int)wib < pullers;
  const uint32_t words = pull ? (128u << 10) / 16 : 4096u / 16;
  const uint64_t per_buf = PROBE_BUF / 16 / words;
  const uint4 *src = pull ? host : dsrc;
  const uint64_t until = now + ns;
  unsigned long long bytes = 0;
  for (uint64_t c = w;; c += nw) {
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    if (t > until) break;
    const uint64_t base = (c % per_buf) * words;
    for (uint32_t i0 = lane; i0 < words; i0 += PROBE_LOADS * 32) {
      uint4 v[PROBE_LOADS];
#pragma unroll
      for (int u = 0; u < PROBE_LOADS; u++)
        if (i0 + u * 32 < words) v[u] = src[base + i0 + u * 32];
#pragma unroll
      for (int u = 0; u < PROBE_LOADS; u++)
        if (i0 + u * 32 < words) ddst[base + i0 + u * 32] = v[u];
    }
    bytes += words * 16ull;
  }
  if (lane == 0) atomicAdd(pull ? pulled : copied, bytes);
}

static const char probe_usage[] =
    "usage: pull_probe [--size SIZE] [--mix]\n"
    "  --size SIZE  bytes each configuration copies (1G to 1T, default 8G)\n"
    "  --mix        also host pulls by some warps of every block beside device copies by the others\n";

enum { PP_SIZE = BENCH_OPTS_FIRST, PP_MIX };

/* The command line: 0, 1 for --help, or -EINVAL with err. */
static int probe_options(int argc, char **argv, uint64_t *total, int *mix, char *err, size_t len)
{
  static const struct bench_opt table[] = {{"size", BENCH_OPT_VALUE, PP_SIZE}, {"mix", BENCH_OPT_FLAG, PP_MIX}};
  struct bench_opts p;
  int id, rc = 0;
  bench_opts_init(&p, argc, argv, table, 2, err, len);
  while (rc == 0 && (id = bench_opts_next(&p)) != BENCH_OPTS_END) {
    if (id == PP_SIZE)
      rc = bench_opts_size(&p, 1ull << 30, 1ull << 40, total);
    else if (id == PP_MIX)
      *mix = 1;
    else
      rc = id == BENCH_OPTS_HELP ? 1 : id;
  }
  return rc ? rc : bench_opts_operands(&p, 0);
}

int main(int argc, char **argv)
{
  uint64_t total = 8ull << 30;
  int mix = 0;
  char err[256];
  int rc = probe_options(argc, argv, &total, &mix, err, sizeof(err));
  if ((rc = bench_opts_exit("pull_probe", rc, err, probe_usage)) >= 0)
    return rc;
  if (bench_need_gpu("pull_probe", 0) != 0)
    return 2;
  uint8_t *host = NULL, *dev = NULL, *check = NULL;
  unsigned long long *hword = NULL, *dpolls = NULL;
  int *dstop = NULL;
  int sms = 0;
  cudaStream_t side;
  cudaEvent_t e0, e1;
  float ms;
  if (BENCH_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0)) ||
      BENCH_CUDA(cudaHostAlloc((void **)&host, PROBE_BUF, cudaHostAllocMapped)) ||
      BENCH_CUDA(cudaHostAlloc((void **)&hword, 1 << 20, cudaHostAllocMapped)) ||
      BENCH_CUDA(cudaMalloc(&dev, PROBE_BUF)) || BENCH_CUDA(cudaMalloc(&dstop, sizeof(int))) ||
      BENCH_CUDA(cudaMalloc(&dpolls, sizeof(*dpolls))) ||
      BENCH_CUDA(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking)) ||
      BENCH_CUDA(cudaEventCreate(&e0)) || BENCH_CUDA(cudaEventCreate(&e1)))
    return 1;
  check = (uint8_t *)malloc(PROBE_BUF);
  for (uint64_t i = 0; i < PROBE_BUF / 8; i++) ((uint64_t *)host)[i] = i * 0x9e3779b97f4a7c15ull;
  *hword = 1;

  /* the ceiling: the copy engine */
  cudaEventRecord(e0);
  for (int r = 0; r < 8; r++) cudaMemcpyAsync(dev, host, PROBE_BUF, cudaMemcpyHostToDevice);
  cudaEventRecord(e1);
  cudaEventSynchronize(e1);
  cudaEventElapsedTime(&ms, e0, e1);
  const double ceiling = 8.0 * PROBE_BUF / (ms * 1e-3) / 1e9;
  printf("ceiling (cudaMemcpy H2D, 256 MiB x 8): %.2f GB/s\n", ceiling);

  /* host pulls beside device copies on the same SMs (264 x 256) */
  if (mix) {
    uint8_t *dsrc = NULL;
    unsigned long long *cnt = NULL, h[2];
    if (BENCH_CUDA(cudaMalloc(&dsrc, PROBE_BUF)) || BENCH_CUDA(cudaMalloc(&cnt, 2 * sizeof(*cnt))))
      return 1;
    cudaMemset(dsrc, 1, PROBE_BUF);
    printf("\n%-22s %12s %12s\n", "pulling warps/block", "pull GB/s", "d2d GB/s");
    printf("(negative: that many warps of each block idle, none pulling)\n");
    const int ps[] = {0, 1, -1, 2, -2, 4, -4, 6, -6, 8};
    for (int i = 0; i < 10; i++) {
      cudaMemset(cnt, 0, 2 * sizeof(*cnt));
      cudaDeviceSynchronize();
      probe_mix_run<<<2 * sms, 256>>>((const uint4 *)host, (const uint4 *)dsrc, (uint4 *)dev, ps[i],
                                      200000000ull, cnt, cnt + 1);
      if (BENCH_CUDA(cudaDeviceSynchronize())) return 1;
      cudaMemcpy(h, cnt, sizeof(h), cudaMemcpyDeviceToHost);
      printf("%-22d %12.2f %12.2f\n", ps[i], h[0] / 0.2 / 1e9, h[1] / 0.2 / 1e9);
      fflush(stdout);
    }
    return 0;
  }


  struct {
    const char *name;
    int warps;
    int blocks_per_sm, threads;
    uint64_t chunk;
  } cfgs[] = {
      {"blocks 264x256, 128K", 0, 2, 256, 128 << 10}, {"warps 264x256, 128K", 1, 2, 256, 128 << 10},
      {"warps 132x256, 128K", 1, 1, 256, 128 << 10},  {"warps 132x128, 128K", 1, 1, 128, 128 << 10},
      {"warps 132x64, 128K", 1, 1, 64, 128 << 10},    {"warps 132x32, 128K", 1, 1, 32, 128 << 10},
      {"warps 264x256, 4K", 1, 2, 256, 4 << 10},      {"blocks 264x256, 4K", 0, 2, 256, 4 << 10},
      {"warps 264x256, 16K", 1, 2, 256, 16 << 10},    {"warps 264x256, 1M", 1, 2, 256, 1 << 20},
  };
  const int ncfg = (int)(sizeof(cfgs) / sizeof(cfgs[0]));
  printf("%-26s %10s %10s %10s %10s\n", "config", "alone", "+cpu", "+poll", "+both");
  for (int i = 0; i < ncfg; i++) {
    double gbps[4];
    for (int load = 0; load < 4; load++) {
      struct probe_cpu cpu = {host, 0, 0};
      pthread_t th[PROBE_CPU_THREADS];
      const int with_cpu = load & 1, with_poll = load & 2;
      cudaMemset(dev, 0, PROBE_BUF);
      cudaMemset(dstop, 0, sizeof(int));
      cudaMemset(dpolls, 0, sizeof(*dpolls));
      cudaDeviceSynchronize();
      if (with_cpu)
        for (int t = 0; t < PROBE_CPU_THREADS; t++) pthread_create(&th[t], NULL, probe_cpu_main, &cpu);
      if (with_poll) probe_poll<<<sms, 256, 0, side>>>(hword, dstop, dpolls, 0, 32000);
      const int grid = cfgs[i].blocks_per_sm * sms;
      cudaEventRecord(e0);
      if (cfgs[i].warps)
        probe_warps<<<grid, cfgs[i].threads>>>((const uint4 *)host, (uint4 *)dev, total, cfgs[i].chunk);
      else
        probe_blocks<<<grid, cfgs[i].threads>>>((const uint4 *)host, (uint4 *)dev, total, cfgs[i].chunk);
      cudaEventRecord(e1);
      if (BENCH_CUDA(cudaEventSynchronize(e1))) return 1;
      cudaEventElapsedTime(&ms, e0, e1);
      const int one = 1;
      cudaMemcpy(dstop, &one, sizeof(int), cudaMemcpyHostToDevice); /* the poller runs on */
      cpu.stop = 1;
      if (with_cpu)
        for (int t = 0; t < PROBE_CPU_THREADS; t++) pthread_join(th[t], NULL);
      if (BENCH_CUDA(cudaDeviceSynchronize())) return 1;
      gbps[load] = (double)total / (ms * 1e-3) / 1e9;
      if (load == 0) { /* every byte arrived (the cpu writer changes the buffer later) */
        cudaMemcpy(check, dev, PROBE_BUF, cudaMemcpyDeviceToHost);
        const uint64_t covered = total < PROBE_BUF ? total : PROBE_BUF;
        if (memcmp(check, host, covered)) {
          printf("%s: MISMATCH\n", cfgs[i].name);
          return 2;
        }
      }
      if (with_cpu) /* put the pattern back */
        for (uint64_t k = 0; k < PROBE_BUF / 8; k++) ((uint64_t *)host)[k] = k * 0x9e3779b97f4a7c15ull;
    }
    printf("%-26s %10.2f %10.2f %10.2f %10.2f   (x ceiling %.3f)\n", cfgs[i].name, gbps[0], gbps[1],
           gbps[2], gbps[3], gbps[0] / ceiling);
    fflush(stdout);
  }

  /* how the pollers' number, pause and addresses cost the pull (warps
   * 264x256, 128 KiB chunks) */
  printf("\n%-8s %-6s %-9s %10s %12s\n", "pollers", "spread", "pause_us", "GB/s", "Mpolls/s");
  const int nw[] = {8, 66, 264, 1056};
  const unsigned pauses[] = {2000, 32000, 256000};
  for (int a = 0; a < 4; a++)
    for (int sp = 0; sp < 2; sp++)
      for (int b = 0; b < 3; b++) {
        unsigned long long polls = 0;
        cudaMemset(dstop, 0, sizeof(int));
        cudaMemset(dpolls, 0, sizeof(*dpolls));
        cudaDeviceSynchronize();
        /* nw[a] warps: blocks of up to 8 warps */
        const int wpb = nw[a] < 8 ? nw[a] : 8;
        probe_poll<<<nw[a] / wpb, wpb * 32, 0, side>>>(hword, dstop, dpolls, sp, pauses[b]);
        cudaEventRecord(e0);
        probe_warps<<<2 * sms, 256>>>((const uint4 *)host, (uint4 *)dev, total, 128 << 10);
        cudaEventRecord(e1);
        if (BENCH_CUDA(cudaEventSynchronize(e1))) return 1;
        cudaEventElapsedTime(&ms, e0, e1);
        const int one = 1;
        cudaMemcpy(dstop, &one, sizeof(int), cudaMemcpyHostToDevice);
        if (BENCH_CUDA(cudaDeviceSynchronize())) return 1;
        cudaMemcpy(&polls, dpolls, sizeof(polls), cudaMemcpyDeviceToHost);
        printf("%-8d %-6s %-9.0f %10.2f %12.2f\n", nw[a], sp ? "yes" : "no", pauses[b] / 1e3,
               (double)total / (ms * 1e-3) / 1e9, (double)polls / (ms * 1e-3) / 1e6);
        fflush(stdout);
      }
  return 0;
}
