/*
 * backprop_host.c - backprop's sizes, inputs, CPU reference and check
 * (plain C; the GPU versions are in backprop.cu).
 */
#include "rodinia-io/backprop/backprop.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "benchlib/util.h"

/* rio_rand streams of the inputs and of the hidden->output weights */
#define BP_STREAM_INPUT 1
#define BP_STREAM_WEIGHTS 2
#define BP_STREAM_PREV 3
#define BP_STREAM_W2 4

/* the float unit roundoff, 2^-24 */
#define BP_U (1.0 / 16777216.0)

/* k floats rounded up to an even count: a file of them is a multiple of 8 bytes */
static uint64_t bp_padded(uint64_t k) { return (k + 1) & ~1ull; }

int backprop_setup(struct rio_run *run)
{
  struct backprop_state *st;
  if (!(run->scale > 0))
    return rio_fail(run, -EINVAL, "backprop: scale %g: must be positive", run->scale);
  st = (struct backprop_state *)calloc(1, sizeof(*st));
  if (!st)
    return rio_fail(run, -ENOMEM, "backprop: no host memory");
  run->state = st;
  st->n = rio_scaled(run, BACKPROP_FULL_N, 1024);
  st->rows = st->n + 1;
  st->nchunks = (st->rows + BACKPROP_CHUNK_ROWS - 1) / BACKPROP_CHUNK_ROWS;
  st->wbound = 3.0 / sqrt((double)st->rows);
  for (int j = 0; j < BACKPROP_COLS; j++)
    st->w2[j] = (float)(2.0 * rio_rand01(run->seed, BP_STREAM_W2, (uint64_t)j) - 1.0);

  const uint64_t cells = st->rows * BACKPROP_COLS;
  run->ninputs = 3;
  strcpy(run->in[BACKPROP_IN_INPUT].name, "input");
  run->in[BACKPROP_IN_INPUT].size = bp_padded(st->rows) * sizeof(float);
  strcpy(run->in[BACKPROP_IN_WEIGHTS].name, "weights");
  run->in[BACKPROP_IN_WEIGHTS].size = bp_padded(cells) * sizeof(float);
  strcpy(run->in[BACKPROP_IN_PREV].name, "prev_weights");
  run->in[BACKPROP_IN_PREV].size = bp_padded(cells) * sizeof(float);

  /* untouched until used: the pages cost nothing before */
  st->got_w = (float *)malloc(cells * sizeof(float));
  st->got_prev = (float *)malloc(cells * sizeof(float));
  st->want_w = (float *)malloc(cells * sizeof(float));
  st->want_prev = (float *)malloc(cells * sizeof(float));
  if (!st->got_w || !st->got_prev || !st->want_w || !st->want_prev)
    return rio_fail(run, -ENOMEM, "backprop: no host memory for 4 x %llu floats",
                    (unsigned long long)cells);
  return 0;
}

struct bp_gen {
  const struct backprop_state *st;
  uint64_t seed;
  int input;
  float *buf;
};

static int bp_gen_slice(void *arg, uint64_t lo, uint64_t hi)
{
  const struct bp_gen *g = (const struct bp_gen *)arg;
  const struct backprop_state *st = g->st;
  const uint64_t cells = st->rows * BACKPROP_COLS;
  for (uint64_t e = lo; e < hi; e++) {
    double v = 0.0; /* the padding */
    if (g->input == BACKPROP_IN_INPUT)
      v = e == 0 ? 1.0 : e < st->rows ? rio_rand01(g->seed, BP_STREAM_INPUT, e) : 0.0;
    else if (g->input == BACKPROP_IN_WEIGHTS && e < cells)
      v = (2.0 * rio_rand01(g->seed, BP_STREAM_WEIGHTS, e) - 1.0) * st->wbound;
    else if (g->input == BACKPROP_IN_PREV && e < cells)
      v = (2.0 * rio_rand01(g->seed, BP_STREAM_PREV, e) - 1.0) * st->wbound * 0.1;
    g->buf[e] = (float)v;
  }
  return 0;
}

int backprop_generate(struct rio_run *run, int i, void *buf)
{
  struct bp_gen g = {(const struct backprop_state *)run->state, run->seed, i, (float *)buf};
  if (i < 0 || i >= run->ninputs)
    return rio_fail(run, -EINVAL, "backprop: no input %d", i);
  return rio_parallel_for(run->in[i].size / sizeof(float), bp_gen_slice, &g);
}

