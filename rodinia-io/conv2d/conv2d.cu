/*
 * conv2d.cu - 2dconv's GPU side: the band kernel, the gpufs kernel that
 * reads the image and convolves it in one pass, and the four versions.
 *
 * The convolution is memory bound (one float in, one out, per point), so
 * each thread takes a column of a band of CONV2D_BAND rows, plus the row
 * above and the row below, into registers (all its loads in flight at
 * once) and takes its west and east neighbours from the lanes beside it: a
 * warp reads and writes 32 consecutive floats of a row, and each element
 * of a is loaded once per band (18 rows loaded for 16 computed).
 *
 * Rows [y0, y1) of b need rows y0 - 1 .. y1 of a only, so the computation
 * follows the reading:
 *   gpufs   conv2d_fused_kernel: each block owns a contiguous range of
 *           rows and, step after step of CONV2D_GPUFS_STEP bytes, greads the
 *           step's rows (and the row below it) into their place in the
 *           device copy of a and convolves them at once, while the other
 *           blocks are still reading: one kernel, I/O and compute
 *           overlapped.  The block reads its range in order, so libgpufs's
 *           readahead follows it; the two rows just outside its range
 *           belong to its neighbours and go to scratch instead.
 *   expert  the loader's threads copy 1 MiB chunks; a band kernel on each
 *           CONV2D_EXPERT_STEP bytes of rows is queued behind
 *           rio_expert_wait for the chunks it needs.
 *   cpu-io  loads the file, then convolves (io_s is the load).
 * Every version then copies b (pinned: the result buffer is registered
 * beforehand, untimed) back to host memory.  conv2d_run_rows runs a range
 * of bands (the gpufs kernel only: rodinia_mpi's ranks), with a and b
 * holding that range's rows; the rows just outside it are the first and
 * last blocks' halo rows, read like any other block's.
 */
#include "rodinia-io/conv2d/conv2d.h"

#include <errno.h>
#include <string.h>

#include "rodinia-io/harness/rio_cuda.h"
#include "rodinia-io/harness/rio_device.cuh"

#define CONV2D_THREADS 256
#define CONV2D_GPUFS_STEP (4ull << 20)   /* bytes of a a gpufs block reads, then convolves */
#define CONV2D_EXPERT_STEP (32ull << 20) /* bytes of a per band kernel of the expert */
#define CONV2D_FULL_MASK 0xffffffffu
#define CONV2D_ROWS (CONV2D_BAND + 2)    /* the rows of a a band's column holds */

static_assert(CONV2D_MAX_N / CONV2D_BAND <= 65535, "the band kernel's bands are its grid's y");
static_assert(CONV2D_MULTIPLE % CONV2D_BAND == 0 && CONV2D_MULTIPLE % 32 == 0,
              "n: whole bands, and whole warps across a row");
static_assert(RIO_IO_THREADS % 32 == 0 && CONV2D_THREADS % 32 == 0, "whole warps over columns");

/*
 * Rows [y0, y0 + CONV2D_BAND) of b, column x: band points at row y0 of a,
 * dst at row y0 of b (rows n floats apart); above and below are row y0 - 1
 * and row y0 + CONV2D_BAND of a (any row of a where there is none: the
 * border of b does not use them).
 * Every lane of the warp calls, converged, on 32 consecutive columns
 * x < n with the same pointers (shuffles).  The loads all come first, so
 * they are in flight together.
 */
__device__ __forceinline__ void conv2d_band_column(const float *above, const float *band, const float *below,
                                                   float *dst, uint64_t n, uint64_t y0, uint64_t x)
{
  const unsigned lane = threadIdx.x % 32;
  /* the warp's edge lanes have no lane beside them: they load the column
   * (at the image's edge their own; b's border column ignores it) */
  const int edge_lane = lane == 0 || lane == 31;
  const uint64_t side = lane == 0 ? (x ? x - 1 : x) : (x + 1 < n ? x + 1 : x);
  float m[CONV2D_ROWS], edge[CONV2D_ROWS];
  m[0] = above[x];
  edge[0] = edge_lane ? above[side] : 0.0f;
#pragma unroll
  for (int r = 0; r < (int)CONV2D_BAND; r++) {
    m[r + 1] = band[r * n + x];
    edge[r + 1] = edge_lane ? band[r * n + side] : 0.0f;
  }
  m[CONV2D_ROWS - 1] = below[x];
  edge[CONV2D_ROWS - 1] = edge_lane ? below[side] : 0.0f;
  float w[CONV2D_ROWS], e[CONV2D_ROWS];
#pragma unroll
  for (int r = 0; r < (int)CONV2D_ROWS; r++) {
    w[r] = __shfl_up_sync(CONV2D_FULL_MASK, m[r], 1);
    e[r] = __shfl_down_sync(CONV2D_FULL_MASK, m[r], 1);
    if (lane == 0)
      w[r] = edge[r];
    if (lane == 31)
      e[r] = edge[r];
  }
  const int border_col = x == 0 || x == n - 1;
#pragma unroll
  for (int r = 0; r < (int)CONV2D_BAND; r++) {
    const uint64_t y = y0 + r;
    dst[r * n + x] = border_col || y == 0 || y == n - 1
                         ? 0.0f
                         : conv2d_point(w[r], w[r + 1], w[r + 2], m[r], m[r + 1], m[r + 2], e[r], e[r + 1], e[r + 2]);
  }
}

