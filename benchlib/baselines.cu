/*
 * baselines.cu - ceiling, naive, zero-copy and device-to-device rates, and
 * the kernels that check what arrived on the GPU and fill device memory with
 * the pattern.  (The expert pipelines, read and write: expert.cu.)
 * (cuFile is in bench/cufile.cu.)  Contracts: benchlib/baselines.h.
 *
 * Every timed repetition first clears the device buffer (untimed), so the
 * check after the last one sees only bytes that repetition moved.
 */
#include "benchlib/baselines.h"
#include "benchlib/baselines_util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cuda_runtime.h>

#include "benchlib/cuda_check.h"
#include "benchlib/datafile.h"
#include "benchlib/pattern.h"
#include "benchlib/util.h"


/* ---------------- checking on the GPU ---------------- */

__device__ __forceinline__ uint64_t bench_check_pair(ulonglong2 v, uint64_t word, uint64_t seed,
                                                     uint64_t *first_bad)
{
  uint64_t bad = 0;
  if (v.x != bench_word(seed, word)) {
    bad++;
    *first_bad = word < *first_bad ? word : *first_bad;
  }
  if (v.y != bench_word(seed, word + 1)) {
    bad++;
    *first_bad = word + 1 < *first_bad ? word + 1 : *first_bad;
  }
  return bad;
}

/* 16-byte loads, grid-stride, four loads in flight per thread: the zero-copy
 * baseline reads host memory through this kernel, and reads over PCIe need
 * many outstanding requests.  Falls back to 8-byte loads when p is not
 * 16-byte aligned.  out[0] += wrong words; out[1] = min(first wrong word). */
__global__ void bench_verify_kernel(const uint64_t *p, uint64_t nwords, uint64_t first_word,
                                    uint64_t seed, unsigned long long *out)
{
  const uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
  const uint64_t n = (uint64_t)gridDim.x * blockDim.x;
  uint64_t first_bad = UINT64_MAX, bad = 0;

  if (((uintptr_t)p & 15) == 0) {
    const ulonglong2 *q = (const ulonglong2 *)p;
    const uint64_t npairs = nwords / 2;
    uint64_t i = t;
    for (; i + 3 * n < npairs; i += 4 * n) {
      ulonglong2 v0 = q[i], v1 = q[i + n], v2 = q[i + 2 * n], v3 = q[i + 3 * n];
      bad += bench_check_pair(v0, first_word + 2 * i, seed, &first_bad);
      bad += bench_check_pair(v1, first_word + 2 * (i + n), seed, &first_bad);
      bad += bench_check_pair(v2, first_word + 2 * (i + 2 * n), seed, &first_bad);
      bad += bench_check_pair(v3, first_word + 2 * (i + 3 * n), seed, &first_bad);
    }
    for (; i < npairs; i += n)
      bad += bench_check_pair(q[i], first_word + 2 * i, seed, &first_bad);
    if ((nwords & 1) && t == 0)
      bad += bench_check_words(p + nwords - 1, 1, first_word + nwords - 1, seed, 0, 1, &first_bad);
  } else {
    bad = bench_check_words(p, nwords, first_word, seed, t, n, &first_bad);
  }
  if (bad) {
    atomicAdd(&out[0], (unsigned long long)bad);
    atomicMin(&out[1], (unsigned long long)first_bad);
  }
}

/* bench_verify, and the kernel's time in *ms when ms is not NULL. */
static int bench_verify_run(const void *p, uint64_t bytes, uint64_t offset, uint64_t seed,
                            uint64_t *mismatches, uint64_t *first_bad, float *ms)
{
  unsigned long long h[2] = {0, UINT64_MAX};
  unsigned long long *d = NULL;
  cudaEvent_t e0 = NULL, e1 = NULL;
  int rc, dev, sms;

  if (bytes % 8 != 0 || offset % 8 != 0)
    return -EINVAL;
  if ((rc = BENCH_CUDA(cudaGetDevice(&dev))) ||
      (rc = BENCH_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev))) ||
      (rc = BENCH_CUDA(cudaMalloc(&d, sizeof(h)))))
    return rc;
  if ((rc = BENCH_CUDA(cudaMemcpy(d, h, sizeof(h), cudaMemcpyHostToDevice))) ||
      (rc = BENCH_CUDA(cudaEventCreate(&e0))) || (rc = BENCH_CUDA(cudaEventCreate(&e1))) ||
      (rc = BENCH_CUDA(cudaEventRecord(e0, 0))))
    goto out;
  /* 8 blocks of 256 per SM: a full SM on sm_90 */
  bench_verify_kernel<<<8 * sms, 256>>>((const uint64_t *)p, bytes / 8, offset / 8, seed, d);
  if ((rc = BENCH_CUDA(cudaGetLastError())) || (rc = BENCH_CUDA(cudaEventRecord(e1, 0))) ||
      (rc = BENCH_CUDA(cudaEventSynchronize(e1))) ||
      (rc = BENCH_CUDA(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost))))
    goto out;
  if (ms && (rc = BENCH_CUDA(cudaEventElapsedTime(ms, e0, e1))))
    goto out;
  *mismatches = h[0];
  *first_bad = h[0] ? h[1] * 8 : UINT64_MAX;
