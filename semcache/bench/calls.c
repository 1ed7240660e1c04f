/*
 * calls.c - the time of one BLAS call by routine, size and where its
 * operands are, for SemCache's crossovers and its per-call cost
 * (semcache/bench/calls.py runs it; docs/semcache.md, "The crossover" and
 * "The cost of a call").  An ordinary CBLAS/LAPACKE program: run alone it
 * times the program's BLAS; under LD_PRELOAD=libsemcache.so it times the
 * drop-in (SEMCACHE_CROSSOVER picks the side).
 *
 * Usage: calls ROUTINE MODE N[,N...]
 *   ROUTINE  dgemm sgemm dgemv sgemv daxpy saxpy dscal sscal ddot sdot dgesv sgesv
 *            (square problems: gemm n x n x n, gemv n x n, vectors of n,
 *            gesv n x n with one right-hand side)
 *   MODE     cached: the same operands every call (a drop-in keeps them on
 *            the device); fresh: the CPU rewrites every input before each
 *            call, outside the timed part (a drop-in sends them again)
 * Per size, one untimed call, then calls until 0.05 s or 200 calls (at
 * least 3).  gesv's A and B are put back before each call (outside the
 * timed part) in both modes: gesv overwrites them.
 * Prints one JSON line per size: routine, mode, n, calls, us (per call).
 */
#include <cblas.h>
#include <lapacke.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

struct operands {
  int n, dbl;
  size_t na, nx;       /* elements of A (n x n or n) and of x, y */
  void *a, *x, *y, *a0, *y0;
  int *ipiv;
  double sink;         /* dot's results */
};

static void fill(void *p, size_t count, int dbl, uint64_t seed)
{
  for (size_t i = 0; i < count; i++) {
    const double v = bench_value(i, seed);
    if (dbl) ((double *)p)[i] = v;
    else ((float *)p)[i] = (float)v;
  }
}

/* The CPU's new inputs (MODE fresh; gesv always): A and x rewritten. */
static void rewrite(struct operands *o, const char *r, int fresh)
{
  const size_t es = o->dbl ? 8 : 4;
  if (strstr(r, "gesv")) {
    memcpy(o->a, o->a0, o->na * es);
    memcpy(o->y, o->y0, o->nx * es);
  } else if (fresh) {
    fill(o->a, o->na, o->dbl, 1);
    fill(o->x, o->nx, o->dbl, 2);
  }
}

static void call(struct operands *o, const char *r)
{
  const int n = o->n;
  if (!strcmp(r, "dgemm"))
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, o->a, n, o->x, n, 0.0,
                o->y, n);
  else if (!strcmp(r, "sgemm"))
    cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, o->a, n, o->x, n, 0.0f,
                o->y, n);
  else if (!strcmp(r, "dgemv"))
    cblas_dgemv(CblasColMajor, CblasNoTrans, n, n, 1.0, o->a, n, o->x, 1, 0.0, o->y, 1);
  else if (!strcmp(r, "sgemv"))
    cblas_sgemv(CblasColMajor, CblasNoTrans, n, n, 1.0f, o->a, n, o->x, 1, 0.0f, o->y, 1);
  else if (!strcmp(r, "daxpy")) cblas_daxpy(n, 0.5, o->x, 1, o->y, 1);
  else if (!strcmp(r, "saxpy")) cblas_saxpy(n, 0.5f, o->x, 1, o->y, 1);
  else if (!strcmp(r, "dscal")) cblas_dscal(n, 0.999, o->y, 1);
  else if (!strcmp(r, "sscal")) cblas_sscal(n, 0.999f, o->y, 1);
  else if (!strcmp(r, "ddot")) o->sink += cblas_ddot(n, o->x, 1, o->y, 1);
  else if (!strcmp(r, "sdot")) o->sink += cblas_sdot(n, o->x, 1, o->y, 1);
  else if (!strcmp(r, "dgesv")) LAPACKE_dgesv(LAPACK_COL_MAJOR, n, 1, o->a, n, o->ipiv, o->y, n);
  else LAPACKE_sgesv(LAPACK_COL_MAJOR, n, 1, o->a, n, o->ipiv, o->y, n);
}

/* Operands for routine r at size n on pages of their own (util.h). */
static int setup(struct operands *o, const char *r, int n)
{
  const int vec = strstr(r, "axpy") || strstr(r, "scal") || strstr(r, "dot");
  const int mat3 = strstr(r, "gemm") != NULL;
  o->n = n;
  o->dbl = r[0] == 'd';
  o->na = vec ? 1 : (size_t)n * n;
  o->nx = mat3 ? (size_t)n * n : (size_t)n;
  o->a = bench_matrix(o->na);
  o->x = bench_matrix(o->nx);
  o->y = bench_matrix(o->nx);
  o->a0 = o->y0 = NULL;
  o->sink = 0;
  o->ipiv = calloc((size_t)n, sizeof(int));
  if (!o->a || !o->x || !o->y || !o->ipiv) return -1;
  fill(o->a, o->na, o->dbl, 1);
  fill(o->x, o->nx, o->dbl, 2);
  fill(o->y, o->nx, o->dbl, 3);
  if (strstr(r, "gesv")) {
    /* diagonally dominant: a solvable A */
    for (int i = 0; i < n; i++) {
      const size_t d = (size_t)i * n + i;
      if (o->dbl) ((double *)o->a)[d] += 2.0 * n;
      else ((float *)o->a)[d] += 2.0f * n;
    }
    const size_t es = o->dbl ? 8 : 4;
    o->a0 = malloc(o->na * es);
    o->y0 = malloc(o->nx * es);
    if (!o->a0 || !o->y0) return -1;
    memcpy(o->a0, o->a, o->na * es);
    memcpy(o->y0, o->y, o->nx * es);
  }
  return 0;
}

int main(int argc, char **argv)
{
  if (argc != 4 || (strcmp(argv[2], "cached") && strcmp(argv[2], "fresh"))) {
    fprintf(stderr, "usage: calls ROUTINE cached|fresh N[,N...]\n");
    return 2;
  }
  const char *r = argv[1];
  const int fresh = !strcmp(argv[2], "fresh");
  for (char *s = argv[3], *end; *s; s = *end ? end + 1 : end) {
    const int n = (int)strtol(s, &end, 10);
    struct operands o;
    if (n <= 0 || setup(&o, r, n)) {
      fprintf(stderr, "calls: bad size or no memory at %s\n", s);
      return 2;
    }
    rewrite(&o, r, fresh);
    call(&o, r); /* untimed: the first call's set-up */
    double spent = 0;
    int calls = 0;
    while (calls < 3 || (spent < 0.05 && calls < 200)) {
      rewrite(&o, r, fresh);
      const double t0 = bench_now();
      call(&o, r);
      spent += bench_now() - t0;
      calls++;
    }
    printf("{\"routine\":\"%s\",\"mode\":\"%s\",\"n\":%d,\"calls\":%d,\"us\":%.2f}\n", r,
           argv[2], n, calls, spent / calls * 1e6);
    fflush(stdout);
    free(o.a);
    free(o.x);
    free(o.y);
    free(o.a0);
    free(o.y0);
    free(o.ipiv);
  }
  return 0;
}
