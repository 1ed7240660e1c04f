/*
 * nw_host.c - nw's host side: sizes, the two input matrices, the CPU
 * reference (the plain row-by-row loop), the exact check.
 */
#include "rodinia-io/nw/nw.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const int8_t nw_blosum62[NW_AMINO][NW_AMINO] = {
    /* A   R   N   D   C   Q   E   G   H   I   L   K   M   F   P   S   T   W   Y   V */
    { 4, -1, -2, -2,  0, -1, -1,  0, -2, -1, -1, -1, -1, -2, -1,  1,  0, -3, -2,  0}, /* A */
    {-1,  5,  0, -2, -3,  1,  0, -2,  0, -3, -2,  2, -1, -3, -2, -1, -1, -3, -2, -3}, /* R */
    {-2,  0,  6,  1, -3,  0,  0,  0,  1, -3, -3,  0, -2, -3, -2,  1,  0, -4, -2, -3}, /* N */
    {-2, -2,  1,  6, -3,  0,  2, -1, -1, -3, -4, -1, -3, -3, -1,  0, -1, -4, -3, -3}, /* D */
    { 0, -3, -3, -3,  9, -3, -4, -3, -3, -1, -1, -3, -1, -2, -3, -1, -1, -2, -2, -1}, /* C */
    {-1,  1,  0,  0, -3,  5,  2, -2,  0, -3, -2,  1,  0, -3, -1,  0, -1, -2, -1, -2}, /* Q */
    {-1,  0,  0,  2, -4,  2,  5, -2,  0, -3, -3,  1, -2, -3, -1,  0, -1, -3, -2, -2}, /* E */
    { 0, -2,  0, -1, -3, -2, -2,  6, -2, -4, -4, -2, -3, -3, -2,  0, -2, -2, -3, -3}, /* G */
    {-2,  0,  1, -1, -3,  0,  0, -2,  8, -3, -3, -1, -2, -1, -2, -1, -2, -2,  2, -3}, /* H */
    {-1, -3, -3, -3, -1, -3, -3, -4, -3,  4,  2, -3,  1,  0, -3, -2, -1, -3, -1,  3}, /* I */
    {-1, -2, -3, -4, -1, -2, -3, -4, -3,  2,  4, -2,  2,  0, -3, -2, -1, -2, -1,  1}, /* L */
    {-1,  2,  0, -1, -3,  1,  1, -2, -1, -3, -2,  5, -1, -3, -1,  0, -1, -3, -2, -2}, /* K */
    {-1, -1, -2, -3, -1,  0, -2, -3, -2,  1,  2, -1,  5,  0, -2, -1, -1, -1, -1,  1}, /* M */
    {-2, -3, -3, -3, -2, -3, -3, -3, -1,  0,  0, -3,  0,  6, -4, -2, -2,  1,  3, -1}, /* F */
    {-1, -2, -2, -1, -3, -1, -1, -2, -2, -3, -3, -1, -2, -4,  7, -1, -1, -4, -3, -2}, /* P */
    { 1, -1,  1,  0, -1,  0,  0,  0, -1, -2, -2,  0, -1, -2, -1,  4,  1, -3, -2, -2}, /* S */
    { 0, -1,  0, -1, -1, -1, -1, -2, -2, -1, -1, -1, -1, -2, -1,  1,  5, -2, -2,  0}, /* T */
    {-3, -3, -4, -4, -2, -2, -3, -2, -2, -3, -2, -3, -1,  1, -4, -3, -2, 11,  2, -3}, /* W */
    {-2, -2, -2, -3, -2, -1, -2, -3,  2, -1, -1, -2, -1,  3, -3, -2, -2,  2,  7, -1}, /* Y */
    { 0, -3, -3, -3, -1, -2, -2, -3, -3,  3,  1, -2,  1, -1, -2, -2,  0, -3, -1,  4}, /* V */
};

uint64_t nw_dim(double scale)
{
  return rio_scaled_side(scale, NW_FULL_W, NW_TILE, NW_MIN_W, 0);
}

int nw_residue(uint64_t seed, int s, uint64_t k) { return (int)(rio_rand(seed, (uint64_t)s, k) % NW_AMINO); }

