/*
 * dwt2d.h - Rodinia's dwt2d (2-D discrete wavelet transform) in the
 * rodinia-io suite: the reversible 5/3 integer wavelet of JPEG 2000.
 *
 * Input (raw):
 *   0 "rgb"  n x n pixels, row-major, 3 bytes each (R, G, B interleaved):
 *            a synthetic picture (gradients, a 32-pixel checkerboard and
 *            noise from rio_rand(seed, 0, pixel)), so that every band of
 *            the transform has content; zero bytes pad it to a multiple of 8.
 * n = 16384 sqrt(scale), rounded down to a multiple of DWT2D_ALIGN, at
 * least DWT2D_MIN_N: 768 MiB at scale 1, 768 KiB at 1/1024.
 *
 * The transform, per component (sample = byte - DWT2D_SHIFT, JPEG 2000's
 * level shift): DWT2D_LEVELS levels, each on the top-left m x m square
 * the previous level left as its low-low quadrant (m = n, n/2, n/4): every
 * row, then every column, is lifted in 1-D:
 *   d[i] = x[2i+1] - floor((x[2i] + x[2i+2]) / 2)          (predict)
 *   s[i] = x[2i]   + floor((d[i-1] + d[i] + 2) / 4)        (update)
 * with symmetric extension at the ends (x[-k] = x[k], x[m-1+k] = x[m-1-k],
 * hence d[-1] = d[0]), and stored as s[0..m/2) then d[0..m/2).
 *
 * Output: the coefficients of the three components, component-major,
 * n x n each, int16: one 1-D pass maps samples bounded by B to ones bounded
 * by 2B (|floor((l + r)/2)| <= B, so |d| <= 2B; |floor((dl + dr + 2)/4)|
 * <= B, so |s| <= 2B), a level (two passes) by 4B, so from |sample| <= 128
 * the three levels stay within 512, 2048 and 8192 < 32767.  reference()
 * checks the bound as it narrows.  Integer lifting is exact: verify
 * compares every coefficient exactly.
 */
#ifndef RIO_DWT2D_H
#define RIO_DWT2D_H

#include <stdint.h>

#include "rodinia-io/harness/rio.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DWT2D_FULL_N 16384ull
#define DWT2D_ALIGN 64ull /* n's multiple: the level-3 square stays even, the GPU's bands whole */
#define DWT2D_MIN_N 64ull
#define DWT2D_MAX_N (1ull << 19)
#define DWT2D_LEVELS 3
#define DWT2D_COMPS 3
#define DWT2D_SHIFT 128

struct dwt2d_state {
  uint64_t n;
  int16_t *ref; /* reference(): the expected coefficients, 3 x n x n */
  int16_t *out; /* the last run's, 3 x n x n (setup allocates, run fills) */
};

/* n for a scale (see above); 0 when the scale is not positive or n would
 * pass DWT2D_MAX_N. */
uint64_t dwt2d_dim(double scale);

int dwt2d_setup(struct rio_run *run);
int dwt2d_generate(struct rio_run *run, int i, void *buf);
int dwt2d_reference(struct rio_run *run);
/* dwt2d.cu: the four versions */
int dwt2d_run(struct rio_run *run, enum rio_version v);
int dwt2d_verify(struct rio_run *run);
void dwt2d_teardown(struct rio_run *run);

extern const struct rio_bench rio_bench_dwt2d;

#ifdef __cplusplus
}
#endif

/* ---------------- the lifting steps, shared by the CPU and the GPU ---------------- */

#ifdef __CUDACC__
#define DWT2D_HD __host__ __device__ __forceinline__
#else
#define DWT2D_HD inline
#endif

/* >> of a negative int is an arithmetic shift, the floor of the division,
 * with gcc and nvcc (implementation-defined in C11; both document it). */
static DWT2D_HD int32_t dwt2d_predict(int32_t left, int32_t odd, int32_t right)
{
  return odd - ((left + right) >> 1);
}

static DWT2D_HD int32_t dwt2d_update(int32_t even, int32_t dl, int32_t dr)
{
  return even + ((dl + dr + 2) >> 2);
}

/* Sample index j of a signal of m samples, mirrored at both ends. */
static DWT2D_HD uint64_t dwt2d_reflect(int64_t j, uint64_t m)
{
  return j < 0 ? (uint64_t)-j : (uint64_t)j >= m ? 2 * (m - 1) - (uint64_t)j : (uint64_t)j;
}

#endif /* RIO_DWT2D_H */
