/*
 * backprop.cu - backprop's four versions (the step: backprop.h).
 *
 * Three kernels make the step in every version:
 *   forward   a block sums one chunk of BACKPROP_CHUNK_ROWS rows into
 *             partial[chunk][0..15] (hidden units 1..16)
 *   backward  one warp adds the chunks' sums in chunk order (double) and
 *             computes the units and deltas (backprop_backward)
 *   adjust    a block adjusts one chunk's weights and prev weights
 * cpu-io loads the three files, then runs them over all chunks.  expert
 * loads "input", then streams "weights" and launches forward on each group
 * of chunks as its bytes land, then streams "prev_weights" likewise under
 * adjust.  gpufs runs the same chunk code in two kernels that gread their
 * chunks themselves (input + weights, then prev_weights) into device memory
 * and compute on each right away, so that blocks' I/O overlaps other
 * blocks' compute; the backward step between them needs every chunk's sum.
 */
#include "rodinia-io/backprop/backprop.h"

#include <errno.h>
#include <string.h>

#include "rodinia-io/harness/rio_cuda.h"
#include "rodinia-io/harness/rio_device.cuh"

/* chunks per launch in the expert version: 16 chunks are 17 MiB of weights */
#define BP_GROUP 16
#define BP_WARPS (BACKPROP_THREADS / 32)
#define BP_ROW_BYTES (BACKPROP_COLS * sizeof(float))

/* What a run holds on the GPU. */
struct bp_dev {
  float *in;       /* the input file */
  float *w;        /* the weights file, adjusted in place */
  float *prev;     /* the prev_weights file, replaced by the changes */
  double *partial; /* nchunks x 16: each chunk's forward sums */
  struct backprop_units *units;
  uint64_t rows, nchunks;
};

/* The hidden->output weights, by value into the backward kernel. */
struct bp_w2 {
  float w[BACKPROP_COLS];
};

__device__ __forceinline__ uint64_t bp_chunk_rows(const struct bp_dev *d, uint64_t c)
{
  const uint64_t lo = c * BACKPROP_CHUNK_ROWS;
  return d->rows - lo < BACKPROP_CHUNK_ROWS ? d->rows - lo : BACKPROP_CHUNK_ROWS;
}

/*
 * The forward sums of chunk c into d.partial[c][0..15]: thread t sums rows
 * t, t + 512, ... of the chunk in float (fma), each warp its lanes in float
 * (a 5-level tree), thread j the warps' sums of unit j + 1 in double: the
 * order verify's tolerance assumes.  Every thread of a BACKPROP_THREADS
 * block calls it; synchronizes the block.  warp_sum: the kernel's shared
 * sums (declared in the kernel, not here: a device function's __shared__
 * array is laid out for the whole program, ahead of libgpufs's block
 * scratch in every kernel; group.cuh).
 */
__device__ void bp_forward_chunk(const struct bp_dev d, uint64_t c,
                                 float (*warp_sum)[BACKPROP_HIDDEN])
{
  const uint64_t lo = c * BACKPROP_CHUNK_ROWS, hi = lo + bp_chunk_rows(&d, c);
  float s[BACKPROP_HIDDEN];
#pragma unroll
  for (int j = 0; j < BACKPROP_HIDDEN; j++)
    s[j] = 0.0f;
  for (uint64_t i = lo + threadIdx.x; i < hi; i += BACKPROP_THREADS) {
    const float x = d.in[i];
    const float *row = d.w + i * BACKPROP_COLS + 1; /* column 0 is unused */
#pragma unroll
    for (int j = 0; j < BACKPROP_HIDDEN; j++)
      s[j] = fmaf(row[j], x, s[j]);
  }
#pragma unroll
  for (int j = 0; j < BACKPROP_HIDDEN; j++)
    for (int o = 16; o > 0; o >>= 1)
      s[j] += __shfl_xor_sync(0xffffffffu, s[j], o);
  if ((threadIdx.x & 31) == 0)
#pragma unroll
    for (int j = 0; j < BACKPROP_HIDDEN; j++)
      warp_sum[threadIdx.x >> 5][j] = s[j];
  __syncthreads();
  if (threadIdx.x < BACKPROP_HIDDEN) {
    double t = 0.0;
    for (int w = 0; w < BP_WARPS; w++)
      t += (double)warp_sum[w][threadIdx.x];
    d.partial[c * BACKPROP_HIDDEN + threadIdx.x] = t;
  }
  __syncthreads(); /* warp_sum is reused by the block's next chunk */
}

