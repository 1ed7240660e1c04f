/*
 * stencil_host.c - stencil's host side: sizes, the input, the CPU
 * reference and the check.
 */
#include "rodinia-io/stencil/stencil.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int stencil_dims(double scale, uint64_t *nx, uint64_t *ny, uint64_t *nz)
{
  if (!(scale > 0) || !isfinite(scale))
    return -EINVAL;
  const double planes = (double)STENCIL_FULL_NZ * scale;
  if (planes >= (double)STENCIL_MIN_NZ) {
    if (planes >= (double)(STENCIL_MAX_NZ + 1))
      return -EINVAL;
    *nx = *ny = STENCIL_FULL_SIDE;
    *nz = (uint64_t)planes;
    return 0;
  }
  /* STENCIL_MIN_NZ planes of side s: s^2 MIN_NZ <= FULL_SIDE^2 planes, the
   * square of rio_scaled_side with the scale planes / MIN_NZ (< 1) */
  *nx = *ny = rio_scaled_side(planes / (double)STENCIL_MIN_NZ, STENCIL_FULL_SIDE, STENCIL_SIDE_MULTIPLE,
                              STENCIL_MIN_SIDE, STENCIL_FULL_SIDE);
  *nz = STENCIL_MIN_NZ;
  return 0;
}

int stencil_setup(struct rio_run *run)
{
  uint64_t nx, ny, nz;
  if (stencil_dims(run->scale, &nx, &ny, &nz) != 0)
    return rio_fail(run, -EINVAL, "stencil: scale %g: must be positive, and at most %llu planes", run->scale,
                    (unsigned long long)STENCIL_MAX_NZ);
  struct stencil_state *s = (struct stencil_state *)calloc(1, sizeof(*s));
  if (!s)
    return rio_fail(run, -ENOMEM, "stencil: no host memory");
  run->state = s;
  s->nx = nx;
  s->ny = ny;
  s->nz = nz;
  /* Parboil's constants, computed in float as Parboil does */
  s->c0 = 1.0f / 6.0f;
  s->c1 = 1.0f / 6.0f / 6.0f;
  const uint64_t bytes = nx * ny * nz * sizeof(float);
  /* untouched until a run writes it: costs no memory before */
  s->out = (float *)malloc(bytes);
  if (!s->out)
    return rio_fail(run, -ENOMEM, "stencil: no host memory for the %" PRIu64 "-byte result", bytes);
  run->ninputs = 1;
  snprintf(run->in[0].name, sizeof(run->in[0].name), "grid");
  run->in[0].size = bytes;
  return 0;
}

int stencil_generate(struct rio_run *run, int i, void *buf)
{
  const struct stencil_state *s = (const struct stencil_state *)run->state;
  if (i != 0)
    return rio_fail(run, -EINVAL, "stencil: no input %d", i);
  return rio_fill_uniform((float *)buf, s->nx * s->ny * s->nz, run->seed, 0);
}

/* One step of planes [lo, hi): src -> dst. */
struct stencil_step {
  const float *src;
  float *dst;
  const struct stencil_state *s;
};

static int stencil_step_planes(void *arg, uint64_t lo, uint64_t hi)
{
  const struct stencil_step *p = (const struct stencil_step *)arg;
  const uint64_t nx = p->s->nx, ny = p->s->ny, nz = p->s->nz, plane = nx * ny;
  for (uint64_t z = lo; z < hi; z++) {
    const float *mid = p->src + z * plane;
    float *out = p->dst + z * plane;
    if (z == 0 || z + 1 == nz) {
      memcpy(out, mid, plane * sizeof(float));
      continue;
    }
    const float *below = mid - plane, *above = mid + plane;
    for (uint64_t y = 0; y < ny; y++)
      for (uint64_t x = 0; x < nx; x++) {
        const uint64_t i = y * nx + x;
        if (y == 0 || y + 1 == ny || x == 0 || x + 1 == nx)
          out[i] = mid[i];
        else
          out[i] = stencil_point(mid[i], mid[i - 1], mid[i + 1], mid[i - nx], mid[i + nx], below[i], above[i],
                                 p->s->c0, p->s->c1);
      }
  }
  return 0;
}

int stencil_reference(struct rio_run *run)
{
  struct stencil_state *s = (struct stencil_state *)run->state;
  const uint64_t cells = s->nx * s->ny * s->nz;
  float *other = (float *)malloc(cells * sizeof(float));
  int rc = 0;
  if (!s->ref)
    s->ref = (float *)malloc(cells * sizeof(float));
  if (!s->ref || !other) {
    free(other);
    return rio_fail(run, -ENOMEM, "stencil: no host memory for the reference");
  }
  struct stencil_step p = {(const float *)run->host_in[0], NULL, s};
  for (int it = 0; it < STENCIL_ITERS && !rc; it++) {
    /* ping-pong so that the last step lands in ref */
    p.dst = (STENCIL_ITERS - 1 - it) % 2 == 0 ? s->ref : other;
    rc = rio_parallel_for(s->nz, stencil_step_planes, &p);
    p.src = p.dst;
  }
  free(other);
  return rc;
}

int stencil_verify(struct rio_run *run)
{
  const struct stencil_state *s = (const struct stencil_state *)run->state;
  if (!s->ref)
    return rio_fail(run, -EINVAL, "stencil: no reference to verify against");
  /* rows are (z, y) pairs: row z ny + y */
  return rio_check_f32(run, "stencil grid", s->out, s->ref, s->nx * s->ny * s->nz, s->nx, STENCIL_RTOL,
                       STENCIL_ATOL);
}

void stencil_teardown(struct rio_run *run)
{
  struct stencil_state *s = (struct stencil_state *)run->state;
  if (!s)
    return;
  free(s->ref);
  free(s->out);
  free(s);
  run->state = NULL;
}
