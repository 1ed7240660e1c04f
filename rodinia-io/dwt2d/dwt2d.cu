/*
 * dwt2d.cu - dwt2d's GPU side: the row and column lifting kernels, the
 * gpufs kernel that reads the picture and does the whole first level in
 * one pass, and the four versions.
 *
 * A level is two passes over the m x m square, each memory bound:
 *   rows     one block a row: segments of 4 blockDim.x samples (+ the 2
 *            each side the lifting reaches) go to shared memory in groups
 *            of 4, de-interleaved from the pixels at level 1, then one
 *            thread two adjacent pairs (s[i], d[i]) computes them from
 *            seven samples; out of the row pass into `tmp`.
 *   columns  one thread four adjacent columns (8 bytes a row) over a band
 *            of DWT2D_BAND rows: it loads rows y0 - 2 .. y1 first, then
 *            lifts down the band; from `tmp` back into `out`.
 * Levels 2 and 3 take the low-low quadrant of `out` in place.
 *
 * The first level's band of rows [y0, y1) needs only the pixel rows
 * y0 - 2 .. y1 (the column lifting reaches 2 rows up and 1 down), so it
 * overlaps the reading:
 *   gpufs   dwt2d_fused_kernel: each block owns a contiguous range of
 *           bands and, band after band, greads the pixel rows it lacks (the
 *           file in order, so libgpufs's readahead follows it), lifts them
 *           as rows into a ring of DWT2D_RING rows in scratch, and lifts
 *           the band's columns from the ring into `out`, while other blocks
 *           are still reading.  Only the 2 rows above its range are read by
 *           two blocks.
 *   expert  the loader's threads copy 1 MiB chunks; the row pass of each
 *           DWT2D_EXPERT_STEP bytes of rows, and the column pass of the rows
 *           that completes, are queued behind rio_expert_wait.
 *   cpu-io  loads the file, then computes (io_s is the load).
 */
#include "rodinia-io/dwt2d/dwt2d.h"

#include <errno.h>
#include <string.h>

#include "rodinia-io/harness/rio_cuda.h"
#include "rodinia-io/harness/rio_device.cuh"

#define DWT2D_BAND 16ull                 /* rows of a column-pass thread; n / DWT2D_BAND bands */
#define DWT2D_RING (DWT2D_BAND + 3)      /* row-lifted rows a fused block holds: y0 - 2 .. y1 */
#define DWT2D_ROW_THREADS 256
#define DWT2D_COL_THREADS 128
#define DWT2D_ROW_PAIRS 2                /* adjacent pairs a thread lifts per row segment */
#define DWT2D_SEG (2 * DWT2D_ROW_PAIRS * RIO_IO_THREADS + 12) /* samples of a row segment, blocks up to 512 */
#define DWT2D_EXPERT_STEP (32ull << 20)  /* pixel bytes per row-pass kernel of the expert */

static_assert(DWT2D_ALIGN % DWT2D_BAND == 0 && DWT2D_BAND % 2 == 0, "whole bands of row pairs");
static_assert(DWT2D_ROW_THREADS <= RIO_IO_THREADS, "row segments fit DWT2D_SEG");
static_assert(DWT2D_MAX_N * DWT2D_COMPS < (1ull << 31), "a row's bytes and a band's columns fit an int");

/*
 * Pairs i and i + 1 (i even) of a row of m samples held in seg from
 * sample `base` on, with sample 2i - 2 at an index 2 past a multiple of 4:
 * d[i - 1], d[i], d[i + 1] from samples 2i - 2 .. 2i + 4 (two 16-byte
 * loads and one more; mirrored at the row's ends, which only the first
 * and the last pairs reach), then s[i], s[i + 1]; the lows to out[i ..],
 * the highs to out[m/2 + i ..], 4 bytes each.  Per thread; no
 * synchronization.
 */