/* ETA * delta_j of the reported deltas into eta_d (shared).  Every thread
 * of the block calls it; synchronizes the block. */
__device__ void bp_load_deltas(const struct bp_dev d, float *eta_d)
{
  if (threadIdx.x < BACKPROP_COLS)
    eta_d[threadIdx.x] = (float)BACKPROP_ETA * d.units->hid_delta[threadIdx.x];
  __syncthreads();
}

/* Adjust chunk c's weights and prev weights (columns 1..16) with eta_d.
 * Every thread of the block calls it; no synchronization (each thread
 * touches its own elements). */
__device__ void bp_adjust_chunk(const struct bp_dev d, uint64_t c, const float *eta_d)
{
  const uint64_t lo = c * BACKPROP_CHUNK_ROWS;
  const uint32_t cells = (uint32_t)(bp_chunk_rows(&d, c) * BACKPROP_COLS);
  float *w = d.w + lo * BACKPROP_COLS, *p = d.prev + lo * BACKPROP_COLS;
  const float *in = d.in + lo;
  for (uint32_t e = threadIdx.x; e < cells; e += blockDim.x) {
    const uint32_t j = e % BACKPROP_COLS;
    if (j == 0)
      continue;
    const float dw = fmaf(eta_d[j], in[e / BACKPROP_COLS], (float)BACKPROP_MOMENTUM * p[e]);
    w[e] += dw;
    p[e] = dw;
  }
}

/* Memory versions: block b sums chunk c0 + b. */
__global__ void __launch_bounds__(BACKPROP_THREADS) bp_forward(const struct bp_dev d, uint64_t c0)
{
  __shared__ float warp_sum[BP_WARPS][BACKPROP_HIDDEN];
  bp_forward_chunk(d, c0 + blockIdx.x, warp_sum);
}

/* Memory versions: block b adjusts chunk c0 + b. */
__global__ void __launch_bounds__(BACKPROP_THREADS) bp_adjust(const struct bp_dev d, uint64_t c0)
{
  __shared__ float eta_d[BACKPROP_COLS];
  bp_load_deltas(d, eta_d);
  bp_adjust_chunk(d, c0 + blockIdx.x, eta_d);
}

/* One warp: lane j (1..16) adds unit j's chunk sums in chunk order, then
 * lane 0 computes the units and deltas into d.units. */
__global__ void bp_backward(const struct bp_dev d, const struct bp_w2 w2)
{
  __shared__ double sum[BACKPROP_COLS];
  const int j = threadIdx.x;
  if (j < BACKPROP_COLS) {
    double s = 0.0;
    for (uint64_t c = 0; j > 0 && c < d.nchunks; c++)
      s += d.partial[c * BACKPROP_HIDDEN + j - 1];
    sum[j] = s;
  }
  __syncwarp();
  if (j == 0)
    backprop_backward(sum, w2.w, d.units);
}

/* gpufs: block b's chunks, an equal contiguous share (sequential greads
 * keep the readahead window). */
__device__ __forceinline__ void bp_share(uint64_t nchunks, uint64_t *lo, uint64_t *hi)
{
  *lo = nchunks * blockIdx.x / gridDim.x;
  *hi = nchunks * (blockIdx.x + 1) / gridDim.x;
}

/* gclose fd when it was opened, keeping the first error in *rc.  Every
 * thread of the block calls it. */
