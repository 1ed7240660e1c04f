/*
 * hotspot.cu - hotspot's GPU side: the step kernel, the gpufs kernel that
 * reads the inputs and does the first step in one pass, and the four
 * versions.
 *
 * A step is memory bound (two floats in, one out, per cell), so one kernel
 * per step: each thread takes a column of a band of HOTSPOT_BAND rows into
 * registers (all its loads in flight at once), so that north, centre and
 * south are there, and takes west and east from its neighbouring lanes; a
 * warp reads and writes 32 consecutive floats per row (91% of the H100's
 * memory bandwidth at n = 16384).
 *
 * The first step needs only rows y0 - 1 .. y1 of temp and rows y0 .. y1 - 1
 * of power to compute rows [y0, y1), so it overlaps the reading:
 *   gpufs   hotspot_fused_kernel: each block owns a contiguous range of
 *           bands and, band after band, greads the band's rows of both
 *           files (their final place in the device arrays, which the later
 *           steps use) and computes its first step at once, while other
 *           blocks are still reading.  The block reads each file in order,
 *           so libgpufs's readahead follows it; the two rows just outside
 *           its range belong to its neighbours and go to scratch instead.
 *   expert  the loader's threads copy 1 MiB chunks; a step kernel on each
 *           HOTSPOT_EXPERT_STEP bytes of rows is queued behind
 *           rio_expert_wait for the chunks it needs.
 *   cpu-io  loads both files, then computes (io_s is the load).
 * Steps 2.. are the step kernel over the whole grid in every version.
 */
#include "rodinia-io/hotspot/hotspot.h"

#include <errno.h>
#include <string.h>

#include "rodinia-io/harness/rio_cuda.h"
#include "rodinia-io/harness/rio_device.cuh"

#define HOTSPOT_THREADS 256
#define HOTSPOT_EXPERT_STEP (32ull << 20) /* temp bytes per first-step kernel of the expert */
#define HOTSPOT_FULL_MASK 0xffffffffu

static_assert(HOTSPOT_MAX_N / HOTSPOT_BAND <= 65535, "the step kernel's bands are its grid's y");
static_assert(RIO_IO_THREADS % 32 == 0 && HOTSPOT_THREADS % 32 == 0, "whole warps over columns");

/*
 * One step of column x of a band of HOTSPOT_BAND rows: band points at the
 * band's first row of the source, power and dst at the same row of theirs
 * (rows n floats apart); above and below are the rows just outside the
 * band (at the grid's edge, the band's own first or last row: edge cells
 * are their own missing neighbours).
 * Every lane of the warp calls, converged, on 32 consecutive columns with
 * the same pointers (shuffles); a lane past the grid (x >= n) works on
 * column n - 1, which makes it its left neighbour's east, and stores
 * nothing.  The loads all come first, so they are in flight together.
 */
__device__ __forceinline__ void hotspot_band_column(const float *above, const float *band, const float *below,
                                                    const float *power, float *dst, uint64_t n, uint64_t x,
                                                    const struct hotspot_coeffs *k)
{
  const unsigned lane = threadIdx.x % 32;
  const uint64_t c = x < n ? x : n - 1;
  /* the warp's edge lanes have no lane beside them: they load the column */
  const uint64_t side = lane == 0 ? (c ? c - 1 : c) : (c + 1 < n ? c + 1 : c);
  float t[HOTSPOT_BAND], p[HOTSPOT_BAND], edge[HOTSPOT_BAND];
#pragma unroll
  for (int r = 0; r < (int)HOTSPOT_BAND; r++) {
    t[r] = band[r * n + c];
    p[r] = power[r * n + c];
    edge[r] = lane == 0 || lane == 31 ? band[r * n + side] : 0.0f;
  }
  float north = above[c];
  const float last_south = below[c];
#pragma unroll
  for (int r = 0; r < (int)HOTSPOT_BAND; r++) {
    const float south = r + 1 < (int)HOTSPOT_BAND ? t[r + 1] : last_south;
    float west = __shfl_up_sync(HOTSPOT_FULL_MASK, t[r], 1);
    float east = __shfl_down_sync(HOTSPOT_FULL_MASK, t[r], 1);
    if (lane == 0)
      west = edge[r];
    if (lane == 31)
      east = edge[r];
    const float next = hotspot_cell(t[r], north, south, west, east, p[r], k);
    if (x < n)
      dst[r * n + x] = next;
    north = t[r];
  }
}

/* One step of bands [band0, band0 + gridDim.y) of src -> dst; blockIdx.x
 * picks HOTSPOT_THREADS columns. */
