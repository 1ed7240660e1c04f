/*
 * matvec_host.c - the matrix-vector family's host side (matvec.h): the
 * row-block shape, sizes, inputs, the reference's products and the check.
 */
#include "rodinia-io/matvec/matvec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct matvec_shape matvec_shape_of(uint64_t n, uint64_t nparts) { return matvec_shape_rows(n, nparts, 0, n); }

struct matvec_shape matvec_shape_rows(uint64_t n, uint64_t nparts, uint64_t row0, uint64_t rows)
{
  struct matvec_shape sh;
  const uint64_t row = n * sizeof(float);
  sh.n = n;
  sh.nparts = nparts;
  sh.row0 = row0;
  sh.rows = rows;
  sh.block_rows = MATVEC_BLOCK_BYTES / row;
  if (sh.block_rows < 1)
    sh.block_rows = 1;
  if (sh.block_rows > n)
    sh.block_rows = n;
  sh.nblocks = (rows + sh.block_rows - 1) / sh.block_rows;
  sh.total = nparts * sh.nblocks;
  sh.groups = sh.total < MATVEC_GROUPS ? sh.total : MATVEC_GROUPS;
  return sh;
}

uint64_t matvec_side(double scale, uint64_t full)
{
  return rio_scaled_side(scale, full, MATVEC_STEP, MATVEC_MIN_N, MATVEC_MAX_N);
}

int matvec_setup(struct rio_run *run, const char *bench, uint64_t full, uint64_t nout_per_n)
{
  const uint64_t n = matvec_side(run->scale, full);
  if (!n)
    return rio_fail(run, -EINVAL, "%s: scale %g: must be positive, and the side at most %llu", bench,
                    run->scale, (unsigned long long)MATVEC_MAX_N);
  struct matvec_state *st = (struct matvec_state *)calloc(1, sizeof(*st));
  if (!st)
    return rio_fail(run, -ENOMEM, "%s: no host memory", bench);
  run->state = st;
  run->ninputs = 0;
  st->n = n;
  st->nout = nout_per_n * n;
  st->got = (float *)calloc(st->nout, sizeof(float));
  st->want = (float *)calloc(st->nout, sizeof(float));
  if (!st->got || !st->want)
    return rio_fail(run, -ENOMEM, "%s: no host memory for the result", bench);
  return 0;
}

void matvec_input(struct rio_run *run, const char *name, uint64_t floats)
{
  struct rio_input *in = &run->in[run->ninputs++];
  snprintf(in->name, sizeof(in->name), "%s", name);
  in->size = floats * sizeof(float);
}

int matvec_generate(struct rio_run *run, int i, void *buf)
{
  if (i < 0 || i >= run->ninputs)
    return rio_fail(run, -EINVAL, "%s: no input %d", run->bench ? run->bench->name : "matvec", i);
  return rio_fill_uniform((float *)buf, run->in[i].size / sizeof(float), run->seed, (uint64_t)i + 1);
}

void matvec_teardown(struct rio_run *run)
{
  struct matvec_state *st = (struct matvec_state *)run->state;
  if (!st)
    return;
  free(st->got);
  free(st->want);
  free(st);
  run->state = NULL;
}

/* ---------------- reference products ---------------- */

struct matvec_ref {
  const float *a;
  uint64_t rows, n;
  const float *x;  /* rows: the vector */
  const double *w; /* cols: the weights */
  double *out;
};

/* Rows [lo, hi): each thread its own rows, whole. */
static int matvec_rows_slice(void *arg, uint64_t lo, uint64_t hi)
{
  const struct matvec_ref *r = (const struct matvec_ref *)arg;
  for (uint64_t i = lo; i < hi; i++) {
    const float *row = r->a + i * r->n;
    double s = 0.0;
    for (uint64_t j = 0; j < r->n; j++)
      s += (double)row[j] * (double)r->x[j]; /* each product exact in double */
    r->out[i] = s;
  }
  return 0;
}

/* Columns [lo, hi): each thread its own columns, so that no sums need
 * merging; it walks every row's segment of them in row order. */
static int matvec_cols_slice(void *arg, uint64_t lo, uint64_t hi)
{
  const struct matvec_ref *r = (const struct matvec_ref *)arg;
  double *out = r->out;
  for (uint64_t j = lo; j < hi; j++)
    out[j] = 0.0;
  for (uint64_t i = 0; i < r->rows; i++) {
    const float *row = r->a + i * r->n;
    const double w = r->w[i];
    for (uint64_t j = lo; j < hi; j++)
      out[j] += w * (double)row[j];
  }
  return 0;
}

int matvec_ref_rows(const float *a, uint64_t rows, uint64_t n, const float *x, double *out)
{
  struct matvec_ref r = {a, rows, n, x, NULL, out};
  return rio_parallel_for(rows, matvec_rows_slice, &r);
}

int matvec_ref_cols(const float *a, uint64_t rows, uint64_t n, const double *w, double *out)
{
  struct matvec_ref r = {a, rows, n, NULL, w, out};
  return rio_parallel_for(n, matvec_cols_slice, &r);
}

int matvec_check(struct rio_run *run, const char *what, uint64_t off, uint64_t n)
{
  const struct matvec_state *st = (const struct matvec_state *)run->state;
  return rio_check_f32(run, what, st->got + off, st->want + off, n, 0, MATVEC_RTOL, MATVEC_ATOL);
}
