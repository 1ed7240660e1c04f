/*
 * acquire.cu - gpufs_bench's "acquire" workload: a file the host changes
 * in place between kernels that read all of it (GAIA's updated-file
 * service), served three ways in one instance with a cache that holds it:
 *
 *   acquire      gpufs_acquire, then the kernel: only the changed pages
 *                are read again
 *   reopen       the kernel gcloses and gopens the file (close-to-open):
 *                the change makes a new version, every page is read again
 *   expert copy  the whole file copied again (baseline: the expert's GB/s
 *                of this run, the CUDA way)
 *
 * A scratch copy of the data file (4 KiB pages) gets `changed` of its
 * pages rewritten per round (one word in each, spread evenly: 0, 1, 10,
 * 25, 50, 75 and 100%).  Value: the file's bytes over the round's time
 * (acquire + kernel, or reopen + kernel), GB/s; the acquire row's
 * baselines are the expert copy and the reopen round at the same share.
 * After each kernel every byte the GPU read is compared with the file.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda_runtime.h>

#include "benchlib/cuda_check.h"
#include "benchlib/report.h"
#include "benchlib/util.h"
#include "bench/acquire.h"
#include "bench/driver.h"
#include "include/gpufs.cuh"

#define ACQ_PAGE 4096u
#define ACQ_CHUNK (1u << 20)

/* Every block reads 1 MiB pieces of fd into dst; *err counts calls that
 * failed or came short. */
static __global__ void acq_read_all(int fd, uint64_t size, uint8_t *dst, unsigned long long *err)
{
  for (uint64_t off = (uint64_t)blockIdx.x * ACQ_CHUNK; off < size; off += (uint64_t)gridDim.x * ACQ_CHUNK) {
    const uint64_t len = size - off < ACQ_CHUNK ? size - off : ACQ_CHUNK;
    const ssize_t r = gread(fd, (int64_t)off, len, dst + off);
    if (threadIdx.x == 0 && r != (ssize_t)len) atomicAdd(err, 1ull);
  }
}

static __global__ void acq_close(int fd) { gclose(fd); }

/* gopen (reopen: after a gclose of the old descriptor) by one block. */
static __global__ void acq_open(const char *path, int old, int *fd)
{
  if (old >= 0) gclose(old);
  const int r = gopen(path, GPUFS_O_RDONLY);
  if (threadIdx.x == 0) *fd = r;
}

struct acq_run {
  const char *path; /* the scratch file */
  char *dpath;      /* its name in device memory */
  uint64_t size;
  uint8_t *dst;     /* device: what the kernel read */
  uint8_t *host;    /* the file, for the check */
  unsigned long long *err;
  int *dfd;
  int fd;
};

/* Open again (old closed first); fd, or -errno. */
static int acq_reopen(struct acq_run *a)
{
  acq_open<<<1, 32>>>(a->dpath, a->fd, a->dfd);
  if (BENCH_CUDA(cudaDeviceSynchronize()) != 0 ||
      BENCH_CUDA(cudaMemcpy(&a->fd, a->dfd, sizeof(int), cudaMemcpyDeviceToHost)) != 0)
    return -EIO;
  return a->fd;
}

/* The kernel over the whole file; 0 when every byte is the file's. */
static int acq_read_check(struct acq_run *a, double *seconds)
{
  unsigned long long err = 0;
  const double t0 = bench_now();
  cudaMemset(a->err, 0, sizeof(*a->err));
  acq_read_all<<<g_bench.sms * 2, 256>>>(a->fd, a->size, a->dst, a->err);
  if (BENCH_CUDA(cudaDeviceSynchronize()) != 0) return -EIO;
  *seconds = bench_now() - t0;
  if (BENCH_CUDA(cudaMemcpy(&err, a->err, sizeof(err), cudaMemcpyDeviceToHost)) != 0 || err)
    return -EIO;
  const int h = open(a->path, O_RDONLY);
  int rc = h < 0 ? -errno : bench_pio_full(h, a->host, a->size, 0, 0);
  if (h >= 0) close(h);
  uint8_t *got = (uint8_t *)malloc(a->size);
  if (rc == 0 && (!got || BENCH_CUDA(cudaMemcpy(got, a->dst, a->size, cudaMemcpyDeviceToHost)) != 0))
    rc = -ENOMEM;
  if (rc == 0 && memcmp(got, a->host, a->size) != 0) rc = -EILSEQ;
  free(got);
  return rc;
}

/* Rewrite one word in `share` of the file's pages, spread evenly, with
 * values of round r. */
static int acq_change(const struct acq_run *a, double share, uint32_t r)
{
  const uint64_t npages = a->size / ACQ_PAGE, n = (uint64_t)llround(share * (double)npages);
  const int h = open(a->path, O_WRONLY);
  if (h < 0) return -errno;
  int rc = 0;
  for (uint64_t i = 0; i < n && rc == 0; i++) {
    const uint64_t p = i * npages / n, v = (uint64_t)r << 40 | p;
    if (pwrite(h, &v, sizeof(v), (off_t)(p * ACQ_PAGE + 8 * (r % 512))) != (ssize_t)sizeof(v))
      rc = -EIO;
  }
  close(h);
  return rc;
}

