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

/* Before a version's timed part: a non-blocking *stream and the host
 * result buffer host (bytes) registered with CUDA, so that the copy back
 * runs at the link's speed.  0, or -errno with nothing left made.
 * rio_result_end (always, after rio_result_begin was called): waits for
 * and destroys the stream and unregisters host, where begin made them;
 * returns rc, or the unregister's error when rc is 0. */
int rio_result_begin(struct rio_run *run, void *host, uint64_t bytes, cudaStream_t *stream);
int rio_result_end(struct rio_run *run, void *host, cudaStream_t stream, int rc);

/* The end of a version's timed part: copy `bytes` of the result at dev
 * into host (host memory the caller registered, so that the copy runs at
 * the link's speed) on stream, wait for it, and for a gpufs version read
 * the kernels' error word (what: what they read, for the message). */
int rio_result_to_host(struct rio_run *run, enum rio_version v, void *host, const void *dev, uint64_t bytes,
                       cudaStream_t stream, const char *what);

/* A device int that kernels lower to the first error they meet
 * (rio_dev_error), set to 0; rio_errors_read copies it back: 0, or the
 * error with run->why naming `what`. */
int *rio_errors(struct rio_run *run);
int rio_errors_read(struct rio_run *run, const char *what);

#endif /* RIO_CUDA_H */
