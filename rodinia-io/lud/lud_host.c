/*
 * lud_host.c - lud's host side: sizes, the input matrix, the sampled check
 * of L U against A (lud.h says why it is sampled and what bound it uses).
 */
#include "rodinia-io/lud/lud.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* verify()'s random stream (the input uses stream 0) */
#define LUD_STREAM_PAIRS 16

uint64_t lud_dim(double scale)
{
  return rio_scaled_side(scale, LUD_FULL_N, LUD_TILE, LUD_MIN_N, 0);
}

float lud_element(uint64_t seed, uint64_t n, uint64_t i, uint64_t j)
{
  const double u = rio_rand01(seed, 0, i * n + j);
  /* |off-diagonal| < 1 and a[i][i] >= n: each row's off-diagonal sum stays
   * below its diagonal entry */
  return i == j ? (float)((double)n + u) : (float)(2.0 * u - 1.0);
}

int lud_setup(struct rio_run *run)
{
  if (!(run->scale > 0))
    return rio_fail(run, -EINVAL, "lud: scale %g: must be positive", run->scale);
  struct lud_state *s = (struct lud_state *)calloc(1, sizeof(*s));
  if (!s)
    return rio_fail(run, -ENOMEM, "lud: no host memory");
  run->state = s;
  s->n = lud_dim(run->scale);
  s->lu = (float *)malloc(s->n * s->n * sizeof(float));
  if (!s->lu)
    return rio_fail(run, -ENOMEM, "lud: no host memory for the %" PRIu64 " x %" PRIu64 " result", s->n,
                    s->n);
  run->ninputs = 1;
  snprintf(run->in[0].name, sizeof(run->in[0].name), "matrix");
  run->in[0].size = s->n * s->n * sizeof(float);
  return 0;
}

struct lud_gen {
  uint64_t seed, n;
  float *a;
};

static int lud_gen_rows(void *arg, uint64_t lo, uint64_t hi)
{
  const struct lud_gen *g = (const struct lud_gen *)arg;
  for (uint64_t i = lo; i < hi; i++)
    for (uint64_t j = 0; j < g->n; j++)
      g->a[i * g->n + j] = lud_element(g->seed, g->n, i, j);
  return 0;
}

int lud_generate(struct rio_run *run, int i, void *buf)
{
  const struct lud_state *s = (const struct lud_state *)run->state;
  struct lud_gen g = {run->seed, s->n, (float *)buf};
  if (i != 0)
    return rio_fail(run, -EINVAL, "lud: no input %d", i);
  return rio_parallel_for(s->n, lud_gen_rows, &g);
}

int lud_reference(struct rio_run *run)
{
  (void)run; /* verify() needs only the input and the result */
  return 0;
}

/* ---------------- verify ---------------- */

struct lud_check {
  const float *a, *lu;
  uint64_t n, seed;
  int all;              /* check every entry (small n) */
  double gamma;         /* gamma_n = n u / (1 - n u) */
  uint64_t first_bad;   /* the lowest failing check (atomic min) */
};

static void lud_lower_to(uint64_t *v, uint64_t k)
{
  uint64_t cur = __atomic_load_n(v, __ATOMIC_RELAXED);
  while (k < cur && !__atomic_compare_exchange_n(v, &cur, k, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
    ;
}

/* Check k's entry: every (i, j) row-major, or the diagonal and then random
 * pairs. */
static void lud_check_entry(const struct lud_check *c, uint64_t k, uint64_t *i, uint64_t *j)
{
  if (c->all) {
    *i = k / c->n;
    *j = k % c->n;
  } else if (k < c->n) {
    *i = *j = k;
  } else {
    const uint64_t r = k - c->n;
    *i = rio_rand(c->seed, LUD_STREAM_PAIRS, 2 * r) % c->n;
    *j = rio_rand(c->seed, LUD_STREAM_PAIRS, 2 * r + 1) % c->n;
  }
}

/* (L U)(i, j) and (|L||U|)(i, j), L unit lower: sum over p <= min(i, j). */
static void lud_lu_entry(const struct lud_check *c, uint64_t i, uint64_t j, double *lu, double *abs_lu)
{
  const uint64_t n = c->n, m = i < j ? i : j;
  double s = 0, t = 0;
  for (uint64_t p = 0; p < m; p++) {
    const double v = (double)c->lu[i * n + p] * (double)c->lu[p * n + j];
    s += v;
    t += fabs(v);
  }
  /* p = min(i, j): L's unit diagonal when i <= j, else L[i][j] U[j][j] */
  const double last = i <= j ? (double)c->lu[i * n + j] : (double)c->lu[i * n + j] * (double)c->lu[j * n + j];
  *lu = s + last;
  *abs_lu = t + fabs(last);
}

static int lud_entries(void *arg, uint64_t lo, uint64_t hi)
{
  struct lud_check *c = (struct lud_check *)arg;
  for (uint64_t k = lo; k < hi; k++) {
    uint64_t i, j;
    double lu, abs_lu;
    lud_check_entry(c, k, &i, &j);
    lud_lu_entry(c, i, j, &lu, &abs_lu);
    /* the double sums err by about n 2^-53 abs_lu, far inside the bound;
     * NaN fails */
    if (!(fabs(lu - (double)c->a[i * c->n + j]) <= c->gamma * abs_lu)) {
      lud_lower_to(&c->first_bad, k);
      break;
    }
  }
  return 0;
}

int lud_verify(struct rio_run *run)
{
  const struct lud_state *s = (const struct lud_state *)run->state;
  const uint64_t n = s->n;
  const double u = ldexp(1.0, -24);
  struct lud_check c = {(const float *)run->host_in[0], s->lu, n, run->seed, n <= LUD_CHECK_ALL_N,
                        (double)n * u / (1.0 - (double)n * u), UINT64_MAX};
  const uint64_t nchecks = c.all ? n * n : n + LUD_CHECK_PAIRS;
  int rc;

  if ((rc = rio_parallel_for(nchecks, lud_entries, &c)) != 0)
    return rio_fail(run, rc, "lud: verify: cannot start threads");
  if (c.first_bad != UINT64_MAX) {
    uint64_t i, j;
    double lu, abs_lu;
    lud_check_entry(&c, c.first_bad, &i, &j);
    lud_lu_entry(&c, i, j, &lu, &abs_lu);
    return rio_fail(run, -EBADMSG,
                    "lu: (L U)[row %" PRIu64 ", col %" PRIu64 "] = %.9g, expected A = %.9g (|diff| %.3g > "
                    "gamma_n (|L||U|)(i,j) = %.3g)",
                    i, j, lu, (double)c.a[i * n + j], fabs(lu - (double)c.a[i * n + j]), c.gamma * abs_lu);
  }
  return 0;
}

void lud_teardown(struct rio_run *run)
{
  struct lud_state *s = (struct lud_state *)run->state;
  if (s)
    free(s->lu);
  free(s);
  run->state = NULL;
}