__device__ __forceinline__ void bp_close(int fd, int *rc)
{
  if (fd >= 0) {
    const int r = gclose(fd);
    if (*rc == 0)
      *rc = r;
  }
}

/*
 * gpufs forward: each block greads its chunks of input and weights into
 * d.in and d.w and sums each as soon as it is there.  Every thread of every
 * block runs it (block-level gpufs calls); errors lower *err.
 */
__global__ void __launch_bounds__(BACKPROP_THREADS, 1)
bp_forward_gpufs(const struct bp_dev d, const char *in_path, const char *w_path, int *err)
{
  __shared__ float warp_sum[BP_WARPS][BACKPROP_HIDDEN];
  const int fi = gopen(in_path, GPUFS_O_RDONLY);
  const int fw = gopen(w_path, GPUFS_O_RDONLY);
  int rc = fi < 0 ? fi : fw < 0 ? fw : 0;
  uint64_t c, c_hi;
  bp_share(d.nchunks, &c, &c_hi);
  for (; rc == 0 && c < c_hi; c++) {
    const uint64_t lo = c * BACKPROP_CHUNK_ROWS, rows = bp_chunk_rows(&d, c);
    rc = rio_gread_range(fi, lo * sizeof(float), rows * sizeof(float), d.in + lo, RIO_GREAD_CALL);
    if (rc == 0)
      rc = rio_gread_range(fw, lo * BP_ROW_BYTES, rows * BP_ROW_BYTES, d.w + lo * BACKPROP_COLS,
                           RIO_GREAD_CALL);
    if (rc == 0)
      bp_forward_chunk(d, c, warp_sum);
  }
  bp_close(fw, &rc);
  bp_close(fi, &rc);
  if (threadIdx.x == 0)
    rio_dev_error(err, rc);
}

/*
 * gpufs adjust: each block greads its chunks of prev_weights into d.prev
 * and adjusts each as soon as it is there.  Every thread of every block
 * runs it (block-level gpufs calls); errors lower *err.
 */
__global__ void __launch_bounds__(BACKPROP_THREADS, 1)
bp_adjust_gpufs(const struct bp_dev d, const char *prev_path, int *err)
{
  __shared__ float eta_d[BACKPROP_COLS];
  bp_load_deltas(d, eta_d);
  const int fp = gopen(prev_path, GPUFS_O_RDONLY);
  int rc = fp < 0 ? fp : 0;
  uint64_t c, c_hi;
  bp_share(d.nchunks, &c, &c_hi);
  for (; rc == 0 && c < c_hi; c++) {
    const uint64_t lo = c * BACKPROP_CHUNK_ROWS, rows = bp_chunk_rows(&d, c);
    rc = rio_gread_range(fp, lo * BP_ROW_BYTES, rows * BP_ROW_BYTES, d.prev + lo * BACKPROP_COLS,
                         RIO_GREAD_CALL);
    if (rc == 0)
      bp_adjust_chunk(d, c, eta_d);
  }
  bp_close(fp, &rc);
  if (threadIdx.x == 0)
    rio_dev_error(err, rc);
}

/* ---------------- the versions (host) ---------------- */

static struct bp_w2 bp_w2_of(const struct backprop_state *st)
{
  struct bp_w2 w2;
  memcpy(w2.w, st->w2, sizeof(w2.w));
  return w2;
}

/* cpu-io: the three files, then the step over every chunk. */
static int bp_cpuio(struct rio_run *run, const struct bp_dev *d, cudaStream_t s, double t0)
{
  int rc;
  if ((rc = rio_cpuio_load(run, BACKPROP_IN_INPUT, d->in)) != 0 ||
      (rc = rio_cpuio_load(run, BACKPROP_IN_WEIGHTS, d->w)) != 0 ||
      (rc = rio_cpuio_load(run, BACKPROP_IN_PREV, d->prev)) != 0 ||
      /* a pageable cudaMemcpy may return before its DMA ends; s does not
       * wait for the legacy stream */
      (rc = RIO_CUDA(run, cudaDeviceSynchronize())) != 0)
    return rc;
  run->t.io_s = rio_now() - t0;
  bp_forward<<<(unsigned)d->nchunks, BACKPROP_THREADS, 0, s>>>(*d, 0);
  bp_backward<<<1, 32, 0, s>>>(*d, bp_w2_of((const struct backprop_state *)run->state));
  bp_adjust<<<(unsigned)d->nchunks, BACKPROP_THREADS, 0, s>>>(*d, 0);
  return RIO_CUDA(run, cudaGetLastError());
}

