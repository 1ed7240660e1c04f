/*
 * lud.cu - lud's GPU side: blocked LU without pivoting, and the four
 * versions.
 *
 * The algorithm, per step k over LUD_TILE-wide blocks (k0 = k T):
 *   1. lud_diag_kernel       factors the diagonal tile A11 = L11 U11
 *   2. lud_perimeter_kernel  the row panel U12 = L11^-1 A12 and the column
 *                            panel L21 = A21 U11^-1 (one block per tile;
 *                            L21 is also stored transposed into `lt`)
 *   3. lud_internal_kernel   the trailing update A22 -= L21 U12, a tiled
 *                            GEMM of rank T (shared-memory tiles, 8 x 8
 *                            register blocking): nearly all of the
 *                            2/3 n^3 flops
 * All on the default stream, so each kernel sees the previous one's writes.
 *
 * I/O cannot usefully overlap the computation: step 0's trailing update
 * already reads and writes every tile of the matrix, and steps 1 and 2
 * before it take tens of microseconds.  So every version loads the whole
 * matrix first (the gpufs versions with rio_gpufs_load, libgpufs's generic
 * I/O kernel), then runs the same kernels; io_s is that load.
 */
#include "rodinia-io/lud/lud.h"

#include <errno.h>
#include <string.h>

#include "rodinia-io/harness/rio_cuda.h"

#define T ((int)LUD_TILE)
#define LUD_THREADS 256 /* the GEMM's block */
#define LUD_BM 128 /* the GEMM block's C tile: LUD_BM x LUD_BM */
#define LUD_KC 32  /* the GEMM's k slice held in shared memory */

static_assert(LUD_TILE == 64 && LUD_THREADS == 256, "the GEMM's thread map assumes a 64-wide tile and 256 threads");

/*
 * Steps 1 and 2 keep a row or column of a tile in registers (r[j] needs
 * static indices, so their loops are unrolled whole).  They are latency
 * bound, one pivot after the other: 64 pivots a step, n in all; at
 * n = 8192 on an H100 they take 7 of the factorization's 26 ms, the GEMMs
 * (22 TFLOP/s) the rest.
 */

/*
 * Step 1: LU of the diagonal tile at (k0, k0) in place, right-looking:
 * thread i holds row i; at pivot p, thread p (its row final) publishes it
 * in shared memory and every row below takes L[i][p] = a[i][p] / a[p][p]
 * and the rank-1 update.  The pivot row alternates between two buffers, so
 * one barrier a pivot orders both the publish before the reads and the
 * reads before the buffer's next publish.  One block of T threads;
 * synchronizes the block once a pivot.
 */
__global__ void __launch_bounds__(T) lud_diag_kernel(float *a, uint64_t n, uint64_t k0)
{
  __shared__ float piv[2][T];
  const int i = threadIdx.x;
  float *row = a + (k0 + i) * n + k0;
  float r[T];
#pragma unroll
  for (int j = 0; j < T; j++)
    r[j] = row[j];
#pragma unroll
  for (int p = 0; p < T - 1; p++) {
    if (i == p)
#pragma unroll
      for (int j = p; j < T; j++)
        piv[p & 1][j] = r[j];
    __syncthreads();
    if (i > p) {
      const float l = r[p] / piv[p & 1][p];
      r[p] = l;
#pragma unroll
      for (int j = p + 1; j < T; j++)
        r[j] = fmaf(-l, piv[p & 1][j], r[j]);
    }
  }
#pragma unroll
  for (int j = 0; j < T; j++)
    row[j] = r[j];
}

/*
 * Step 2: blockIdx.x names the tile (k0 + T (blockIdx.x + 1)) of the
 * panels.  blockIdx.y = 0: the row panel tile U12 = L11^-1 A12 (forward
 * substitution, L11 unit lower), thread j holding column j; blockIdx.y =
 * 1: the column panel tile L21 = A21 U11^-1, thread i holding row i, which
 * it also stores transposed into lt (T x n: lt[p n + i] = L[i][k0 + p])
 * for the GEMM's coalesced loads.  Columns (rows) are independent and the
 * factored diagonal tile is read-only in shared memory, so the solves need
 * no barrier but the one after the diagonal tile is loaded.  Blocks of T
 * threads.
 */
