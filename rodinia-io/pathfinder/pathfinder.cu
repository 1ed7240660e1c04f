/*
 * pathfinder.cu - pathfinder's four versions (the computation:
 * pathfinder.h), all with the ghost-zone pyramid of Rodinia's GPU code: a
 * kernel advances PF_PYRAMID rows at once, each block one tile of PF_TILE
 * columns, from the tile widened by PF_PYRAMID columns of halo each side
 * (every cell a tile's row depends on), in shared memory; the row reached
 * goes to global memory for the next kernel.
 *
 * cpu-io loads both files, then runs the steps.  expert loads "first" and
 * streams "wall", each step waiting (on the GPU) only for the rows it
 * needs.  gpufs reads a step's band of rows (PF_PYRAMID rows, contiguous in
 * the file) one launch ahead: each launch's blocks first gread their
 * contiguous slices of the next step's band into device memory, then run
 * this step from the band the previous launch read, so one block's reads
 * overlap other blocks' compute, and every read is one large gread.  The
 * files are opened once, by a kernel before the steps, and closed by one
 * after them (a descriptor outlives the kernel that opened it): a gopen
 * and gclose in every launch cost a host open and close each (measured on
 * an H100 at scale 1 with 16-row steps: 0.043 s against the expert's
 * 0.033 s).
 *
 * A run may cover a part of the last row's columns (pathfinder_run_columns,
 * gpufs only: rodinia_mpi's ranks): the steps then run on the window of
 * columns that part depends on (struct pf_win) as on a grid of its own,
 * and the band reads take each row's window (pf_gread_rows).
 */
#include "rodinia-io/pathfinder/pathfinder.h"

#include <errno.h>
#include <string.h>

#include "rodinia-io/harness/rio_cuda.h"
#include "rodinia-io/harness/rio_device.cuh"

#define PF_TILE 2048
#define PF_THREADS 512
#define PF_PYRAMID 32
#define PF_SPAN (PF_TILE + 2 * PF_PYRAMID)

/* The columns block blockIdx.x works on in a step of p rows: its tile
 * [t_lo, t_hi), and [b_lo, b_hi), the tile widened by p each side and
 * clipped to the grid.  Shared buffers hold column b_lo + x at x. */
struct pf_span {
  uint64_t t_lo, t_hi, b_lo, b_hi;
};

__device__ __forceinline__ struct pf_span pf_span_of(uint64_t cols, int p)
{
  struct pf_span s;
  s.t_lo = (uint64_t)blockIdx.x * PF_TILE;
  s.t_hi = s.t_lo + PF_TILE < cols ? s.t_lo + PF_TILE : cols;
  s.b_lo = s.t_lo > (uint64_t)p ? s.t_lo - p : 0;
  s.b_hi = s.t_hi + p < cols ? s.t_hi + p : cols;
  return s;
}

/*
 * Row k (1..p) of a step: out[x] = wall[x] + the least of in[x - 1..x + 1]
 * that are grid columns, for the x still exact after k rows: the span
 * shrinks by k each side, except at the grid's edges, where the border
 * column has one neighbour.  in and out: shared; wall: the row's piece
 * from column b_lo (shared or global).  Every thread of the block calls
 * it; synchronizes the block.
 */
__device__ void pf_row(const int32_t *in, const int32_t *wall, int32_t *out, const struct pf_span s,
                       uint64_t cols, int k)
{
  const uint32_t n = (uint32_t)(s.b_hi - s.b_lo);
  const uint32_t lo = s.b_lo == 0 ? 0 : (uint32_t)k;
  const uint32_t hi = s.b_hi == cols ? n : n - (uint32_t)k;
  for (uint32_t x = lo + threadIdx.x; x < hi; x += blockDim.x) {
    int32_t m = in[x];
    if (x > 0) /* inside the grid: x == 0 only at column 0 */
      m = min(m, in[x - 1]);
    if (x + 1 < n) /* likewise x == n - 1 only at column cols - 1 */
      m = min(m, in[x + 1]);
    out[x] = wall[x] + m;
  }
  __syncthreads();
}

