/*
 * conv2d.h - PolyBench-GPU's 2DCONV (a 3x3 convolution of a float image)
 * in the rodinia-io suite, named "2dconv".
 *
 * Input (raw little-endian float, row-major, n x n):
 *   0 "a"   the image, u = (rio_rand(seed, 0, i) >> 40) / 2^24 for element
 *           i: 24 random bits, so exactly a float in [0, 1)
 * n = 16384 sqrt(scale), rounded down to a multiple of CONV2D_MULTIPLE, at
 * least CONV2D_MIN_N: 1 GiB at scale 1, 1 MiB at 1/1024.
 *
 * Output b, n x n float: for interior points
 *   b[i][j] = c11 a[i-1][j-1] + c12 a[i][j-1] + c13 a[i+1][j-1]
 *           + c21 a[i-1][j]   + c22 a[i][j]   + c23 a[i+1][j]
 *           + c31 a[i-1][j+1] + c32 a[i][j+1] + c33 a[i+1][j+1]
 * with PolyBench's coefficients (CONV2D_C11 ...); the border of b (rows and
 * columns 0 and n - 1) is 0.
 *
 * The GPU does the same float operations in the same order as the CPU
 * (conv2d_point: nine products summed left to right, no fused
 * multiply-adds), so the two agree bit for bit.  verify still allows
 * CONV2D_ATOL + CONV2D_RTOL |b|: every partial sum is below 4.5 in
 * magnitude (the coefficients' absolute values add up to 4.5, a < 1), so
 * one rounding moves it by at most 2^-22 (2.4e-7); 5e-6 covers a
 * rounding in each of the 17 operations (4.1e-6) should a compiler fuse
 * or reorder them on either side.  That is tighter than PolyBench's own
 * check (0.05 percent) wherever |b| > 0.01, and unlike it does not fail
 * on the b near 0 that cancellation produces, where no relative bound
 * holds.
 */
#ifndef RIO_CONV2D_H
#define RIO_CONV2D_H

#include <stdint.h>

#include "rodinia-io/harness/rio.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CONV2D_FULL_N 16384ull
#define CONV2D_BAND 16ull          /* rows a GPU thread walks */
#define CONV2D_MULTIPLE 32ull      /* n: whole bands, and whole warps across a row */
#define CONV2D_MIN_N 64ull
#define CONV2D_MAX_N (1ull << 19)  /* the kernel's grid: n / CONV2D_BAND bands in y */
#define CONV2D_RTOL 1e-6
#define CONV2D_ATOL 5e-6

/* PolyBench's coefficients: cXY weighs a[i + Y - 2][j + X - 2]. */
#define CONV2D_C11 (+0.2f)
#define CONV2D_C21 (+0.5f)
#define CONV2D_C31 (-0.8f)
#define CONV2D_C12 (-0.3f)
#define CONV2D_C22 (+0.6f)
#define CONV2D_C32 (-0.9f)
#define CONV2D_C13 (+0.4f)
#define CONV2D_C23 (+0.7f)
#define CONV2D_C33 (+0.10f)

struct conv2d_state {
  uint64_t n;
  float *ref; /* reference(): the expected b, n x n */
  float *out; /* the last run's b, n x n (setup allocates, run fills) */
};

/* n for a scale (see above); 0 when the scale is not positive or n would
 * pass CONV2D_MAX_N. */
uint64_t conv2d_dim(double scale);

int conv2d_setup(struct rio_run *run);
int conv2d_generate(struct rio_run *run, int i, void *buf);
int conv2d_reference(struct rio_run *run);
/* Rows [y0, y1) of b from a on the host's threads, as the reference
 * computes them (conv2d_reference is conv2d_cpu_rows(a, 0, ref, 0, n, n)):
 * a holds the image's rows from row a_first on (every row y0 - 1 .. y1
 * that exists), b receives row y0 at b[0].  0 or -errno. */
int conv2d_cpu_rows(const float *a, uint64_t a_first, float *b, uint64_t y0, uint64_t y1, uint64_t n);
/* conv2d.cu: the four versions.  conv2d_run is conv2d_run_rows(run, v, 0,
 * n, the state's out). */
int conv2d_run(struct rio_run *run, enum rio_version v);
/* Rows [y0, y1) of b (whole bands: multiples of CONV2D_BAND) by version v
 * into host_b (row y0 at host_b[0]; (y1 - y0) n floats), with
 * device buffers of those rows only.  A part of the image only in the
 * gpufs versions (-EINVAL in the others, which load the whole file): they
 * read rows y0 - 1 .. y1 of the file and nothing else. */
int conv2d_run_rows(struct rio_run *run, enum rio_version v, uint64_t y0, uint64_t y1, float *host_b);
int conv2d_verify(struct rio_run *run);
void conv2d_teardown(struct rio_run *run);

extern const struct rio_bench rio_bench_conv2d;

#ifdef __cplusplus
}
#endif

/* ---------------- one point, shared by the CPU and the GPU ---------------- */

#ifdef __CUDACC__
#define CONV2D_HD __host__ __device__ __forceinline__
#else
#define CONV2D_HD inline
#endif

/* c a + s, rounded after the product and after the sum: on the GPU the
 * intrinsics keep nvcc from fusing them, which would round once where the
 * CPU rounds twice. */
static CONV2D_HD float conv2d_term(float s, float c, float a)
{
#ifdef __CUDA_ARCH__
  return __fadd_rn(s, __fmul_rn(c, a));
#else
  return s + c * a;
#endif
}

/* b of one interior point from its 3x3 window: w (column j - 1), m
 * (column j) and e (column j + 1), each at rows i - 1, i, i + 1; the terms
 * summed in the order of the formula above. */
static CONV2D_HD float conv2d_point(float w0, float w1, float w2, float m0, float m1, float m2, float e0, float e1,
                                    float e2)
{
#ifdef __CUDA_ARCH__
  float s = __fmul_rn(CONV2D_C11, w0);
#else
  float s = CONV2D_C11 * w0;
#endif
  s = conv2d_term(s, CONV2D_C12, w1);
  s = conv2d_term(s, CONV2D_C13, w2);
  s = conv2d_term(s, CONV2D_C21, m0);
  s = conv2d_term(s, CONV2D_C22, m1);
  s = conv2d_term(s, CONV2D_C23, m2);
  s = conv2d_term(s, CONV2D_C31, e0);
  s = conv2d_term(s, CONV2D_C32, e1);
  return conv2d_term(s, CONV2D_C33, e2);
}

#endif /* RIO_CONV2D_H */
