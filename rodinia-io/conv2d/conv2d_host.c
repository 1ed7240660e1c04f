/*
 * conv2d_host.c - 2dconv's host side: sizes, the input, the CPU reference
 * and the check.
 */
#include "rodinia-io/conv2d/conv2d.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

uint64_t conv2d_dim(double scale)
{
  return rio_scaled_side(scale, CONV2D_FULL_N, CONV2D_MULTIPLE, CONV2D_MIN_N, CONV2D_MAX_N);
}

int conv2d_setup(struct rio_run *run)
{
  const uint64_t n = conv2d_dim(run->scale);
  if (!n)
    return rio_fail(run, -EINVAL, "2dconv: scale %g: must be positive, and the side at most %llu", run->scale,
                    (unsigned long long)CONV2D_MAX_N);
  struct conv2d_state *s = (struct conv2d_state *)calloc(1, sizeof(*s));
  if (!s)
    return rio_fail(run, -ENOMEM, "2dconv: no host memory");
  run->state = s;
  s->n = n;
  /* untouched until a run writes it: costs no memory before */
  s->out = (float *)malloc(n * n * sizeof(float));
  if (!s->out)
    return rio_fail(run, -ENOMEM, "2dconv: no host memory for the %" PRIu64 " x %" PRIu64 " result", n, n);
  run->ninputs = 1;
  snprintf(run->in[0].name, sizeof(run->in[0].name), "a");
  run->in[0].size = n * n * sizeof(float);
  return 0;
}

struct conv2d_gen {
  uint64_t seed;
  float *a;
};

static int conv2d_gen_cells(void *arg, uint64_t lo, uint64_t hi)
{
  const struct conv2d_gen *g = (const struct conv2d_gen *)arg;
  /* the top 24 bits over 2^24: a float of [0, 1) exactly, where rounding
   * a double of [0, 1) to float could give 1 */
  for (uint64_t i = lo; i < hi; i++)
    g->a[i] = (float)(rio_rand(g->seed, 0, i) >> 40) * (1.0f / 16777216.0f);
  return 0;
}

int conv2d_generate(struct rio_run *run, int i, void *buf)
{
  const struct conv2d_state *s = (const struct conv2d_state *)run->state;
  struct conv2d_gen g = {run->seed, (float *)buf};
  if (i != 0)
    return rio_fail(run, -EINVAL, "2dconv: no input %d", i);
  return rio_parallel_for(s->n * s->n, conv2d_gen_cells, &g);
}

/* Rows y0 + [lo, hi) of b from a; a holds rows from a_first on, b row y0
 * at b[0]. */
struct conv2d_rows {
  const float *a;
  float *b;
  uint64_t n, a_first, y0;
};

static int conv2d_ref_rows(void *arg, uint64_t lo, uint64_t hi)
{
  const struct conv2d_rows *p = (const struct conv2d_rows *)arg;
  const uint64_t n = p->n;
  for (uint64_t k = lo; k < hi; k++) {
    const uint64_t i = p->y0 + k;
    float *out = p->b + k * n;
    if (i == 0 || i == n - 1) {
      for (uint64_t j = 0; j < n; j++)
        out[j] = 0.0f;
      continue;
    }
    const float *up = p->a + (i - 1 - p->a_first) * n, *row = up + n, *down = row + n;
    out[0] = 0.0f;
    out[n - 1] = 0.0f;
    for (uint64_t j = 1; j + 1 < n; j++)
      out[j] = conv2d_point(up[j - 1], row[j - 1], down[j - 1], up[j], row[j], down[j], up[j + 1], row[j + 1],
                            down[j + 1]);
  }
  return 0;
}

int conv2d_cpu_rows(const float *a, uint64_t a_first, float *b, uint64_t y0, uint64_t y1, uint64_t n)
{
  struct conv2d_rows p = {a, b, n, a_first, y0};
  return rio_parallel_for(y1 - y0, conv2d_ref_rows, &p);
}

int conv2d_reference(struct rio_run *run)
{
  struct conv2d_state *s = (struct conv2d_state *)run->state;
  const uint64_t n = s->n;
  if (!s->ref)
    s->ref = (float *)malloc(n * n * sizeof(float));
  if (!s->ref)
    return rio_fail(run, -ENOMEM, "2dconv: no host memory for the reference");
  return conv2d_cpu_rows((const float *)run->host_in[0], 0, s->ref, 0, n, n);
}

int conv2d_verify(struct rio_run *run)
{
  const struct conv2d_state *s = (const struct conv2d_state *)run->state;
  if (!s->ref)
    return rio_fail(run, -EINVAL, "2dconv: no reference to verify against");
  return rio_check_f32(run, "2dconv b", s->out, s->ref, s->n * s->n, s->n, CONV2D_RTOL, CONV2D_ATOL);
}

void conv2d_teardown(struct rio_run *run)
{
  struct conv2d_state *s = (struct conv2d_state *)run->state;
  if (!s)
    return;
  free(s->ref);
  free(s->out);
  free(s);
  run->state = NULL;
}