/* Bands [band0, band0 + gridDim.y) of a -> b; blockIdx.x picks
 * CONV2D_THREADS columns.  Warps wholly past n (n is a multiple of 32)
 * leave; no block synchronization. */
__global__ void __launch_bounds__(CONV2D_THREADS) conv2d_band_kernel(const float *a, float *b, uint64_t n, uint64_t band0)
{
  const uint64_t y0 = (band0 + blockIdx.y) * CONV2D_BAND;
  const uint64_t x = (uint64_t)blockIdx.x * CONV2D_THREADS + threadIdx.x;
  if (x >= n)
    return;
  const float *above = a + (y0 ? y0 - 1 : 0) * n;
  const float *below = a + (y0 + CONV2D_BAND < n ? y0 + CONV2D_BAND : n - 1) * n;
  conv2d_band_column(above, a + y0 * n, below, b + y0 * n, n, y0, x);
}

/*
 * gpufs: read bands [band0, band1) of the image into a and convolve them
 * into b (a and b hold rows from band0's first on).  Block k owns bands
 * band0 + [k per_block, (k + 1) per_block); it greads the row above its range, then
 * step after step of step_bands bands the step's rows of a up to the row
 * below the step (when that row is still the block's, else the row below
 * its range), and convolves the step at once.  halo: 2 rows per block, for
 * the row above and the row below its range.
 * Every thread of every block runs it (block-level gopen/gread/gclose);
 * the first error goes to *err.
 */
__global__ void __launch_bounds__(RIO_IO_THREADS, 1)
    conv2d_fused_kernel(const char *path, float *a, float *b, float *halo, uint64_t n, uint64_t band0,
                        uint64_t band1, uint64_t per_block, uint64_t step_bands, int *err)
{
  const uint64_t row = n * sizeof(float), base = band0 * CONV2D_BAND; /* the row a[0] and b[0] hold */
  const uint64_t b0 = band0 + blockIdx.x * per_block;
  const uint64_t b1 = b0 + per_block < band1 ? b0 + per_block : band1;
  if (b0 >= b1)
    return;
  const uint64_t r0 = b0 * CONV2D_BAND, r1 = b1 * CONV2D_BAND;
  float *halo_above = halo + 2 * n * blockIdx.x, *halo_below = halo_above + n;
  const int fd = gopen(path, GPUFS_O_RDONLY);
  int rc = fd < 0 ? fd : 0;
  /* the row above first: the reads then run on from it in file order */
  if (!rc && r0 > 0)
    rc = rio_gread_range(fd, (r0 - 1) * row, row, halo_above, RIO_GREAD_CALL);
  uint64_t next = r0; /* the next row of a to read */
  for (uint64_t s0 = r0; s0 < r1 && !rc; s0 += step_bands * CONV2D_BAND) {
    const uint64_t s1 = s0 + step_bands * CONV2D_BAND < r1 ? s0 + step_bands * CONV2D_BAND : r1;
    const uint64_t upto = s1 < r1 ? s1 + 1 : r1;
    rc = rio_gread_range(fd, next * row, (upto - next) * row, a + (next - base) * n, RIO_GREAD_CALL);
    next = upto;
    if (!rc && s1 == r1 && r1 < n)
      rc = rio_gread_range(fd, r1 * row, row, halo_below, RIO_GREAD_CALL);
    if (rc)
      break; /* rc is the block's: every thread leaves */
    /* gread returned: its bytes are visible to the whole block */
    for (uint64_t y0 = s0; y0 < s1; y0 += CONV2D_BAND) {
      const uint64_t y1 = y0 + CONV2D_BAND;
      /* at the image's edge a row the block has read stands in (unused) */
      const float *above = y0 == 0 ? a : y0 == r0 ? halo_above : a + (y0 - 1 - base) * n;
      const float *below = y1 == n ? a + (n - 1 - base) * n : y1 == r1 ? halo_below : a + (y1 - base) * n;
      /* warps wholly past n skip the call (n is a multiple of 32) */
      for (uint64_t x = threadIdx.x; x < n; x += RIO_IO_THREADS)
        conv2d_band_column(above, a + (y0 - base) * n, below, b + (y0 - base) * n, n, y0, x);
    }
  }
  if (fd >= 0) {
    const int c = gclose(fd);
    rc = rc ? rc : c;
  }
  if (threadIdx.x == 0)
    rio_dev_error(err, rc);
}

