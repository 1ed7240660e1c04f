/*
 * conv3d.h - PolyBench-GPU's 3DCONV (a 3 x 3 x 3 convolution of a cube)
 * in the rodinia-io suite, as the benchmark "3dconv" (C names conv3d_*:
 * an identifier cannot start with a digit).
 *
 * a and b are n x n x n floats, a[i][j][k] at (i n + j) n + k: plane i
 * holds n x n floats.  For every interior point (1 <= i, j, k <= n - 2):
 *
 *   b[i][j][k] = c11 a[i-1][j-1][k-1] + c13 a[i+1][j-1][k-1]
 *              + c21 a[i-1][j-1][k-1] + c23 a[i+1][j-1][k-1]
 *              + c31 a[i-1][j-1][k-1] + c33 a[i+1][j-1][k-1]
 *              + c12 a[i  ][j-1][k  ] + c22 a[i  ][j  ][k  ]
 *              + c32 a[i  ][j+1][k  ] + c11 a[i-1][j-1][k+1]
 *              + c13 a[i+1][j-1][k+1] + c21 a[i-1][j  ][k+1]
 *              + c23 a[i+1][j  ][k+1] + c31 a[i-1][j+1][k+1]
 *              + c33 a[i+1][j+1][k+1]
 *
 * the 15 terms of PolyBench's definition, in its order (its first six
 * terms read two cells only: 11 distinct taps), with its coefficients
 * (CONV3D_C*).  The border of b (i, j or k first or last) is 0.
 *
 * Input (raw little-endian float):
 *   0 "a"  the cube, plane after plane, a = rio_rand01(seed, 0, cell)
 * n = 512 cbrt(scale), rounded down to a multiple of CONV3D_ALIGN, at least
 * CONV3D_MIN_N: 512 MiB at scale 1, 432 KiB (n = 48) at 1/1024.
 *
 * Output: b, n x n x n float.  The GPU sums the 15 float terms in order
 * (nvcc may fuse a product into the sum); the reference sums in double.
 * verify uses PolyBench's percent check, |b - ref| <= 0.05% |ref|
 * (rtol 5e-4), plus atol 1e-4 for values near 0: the terms' magnitudes add
 * up to at most 90 (the sum of the 15 |c|, as 0 <= a < 1), so the float
 * sum is off by at most 15 x 2^-24 x 90 = 8.0e-5, whatever its order or
 * fusion, and the reference's rounding to float by 3.8e-6 more.
 */
#ifndef RIO_CONV3D_H
#define RIO_CONV3D_H

#include <stdint.h>

#include "rodinia-io/harness/rio.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CONV3D_FULL_N 512ull
#define CONV3D_ALIGN 16ull
#define CONV3D_MIN_N 16ull
#define CONV3D_MAX_N 1024ull /* scale 8: 4 GiB each for a and b */
#define CONV3D_RTOL 5e-4
#define CONV3D_ATOL 1e-4
/* the cache of the run with a cache smaller than the input */
#define CONV3D_SMALL_CACHE (256ull << 20)

/* PolyBench's coefficients */
#define CONV3D_C11 2.0f
#define CONV3D_C21 5.0f
#define CONV3D_C31 (-8.0f)
#define CONV3D_C12 (-3.0f)
#define CONV3D_C22 6.0f
#define CONV3D_C32 (-9.0f)
#define CONV3D_C13 4.0f
#define CONV3D_C23 7.0f
#define CONV3D_C33 10.0f

struct conv3d_state {
  uint64_t n;
  float *ref; /* reference(): the expected b */
  float *out; /* the last run's b (setup allocates, run fills) */
};

/* n for a scale (see above); 0 when the scale is not a positive number or
 * n would pass CONV3D_MAX_N. */
uint64_t conv3d_side(double scale);

int conv3d_setup(struct rio_run *run);
int conv3d_generate(struct rio_run *run, int i, void *buf);
int conv3d_reference(struct rio_run *run);
/* conv3d.cu: the four versions */
int conv3d_run(struct rio_run *run, enum rio_version v);
int conv3d_verify(struct rio_run *run);
void conv3d_teardown(struct rio_run *run);

extern const struct rio_bench rio_bench_conv3d;

#ifdef __cplusplus
}
#endif

#endif /* RIO_CONV3D_H */
