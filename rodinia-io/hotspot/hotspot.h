/*
 * hotspot.h - Rodinia's hotspot (thermal simulation of a chip) in the
 * rodinia-io suite.
 *
 * The chip is an n x n grid of cells; each step of the explicit scheme
 * moves every cell's temperature by the heat its neighbours, its power
 * and the ambient exchange bring in (hotspot_cell).  Edge cells take
 * themselves as their missing neighbours.  HOTSPOT_ITERS steps.
 *
 * Inputs (raw little-endian float, row-major, n x n):
 *   0 "temp"   initial temperatures, 320 + 20 u kelvin
 *   1 "power"  power dissipated per cell, HOTSPOT_POWER_MAX u watt
 * with u = rio_rand01(seed, i, cell) for input i.
 * n = 16384 sqrt(scale), rounded down to a multiple of HOTSPOT_BAND, at
 * least HOTSPOT_MIN_N: 1 GiB per input at scale 1, 1 MiB at 1/1024.
 *
 * Output: the temperatures after HOTSPOT_ITERS steps, n x n float.
 *
 * The coefficients come from the chip model of the Rodinia paper (a
 * 0.5 mm thick silicon die; hotspot_coeffs), with cells of the size its
 * 1024 x 1024 grid of a 16 mm die has, whatever n is: the die grows with
 * the grid.  With the model's time step (set by the chip, not the grid) a
 * 16 mm die cut into cells of 1/16384 of its side is past the explicit
 * scheme's stability limit (a checkerboard mode would grow by
 * |1 - 4 step/Cap (1/Rx + 1/Ry)|, about 280x a step); with cells of the
 * 1024 grid the factor is 0.09, and every mode decays.  The GPU does the
 * same float operations in the same order as the CPU (hotspot_cell, no
 * fused multiply-adds), so the two agree bit for bit; verify still allows
 * rtol 1e-5, atol 1e-3 kelvin.
 */
#ifndef RIO_HOTSPOT_H
#define RIO_HOTSPOT_H

#include <stdint.h>

#include "rodinia-io/harness/rio.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HOTSPOT_FULL_N 16384ull
#define HOTSPOT_BAND 16ull     /* rows a GPU thread walks; n is a multiple of it */
#define HOTSPOT_MIN_N 64ull
#define HOTSPOT_MAX_N (1ull << 19) /* the step kernel's grid: n / HOTSPOT_BAND bands */
#define HOTSPOT_ITERS 4
#define HOTSPOT_POWER_MAX 1e-3 /* watt per cell */
#define HOTSPOT_RTOL 1e-5
#define HOTSPOT_ATOL 1e-3

/* The constants of one step, as the GPU and the CPU both use them. */
struct hotspot_coeffs {
  float step_div_cap; /* time step / thermal capacitance of a cell */
  float rx_1, ry_1;   /* 1 / lateral resistances (x: east-west, y: north-south) */
  float rz_1;         /* 1 / vertical resistance to the ambient */
  float amb;          /* ambient temperature, kelvin */
};

struct hotspot_state {
  uint64_t n;
  struct hotspot_coeffs k;
  float *ref; /* reference(): the expected temperatures, n x n */
  float *out; /* the last run's result, n x n (setup allocates, run fills) */
};

/* n for a scale (see above); 0 when the scale is not positive or n would
 * pass HOTSPOT_MAX_N. */
uint64_t hotspot_dim(double scale);

/* The model's coefficients (the same for every grid: see above). */
struct hotspot_coeffs hotspot_model(void);

int hotspot_setup(struct rio_run *run);
int hotspot_generate(struct rio_run *run, int i, void *buf);
int hotspot_reference(struct rio_run *run);
/* hotspot.cu: the four versions */
int hotspot_run(struct rio_run *run, enum rio_version v);
int hotspot_verify(struct rio_run *run);
void hotspot_teardown(struct rio_run *run);

extern const struct rio_bench rio_bench_hotspot;

#ifdef __cplusplus
}
#endif

/* ---------------- one cell, shared by the CPU and the GPU ---------------- */

#ifdef __CUDACC__
#define HOTSPOT_HD __host__ __device__ __forceinline__
#else
#define HOTSPOT_HD inline
#endif

/* Float arithmetic rounded after each operation: on the GPU the intrinsics
 * keep nvcc from fusing a multiply and an add, which would round once
 * where the CPU rounds twice. */
static HOTSPOT_HD float hotspot_add(float a, float b)
{
#ifdef __CUDA_ARCH__
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}

static HOTSPOT_HD float hotspot_sub(float a, float b)
{
#ifdef __CUDA_ARCH__
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}

static HOTSPOT_HD float hotspot_mul(float a, float b)
{
#ifdef __CUDA_ARCH__
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

/* The next temperature of a cell at t with neighbours north, south, west,
 * east and power p: t + step/Cap (p + (n + s - 2t)/Ry + (e + w - 2t)/Rx +
 * (amb - t)/Rz), evaluated left to right. */
static HOTSPOT_HD float hotspot_cell(float t, float north, float south, float west, float east, float p,
                                     const struct hotspot_coeffs *k)
{
  const float t2 = hotspot_add(t, t);
  float flow = hotspot_add(p, hotspot_mul(hotspot_sub(hotspot_add(south, north), t2), k->ry_1));
  flow = hotspot_add(flow, hotspot_mul(hotspot_sub(hotspot_add(east, west), t2), k->rx_1));
  flow = hotspot_add(flow, hotspot_mul(hotspot_sub(k->amb, t), k->rz_1));
  return hotspot_add(t, hotspot_mul(k->step_div_cap, flow));
}

#endif /* RIO_HOTSPOT_H */
