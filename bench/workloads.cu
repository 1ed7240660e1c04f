/*
 * workloads.cu - read kernels over libgpufs, every word checked.
 * Contracts: bench/workloads.h.
 *
 * A "group" is whoever makes one libgpufs call together: a threadblock for
 * gread, a warp for gread_warp.  Each group owns a device buffer of io_size
 * bytes; per call it
 *   1. decides, as one, whether the time cap has passed (its leader reads
 *      %globaltimer; the vote is a group barrier, so every thread has also
 *      finished checking the previous data in the buffer),
 *   2. reads io_size bytes into its buffer,
 *   3. checks them against bench_word, all threads striding over the words.
 * Every block opens the file with block-level gopen and closes it at the end.
 */
#include "bench/workloads.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <cuda_runtime.h>

#include <gpufs.cuh>

#include "bench/cuda_check.h"
#include "bench/pattern.h"

/* A prime: i -> (i * BENCH_RAND_MULT + add) mod npages is a permutation of
 * [0, npages) for every npages below it (files up to 8 TiB at 4 KiB). */
#define BENCH_RAND_MULT 2654435761ull

struct bench_counters {
  unsigned long long bytes;
  unsigned long long calls;
  unsigned long long mismatches;
  unsigned long long first_bad_word;
  unsigned long long errors;
  unsigned long long capped;
  unsigned long long error_taken; /* 0 until a thread claims first_error */
  long long first_error;
};

