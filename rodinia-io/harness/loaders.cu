/*
 * loaders.cu - the ways a version moves its inputs into GPU memory
 * (contracts: rio_cuda.h), and the buffers they need, made before the timed
 * part of a run (rio_ctx_prepare) so that every version's clock starts at
 * the first open.
 */
#include "rodinia-io/harness/rio_cuda.h"
#include "rodinia-io/harness/rio_ctx.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "benchlib/util.h"
#include "include/gpufs.cuh"
#include "rodinia-io/harness/rio_device.cuh"

#define RIO_EXPERT_BUFS 4
#define RIO_EXPERT_MAX_THREADS 32

double rio_now(void) { return bench_now(); }

int rio_cuda_check(struct rio_run *run, cudaError_t e, const char *call, const char *file, int line)
{
  if (e == cudaSuccess)
    return 0;
  return rio_fail(run, -EIO, "%s:%d: %s: %s", file, line, call, cudaGetErrorString(e));
}

/* ---------------- buffers, made untimed ---------------- */

/* One expert set per input: a stream and RIO_EXPERT_BUFS pinned 1 MiB
 * buffers (with the event that says a buffer's copy is done) per thread, and
 * one event per chunk of the input for consumers (rio_expert_wait). */
struct rio_expert_set {
  int nthreads;
  cudaStream_t stream[RIO_EXPERT_MAX_THREADS];
  uint8_t *pinned[RIO_EXPERT_MAX_THREADS][RIO_EXPERT_BUFS];
  cudaEvent_t done[RIO_EXPERT_MAX_THREADS][RIO_EXPERT_BUFS];
  uint64_t nchunks;
  cudaEvent_t *chunk_ev;
};

struct rio_ctx {
  enum rio_version v;
  uint8_t *cpuio_buf; /* pageable, the largest input, touched */
  struct rio_expert_set *ex[RIO_MAX_INPUTS];
  char *dpath[RIO_MAX_INPUTS];
  int *derr;
};

static void rio_expert_set_free(struct rio_expert_set *x)
{
  if (!x)
    return;
  for (int t = 0; t < x->nthreads; t++) {
    for (int b = 0; b < RIO_EXPERT_BUFS; b++) {
      if (x->pinned[t][b])
        cudaFreeHost(x->pinned[t][b]);
      if (x->done[t][b])
        cudaEventDestroy(x->done[t][b]);
    }
    if (x->stream[t])
      cudaStreamDestroy(x->stream[t]);
  }
  for (uint64_t c = 0; x->chunk_ev && c < x->nchunks; c++)
    if (x->chunk_ev[c])
      cudaEventDestroy(x->chunk_ev[c]);
  free(x->chunk_ev);
  free(x);
}

static int rio_expert_set_make(struct rio_run *run, uint64_t size, struct rio_expert_set **out)
{
  struct rio_expert_set *x = (struct rio_expert_set *)calloc(1, sizeof(*x));
  int rc = 0;
  if (!x)
    return rio_fail(run, -ENOMEM, "expert: no host memory");
  x->nthreads = run->expert_threads;
  x->nchunks = (size + RIO_EXPERT_CHUNK - 1) / RIO_EXPERT_CHUNK;
  x->chunk_ev = (cudaEvent_t *)calloc(x->nchunks, sizeof(cudaEvent_t));
  if (!x->chunk_ev) {
    free(x);
    return rio_fail(run, -ENOMEM, "expert: no host memory");
  }
  for (int t = 0; t < x->nthreads && !rc; t++) {
    rc = RIO_CUDA(run, cudaStreamCreateWithFlags(&x->stream[t], cudaStreamNonBlocking));
    for (int b = 0; b < RIO_EXPERT_BUFS && !rc; b++) {
      rc = RIO_CUDA(run, cudaHostAlloc((void **)&x->pinned[t][b], RIO_EXPERT_CHUNK, cudaHostAllocDefault));
      if (!rc)
        rc = RIO_CUDA(run, cudaEventCreateWithFlags(&x->done[t][b], cudaEventDisableTiming));
    }
  }
  for (uint64_t c = 0; c < x->nchunks && !rc; c++)
    rc = RIO_CUDA(run, cudaEventCreateWithFlags(&x->chunk_ev[c], cudaEventDisableTiming));
  if (rc) {
    rio_expert_set_free(x);
    return rc;
  }
  *out = x;
  return 0;
}

