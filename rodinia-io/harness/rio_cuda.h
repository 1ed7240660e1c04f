/*
 * rio_cuda.h - the ways a rodinia-io version moves its input files into GPU
 * memory (host side, CUDA; loaders.cu), shared by every benchmark so that
 * the four versions differ only where the issue says they do:
 *
 *   cpu-io   rio_cpuio_load: one thread read()s the whole file into a
 *            pageable buffer (allocated and touched beforehand, untimed),
 *            then one cudaMemcpy.
 *   expert   rio_expert_load, or rio_expert_start / rio_expert_wait /
 *            rio_expert_finish to start compute on each chunk as it lands:
 *            expert_threads host threads pread 1 MiB chunks (thread t takes
 *            chunks t, t+T, ...) into 4 pinned buffers each and
 *            cudaMemcpyAsync them on a stream per thread.
 *   gpufs    kernels open the files and gread them (rio_device.cuh);
 *            rio_gpufs_load is the plain I/O kernel for benchmarks that
 *            need the whole input before computing: RIO_IO_BLOCKS blocks of
 *            RIO_IO_THREADS threads, each greading its contiguous share in
 *            RIO_GREAD_CALL-byte calls.
 *
 * Every function returns 0 or a negative errno and says why in run->why.
 * Context: the thread that calls the benchmark's run(); the harness has
 * made run->device current and, for gpufs versions, started libgpufs.
 */
#ifndef RIO_CUDA_H
#define RIO_CUDA_H

#include <cuda_runtime.h>

#include "rodinia-io/harness/rio.h"

#define RIO_IO_BLOCKS 128
#define RIO_IO_THREADS 512
#define RIO_GREAD_CALL (1u << 20)
#define RIO_EXPERT_CHUNK (1u << 20)

/* `units` (bands, planes) split over at most RIO_IO_BLOCKS blocks, each a
 * contiguous range: the units of one block (at least 1); *blocks gets
 * how many blocks that makes. */
static inline uint64_t rio_io_split(uint64_t units, uint64_t *blocks)
{
  const uint64_t per_block = units > RIO_IO_BLOCKS ? (units + RIO_IO_BLOCKS - 1) / RIO_IO_BLOCKS : 1;
  *blocks = (units + per_block - 1) / per_block;
  return per_block;
}

/* Wall-clock seconds (CLOCK_MONOTONIC). */
double rio_now(void);

/* CUDA call -> 0 or -EIO with run->why = "file:line: call: error". */
int rio_cuda_check(struct rio_run *run, cudaError_t e, const char *call, const char *file, int line);
#define RIO_CUDA(run, call) rio_cuda_check((run), (call), #call, __FILE__, __LINE__)

/* cpu-io: input i -> dev (its whole size). */
int rio_cpuio_load(struct rio_run *run, int i, void *dev);

/* expert: input i -> dev, all of it; returns when it is on the GPU. */
int rio_expert_load(struct rio_run *run, int i, void *dev);

/* expert, streamed: start moving input i into dev; rio_expert_wait makes
 * `stream` wait (on the GPU, not the host) for every chunk that covers
 * [0, upto) of the file, blocking the host only until those chunks' copies
 * are issued; rio_expert_finish waits for everything, joins the threads and
 * frees the job (always call it once, also after an error). */
struct rio_expert;
int rio_expert_start(struct rio_run *run, int i, void *dev, struct rio_expert **job);
int rio_expert_wait(struct rio_expert *job, uint64_t upto, cudaStream_t stream);
int rio_expert_finish(struct rio_expert *job);

/* gpufs: the device copy of input i's path, for gopen (valid while the
 * harness's libgpufs instance runs). */
const char *rio_gpufs_path(struct rio_run *run, int i);

/* gpufs: input i -> dev with the plain I/O kernel (opens, greads, closes). */
int rio_gpufs_load(struct rio_run *run, int i, void *dev);

