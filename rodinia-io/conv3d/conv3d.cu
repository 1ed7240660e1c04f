/*
 * conv3d.cu - 3dconv's GPU side: the convolution kernel, the gpufs kernel
 * that reads the cube and convolves it in one pass, and the four versions.
 *
 * The convolution is memory bound (one float in and one out per point; the
 * taps come from L1 and L2, which hold the few planes the running blocks
 * touch): a thread per point, every point through conv3d_cell.
 *
 * Plane i of b needs planes i - 1, i and i + 1 of a only, so it overlaps
 * the reading:
 *   gpufs   conv3d_fused_kernel: each block owns a slab of consecutive
 *           planes; it greads them one plane at a time (one call of a
 *           plane's bytes, 1 MiB at scale 1), with the plane just outside
 *           the slab at each end, and convolves a plane as soon as the
 *           plane after it has arrived, while other blocks are still
 *           reading.  Own planes go to their place in a, the two outside
 *           planes (the neighbours') to the block's scratch.  A gread pins
 *           at most one round of 32 pages at a time, so a cache smaller
 *           than the input (the study's 256 MiB) works: a ring's groups
 *           need no more frames at once than it holds.
 *   expert  the loader's threads copy 1 MiB chunks; a convolution kernel
 *           on each CONV3D_EXPERT_STEP bytes of planes is queued behind
 *           rio_expert_wait for the chunks it needs (one plane further).
 *   cpu-io  loads the file, then convolves (io_s is the load).
 */
#include "rodinia-io/conv3d/conv3d.h"

#include <errno.h>
#include <string.h>

#include "rodinia-io/harness/rio_cuda.h"
#include "rodinia-io/harness/rio_device.cuh"

#define CONV3D_THREADS 256
#define CONV3D_EXPERT_STEP (32ull << 20) /* bytes of a per convolution kernel of the expert */

static_assert(CONV3D_MAX_N <= 65535, "the kernel's planes and rows are its grid's z and y");
static_assert(CONV3D_MAX_N * CONV3D_MAX_N < (1ull << 32), "a plane's points are indexed in 32 bits");

/*
 * Point (j, k) of plane i of b: mid and dst point at the plane's first
 * point in a and b, lo and hi at the planes i - 1 and i + 1 of a (not read
 * when edge says the plane is the first or the last).  The 15 terms in
 * PolyBench's order (conv3d.h); border points are 0.  Any thread; no
 * synchronization.
 */
__device__ __forceinline__ void conv3d_cell(const float *lo, const float *mid, const float *hi, float *dst,
                                            uint32_t n, uint32_t j, uint32_t k, bool edge)
{
  const uint32_t c = j * n + k;
  if (edge || j == 0 || k == 0 || j + 1 == n || k + 1 == n) {
    dst[c] = 0.0f;
    return;
  }
  const uint32_t mm = c - n - 1, mp = c - n + 1; /* [j-1][k-1], [j-1][k+1] */
  const float lmm = lo[mm], hmm = hi[mm];
  float t = CONV3D_C11 * lmm;
  t += CONV3D_C13 * hmm;
  t += CONV3D_C21 * lmm;
  t += CONV3D_C23 * hmm;
  t += CONV3D_C31 * lmm;
  t += CONV3D_C33 * hmm;
  t += CONV3D_C12 * mid[c - n];
  t += CONV3D_C22 * mid[c];
  t += CONV3D_C32 * mid[c + n];
  t += CONV3D_C11 * lo[mp];
  t += CONV3D_C13 * hi[mp];
  t += CONV3D_C21 * lo[c + 1];
  t += CONV3D_C23 * hi[c + 1];
  t += CONV3D_C31 * lo[c + n + 1];
  t += CONV3D_C33 * hi[c + n + 1];
  dst[c] = t;
}

/* Planes [i0, i0 + gridDim.z) of a -> b; blockIdx.y is the row j,
 * blockIdx.x picks CONV3D_THREADS points of it. */