__global__ void __launch_bounds__(HOTSPOT_THREADS)
    hotspot_step_kernel(const float *src, const float *power, float *dst, uint64_t n, uint64_t band0,
                        struct hotspot_coeffs k)
{
  const uint64_t y0 = (band0 + blockIdx.y) * HOTSPOT_BAND;
  const uint64_t x = (uint64_t)blockIdx.x * HOTSPOT_THREADS + threadIdx.x;
  const float *above = src + (y0 ? y0 - 1 : 0) * n;
  const float *below = src + (y0 + HOTSPOT_BAND < n ? y0 + HOTSPOT_BAND : n - 1) * n;
  hotspot_band_column(above, src + y0 * n, below, power + y0 * n, dst + y0 * n, n, x, &k);
}

/*
 * gpufs: read both inputs into temp and power and do the first step into
 * dst.  Block b owns bands [b per_block, (b + 1) per_block); for each it
 * greads the band's temp rows up to the row below the band (when that row
 * is still the block's), the band's power rows, then computes the band.
 * halo: 2 rows per block, for the row above and the row below its range.
 * Every thread of every block runs it (block-level gopen/gread/gclose);
 * the first error goes to *err.
 */
__global__ void __launch_bounds__(RIO_IO_THREADS, 1)
    hotspot_fused_kernel(const char *temp_path, const char *power_path, float *temp, float *power, float *dst,
                         float *halo, uint64_t n, uint64_t per_block, struct hotspot_coeffs k, int *err)
{
  const uint64_t nbands = n / HOTSPOT_BAND, row = n * sizeof(float);
  const uint64_t b0 = blockIdx.x * per_block;
  const uint64_t b1 = b0 + per_block < nbands ? b0 + per_block : nbands;
  if (b0 >= b1)
    return;
  const uint64_t r0 = b0 * HOTSPOT_BAND, r1 = b1 * HOTSPOT_BAND;
  float *halo_above = halo + 2 * n * blockIdx.x, *halo_below = halo_above + n;
  const int ft = gopen(temp_path, GPUFS_O_RDONLY);
  const int fp = gopen(power_path, GPUFS_O_RDONLY);
  int rc = ft < 0 ? ft : fp < 0 ? fp : 0;
  if (!rc && r0 > 0)
    rc = rio_gread_range(ft, (r0 - 1) * row, row, halo_above, RIO_GREAD_CALL);
  uint64_t next = r0; /* the next temp row to read: the file is read in order */
  for (uint64_t b = b0; b < b1 && !rc; b++) {
    const uint64_t y0 = b * HOTSPOT_BAND, y1 = y0 + HOTSPOT_BAND;
    const uint64_t upto = y1 < r1 ? y1 + 1 : r1;
    rc = rio_gread_range(ft, next * row, (upto - next) * row, temp + next * n, RIO_GREAD_CALL);
    next = upto;
    if (!rc && y1 == r1 && r1 < n)
      rc = rio_gread_range(ft, r1 * row, row, halo_below, RIO_GREAD_CALL);
    if (!rc)
      rc = rio_gread_range(fp, y0 * row, HOTSPOT_BAND * row, power + y0 * n, RIO_GREAD_CALL);
    if (rc)
      break; /* rc is the block's: every thread leaves */
    /* gread returned: its bytes are visible to the whole block */
    const float *above = y0 == 0 ? temp : y0 == r0 ? halo_above : temp + (y0 - 1) * n;
    const float *below = y1 == n ? temp + (n - 1) * n : y1 == r1 ? halo_below : temp + y1 * n;
    for (uint64_t x0 = 0; x0 < n; x0 += RIO_IO_THREADS)
      hotspot_band_column(above, temp + y0 * n, below, power + y0 * n, dst + y0 * n, n, x0 + threadIdx.x, &k);
  }
  if (ft >= 0) {
    const int c = gclose(ft);
    rc = rc ? rc : c;
  }
  if (fp >= 0) {
    const int c = gclose(fp);
    rc = rc ? rc : c;
  }
  if (threadIdx.x == 0)
    rio_dev_error(err, rc);
}

/* One step of rows [y0, y1) (multiples of HOTSPOT_BAND), queued on s. */
static void hotspot_step(const float *src, const float *power, float *dst, uint64_t n, uint64_t y0, uint64_t y1,
                         const struct hotspot_coeffs *k, cudaStream_t s)
{
  const dim3 grid((unsigned)((n + HOTSPOT_THREADS - 1) / HOTSPOT_THREADS), (unsigned)((y1 - y0) / HOTSPOT_BAND));
  hotspot_step_kernel<<<grid, HOTSPOT_THREADS, 0, s>>>(src, power, dst, n, y0 / HOTSPOT_BAND, *k);
}