/* Input i -> dev, all of it, the way of version v (rio_cpuio_load,
 * rio_expert_load or rio_gpufs_load). */
int rio_load(struct rio_run *run, enum rio_version v, int i, void *dev);

/*
 * One version's run, as the benchmarks write it (timed.cu):
 *
 *   rio_timed_init(&t, run, v, reads)   run->t cleared; a version that is
 *                                       none of the four refused
 *   rio_timed_alloc(&t, &p, bytes)...   device buffers, untimed
 *   rio_timed_begin(&t, host, bytes)    untimed: t.stream (non-blocking),
 *                                       host (the result) registered so the
 *                                       copy back runs at the link's speed,
 *                                       fused gpufs versions: t.err; then
 *                                       the device idle and the clock started
 *   rio_timed_load / rio_timed_expert   the version's I/O, then the launches
 *                                       on t.stream (gpufs: kernels that
 *                                       gread and lower t.err)
 *   rc = rio_timed_result(&t, dev, what)  the result copied into host, the
 *                                       error word read, expert jobs joined,
 *                                       run->t.e2e_s
 *   return rio_timed_end(&t, rc)        always, also after an error: jobs
 *                                       joined, the stream drained, host
 *                                       unregistered, the buffers freed
 *
 * Context: the thread that calls the benchmark's run(); one rio_timed per
 * run() call, on its stack.
 */

/* How a benchmark's gpufs versions read their inputs. */
enum rio_gpufs_reads {
  RIO_READS_WHOLE = 0, /* rio_timed_load: the plain I/O kernel, each input whole before computing */
  RIO_READS_FUSED = 1  /* the benchmark's kernels gread while they compute (t.err; overlapped) */
};

#define RIO_TIMED_BUFS 6

struct rio_timed {
  struct rio_run *run;
  enum rio_version v;
  enum rio_gpufs_reads reads;
  cudaStream_t stream;                    /* the version's launches and the copy back */
  int *err;                               /* fused gpufs versions: the kernels' error word */
  struct rio_expert *job[RIO_MAX_INPUTS]; /* rio_timed_expert's jobs, by input */
  void *dev[RIO_TIMED_BUFS];              /* rio_timed_alloc's buffers */
  int ndev;
  void *host;                             /* the result's host memory (rio_timed_begin) */
  uint64_t bytes;
  double t0;                              /* the clock's start (rio_timed_begin) */
};

int rio_timed_init(struct rio_timed *t, struct rio_run *run, enum rio_version v, enum rio_gpufs_reads reads);
/* *ptr = a device buffer of `bytes`, freed by rio_timed_end.  0 or -errno. */
int rio_timed_alloc(struct rio_timed *t, void **ptr, uint64_t bytes);
int rio_timed_begin(struct rio_timed *t, void *host, uint64_t bytes);
/* rio_load of input i into dev; run->t.io_s = the time since the clock
 * started (the last load's end, where a version loads several inputs). */
int rio_timed_load(struct rio_timed *t, int i, void *dev);
/* rio_expert_start of input i into dev (*job for rio_expert_wait), joined
 * by rio_timed_result or rio_timed_end; the run is overlapped. */
int rio_timed_expert(struct rio_timed *t, int i, void *dev, struct rio_expert **job);
/* The end of the timed part: the launches' error, `t->bytes` of the result
 * at dev into host on t->stream, the error word (what: what the kernels
 * read, for the message), the expert jobs joined; run->t.e2e_s. */
int rio_timed_result(struct rio_timed *t, const void *dev, const char *what);
/* Returns rc, or the first error of the clean-up when rc is 0. */
int rio_timed_end(struct rio_timed *t, int rc);

/* A device int that kernels lower to the first error they meet
 * (rio_dev_error), set to 0; rio_errors_read copies it back: 0, or the
 * error with run->why naming `what`. */
int *rio_errors(struct rio_run *run);
int rio_errors_read(struct rio_run *run, const char *what);

#endif /* RIO_CUDA_H */