__global__ void __launch_bounds__(CONV3D_THREADS)
    conv3d_kernel(const float *a, float *b, uint32_t n, uint64_t i0)
{
  const uint64_t i = i0 + blockIdx.z, plane = (uint64_t)n * n;
  const uint32_t k = blockIdx.x * CONV3D_THREADS + threadIdx.x;
  if (k >= n)
    return;
  const bool edge = i == 0 || i + 1 == n;
  const float *mid = a + i * plane;
  conv3d_cell(edge ? mid : mid - plane, mid, edge ? mid : mid + plane, b + i * plane, n, blockIdx.y, k, edge);
}

/* Where plane q lives for the block owning planes [i0, i1): its place in
 * a, or the block's scratch (halo: the plane i0 - 1, then the plane i1). */
__device__ __forceinline__ float *conv3d_plane_at(float *a, float *halo, uint64_t plane, uint64_t i0, uint64_t i1,
                                                  uint64_t q)
{
  return q < i0 ? halo : q >= i1 ? halo + plane : a + q * plane;
}

/*
 * gpufs: read the file into a and convolve it into b.  Block x owns planes
 * [x per_block, (x + 1) per_block).  Even blocks walk their slab upward,
 * odd ones downward, so that two neighbours read the plane they share (one's
 * own, the other's halo) at about the same time, both at their start or
 * both at their end: with a cache smaller than the input the second read
 * still finds it cached.  Each block reads the plane behind its first, its
 * first, then, plane by plane, the next one and convolves the plane before
 * it.  halo: 2 planes per block.
 * Every thread of every block runs it (block-level gopen/gread/gclose);
 * the first error goes to *err.
 */
__global__ void __launch_bounds__(RIO_IO_THREADS, 1)
    conv3d_fused_kernel(const char *path, float *a, float *b, float *halo, uint32_t n, uint64_t per_block, int *err)
{
  const uint64_t plane = (uint64_t)n * n, pbytes = plane * sizeof(float);
  const uint64_t i0 = blockIdx.x * per_block, i1 = i0 + per_block < n ? i0 + per_block : n;
  if (i0 >= i1)
    return;
  halo += 2 * plane * blockIdx.x;
  const int64_t step = blockIdx.x % 2 ? -1 : 1;
  const int64_t first = step > 0 ? (int64_t)i0 : (int64_t)i1 - 1, last = step > 0 ? (int64_t)i1 - 1 : (int64_t)i0;
  const int fd = gopen(path, GPUFS_O_RDONLY);
  int rc = fd < 0 ? fd : 0;
  const int64_t behind = first - step;
  if (!rc && behind >= 0 && behind < (int64_t)n)
    rc = rio_gread_range(fd, (uint64_t)behind * pbytes, pbytes, conv3d_plane_at(a, halo, plane, i0, i1, (uint64_t)behind),
                         RIO_GREAD_CALL);
  if (!rc)
    rc = rio_gread_range(fd, (uint64_t)first * pbytes, pbytes, conv3d_plane_at(a, halo, plane, i0, i1, (uint64_t)first),
                         RIO_GREAD_CALL);
  for (int64_t i = first; !rc; i += step) {
    const int64_t ahead = i + step;
    if (ahead >= 0 && ahead < (int64_t)n &&
        (rc = rio_gread_range(fd, (uint64_t)ahead * pbytes, pbytes,
                              conv3d_plane_at(a, halo, plane, i0, i1, (uint64_t)ahead), RIO_GREAD_CALL)) != 0)
      break; /* rc is the block's: every thread leaves */
    /* gread returned: its bytes are visible to the whole block */
    const uint64_t iu = (uint64_t)i;
    const bool edge = iu == 0 || iu + 1 == n;
    const float *mid = conv3d_plane_at(a, halo, plane, i0, i1, iu);
    const float *lo = edge ? mid : conv3d_plane_at(a, halo, plane, i0, i1, iu - 1);
    const float *hi = edge ? mid : conv3d_plane_at(a, halo, plane, i0, i1, iu + 1);
    for (uint32_t c = threadIdx.x; c < plane; c += RIO_IO_THREADS) {
      const uint32_t j = c / n;
      conv3d_cell(lo, mid, hi, b + iu * plane, n, j, c - j * n, edge);
    }
    if (i == last)
      break;
  }
  if (fd >= 0) {
    const int c = gclose(fd);
    rc = rc ? rc : c;
  }
  if (threadIdx.x == 0)
    rio_dev_error(err, rc);
}

