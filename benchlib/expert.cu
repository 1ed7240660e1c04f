/*
 * expert.cu - the expert pipelines: host threads pread 1 MiB chunks into
 * pinned buffers and cudaMemcpyAsync them to the GPU (KvikIO's compatibility
 * mode), and the same in the other direction for writes.  Contracts:
 * benchlib/baselines.h.
 */
#include "benchlib/baselines.h"
#include "benchlib/baselines_util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cuda_runtime.h>

#include "benchlib/cuda_check.h"
#include "benchlib/datafile.h"
#include "benchlib/pattern.h"
#include "benchlib/util.h"

/* ---------------- expert ---------------- */

/* One expert pipeline (read or write): host threads, each with
 * BENCH_EXPERT_BUFS pinned buffers of BENCH_EXPERT_CHUNK and its own stream. */
struct bench_expert_job {
  int fd;
  char *dev;
  uint64_t bytes;
  int nthreads;
  int device;
  char *pinned;          /* nthreads * BENCH_EXPERT_BUFS buffers of BENCH_EXPERT_CHUNK */
  cudaStream_t *streams; /* one per thread */
  cudaEvent_t *done;     /* per buffer: its last copy has finished */
};

/* Buffers, streams and events for `threads` threads (0: the default).  0 or
 * an error; bench_expert_teardown frees what was set up either way. */
static int bench_expert_setup(struct bench_expert_job *job, int threads, struct bench_rate *out)
{
  int i, rc = 0;
  job->nthreads = threads > 0 ? threads : BENCH_EXPERT_THREADS;
  const int nbufs = job->nthreads * BENCH_EXPERT_BUFS;
  job->streams = (cudaStream_t *)calloc((size_t)job->nthreads, sizeof(cudaStream_t));
  job->done = (cudaEvent_t *)calloc((size_t)nbufs, sizeof(cudaEvent_t));
  if (!job->streams || !job->done)
    return bench_fail(out, -ENOMEM, "out of host memory");
  if ((rc = BENCH_CUDA(cudaGetDevice(&job->device))) ||
      (rc = BENCH_CUDA(cudaMallocHost(&job->pinned, (size_t)nbufs * BENCH_EXPERT_CHUNK))))
    return rc;
  for (i = 0; i < job->nthreads && rc == 0; i++)
    rc = BENCH_CUDA(cudaStreamCreateWithFlags(&job->streams[i], cudaStreamNonBlocking));
  for (i = 0; i < nbufs && rc == 0; i++)
    rc = BENCH_CUDA(cudaEventCreateWithFlags(&job->done[i], cudaEventDisableTiming));
  return rc;
}

static void bench_expert_teardown(struct bench_expert_job *job)
{
  int i;
  for (i = 0; job->done && i < job->nthreads * BENCH_EXPERT_BUFS; i++)
    if (job->done[i])
      BENCH_CUDA(cudaEventDestroy(job->done[i]));
  for (i = 0; job->streams && i < job->nthreads; i++)
    if (job->streams[i])
      BENCH_CUDA(cudaStreamDestroy(job->streams[i]));
  BENCH_CUDA(cudaFreeHost(job->pinned));
  free(job->streams);
  free(job->done);
}

static int bench_expert_worker(void *arg, int t)
{
  struct bench_expert_job *job = (struct bench_expert_job *)arg;
  const uint64_t nchunks = (job->bytes + BENCH_EXPERT_CHUNK - 1) / BENCH_EXPERT_CHUNK;
  cudaStream_t stream = job->streams[t];
  uint64_t c, n = 0;
  int rc;

  if ((rc = BENCH_CUDA(cudaSetDevice(job->device))))
    return rc;
  for (c = (uint64_t)t; c < nchunks; c += (uint64_t)job->nthreads, n++) {
    const int b = t * BENCH_EXPERT_BUFS + (int)(n % BENCH_EXPERT_BUFS);
    char *buf = job->pinned + (size_t)b * BENCH_EXPERT_CHUNK;
    const uint64_t off = c * BENCH_EXPERT_CHUNK;
    const uint64_t len =
        job->bytes - off < BENCH_EXPERT_CHUNK ? job->bytes - off : BENCH_EXPERT_CHUNK;
    /* the copy that last read this buffer must be done before pread refills it */
    if (n >= BENCH_EXPERT_BUFS && (rc = BENCH_CUDA(cudaEventSynchronize(job->done[b]))))
      return rc;
    if ((rc = bench_pio_full(job->fd, buf, len, off, 0)))
      return rc;
    if ((rc = BENCH_CUDA(cudaMemcpyAsync(job->dev + off, buf, len, cudaMemcpyHostToDevice,
                                         stream))) ||
        (rc = BENCH_CUDA(cudaEventRecord(job->done[b], stream))))
      return rc;
  }
  return BENCH_CUDA(cudaStreamSynchronize(stream));
}