__device__ __forceinline__ uint64_t bench_globaltimer(void)
{
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/* One thread per failed call. */
__device__ void bench_record_error(struct bench_counters *c, long long what)
{
  atomicAdd(&c->errors, 1ull);
  /* only the host reads first_error, after the kernel */
  if (atomicCAS(&c->error_taken, 0ull, 1ull) == 0ull)
    c->first_error = what;
}

/* Whole block. */
__device__ int bench_open(const char *path, struct bench_counters *c)
{
  int fd = gopen(path, GPUFS_O_RDONLY);
  if (fd < 0 && threadIdx.x == 0)
    bench_record_error(c, fd);
  return fd;
}

/* Whole block, after all of its warps have finished their calls. */
__device__ void bench_close(int fd, struct bench_counters *c)
{
  __syncthreads();
  int rc = gclose(fd);
  if (rc < 0 && threadIdx.x == 0)
    bench_record_error(c, rc);
}

/* Whole group.  True when the group must stop: its leader saw the cap pass. */
template <bool WARP>
__device__ bool bench_group_stop(uint64_t t0, uint64_t cap_ns, struct bench_counters *c)
{
  const bool leader = (WARP ? threadIdx.x % 32 : threadIdx.x) == 0;
  const bool late = leader && bench_globaltimer() - t0 > cap_ns;
  bool stop;
  if (WARP) {
    stop = __any_sync(0xffffffffu, late);
    __syncwarp(); /* orders the lanes' reads of the buffer before the next call's writes */
  } else {
    stop = __syncthreads_or(late) != 0;
  }
  if (stop && leader)
    atomicAdd(&c->capped, 1ull);
  return stop;
}

/* Whole group: read [off, off + want) into buf and check it.  False when
 * the call failed or came short (the group stops). */
template <bool WARP>
__device__ bool bench_read_one(int fd, uint64_t off, uint64_t want, char *buf, uint64_t seed,
                               struct bench_counters *c)
{
  const unsigned t = WARP ? threadIdx.x % 32 : threadIdx.x;
  const unsigned n = WARP ? 32 : blockDim.x;
  const ssize_t got = WARP ? gread_warp(fd, (int64_t)off, want, buf)
                           : gread(fd, (int64_t)off, want, buf);
  if (got != (ssize_t)want) {
    if (t == 0)
      bench_record_error(c, (long long)got);
    return false;
  }
  uint64_t first_bad = UINT64_MAX;
  const uint64_t bad =
      bench_check_words((const uint64_t *)buf, want / 8, off / 8, seed, t, n, &first_bad);
  if (bad) {
    atomicAdd(&c->mismatches, (unsigned long long)bad);
    atomicMin(&c->first_bad_word, (unsigned long long)first_bad);
  }
  if (t == 0) {
    atomicAdd(&c->bytes, (unsigned long long)want);
    atomicAdd(&c->calls, 1ull);
  }
  return true;
}

/* Group g reads [g * stride, (g + 1) * stride) of the file in io-sized calls. */
template <bool WARP>
__global__ void bench_seq_kernel(const char *path, uint64_t size, uint64_t stride, uint64_t io,
                                 char *bufs, uint64_t seed, uint64_t cap_ns,
                                 struct bench_counters *c)
{
  const uint64_t g =
      WARP ? ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32 : (uint64_t)blockIdx.x;
  const uint64_t begin = g * stride;
  const uint64_t end = begin + stride < size ? begin + stride : size;
  const uint64_t t0 = bench_globaltimer();
  char *buf = bufs + g * io;
  const int fd = bench_open(path, c);

  if (fd < 0)
    return;
  for (uint64_t off = begin; off < end; off += io) {
    if (bench_group_stop<WARP>(t0, cap_ns, c))
      break;
    if (!bench_read_one<WARP>(fd, off, end - off < io ? end - off : io, buf, seed, c))
      break;
  }
  bench_close(fd, c);
}

/* Warp w makes calls i = w, w + nwarps, ... < reads, at piece (i * mult +
 * add) mod npages: distinct pieces, scattered over the file. */
__global__ void bench_rand_kernel(const char *path, uint64_t npages, uint64_t io, uint64_t reads,
                                  uint64_t add, char *bufs, uint64_t seed, uint64_t cap_ns,
                                  struct bench_counters *c)
{
  const uint64_t w = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const uint64_t nwarps = (uint64_t)gridDim.x * blockDim.x / 32;
  const uint64_t t0 = bench_globaltimer();
  char *buf = bufs + w * io;
  const int fd = bench_open(path, c);

  if (fd < 0)
    return;
  for (uint64_t i = w; i < reads; i += nwarps) {
    if (bench_group_stop<true>(t0, cap_ns, c))
      break;
    const uint64_t page = (i * BENCH_RAND_MULT + add) % npages;
    if (!bench_read_one<true>(fd, page * io, io, buf, seed, c))
      break;
  }
  bench_close(fd, c);
}

static int bench_params_ok(const struct bench_read_params *p)
{
  return p->path && p->file_size > 0 && p->blocks > 0 && p->threads >= 32 &&
         p->threads % 32 == 0 && p->threads <= 1024 && p->io_size > 0 && p->io_size % 8 == 0 &&
         p->file_size % p->io_size == 0 && strlen(p->path) < GPUFS_PATH_MAX &&
         (p->access != BENCH_RAND_WARP || p->file_size / p->io_size < BENCH_RAND_MULT);
}

int bench_gpufs_read(const struct bench_read_params *p, struct bench_read_result *r)
{
  struct bench_counters h;
  struct bench_counters *d = NULL;
  char *dpath = NULL, *bufs = NULL;
  cudaEvent_t e0 = NULL, e1 = NULL;
  const uint64_t cap_ns = p->cap_seconds > 0 ? (uint64_t)(p->cap_seconds * 1e9) : UINT64_MAX;
  const uint64_t warps = (uint64_t)p->blocks * (uint64_t)(p->threads / 32);
  const uint64_t groups = p->access == BENCH_SEQ_BLOCK ? (uint64_t)p->blocks : warps;
  const uint64_t npages = p->file_size / p->io_size;
  uint64_t stride = 0, reads = 0;
  float ms = 0;
  int rc;

  memset(r, 0, sizeof(*r));
  r->first_bad = UINT64_MAX;
  if (!bench_params_ok(p))
    return -EINVAL;
  if (p->access == BENCH_RAND_WARP) {
    reads = p->rand_reads < npages ? p->rand_reads : npages;
    r->expected_bytes = reads * p->io_size;
  } else {
    /* whole io_size pieces per group, so that no call straddles two groups */
    stride = (npages + groups - 1) / groups * p->io_size;
    r->expected_bytes = p->file_size;
  }
  memset(&h, 0, sizeof(h));
  h.first_bad_word = UINT64_MAX;

  if ((rc = BENCH_CUDA(cudaMalloc(&dpath, strlen(p->path) + 1))) ||
      (rc = BENCH_CUDA(cudaMemcpy(dpath, p->path, strlen(p->path) + 1, cudaMemcpyHostToDevice))) ||
      (rc = BENCH_CUDA(cudaMalloc(&d, sizeof(h)))) ||
      (rc = BENCH_CUDA(cudaMemcpy(d, &h, sizeof(h), cudaMemcpyHostToDevice))) ||
      (rc = BENCH_CUDA(cudaMalloc(&bufs, groups * p->io_size))) ||
      (rc = BENCH_CUDA(cudaEventCreate(&e0))) || (rc = BENCH_CUDA(cudaEventCreate(&e1))) ||
      (rc = BENCH_CUDA(cudaDeviceSynchronize())) || (rc = BENCH_CUDA(cudaEventRecord(e0, 0))))
    goto out;
  switch (p->access) {
  case BENCH_SEQ_BLOCK:
    bench_seq_kernel<false><<<p->blocks, p->threads>>>(dpath, p->file_size, stride, p->io_size,
                                                       bufs, p->seed, cap_ns, d);
    break;
  case BENCH_SEQ_WARP:
    bench_seq_kernel<true><<<p->blocks, p->threads>>>(dpath, p->file_size, stride, p->io_size,
                                                      bufs, p->seed, cap_ns, d);
    break;
  case BENCH_RAND_WARP:
    bench_rand_kernel<<<p->blocks, p->threads>>>(dpath, npages, p->io_size, reads,
                                                 p->seed % npages, bufs, p->seed, cap_ns, d);
    break;
  }
  if ((rc = BENCH_CUDA(cudaGetLastError())) || (rc = BENCH_CUDA(cudaEventRecord(e1, 0))) ||
      (rc = BENCH_CUDA(cudaEventSynchronize(e1))) ||
      (rc = BENCH_CUDA(cudaEventElapsedTime(&ms, e0, e1))) ||
      (rc = BENCH_CUDA(cudaMemcpy(&h, d, sizeof(h), cudaMemcpyDeviceToHost))))
    goto out;

  r->seconds = ms * 1e-3;
  r->bytes = h.bytes;
  r->calls = h.calls;
  r->mismatches = h.mismatches;
  r->first_bad = h.mismatches ? h.first_bad_word * 8 : UINT64_MAX;
  r->errors = h.errors;
  r->first_error = h.first_error;
  r->capped_groups = h.capped;
  if (r->seconds > 0) {
    r->gbps = (double)r->bytes / r->seconds / 1e9;
    r->mcalls_per_s = (double)r->calls / r->seconds / 1e6;
  }
out:
  if (e0)
    BENCH_CUDA(cudaEventDestroy(e0));
  if (e1)
    BENCH_CUDA(cudaEventDestroy(e1));
  BENCH_CUDA(cudaFree(bufs));
  BENCH_CUDA(cudaFree(d));
  BENCH_CUDA(cudaFree(dpath));
  return rc;
}
