/*
 * stencil.cu - stencil's GPU side: the step kernel, the gpufs kernel that
 * reads the grid and does the first step in one pass, and the four
 * versions.
 *
 * A step is memory bound (one float in and one out per cell; the 6
 * neighbours come from L1 and L2, which hold the few planes the running
 * blocks touch), so one kernel per step, a thread per cell, every cell
 * through stencil_cell.
 *
 * The first step of plane z needs planes z - 1, z and z + 1 only, so it
 * overlaps the reading:
 *   gpufs   stencil_fused_kernel: each block owns a slab of consecutive
 *           planes; it greads them one plane at a time (one call of a
 *           plane's bytes, 1 MiB at scale 1), with the plane just outside
 *           the slab at each end, and computes the first step of a plane
 *           as soon as the plane after it has arrived, while other blocks
 *           are still reading.  Own planes go to their final place in the
 *           grid (the later steps use it); the two outside planes belong
 *           to the neighbours and go to the block's scratch.
 *   expert  the loader's threads copy 1 MiB chunks; a step kernel on each
 *           STENCIL_EXPERT_STEP bytes of planes is queued behind
 *           rio_expert_wait for the chunks it needs (one plane further).
 *   cpu-io  loads the file, then computes (io_s is the load).
 * Steps 2.. are the step kernel over the whole grid in every version.
 */
#include "rodinia-io/stencil/stencil.h"

#include <errno.h>
#include <string.h>

#include "rodinia-io/harness/rio_cuda.h"
#include "rodinia-io/harness/rio_device.cuh"

#define STENCIL_THREADS 256
#define STENCIL_EXPERT_STEP (32ull << 20) /* grid bytes per first-step kernel of the expert */

static_assert(STENCIL_MAX_NZ <= 65535, "the step kernel's planes are its grid's z");
static_assert(STENCIL_FULL_SIDE * STENCIL_FULL_SIDE < (1ull << 32), "a plane's cells are indexed in 32 bits");

/*
 * Cell (x, y) of a plane: mid and dst point at the plane's first cell in
 * the source and the destination, below and above at the planes z - 1 and
 * z + 1 (not read when edge says the plane is the first or the last).
 * Boundary cells are copied.  Any thread; no synchronization.
 */
__device__ __forceinline__ void stencil_cell(const float *below, const float *mid, const float *above, float *dst,
                                             uint32_t nx, uint32_t ny, uint32_t x, uint32_t y, bool edge, float c0,
                                             float c1)
{
  const uint32_t i = y * nx + x;
  if (edge || x == 0 || y == 0 || x + 1 == nx || y + 1 == ny)
    dst[i] = mid[i];
  else
    dst[i] = stencil_point(mid[i], mid[i - 1], mid[i + 1], mid[i - nx], mid[i + nx], below[i], above[i], c0, c1);
}

/* One step of planes [z0, z0 + gridDim.z) of src -> dst; blockIdx.y is
 * the row, blockIdx.x picks STENCIL_THREADS cells of it. */
__global__ void __launch_bounds__(STENCIL_THREADS)
    stencil_step_kernel(const float *src, float *dst, uint32_t nx, uint32_t ny, uint64_t nz, uint64_t z0, float c0,
                        float c1)
{
  const uint64_t z = z0 + blockIdx.z, plane = (uint64_t)nx * ny;
  const uint32_t x = blockIdx.x * STENCIL_THREADS + threadIdx.x;
  if (x >= nx)
    return;
  const bool edge = z == 0 || z + 1 == nz;
  const float *mid = src + z * plane;
  stencil_cell(edge ? mid : mid - plane, mid, edge ? mid : mid + plane, dst + z * plane, nx, ny, x, blockIdx.y, edge,
               c0, c1);
}

/* Where plane q lives for the block owning planes [z0, z1): its place in
 * grid, or the block's scratch (halo: the plane z0 - 1, then the plane z1). */
__device__ __forceinline__ float *stencil_plane_at(float *grid, float *halo, uint64_t plane, uint64_t z0, uint64_t z1,
                                                   uint64_t q)
{
  return q < z0 ? halo : q >= z1 ? halo + plane : grid + q * plane;
}