__device__ __forceinline__ void dwt2d_lift_two(const int32_t *seg, int base, int16_t *out, int m, int i)
{
  int32_t x[7];
  if (i > 0 && 2 * i + 4 < m) {
    const int j = 2 * i - 2 - base;
    const int4 lo = *(const int4 *)&seg[j - 2], hi = *(const int4 *)&seg[j + 2];
    x[0] = lo.z, x[1] = lo.w, x[2] = hi.x, x[3] = hi.y, x[4] = hi.z, x[5] = hi.w, x[6] = seg[j + 6];
  } else {
#pragma unroll
    for (int k = 0; k < 7; k++)
      x[k] = seg[(int)dwt2d_reflect(2 * i - 2 + k, (uint64_t)m) - base];
  }
  const int32_t dl = dwt2d_predict(x[0], x[1], x[2]);
  const int32_t d0 = dwt2d_predict(x[2], x[3], x[4]);
  const int32_t d1 = dwt2d_predict(x[4], x[5], x[6]);
  *(short2 *)(out + i) = make_short2((short)dwt2d_update(x[2], dl, d0), (short)dwt2d_update(x[4], d0, d1));
  *(short2 *)(out + m / 2 + i) = make_short2((short)d0, (short)d1);
}

/*
 * The row lifting of one row of m samples (m a multiple of 4): of pixels
 * px (3 bytes each, level-shifted, the three components to out + c
 * comp_stride) when px is not NULL, else of the int16 samples `in` (to
 * out); px and in 8-byte aligned, out 4-byte aligned.  seg: the kernel's
 * shared storage, rows 16-byte aligned.  In segments of DWT2D_ROW_PAIRS
 * blockDim.x pairs: first the samples the segment reaches come in, a
 * thread a group of 4 (12 bytes of pixels, de-interleaved, or 8 bytes of
 * samples) stored as one 16-byte word a component; then each thread lifts
 * two adjacent pairs.
 * Every thread of the block calls with equal arguments; synchronizes the
 * block (it returns after a barrier: its stores are then visible to the
 * whole block).
 */
__device__ void dwt2d_row(const uint8_t *px, const int16_t *in, int16_t *out, uint64_t comp_stride, int m,
                          int32_t (*seg)[DWT2D_SEG])
{
  const int pairs = m / 2, per = DWT2D_ROW_PAIRS * (int)blockDim.x;
  for (int a = 0; a < pairs; a += per) {
    const int cnt = pairs - a < per ? pairs - a : per;
    /* seg[c][k] = sample base + k: base is the group of 4 of the first
     * sample the segment reaches (2a - 2; a is even, so that sample is at
     * index 2, as dwt2d_lift_two wants); the groups up to the one of the
     * last (2a + 2 cnt) are there, as far as the row goes */
    const int base = (2 * a - 2) & ~3;
    const int g0 = (base > 0 ? base : 0) / 4;
    const int g1 = (2 * (a + cnt) + 4) / 4 < m / 4 ? (2 * (a + cnt) + 4) / 4 : m / 4;
    for (int g = g0 + (int)threadIdx.x; g < g1; g += blockDim.x) {
      if (px) {
        const uint32_t *w = (const uint32_t *)(px + 12 * (uint64_t)g);
        const uint32_t u[3] = {w[0], w[1], w[2]};
        int32_t b[12];
#pragma unroll
        for (int k = 0; k < 12; k++)
          b[k] = (int32_t)((u[k / 4] >> (8 * (k % 4))) & 0xff) - DWT2D_SHIFT;
#pragma unroll
        for (int c = 0; c < DWT2D_COMPS; c++)
          *(int4 *)&seg[c][4 * g - base] = make_int4(b[c], b[3 + c], b[6 + c], b[9 + c]);
      } else {
        const uint2 u = *(const uint2 *)(in + 4 * (uint64_t)g);
        *(int4 *)&seg[0][4 * g - base] = make_int4((int16_t)(u.x & 0xffff), (int16_t)(u.x >> 16),
                                                   (int16_t)(u.y & 0xffff), (int16_t)(u.y >> 16));
      }
    }
    __syncthreads();
    for (int c = 0; c < (px ? DWT2D_COMPS : 1); c++)
      if (2 * (int)threadIdx.x < cnt)
        dwt2d_lift_two(seg[c], base, out + c * comp_stride, m, a + 2 * (int)threadIdx.x);
    __syncthreads();
  }
}

/* Where the column pass finds row y of component c: plain rows, or a ring
 * of `ring` rows (row y in slot y mod ring). */
struct dwt2d_rows {
  const int16_t *base;
  uint64_t comp_stride, row_stride;
  uint32_t ring;
};

/* Columns x .. x + 3 of (mirrored) row y of an m-row square, as loaded. */
__device__ __forceinline__ short4 dwt2d_load4(const struct dwt2d_rows *r, int c, int64_t y, uint64_t m, uint64_t x)
{
  const uint64_t ry = dwt2d_reflect(y, m);
  const uint64_t slot = r->ring ? (uint32_t)ry % r->ring : ry;
  return *(const short4 *)(r->base + c * r->comp_stride + slot * r->row_stride + x);
}

