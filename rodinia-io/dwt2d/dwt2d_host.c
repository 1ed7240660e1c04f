/*
 * dwt2d_host.c - dwt2d's host side: sizes, the picture, the CPU transform
 * and the exact check.
 */
#include "rodinia-io/dwt2d/dwt2d.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* columns the CPU lifts together: a cache line of int32 a row */
#define DWT2D_REF_COLS 16ull

uint64_t dwt2d_dim(double scale)
{
  return rio_scaled_side(scale, DWT2D_FULL_N, DWT2D_ALIGN, DWT2D_MIN_N, DWT2D_MAX_N);
}

int dwt2d_setup(struct rio_run *run)
{
  const uint64_t n = dwt2d_dim(run->scale);
  if (!n)
    return rio_fail(run, -EINVAL, "dwt2d: scale %g: must be positive, and the side at most %llu", run->scale,
                    (unsigned long long)DWT2D_MAX_N);
  struct dwt2d_state *s = (struct dwt2d_state *)calloc(1, sizeof(*s));
  if (!s)
    return rio_fail(run, -ENOMEM, "dwt2d: no host memory");
  run->state = s;
  s->n = n;
  /* untouched until a run writes it: costs no memory before */
  s->out = (int16_t *)malloc(DWT2D_COMPS * n * n * sizeof(int16_t));
  if (!s->out)
    return rio_fail(run, -ENOMEM, "dwt2d: no host memory for the %" PRIu64 " x %" PRIu64 " result", n, n);
  run->ninputs = 1;
  snprintf(run->in[0].name, sizeof(run->in[0].name), "rgb");
  run->in[0].size = (3 * n * n + 7) / 8 * 8;
  return 0;
}

struct dwt2d_gen {
  uint64_t seed, n;
  uint8_t *rgb;
};

/* Rows [lo, hi) of the picture: three gradients in different directions,
 * a checkerboard of 32-pixel squares 24 levels apart (edges at every
 * scale of the transform), and noise in [-16, 16) per component. */
static int dwt2d_gen_rows(void *arg, uint64_t lo, uint64_t hi)
{
  const struct dwt2d_gen *g = (const struct dwt2d_gen *)arg;
  const uint64_t n = g->n;
  for (uint64_t y = lo; y < hi; y++)
    for (uint64_t x = 0; x < n; x++) {
      const int u = (int)(x * 256 / n), v = (int)(y * 256 / n);
      const int base[3] = {(3 * u + v) / 4, (u + 3 * v) / 4, 255 - (u + v) / 2};
      const int tile = ((x / 32) ^ (y / 32)) & 1 ? 24 : 0;
      const uint64_t bits = rio_rand(g->seed, 0, y * n + x);
      uint8_t *px = g->rgb + 3 * (y * n + x);
      for (int c = 0; c < 3; c++) {
        const int val = base[c] + tile + (int)((bits >> (8 * c)) & 31) - 16;
        px[c] = (uint8_t)(val < 0 ? 0 : val > 255 ? 255 : val);
      }
    }
  return 0;
}

int dwt2d_generate(struct rio_run *run, int i, void *buf)
{
  const struct dwt2d_state *s = (const struct dwt2d_state *)run->state;
  struct dwt2d_gen g = {run->seed, s->n, (uint8_t *)buf};
  if (i != 0)
    return rio_fail(run, -EINVAL, "dwt2d: no input %d", i);
  memset(g.rgb + 3 * s->n * s->n, 0, run->in[0].size - 3 * s->n * s->n);
  return rio_parallel_for(s->n, dwt2d_gen_rows, &g);
}

/*
 * The 1-D transform of k signals of m samples side by side: sample j of
 * signal q at x[j stride + q] (a row: k = 1, stride 1; k columns: stride
 * the row's).  tmp: m k ints.  In place: low half then high half.
 */
static void dwt2d_lift(int32_t *x, uint64_t m, uint64_t stride, uint64_t k, int32_t *tmp)
{
  const uint64_t h = m / 2;
  for (uint64_t i = 0; i < h; i++) {
    const int32_t *even = x + 2 * i * stride, *odd = even + stride;
    const int32_t *next = x + dwt2d_reflect((int64_t)(2 * i + 2), m) * stride;
    for (uint64_t q = 0; q < k; q++)
      tmp[(h + i) * k + q] = dwt2d_predict(even[q], odd[q], next[q]);
  }
  for (uint64_t i = 0; i < h; i++) {
    const int32_t *even = x + 2 * i * stride;
    const int32_t *dl = tmp + (h + (i ? i - 1 : 0)) * k, *dr = tmp + (h + i) * k;
    for (uint64_t q = 0; q < k; q++)
      tmp[i * k + q] = dwt2d_update(even[q], dl[q], dr[q]);
  }
  for (uint64_t j = 0; j < m; j++)
    memcpy(x + j * stride, tmp + j * k, k * sizeof(int32_t));
}