/* The expert's first step: each slice of rows as soon as its chunks of
 * both files are on the GPU (temp one row further, for the row below). */
static int hotspot_expert_first(struct rio_run *run, struct rio_expert *jt, struct rio_expert *jp, float *temp,
                                float *power, float *dst, cudaStream_t s)
{
  const struct hotspot_state *st = (const struct hotspot_state *)run->state;
  const uint64_t n = st->n, row = n * sizeof(float);
  uint64_t rows = HOTSPOT_EXPERT_STEP / row / HOTSPOT_BAND * HOTSPOT_BAND;
  int rc = 0;
  if (rows < HOTSPOT_BAND)
    rows = HOTSPOT_BAND;
  for (uint64_t y0 = 0, y1; y0 < n && !rc; y0 = y1) {
    y1 = y0 + rows < n ? y0 + rows : n;
    rc = rio_expert_wait(jt, (y1 < n ? y1 + 1 : n) * row, s);
    if (!rc)
      rc = rio_expert_wait(jp, y1 * row, s);
    if (!rc) {
      hotspot_step(temp, power, dst, n, y0, y1, &st->k, s);
      rc = RIO_CUDA(run, cudaGetLastError());
    }
  }
  return rc;
}

int hotspot_run(struct rio_run *run, enum rio_version v)
{
  struct hotspot_state *s = (struct hotspot_state *)run->state;
  const uint64_t n = s->n, bytes = n * n * sizeof(float), nbands = n / HOTSPOT_BAND;
  uint64_t blocks; /* gpufs: each block a contiguous range of bands */
  const uint64_t per_block = rio_io_split(nbands, &blocks);
  float *temp, *power, *other, *halo = NULL, *src, *dst;
  struct rio_timed t;
  int rc = rio_timed_init(&t, run, v, RIO_READS_FUSED);

  if (rc || (rc = rio_timed_alloc(&t, (void **)&temp, bytes)) != 0 ||
      (rc = rio_timed_alloc(&t, (void **)&power, bytes)) != 0 ||
      (rc = rio_timed_alloc(&t, (void **)&other, bytes)) != 0 ||
      (rio_is_gpufs(v) && (rc = rio_timed_alloc(&t, (void **)&halo, 2 * n * blocks * sizeof(float))) != 0) ||
      (rc = rio_timed_begin(&t, s->out, bytes)) != 0)
    return rio_timed_end(&t, rc);

  /* step 1: temp -> other, overlapped with the reading where the version can */
  if (v == RIO_CPU_IO) {
    if ((rc = rio_timed_load(&t, 0, temp)) != 0 || (rc = rio_timed_load(&t, 1, power)) != 0)
      return rio_timed_end(&t, rc);
    hotspot_step(temp, power, other, n, 0, n, &s->k, t.stream);
  } else if (v == RIO_EXPERT) {
    struct rio_expert *jt, *jp;
    if ((rc = rio_timed_expert(&t, 0, temp, &jt)) != 0 || (rc = rio_timed_expert(&t, 1, power, &jp)) != 0 ||
        (rc = hotspot_expert_first(run, jt, jp, temp, power, other, t.stream)) != 0)
      return rio_timed_end(&t, rc);
  } else {
    hotspot_fused_kernel<<<(unsigned)blocks, RIO_IO_THREADS, 0, t.stream>>>(
        rio_gpufs_path(run, 0), rio_gpufs_path(run, 1), temp, power, other, halo, n, per_block, s->k, t.err);
  }
  /* steps 2..: ping-pong between other and temp (step 1 needs temp no more) */
  src = other;
  dst = temp;
  for (int it = 1; it < HOTSPOT_ITERS; it++) {
    hotspot_step(src, power, dst, n, 0, n, &s->k, t.stream);
    float *tmp = src;
    src = dst;
    dst = tmp;
  }
  return rio_timed_end(&t, rio_timed_result(&t, src, "hotspot: reading the inputs"));
}

extern "C" const struct rio_bench rio_bench_hotspot = {
    "hotspot",
    "thermal simulation, 4 explicit steps of a 16384^2 float grid (temp + power, 1 GiB each)",
    hotspot_setup,
    hotspot_generate,
    hotspot_reference,
    hotspot_run,
    hotspot_verify,
    hotspot_teardown};