/* The tile's columns of row (in shared, from b_lo) into dst (global).
 * Every thread of the block calls it; no synchronization. */
__device__ void pf_store(const int32_t *row, int32_t *dst, const struct pf_span s)
{
  for (uint64_t c = s.t_lo + threadIdx.x; c < s.t_hi; c += blockDim.x)
    dst[c] = row[c - s.b_lo];
}

/* The span of src (global) into row (shared).  Every thread of the block
 * calls it; synchronizes the block. */
__device__ void pf_load(const int32_t *src, int32_t *row, const struct pf_span s)
{
  for (uint64_t c = s.b_lo + threadIdx.x; c < s.b_hi; c += blockDim.x)
    row[c - s.b_lo] = src[c];
  __syncthreads();
}

/*
 * One step of the block's tile: p rows from src (the row before them) and
 * rows (the p wall rows, device memory, one after the other) into dst.
 * Every thread of the block calls it; synchronizes the block.  buf: the
 * kernel's shared rows (declared in the kernel, not here: a __shared__ array
 * of a device function is laid out for the whole program and would push
 * libgpufs's block scratch behind it in every kernel).
 */
__device__ void pf_pyramid(const int32_t *src, const int32_t *rows, int32_t *dst, uint64_t cols, int p,
                           int32_t (*buf)[PF_SPAN])
{
  const struct pf_span s = pf_span_of(cols, p);
  pf_load(src, buf[0], s);
  for (int k = 1; k <= p; k++)
    pf_row(buf[(k - 1) & 1], rows + (uint64_t)(k - 1) * cols + s.b_lo, buf[k & 1], s, cols, k);
  pf_store(buf[p & 1], dst, s);
}

/*
 * Memory versions, one step: rows r0 + 1 .. r0 + p from src (row r0) and
 * wall (row r at (r - 1) * cols, device memory) into dst (row r0 + p).
 * ceil(cols / PF_TILE) blocks of PF_THREADS threads.
 */
__global__ void __launch_bounds__(PF_THREADS)
pf_step(const int32_t *src, const int32_t *wall, int32_t *dst, uint64_t cols, uint64_t r0, int p)
{
  __shared__ int32_t buf[2][PF_SPAN];
  pf_pyramid(src, wall + r0 * cols, dst, cols, p, buf);
}

/* The gpufs versions open both files once, before the steps, and close
 * them after: fds[0] "first", fds[1] "wall".  One block calls each kernel
 * (block-level gopen/gclose); errors lower *err. */
__global__ void pf_open_gpufs(const char *first_path, const char *wall_path, int *fds, int *err)
{
  const int f = gopen(first_path, GPUFS_O_RDONLY);
  const int w = gopen(wall_path, GPUFS_O_RDONLY);
  if (threadIdx.x == 0) {
    fds[0] = f;
    fds[1] = w;
    rio_dev_error(err, f);
    rio_dev_error(err, w);
  }
}

__global__ void pf_close_gpufs(const int *fds, int *err)
{
  for (int i = 0; i < 2; i++) {
    const int fd = fds[i];
    if (fd >= 0) {
      const int rc = gclose(fd);
      if (threadIdx.x == 0)
        rio_dev_error(err, rc);
    }
  }
}

/*
 * nrows rows of the window into dst, one after the other (wb bytes each):
 * the first at offset off of fd, the next fb bytes (a row of the file)
 * further.  Block blockIdx.x takes a contiguous slice of dst's bytes
 * (whole 4 KiB units of it): one gread range where the window is whole
 * rows (wb == fb: they follow each other in the file), else one a row it
 * touches.  *rc keeps the first error.  Every thread of the block calls it
 * (block-level gread).
 */