/* The scratch file: a copy of the data file in --dir.  0 or -errno. */
static int acq_copy(const char *to)
{
  const int in = open(g_bench.path, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  int rc = in < 0 || out < 0 ? -errno : 0;
  for (uint64_t done = 0; rc == 0 && done < g_bench.size;) {
    const ssize_t n = copy_file_range(in, NULL, out, NULL, g_bench.size - done, 0);
    if (n <= 0) rc = n < 0 ? -errno : -EIO;
    else done += (uint64_t)n;
  }
  if (in >= 0) close(in);
  if (out >= 0) close(out);
  return rc;
}

/* One round: change `share`, then acquire + kernel (reopen 0) or reopen +
 * kernel; its time into *seconds (and the acquire's alone into *acq_s).
 * 0 or -errno. */
static int acq_round(struct acq_run *a, double share, uint32_t r, int reopen, double *seconds,
                     double *acq_s)
{
  int rc = acq_change(a, share, r);
  double t0 = bench_now(), read_s = 0;
  *acq_s = 0;
  if (rc == 0 && reopen) rc = acq_reopen(a) < 0 ? -EIO : 0;
  if (rc == 0 && !reopen) {
    const int64_t d = gpufs_acquire(a->path);
    rc = d < 0 ? (int)d : 0;
    *acq_s = bench_now() - t0;
  }
  const double before_kernel = bench_now() - t0; /* the reopen, or the acquire */
  if (rc == 0) rc = acq_read_check(a, &read_s);
  *seconds = before_kernel + read_s; /* the check after the kernel is not timed */
  return rc;
}

static void acq_row(const char *what, double share, double seconds, double acq_s, int rc,
                    double reopen_gbps)
{
  struct bench_row row;
  char config[96];
  const double gbps = rc == 0 && seconds > 0 ? (double)g_bench.size / seconds / 1e9 : NAN;
  snprintf(config, sizeof(config), "changed=%g%% page=4K file=%.1fG", share * 100,
           (double)g_bench.size / (1u << 30));
  bench_row_init(&row, what, config, gbps, "GB/s");
  if (rc)
    bench_row_status(&row, BENCH_FAILED, "%s", rc == -EILSEQ ? "bytes differ from the file" : strerror(-rc));
  bench_row_f64(&row, "round_s", seconds);
  bench_row_f64(&row, "acquire_s", acq_s);
  bench_row_f64(&row, "changed_share", share);
  if (isnan(reopen_gbps)) {
    bench_report_add(&row);
    return;
  }
  struct bench_row b = row;
  bench_row_baseline(&row, "expert", g_bench.expert_gbps);
  bench_report_add(&row);
  bench_row_baseline(&b, "reopen", reopen_gbps);
  bench_report_add(&b);
}

void bench_acquire(void)
{
  static const double shares[] = {0, 0.01, 0.10, 0.25, 0.50, 0.75, 1.0};
  char path[4096];
  struct acq_run a;
  memset(&a, 0, sizeof(a));
  snprintf(path, sizeof(path), "%s/acquire.dat", g_bench.opt.dir);
  a.path = path;
  a.size = g_bench.size;
  a.fd = -1;
  struct gpufs_config cfg;
  gpufs_config_default(&cfg);
  cfg.device = g_bench.opt.device;
  cfg.page_size = ACQ_PAGE;
  cfg.cache_size = 2 * g_bench.size;
  int rc = acq_copy(path);
  if (rc == 0 && (BENCH_CUDA(cudaMalloc(&a.dst, a.size)) != 0 || BENCH_CUDA(cudaMalloc(&a.err, sizeof(*a.err))) != 0 ||
                  BENCH_CUDA(cudaMalloc(&a.dfd, sizeof(int))) != 0 || BENCH_CUDA(cudaMalloc(&a.dpath, strlen(path) + 1)) != 0 ||
                  !(a.host = (uint8_t *)malloc(a.size))))
    rc = -ENOMEM;
  if (rc == 0) rc = BENCH_CUDA(cudaMemcpy(a.dpath, path, strlen(path) + 1, cudaMemcpyHostToDevice)) ? -EIO : 0;
  if (rc == 0 && (rc = gpufs_start(&cfg)) == 0) {
    double s = 0, q = 0;
    /* the first open and read fill the cache; the first acquire hashes */
    rc = acq_reopen(&a) < 0 ? -EIO : acq_read_check(&a, &s);
    if (rc == 0 && gpufs_acquire(path) < 0) rc = -EIO;
    if (rc == 0) rc = acq_read_check(&a, &s);
    for (uint32_t i = 0; i < sizeof(shares) / sizeof(shares[0]) && rc == 0; i++) {
      double ts = 0, reopen_s = 0;
      const int ra = acq_round(&a, shares[i], 2 * i + 1, 1, &reopen_s, &q);
      acq_row("acquire/reopen", shares[i], reopen_s, 0, ra, NAN);
      /* back in step: the reopen's version is what acquire compares from */
      if (ra == 0 && gpufs_acquire(path) < 0) rc = -EIO;
      const int rb = rc ? rc : acq_round(&a, shares[i], 2 * i + 2, 0, &ts, &q);
      acq_row("acquire", shares[i], ts, q, rb, ra == 0 ? (double)a.size / reopen_s / 1e9 : NAN);
      bench_progress("acquire changed=%g%%: reopen %.3f s, acquire %.3f s (of it the acquire %.3f s)",
                     shares[i] * 100, reopen_s, ts, q);
    }
    if (a.fd >= 0) {
      acq_close<<<1, 32>>>(a.fd);
      BENCH_CUDA(cudaDeviceSynchronize());
    }
    gpufs_stop();
  }
  if (rc) acq_row("acquire", 0, NAN, NAN, rc, NAN);
  cudaFree(a.dst);
  cudaFree(a.err);
  cudaFree(a.dfd);
  cudaFree(a.dpath);
  free(a.host);
  unlink(path);
}