__global__ void __launch_bounds__(T) lud_perimeter_kernel(float *a, float *lt, uint64_t n, uint64_t k0)
{
  __shared__ float d[T][T + 1]; /* the factored diagonal tile; row panel: transposed */
  const uint64_t off = k0 + (uint64_t)T * (blockIdx.x + 1);
  const int t = threadIdx.x;
  float x[T];

  if (blockIdx.y == 0) {
    /* d[p][i] = L[i][p]: column p of L11 is a row, read by broadcasts */
    for (int r = 0; r < T; r++)
      d[t][r] = a[(k0 + r) * n + k0 + t];
    float *col = a + k0 * n + off + t;
#pragma unroll
    for (int r = 0; r < T; r++)
      x[r] = col[r * n];
    __syncthreads();
#pragma unroll
    for (int p = 0; p < T - 1; p++)
#pragma unroll
      for (int r = p + 1; r < T; r++)
        x[r] = fmaf(-d[p][r], x[p], x[r]);
#pragma unroll
    for (int r = 0; r < T; r++)
      col[r * n] = x[r];
  } else {
    for (int r = 0; r < T; r++)
      d[r][t] = a[(k0 + r) * n + k0 + t];
    float *row = a + (off + t) * n + k0;
#pragma unroll
    for (int c = 0; c < T; c++)
      x[c] = row[c];
    __syncthreads();
#pragma unroll
    for (int p = 0; p < T; p++) {
      x[p] /= d[p][p];
#pragma unroll
      for (int c = p + 1; c < T; c++)
        x[c] = fmaf(-x[p], d[p][c], x[c]);
    }
#pragma unroll
    for (int c = 0; c < T; c++) {
      row[c] = x[c];
      lt[(uint64_t)c * n + off + t] = x[c];
    }
  }
}

/*
 * Step 3: A22 -= L21 U12 over the trailing square [k0 + T, n)^2.  Block
 * (bx, by) owns the LUD_BM x LUD_BM tile at rows t0 + 128 by, columns
 * t0 + 128 bx (t0 = k0 + T); thread (tx, ty) = (tid % 16, tid / 16) owns
 * rows {4 ty + i, 64 + 4 ty + i} and columns {4 tx + j, 64 + 4 tx + j},
 * i, j < 4, in 64 registers.  The trailing size is a multiple of 64, so a
 * block's second half of rows (columns) is all inside or all outside.
 * Blocks of LUD_THREADS threads; synchronizes the block twice a k slice.
 */
