/*
 * pathfinder_host.c - pathfinder's sizes, inputs, CPU reference and check
 * (plain C; the GPU versions are in pathfinder.cu).
 */
#include "rodinia-io/pathfinder/pathfinder.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define PF_STREAM 1

int pathfinder_setup(struct rio_run *run)
{
  struct pathfinder_state *st;
  if (!(run->scale > 0))
    return rio_fail(run, -EINVAL, "pathfinder: scale %g: must be positive", run->scale);
  st = (struct pathfinder_state *)calloc(1, sizeof(*st));
  if (!st)
    return rio_fail(run, -ENOMEM, "pathfinder: no host memory");
  run->state = st;
  const double want_cols = (double)PATHFINDER_FULL_COLS * run->scale;
  st->cols = rio_scaled(run, PATHFINDER_FULL_COLS, 1024);
  st->rows = PATHFINDER_FULL_ROWS;
  if (st->cols < PATHFINDER_MIN_COLS) {
    /* the columns stop at their minimum: the rows take the rest of the scale */
    st->cols = PATHFINDER_MIN_COLS;
    st->rows = (uint64_t)((double)PATHFINDER_FULL_ROWS * want_cols / (double)PATHFINDER_MIN_COLS);
    if (st->rows < PATHFINDER_MIN_ROWS)
      st->rows = PATHFINDER_MIN_ROWS;
  }
  run->ninputs = 2;
  strcpy(run->in[PATHFINDER_IN_FIRST].name, "first");
  run->in[PATHFINDER_IN_FIRST].size = st->cols * sizeof(int32_t);
  strcpy(run->in[PATHFINDER_IN_WALL].name, "wall");
  run->in[PATHFINDER_IN_WALL].size = (st->rows - 1) * st->cols * sizeof(int32_t);
  st->got = (int32_t *)calloc(st->cols, sizeof(int32_t));
  st->want = (int32_t *)calloc(st->cols, sizeof(int32_t));
  if (!st->got || !st->want)
    return rio_fail(run, -ENOMEM, "pathfinder: no host memory");
  return 0;
}

struct pf_gen {
  uint64_t seed;
  uint64_t base; /* the grid index of buf[0] */
  int32_t *buf;
};

static int pf_gen_slice(void *arg, uint64_t lo, uint64_t hi)
{
  const struct pf_gen *g = (const struct pf_gen *)arg;
  for (uint64_t e = lo; e < hi; e++)
    g->buf[e] = (int32_t)(rio_rand(g->seed, PF_STREAM, g->base + e) % 10);
  return 0;
}

int pathfinder_generate(struct rio_run *run, int i, void *buf)
{
  const struct pathfinder_state *st = (const struct pathfinder_state *)run->state;
  struct pf_gen g = {run->seed, i == PATHFINDER_IN_WALL ? st->cols : 0, (int32_t *)buf};
  if (i < 0 || i >= run->ninputs)
    return rio_fail(run, -EINVAL, "pathfinder: no input %d", i);
  return rio_parallel_for(run->in[i].size / sizeof(int32_t), pf_gen_slice, &g);
}

void pathfinder_window(uint64_t cols, uint64_t rows, uint64_t lo, uint64_t hi, uint64_t *b_lo, uint64_t *b_hi)
{
  const uint64_t halo = rows - 1;
  *b_lo = lo > halo ? lo - halo : 0;
  *b_hi = hi + halo < cols ? hi + halo : cols;
}

int pathfinder_last_columns(const int32_t *first, const int32_t *wall, uint64_t stride, uint64_t cols,
                            uint64_t rows, uint64_t lo, uint64_t hi, int32_t *out)
{
  uint64_t b_lo, b_hi;
  pathfinder_window(cols, rows, lo, hi, &b_lo, &b_hi);
  int32_t *a = (int32_t *)malloc((b_hi - b_lo) * sizeof(int32_t));
  int32_t *b = (int32_t *)malloc((b_hi - b_lo) * sizeof(int32_t));
  if (!a || !b) {
    free(a);
    free(b);
    return -ENOMEM;
  }
  /* a[x] and b[x] hold column b_lo + x; row r is exact on [c_lo, c_hi),
   * which shrinks by one each side a row except at the grid's edges */
  memcpy(a, first, (b_hi - b_lo) * sizeof(int32_t));
  for (uint64_t r = 1; r < rows; r++) {
    const int32_t *w = wall + (r - 1) * stride;
    const uint64_t c_lo = b_lo == 0 ? 0 : b_lo + r;
    const uint64_t c_hi = b_hi == cols ? cols : b_hi - r;
    for (uint64_t c = c_lo; c < c_hi; c++) {
      const uint64_t x = c - b_lo;
      int32_t m = a[x];
      if (c > 0 && a[x - 1] < m)
        m = a[x - 1];
      if (c + 1 < cols && a[x + 1] < m)
        m = a[x + 1];
      b[x] = w[x] + m;
    }
    int32_t *t = a;
    a = b;
    b = t;
  }
  memcpy(out, a + (lo - b_lo), (hi - lo) * sizeof(int32_t));
  free(a);
  free(b);
  return 0;
}

/* The reference: each host thread computes the last row's columns
 * [lo, hi) on its own, from their window of the whole grid. */
struct pf_ref {
  const struct pathfinder_state *st;
  const int32_t *first, *wall;
};

static int pf_ref_slice(void *arg, uint64_t lo, uint64_t hi)
{
  const struct pf_ref *f = (const struct pf_ref *)arg;
  const uint64_t cols = f->st->cols;
  uint64_t b_lo, b_hi;
  pathfinder_window(cols, f->st->rows, lo, hi, &b_lo, &b_hi);
  return pathfinder_last_columns(f->first + b_lo, f->wall + b_lo, cols, cols, f->st->rows, lo, hi,
                                 f->st->want + lo);
}

int pathfinder_reference(struct rio_run *run)
{
  struct pf_ref f = {(const struct pathfinder_state *)run->state,
                     (const int32_t *)run->host_in[PATHFINDER_IN_FIRST],
                     (const int32_t *)run->host_in[PATHFINDER_IN_WALL]};
  const int rc = rio_parallel_for(f.st->cols, pf_ref_slice, &f);
  return rc ? rio_fail(run, rc, "pathfinder: reference: %s", strerror(-rc)) : 0;
}

int pathfinder_verify(struct rio_run *run)
{
  const struct pathfinder_state *st = (const struct pathfinder_state *)run->state;
  return rio_check_i32(run, "last row", st->got, st->want, st->cols, 0);
}

void pathfinder_teardown(struct rio_run *run)
{
  struct pathfinder_state *st = (struct pathfinder_state *)run->state;
  if (!st)
    return;
  free(st->got);
  free(st->want);
  free(st);
  run->state = NULL;
}