int rio_ctx_prepare(struct rio_run *run, enum rio_version v)
{
  struct rio_ctx *c = (struct rio_ctx *)calloc(1, sizeof(*c));
  int rc = 0;
  if (!c)
    return rio_fail(run, -ENOMEM, "no host memory");
  run->ctx = c;
  c->v = v;
  if (run->expert_threads < 1 || run->expert_threads > RIO_EXPERT_MAX_THREADS)
    return rio_fail(run, -EINVAL, "expert threads: %d (1..%d)", run->expert_threads,
                    RIO_EXPERT_MAX_THREADS);
  rc = RIO_CUDA(run, cudaMalloc((void **)&c->derr, sizeof(int)));
  if (rc)
    return rc;
  if (v == RIO_CPU_IO) {
    uint64_t biggest = 0;
    for (int i = 0; i < run->ninputs; i++)
      biggest = run->in[i].size > biggest ? run->in[i].size : biggest;
    c->cpuio_buf = (uint8_t *)malloc(biggest);
    if (!c->cpuio_buf)
      return rio_fail(run, -ENOMEM, "cpu-io: no host memory for %llu bytes",
                      (unsigned long long)biggest);
    memset(c->cpuio_buf, 0, biggest); /* touched: the timed read() finds its pages */
  }
  for (int i = 0; i < run->ninputs && !rc; i++) {
    if (v == RIO_EXPERT)
      rc = rio_expert_set_make(run, run->in[i].size, &c->ex[i]);
    if (rio_is_gpufs(v)) {
      const size_t n = strlen(run->in[i].path) + 1;
      rc = RIO_CUDA(run, cudaMalloc((void **)&c->dpath[i], n));
      if (!rc)
        rc = RIO_CUDA(run, cudaMemcpy(c->dpath[i], run->in[i].path, n, cudaMemcpyHostToDevice));
    }
  }
  return rc;
}

void rio_ctx_release(struct rio_run *run)
{
  struct rio_ctx *c = run->ctx;
  if (!c)
    return;
  free(c->cpuio_buf);
  for (int i = 0; i < RIO_MAX_INPUTS; i++) {
    rio_expert_set_free(c->ex[i]);
    if (c->dpath[i])
      cudaFree(c->dpath[i]);
  }
  if (c->derr)
    cudaFree(c->derr);
  free(c);
  run->ctx = NULL;
}

/* ---------------- cpu-io ---------------- */

int rio_cpuio_load(struct rio_run *run, int i, void *dev)
{
  const struct rio_input *in = &run->in[i];
  uint8_t *buf = run->ctx->cpuio_buf;
  int fd = open(in->path, O_RDONLY);
  if (fd < 0)
    return rio_fail(run, -errno, "cpu-io: open %s: %s", in->path, strerror(errno));
  uint64_t got = 0;
  while (got < in->size) {
    ssize_t n = read(fd, buf + got, in->size - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      int e = n < 0 ? errno : EIO;
      close(fd);
      return rio_fail(run, -e, "cpu-io: read %s: %s", in->path, n < 0 ? strerror(e) : "file too short");
    }
    got += (uint64_t)n;
  }
  close(fd);
  /* From pageable memory cudaMemcpy may return once the bytes are in the
   * driver's staging, before they reach dev; the benchmarks' kernels run on
   * non-blocking streams, which do not wait for that last DMA on the
   * legacy stream: wait for it here (hotspot's cpu-io read stale rows of
   * its inputs on an H100, 2026-11-27, 3390 of 262144 cells off). */
  int rc = RIO_CUDA(run, cudaMemcpy(dev, buf, in->size, cudaMemcpyHostToDevice));
  return rc ? rc : RIO_CUDA(run, cudaStreamSynchronize(cudaStreamLegacy));
}

/* ---------------- expert ---------------- */

struct rio_expert {
  struct rio_run *run;
  int input;
  int fd;
  uint8_t *dev;
  struct rio_expert_set *set;
  pthread_t tid[RIO_EXPERT_MAX_THREADS];
  int started;
  int rc[RIO_EXPERT_MAX_THREADS];
  char why[RIO_EXPERT_MAX_THREADS][160];
  /* chunk c's copy is issued and its chunk event recorded: set by the
   * worker under mu (the mutex orders the event record before the
   * consumer's cudaStreamWaitEvent), waited for by rio_expert_wait */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  uint8_t *recorded;
  int failed;
  uint64_t next_wait; /* chunks below it are waited for already */
};

struct rio_expert_arg {
  struct rio_expert *job;
  int t;
};