int nw_setup(struct rio_run *run)
{
  if (!(run->scale > 0))
    return rio_fail(run, -EINVAL, "nw: scale %g: must be positive", run->scale);
  struct nw_state *s = (struct nw_state *)calloc(1, sizeof(*s));
  if (!s)
    return rio_fail(run, -ENOMEM, "nw: no host memory");
  run->state = s;
  s->w = nw_dim(run->scale);
  const uint64_t bytes = s->w * s->w * sizeof(int32_t);
  s->want = (int32_t *)malloc(bytes);
  s->got = (int32_t *)malloc(bytes);
  if (!s->want || !s->got)
    return rio_fail(run, -ENOMEM, "nw: no host memory for two %" PRIu64 " x %" PRIu64 " matrices", s->w, s->w);
  run->ninputs = 2;
  snprintf(run->in[NW_IN_REFERENCE].name, sizeof(run->in[0].name), "reference");
  snprintf(run->in[NW_IN_ITEMSETS].name, sizeof(run->in[1].name), "itemsets");
  run->in[NW_IN_REFERENCE].size = bytes;
  run->in[NW_IN_ITEMSETS].size = bytes;
  return 0;
}

struct nw_gen {
  uint64_t seed, w;
  int input;
  int32_t *m;
};

static int nw_gen_rows(void *arg, uint64_t lo, uint64_t hi)
{
  const struct nw_gen *g = (const struct nw_gen *)arg;
  for (uint64_t i = lo; i < hi; i++) {
    int32_t *row = g->m + i * g->w;
    if (g->input == NW_IN_ITEMSETS) {
      memset(row, 0, g->w * sizeof(int32_t));
      row[0] = -(int32_t)i * NW_PENALTY;
      if (i == 0)
        for (uint64_t j = 1; j < g->w; j++)
          row[j] = -(int32_t)j * NW_PENALTY;
    } else if (i == 0) {
      memset(row, 0, g->w * sizeof(int32_t));
    } else {
      const int8_t *score = nw_blosum62[nw_residue(g->seed, 0, i)];
      row[0] = 0;
      for (uint64_t j = 1; j < g->w; j++)
        row[j] = score[nw_residue(g->seed, 1, j)];
    }
  }
  return 0;
}

int nw_generate(struct rio_run *run, int i, void *buf)
{
  const struct nw_state *s = (const struct nw_state *)run->state;
  struct nw_gen g = {run->seed, s->w, i, (int32_t *)buf};
  if (i != NW_IN_REFERENCE && i != NW_IN_ITEMSETS)
    return rio_fail(run, -EINVAL, "nw: no input %d", i);
  return rio_parallel_for(s->w, nw_gen_rows, &g);
}

static int32_t nw_max3(int32_t x, int32_t y, int32_t z)
{
  const int32_t m = x > y ? x : y;
  return m > z ? m : z;
}

int nw_reference(struct rio_run *run)
{
  struct nw_state *s = (struct nw_state *)run->state;
  const int32_t *ref = (const int32_t *)run->host_in[NW_IN_REFERENCE];
  int32_t *m = s->want;
  const uint64_t w = s->w;
  memcpy(m, run->host_in[NW_IN_ITEMSETS], w * w * sizeof(int32_t));
  for (uint64_t i = 1; i < w; i++) {
    const int32_t *up = m + (i - 1) * w, *r = ref + i * w;
    int32_t *row = m + i * w;
    for (uint64_t j = 1; j < w; j++)
      row[j] = nw_max3(up[j - 1] + r[j], up[j] - NW_PENALTY, row[j - 1] - NW_PENALTY);
  }
  return 0;
}

int nw_verify(struct rio_run *run)
{
  const struct nw_state *s = (const struct nw_state *)run->state;
  return rio_check_i32(run, "score", s->got, s->want, s->w * s->w, s->w);
}

void nw_teardown(struct rio_run *run)
{
  struct nw_state *s = (struct nw_state *)run->state;
  if (s) {
    free(s->want);
    free(s->got);
  }
  free(s);
  run->state = NULL;
}