/* expert: stream input i into dev and launch forward (adjust 0) or adjust
 * (1) on each group of BP_GROUP chunks once their bytes are on the GPU. */
static int bp_expert_stream(struct rio_run *run, const struct bp_dev *d, int i, float *dev, int adjust,
                            cudaStream_t s)
{
  struct rio_expert *job = NULL;
  int rc = rio_expert_start(run, i, dev, &job);
  for (uint64_t c0 = 0; rc == 0 && c0 < d->nchunks; c0 += BP_GROUP) {
    const uint64_t n = d->nchunks - c0 < BP_GROUP ? d->nchunks - c0 : BP_GROUP;
    const uint64_t end = (c0 + n) * BACKPROP_CHUNK_ROWS;
    rc = rio_expert_wait(job, (end < d->rows ? end : d->rows) * BP_ROW_BYTES, s);
    if (rc)
      break;
    if (adjust)
      bp_adjust<<<(unsigned)n, BACKPROP_THREADS, 0, s>>>(*d, c0);
    else
      bp_forward<<<(unsigned)n, BACKPROP_THREADS, 0, s>>>(*d, c0);
    rc = RIO_CUDA(run, cudaGetLastError());
  }
  const int rc2 = rio_expert_finish(job);
  return rc ? rc : rc2;
}

static int bp_expert(struct rio_run *run, const struct bp_dev *d, cudaStream_t s)
{
  int rc;
  if ((rc = rio_expert_load(run, BACKPROP_IN_INPUT, d->in)) != 0 ||
      (rc = bp_expert_stream(run, d, BACKPROP_IN_WEIGHTS, d->w, 0, s)) != 0)
    return rc;
  bp_backward<<<1, 32, 0, s>>>(*d, bp_w2_of((const struct backprop_state *)run->state));
  if ((rc = RIO_CUDA(run, cudaGetLastError())) != 0)
    return rc;
  return bp_expert_stream(run, d, BACKPROP_IN_PREV, d->prev, 1, s);
}

static int bp_gpufs(struct rio_run *run, const struct bp_dev *d, cudaStream_t s, int *err)
{
  const unsigned g = d->nchunks < RIO_IO_BLOCKS ? (unsigned)d->nchunks : RIO_IO_BLOCKS;
  bp_forward_gpufs<<<g, BACKPROP_THREADS, 0, s>>>(*d, rio_gpufs_path(run, BACKPROP_IN_INPUT),
                                                  rio_gpufs_path(run, BACKPROP_IN_WEIGHTS), err);
  bp_backward<<<1, 32, 0, s>>>(*d, bp_w2_of((const struct backprop_state *)run->state));
  bp_adjust_gpufs<<<g, BACKPROP_THREADS, 0, s>>>(*d, rio_gpufs_path(run, BACKPROP_IN_PREV), err);
  return RIO_CUDA(run, cudaGetLastError());
}

