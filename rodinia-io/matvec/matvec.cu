/*
 * matvec.cu - the row-block streaming engine of the matrix-vector family
 * (contract: matvec.cuh; shape and tolerance: matvec.h).
 *
 * One pass over the matrix.  A row block (about 1 MiB of whole rows) is
 * consumed by one 512-thread block as soon as it is in device memory
 * (matvec_row_block): each warp dots rows with x, then every thread adds
 * the block's rows, weighted by w, into its float4s of columns, and the
 * row block's column sums go into the share's row of a [groups x n]
 * double buffer; a small kernel adds the groups' rows, in group order, to
 * c at the end.  Nothing is summed by atomics: the result is the same on
 * every run and in every version.
 *
 * Reading the matrix twice (A x first, then A^T w) was the alternative for
 * the transposed products, and the natural one for atax, whose weights
 * are the products A x.  But each weight w_i = A_i . x needs row i only,
 * so it is ready when row i has arrived, and one pass suffices; the
 * benchmarks are bound by the files' I/O (about 40 GB/s against the
 * GPU's memory at 3 TB/s), so a second read of the file would double
 * their time, and a second sweep over a copy kept in device memory would
 * add a tail that overlaps with no I/O and keep the whole matrix resident
 * where the gpufs version needs 1 MiB per block.  Only the one pass was
 * measured.
 *
 * The versions (the small vector files are loaded whole first in all of
 * them: every row product needs all of x):
 *   cpu-io   the vectors and the matrix with rio_cpuio_load, then one
 *            launch over every row block.
 *   expert   the matrix's loader threads start first; the vectors load
 *            meanwhile; then a launch per MATVEC_EXPERT_BYTES of row
 *            blocks, queued behind rio_expert_wait for their chunks.
 *   gpufs    the vectors with rio_gpufs_load, then one kernel whose block
 *            g greads its share's row blocks, in file order, one gread
 *            call of ~1 MiB each, into its own staging buffer, and
 *            consumes each at once while the other blocks read theirs.
 */
#include "rodinia-io/matvec/matvec.cuh"

#include <errno.h>
#include <string.h>

#include "rodinia-io/harness/rio_device.cuh"

#define MATVEC_THREADS RIO_IO_THREADS
#define MATVEC_WARPS (MATVEC_THREADS / 32)
#define MATVEC_EXPERT_BYTES (16ull << 20) /* row blocks per expert launch */
#define MATVEC_REDUCE_THREADS 256
#define MATVEC_FULL_MASK 0xffffffffu

/* What the kernels are given (by value). */
struct matvec_args {
  struct matvec_shape sh;
  float *mat[2];    /* memory versions: the parts, whole */
  const float *x;   /* NULL: no row products */
  float *y;
  const float *w;   /* NULL: no column products */
  float *c;
  double *partial;  /* groups x n: each share's column sums */
};

/*
 * Consume one row block: rows (nr rows of n floats, in device memory) are
 * global rows [row0, row0 + nr).  Row products: warp k dots rows k, k + 16,
 * ... with x, each lane n / 32 fmas in float, then a xor-shuffle tree, and
 * lane 0 adds the dot to y.  Column products: thread t sums columns
 * 4 t .. 4 t + 3, 4 (t + 512) .. of the nr rows weighted by w in float
 * (fma), and adds them to share g's partial row in double.
 * Every thread of a MATVEC_THREADS block calls it, with equal arguments;
 * synchronizes the block (also at the end, so that the caller may refill
 * rows and the block's next call may reuse its shared weights).  wt: the
 * kernel's MATVEC_MAX_BLOCK_ROWS shared floats (declared in the kernel: a
 * device function's __shared__ array is laid out for the whole program,
 * ahead of libgpufs's block scratch in every kernel; group.cuh).
 */