/* Rows [y0, y1) of b (multiples of CONV2D_BAND), queued on s. */
static void conv2d_rows(const float *a, float *b, uint64_t n, uint64_t y0, uint64_t y1, cudaStream_t s)
{
  const dim3 grid((unsigned)((n + CONV2D_THREADS - 1) / CONV2D_THREADS), (unsigned)((y1 - y0) / CONV2D_BAND));
  conv2d_band_kernel<<<grid, CONV2D_THREADS, 0, s>>>(a, b, n, y0 / CONV2D_BAND);
}

/* The expert: each slice of rows as soon as the chunks holding it and the
 * row below it are on the GPU. */
static int conv2d_expert(struct rio_run *run, struct rio_expert *job, const float *a, float *b, cudaStream_t s)
{
  const struct conv2d_state *st = (const struct conv2d_state *)run->state;
  const uint64_t n = st->n, row = n * sizeof(float);
  uint64_t rows = CONV2D_EXPERT_STEP / row / CONV2D_BAND * CONV2D_BAND;
  int rc = 0;
  if (rows < CONV2D_BAND)
    rows = CONV2D_BAND;
  for (uint64_t y0 = 0, y1; y0 < n && !rc; y0 = y1) {
    y1 = y0 + rows < n ? y0 + rows : n;
    rc = rio_expert_wait(job, (y1 < n ? y1 + 1 : n) * row, s);
    if (!rc) {
      conv2d_rows(a, b, n, y0, y1, s);
      rc = RIO_CUDA(run, cudaGetLastError());
    }
  }
  return rc;
}

int conv2d_run(struct rio_run *run, enum rio_version v)
{
  const struct conv2d_state *s = (const struct conv2d_state *)run->state;
  return conv2d_run_rows(run, v, 0, s->n, s->out);
}

int conv2d_run_rows(struct rio_run *run, enum rio_version v, uint64_t y0, uint64_t y1, float *host_b)
{
  const struct conv2d_state *s = (const struct conv2d_state *)run->state;
  const uint64_t n = s->n, row = n * sizeof(float), bytes = (y1 - y0) * row, nbands = (y1 - y0) / CONV2D_BAND;
  const int gpufs = rio_is_gpufs(v);
  /* gpufs: each block a contiguous range of the bands, read and
   * convolved in steps of about CONV2D_GPUFS_STEP bytes */
  uint64_t blocks;
  const uint64_t per_block = rio_io_split(nbands, &blocks);
  const uint64_t step_bands = CONV2D_GPUFS_STEP / (CONV2D_BAND * row) ? CONV2D_GPUFS_STEP / (CONV2D_BAND * row) : 1;
  float *a, *b, *halo = NULL;
  struct rio_timed t;
  int rc;

  if (y0 >= y1 || y1 > n || y0 % CONV2D_BAND || y1 % CONV2D_BAND)
    return rio_fail(run, -EINVAL, "2dconv: rows [%llu, %llu): not whole bands of the %llu rows",
                    (unsigned long long)y0, (unsigned long long)y1, (unsigned long long)n);
  if ((y0 > 0 || y1 < n) && !gpufs)
    return rio_fail(run, -EINVAL, "2dconv: %s loads the whole image: a part only in the gpufs versions",
                    rio_version_name(v));
  rc = rio_timed_init(&t, run, v, RIO_READS_FUSED);
  if (rc || (rc = rio_timed_alloc(&t, (void **)&a, bytes)) != 0 ||
      (rc = rio_timed_alloc(&t, (void **)&b, bytes)) != 0 ||
      (gpufs && (rc = rio_timed_alloc(&t, (void **)&halo, 2 * row * blocks)) != 0) ||
      (rc = rio_timed_begin(&t, host_b, bytes)) != 0)
    return rio_timed_end(&t, rc);

  if (v == RIO_CPU_IO) {
    if ((rc = rio_timed_load(&t, 0, a)) != 0)
      return rio_timed_end(&t, rc);
    conv2d_rows(a, b, n, 0, n, t.stream);
  } else if (v == RIO_EXPERT) {
    struct rio_expert *job;
    if ((rc = rio_timed_expert(&t, 0, a, &job)) != 0 || (rc = conv2d_expert(run, job, a, b, t.stream)) != 0)
      return rio_timed_end(&t, rc);
  } else {
    conv2d_fused_kernel<<<(unsigned)blocks, RIO_IO_THREADS, 0, t.stream>>>(
        rio_gpufs_path(run, 0), a, b, halo, n, y0 / CONV2D_BAND, y1 / CONV2D_BAND, per_block, step_bands, t.err);
  }
  return rio_timed_end(&t, rio_timed_result(&t, b, "2dconv: reading the image"));
}

extern "C" const struct rio_bench rio_bench_conv2d = {
    "2dconv",
    "PolyBench 2DCONV, a 3x3 convolution of a 16384^2 float image (1 GiB in, 1 GiB out)",
    conv2d_setup,
    conv2d_generate,
    conv2d_reference,
    conv2d_run,
    conv2d_verify,
    conv2d_teardown};