__device__ __forceinline__ int32_t dwt2d_lane(short4 v, int k)
{
  return k == 0 ? v.x : k == 1 ? v.y : k == 2 ? v.z : v.w;
}

/*
 * The column lifting of columns x .. x + 3 (x a multiple of 4) of
 * component c over the rows [y0, y1) (even, at most DWT2D_BAND) of an
 * m-row square: lows to rows y/2, highs to rows m/2 + y/2 of dst (rows n
 * apart).  Reads source rows y0 - 2 .. y1, 8 bytes a row, all before the
 * first store.  Per thread; no synchronization.
 */
__device__ __forceinline__ void dwt2d_column_quad(const struct dwt2d_rows *src, int c, uint64_t x, uint64_t m,
                                                  uint64_t y0, uint64_t y1, int16_t *dst, uint64_t n)
{
  const int rows = (int)(y1 - y0);
  short4 v[DWT2D_BAND + 3]; /* rows y0 - 2 + j */
#pragma unroll
  for (int j = 0; j < (int)DWT2D_BAND + 3; j++)
    if (j <= rows + 2)
      v[j] = dwt2d_load4(src, c, (int64_t)y0 - 2 + j, m, x);
  int32_t dl[4];
#pragma unroll
  for (int k = 0; k < 4; k++)
    dl[k] = dwt2d_predict(dwt2d_lane(v[0], k), dwt2d_lane(v[1], k), dwt2d_lane(v[2], k));
#pragma unroll
  for (int p = 0; p < (int)DWT2D_BAND / 2; p++) {
    if (2 * p >= rows)
      break;
    int32_t s[4], d[4];
#pragma unroll
    for (int k = 0; k < 4; k++) {
      const int32_t e = dwt2d_lane(v[2 * p + 2], k);
      d[k] = dwt2d_predict(e, dwt2d_lane(v[2 * p + 3], k), dwt2d_lane(v[2 * p + 4], k));
      s[k] = dwt2d_update(e, dl[k], d[k]);
      dl[k] = d[k];
    }
    const uint64_t h = y0 / 2 + p;
    *(short4 *)(dst + h * n + x) = make_short4((short)s[0], (short)s[1], (short)s[2], (short)s[3]);
    *(short4 *)(dst + (m / 2 + h) * n + x) = make_short4((short)d[0], (short)d[1], (short)d[2], (short)d[3]);
  }
}

/* The row pass of rows [y0, y0 + gridDim.x) of the m x m square: of the
 * pixels rgb (all components; gridDim.y 1) into tmp, or of component
 * blockIdx.y of `in` into tmp.  Planes are n x n, rows n apart. */
__global__ void __launch_bounds__(DWT2D_ROW_THREADS)
    dwt2d_rows_kernel(const uint8_t *rgb, const int16_t *in, int16_t *tmp, uint64_t n, uint64_t m, uint64_t y0)
{
  __shared__ __align__(16) int32_t seg[DWT2D_COMPS][DWT2D_SEG];
  const uint64_t y = y0 + blockIdx.x, plane = (uint64_t)blockIdx.y * n * n;
  if (rgb)
    dwt2d_row(rgb + y * 3 * n, NULL, tmp + y * n, n * n, (int)m, seg);
  else
    dwt2d_row(NULL, in + plane + y * n, tmp + plane + y * n, 0, (int)m, seg);
}

/* The column pass of rows [y0, y1) of the m x m square, tmp -> out:
 * blockIdx.x picks column quads, blockIdx.y a band, blockIdx.z the
 * component. */
__global__ void __launch_bounds__(DWT2D_COL_THREADS)
    dwt2d_cols_kernel(const int16_t *tmp, int16_t *out, uint64_t n, uint64_t m, uint64_t y0, uint64_t y1)
{
  const uint64_t x = 4 * ((uint64_t)blockIdx.x * DWT2D_COL_THREADS + threadIdx.x);
  const uint64_t a = y0 + (uint64_t)blockIdx.y * DWT2D_BAND;
  const uint64_t b = a + DWT2D_BAND < y1 ? a + DWT2D_BAND : y1;
  const struct dwt2d_rows src = {tmp, n * n, n, 0};
  if (x < m)
    dwt2d_column_quad(&src, (int)blockIdx.z, x, m, a, b, out + blockIdx.z * n * n, n);
}

