/*
 * hotspot_host.c - hotspot's host side: sizes, the chip model's
 * coefficients, the inputs, the CPU reference and the check.
 */
#include "rodinia-io/hotspot/hotspot.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* The chip of the Rodinia paper's model (SI units). */
#define HOTSPOT_CHIP_SIDE 0.016     /* m: the die is square */
#define HOTSPOT_REF_N 1024.0        /* the grid whose cells every grid keeps (hotspot.h) */
#define HOTSPOT_T_CHIP 0.0005       /* m: its thickness */
#define HOTSPOT_K_SI 100.0          /* W/(m K): silicon's thermal conductivity */
#define HOTSPOT_SPEC_HEAT_SI 1.75e6 /* J/(m^3 K): silicon's volumetric heat capacity */
#define HOTSPOT_FACTOR_CHIP 0.5     /* the share of the capacity the model gives the die */
#define HOTSPOT_AMB_TEMP 80.0       /* K */
#define HOTSPOT_MAX_PD 3.0e6        /* W/m^2: the largest power density (300 W on 1 cm^2) */
#define HOTSPOT_PRECISION 0.001     /* K: the most a cell may move in a step at that density */

uint64_t hotspot_dim(double scale)
{
  return rio_scaled_side(scale, HOTSPOT_FULL_N, HOTSPOT_BAND, HOTSPOT_MIN_N, HOTSPOT_MAX_N);
}

struct hotspot_coeffs hotspot_model(void)
{
  /* cells of the size Rodinia's 1024 x 1024 grid gives the die, whatever
   * n is: the die grows with the grid, so the explicit step stays stable */
  const double gh = HOTSPOT_CHIP_SIDE / HOTSPOT_REF_N, gw = HOTSPOT_CHIP_SIDE / HOTSPOT_REF_N;
  /* a cell's heat capacity, and its thermal resistances to its east-west
   * and north-south neighbours (through the die's cross-section) and down
   * to the ambient (through its thickness) */
  const double cap = HOTSPOT_FACTOR_CHIP * HOTSPOT_SPEC_HEAT_SI * HOTSPOT_T_CHIP * gw * gh;
  const double rx = gw / (2.0 * HOTSPOT_K_SI * HOTSPOT_T_CHIP * gh);
  const double ry = gh / (2.0 * HOTSPOT_K_SI * HOTSPOT_T_CHIP * gw);
  const double rz = HOTSPOT_T_CHIP / (HOTSPOT_K_SI * gh * gw);
  /* the fastest any cell can heat (K/s), and the step that moves it by
   * HOTSPOT_PRECISION at that rate */
  const double max_slope = HOTSPOT_MAX_PD / (HOTSPOT_FACTOR_CHIP * HOTSPOT_T_CHIP * HOTSPOT_SPEC_HEAT_SI);
  const double step = HOTSPOT_PRECISION / max_slope;
  const struct hotspot_coeffs k = {(float)(step / cap), (float)(1.0 / rx), (float)(1.0 / ry),
                                   (float)(1.0 / rz), (float)HOTSPOT_AMB_TEMP};
  return k;
}

int hotspot_setup(struct rio_run *run)
{
  const uint64_t n = hotspot_dim(run->scale);
  if (!n)
    return rio_fail(run, -EINVAL, "hotspot: scale %g: must be positive, and the side at most %llu",
                    run->scale, (unsigned long long)HOTSPOT_MAX_N);
  struct hotspot_state *s = (struct hotspot_state *)calloc(1, sizeof(*s));
  if (!s)
    return rio_fail(run, -ENOMEM, "hotspot: no host memory");
  run->state = s;
  s->n = n;
  s->k = hotspot_model();
  /* untouched until a run writes it: costs no memory before */
  s->out = (float *)malloc(n * n * sizeof(float));
  if (!s->out)
    return rio_fail(run, -ENOMEM, "hotspot: no host memory for the %" PRIu64 " x %" PRIu64 " result", n, n);
  run->ninputs = 2;
  snprintf(run->in[0].name, sizeof(run->in[0].name), "temp");
  snprintf(run->in[1].name, sizeof(run->in[1].name), "power");
  run->in[0].size = n * n * sizeof(float);
  run->in[1].size = n * n * sizeof(float);
  return 0;
}

