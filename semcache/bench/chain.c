/*
 * chain.c - the SemCache microbenchmark: a chain of matrix products that
 * reuse their operands, as in the SemCache paper's Figure 1 (ICS'13).  An
 * ordinary CBLAS program: it does not know what BLAS it runs on.
 *
 * Three n x n inputs A, B, C; the chain of L products
 *
 *     X0 = s A B,  X1 = s X0 C,  X2 = s X1 A,  X3 = s X2 B,  X4 = s X3 C, ...
 *
 * (each product multiplies the last result by the next input in turn,
 * s = sqrt(3/n) keeps the entries near 1), results alternating between two
 * buffers.  A BLAS that offloads each call alone sends both operands and
 * brings the result back every time: 3 L n^2 doubles.  One that keeps
 * matrices on the GPU between calls needs each input sent once and the
 * last result brought back once: the minimum this program reports
 * (min_h2d_bytes, min_d2h_bytes; the first counts the warm-up's two
 * 64 x 64 inputs too).  With -w K the CPU changes one entry of
 * the next product's input after every K products; each such change makes
 * that input's device copy stale, and the minimum counts it resent.
 *
 * Usage: chain [-n N] [-l L] [-w K]     (defaults 1024, 6, 0: no writes)
 * Prints one JSON line: the sizes, seconds (the chain and reading the last
 * result, after an untimed 64 x 64 warm-up product that starts the BLAS's
 * threads or GPU), the result's summary (util.h) and the minimum bytes.
 * Exit 0, or 2 for bad arguments or no memory.
 */
#include <cblas.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "benchlib/opts.h"
#include "util.h"

struct chain_opts {
  int n, length, write_every;
};

static const char chain_usage[] =
    "usage: chain [-n N] [-l LENGTH] [-w WRITE_EVERY]\n"
    "  -n N            matrix order (default 1024)\n"
    "  -l LENGTH       products in the chain (default 6)\n"
    "  -w WRITE_EVERY  the CPU writes the running product every that many products (default 0: never)\n";

/* The command line (benchlib/opts.h): 0, 1 for --help, or -EINVAL with err. */
static int parse(int argc, char **argv, struct chain_opts *o, char *err, size_t len)
{
  static const struct bench_opt table[] = {{"n", BENCH_OPT_VALUE, 'n'}, {"l", BENCH_OPT_VALUE, 'l'},
                                           {"w", BENCH_OPT_VALUE, 'w'}};
  struct bench_opts p;
  int id, rc = 0;
  o->n = 1024, o->length = 6, o->write_every = 0;
  bench_opts_init(&p, argc, argv, table, 3, err, len);
  while (rc == 0 && (id = bench_opts_next(&p)) != BENCH_OPTS_END) {
    switch (id) {
    case 'n': rc = bench_opts_int(&p, 1, 65536, &o->n); break;
    case 'l': rc = bench_opts_int(&p, 1, 1000000, &o->length); break;
    case 'w': rc = bench_opts_int(&p, 0, 1000000, &o->write_every); break;
    default: rc = id == BENCH_OPTS_HELP ? 1 : id;
    }
  }
  return rc ? rc : bench_opts_operands(&p, 0);
}

static double *input(int n, uint64_t seed)
{
  size_t count = (size_t)n * n;
  double *m = bench_matrix(count);
  for (size_t i = 0; i < count; i++) m[i] = bench_value(i, seed);
  return m;
}

#define CHAIN_WARM_N 256

/* One untimed product: the BLAS's threads (or its GPU context) start here.
 * SemCache's drop-in opens the GPU at the first call above its crossover
 * (dgemm's default: n = 256), so the warm-up is that large. */
static void warm_up(void)
{
  const int n = CHAIN_WARM_N;
  double *a = input(n, 11), *b = input(n, 12), *c = bench_matrix((size_t)n * n);
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a, n, b, n, 0.0, c, n);
  free(a), free(b), free(c);
}

int main(int argc, char **argv)
{
  struct chain_opts o;
  char err[256];
  int rc = parse(argc, argv, &o, err, sizeof(err));
  if ((rc = bench_opts_exit("chain", rc, err, chain_usage)) >= 0)
    return rc;
  const int n = o.n;
  const size_t count = (size_t)n * n, bytes = count * sizeof(double);
  double *in[3] = {input(n, 1), input(n, 2), input(n, 3)};
  double *x[2] = {bench_matrix(count), bench_matrix(count)};
  const double s = sqrt(3.0 / n);
  /* each input once, and the warm-up's two inputs */
  size_t min_h2d = 3 * bytes + 2 * sizeof(double) * CHAIN_WARM_N * CHAIN_WARM_N;
  int writes = 0;
  warm_up();

  double t0 = bench_now();
  /* product i multiplies by input (i + 1) % 3; product 0 is A B */
  for (int i = 0; i < o.length; i++) {
    const double *left = i == 0 ? in[0] : x[(i - 1) & 1];
    double *right = in[(i + 1) % 3], *out = x[i & 1];
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, s, left, n, right, n, 0.0,
                out, n);
    if (o.write_every && i % o.write_every == o.write_every - 1 && i + 1 < o.length) {
      /* the CPU changes the next product's input: it must be sent again */
      double *next = in[(i + 2) % 3];
      next[(size_t)i % count] += 0.001;
      min_h2d += bytes;
      writes++;
    }
  }
  struct bench_summary sum = {0};
  bench_add(&sum, x[(o.length - 1) & 1], count);
  bench_finish(&sum);
  double seconds = bench_now() - t0;

  printf("{\"program\": \"chain\", \"n\": %d, \"length\": %d, \"cpu_writes\": %d, "
         "\"seconds\": %.6f, \"norm\": %.17g, \"probe\": %.17g, "
         "\"flops\": %.6g, \"min_h2d_bytes\": %zu, \"min_d2h_bytes\": %zu}\n",
         n, o.length, writes, seconds, sum.norm, sum.probe,
         2.0 * n * (double)n * n * o.length, min_h2d, bytes);
  /* given back before exit, as a program does: nothing left to write back */
  free(in[0]), free(in[1]), free(in[2]), free(x[0]), free(x[1]);
  return 0;
}