static void rio_expert_publish(struct rio_expert *job, uint64_t c, int failed)
{
  pthread_mutex_lock(&job->mu);
  if (failed)
    job->failed = 1;
  else
    job->recorded[c] = 1;
  pthread_cond_broadcast(&job->cv);
  pthread_mutex_unlock(&job->mu);
}

static int rio_expert_worker_run(struct rio_expert *job, int t)
{
  struct rio_expert_set *x = job->set;
  const uint64_t size = job->run->in[job->input].size;
  char *why = job->why[t];
  cudaError_t e = cudaSetDevice(job->run->device);
  uint64_t k = 0;
  if (e != cudaSuccess)
    goto cuda_fail;
  for (uint64_t c = (uint64_t)t; c < x->nchunks; c += (uint64_t)x->nthreads, k++) {
    const int b = (int)(k % RIO_EXPERT_BUFS);
    const uint64_t off = c * RIO_EXPERT_CHUNK;
    const uint64_t len = size - off < RIO_EXPERT_CHUNK ? size - off : RIO_EXPERT_CHUNK;
    /* the buffer's previous copy must be done before pread overwrites it */
    if (k >= RIO_EXPERT_BUFS && (e = cudaEventSynchronize(x->done[t][b])) != cudaSuccess)
      goto cuda_fail;
    int rc = bench_pio_full(job->fd, x->pinned[t][b], len, off, 0);
    if (rc) {
      snprintf(why, 160, "expert: pread of input %.32s: %s", job->run->in[job->input].name, strerror(-rc));
      return rc;
    }
    if ((e = cudaMemcpyAsync(job->dev + off, x->pinned[t][b], len, cudaMemcpyHostToDevice,
                             x->stream[t])) != cudaSuccess ||
        (e = cudaEventRecord(x->done[t][b], x->stream[t])) != cudaSuccess ||
        (e = cudaEventRecord(x->chunk_ev[c], x->stream[t])) != cudaSuccess)
      goto cuda_fail;
    rio_expert_publish(job, c, 0);
  }
  if ((e = cudaStreamSynchronize(x->stream[t])) != cudaSuccess)
    goto cuda_fail;
  return 0;
cuda_fail:
  snprintf(why, 160, "expert: %s", cudaGetErrorString(e));
  return -EIO;
}

static void *rio_expert_worker(void *p)
{
  struct rio_expert_arg *a = (struct rio_expert_arg *)p;
  struct rio_expert *job = a->job;
  const int t = a->t;
  free(a);
  job->rc[t] = rio_expert_worker_run(job, t);
  if (job->rc[t])
    rio_expert_publish(job, 0, 1);
  return NULL;
}

int rio_expert_start(struct rio_run *run, int i, void *dev, struct rio_expert **out)
{
  struct rio_expert *job = (struct rio_expert *)calloc(1, sizeof(*job));
  *out = NULL;
  if (!job)
    return rio_fail(run, -ENOMEM, "expert: no host memory");
  job->run = run;
  job->input = i;
  job->dev = (uint8_t *)dev;
  job->set = run->ctx->ex[i];
  pthread_mutex_init(&job->mu, NULL);
  pthread_cond_init(&job->cv, NULL);
  job->recorded = (uint8_t *)calloc(job->set->nchunks, 1);
  job->fd = open(run->in[i].path, O_RDONLY);
  *out = job;
  if (!job->recorded)
    return rio_fail(run, -ENOMEM, "expert: no host memory");
  if (job->fd < 0)
    return rio_fail(run, -errno, "expert: open %s: %s", run->in[i].path, strerror(errno));
  for (int t = 0; t < job->set->nthreads; t++) {
    struct rio_expert_arg *a = (struct rio_expert_arg *)malloc(sizeof(*a));
    if (!a)
      return rio_fail(run, -ENOMEM, "expert: no host memory");
    a->job = job;
    a->t = t;
    int e = pthread_create(&job->tid[t], NULL, rio_expert_worker, a);
    if (e) {
      free(a);
      return rio_fail(run, -e, "expert: cannot start a thread: %s", strerror(e));
    }
    job->started++;
  }
  return 0;
}