/*
 * gpufs: read the grid file into grid and do the first step into dst.
 * Block b owns planes [b per_block, (b + 1) per_block).  Even blocks walk
 * their slab upward, odd ones downward, so that two neighbours read the
 * plane they share (one's own, the other's halo) at about the same time,
 * both at their start or both at their end: with a cache smaller than the
 * grid the second read still finds it cached.  Each block reads the plane
 * behind its first, its first, then, plane by plane, the next one and
 * computes the plane before it.  halo: 2 planes per block.
 * Every thread of every block runs it (block-level gopen/gread/gclose);
 * the first error goes to *err.
 */
__global__ void __launch_bounds__(RIO_IO_THREADS, 1)
    stencil_fused_kernel(const char *path, float *grid, float *dst, float *halo, uint32_t nx, uint32_t ny,
                         uint64_t nz, uint64_t per_block, float c0, float c1, int *err)
{
  const uint64_t plane = (uint64_t)nx * ny, pbytes = plane * sizeof(float);
  const uint64_t z0 = blockIdx.x * per_block, z1 = z0 + per_block < nz ? z0 + per_block : nz;
  if (z0 >= z1)
    return;
  halo += 2 * plane * blockIdx.x;
  const int64_t step = blockIdx.x % 2 ? -1 : 1;
  const int64_t first = step > 0 ? (int64_t)z0 : (int64_t)z1 - 1, last = step > 0 ? (int64_t)z1 - 1 : (int64_t)z0;
  const int fd = gopen(path, GPUFS_O_RDONLY);
  int rc = fd < 0 ? fd : 0;
  const int64_t behind = first - step;
  if (!rc && behind >= 0 && behind < (int64_t)nz)
    rc = rio_gread_range(fd, (uint64_t)behind * pbytes, pbytes,
                         stencil_plane_at(grid, halo, plane, z0, z1, (uint64_t)behind), RIO_GREAD_CALL);
  if (!rc)
    rc = rio_gread_range(fd, (uint64_t)first * pbytes, pbytes,
                         stencil_plane_at(grid, halo, plane, z0, z1, (uint64_t)first), RIO_GREAD_CALL);
  for (int64_t z = first; !rc; z += step) {
    const int64_t ahead = z + step;
    if (ahead >= 0 && ahead < (int64_t)nz &&
        (rc = rio_gread_range(fd, (uint64_t)ahead * pbytes, pbytes,
                              stencil_plane_at(grid, halo, plane, z0, z1, (uint64_t)ahead), RIO_GREAD_CALL)) != 0)
      break; /* rc is the block's: every thread leaves */
    /* gread returned: its bytes are visible to the whole block */
    const uint64_t zu = (uint64_t)z;
    const bool edge = zu == 0 || zu + 1 == nz;
    const float *mid = stencil_plane_at(grid, halo, plane, z0, z1, zu);
    const float *below = edge ? mid : stencil_plane_at(grid, halo, plane, z0, z1, zu - 1);
    const float *above = edge ? mid : stencil_plane_at(grid, halo, plane, z0, z1, zu + 1);
    for (uint32_t c = threadIdx.x; c < plane; c += RIO_IO_THREADS) {
      const uint32_t y = c / nx;
      stencil_cell(below, mid, above, dst + zu * plane, nx, ny, c - y * nx, y, edge, c0, c1);
    }
    if (z == last)
      break;
  }
  if (fd >= 0) {
    const int c = gclose(fd);
    rc = rc ? rc : c;
  }
  if (threadIdx.x == 0)
    rio_dev_error(err, rc);
}

/* One step of planes [z0, z1), queued on st. */
static void stencil_step(const float *src, float *dst, const struct stencil_state *s, uint64_t z0, uint64_t z1,
                         cudaStream_t st)
{
  const dim3 grid((unsigned)((s->nx + STENCIL_THREADS - 1) / STENCIL_THREADS), (unsigned)s->ny, (unsigned)(z1 - z0));
  stencil_step_kernel<<<grid, STENCIL_THREADS, 0, st>>>(src, dst, (uint32_t)s->nx, (uint32_t)s->ny, s->nz, z0, s->c0,
                                                        s->c1);
}