__device__ __forceinline__ void matvec_row_block(const struct matvec_args &a, const float *rows, uint64_t row0,
                                                 uint32_t nr, uint64_t g, float *wt)
{
  const uint64_t q4 = a.sh.n / 4; /* float4s per row */
  const float4 *r4 = (const float4 *)rows;
  if (a.x) {
    const unsigned lane = threadIdx.x % 32;
    const float4 *x4 = (const float4 *)a.x;
    for (uint32_t r = threadIdx.x / 32; r < nr; r += MATVEC_WARPS) {
      const float4 *row = r4 + r * q4;
      float s = 0.0f;
#pragma unroll 4
      for (uint64_t q = lane; q < q4; q += 32) {
        const float4 v = row[q], xv = x4[q];
        s = fmaf(v.x, xv.x, s);
        s = fmaf(v.y, xv.y, s);
        s = fmaf(v.z, xv.z, s);
        s = fmaf(v.w, xv.w, s);
      }
      for (int o = 16; o > 0; o >>= 1)
        s += __shfl_xor_sync(MATVEC_FULL_MASK, s, o);
      if (lane == 0)
        a.y[row0 + r] += s;
    }
  }
  if (a.w) {
    __syncthreads(); /* w may be y: this row block's products are written */
    for (uint32_t r = threadIdx.x; r < nr; r += MATVEC_THREADS)
      wt[r] = a.w[row0 + r];
    __syncthreads();
    double2 *part = (double2 *)(a.partial + g * a.sh.n);
    for (uint64_t q = threadIdx.x; q < q4; q += MATVEC_THREADS) {
      float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll 4
      for (uint32_t r = 0; r < nr; r++) {
        const float4 v = r4[r * q4 + q];
        const float wr = wt[r];
        acc.x = fmaf(wr, v.x, acc.x);
        acc.y = fmaf(wr, v.y, acc.y);
        acc.z = fmaf(wr, v.z, acc.z);
        acc.w = fmaf(wr, v.w, acc.w);
      }
      double2 lo = part[2 * q], hi = part[2 * q + 1];
      lo.x += acc.x;
      lo.y += acc.y;
      hi.x += acc.z;
      hi.y += acc.w;
      part[2 * q] = lo;
      part[2 * q + 1] = hi;
    }
  }
  __syncthreads();
}

/* Memory versions: block g consumes the row blocks of its share that lie
 * in [rb0, rb1), in order (a block with none returns at once). */
__global__ void __launch_bounds__(MATVEC_THREADS) matvec_memory_kernel(const struct matvec_args a, uint64_t rb0,
                                                                        uint64_t rb1)
{
  __shared__ float wt[MATVEC_MAX_BLOCK_ROWS];
  uint64_t lo, hi, part, row0, nr;
  matvec_share(&a.sh, blockIdx.x, &lo, &hi);
  lo = lo > rb0 ? lo : rb0;
  hi = hi < rb1 ? hi : rb1;
  for (uint64_t rb = lo; rb < hi; rb++) {
    matvec_rows_of(&a.sh, rb, &part, &row0, &nr);
    const float *mat = part ? a.mat[1] : a.mat[0]; /* not a.mat[part]: keeps a out of local memory */
    matvec_row_block(a, mat + row0 * a.sh.n, part * a.sh.n + row0, (uint32_t)nr, blockIdx.x, wt);
  }
}

/*
 * gpufs: block g opens the parts' files, greads each row block of its
 * share into its staging buffer (stage + g block_rows n) and consumes it.
 * Each block reads a contiguous run of each file in order, so libgpufs's
 * readahead follows it.  Every thread of every block runs it (block-level
 * gopen/gread/gclose); the first error lowers *err.
 */