__device__ void pf_gread_rows(int fd, uint64_t off, uint64_t nrows, uint64_t fb, uint64_t wb, void *dst, int *rc)
{
  if (fd < 0)
    return; /* pf_open_gpufs recorded why */
  const uint64_t unit = 4096, bytes = nrows * wb;
  const uint64_t share = (bytes / gridDim.x + unit - 1) / unit * unit;
  const uint64_t lo = blockIdx.x * share < bytes ? blockIdx.x * share : bytes;
  const uint64_t hi = lo + share < bytes ? lo + share : bytes;
  for (uint64_t at = lo; at < hi;) {
    const uint64_t in_row = wb == fb ? at : at % wb;
    const uint64_t len = wb == fb || hi - at < wb - in_row ? hi - at : wb - in_row;
    const uint64_t file = wb == fb ? off + at : off + at / wb * fb + in_row;
    const int r = rio_gread_range(fd, file, len, (uint8_t *)dst + at, RIO_GREAD_CALL);
    *rc = *rc ? *rc : r;
    if (r)
      break; /* r is the block's: every thread leaves */
    at += len;
  }
}

/* The columns a run covers: the window [lo, lo + cols) of the file's
 * rows of file_cols columns (pathfinder_window; all of them in the
 * single-process run).  The steps run on the window as on a grid of
 * cols columns. */
struct pf_win {
  uint64_t file_cols, lo, cols;
};

/*
 * gpufs, one launch: first gread this block's slice of the next step's
 * band (next_rows window rows of wall from the file row at next_off, into
 * next; and of "first" into first, in the launch before the first step),
 * then, when p > 0, run this step from the band the previous launch read
 * (cur) as pf_step does.  The launch boundary orders a band's reads before
 * its use.  Every thread of every block runs it; errors lower *err.
 * ceil(w.cols / PF_TILE) blocks of PF_THREADS threads.
 */
__global__ void __launch_bounds__(PF_THREADS, 1)
pf_step_gpufs(const int32_t *src, const int32_t *cur, int32_t *dst, const struct pf_win w, int p, const int *fds,
              uint64_t next_off, uint64_t next_rows, int32_t *next, int32_t *first, int *err)
{
  const uint64_t fb = w.file_cols * sizeof(int32_t), wb = w.cols * sizeof(int32_t);
  const uint64_t skip = w.lo * sizeof(int32_t);
  int rc = 0;
  if (first)
    pf_gread_rows(fds[0], skip, 1, fb, wb, first, &rc);
  if (next_rows)
    pf_gread_rows(fds[1], next_off + skip, next_rows, fb, wb, next, &rc);
  if (threadIdx.x == 0)
    rio_dev_error(err, rc);
  __shared__ int32_t buf[2][PF_SPAN];
  if (p > 0)
    pf_pyramid(src, cur, dst, w.cols, p, buf);
}

/* ---------------- the versions (host) ---------------- */

struct pf_dev {
  struct pf_win w; /* the window the run covers */
  int *fds;        /* gpufs: the descriptors of "first" and "wall" (device) */
  int32_t *first;  /* row 0's window */
  int32_t *wall;   /* rows 1.. (not in gpufs; whole rows) */
  int32_t *band[2];/* gpufs: a step's wall rows' windows, read one launch ahead */
  int32_t *row[2]; /* the rows the steps reach, in turn (their windows) */
};

/* The rows of the step starting at row r0: at most PF_PYRAMID, to the last. */
static int pf_rows_of(const struct pathfinder_state *st, uint64_t r0)
{
  if (r0 + 1 >= st->rows)
    return 0;
  return (int)(st->rows - 1 - r0 < PF_PYRAMID ? st->rows - 1 - r0 : PF_PYRAMID);
}

/* Every step; expert (job) waits before each for the wall rows it reads,
 * gpufs (err) reads each step's band one launch ahead.  The last row's
 * window ends in *last. */
