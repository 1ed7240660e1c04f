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
 *
 * The write kernel turns this around: block b gopen()s a file the host
 * emptied (O_CREAT|O_WRONLY: O_TRUNC would cut at every block's gopen; the
 * blocks share one descriptor), gwrite()s
 * its stride from a device image of the pattern in io_size calls (the same
 * cap vote before each), then gfsync()s and gclose()s it.  The file is
 * checked on the host afterwards (bench_check_file), since what counts is
 * what reached the host file.
 */
#include "bench/workloads.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cuda/atomic>
#include <cuda_runtime.h>

#include <gpufs.cuh>

#include "benchlib/cuda_check.h"
#include "benchlib/datafile.h"
#include "benchlib/pattern.h"
#include "benchlib/util.h"

/* A prime: i -> (i * BENCH_RAND_MULT + add) mod npages is a permutation of
 * [0, npages) for every npages below it (files up to 8 TiB at 4 KiB). */
#define BENCH_RAND_MULT 2654435761ull

/* Longest a write block waits for the other blocks' gopen before its gclose
 * (bench_wait_opens); only a grid that is not co-resident waits this long. */
#define BENCH_OPEN_WAIT_NS (60ull * 1000000000ull)

struct bench_counters {
  unsigned long long bytes;
  unsigned long long calls;
  unsigned long long mismatches;
  unsigned long long first_bad_word;
  unsigned long long errors;
  unsigned long long capped;
  unsigned long long error_taken; /* 0 until a thread claims first_error */
  long long first_error;
  unsigned long long opened; /* write kernel: blocks whose gopen has returned */
  unsigned long long checked; /* verify_after: bytes bench_check_after_kernel checked */
  /* where the read kernels' groups spend their time (leaders' globaltimer,
   * ns): summed over groups, and the first/last group start, last end */
  unsigned long long open_ns, read_ns, check_ns, close_ns, groups;
  unsigned long long first_start, last_start, last_end;
  /* write kernel: when the last block's gwrites ended and its gfsync
   * returned (globaltimer, ns) */
  unsigned long long last_write_end, last_sync_end;
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
/* Whole block: open path on instance (-1: the GPU's default instance). */
__device__ int bench_open(const char *path, int instance, struct bench_counters *c)
{
  int fd = instance < 0 ? gopen(path, GPUFS_O_RDONLY)
                        : gopen(gpufs_ref{(uint32_t)instance}, path, GPUFS_O_RDONLY);
  if (fd < 0 && threadIdx.x == 0)
    bench_record_error(c, fd);
  return fd;
}

/* The group's leader adds a time to one of the counters. */
__device__ __forceinline__ void bench_time(bool leader, unsigned long long *sum, uint64_t from,
                                           uint64_t to)
{
  if (leader)
    atomicAdd(sum, (unsigned long long)(to - from));
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

/* Whole group: read [off, off + want) into buf and, with check, check it
 * (without, the caller checks it after the kernel: bench_check_after).
 * False when the call failed or came short (the group stops). */
template <bool WARP>
__device__ bool bench_read_one(int fd, uint64_t off, uint64_t want, char *buf, uint64_t seed,
                               struct bench_counters *c, bool check = true)
{
  const unsigned t = WARP ? threadIdx.x % 32 : threadIdx.x;
  const unsigned n = WARP ? 32 : blockDim.x;
  const uint64_t t0 = bench_globaltimer();
  const ssize_t got = WARP ? gread_warp(fd, (int64_t)off, want, buf)
                           : gread(fd, (int64_t)off, want, buf);
  const uint64_t t1 = bench_globaltimer();
  bench_time(t == 0, &c->read_ns, t0, t1);
  if (got != (ssize_t)want) {
    if (t == 0)
      bench_record_error(c, (long long)got);
    return false;
  }
  uint64_t first_bad = UINT64_MAX;
  const uint64_t bad =
      check ? bench_check_words((const uint64_t *)buf, want / 8, off / 8, seed, t, n, &first_bad)
            : 0;
  if (bad) {
    atomicAdd(&c->mismatches, (unsigned long long)bad);
    atomicMin(&c->first_bad_word, (unsigned long long)first_bad);
  }
  bench_time(t == 0, &c->check_ns, t1, bench_globaltimer());
  if (t == 0) {
    atomicAdd(&c->bytes, (unsigned long long)want);
    atomicAdd(&c->calls, 1ull);
  }
  return true;
}

/* Whole block: close, and the leaders record the group's times. */
__device__ void bench_group_end(bool leader, int fd, uint64_t t0, struct bench_counters *c)
{
  const uint64_t t1 = bench_globaltimer();
  bench_close(fd, c);
  const uint64_t t2 = bench_globaltimer();
  bench_time(leader, &c->close_ns, t1, t2);
  if (leader) {
    atomicAdd(&c->groups, 1ull);
    atomicMin(&c->first_start, (unsigned long long)t0);
    atomicMax(&c->last_start, (unsigned long long)t0);
    atomicMax(&c->last_end, (unsigned long long)t2);
  }
}

/* Group g reads [g * stride, (g + 1) * stride) of the file in io-sized
 * calls: into its io-sized buffer at bufs + g * io, each call checked as it
 * arrives; or, with ends (verify_after), into bufs + offset, a destination
 * the file's size, nothing checked here, and ends[g] gets the end of its
 * full calls (bench_check_after checks them). */
template <bool WARP>
__global__ void __launch_bounds__(BENCH_BLOCK_THREADS, BENCH_SEQ_BLOCKS_PER_SM) bench_seq_kernel(const char *path, int instance, uint64_t size, uint64_t stride, uint64_t io,
                                 char *bufs, uint64_t seed, uint64_t cap_ns,
                                 struct bench_counters *c, unsigned long long *ends)
{
  const uint64_t g =
      WARP ? ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32 : (uint64_t)blockIdx.x;
  const uint64_t begin = g * stride;
  const uint64_t end = begin + stride < size ? begin + stride : size;
  const uint64_t t0 = bench_globaltimer();
  const bool leader = (WARP ? threadIdx.x % 32 : threadIdx.x) == 0;
  char *buf = bufs + g * io;
  const int fd = bench_open(path, instance, c);
  bench_time(leader, &c->open_ns, t0, bench_globaltimer());

  if (fd < 0)
    return;
  uint64_t off = begin;
  for (; off < end; off += io) {
    if (bench_group_stop<WARP>(t0, cap_ns, c))
      break;
    if (!bench_read_one<WARP>(fd, off, end - off < io ? end - off : io, ends ? bufs + off : buf,
                              seed, c, ends == NULL))
      break;
  }
  if (ends && leader)
    ends[g] = off < end ? off : end; /* read back by the host after the kernel */
  bench_group_end(leader, fd, t0, c);
}

/* verify_after: block b of the grid checks groups b, b + gridDim.x, ...:
 * the words [g * stride, ends[g]) of dst, which must hold the file's bytes
 * at their offsets; adds what it checked and found to c. */
__global__ void bench_check_after_kernel(const char *dst, uint64_t groups, uint64_t stride,
                                         const unsigned long long *ends, uint64_t seed,
                                         struct bench_counters *c)
{
  for (uint64_t g = blockIdx.x; g < groups; g += gridDim.x) {
    const uint64_t begin = g * stride;
    if (ends[g] <= begin)
      continue;
    const uint64_t n = (ends[g] - begin) / 8;
    uint64_t first_bad = UINT64_MAX;
    const uint64_t bad = bench_check_words((const uint64_t *)(dst + begin), n, begin / 8, seed,
                                           threadIdx.x, blockDim.x, &first_bad);
    if (bad) {
      atomicAdd(&c->mismatches, (unsigned long long)bad);
      atomicMin(&c->first_bad_word, (unsigned long long)first_bad);
    }
    if (threadIdx.x == 0)
      atomicAdd(&c->checked, (unsigned long long)(n * 8));
  }
}

/* Warp w makes calls i = w, w + nwarps, ... < reads, at piece (i * mult +
 * add) mod npages: distinct pieces, scattered over the file. */
__global__ void __launch_bounds__(BENCH_BLOCK_THREADS, BENCH_RAND_BLOCKS_PER_SM) bench_rand_kernel(const char *path, int instance, uint64_t npages, uint64_t io, uint64_t reads,
                                  uint64_t add, char *bufs, uint64_t seed, uint64_t cap_ns,
                                  struct bench_counters *c)
{
  const uint64_t w = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const uint64_t nwarps = (uint64_t)gridDim.x * blockDim.x / 32;
  const uint64_t t0 = bench_globaltimer();
  const bool leader = threadIdx.x % 32 == 0;
  char *buf = bufs + w * io;
  const int fd = bench_open(path, instance, c);
  bench_time(leader, &c->open_ns, t0, bench_globaltimer());

  if (fd < 0)
    return;
  for (uint64_t i = w; i < reads; i += nwarps) {
    if (bench_group_stop<true>(t0, cap_ns, c))
      break;
    const uint64_t page = (i * BENCH_RAND_MULT + add) % npages;
    if (!bench_read_one<true>(fd, page * io, io, buf, seed, c))
      break;
  }
  bench_group_end(leader, fd, t0, c);
}

/* Whole block.  The blocks share one descriptor, and with its last gclose
 * the host file is closed: a block that gopen()ed after that would open it
 * again (one more host open and close, in the timed kernel).  So no block
 * drops its reference before every block has taken one.  The release of each
 * block's count (after its gopen returned) pairs with the acquire load here.
 * A grid that is not co-resident must not call this (blocks still to start
 * would never count); after BENCH_OPEN_WAIT_NS the block gives up with an
 * -ETIMEDOUT error. */
__device__ void bench_wait_opens(struct bench_counters *c)
{
  if (threadIdx.x == 0) {
    cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> opened(c->opened);
    const uint64_t t0 = bench_globaltimer();
    while (opened.load(cuda::memory_order_acquire) < gridDim.x) {
      if (bench_globaltimer() - t0 > BENCH_OPEN_WAIT_NS) {
        bench_record_error(c, -ETIMEDOUT);
        break;
      }
      __nanosleep(1000);
    }
  }
  __syncthreads();
}

/* Block b gwrite()s [b * stride, (b + 1) * stride) of a new file from src +
 * offset in io-sized calls, then gfsync()s and gclose()s it; ends[b] gets
 * the end of its full gwrites (b * stride when none). */
__global__ void __launch_bounds__(BENCH_BLOCK_THREADS, BENCH_SEQ_BLOCKS_PER_SM) bench_write_kernel(const char *path, uint64_t size, uint64_t stride, uint64_t io,
                                   const char *src, uint64_t cap_ns, int hold,
                                   unsigned long long *ends, struct bench_counters *c)
{
  const uint64_t begin = (uint64_t)blockIdx.x * stride;
  const uint64_t end = begin >= size ? begin : begin + stride < size ? begin + stride : size;
  const uint64_t t0 = bench_globaltimer();
  uint64_t off = begin;
  const int fd = gopen(path, GPUFS_O_CREAT | GPUFS_O_WRONLY, 0644);

  if (threadIdx.x == 0) {
    if (fd < 0)
      bench_record_error(c, fd);
    cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(c->opened).fetch_add(
        1ull, cuda::memory_order_release);
  }
  if (fd >= 0) {
    for (; off < end; off += io) {
      if (bench_group_stop<false>(t0, cap_ns, c))
        break;
      const uint64_t want = end - off < io ? end - off : io;
      const ssize_t got = gwrite(fd, (int64_t)off, want, src + off);
      if (got != (ssize_t)want) {
        if (threadIdx.x == 0)
          bench_record_error(c, (long long)got);
        break;
      }
      if (threadIdx.x == 0) {
        atomicAdd(&c->bytes, (unsigned long long)want);
        atomicAdd(&c->calls, 1ull);
      }
    }
  }
  if (threadIdx.x == 0) {
    ends[blockIdx.x] = off < end ? off : end;
    atomicMin(&c->first_start, (unsigned long long)t0);
    atomicMax(&c->last_write_end, (unsigned long long)bench_globaltimer());
  }
  if (fd < 0)
    return;
  const int rc = gfsync(fd);
  if (threadIdx.x == 0) {
    if (rc < 0)
      bench_record_error(c, rc);
    atomicMax(&c->last_sync_end, (unsigned long long)bench_globaltimer());
  }
  if (hold)
    bench_wait_opens(c);
  bench_close(fd, c);
}

static int bench_params_ok(const struct bench_read_params *p)
{
  return p->path && p->file_size > 0 && p->access != BENCH_SEQ_WRITE && p->blocks > 0 &&
         p->threads >= 32 && p->threads % 32 == 0 && p->threads <= 1024 && p->io_size > 0 &&
         p->io_size % 8 == 0 && p->file_size % p->io_size == 0 &&
         strlen(p->path) < GPUFS_PATH_MAX &&
         (p->access != BENCH_RAND_WARP || p->file_size / p->io_size < BENCH_RAND_MULT) &&
         (!p->verify_after || p->access != BENCH_RAND_WARP);
}

int bench_gpufs_read(const struct bench_read_params *p, struct bench_read_result *r)
{
  struct bench_counters h;
  struct bench_counters *d = NULL;
  char *dpath = NULL, *bufs = NULL;
  unsigned long long *ends = NULL;
  cudaEvent_t e0 = NULL, e1 = NULL;
  const uint64_t cap_ns = p->cap_seconds > 0 ? (uint64_t)(p->cap_seconds * 1e9) : UINT64_MAX;
  const uint64_t warps = (uint64_t)p->blocks * (uint64_t)(p->threads / 32);
  const uint64_t groups = p->access == BENCH_SEQ_BLOCK ? (uint64_t)p->blocks : warps;
  const uint64_t npages = p->file_size / p->io_size;
  uint64_t stride = 0, reads = 0;
  float ms = 0;
  int rc, launched = 0;

  memset(r, 0, sizeof(*r));
  r->first_bad = UINT64_MAX;
  if (!bench_params_ok(p)) {
    if (p->before_launch)
      p->before_launch(p->before_arg); /* the others wait for it */
    return -EINVAL;
  }
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
  h.first_start = UINT64_MAX;

  if ((rc = BENCH_CUDA(cudaMalloc(&dpath, strlen(p->path) + 1))) ||
      (rc = BENCH_CUDA(cudaMemcpy(dpath, p->path, strlen(p->path) + 1, cudaMemcpyHostToDevice))) ||
      (rc = BENCH_CUDA(cudaMalloc(&d, sizeof(h)))) ||
      (rc = BENCH_CUDA(cudaMemcpy(d, &h, sizeof(h), cudaMemcpyHostToDevice))) ||
      (rc = BENCH_CUDA(cudaMalloc(&bufs, p->verify_after ? p->file_size : groups * p->io_size))) ||
      (p->verify_after && (rc = BENCH_CUDA(cudaMalloc(&ends, groups * sizeof(*ends))))) ||
      (p->verify_after && (rc = BENCH_CUDA(cudaMemset(ends, 0, groups * sizeof(*ends))))) ||
      (rc = BENCH_CUDA(cudaEventCreate(&e0))) || (rc = BENCH_CUDA(cudaEventCreate(&e1))) ||
      (rc = BENCH_CUDA(cudaDeviceSynchronize())))
    goto out;
  if (p->before_launch)
    p->before_launch(p->before_arg);
  launched = 1;
  if ((rc = BENCH_CUDA(cudaEventRecord(e0, 0))))
    goto out;
  switch (p->access) {
  case BENCH_SEQ_BLOCK:
    bench_seq_kernel<false><<<p->blocks, p->threads>>>(dpath, p->instance, p->file_size, stride, p->io_size,
                                                       bufs, p->seed, cap_ns, d, ends);
    break;
  case BENCH_SEQ_WARP:
    bench_seq_kernel<true><<<p->blocks, p->threads>>>(dpath, p->instance, p->file_size, stride, p->io_size,
                                                      bufs, p->seed, cap_ns, d, ends);
    break;
  case BENCH_RAND_WARP:
    bench_rand_kernel<<<p->blocks, p->threads>>>(dpath, p->instance, npages, p->io_size, reads,
                                                 p->seed % npages, bufs, p->seed, cap_ns, d);
    break;
  case BENCH_SEQ_WRITE: /* refused by bench_params_ok */
    break;
  }
  if ((rc = BENCH_CUDA(cudaGetLastError())) || (rc = BENCH_CUDA(cudaEventRecord(e1, 0))) ||
      (rc = BENCH_CUDA(cudaEventSynchronize(e1))) ||
      (rc = BENCH_CUDA(cudaEventElapsedTime(&ms, e0, e1))))
    goto out;
  if (p->verify_after) {
    /* untimed: every word the kernel read, checked where it landed */
    const double v0 = bench_now();
    bench_check_after_kernel<<<1024, 256>>>(bufs, groups, stride, ends, p->seed, d);
    if ((rc = BENCH_CUDA(cudaGetLastError())) || (rc = BENCH_CUDA(cudaDeviceSynchronize())))
      goto out;
    r->verify_seconds = bench_now() - v0;
  }
  if ((rc = BENCH_CUDA(cudaMemcpy(&h, d, sizeof(h), cudaMemcpyDeviceToHost))))
    goto out;

  r->seconds = ms * 1e-3;
  /* verify_after: what the check kernel saw (the bytes the groups' full
   * calls covered); a shortfall shows as bytes short of expected_bytes */
  r->bytes = p->verify_after && h.checked < h.bytes ? h.checked : h.bytes;
  r->calls = h.calls;
  r->mismatches = h.mismatches;
  r->first_bad = h.mismatches ? h.first_bad_word * 8 : UINT64_MAX;
  r->errors = h.errors;
  r->first_error = h.first_error;
  r->capped_groups = h.capped;
  if (h.groups) {
    const double us = 1e-3 / (double)h.groups;
    r->open_us = (double)h.open_ns * us;
    r->read_us = (double)h.read_ns * us;
    r->check_us = (double)h.check_ns * us;
    r->close_us = (double)h.close_ns * us;
    r->start_skew_us = (double)(h.last_start - h.first_start) * 1e-3;
    r->span_us = (double)(h.last_end - h.first_start) * 1e-3;
  }
  if (r->seconds > 0) {
    r->gbps = (double)r->bytes / r->seconds / 1e9;
    r->mcalls_per_s = (double)r->calls / r->seconds / 1e6;
  }
out:
  if (!launched && p->before_launch)
    p->before_launch(p->before_arg); /* the others wait for it */
  if (e0)
    BENCH_CUDA(cudaEventDestroy(e0));
  if (e1)
    BENCH_CUDA(cudaEventDestroy(e1));
  BENCH_CUDA(cudaFree(bufs));
  BENCH_CUDA(cudaFree(ends));
  BENCH_CUDA(cudaFree(d));
  BENCH_CUDA(cudaFree(dpath));
  return rc;
}

/* The host's check of what the kernel wrote: the whole file when every
 * block wrote its stride in full, else each block's written range. */
static int bench_write_check(const struct bench_write_params *p, uint64_t stride,
                             const unsigned long long *ends, struct bench_write_result *r)
{
  const double t0 = bench_now();
  struct stat st;
  uint64_t bad, first, b;
  int rc = 0;

  if (stat(p->path, &st) != 0)
    return -errno;
  r->file_bytes = (uint64_t)st.st_size;
  for (b = 0; b < (uint64_t)p->blocks && rc == 0; b++) {
    const uint64_t begin = b * stride;
    /* bytes past the file's end are missing, not checked: file_bytes tells */
    uint64_t end = ends[b] < r->file_bytes ? ends[b] : r->file_bytes / 8 * 8;
    if (r->io.bytes == p->file_size) {
      if (b > 0)
        break;
      end = p->file_size < r->file_bytes ? p->file_size : r->file_bytes / 8 * 8;
    }
    if (end <= begin)
      continue;
    rc = bench_check_file(p->path, begin, end - begin, p->seed, &bad, &first);
    if (rc == 0) {
      r->checked_bytes += end - begin;
      r->io.mismatches += bad;
      r->io.first_bad = first < r->io.first_bad ? first : r->io.first_bad;
    }
  }
  r->verify_seconds = bench_now() - t0;
  return rc;
}

int bench_gpufs_write(const struct bench_write_params *p, struct bench_write_result *r)
{
  struct bench_counters h;
  struct bench_counters *d = NULL;
  unsigned long long *ends = NULL, *hends = NULL;
  char *dpath = NULL;
  cudaEvent_t e0 = NULL, e1 = NULL;
  const uint64_t cap_ns = p->cap_seconds > 0 ? (uint64_t)(p->cap_seconds * 1e9) : UINT64_MAX;
  uint64_t stride, npieces;
  int device = 0, sms = 0, per_sm = 0;
  float ms = 0;
  int rc;

  memset(r, 0, sizeof(*r));
  r->io.first_bad = UINT64_MAX;
  if (!p->path || !p->src || p->file_size == 0 || p->file_size % 8 != 0 || p->blocks <= 0 ||
      p->threads < 32 || p->threads % 32 != 0 || p->threads > 1024 || p->io_size == 0 ||
      p->io_size % 8 != 0 || strlen(p->path) >= GPUFS_PATH_MAX)
    return -EINVAL;
  /* whole io_size pieces per block, as the seq reads */
  npieces = (p->file_size + p->io_size - 1) / p->io_size;
  stride = (npieces + (uint64_t)p->blocks - 1) / (uint64_t)p->blocks * p->io_size;
  r->io.expected_bytes = p->file_size;
  memset(&h, 0, sizeof(h));
  h.first_start = UINT64_MAX;
  if (truncate(p->path, 0) != 0 && errno != ENOENT)
    return -errno; /* the kernel's gopen has no O_TRUNC */
  hends = (unsigned long long *)calloc((size_t)p->blocks, sizeof(*hends));
  if (!hends)
    return -ENOMEM;

  if ((rc = BENCH_CUDA(cudaGetDevice(&device))) ||
      (rc = BENCH_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device))) ||
      (rc = BENCH_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, bench_write_kernel,
                                                                     p->threads, 0))) ||
      (rc = BENCH_CUDA(cudaMalloc(&dpath, strlen(p->path) + 1))) ||
      (rc = BENCH_CUDA(cudaMemcpy(dpath, p->path, strlen(p->path) + 1, cudaMemcpyHostToDevice))) ||
      (rc = BENCH_CUDA(cudaMalloc(&d, sizeof(h)))) ||
      (rc = BENCH_CUDA(cudaMemcpy(d, &h, sizeof(h), cudaMemcpyHostToDevice))) ||
      (rc = BENCH_CUDA(cudaMalloc(&ends, (size_t)p->blocks * sizeof(*ends)))) ||
      (rc = BENCH_CUDA(cudaEventCreate(&e0))) || (rc = BENCH_CUDA(cudaEventCreate(&e1))) ||
      (rc = BENCH_CUDA(cudaDeviceSynchronize())) || (rc = BENCH_CUDA(cudaEventRecord(e0, 0))))
    goto out;
  r->co_resident = (uint64_t)per_sm * (uint64_t)sms >= (uint64_t)p->blocks;
  bench_write_kernel<<<p->blocks, p->threads>>>(dpath, p->file_size, stride, p->io_size,
                                                (const char *)p->src, cap_ns, r->co_resident,
                                                ends, d);
  if ((rc = BENCH_CUDA(cudaGetLastError())) || (rc = BENCH_CUDA(cudaEventRecord(e1, 0))) ||
      (rc = BENCH_CUDA(cudaEventSynchronize(e1))) ||
      (rc = BENCH_CUDA(cudaEventElapsedTime(&ms, e0, e1))) ||
      (rc = BENCH_CUDA(cudaMemcpy(&h, d, sizeof(h), cudaMemcpyDeviceToHost))) ||
      (rc = BENCH_CUDA(cudaMemcpy(hends, ends, (size_t)p->blocks * sizeof(*ends),
                                  cudaMemcpyDeviceToHost))))
    goto out;

  r->io.seconds = ms * 1e-3;
  r->io.bytes = h.bytes;
  r->io.calls = h.calls;
  r->io.errors = h.errors;
  r->io.first_error = h.first_error;
  r->io.capped_groups = h.capped;
  if (r->io.seconds > 0) {
    r->io.gbps = (double)r->io.bytes / r->io.seconds / 1e9;
    r->io.mcalls_per_s = (double)r->io.calls / r->io.seconds / 1e6;
  }
  if (h.first_start != UINT64_MAX && h.last_write_end >= h.first_start &&
      h.last_sync_end >= h.last_write_end) {
    r->write_phase_s = (double)(h.last_write_end - h.first_start) * 1e-9;
    r->sync_phase_s = (double)(h.last_sync_end - h.last_write_end) * 1e-9;
  }
  r->check_error = bench_write_check(p, stride, hends, r);
out:
  if (e0)
    BENCH_CUDA(cudaEventDestroy(e0));
  if (e1)
    BENCH_CUDA(cudaEventDestroy(e1));
  BENCH_CUDA(cudaFree(ends));
  BENCH_CUDA(cudaFree(d));
  BENCH_CUDA(cudaFree(dpath));
  free(hends);
  return rc;
}