__global__ void __launch_bounds__(MATVEC_THREADS, 1)
    matvec_gpufs_kernel(const struct matvec_args a, const char *path0, const char *path1, float *stage, int *err)
{
  __shared__ float wt[MATVEC_MAX_BLOCK_ROWS];
  const uint64_t row = a.sh.n * sizeof(float);
  float *buf = stage + blockIdx.x * a.sh.block_rows * a.sh.n;
  const int fd0 = gopen(path0, GPUFS_O_RDONLY);
  const int fd1 = a.sh.nparts > 1 ? gopen(path1, GPUFS_O_RDONLY) : -1; /* -1: no second part */
  int rc = fd0 < 0 ? fd0 : a.sh.nparts > 1 && fd1 < 0 ? fd1 : 0;
  uint64_t lo, hi, part, row0, nr;
  matvec_share(&a.sh, blockIdx.x, &lo, &hi);
  for (uint64_t rb = lo; rb < hi && !rc; rb++) {
    matvec_rows_of(&a.sh, rb, &part, &row0, &nr);
    rc = rio_gread_range(part ? fd1 : fd0, row0 * row, nr * row, buf, RIO_GREAD_CALL);
    if (rc)
      break; /* rc is the block's: every thread leaves */
    /* gread returned: its bytes are visible to the whole block */
    matvec_row_block(a, buf, part * a.sh.n + row0, (uint32_t)nr, blockIdx.x, wt);
  }
  if (fd0 >= 0) {
    const int r = gclose(fd0);
    rc = rc ? rc : r;
  }
  if (fd1 >= 0) {
    const int r = gclose(fd1);
    rc = rc ? rc : r;
  }
  if (threadIdx.x == 0)
    rio_dev_error(err, rc);
}

/* c[j] += the groups' column sums of column j, in group order, in double. */
__global__ void matvec_reduce_kernel(const double *partial, uint64_t groups, uint64_t n, float *c)
{
  const uint64_t j = (uint64_t)blockIdx.x * MATVEC_REDUCE_THREADS + threadIdx.x;
  if (j >= n)
    return;
  double s = c[j];
  for (uint64_t g = 0; g < groups; g++)
    s += partial[g * n + j];
  c[j] = (float)s;
}

/* ---------------- the versions (host) ---------------- */

/* expert: the parts stream in while the vectors load; each launch covers
 * up to MATVEC_EXPERT_BYTES of row blocks of one part (one loader to wait
 * for) and runs once their chunks are on the GPU. */
static int matvec_expert(struct rio_run *run, const struct matvec_plan *p, const struct matvec_args *a,
                         float *arena, const uint64_t *vec_off, cudaStream_t s)
{
  const struct matvec_shape *sh = &a->sh;
  const uint64_t row = sh->n * sizeof(float);
  const uint64_t bytes = sh->block_rows * row;
  const uint64_t step = MATVEC_EXPERT_BYTES > bytes ? MATVEC_EXPERT_BYTES / bytes : 1;
  struct rio_expert *job[2] = {NULL, NULL};
  int rc = 0;
  for (int k = 0; k < p->nparts && !rc; k++)
    rc = rio_expert_start(run, p->part_in[k], a->mat[k], &job[k]);
  for (int k = 0; k < p->nvec && !rc; k++)
    rc = rio_expert_load(run, p->vec_in[k], arena + vec_off[k]);
  for (uint64_t rb0 = 0, rb1; rb0 < sh->total && !rc; rb0 = rb1) {
    const uint64_t part = rb0 / sh->nblocks, part_end = (part + 1) * sh->nblocks;
    uint64_t last_part, last_row0, last_rows;
    rb1 = rb0 + step < part_end ? rb0 + step : part_end;
    matvec_rows_of(sh, rb1 - 1, &last_part, &last_row0, &last_rows);
    rc = rio_expert_wait(job[part], (last_row0 + last_rows) * row, s);
    if (rc)
      break;
    matvec_memory_kernel<<<(unsigned)sh->groups, MATVEC_THREADS, 0, s>>>(*a, rb0, rb1);
    rc = RIO_CUDA(run, cudaGetLastError());
  }
  for (int k = 0; k < p->nparts; k++) {
    const int rc2 = rio_expert_finish(job[k]);
    rc = rc ? rc : rc2;
  }
  return rc;
}