out:
  if (e0)
    BENCH_CUDA(cudaEventDestroy(e0));
  if (e1)
    BENCH_CUDA(cudaEventDestroy(e1));
  BENCH_CUDA(cudaFree(d));
  return rc;
}

int bench_verify(const void *p, uint64_t bytes, uint64_t offset, uint64_t seed,
                 uint64_t *mismatches, uint64_t *first_bad)
{
  return bench_verify_run(p, bytes, offset, seed, mismatches, first_bad, NULL);
}

__global__ void bench_fill_kernel(uint64_t *p, uint64_t nwords, uint64_t first_word, uint64_t seed)
{
  const uint64_t n = (uint64_t)gridDim.x * blockDim.x;
  for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < nwords; i += n)
    p[i] = bench_word(seed, first_word + i);
}

int bench_fill_device(void *dev, uint64_t bytes, uint64_t offset, uint64_t seed)
{
  int rc, device, sms;
  if (bytes % 8 != 0 || offset % 8 != 0)
    return -EINVAL;
  if (bytes == 0)
    return 0;
  if ((rc = BENCH_CUDA(cudaGetDevice(&device))) ||
      (rc = BENCH_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device))))
    return rc;
  bench_fill_kernel<<<8 * sms, 256>>>((uint64_t *)dev, bytes / 8, offset / 8, seed);
  if ((rc = BENCH_CUDA(cudaGetLastError())))
    return rc;
  return BENCH_CUDA(cudaDeviceSynchronize());
}

/* ---------------- helpers ---------------- */

void bench_rate_init(struct bench_rate *out, uint64_t bytes)
{
  memset(out, 0, sizeof(*out));
  out->bytes = bytes;
}

int bench_fail(struct bench_rate *out, int rc, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(out->note, sizeof(out->note), fmt, ap);
  va_end(ap);
  return rc;
}

int bench_check_device(const void *p, uint64_t bytes, uint64_t seed, struct bench_rate *out,
                       float *ms)
{
  uint64_t bad = 0, first = 0;
  int rc = bench_verify_run(p, bytes, 0, seed, &bad, &first, ms);
  if (rc)
    return bench_fail(out, rc, "checking the data on the GPU failed (CUDA error, see stderr)");
  if (bad)
    return bench_fail(out, -EBADMSG, "%llu of %llu words wrong on the GPU, first at byte %llu",
                      (unsigned long long)bad, (unsigned long long)(bytes / 8),
                      (unsigned long long)first);
  return 0;
}