static int pf_steps(struct rio_run *run, const struct pf_dev *d, struct rio_expert *job, int *err,
                    cudaStream_t s, const int32_t **last)
{
  const struct pathfinder_state *st = (const struct pathfinder_state *)run->state;
  const unsigned blocks = (unsigned)((d->w.cols + PF_TILE - 1) / PF_TILE);
  const uint64_t row_bytes = st->cols * sizeof(int32_t); /* a row of the files */
  const int32_t *src = d->first;
  int rc = 0;
  if (err) { /* open; then the launch before the first step: "first" and the first band */
    pf_open_gpufs<<<1, 32, 0, s>>>(rio_gpufs_path(run, PATHFINDER_IN_FIRST),
                                   rio_gpufs_path(run, PATHFINDER_IN_WALL), d->fds, err);
    pf_step_gpufs<<<blocks, PF_THREADS, 0, s>>>(NULL, NULL, NULL, d->w, 0, d->fds, 0, pf_rows_of(st, 0),
                                                 d->band[0], d->first, err);
  }
  for (uint64_t r0 = 0, k = 0; r0 + 1 < st->rows; r0 += PF_PYRAMID, k++) {
    const int p = pf_rows_of(st, r0);
    int32_t *dst = d->row[k & 1];
    if (job && (rc = rio_expert_wait(job, (r0 + p) * row_bytes, s)) != 0)
      return rc;
    if (err)
      pf_step_gpufs<<<blocks, PF_THREADS, 0, s>>>(src, d->band[k & 1], dst, d->w, p, d->fds,
                                                   (r0 + p) * row_bytes, pf_rows_of(st, r0 + p),
                                                   d->band[(k + 1) & 1], NULL, err);
    else
      pf_step<<<blocks, PF_THREADS, 0, s>>>(src, d->wall, dst, d->w.cols, r0, p);
    if ((rc = RIO_CUDA(run, cudaGetLastError())) != 0)
      return rc;
    src = dst;
  }
  if (err) {
    pf_close_gpufs<<<1, 32, 0, s>>>(d->fds, err);
    if ((rc = RIO_CUDA(run, cudaGetLastError())) != 0)
      return rc;
  }
  *last = src;
  return 0;
}

/* The timed part: the version's I/O and steps, the last row's columns
 * [lo, hi) into out (host memory). */
static int pf_timed(struct rio_run *run, enum rio_version v, const struct pf_dev *d, uint64_t lo, uint64_t hi,
                    int32_t *out, cudaStream_t s, int *err)
{
  const double t0 = rio_now();
  const int32_t *last = NULL;
  int rc;
  if (v == RIO_CPU_IO) {
    if ((rc = rio_cpuio_load(run, PATHFINDER_IN_FIRST, d->first)) != 0 ||
        (rc = rio_cpuio_load(run, PATHFINDER_IN_WALL, d->wall)) != 0 ||
        /* a pageable cudaMemcpy may return before its DMA ends; s does not
         * wait for the legacy stream */
        (rc = RIO_CUDA(run, cudaDeviceSynchronize())) != 0)
      return rc;
    run->t.io_s = rio_now() - t0;
    rc = pf_steps(run, d, NULL, NULL, s, &last);
  } else if (v == RIO_EXPERT) {
    struct rio_expert *job = NULL;
    if ((rc = rio_expert_load(run, PATHFINDER_IN_FIRST, d->first)) != 0)
      return rc;
    rc = rio_expert_start(run, PATHFINDER_IN_WALL, d->wall, &job);
    if (rc == 0)
      rc = pf_steps(run, d, job, NULL, s, &last);
    const int rc2 = rio_expert_finish(job);
    rc = rc ? rc : rc2;
  } else {
    rc = pf_steps(run, d, NULL, err, s, &last);
  }
  if (rc != 0 ||
      (rc = RIO_CUDA(run, cudaMemcpyAsync(out, last + (lo - d->w.lo), (hi - lo) * sizeof(int32_t),
                                          cudaMemcpyDeviceToHost, s))) != 0 ||
      (rc = RIO_CUDA(run, cudaStreamSynchronize(s))) != 0)
    return rc;
  if (err && (rc = rio_errors_read(run, "pathfinder gread")) != 0)
    return rc;
  run->t.e2e_s = rio_now() - t0;
  run->t.overlapped = v != RIO_CPU_IO;
  return 0;
}