int rio_expert_wait(struct rio_expert *job, uint64_t upto, cudaStream_t stream)
{
  struct rio_run *run = job->run;
  const uint64_t size = run->in[job->input].size;
  uint64_t last = ((upto < size ? upto : size) + RIO_EXPERT_CHUNK - 1) / RIO_EXPERT_CHUNK;
  for (; job->next_wait < last; job->next_wait++) {
    const uint64_t c = job->next_wait;
    pthread_mutex_lock(&job->mu);
    while (!job->recorded[c] && !job->failed)
      pthread_cond_wait(&job->cv, &job->mu);
    const int failed = job->failed && !job->recorded[c];
    pthread_mutex_unlock(&job->mu);
    if (failed)
      return rio_fail(run, -EIO, "expert: a loader thread failed (see rio_expert_finish)");
    int rc = RIO_CUDA(run, cudaStreamWaitEvent(stream, job->set->chunk_ev[c], 0));
    if (rc)
      return rc;
  }
  return 0;
}

int rio_expert_finish(struct rio_expert *job)
{
  if (!job)
    return 0;
  struct rio_run *run = job->run;
  int rc = 0;
  for (int t = 0; t < job->started; t++) {
    pthread_join(job->tid[t], NULL);
    if (job->rc[t] && !rc)
      rc = rio_fail(run, job->rc[t], "%s", job->why[t]);
  }
  if (job->fd >= 0)
    close(job->fd);
  pthread_mutex_destroy(&job->mu);
  pthread_cond_destroy(&job->cv);
  free(job->recorded);
  free(job);
  return rc;
}

int rio_expert_load(struct rio_run *run, int i, void *dev)
{
  struct rio_expert *job = NULL;
  int rc = rio_expert_start(run, i, dev, &job);
  int rc2 = rio_expert_finish(job);
  return rc ? rc : rc2;
}

int rio_load(struct rio_run *run, enum rio_version v, int i, void *dev)
{
  switch (v) {
  case RIO_CPU_IO:
    return rio_cpuio_load(run, i, dev);
  case RIO_EXPERT:
    return rio_expert_load(run, i, dev);
  case RIO_GPUFS_4K:
  case RIO_GPUFS_64K:
    return rio_gpufs_load(run, i, dev);
  default:
    return rio_fail(run, -EINVAL, "%s: no version %d", run->bench ? run->bench->name : "rodinia", (int)v);
  }
}

/* ---------------- gpufs ---------------- */

const char *rio_gpufs_path(struct rio_run *run, int i) { return run->ctx->dpath[i]; }

/* The plain I/O kernel: each block greads its contiguous share (whole
 * 64 KiB units, so no page is read by two blocks) into dst.
 * Every thread of every block runs it; the blocks share the descriptor. */
__global__ void __launch_bounds__(RIO_IO_THREADS, 1)
rio_gpufs_load_kernel(const char *path, uint64_t size, uint8_t *dst, int *err)
{
  const int fd = gopen(path, GPUFS_O_RDONLY);
  if (fd < 0) {
    if (threadIdx.x == 0)
      rio_dev_error(err, fd);
    return;
  }
  const uint64_t unit = 64u << 10;
  const uint64_t share = (size / gridDim.x + unit - 1) / unit * unit;
  const uint64_t lo = blockIdx.x * share;
  const uint64_t hi = lo + share < size ? lo + share : size;
  if (lo < hi) {
    const int rc = rio_gread_range(fd, lo, hi - lo, dst + lo, RIO_GREAD_CALL);
    if (threadIdx.x == 0)
      rio_dev_error(err, rc);
  }
  const int rc = gclose(fd);
  if (threadIdx.x == 0)
    rio_dev_error(err, rc);
}

int rio_gpufs_load(struct rio_run *run, int i, void *dev)
{
  int *err = rio_errors(run);
  if (!err)
    return -EIO;
  rio_gpufs_load_kernel<<<RIO_IO_BLOCKS, RIO_IO_THREADS>>>(rio_gpufs_path(run, i), run->in[i].size,
                                                           (uint8_t *)dev, err);
  int rc = RIO_CUDA(run, cudaGetLastError());
  if (!rc)
    rc = rio_errors_read(run, run->in[i].name);
  return rc;
}

int *rio_errors(struct rio_run *run)
{
  if (RIO_CUDA(run, cudaMemset(run->ctx->derr, 0, sizeof(int))) != 0)
    return NULL;
  return run->ctx->derr;
}

int rio_errors_read(struct rio_run *run, const char *what)
{
  int e = 0;
  int rc = RIO_CUDA(run, cudaMemcpy(&e, run->ctx->derr, sizeof(int), cudaMemcpyDeviceToHost));
  if (rc)
    return rc;
  if (e < 0)
    return rio_fail(run, e, "%s: %s", what, gpufs_strerror(e));
  return 0;
}
