/*
 * structdyn.c - the SemCache application: an implicit structural-dynamics
 * solver, written as an ordinary CPU program against CBLAS and LAPACKE
 * (it does not know what BLAS it runs on).
 *
 * The model: a chain of S substructures (subdomains), each condensed to m
 * degrees of freedom, so its matrices are dense: stiffness K_s (a spring
 * chain on an elastic foundation plus a dense condensed part), mass M_s
 * (lumped plus a dense consistent part), Rayleigh damping C_s = a M_s +
 * b K_s, and a dense coupling block K_{s,s+1} to the next substructure
 * (the global stiffness is block tridiagonal, K_{s+1,s} = K_{s,s+1}^T).
 * q load cases are integrated at once (each state is an m x q matrix), a
 * time-varying load F_s(t) = ramp(t) f_s sin(w_j t) on case j.
 *
 * Time stepping: Newmark-beta, beta = 1/4, gamma = 1/2 (average
 * acceleration, unconditionally stable), in its acceleration form, with
 * the coupling taken from the neighbours' predicted displacements
 * (a staggered partitioned scheme).  Per step:
 *
 *   every s:  u += dt v + dt^2/4 a;  v += dt/2 a           (predictors: axpy)
 *   every s:  r  = F_s(t)                                   (the CPU writes it; scal)
 *             r -= C_s v + K_s u                            (gemm)
 *             r -= K_{s-1,s}^T u_{s-1} + K_{s,s+1} u_{s+1}  (gemm: coupling)
 *             solve K_eff,s a' = r on a fresh copy of K_eff,s
 *             (LAPACKE_dgesv overwrites its matrix, so a naive program
 *             copies K_eff = M + dt/2 C + dt^2/4 K every time)
 *   every s:  a = a';  u += dt^2/4 a;  v += dt/2 a          (correctors: axpy)
 *
 * so K_s, C_s and the coupling blocks are reused every step and each u by
 * its neighbours, and every solve factors the same K_eff,s again.  Every
 * `monitor` steps the CPU reads one displacement (a program printing its
 * progress).  The matrices live on pages of their own (util.h).
 *
 * Usage: structdyn [-z tiny|quick|small|medium|large] [-s S] [-m M] [-q Q] [-t STEPS]
 * Prints one JSON line: the sizes, setup and stepping seconds (stepping
 * includes reading the final state), the final energy, the summary of the
 * final displacements and velocities (util.h) and the monitored trace.
 * Exit 0; 2 bad arguments or no memory; 3 a singular K_eff (dgesv info).
 */
#include <cblas.h>
#include <lapacke.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchlib/opts.h"
#include "util.h"

/* Newmark-beta, average acceleration */
#define SD_BETA 0.25
#define SD_GAMMA 0.5
#define SD_DT 0.05
#define SD_RAMP_T 2.0      /* the load grows linearly to full over this time */
#define SD_RAYLEIGH_A 0.02 /* C = a M + b K */
#define SD_RAYLEIGH_B 0.002
#define SD_COUPLING 0.05   /* norm of a coupling block against K's smallest eigenvalue (>= 1) */
#define SD_MONITOR 25      /* steps between the CPU's progress reads */

struct sd_size {
  const char *name;
  int subdomains, m, q, steps;
};

/* The presets (docs/semcache.md, "Benchmarks", says why these sizes). */
static const struct sd_size sd_presets[] = {
    {"tiny", 3, 96, 4, 40},       /* the CI smoke test: well under a second */
    {"quick", 4, 256, 8, 60},     /* make semcache-bench-quick */
    {"small", 4, 512, 16, 300},
    {"medium", 8, 1024, 32, 300},
    {"large", 6, 2048, 32, 200},
};

struct subdomain {
  double *k, *mass, *c, *keff; /* m x m, fixed after setup */
  double *couple;              /* K_{s,s+1}, m x m; NULL for the last subdomain */
  double *kw;                  /* m x m: the copy dgesv factors */
  double *u, *v, *a, *r, *f;   /* m x q: state, right-hand side, load pattern */
  lapack_int *ipiv;
};

static const char sd_usage[] =
    "usage: structdyn [-z tiny|quick|small|medium|large] [-s SUBDOMAINS] [-m DOFS] [-q LOADCASES] [-t STEPS]\n"
    "  -z SIZE        a preset (default small); -s, -m, -q, -t after it change one of its figures\n"
    "  -s SUBDOMAINS  subdomains (1 to 4096)\n"
    "  -m DOFS        degrees of freedom a subdomain (2 to 65536)\n"
    "  -q LOADCASES   load cases (1 to 65536)\n"
    "  -t STEPS       time steps (1 to 10000000)\n";

/* -z: a preset by name. */
static int sd_preset(struct bench_opts *p, struct sd_size *z)
{
  enum { N = sizeof sd_presets / sizeof sd_presets[0] };
  const char *names[N];
  int idx[N], n = 0;
  for (int i = 0; i < N; i++) names[i] = sd_presets[i].name;
  const struct bench_names choices = {names, N, "size"};
  int rc = bench_opts_names(p, &choices, idx, &n);
  if (rc == 0 && n != 1) rc = bench_opts_fail(p, "one preset");
  if (rc == 0) *z = sd_presets[idx[0]];
  return rc;
}