__global__ void __launch_bounds__(LUD_THREADS, 2)
lud_internal_kernel(float *a, const float *lt, uint64_t n, uint64_t k0)
{
  __shared__ __align__(16) float as[LUD_KC][LUD_BM]; /* L21 slice, transposed: as[p][row] */
  __shared__ __align__(16) float bs[LUD_KC][LUD_BM]; /* U12 slice: bs[p][col] */
  const uint64_t t0 = k0 + T;
  const uint64_t r0 = t0 + (uint64_t)LUD_BM * blockIdx.y, c0 = t0 + (uint64_t)LUD_BM * blockIdx.x;
  const int r_hi = r0 + 64 < n, c_hi = c0 + 64 < n;
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const float4 zero = make_float4(0.f, 0.f, 0.f, 0.f);
  float acc[8][8];

#pragma unroll
  for (int i = 0; i < 8; i++)
#pragma unroll
    for (int j = 0; j < 8; j++)
      acc[i][j] = 0.f;

  for (int kc = 0; kc < T; kc += LUD_KC) {
    /* each slice is LUD_KC x LUD_BM floats, in float4 */
#pragma unroll
    for (int q = 0; q < LUD_KC * LUD_BM / 4 / LUD_THREADS; q++) {
      const int e = threadIdx.x + LUD_THREADS * q, p = e / (LUD_BM / 4), col = e % (LUD_BM / 4) * 4;
      const uint64_t krow = (uint64_t)(kc + p);
      *(float4 *)&as[p][col] = col < 64 || r_hi ? *(const float4 *)&lt[krow * n + r0 + col] : zero;
      *(float4 *)&bs[p][col] = col < 64 || c_hi ? *(const float4 *)&a[(k0 + krow) * n + c0 + col] : zero;
    }
    __syncthreads();
#pragma unroll
    for (int p = 0; p < LUD_KC; p++) {
      const float4 a0 = *(const float4 *)&as[p][4 * ty], a1 = *(const float4 *)&as[p][64 + 4 * ty];
      const float4 b0 = *(const float4 *)&bs[p][4 * tx], b1 = *(const float4 *)&bs[p][64 + 4 * tx];
      const float ar[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      const float br[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
      for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 8; j++)
          acc[i][j] = fmaf(ar[i], br[j], acc[i][j]);
    }
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < 8; i++) {
    if (i >= 4 && !r_hi)
      break;
    float *row = a + (r0 + (i < 4 ? 4 * ty + i : 64 + 4 * ty + i - 4)) * n + c0;
#pragma unroll
    for (int h = 0; h < 2; h++) {
      if (h == 1 && !c_hi)
        break;
      float4 *cp = (float4 *)(row + 64 * h + 4 * tx);
      float4 c = *cp;
      c.x -= acc[i][4 * h + 0];
      c.y -= acc[i][4 * h + 1];
      c.z -= acc[i][4 * h + 2];
      c.w -= acc[i][4 * h + 3];
      *cp = c;
    }
  }
}

/* The whole factorization of the n x n matrix da (lt: T x n scratch), queued on st. */
static int lud_factor(struct rio_run *run, float *da, float *lt, uint64_t n, cudaStream_t st)
{
  const uint64_t nt = n / LUD_TILE;
  for (uint64_t k = 0; k < nt; k++) {
    const uint64_t k0 = k * LUD_TILE, rest = nt - k - 1;
    lud_diag_kernel<<<1, T, 0, st>>>(da, n, k0);
    if (rest) {
      const unsigned g = (unsigned)((rest * LUD_TILE + LUD_BM - 1) / LUD_BM);
      lud_perimeter_kernel<<<dim3((unsigned)rest, 2), T, 0, st>>>(da, lt, n, k0);
      lud_internal_kernel<<<dim3(g, g), LUD_THREADS, 0, st>>>(da, lt, n, k0);
    }
  }
  return RIO_CUDA(run, cudaGetLastError());
}

int lud_run(struct rio_run *run, enum rio_version v)
{
  struct lud_state *s = (struct lud_state *)run->state;
  const uint64_t n = s->n, bytes = n * n * sizeof(float);
  float *da, *lt;
  struct rio_timed t;
  int rc;

  if ((rc = rio_timed_init(&t, run, v, RIO_READS_WHOLE)) != 0)
    return rc;
  if ((rc = rio_timed_alloc(&t, (void **)&da, bytes)) != 0 ||
      (rc = rio_timed_alloc(&t, (void **)&lt, LUD_TILE * n * sizeof(float))) != 0 ||
      (rc = rio_timed_begin(&t, s->lu, bytes)) != 0 || (rc = rio_timed_load(&t, 0, da)) != 0 ||
      (rc = lud_factor(run, da, lt, n, t.stream)) != 0)
    return rio_timed_end(&t, rc);
  return rio_timed_end(&t, rio_timed_result(&t, da, "lud"));
}

extern "C" const struct rio_bench rio_bench_lud = {
    "lud", "LU decomposition without pivoting, blocked (64), of an 8192^2 float matrix (256 MiB)",
    lud_setup, lud_generate, lud_reference, lud_run, lud_verify, lud_teardown};
