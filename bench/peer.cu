/*
 * peer.cu - gpufs_bench's "peer" workload: two instances on one GPU (the
 * stand-in for two GPUs) and host reads through the GPU caches.
 *
 *   peer_seq     instance 0 reads the data file (seq, 64 KiB pages, 1 MiB
 *                calls, every word checked), then instance 1 reads it: its
 *                misses are copied from instance 0's cache.  Value:
 *                instance 1's GB/s; baseline: instance 0's (one instance
 *                alone, from the host) in the same run; host_bytes_x: bytes
 *                the daemon read / file size (1.0: read once for both).
 *   pread_cold   a pread of the whole file (64 MiB calls, one thread) after
 *                it was dropped from the host page cache (posix_fadvise
 *                DONTNEED; resident fraction checked with mincore)
 *   gpufs_pread  gpufs_pread of the whole file into pinned memory, the file
 *                dropped from the host page cache again but held by
 *                instance 0; baseline pread_cold; also against d2h
 *   gpufs_pread_pageable  the same into pageable memory
 *   d2h          pinned cudaMemcpy device -> host of the same bytes: the
 *                link's ceiling for that direction
 * Every byte the host reads is checked against the pattern.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cuda_runtime.h>

#include "benchlib/baselines.h"
#include "benchlib/cuda_check.h"
#include "benchlib/datafile.h"
#include "benchlib/report.h"
#include "benchlib/util.h"
#include "bench/driver.h"
#include "bench/peer.h"
#include "bench/workloads.h"
#include "include/gpufs.cuh"

#define PEER_PIECE (64ull << 20)

/* Drop the file from the host page cache; the fraction still resident. */
static double peer_drop(const char *path, uint64_t size)
{
  int fd = open(path, O_RDONLY);
  double resident = NAN;
  if (fd < 0)
    return NAN;
  posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  void *m = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
  if (m != MAP_FAILED) {
    const uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE), n = (size + pg - 1) / pg;
    unsigned char *v = (unsigned char *)malloc(n);
    if (v && mincore(m, size, v) == 0) {
      uint64_t in = 0;
      for (uint64_t i = 0; i < n; i++)
        in += v[i] & 1;
      resident = (double)in / (double)n;
    }
    free(v);
    munmap(m, size);
  }
  close(fd);
  return resident;
}

/* Check host bytes against the pattern: 0, or the wrong words. */
static uint64_t peer_check_host(const uint8_t *p, uint64_t size, uint64_t seed)
{
  uint64_t bad = 0, first = 0;
  uint8_t *dview = NULL;
  /* bench_verify reads through a device pointer: pinned memory has one */
  if (cudaHostGetDevicePointer((void **)&dview, (void *)p, 0) != cudaSuccess) {
    cudaGetLastError();
    return UINT64_MAX;
  }
  if (bench_verify(dview, size, 0, seed, &bad, &first) != 0)
    return UINT64_MAX;
  return bad;
}

static void peer_row(const char *name, const char *config, double gbps, const char *base,
                     double base_gbps, int ok, const char *note)
{
  struct bench_row row;
  bench_row_init(&row, name, config, gbps, "GB/s");
  if (base)
    bench_row_baseline(&row, base, base_gbps);
  bench_row_status(&row, ok ? BENCH_OK : BENCH_FAILED, "%s", note);
  bench_report_add(&row);
  bench_progress("%-20s %7.2f GB/s  (%s)", name, gbps, note);
}

/* A seq read of the data file on instance i: GB/s, or NaN. */
static double peer_seq(int i, char *note, size_t len)
{
  struct bench_read_params p;
  struct bench_read_result r;
  memset(&p, 0, sizeof(p));
  p.path = g_bench.path;
  p.file_size = g_bench.size;
  p.seed = g_bench.seed;
  p.access = BENCH_SEQ_BLOCK;
  p.blocks = g_bench.sms * BENCH_SEQ_BLOCKS_PER_SM;
  p.threads = BENCH_BLOCK_THREADS;
  p.io_size = 1ull << 20;
  p.instance = i;
  int rc = bench_gpufs_read(&p, &r);
  const int ok = rc == 0 && r.errors == 0 && r.mismatches == 0 && r.bytes == r.expected_bytes;
  snprintf(note, len, "instance %d: %llu bytes, %llu wrong words, %llu errors", i,
           (unsigned long long)r.bytes, (unsigned long long)r.mismatches,
           (unsigned long long)r.errors);
  return ok ? r.gbps : NAN;
}