int pathfinder_run(struct rio_run *run, enum rio_version v)
{
  const struct pathfinder_state *st = (const struct pathfinder_state *)run->state;
  return pathfinder_run_columns(run, v, 0, st->cols, st->got);
}

int pathfinder_run_columns(struct rio_run *run, enum rio_version v, uint64_t lo, uint64_t hi, int32_t *out)
{
  const struct pathfinder_state *st = (const struct pathfinder_state *)run->state;
  const int gpufs = rio_is_gpufs(v);
  struct pf_dev d;
  cudaStream_t s = NULL;
  int *err = NULL;
  int rc;

  memset(&run->t, 0, sizeof(run->t));
  memset(&d, 0, sizeof(d));
  if (lo >= hi || hi > st->cols)
    return rio_fail(run, -EINVAL, "pathfinder: columns [%llu, %llu) of %llu", (unsigned long long)lo,
                    (unsigned long long)hi, (unsigned long long)st->cols);
  if ((lo > 0 || hi < st->cols) && !gpufs)
    return rio_fail(run, -EINVAL, "pathfinder: %s loads whole files: a part of the columns only in the gpufs "
                    "versions", rio_version_name(v));
  uint64_t b_lo, b_hi;
  pathfinder_window(st->cols, st->rows, lo, hi, &b_lo, &b_hi);
  d.w.file_cols = st->cols;
  d.w.lo = b_lo;
  d.w.cols = b_hi - b_lo;
  const uint64_t row_bytes = d.w.cols * sizeof(int32_t);
  if ((rc = RIO_CUDA(run, cudaMalloc((void **)&d.row[0], row_bytes))) != 0 ||
      (rc = RIO_CUDA(run, cudaMalloc((void **)&d.row[1], row_bytes))) != 0 ||
      (rc = RIO_CUDA(run, cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking))) != 0)
    goto out;
  if ((rc = RIO_CUDA(run, cudaMalloc((void **)&d.first, row_bytes))) != 0)
    goto out;
  if (gpufs) {
    if ((rc = RIO_CUDA(run, cudaMalloc((void **)&d.fds, 2 * sizeof(int)))) != 0 ||
        (rc = RIO_CUDA(run, cudaMalloc((void **)&d.band[0], PF_PYRAMID * row_bytes))) != 0 ||
        (rc = RIO_CUDA(run, cudaMalloc((void **)&d.band[1], PF_PYRAMID * row_bytes))) != 0)
      goto out;
    if (!(err = rio_errors(run))) {
      rc = -EIO;
      goto out;
    }
  } else if ((rc = RIO_CUDA(run, cudaMalloc((void **)&d.wall, run->in[PATHFINDER_IN_WALL].size))) != 0) {
    goto out;
  }
  if ((rc = RIO_CUDA(run, cudaDeviceSynchronize())) != 0)
    goto out;
  rc = pf_timed(run, v, &d, lo, hi, out, s, err);
out:
  if (rc)
    cudaDeviceSynchronize(); /* nothing may still use the buffers freed below */
  if (s)
    cudaStreamDestroy(s);
  cudaFree(d.wall);
  cudaFree(d.band[1]);
  cudaFree(d.band[0]);
  cudaFree(d.first);
  cudaFree(d.fds);
  cudaFree(d.row[1]);
  cudaFree(d.row[0]);
  return rc;
}

extern "C" const struct rio_bench rio_bench_pathfinder = {
    "pathfinder",
    "dynamic programming down a 953 x 262144 int32 grid, 32-row ghost-zone pyramids (1 GB)",
    pathfinder_setup,
    pathfinder_generate,
    pathfinder_reference,
    pathfinder_run,
    pathfinder_verify,
    pathfinder_teardown};