/* One component through the levels, on rio_parallel_for slices. */
struct dwt2d_ref {
  const uint8_t *rgb;
  int32_t *plane; /* n x n: the component, then its coefficients */
  int16_t *out;   /* the component's n x n of ref */
  uint64_t n, m;
  int c;
};

static int dwt2d_ref_load(void *arg, uint64_t lo, uint64_t hi)
{
  const struct dwt2d_ref *r = (const struct dwt2d_ref *)arg;
  for (uint64_t i = lo * r->n; i < hi * r->n; i++)
    r->plane[i] = (int32_t)r->rgb[3 * i + (uint64_t)r->c] - DWT2D_SHIFT;
  return 0;
}

static int dwt2d_ref_rows(void *arg, uint64_t lo, uint64_t hi)
{
  const struct dwt2d_ref *r = (const struct dwt2d_ref *)arg;
  int32_t *tmp = (int32_t *)malloc(r->m * sizeof(int32_t));
  if (!tmp)
    return -ENOMEM;
  for (uint64_t y = lo; y < hi; y++)
    dwt2d_lift(r->plane + y * r->n, r->m, 1, 1, tmp);
  free(tmp);
  return 0;
}

/* [lo, hi): groups of DWT2D_REF_COLS columns */
static int dwt2d_ref_cols(void *arg, uint64_t lo, uint64_t hi)
{
  const struct dwt2d_ref *r = (const struct dwt2d_ref *)arg;
  int32_t *tmp = (int32_t *)malloc(r->m * DWT2D_REF_COLS * sizeof(int32_t));
  if (!tmp)
    return -ENOMEM;
  for (uint64_t g = lo; g < hi; g++) {
    const uint64_t x = g * DWT2D_REF_COLS;
    const uint64_t k = r->m - x < DWT2D_REF_COLS ? r->m - x : DWT2D_REF_COLS;
    dwt2d_lift(r->plane + x, r->m, r->n, k, tmp);
  }
  free(tmp);
  return 0;
}

static int dwt2d_ref_store(void *arg, uint64_t lo, uint64_t hi)
{
  const struct dwt2d_ref *r = (const struct dwt2d_ref *)arg;
  for (uint64_t i = lo * r->n; i < hi * r->n; i++) {
    if (r->plane[i] < INT16_MIN || r->plane[i] > INT16_MAX)
      return -ERANGE;
    r->out[i] = (int16_t)r->plane[i];
  }
  return 0;
}

int dwt2d_reference(struct rio_run *run)
{
  struct dwt2d_state *s = (struct dwt2d_state *)run->state;
  const uint64_t n = s->n;
  struct dwt2d_ref r = {(const uint8_t *)run->host_in[0], NULL, NULL, n, n, 0};
  int rc = 0;
  if (!s->ref)
    s->ref = (int16_t *)malloc(DWT2D_COMPS * n * n * sizeof(int16_t));
  r.plane = (int32_t *)malloc(n * n * sizeof(int32_t));
  if (!s->ref || !r.plane) {
    free(r.plane);
    return rio_fail(run, -ENOMEM, "dwt2d: no host memory for the reference");
  }
  for (r.c = 0; r.c < DWT2D_COMPS && !rc; r.c++) {
    r.out = s->ref + (uint64_t)r.c * n * n;
    rc = rio_parallel_for(n, dwt2d_ref_load, &r);
    for (int l = 0; l < DWT2D_LEVELS && !rc; l++) {
      r.m = n >> l;
      rc = rio_parallel_for(r.m, dwt2d_ref_rows, &r);
      if (!rc)
        rc = rio_parallel_for((r.m + DWT2D_REF_COLS - 1) / DWT2D_REF_COLS, dwt2d_ref_cols, &r);
    }
    if (!rc)
      rc = rio_parallel_for(n, dwt2d_ref_store, &r);
  }
  free(r.plane);
  if (rc == -ERANGE)
    return rio_fail(run, rc, "dwt2d: a coefficient does not fit in 16 bits");
  if (rc)
    return rio_fail(run, rc, "dwt2d: no host memory for the reference");
  return 0;
}

/* Exact, as rio_check_i32 (which has no 16-bit twin): the first wrong
 * coefficient by component, row and column, and how many differ. */
int dwt2d_verify(struct rio_run *run)
{
  const struct dwt2d_state *s = (const struct dwt2d_state *)run->state;
  const uint64_t n = s->n;
  if (!s->ref)
    return rio_fail(run, -EINVAL, "dwt2d: no reference to verify against");
  for (uint64_t c = 0; c < DWT2D_COMPS; c++) {
    char what[48];
    snprintf(what, sizeof(what), "dwt2d coefficient of component %" PRIu64, c);
    const int rc = rio_check_i16(run, what, s->out + c * n * n, s->ref + c * n * n, n * n, n);
    if (rc)
      return rc;
  }
  return 0;
}

void dwt2d_teardown(struct rio_run *run)
{
  struct dwt2d_state *s = (struct dwt2d_state *)run->state;
  if (!s)
    return;
  free(s->ref);
  free(s->out);
  free(s);
  run->state = NULL;
}