/* bench_expert and bench_expert_passes: an untimed warm-up pass when warmup
 * is set, then reps timed passes (each after before(arg), untimed, when
 * before is not NULL). */
static int bench_expert_run(const char *path, void *dev, uint64_t bytes, uint64_t seed,
                            int threads, int warmup, int reps, bench_pass_hook before, void *arg,
                            struct bench_rate *out)
{
  struct bench_expert_job job;
  double seconds[BENCH_MAX_REPS];
  double t0 = bench_now();
  int rc = 0, r;

  bench_rate_init(out, bytes);
  if (reps < 1 || reps > BENCH_MAX_REPS)
    return bench_fail(out, -EINVAL, "reps must be 1..%d", BENCH_MAX_REPS);
  memset(&job, 0, sizeof(job));
  if ((job.fd = bench_open_input(path, bytes, out)) < 0)
    return job.fd;
  job.dev = (char *)dev;
  job.bytes = bytes;
  if ((rc = bench_expert_setup(&job, threads, out)))
    goto out;
  out->setup_seconds = bench_now() - t0;

  if (warmup && (rc = bench_parallel(job.nthreads, bench_expert_worker, &job)))
    goto out;
  for (r = 0; r < reps; r++) {
    if ((rc = BENCH_CUDA(cudaMemset(dev, 0, bytes))) || (rc = BENCH_CUDA(cudaDeviceSynchronize())))
      goto out;
    if (before && (rc = before(arg, out->note, (int)sizeof(out->note))))
      goto out;
    t0 = bench_now();
    if ((rc = bench_parallel(job.nthreads, bench_expert_worker, &job)))
      goto out;
    seconds[r] = bench_now() - t0;
  }
  bench_rate_set(out, seconds, reps);
  if ((rc = bench_check_device(dev, bytes, seed, out, NULL)))
    goto out;
  snprintf(out->note, sizeof(out->note),
           "%d threads, pread 1M into %d pinned buffers each, cudaMemcpyAsync per thread stream, "
           "median of %d%s", job.nthreads, BENCH_EXPERT_BUFS, reps,
           warmup ? "" : ", no warm-up");
out:
  if (rc && !out->note[0])
    bench_fail(out, rc, "%s (see stderr)", rc == -EIO ? "CUDA or read error" : strerror(-rc));
  bench_expert_teardown(&job);
  close(job.fd);
  return rc;
}

int bench_expert(const char *path, void *dev, uint64_t bytes, uint64_t seed, int threads,
                 struct bench_rate *out)
{
  return bench_expert_run(path, dev, bytes, seed, threads, 1, 3, NULL, NULL, out);
}

int bench_expert_passes(const char *path, void *dev, uint64_t bytes, uint64_t seed, int threads,
                        int reps, bench_pass_hook before, void *arg, struct bench_rate *out)
{
  return bench_expert_run(path, dev, bytes, seed, threads, 0, reps, before, arg, out);
}

/* ---------------- expert write ---------------- */

/* Thread t's k-th chunk is chunk t + k * nthreads of the file, in its buffer
 * k % BENCH_EXPERT_BUFS.  Sets *off and *len; returns the buffer's index. */
static int bench_expert_write_chunk(const struct bench_expert_job *job, int t, uint64_t k,
                                    uint64_t *off, uint64_t *len)
{
  *off = ((uint64_t)t + k * (uint64_t)job->nthreads) * BENCH_EXPERT_CHUNK;
  *len = job->bytes - *off < BENCH_EXPERT_CHUNK ? job->bytes - *off : BENCH_EXPERT_CHUNK;
  return t * BENCH_EXPERT_BUFS + (int)(k % BENCH_EXPERT_BUFS);
}

/* Start the device-to-host copy of thread t's k-th chunk. */
static int bench_expert_write_copy(const struct bench_expert_job *job, int t, uint64_t k)
{
  uint64_t off, len;
  const int b = bench_expert_write_chunk(job, t, k, &off, &len);
  int rc;
  if ((rc = BENCH_CUDA(cudaMemcpyAsync(job->pinned + (size_t)b * BENCH_EXPERT_CHUNK,
                                       job->dev + off, len, cudaMemcpyDeviceToHost,
                                       job->streams[t]))))
    return rc;
  return BENCH_CUDA(cudaEventRecord(job->done[b], job->streams[t]));
}