void bench_peer(void)
{
  struct gpufs_config cfg;
  struct gpufs_stats s0, s1, all;
  char config[160], note[256], sz[32];
  const uint64_t size = g_bench.size;
  uint8_t *pin = NULL, *pageable = NULL;
  void *dev = NULL;

  gpufs_config_default(&cfg);
  cfg.page_size = 64u << 10;
  cfg.cache_size = size + (256ull << 20); /* each instance holds the whole file */
  cfg.ndevices = 2;
  cfg.devices[0] = cfg.devices[1] = g_bench.opt.device;
  snprintf(config, sizeof(config), "instances=2 page=64K cache=%s file=%s io=1M",
           bench_fmt_size(cfg.cache_size, sz, sizeof(sz)), bench_fmt_size(size, sz, sizeof(sz)));
  bench_watch("peer", 900);
  int rc = gpufs_start(&cfg);
  if (rc != 0) {
    snprintf(note, sizeof(note), "gpufs_start: %s (%s)", gpufs_strerror(rc), gpufs_error_detail());
    peer_row("peer_seq", config, NAN, NULL, NAN, 0, note);
    bench_watch("", 0);
    return;
  }
  char n0[160], n1[160];
  const double a = peer_seq(0, n0, sizeof(n0));
  const double b = peer_seq(1, n1, sizeof(n1));
  gpufs_get_instance_stats(0, &s0);
  gpufs_get_instance_stats(1, &s1);
  gpufs_get_stats(&all);
  {
    struct bench_row row;
    bench_row_init(&row, "peer_seq", config, b, "GB/s");
    bench_row_baseline(&row, "one_instance", a);
    bench_row_status(&row, isnan(a) || isnan(b) ? BENCH_FAILED : BENCH_OK, "%s; %s", n0, n1);
    bench_row_f64(&row, "host_bytes_x", (double)all.bytes_read / (double)size);
    bench_row_u64(&row, "peer_hits", s1.peer_hits);
    bench_row_u64(&row, "misses_1", s1.misses);
    bench_row_u64(&row, "bytes_read_0", s0.bytes_read);
    bench_row_u64(&row, "bytes_read_1", s1.bytes_read);
    bench_report_add(&row);
    bench_progress("peer_seq %.2f GB/s, one instance %.2f; host bytes %.2fx the file; %llu peer "
                   "hits of %llu misses",
                   b, a, (double)all.bytes_read / (double)size,
                   (unsigned long long)s1.peer_hits, (unsigned long long)s1.misses);
  }

  /* host reads: the file dropped from the host page cache, held by the GPU */
  if (BENCH_CUDA(cudaHostAlloc((void **)&pin, size, cudaHostAllocMapped)) ||
      BENCH_CUDA(cudaMalloc(&dev, size)))
    goto out;
  pageable = (uint8_t *)malloc(size);
  {
    double res = peer_drop(g_bench.path, size);
    int fd = open(g_bench.path, O_RDONLY);
    double t0 = bench_now();
    int ok = fd >= 0;
    for (uint64_t off = 0; ok && off < size; off += PEER_PIECE)
      ok = bench_pio_full(fd, pin + off, size - off < PEER_PIECE ? size - off : PEER_PIECE, off,
                          0) == 0;
    const double cold = size / (bench_now() - t0) / 1e9;
    if (fd >= 0)
      close(fd);
    const uint64_t bad = ok ? peer_check_host(pin, size, g_bench.seed) : UINT64_MAX;
    snprintf(note, sizeof(note), "one thread, 64 MiB preads; %.3f of the file resident before; "
             "%llu wrong words", res, (unsigned long long)bad);
    peer_row("pread_cold", config, ok && bad == 0 ? cold : NAN, NULL, NAN, ok && bad == 0, note);

    memset(pin, 0, size);
    res = peer_drop(g_bench.path, size);
    t0 = bench_now();
    ssize_t r = gpufs_pread(g_bench.path, pin, size, 0);
    const double gp = size / (bench_now() - t0) / 1e9;
    const uint64_t bad2 = r == (ssize_t)size ? peer_check_host(pin, size, g_bench.seed) : UINT64_MAX;
    const double res_after = peer_drop(g_bench.path, size);
    snprintf(note, sizeof(note), "pinned buffer; returned %lld; %.3f resident before; %llu wrong "
             "words", (long long)r, res, (unsigned long long)bad2);
    peer_row("gpufs_pread", config, bad2 == 0 ? gp : NAN, "pread_cold", cold, bad2 == 0, note);
    (void)res_after;

    /* the link's ceiling for device -> host, the same bytes */
    struct bench_rate d2h;
    memset(&d2h, 0, sizeof(d2h));
    t0 = bench_now();
    int e = BENCH_CUDA(cudaMemcpy(pin, dev, size, cudaMemcpyDeviceToHost));
    const double ceil = size / (bench_now() - t0) / 1e9;
    peer_row("d2h", config, e == 0 ? ceil : NAN, NULL, NAN, e == 0, "pinned cudaMemcpy, one call");
    peer_row("gpufs_pread_vs_d2h", config, bad2 == 0 ? gp : NAN, "d2h", ceil, bad2 == 0,
             "gpufs_pread into pinned memory against the D2H ceiling");

    if (pageable) {
      memset(pageable, 0, size); /* a program's buffer: its pages exist already */
      res = peer_drop(g_bench.path, size);
      t0 = bench_now();
      r = gpufs_pread(g_bench.path, pageable, size, 0);
      const double pp = size / (bench_now() - t0) / 1e9;
      memcpy(pin, pageable, size);
      const uint64_t bad3 = r == (ssize_t)size ? peer_check_host(pin, size, g_bench.seed) : UINT64_MAX;
      snprintf(note, sizeof(note), "pageable buffer (pinned bounce); %.3f resident before; %llu "
               "wrong words", res, (unsigned long long)bad3);
      peer_row("gpufs_pread_pageable", config, bad3 == 0 ? pp : NAN, "pread_cold", cold,
               bad3 == 0, note);
    }
  }
out:
  free(pageable);
  if (pin)
    cudaFreeHost(pin);
  if (dev)
    cudaFree(dev);
  rc = gpufs_stop();
  if (rc != 0)
    bench_progress("peer: gpufs_stop: %s (%s)", gpufs_strerror(rc), gpufs_error_detail());
  bench_warm_file(g_bench.path); /* later workloads expect it page-cached */
  bench_watch("", 0);
}