struct hotspot_gen {
  uint64_t seed;
  int input;
  float *cells;
};

static int hotspot_gen_cells(void *arg, uint64_t lo, uint64_t hi)
{
  const struct hotspot_gen *g = (const struct hotspot_gen *)arg;
  for (uint64_t i = lo; i < hi; i++) {
    const double u = rio_rand01(g->seed, (uint64_t)g->input, i);
    g->cells[i] = g->input == 0 ? (float)(320.0 + 20.0 * u) : (float)(HOTSPOT_POWER_MAX * u);
  }
  return 0;
}

int hotspot_generate(struct rio_run *run, int i, void *buf)
{
  const struct hotspot_state *s = (const struct hotspot_state *)run->state;
  struct hotspot_gen g = {run->seed, i, (float *)buf};
  if (i != 0 && i != 1)
    return rio_fail(run, -EINVAL, "hotspot: no input %d", i);
  return rio_parallel_for(s->n * s->n, hotspot_gen_cells, &g);
}

/* One step of rows [lo, hi): src -> dst. */
struct hotspot_step {
  const float *src, *power;
  float *dst;
  uint64_t n;
  struct hotspot_coeffs k;
};

static int hotspot_step_rows(void *arg, uint64_t lo, uint64_t hi)
{
  const struct hotspot_step *p = (const struct hotspot_step *)arg;
  const uint64_t n = p->n;
  for (uint64_t y = lo; y < hi; y++) {
    const float *row = p->src + y * n;
    const float *up = p->src + (y ? y - 1 : y) * n;
    const float *down = p->src + (y + 1 < n ? y + 1 : y) * n;
    for (uint64_t x = 0; x < n; x++) {
      const float w = row[x ? x - 1 : x], e = row[x + 1 < n ? x + 1 : x];
      p->dst[y * n + x] = hotspot_cell(row[x], up[x], down[x], w, e, p->power[y * n + x], &p->k);
    }
  }
  return 0;
}

int hotspot_reference(struct rio_run *run)
{
  struct hotspot_state *s = (struct hotspot_state *)run->state;
  const uint64_t n = s->n;
  float *other = (float *)malloc(n * n * sizeof(float));
  int rc = 0;
  if (!s->ref)
    s->ref = (float *)malloc(n * n * sizeof(float));
  if (!s->ref || !other) {
    free(other);
    return rio_fail(run, -ENOMEM, "hotspot: no host memory for the reference");
  }
  struct hotspot_step p = {(const float *)run->host_in[0], (const float *)run->host_in[1], NULL, n, s->k};
  for (int it = 0; it < HOTSPOT_ITERS && !rc; it++) {
    /* ping-pong so that the last step lands in ref */
    p.dst = (HOTSPOT_ITERS - 1 - it) % 2 == 0 ? s->ref : other;
    rc = rio_parallel_for(n, hotspot_step_rows, &p);
    p.src = p.dst;
  }
  free(other);
  return rc;
}

int hotspot_verify(struct rio_run *run)
{
  const struct hotspot_state *s = (const struct hotspot_state *)run->state;
  if (!s->ref)
    return rio_fail(run, -EINVAL, "hotspot: no reference to verify against");
  return rio_check_f32(run, "hotspot temperature", s->out, s->ref, s->n * s->n, s->n, HOTSPOT_RTOL,
                       HOTSPOT_ATOL);
}

void hotspot_teardown(struct rio_run *run)
{
  struct hotspot_state *s = (struct hotspot_state *)run->state;
  if (!s)
    return;
  free(s->ref);
  free(s->out);
  free(s);
  run->state = NULL;
}
