/*
 * conv3d_host.c - 3dconv's host side: sizes, the input, the CPU reference
 * and the check.
 */
#include "rodinia-io/conv3d/conv3d.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t conv3d_side(double scale)
{
  if (!(scale > 0) || !isfinite(scale))
    return 0;
  const double full = (double)CONV3D_FULL_N, target = full * full * full * scale;
  const double root = cbrt(target);
  if (root >= (double)(CONV3D_MAX_N + CONV3D_ALIGN))
    return 0;
  /* from the cube root, then exact against target (the root may round) */
  uint64_t n = (uint64_t)root / CONV3D_ALIGN * CONV3D_ALIGN;
  while ((double)(n + CONV3D_ALIGN) * (double)(n + CONV3D_ALIGN) * (double)(n + CONV3D_ALIGN) <= target)
    n += CONV3D_ALIGN;
  while (n > 0 && (double)n * (double)n * (double)n > target)
    n -= CONV3D_ALIGN;
  if (n > CONV3D_MAX_N)
    return 0;
  return n < CONV3D_MIN_N ? CONV3D_MIN_N : n;
}

int conv3d_setup(struct rio_run *run)
{
  const uint64_t n = conv3d_side(run->scale);
  if (!n)
    return rio_fail(run, -EINVAL, "3dconv: scale %g: must be positive, and the side at most %llu", run->scale,
                    (unsigned long long)CONV3D_MAX_N);
  struct conv3d_state *s = (struct conv3d_state *)calloc(1, sizeof(*s));
  if (!s)
    return rio_fail(run, -ENOMEM, "3dconv: no host memory");
  run->state = s;
  s->n = n;
  const uint64_t bytes = n * n * n * sizeof(float);
  /* untouched until a run writes it: costs no memory before */
  s->out = (float *)malloc(bytes);
  if (!s->out)
    return rio_fail(run, -ENOMEM, "3dconv: no host memory for the %" PRIu64 "^3 result", n);
  run->ninputs = 1;
  snprintf(run->in[0].name, sizeof(run->in[0].name), "a");
  run->in[0].size = bytes;
  return 0;
}

int conv3d_generate(struct rio_run *run, int i, void *buf)
{
  const struct conv3d_state *s = (const struct conv3d_state *)run->state;
  if (i != 0)
    return rio_fail(run, -EINVAL, "3dconv: no input %d", i);
  return rio_fill_uniform((float *)buf, s->n * s->n * s->n, run->seed, 0);
}

struct conv3d_ref {
  const float *a;
  float *b;
  uint64_t n;
};

/* Planes [lo, hi) of b, summed in double. */
static int conv3d_ref_planes(void *arg, uint64_t lo, uint64_t hi)
{
  const struct conv3d_ref *p = (const struct conv3d_ref *)arg;
  const uint64_t n = p->n, pl = n * n;
  for (uint64_t i = lo; i < hi; i++) {
    float *out = p->b + i * pl;
    if (i == 0 || i + 1 == n) {
      memset(out, 0, pl * sizeof(float));
      continue;
    }
    /* planes i - 1, i, i + 1 */
    const float *l = p->a + (i - 1) * pl, *m = p->a + i * pl, *h = p->a + (i + 1) * pl;
    for (uint64_t j = 0; j < n; j++)
      for (uint64_t k = 0; k < n; k++) {
        const uint64_t c = j * n + k;
        if (j == 0 || k == 0 || j + 1 == n || k + 1 == n) {
          out[c] = 0.0f;
          continue;
        }
        const uint64_t mm = c - n - 1, mp = c - n + 1; /* [j-1][k-1], [j-1][k+1] */
        double t = (double)CONV3D_C11 * l[mm];
        t += (double)CONV3D_C13 * h[mm];
        t += (double)CONV3D_C21 * l[mm];
        t += (double)CONV3D_C23 * h[mm];
        t += (double)CONV3D_C31 * l[mm];
        t += (double)CONV3D_C33 * h[mm];
        t += (double)CONV3D_C12 * m[c - n];
        t += (double)CONV3D_C22 * m[c];
        t += (double)CONV3D_C32 * m[c + n];
        t += (double)CONV3D_C11 * l[mp];
        t += (double)CONV3D_C13 * h[mp];
        t += (double)CONV3D_C21 * l[c + 1];
        t += (double)CONV3D_C23 * h[c + 1];
        t += (double)CONV3D_C31 * l[c + n + 1];
        t += (double)CONV3D_C33 * h[c + n + 1];
        out[c] = (float)t;
      }
  }
  return 0;
}

int conv3d_reference(struct rio_run *run)
{
  struct conv3d_state *s = (struct conv3d_state *)run->state;
  const uint64_t n = s->n;
  if (!s->ref)
    s->ref = (float *)malloc(n * n * n * sizeof(float));
  if (!s->ref)
    return rio_fail(run, -ENOMEM, "3dconv: no host memory for the reference");
  struct conv3d_ref p = {(const float *)run->host_in[0], s->ref, n};
  return rio_parallel_for(n, conv3d_ref_planes, &p);
}

int conv3d_verify(struct rio_run *run)
{
  const struct conv3d_state *s = (const struct conv3d_state *)run->state;
  if (!s->ref)
    return rio_fail(run, -EINVAL, "3dconv: no reference to verify against");
  /* rows are (i, j) pairs: row i n + j, col k */
  return rio_check_f32(run, "3dconv b", s->out, s->ref, s->n * s->n * s->n, s->n, CONV3D_RTOL, CONV3D_ATOL);
}

void conv3d_teardown(struct rio_run *run)
{
  struct conv3d_state *s = (struct conv3d_state *)run->state;
  if (!s)
    return;
  free(s->ref);
  free(s->out);
  free(s);
  run->state = NULL;
}