/* ---------------- reference ---------------- */

#define BP_MAX_THREADS 16

/* The forward sums in double, each thread over its slice of rows; the
 * slices are combined in thread order, so the result does not depend on
 * the threads' timing. */
struct bp_fwd {
  const struct backprop_state *st;
  const float *in, *w;
  int nthreads;
  double sum[BP_MAX_THREADS][BACKPROP_COLS];
  double abs[BP_MAX_THREADS][BACKPROP_COLS];
};

static int bp_fwd_slice(void *arg, int t)
{
  struct bp_fwd *f = (struct bp_fwd *)arg;
  const uint64_t rows = f->st->rows;
  const uint64_t lo = rows * (uint64_t)t / (uint64_t)f->nthreads;
  const uint64_t hi = rows * (uint64_t)(t + 1) / (uint64_t)f->nthreads;
  double s[BACKPROP_COLS] = {0}, a[BACKPROP_COLS] = {0};
  for (uint64_t i = lo; i < hi; i++) {
    const float *row = f->w + i * BACKPROP_COLS;
    for (int j = 1; j < BACKPROP_COLS; j++) {
      const double p = (double)row[j] * (double)f->in[i]; /* exact */
      s[j] += p;
      a[j] += fabs(p);
    }
  }
  memcpy(f->sum[t], s, sizeof(s));
  memcpy(f->abs[t], a, sizeof(a));
  return 0;
}

struct bp_adj {
  struct backprop_state *st;
  const float *in, *w, *prev;
};

static int bp_adj_slice(void *arg, uint64_t lo, uint64_t hi)
{
  const struct bp_adj *a = (const struct bp_adj *)arg;
  struct backprop_state *st = a->st;
  for (uint64_t i = lo; i < hi; i++) {
    const uint64_t e0 = i * BACKPROP_COLS;
    st->want_w[e0] = a->w[e0];
    st->want_prev[e0] = a->prev[e0];
    for (int j = 1; j < BACKPROP_COLS; j++) {
      const double dw = BACKPROP_ETA * (double)st->want.hid_delta[j] * (double)a->in[i] +
                        BACKPROP_MOMENTUM * (double)a->prev[e0 + j];
      st->want_w[e0 + j] = (float)((double)a->w[e0 + j] + dw);
      st->want_prev[e0 + j] = (float)dw;
    }
  }
  return 0;
}

int backprop_reference(struct rio_run *run)
{
  struct backprop_state *st = (struct backprop_state *)run->state;
  struct bp_fwd *f = (struct bp_fwd *)calloc(1, sizeof(*f));
  double sum[BACKPROP_COLS] = {0};
  int rc;
  if (!f)
    return rio_fail(run, -ENOMEM, "backprop: no host memory");
  f->st = st;
  f->in = (const float *)run->host_in[BACKPROP_IN_INPUT];
  f->w = (const float *)run->host_in[BACKPROP_IN_WEIGHTS];
  f->nthreads = bench_host_threads();
  if (f->nthreads > BP_MAX_THREADS)
    f->nthreads = BP_MAX_THREADS;
  rc = bench_parallel(f->nthreads, bp_fwd_slice, f);
  if (rc) {
    free(f);
    return rio_fail(run, rc, "backprop: reference threads: %s", strerror(-rc));
  }
  memset(st->abs_sum, 0, sizeof(st->abs_sum));
  for (int t = 0; t < f->nthreads; t++)
    for (int j = 1; j < BACKPROP_COLS; j++) {
      sum[j] += f->sum[t][j];
      st->abs_sum[j] += f->abs[t][j];
    }
  free(f);
  backprop_backward(sum, st->w2, &st->want);

  struct bp_adj a = {st, (const float *)run->host_in[BACKPROP_IN_INPUT],
                     (const float *)run->host_in[BACKPROP_IN_WEIGHTS],
                     (const float *)run->host_in[BACKPROP_IN_PREV]};
  rc = rio_parallel_for(st->rows, bp_adj_slice, &a);
  return rc ? rio_fail(run, rc, "backprop: reference threads: %s", strerror(-rc)) : 0;
}

/* ---------------- verify ---------------- */