/* Planes [i0, i1) of b, queued on st. */
static void conv3d_planes(const float *a, float *b, uint64_t n, uint64_t i0, uint64_t i1, cudaStream_t st)
{
  const dim3 grid((unsigned)((n + CONV3D_THREADS - 1) / CONV3D_THREADS), (unsigned)n, (unsigned)(i1 - i0));
  conv3d_kernel<<<grid, CONV3D_THREADS, 0, st>>>(a, b, (uint32_t)n, i0);
}

/* The expert: each slab of planes as soon as its chunks (and the plane
 * after it) are on the GPU. */
static int conv3d_expert(struct rio_run *run, struct rio_expert *job, const float *a, float *b, cudaStream_t st)
{
  const uint64_t n = ((const struct conv3d_state *)run->state)->n, pbytes = n * n * sizeof(float);
  const uint64_t planes = CONV3D_EXPERT_STEP / pbytes ? CONV3D_EXPERT_STEP / pbytes : 1;
  int rc = 0;
  for (uint64_t i0 = 0, i1; i0 < n && !rc; i0 = i1) {
    i1 = i0 + planes < n ? i0 + planes : n;
    rc = rio_expert_wait(job, (i1 < n ? i1 + 1 : n) * pbytes, st);
    if (!rc) {
      conv3d_planes(a, b, n, i0, i1, st);
      rc = RIO_CUDA(run, cudaGetLastError());
    }
  }
  return rc;
}

int conv3d_run(struct rio_run *run, enum rio_version v)
{
  struct conv3d_state *s = (struct conv3d_state *)run->state;
  const uint64_t n = s->n, plane = n * n, bytes = plane * n * sizeof(float);
  uint64_t blocks; /* gpufs: each block a slab of consecutive planes */
  const uint64_t per_block = rio_io_split(n, &blocks);
  float *a, *b, *halo = NULL;
  struct rio_timed t;
  int rc = rio_timed_init(&t, run, v, RIO_READS_FUSED);

  if (rc || (rc = rio_timed_alloc(&t, (void **)&a, bytes)) != 0 ||
      (rc = rio_timed_alloc(&t, (void **)&b, bytes)) != 0 ||
      (rio_is_gpufs(v) && (rc = rio_timed_alloc(&t, (void **)&halo, 2 * plane * blocks * sizeof(float))) != 0) ||
      (rc = rio_timed_begin(&t, s->out, bytes)) != 0)
    return rio_timed_end(&t, rc);

  if (v == RIO_CPU_IO) {
    if ((rc = rio_timed_load(&t, 0, a)) != 0)
      return rio_timed_end(&t, rc);
    conv3d_planes(a, b, n, 0, n, t.stream);
  } else if (v == RIO_EXPERT) {
    struct rio_expert *job;
    if ((rc = rio_timed_expert(&t, 0, a, &job)) != 0 || (rc = conv3d_expert(run, job, a, b, t.stream)) != 0)
      return rio_timed_end(&t, rc);
  } else {
    conv3d_fused_kernel<<<(unsigned)blocks, RIO_IO_THREADS, 0, t.stream>>>(rio_gpufs_path(run, 0), a, b, halo,
                                                                           (uint32_t)n, per_block, t.err);
  }
  return rio_timed_end(&t, rio_timed_result(&t, b, "3dconv: reading a"));
}

extern "C" const struct rio_bench rio_bench_conv3d = {
    "3dconv",
    "PolyBench 3x3x3 convolution of a 512^3 float cube (512 MiB)",
    conv3d_setup,
    conv3d_generate,
    conv3d_reference,
    conv3d_run,
    conv3d_verify,
    conv3d_teardown,
    CONV3D_SMALL_CACHE};