/*
 * gpufs: the picture and the whole first level, into out.  Block b owns
 * bands [b per_block, (b + 1) per_block); for each band [y0, y1) it greads
 * the pixel rows up to y1 it has not read (first band: from y0 - 2) into
 * its staging rows, lifts them as rows into its ring, then lifts the
 * band's columns from the ring.  stage: DWT2D_RING pixel rows a block;
 * ring: DWT2D_RING rows of the three components a block.
 * Every thread of every block runs it (block-level gopen/gread/gclose);
 * the first error goes to *err.
 */
__global__ void __launch_bounds__(RIO_IO_THREADS, 1)
    dwt2d_fused_kernel(const char *path, uint8_t *stage, int16_t *ring, int16_t *out, uint64_t n,
                       uint64_t per_block, int *err)
{
  __shared__ __align__(16) int32_t seg[DWT2D_COMPS][DWT2D_SEG];
  const uint64_t nbands = n / DWT2D_BAND, row = 3 * n, quads = n / 4;
  const uint64_t b0 = blockIdx.x * per_block;
  const uint64_t b1 = b0 + per_block < nbands ? b0 + per_block : nbands;
  if (b0 >= b1)
    return;
  uint8_t *st = stage + blockIdx.x * DWT2D_RING * row;
  int16_t *rg = ring + blockIdx.x * DWT2D_RING * row;
  const struct dwt2d_rows src = {rg, n, row, (uint32_t)DWT2D_RING};
  const uint64_t r0 = b0 * DWT2D_BAND;
  const int fd = gopen(path, GPUFS_O_RDONLY);
  int rc = fd < 0 ? fd : 0;
  uint64_t next = r0 >= 2 ? r0 - 2 : 0; /* the next pixel row to read: the file is read in order */
  for (uint64_t b = b0; b < b1 && !rc; b++) {
    const uint64_t y0 = b * DWT2D_BAND, y1 = y0 + DWT2D_BAND;
    const uint64_t last = y1 < n ? y1 : n - 1; /* row n mirrors row n - 2 */
    /* gread synchronizes the block: the previous band's column pass is
     * done before the rows below overwrite staging and ring slots */
    rc = rio_gread_range(fd, next * row, (last + 1 - next) * row, st, RIO_GREAD_CALL);
    if (rc)
      break; /* rc is the block's: every thread leaves */
    for (uint64_t y = next; y <= last; y++)
      dwt2d_row(st + (y - next) * row, NULL, rg + y % DWT2D_RING * row, n, (int)n, seg);
    next = last + 1;
    for (uint32_t item = threadIdx.x; item < DWT2D_COMPS * quads; item += RIO_IO_THREADS) {
      const int c = (int)(item / quads);
      dwt2d_column_quad(&src, c, 4 * (item % quads), n, y0, y1, out + c * n * n, n);
    }
  }
  if (fd >= 0) {
    const int c = gclose(fd);
    rc = rc ? rc : c;
  }
  if (threadIdx.x == 0)
    rio_dev_error(err, rc);
}

/* Launches on s: the row pass of rows [y0, y1) of the m-square (of rgb
 * when not NULL, else of out), into tmp; the column pass of rows [y0, y1),
 * tmp -> out. */
static void dwt2d_rows(const uint8_t *rgb, const int16_t *out, int16_t *tmp, uint64_t n, uint64_t m, uint64_t y0,
                       uint64_t y1, cudaStream_t s)
{
  const dim3 grid((unsigned)(y1 - y0), rgb ? 1 : DWT2D_COMPS);
  dwt2d_rows_kernel<<<grid, DWT2D_ROW_THREADS, 0, s>>>(rgb, out, tmp, n, m, y0);
}

static void dwt2d_cols(const int16_t *tmp, int16_t *out, uint64_t n, uint64_t m, uint64_t y0, uint64_t y1,
                       cudaStream_t s)
{
  const dim3 grid((unsigned)((m / 4 + DWT2D_COL_THREADS - 1) / DWT2D_COL_THREADS),
                  (unsigned)((y1 - y0 + DWT2D_BAND - 1) / DWT2D_BAND), DWT2D_COMPS);
  dwt2d_cols_kernel<<<grid, DWT2D_COL_THREADS, 0, s>>>(tmp, out, n, m, y0, y1);
}

/* The expert's first level: each slice of rows' row pass as soon as its
 * chunks are on the GPU, and the column pass of the rows whose sources
 * (two rows further) are then lifted. */