/*
 * Tolerances, from the GPU's order of summation (backprop.h) and u = 2^-24:
 *   S_j   each thread's float sum of L = CHUNK_ROWS / THREADS fma terms
 *         errs by <= L u sum|terms|, the 5-level warp tree by 5 u more; the
 *         double sums after it and the reference's double sum add < 2^-40:
 *         e_S = (L + 8) u A_j, A_j = sum_i |w[i][j] in[i]| (abs_sum).
 *   h_j   squash' <= 1/4: e_h = e_S / 4; plus u for the floats' roundings.
 *   o     e_o = sum_j |w2_j| e_h_j / 4 (+ u).
 *   d_o   = o (1 - o) (t - o) has |d/do| <= 5/4 on [0, 1]: e_do = 5/4 e_o (+ u).
 *   d_j   = g(h_j) w2_j d_o with g = h (1 - h), |g'| <= 1, g <= 1/4:
 *         e_dj = |w2_j| (e_h |d_o| + e_do / 4 + e_h e_do) (+ u).
 *   w, prev  the GPU adjusts with the deltas it reports (checked above), so
 *         their error follows from the measured D = max_j |d_j got - want|:
 *         ETA D in[i] (in <= 1), plus roundings (ETA d_j, MOMENTUM prev, the
 *         fma, w + dw, the reference's two) below 8 u (b + 2 dw_max), where
 *         b bounds |w| and dw_max = ETA (max |d_j| + D) + MOMENTUM b / 10.
 */
int backprop_verify(struct rio_run *run)
{
  struct backprop_state *st = (struct backprop_state *)run->state;
  const struct backprop_units *got = &st->got, *want = &st->want;
  const double L = (double)(BACKPROP_CHUNK_ROWS / BACKPROP_THREADS);
  double e_h = 0, e_z = 0, d_max = 0, diff = 0;
  int rc;

  for (int j = 1; j < BACKPROP_COLS; j++) {
    const double e_hj = (L + 8.0) * BP_U * st->abs_sum[j] / 4.0;
    e_h = e_hj > e_h ? e_hj : e_h;
    e_z += fabs((double)st->w2[j]) * e_hj;
  }
  const double e_o = e_z / 4.0;
  const double e_do = 1.25 * e_o;
  double e_d = 0;
  for (int j = 1; j < BACKPROP_COLS; j++) {
    const double e_dj =
        fabs((double)st->w2[j]) * (e_h * fabs((double)want->out_delta) + e_do / 4.0 + e_h * e_do);
    e_d = e_dj > e_d ? e_dj : e_d;
    const double dj = fabs((double)want->hid_delta[j]);
    d_max = dj > d_max ? dj : d_max;
    const double dd = fabs((double)got->hid_delta[j] - (double)want->hid_delta[j]);
    diff = dd > diff || isnan(dd) ? dd : diff;
  }
  if ((rc = rio_check_f32(run, "hidden", got->hidden, want->hidden, BACKPROP_COLS, 0, 0, e_h + BP_U)) ||
      (rc = rio_check_f32(run, "output", &got->output, &want->output, 1, 0, 0, e_o + BP_U)) ||
      (rc = rio_check_f32(run, "out_delta", &got->out_delta, &want->out_delta, 1, 0, 0, e_do + BP_U)) ||
      (rc = rio_check_f32(run, "hid_delta", got->hid_delta, want->hid_delta, BACKPROP_COLS, 0, 0,
                          e_d + BP_U)))
    return rc;

  const double dw_max = BACKPROP_ETA * (d_max + diff) + BACKPROP_MOMENTUM * st->wbound * 0.1;
  const double atol = BACKPROP_ETA * diff + 8.0 * BP_U * (st->wbound + 2.0 * dw_max);
  const uint64_t cells = st->rows * BACKPROP_COLS;
  if ((rc = rio_check_f32(run, "weights", st->got_w, st->want_w, cells, BACKPROP_COLS, 0, atol)) ||
      (rc = rio_check_f32(run, "prev_weights", st->got_prev, st->want_prev, cells, BACKPROP_COLS, 0, atol)))
    return rc;
  return 0;
}

void backprop_teardown(struct rio_run *run)
{
  struct backprop_state *st = (struct backprop_state *)run->state;
  if (!st)
    return;
  free(st->got_w);
  free(st->got_prev);
  free(st->want_w);
  free(st->want_prev);
  free(st);
  run->state = NULL;
}