/* The timed products of version v: the inputs from their files, the row
 * and column products queued on s. */
static int matvec_products(struct rio_run *run, enum rio_version v, const struct matvec_plan *p,
                           const struct matvec_args *a, float *arena, const uint64_t *vec_off, float *stage,
                           cudaStream_t s, int *err, double t0)
{
  const struct matvec_shape *sh = &a->sh;
  int rc = 0;
  if (v == RIO_CPU_IO) {
    for (int k = 0; k < p->nvec && !rc; k++)
      rc = rio_cpuio_load(run, p->vec_in[k], arena + vec_off[k]);
    for (int k = 0; k < p->nparts && !rc; k++)
      rc = rio_cpuio_load(run, p->part_in[k], a->mat[k]);
    /* a pageable cudaMemcpy may return before its DMA ends; s does not
     * wait for the legacy stream */
    if (rc || (rc = RIO_CUDA(run, cudaDeviceSynchronize())) != 0)
      return rc;
    run->t.io_s = rio_now() - t0;
    matvec_memory_kernel<<<(unsigned)sh->groups, MATVEC_THREADS, 0, s>>>(*a, 0, sh->total);
  } else if (v == RIO_EXPERT) {
    run->t.overlapped = 1;
    rc = matvec_expert(run, p, a, arena, vec_off, s);
  } else {
    run->t.overlapped = 1;
    /* the vectors need no overlap: a few hundred KiB, each needed whole
     * before the first row product */
    for (int k = 0; k < p->nvec && !rc; k++)
      rc = rio_gpufs_load(run, p->vec_in[k], arena + vec_off[k]);
    if (rc)
      return rc;
    matvec_gpufs_kernel<<<(unsigned)sh->groups, MATVEC_THREADS, 0, s>>>(
        *a, rio_gpufs_path(run, p->part_in[0]), p->nparts > 1 ? rio_gpufs_path(run, p->part_in[1]) : NULL, stage,
        err);
  }
  if (rc || (rc = RIO_CUDA(run, cudaGetLastError())) != 0)
    return rc;
  if (a->w) {
    const unsigned blocks = (unsigned)((sh->n + MATVEC_REDUCE_THREADS - 1) / MATVEC_REDUCE_THREADS);
    matvec_reduce_kernel<<<blocks, MATVEC_REDUCE_THREADS, 0, s>>>(a->partial, sh->groups, sh->n, a->c);
    rc = RIO_CUDA(run, cudaGetLastError());
  }
  return rc;
}

static float *matvec_at(float *arena, uint64_t off) { return off == MATVEC_NONE ? NULL : arena + off; }

int matvec_run(struct rio_run *run, enum rio_version v, const struct matvec_plan *p)
{
  return matvec_run_rows(run, v, p, 0, p->n);
}