static int dwt2d_expert_first(struct rio_run *run, struct rio_expert *job, const uint8_t *rgb, int16_t *tmp,
                              int16_t *out, cudaStream_t s)
{
  const uint64_t n = ((const struct dwt2d_state *)run->state)->n, row = 3 * n;
  uint64_t rows = DWT2D_EXPERT_STEP / row / DWT2D_BAND * DWT2D_BAND, done = 0;
  int rc = 0;
  if (rows < DWT2D_BAND)
    rows = DWT2D_BAND;
  for (uint64_t y0 = 0, y1; y0 < n && !rc; y0 = y1) {
    y1 = y0 + rows < n ? y0 + rows : n;
    if ((rc = rio_expert_wait(job, y1 * row, s)) != 0)
      break;
    dwt2d_rows(rgb, NULL, tmp, n, n, y0, y1, s);
    const uint64_t upto = y1 < n ? y1 - 2 : n;
    dwt2d_cols(tmp, out, n, n, done, upto, s);
    done = upto;
    rc = RIO_CUDA(run, cudaGetLastError());
  }
  return rc;
}

int dwt2d_run(struct rio_run *run, enum rio_version v)
{
  struct dwt2d_state *s = (struct dwt2d_state *)run->state;
  const uint64_t n = s->n, plane = n * n, bytes = DWT2D_COMPS * plane * sizeof(int16_t);
  const uint64_t nbands = n / DWT2D_BAND;
  const int gpufs = rio_is_gpufs(v);
  uint64_t blocks; /* gpufs: each block a contiguous range of bands */
  const uint64_t per_block = rio_io_split(nbands, &blocks);
  uint8_t *rgb = NULL, *stage = NULL;
  int16_t *tmp, *out, *ring = NULL;
  struct rio_timed t;
  int rc = rio_timed_init(&t, run, v, RIO_READS_FUSED);

  /* gpufs: staging and rings instead of the picture */
  if (gpufs && !rc)
    rc = rio_timed_alloc(&t, (void **)&stage, blocks * DWT2D_RING * 3 * n);
  if (gpufs && !rc)
    rc = rio_timed_alloc(&t, (void **)&ring, blocks * DWT2D_RING * 3 * n * sizeof(int16_t));
  if (!gpufs && !rc)
    rc = rio_timed_alloc(&t, (void **)&rgb, run->in[0].size);
  if (rc != 0 || (rc = rio_timed_alloc(&t, (void **)&tmp, bytes)) != 0 ||
      (rc = rio_timed_alloc(&t, (void **)&out, bytes)) != 0 || (rc = rio_timed_begin(&t, s->out, bytes)) != 0)
    return rio_timed_end(&t, rc);

  /* level 1, overlapped with the reading where the version can */
  if (v == RIO_CPU_IO) {
    if ((rc = rio_timed_load(&t, 0, rgb)) != 0)
      return rio_timed_end(&t, rc);
    dwt2d_rows(rgb, NULL, tmp, n, n, 0, n, t.stream);
    dwt2d_cols(tmp, out, n, n, 0, n, t.stream);
  } else if (v == RIO_EXPERT) {
    struct rio_expert *job;
    if ((rc = rio_timed_expert(&t, 0, rgb, &job)) != 0 ||
        (rc = dwt2d_expert_first(run, job, rgb, tmp, out, t.stream)) != 0)
      return rio_timed_end(&t, rc);
  } else {
    dwt2d_fused_kernel<<<(unsigned)blocks, RIO_IO_THREADS, 0, t.stream>>>(rio_gpufs_path(run, 0), stage, ring, out,
                                                                          n, per_block, t.err);
  }
  /* levels 2..: the low-low quadrant of out, in place */
  for (int l = 1; l < DWT2D_LEVELS; l++) {
    const uint64_t m = n >> l;
    dwt2d_rows(NULL, out, tmp, n, m, 0, m, t.stream);
    dwt2d_cols(tmp, out, n, m, 0, m, t.stream);
  }
  return rio_timed_end(&t, rio_timed_result(&t, out, "dwt2d: reading the picture"));
}

extern "C" const struct rio_bench rio_bench_dwt2d = {
    "dwt2d",
    "2-D 5/3 integer wavelet (JPEG 2000), 3 levels, of a 16384^2 RGB picture (768 MiB)",
    dwt2d_setup,
    dwt2d_generate,
    dwt2d_reference,
    dwt2d_run,
    dwt2d_verify,
    dwt2d_teardown};
