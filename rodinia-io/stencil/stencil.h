/*
 * stencil.h - Parboil's stencil (a 7-point 3-D Jacobi sweep) in the
 * rodinia-io suite.
 *
 * The grid is nx x ny x nz floats, x fastest, then y, then z (plane z holds
 * nx * ny floats).  A step maps every interior cell to
 *   out = c0 in + c1 (the sum of its 6 face neighbours)
 * with Parboil's constants c0 = 1/6, c1 = 1/6/6 (in float, as Parboil
 * computes them).  Parboil's own kernel subtracts the centre term
 * (c1 sum - c0 in); this port adds it, as the suite's issue defines the
 * benchmark.  Boundary cells (x, y or z first or last) are copied
 * unchanged, Parboil's convention: they keep the input's values.
 * STENCIL_ITERS steps, ping-pong between two grids.
 *
 * Input (raw little-endian float):
 *   0 "grid"  the grid, plane after plane, cell = rio_rand01(seed, 0, cell)
 *
 * Sizes: 512 x 512 x 1024 at scale 1 (1 GiB).  nz = 1024 scale planes
 * (rounded down) of 512 x 512 while that is at least STENCIL_MIN_NZ; below,
 * nz = STENCIL_MIN_NZ and the planes shrink instead: the side is the largest
 * multiple of 32 whose square times STENCIL_MIN_NZ stays within the bytes
 * of the scale, at least 32.  So the bytes follow the scale down to 32 KiB:
 * 800 KiB (160 x 160 x 8) at 1/1024.
 *
 * Output: the grid after STENCIL_ITERS steps, float.  The GPU does the
 * CPU's float operations in the same order (stencil_point, no fused
 * multiply-adds), so the two agree bit for bit; verify still allows
 * rtol 1e-5 (every term is positive, so even another order of the 7
 * operations would stay within 4 steps x 7 roundings x 2^-24 = 1.7e-6
 * relative) and atol 1e-7 (values are >= 0 and about 0.006 after 4 steps).
 */
#ifndef RIO_STENCIL_H
#define RIO_STENCIL_H

#include <stdint.h>

#include "rodinia-io/harness/rio.h"

#ifdef __cplusplus
extern "C" {
#endif

#define STENCIL_FULL_SIDE 512ull  /* nx = ny at scale 1 */
#define STENCIL_FULL_NZ 1024ull
#define STENCIL_MIN_NZ 8ull
#define STENCIL_SIDE_MULTIPLE 32ull
#define STENCIL_MIN_SIDE 32ull
#define STENCIL_MAX_NZ 8192ull    /* scale 8, 8 GiB: two grids on the GPU */
#define STENCIL_ITERS 4
#define STENCIL_RTOL 1e-5
#define STENCIL_ATOL 1e-7

struct stencil_state {
  uint64_t nx, ny, nz;
  float c0, c1;
  float *ref; /* reference(): the expected grid */
  float *out; /* the last run's grid (setup allocates, run fills) */
};

/* The grid's dimensions for a scale (see above): 0, or -EINVAL when the
 * scale is not a positive number or nz would pass STENCIL_MAX_NZ. */
int stencil_dims(double scale, uint64_t *nx, uint64_t *ny, uint64_t *nz);

int stencil_setup(struct rio_run *run);
int stencil_generate(struct rio_run *run, int i, void *buf);
int stencil_reference(struct rio_run *run);
/* stencil.cu: the four versions */
int stencil_run(struct rio_run *run, enum rio_version v);
int stencil_verify(struct rio_run *run);
void stencil_teardown(struct rio_run *run);

extern const struct rio_bench rio_bench_stencil;

#ifdef __cplusplus
}
#endif

/* ---------------- one cell, shared by the CPU and the GPU ---------------- */

#ifdef __CUDACC__
#define STENCIL_HD __host__ __device__ __forceinline__
#else
#define STENCIL_HD inline
#endif

/* Float arithmetic rounded after each operation: on the GPU the intrinsics
 * keep nvcc from fusing a multiply and an add, which would round once
 * where the CPU rounds twice. */
static STENCIL_HD float stencil_add(float a, float b)
{
#ifdef __CUDA_ARCH__
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}

static STENCIL_HD float stencil_mul(float a, float b)
{
#ifdef __CUDA_ARCH__
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

/* The next value of an interior cell c with neighbours x-1, x+1, y-1, y+1,
 * z-1, z+1: c0 c + c1 s, s summed in Parboil's order (z+1, z-1, y+1, y-1,
 * x+1, x-1), left to right. */
static STENCIL_HD float stencil_point(float c, float xm, float xp, float ym, float yp, float zm, float zp, float c0,
                                      float c1)
{
  float s = stencil_add(zp, zm);
  s = stencil_add(s, yp);
  s = stencil_add(s, ym);
  s = stencil_add(s, xp);
  s = stencil_add(s, xm);
  return stencil_add(stencil_mul(c0, c), stencil_mul(c1, s));
}

#endif /* RIO_STENCIL_H */