int matvec_run_rows(struct rio_run *run, enum rio_version v, const struct matvec_plan *p, uint64_t row0,
                    uint64_t rows)
{
  struct matvec_state *st = (struct matvec_state *)run->state;
  const struct matvec_shape sh = matvec_shape_rows(p->n, (uint64_t)p->nparts, row0, rows);
  const int gpufs = rio_is_gpufs(v);
  const uint64_t mat_bytes = sh.n * sh.n * sizeof(float);
  struct matvec_args a;
  uint64_t vec_off[RIO_MAX_INPUTS], vec_floats = 0;
  float *arena = NULL, *stage = NULL;
  cudaStream_t s = NULL;
  int registered = 0, *err = NULL, rc;
  double t0;

  memset(&run->t, 0, sizeof(run->t));
  memset(&a, 0, sizeof(a));
  if (v != RIO_CPU_IO && v != RIO_EXPERT && !gpufs)
    return rio_fail(run, -EINVAL, "%s: no version %d", run->bench->name, (int)v);
  if (rows == 0 || row0 + rows > p->n)
    return rio_fail(run, -EINVAL, "%s: rows [%llu, %llu) of %llu", run->bench->name, (unsigned long long)row0,
                    (unsigned long long)(row0 + rows), (unsigned long long)p->n);
  if (p->nparts < 1 || p->nparts > 2 || p->nvec > RIO_MAX_INPUTS || (p->x == MATVEC_NONE) != (p->y == MATVEC_NONE) ||
      (p->w == MATVEC_NONE) != (p->c == MATVEC_NONE) || (p->nparts > 1 && p->w != MATVEC_NONE))
    return rio_fail(run, -EINVAL, "%s: a plan the engine cannot run", run->bench->name);
  for (int k = 0; k < p->nvec; k++) {
    vec_off[k] = vec_floats;
    vec_floats += run->in[p->vec_in[k]].size / sizeof(float);
  }
  a.sh = sh;

  /* untimed: device buffers, the stream, the result's host memory pinned */
  if ((rc = RIO_CUDA(run, cudaMalloc((void **)&arena, (vec_floats + p->nzero) * sizeof(float)))) != 0 ||
      (rc = RIO_CUDA(run, cudaMemset(arena + vec_floats, 0, p->nzero * sizeof(float)))) != 0)
    goto out;
  if (p->w != MATVEC_NONE &&
      ((rc = RIO_CUDA(run, cudaMalloc((void **)&a.partial, sh.groups * sh.n * sizeof(double)))) != 0 ||
       (rc = RIO_CUDA(run, cudaMemset(a.partial, 0, sh.groups * sh.n * sizeof(double)))) != 0))
    goto out;
  for (int k = 0; k < p->nparts && !gpufs; k++)
    if ((rc = RIO_CUDA(run, cudaMalloc((void **)&a.mat[k], mat_bytes))) != 0)
      goto out;
  if (gpufs &&
      (rc = RIO_CUDA(run, cudaMalloc((void **)&stage, sh.groups * sh.block_rows * sh.n * sizeof(float)))) != 0)
    goto out;
  if ((rc = RIO_CUDA(run, cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking))) != 0 ||
      (rc = RIO_CUDA(run, cudaHostRegister(st->got, st->nout * sizeof(float), cudaHostRegisterDefault))) != 0)
    goto out;
  registered = 1;
  if (gpufs && !(err = rio_errors(run))) {
    rc = -EIO;
    goto out;
  }
  a.x = matvec_at(arena, p->x);
  a.y = matvec_at(arena, p->y);
  a.w = matvec_at(arena, p->w);
  a.c = matvec_at(arena, p->c);
  if ((rc = RIO_CUDA(run, cudaDeviceSynchronize())) != 0)
    goto out;

  t0 = rio_now();
  if ((rc = matvec_products(run, v, p, &a, arena, vec_off, stage, s, err, t0)) != 0 ||
      (p->finish && (rc = p->finish(run, arena, s)) != 0) ||
      (rc = RIO_CUDA(run, cudaMemcpyAsync(st->got, arena + p->result, st->nout * sizeof(float),
                                          cudaMemcpyDeviceToHost, s))) != 0 ||
      (rc = RIO_CUDA(run, cudaStreamSynchronize(s))) != 0)
    goto out;
  if (gpufs && (rc = rio_errors_read(run, "reading the matrix")) != 0)
    goto out;
  run->t.e2e_s = rio_now() - t0;

out:
  if (rc)
    cudaDeviceSynchronize(); /* nothing may still use the buffers freed below */
  if (s)
    cudaStreamDestroy(s);
  if (registered) {
    const int rc2 = RIO_CUDA(run, cudaHostUnregister(st->got));
    rc = rc ? rc : rc2;
  }
  cudaFree(stage);
  cudaFree(a.mat[0]);
  cudaFree(a.mat[1]);
  cudaFree(a.partial);
  cudaFree(arena);
  return rc;
}