/* The expert's first step: each slab of planes as soon as its chunks (and
 * the plane after it) are on the GPU. */
static int stencil_expert_first(struct rio_run *run, struct rio_expert *job, const float *grid, float *dst,
                                cudaStream_t st)
{
  const struct stencil_state *s = (const struct stencil_state *)run->state;
  const uint64_t pbytes = s->nx * s->ny * sizeof(float);
  const uint64_t planes = STENCIL_EXPERT_STEP / pbytes ? STENCIL_EXPERT_STEP / pbytes : 1;
  int rc = 0;
  for (uint64_t z0 = 0, z1; z0 < s->nz && !rc; z0 = z1) {
    z1 = z0 + planes < s->nz ? z0 + planes : s->nz;
    rc = rio_expert_wait(job, (z1 < s->nz ? z1 + 1 : s->nz) * pbytes, st);
    if (!rc) {
      stencil_step(grid, dst, s, z0, z1, st);
      rc = RIO_CUDA(run, cudaGetLastError());
    }
  }
  return rc;
}

int stencil_run(struct rio_run *run, enum rio_version v)
{
  struct stencil_state *s = (struct stencil_state *)run->state;
  const uint64_t plane = s->nx * s->ny, bytes = plane * s->nz * sizeof(float);
  uint64_t blocks; /* gpufs: each block a slab of consecutive planes */
  const uint64_t per_block = rio_io_split(s->nz, &blocks);
  float *grid, *other, *halo = NULL, *src, *dst;
  struct rio_timed t;
  int rc = rio_timed_init(&t, run, v, RIO_READS_FUSED);

  if (rc || (rc = rio_timed_alloc(&t, (void **)&grid, bytes)) != 0 ||
      (rc = rio_timed_alloc(&t, (void **)&other, bytes)) != 0 ||
      (rio_is_gpufs(v) && (rc = rio_timed_alloc(&t, (void **)&halo, 2 * plane * blocks * sizeof(float))) != 0) ||
      (rc = rio_timed_begin(&t, s->out, bytes)) != 0)
    return rio_timed_end(&t, rc);

  /* step 1: grid -> other, overlapped with the reading where the version can */
  if (v == RIO_CPU_IO) {
    if ((rc = rio_timed_load(&t, 0, grid)) != 0)
      return rio_timed_end(&t, rc);
    stencil_step(grid, other, s, 0, s->nz, t.stream);
  } else if (v == RIO_EXPERT) {
    struct rio_expert *job;
    if ((rc = rio_timed_expert(&t, 0, grid, &job)) != 0 ||
        (rc = stencil_expert_first(run, job, grid, other, t.stream)) != 0)
      return rio_timed_end(&t, rc);
  } else {
    stencil_fused_kernel<<<(unsigned)blocks, RIO_IO_THREADS, 0, t.stream>>>(
        rio_gpufs_path(run, 0), grid, other, halo, (uint32_t)s->nx, (uint32_t)s->ny, s->nz, per_block, s->c0, s->c1,
        t.err);
  }
  /* steps 2..: ping-pong between other and grid (step 1 needs grid no more) */
  src = other;
  dst = grid;
  for (int it = 1; it < STENCIL_ITERS; it++) {
    stencil_step(src, dst, s, 0, s->nz, t.stream);
    float *tmp = src;
    src = dst;
    dst = tmp;
  }
  return rio_timed_end(&t, rio_timed_result(&t, src, "stencil: reading the grid"));
}

extern "C" const struct rio_bench rio_bench_stencil = {
    "stencil",
    "Parboil 7-point Jacobi, 4 steps of a 512 x 512 x 1024 float grid (1 GiB)",
    stencil_setup,
    stencil_generate,
    stencil_reference,
    stencil_run,
    stencil_verify,
    stencil_teardown};