double bench_median(double *v, int n)
{
  int i, j;
  for (i = 1; i < n; i++)
    for (j = i; j > 0 && v[j - 1] > v[j]; j--) {
      double x = v[j];
      v[j] = v[j - 1];
      v[j - 1] = x;
    }
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void bench_rate_set(struct bench_rate *out, double *seconds, int reps)
{
  out->reps = reps;
  out->seconds = bench_median(seconds, reps);
  out->gbps = out->seconds > 0 ? (double)out->bytes / out->seconds / 1e9 : 0;
}

/* Open path for reading and make sure it holds at least bytes (a multiple
 * of 8).  The fd, or -errno with out->note set. */
int bench_open_input(const char *path, uint64_t bytes, struct bench_rate *out)
{
  struct stat st;
  int fd;
  if (bytes == 0 || bytes % 8 != 0)
    return bench_fail(out, -EINVAL, "bytes must be a positive multiple of 8");
  fd = open(path, O_RDONLY);
  if (fd < 0)
    return bench_fail(out, -errno, "open %s: %s", path, strerror(errno));
  if (fstat(fd, &st) != 0 || (uint64_t)st.st_size < bytes) {
    close(fd);
    return bench_fail(out, -EINVAL, "%s is shorter than %llu bytes", path,
                      (unsigned long long)bytes);
  }
  return fd;
}

/* Warm-up copy, then reps timed copies (CUDA events), dst cleared before each. */
static int bench_time_copies(void *dst, const void *src, uint64_t bytes, enum cudaMemcpyKind kind,
                             int reps, struct bench_rate *out)
{
  double seconds[BENCH_MAX_REPS];
  cudaEvent_t e0 = NULL, e1 = NULL;
  float ms = 0;
  int rc, r;

  if ((rc = BENCH_CUDA(cudaEventCreate(&e0))) || (rc = BENCH_CUDA(cudaEventCreate(&e1))) ||
      (rc = BENCH_CUDA(cudaMemcpy(dst, src, bytes, kind))))
    goto out;
  for (r = 0; r < reps; r++) {
    if ((rc = BENCH_CUDA(cudaMemset(dst, 0, bytes))) ||
        (rc = BENCH_CUDA(cudaEventRecord(e0, 0))) ||
        (rc = BENCH_CUDA(cudaMemcpyAsync(dst, src, bytes, kind, 0))) ||
        (rc = BENCH_CUDA(cudaEventRecord(e1, 0))) || (rc = BENCH_CUDA(cudaEventSynchronize(e1))) ||
        (rc = BENCH_CUDA(cudaEventElapsedTime(&ms, e0, e1))))
      goto out;
    seconds[r] = ms * 1e-3;
  }
  bench_rate_set(out, seconds, reps);
out:
  if (e0)
    BENCH_CUDA(cudaEventDestroy(e0));
  if (e1)
    BENCH_CUDA(cudaEventDestroy(e1));
  if (rc)
    bench_fail(out, rc, "cudaMemcpy failed (see stderr)");
  return rc;
}

/* ---------------- ceiling ---------------- */

int bench_ceiling(void *dev, uint64_t bytes, uint64_t seed, struct bench_rate *out)
{
  void *host = NULL;
  double t0 = bench_now();
  int rc;

  bench_rate_init(out, bytes);
  if (bytes == 0 || bytes % 8 != 0)
    return bench_fail(out, -EINVAL, "bytes must be a positive multiple of 8");
  if ((rc = BENCH_CUDA(cudaMallocHost(&host, bytes))))
    return bench_fail(out, rc, "cudaMallocHost of %llu bytes failed", (unsigned long long)bytes);
  if ((rc = bench_fill_pattern(host, 0, bytes, seed))) {
    bench_fail(out, rc, "filling the pinned buffer: %s", strerror(-rc));
    goto out;
  }
  out->setup_seconds = bench_now() - t0;
  if ((rc = bench_time_copies(dev, host, bytes, cudaMemcpyHostToDevice, 5, out)) ||
      (rc = bench_check_device(dev, bytes, seed, out, NULL)))
    goto out;
  snprintf(out->note, sizeof(out->note), "pinned cudaMemcpy H2D, median of 5");
out:
  BENCH_CUDA(cudaFreeHost(host));
  return rc;
}

int bench_d2d(void *dst, const void *src, uint64_t bytes, struct bench_rate *out)
{
  int rc;
  bench_rate_init(out, bytes);
  if ((rc = bench_time_copies(dst, src, bytes, cudaMemcpyDeviceToDevice, 5, out)))
    return rc;
  snprintf(out->note, sizeof(out->note), "cudaMemcpy D2D, median of 5");
  return 0;
}

/* ---------------- naive ---------------- */

/* One naive transfer: read() all, then one cudaMemcpy.  *t_read, *t_all: seconds. */
static int bench_naive_once(int fd, char *buf, void *dev, uint64_t bytes, double *t_read,
                            double *t_all)
{
  const double t0 = bench_now();
  int rc = bench_pio_full(fd, buf, bytes, 0, 0);
  if (rc)
    return rc;
  *t_read = bench_now() - t0;
  /* a pageable copy may return before the DMA lands: wait for it */
  if ((rc = BENCH_CUDA(cudaMemcpy(dev, buf, bytes, cudaMemcpyHostToDevice))) ||
      (rc = BENCH_CUDA(cudaDeviceSynchronize())))
    return rc;
  *t_all = bench_now() - t0;
  return 0;
}

int bench_naive(const char *path, void *dev, uint64_t bytes, uint64_t seed,
                struct bench_rate *out)
{
  double seconds[BENCH_MAX_REPS], t_read[BENCH_MAX_REPS], t_all;
  char *buf = NULL;
  const int reps = 3;
  int fd, rc, r;

  bench_rate_init(out, bytes);
  if ((fd = bench_open_input(path, bytes, out)) < 0)
    return fd;
  /* a buffer the program already had: first-touch page faults are not the
   * I/O being compared (the warm-up pass also runs ~3x slower than later
   * ones, measured on the H100 machines) */
  buf = (char *)malloc(bytes);
  if (!buf) {
    rc = bench_fail(out, -ENOMEM, "malloc of %llu bytes failed", (unsigned long long)bytes);
    goto out;
  }
  memset(buf, 0, bytes);
  for (r = -1; r < reps; r++) {
    if ((rc = BENCH_CUDA(cudaMemset(dev, 0, bytes))) ||
        (rc = BENCH_CUDA(cudaDeviceSynchronize())))
      goto out;
    if ((rc = bench_naive_once(fd, buf, dev, bytes, &t_read[r < 0 ? 0 : r], &t_all))) {
      if (rc != -EIO)
        bench_fail(out, rc, "read %s: %s", path, strerror(-rc));
      goto out;
    }
    if (r >= 0)
      seconds[r] = t_all;
  }
  bench_rate_set(out, seconds, reps);
  if ((rc = bench_check_device(dev, bytes, seed, out, NULL)))
    goto out;
  snprintf(out->note, sizeof(out->note),
           "1 thread read() into a malloc buffer (%.2f GB/s), then 1 cudaMemcpy; median of %d",
           (double)bytes / bench_median(t_read, reps) / 1e9, reps);
out:
  if (rc && !out->note[0])
    bench_fail(out, rc, "CUDA error (see stderr)");
  free(buf);
  close(fd);
  return rc;
}

/* ---------------- zero-copy ---------------- */

int bench_zero_copy(const char *path, uint64_t bytes, uint64_t seed, struct bench_rate *out)
{
  double seconds[BENCH_MAX_REPS];
  const long page = sysconf(_SC_PAGESIZE);
  const int reps = 3;
  const char *mode = "Mapped|ReadOnly";
  void *map = MAP_FAILED, *dptr = NULL;
  size_t maplen;
  double t0;
  cudaError_t e;
  int fd, rc = 0, r, registered = 0;
  float ms = 0;

  bench_rate_init(out, bytes);
  if ((fd = bench_open_input(path, bytes, out)) < 0)
    return fd;
  maplen = (size_t)((bytes + (uint64_t)page - 1) / (uint64_t)page * (uint64_t)page);
  map = mmap(NULL, maplen, PROT_READ, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) {
    rc = bench_fail(out, -errno, "mmap: %s", strerror(errno));
    goto out;
  }
  t0 = bench_now();
  e = cudaHostRegister(map, maplen, cudaHostRegisterMapped | cudaHostRegisterReadOnly);
  if (e != cudaSuccess) {
    const char *why = cudaGetErrorString(e);
    cudaGetLastError(); /* a refusal is an answer here; do not leave it for the next check */
    mode = "Mapped";
    e = cudaHostRegister(map, maplen, cudaHostRegisterMapped);
    if (e != cudaSuccess) {
      cudaGetLastError();
      rc = bench_fail(out, -ENOTSUP, "cudaHostRegister refused: Mapped|ReadOnly: %s; Mapped: %s",
                      why, cudaGetErrorString(e));
      goto out;
    }
  }
  registered = 1;
  if ((rc = BENCH_CUDA(cudaHostGetDevicePointer(&dptr, map, 0))))
    goto out;
  out->setup_seconds = bench_now() - t0;
  if ((rc = bench_check_device(dptr, bytes, seed, out, &ms)))
    goto out; /* warm-up */
  for (r = 0; r < reps; r++) {
    if ((rc = bench_check_device(dptr, bytes, seed, out, &ms)))
      goto out;
    seconds[r] = ms * 1e-3;
  }
  bench_rate_set(out, seconds, reps);
  snprintf(out->note, sizeof(out->note),
           "mmap + cudaHostRegister(%s), kernel reads+checks host memory, median of %d; "
           "registration %.2f s untimed", mode, reps, out->setup_seconds);
out:
  if (rc && !out->note[0])
    bench_fail(out, rc, "CUDA error (see stderr)");
  if (registered)
    BENCH_CUDA(cudaHostUnregister(map));
  if (map != MAP_FAILED)
    munmap(map, maplen);
  close(fd);
  return rc;
}