/* All BENCH_EXPERT_BUFS copies of a thread stay in flight: a buffer is
 * refilled as soon as its pwrite returned. */
static int bench_expert_write_worker(void *arg, int t)
{
  struct bench_expert_job *job = (struct bench_expert_job *)arg;
  const uint64_t nchunks = (job->bytes + BENCH_EXPERT_CHUNK - 1) / BENCH_EXPERT_CHUNK;
  const uint64_t mine =
      (uint64_t)t < nchunks ? (nchunks - 1 - (uint64_t)t) / (uint64_t)job->nthreads + 1 : 0;
  uint64_t k, off, len;
  int rc, sync;

  if ((rc = BENCH_CUDA(cudaSetDevice(job->device))))
    return rc;
  for (k = 0; k < mine && k < BENCH_EXPERT_BUFS && rc == 0; k++)
    rc = bench_expert_write_copy(job, t, k);
  for (k = 0; k < mine && rc == 0; k++) {
    const int b = bench_expert_write_chunk(job, t, k, &off, &len);
    if ((rc = BENCH_CUDA(cudaEventSynchronize(job->done[b]))) ||
        (rc = bench_pio_full(job->fd, job->pinned + (size_t)b * BENCH_EXPERT_CHUNK, len, off, 1)))
      break;
    if (k + BENCH_EXPERT_BUFS < mine)
      rc = bench_expert_write_copy(job, t, k + BENCH_EXPERT_BUFS);
  }
  /* after an error, copies may still be landing in the buffers */
  sync = BENCH_CUDA(cudaStreamSynchronize(job->streams[t]));
  return rc ? rc : sync;
}

/* One timed pass: create path, write it on every thread, fsync, close. */
static int bench_expert_write_once(struct bench_expert_job *job, const char *path)
{
  int rc;
  job->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (job->fd < 0)
    return -errno;
  rc = bench_parallel(job->nthreads, bench_expert_write_worker, job);
  if (rc == 0 && fsync(job->fd) != 0)
    rc = -errno;
  if (close(job->fd) != 0 && rc == 0)
    rc = -errno;
  job->fd = -1;
  return rc;
}

int bench_expert_write(const char *path, const void *dev, uint64_t bytes, uint64_t seed,
                       int threads, struct bench_rate *out)
{
  struct bench_expert_job job;
  double seconds[BENCH_MAX_REPS];
  double t0 = bench_now();
  uint64_t bad = 0, first = 0;
  int rc = 0, r;
  const int reps = 3;

  bench_rate_init(out, bytes);
  if (bytes == 0 || bytes % 8 != 0)
    return bench_fail(out, -EINVAL, "bytes must be a positive multiple of 8");
  memset(&job, 0, sizeof(job));
  job.fd = -1;
  job.dev = (char *)dev; /* read only: the source of the copies */
  job.bytes = bytes;
  if ((rc = bench_expert_setup(&job, threads, out)))
    goto out;
  out->setup_seconds = bench_now() - t0;

  for (r = -1; r < reps; r++) { /* r = -1: the warm-up */
    /* a new file each time; removing the last one is not timed */
    if (unlink(path) != 0 && errno != ENOENT) {
      rc = bench_fail(out, -errno, "unlink %s: %s", path, strerror(errno));
      goto out;
    }
    t0 = bench_now();
    if ((rc = bench_expert_write_once(&job, path)))
      goto out;
    if (r >= 0)
      seconds[r] = bench_now() - t0;
  }
  bench_rate_set(out, seconds, reps);
  if ((rc = bench_check_file(path, 0, bytes, seed, &bad, &first))) {
    bench_fail(out, rc, "checking %s: %s", path, strerror(-rc));
    goto out;
  }
  if (bad) {
    rc = bench_fail(out, -EBADMSG, "%llu of %llu words wrong in the file, first at byte %llu",
                    (unsigned long long)bad, (unsigned long long)(bytes / 8),
                    (unsigned long long)first);
    goto out;
  }
  snprintf(out->note, sizeof(out->note),
           "%d threads, cudaMemcpyAsync D2H 1M into %d pinned buffers each on a stream per "
           "thread, pwrite, then fsync; median of %d", job.nthreads, BENCH_EXPERT_BUFS, reps);
out:
  if (rc && !out->note[0])
    bench_fail(out, rc, "%s (see stderr)", rc == -EIO ? "CUDA or write error" : strerror(-rc));
  bench_expert_teardown(&job);
  unlink(path);
  return rc;
}