/* One figure of the custom size. */
static int sd_figure(struct bench_opts *p, long lo, long hi, int *dst, struct sd_size *z)
{
  z->name = "custom";
  return bench_opts_int(p, lo, hi, dst);
}

/* The command line (benchlib/opts.h): 0, 1 for --help, or -EINVAL with err. */
static int parse(int argc, char **argv, struct sd_size *z, char *err, size_t len)
{
  static const struct bench_opt table[] = {{"z", BENCH_OPT_VALUE, 'z'}, {"s", BENCH_OPT_VALUE, 's'},
                                           {"m", BENCH_OPT_VALUE, 'm'}, {"q", BENCH_OPT_VALUE, 'q'},
                                           {"t", BENCH_OPT_VALUE, 't'}};
  struct bench_opts p;
  int id, rc = 0;
  *z = sd_presets[2];
  bench_opts_init(&p, argc, argv, table, 5, err, len);
  while (rc == 0 && (id = bench_opts_next(&p)) != BENCH_OPTS_END) {
    switch (id) {
    case 'z': rc = sd_preset(&p, z); break;
    case 's': rc = sd_figure(&p, 1, 4096, &z->subdomains, z); break;
    case 'm': rc = sd_figure(&p, 2, 65536, &z->m, z); break;
    case 'q': rc = sd_figure(&p, 1, 65536, &z->q, z); break;
    case 't': rc = sd_figure(&p, 1, 10000000, &z->steps, z); break;
    default: rc = id == BENCH_OPTS_HELP ? 1 : id;
    }
  }
  return rc ? rc : bench_opts_operands(&p, 0);
}

/* x = alpha g g^T + diag on the diagonal (g: m x m of values in [-1, 1)). */
static void gram(double *x, int m, double alpha, double diag, uint64_t seed)
{
  size_t count = (size_t)m * m;
  double *g = bench_matrix(count);
  for (size_t i = 0; i < count; i++) g[i] = bench_value(i, seed);
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, m, m, m, alpha, g, m, g, m, 0.0, x, m);
  for (int i = 0; i < m; i++) x[(size_t)i * m + i] += diag;
  free(g);
}

static void setup(struct subdomain *d, int s, const struct sd_size *z)
{
  const int m = z->m, q = z->q;
  const size_t mm = (size_t)m * m, mq = (size_t)m * q;
  const double dt = SD_DT;
  d->k = bench_matrix(mm), d->mass = bench_matrix(mm), d->c = bench_matrix(mm);
  d->keff = bench_matrix(mm), d->kw = bench_matrix(mm);
  /* stiffness: condensed part G G^T / m (eigenvalues 0 .. 4), a spring
   * chain (2, -1) and a foundation spring 1: SPD, smallest eigenvalue >= 1 */
  gram(d->k, m, 1.0 / m, 3.0, 100 + s);
  for (int i = 0; i + 1 < m; i++) {
    d->k[(size_t)i * m + i + 1] -= 1.0;
    d->k[(size_t)(i + 1) * m + i] -= 1.0;
  }
  /* mass: lumped 1 plus a consistent part 0.1 H H^T / m */
  gram(d->mass, m, 0.1 / m, 1.0, 200 + s);
  for (size_t i = 0; i < mm; i++) {
    d->c[i] = SD_RAYLEIGH_A * d->mass[i] + SD_RAYLEIGH_B * d->k[i];
    d->keff[i] = d->mass[i] + SD_GAMMA * dt * d->c[i] + SD_BETA * dt * dt * d->k[i];
  }
  d->couple = NULL;
  if (s + 1 < z->subdomains) {
    /* entries in (-2 eps / m, 0]: every row sums to about -eps */
    d->couple = bench_matrix(mm);
    for (size_t i = 0; i < mm; i++)
      d->couple[i] = -SD_COUPLING / m * (bench_value(i, 300 + s) + 1.0);
  }
  d->u = bench_matrix(mq), d->v = bench_matrix(mq), d->a = bench_matrix(mq);
  d->r = bench_matrix(mq), d->f = bench_matrix(mq);
  memset(d->u, 0, mq * sizeof(double));
  memset(d->v, 0, mq * sizeof(double));
  memset(d->a, 0, mq * sizeof(double)); /* at rest, no load at t = 0 */
  for (size_t i = 0; i < mq; i++) d->f[i] = bench_value(i, 400 + s);
  d->ipiv = malloc((size_t)m * sizeof(lapack_int));
  if (!d->ipiv) exit(2);
}

static void release(struct subdomain *d)
{
  free(d->k), free(d->mass), free(d->c), free(d->keff), free(d->kw), free(d->couple);
  free(d->u), free(d->v), free(d->a), free(d->r), free(d->f), free(d->ipiv);
}