/* The timed part: the version's I/O and step, the result into host memory. */
static int bp_timed(struct rio_run *run, enum rio_version v, const struct bp_dev *d, cudaStream_t s, int *err)
{
  struct backprop_state *st = (struct backprop_state *)run->state;
  const uint64_t bytes = st->rows * BP_ROW_BYTES;
  const double t0 = rio_now();
  int rc;
  if (v == RIO_CPU_IO)
    rc = bp_cpuio(run, d, s, t0);
  else if (v == RIO_EXPERT)
    rc = bp_expert(run, d, s);
  else
    rc = bp_gpufs(run, d, s, err);
  const cudaMemcpyKind d2h = cudaMemcpyDeviceToHost;
  if (rc != 0 || (rc = RIO_CUDA(run, cudaMemcpyAsync(st->got_w, d->w, bytes, d2h, s))) != 0 ||
      (rc = RIO_CUDA(run, cudaMemcpyAsync(st->got_prev, d->prev, bytes, d2h, s))) != 0 ||
      (rc = RIO_CUDA(run, cudaMemcpyAsync(&st->got, d->units, sizeof(st->got), d2h, s))) != 0)
    return rc;
  if ((rc = RIO_CUDA(run, cudaStreamSynchronize(s))) != 0)
    return rc;
  if (err && (rc = rio_errors_read(run, "backprop gread")) != 0)
    return rc;
  run->t.e2e_s = rio_now() - t0;
  run->t.overlapped = v != RIO_CPU_IO;
  return 0;
}

int backprop_run(struct rio_run *run, enum rio_version v)
{
  struct backprop_state *st = (struct backprop_state *)run->state;
  const uint64_t bytes = st->rows * BP_ROW_BYTES;
  const uint64_t partial_bytes = st->nchunks * BACKPROP_HIDDEN * sizeof(double);
  const int gpufs = rio_is_gpufs(v);
  struct bp_dev d;
  cudaStream_t s = NULL;
  int *err = NULL;
  int reg_w = 0, reg_p = 0, rc;

  memset(&run->t, 0, sizeof(run->t));
  memset(&d, 0, sizeof(d));
  d.rows = st->rows;
  d.nchunks = st->nchunks;
  if ((rc = RIO_CUDA(run, cudaMalloc((void **)&d.in, run->in[BACKPROP_IN_INPUT].size))) != 0 ||
      (rc = RIO_CUDA(run, cudaMalloc((void **)&d.w, run->in[BACKPROP_IN_WEIGHTS].size))) != 0 ||
      (rc = RIO_CUDA(run, cudaMalloc((void **)&d.prev, run->in[BACKPROP_IN_PREV].size))) != 0 ||
      (rc = RIO_CUDA(run, cudaMalloc((void **)&d.partial, partial_bytes))) != 0 ||
      (rc = RIO_CUDA(run, cudaMalloc((void **)&d.units, sizeof(*d.units)))) != 0 ||
      (rc = RIO_CUDA(run, cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking))) != 0)
    goto out;
  /* the result's host buffers pinned (untimed), so that its copy back
   * runs at the link's speed in every version */
  if ((rc = RIO_CUDA(run, cudaHostRegister(st->got_w, bytes, cudaHostRegisterDefault))) != 0)
    goto out;
  reg_w = 1;
  if ((rc = RIO_CUDA(run, cudaHostRegister(st->got_prev, bytes, cudaHostRegisterDefault))) != 0)
    goto out;
  reg_p = 1;
  if (gpufs && !(err = rio_errors(run))) {
    rc = -EIO;
    goto out;
  }
  if ((rc = RIO_CUDA(run, cudaDeviceSynchronize())) != 0)
    goto out;
  rc = bp_timed(run, v, &d, s, err);
out:
  if (rc)
    cudaDeviceSynchronize(); /* nothing may still use the buffers freed below */
  if (reg_p)
    cudaHostUnregister(st->got_prev);
  if (reg_w)
    cudaHostUnregister(st->got_w);
  if (s)
    cudaStreamDestroy(s);
  cudaFree(d.units);
  cudaFree(d.partial);
  cudaFree(d.prev);
  cudaFree(d.w);
  cudaFree(d.in);
  return rc;
}

extern "C" const struct rio_bench rio_bench_backprop = {
    "backprop",
    "one training step of a (22 M)-16-1 perceptron: forward sums, deltas, weight adjustment (3.2 GB)",
    backprop_setup,
    backprop_generate,
    backprop_reference,
    backprop_run,
    backprop_verify,
    backprop_teardown};