/* r = F_s(t): the CPU writes the load, the BLAS scales it by the ramp. */
static void load(struct subdomain *d, int m, int q, double t)
{
  for (int j = 0; j < q; j++) {
    const double w = sin((0.3 + 0.05 * j) * t);
    for (int i = 0; i < m; i++) d->r[(size_t)j * m + i] = d->f[(size_t)j * m + i] * w;
  }
  cblas_dscal(m * q, t < SD_RAMP_T ? t / SD_RAMP_T : 1.0, d->r, 1);
}

/* One time step of every subdomain; -1 when a K_eff is singular. */
static int step(struct subdomain *d, const struct sd_size *z, double t)
{
  const int S = z->subdomains, m = z->m, q = z->q, mq = m * q;
  const double dt = SD_DT;
  for (int s = 0; s < S; s++) {
    cblas_daxpy(mq, dt, d[s].v, 1, d[s].u, 1);
    cblas_daxpy(mq, dt * dt * (1 - 2 * SD_BETA) / 2, d[s].a, 1, d[s].u, 1);
    cblas_daxpy(mq, dt * (1 - SD_GAMMA), d[s].a, 1, d[s].v, 1);
  }
  for (int s = 0; s < S; s++) {
    struct subdomain *x = &d[s];
    load(x, m, q, t);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, q, m, -1.0, x->c, m, x->v, m, 1.0,
                x->r, m);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, q, m, -1.0, x->k, m, x->u, m, 1.0,
                x->r, m);
    if (s > 0)
      cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, m, q, m, -1.0, d[s - 1].couple, m,
                  d[s - 1].u, m, 1.0, x->r, m);
    if (s + 1 < S)
      cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, q, m, -1.0, x->couple, m,
                  d[s + 1].u, m, 1.0, x->r, m);
    memcpy(x->kw, x->keff, (size_t)m * m * sizeof(double));
    if (LAPACKE_dgesv(LAPACK_COL_MAJOR, m, q, x->kw, m, x->ipiv, x->r, m) != 0) return -1;
  }
  for (int s = 0; s < S; s++) {
    double *anew = d[s].r; /* the solve left a(t) in r */
    d[s].r = d[s].a, d[s].a = anew;
    cblas_daxpy(mq, SD_BETA * dt * dt, d[s].a, 1, d[s].u, 1);
    cblas_daxpy(mq, SD_GAMMA * dt, d[s].a, 1, d[s].v, 1);
  }
  return 0;
}

/* 1/2 (v^T M v + u^T K u), summed over subdomains and load cases (the
 * coupling's share left out: it is small and the same in every run). */
static double energy(struct subdomain *d, const struct sd_size *z)
{
  const int m = z->m, q = z->q;
  double e = 0;
  for (int s = 0; s < z->subdomains; s++) {
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, q, m, 1.0, d[s].mass, m, d[s].v, m,
                0.0, d[s].r, m);
    e += 0.5 * cblas_ddot(m * q, d[s].r, 1, d[s].v, 1);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, q, m, 1.0, d[s].k, m, d[s].u, m,
                0.0, d[s].r, m);
    e += 0.5 * cblas_ddot(m * q, d[s].r, 1, d[s].u, 1);
  }
  return e;
}

int main(int argc, char **argv)
{
  struct sd_size z;
  char err[256];
  int rc = parse(argc, argv, &z, err, sizeof(err));
  if ((rc = bench_opts_exit("structdyn", rc, err, sd_usage)) >= 0)
    return rc;
  struct subdomain *d = calloc((size_t)z.subdomains, sizeof *d);
  if (!d) return 2;
  double t0 = bench_now();
  for (int s = 0; s < z.subdomains; s++) setup(&d[s], s, &z);
  double t1 = bench_now(), trace = 0;
  for (int n = 0; n < z.steps; n++) {
    if (step(d, &z, (n + 1) * SD_DT) != 0) {
      fprintf(stderr, "structdyn: K_eff singular at step %d\n", n);
      return 3;
    }
    if ((n + 1) % SD_MONITOR == 0) trace += d[z.subdomains - 1].u[z.m - 1];
  }
  double e = energy(d, &z);
  struct bench_summary sum = {0};
  for (int s = 0; s < z.subdomains; s++) {
    bench_add(&sum, d[s].u, (size_t)z.m * z.q);
    bench_add(&sum, d[s].v, (size_t)z.m * z.q);
  }
  bench_finish(&sum);
  double t2 = bench_now();

  printf("{\"program\": \"structdyn\", \"size\": \"%s\", \"subdomains\": %d, \"m\": %d, "
         "\"q\": %d, \"steps\": %d, \"setup_seconds\": %.6f, \"seconds\": %.6f, "
         "\"energy\": %.17g, \"norm\": %.17g, \"probe\": %.17g, "
         "\"trace\": %.17g, \"matrix_bytes\": %zu}\n",
         z.name, z.subdomains, z.m, z.q, z.steps, t1 - t0, t2 - t1, e, sum.norm, sum.probe,
         trace, (size_t)z.subdomains * 6 * z.m * z.m * sizeof(double));
  for (int s = 0; s < z.subdomains; s++) release(&d[s]);
  free(d);
  return 0;
}
