/*
 * stack.c - BLAS operands on the stack, as ordinary programs have them,
 * run alone and under libsemcache.so (make test-semcache,
 * semcache/tests/loaders_test.sh): the drop-in must copy them for each
 * call and never protect them, since the stack reuses those pages without
 * a call it sees.
 *   - arrays on main's stack as gemm's, gemv's and dot's operands (C
 *     written: write-back would leave its pages without access), then
 *     deeper calls whose frames reuse those pages;
 *   - alloca'd operands, then the same;
 *   - the same in a second thread, and main's arrays used by its call;
 *   - a cached heap matrix read where the stack has no room left for the
 *     fault handler's frame (a context on a small stack of its own): the
 *     handler must run on its own signal stack.
 * Prints "stack: ok" and exits 0, or a line per failure and exits 1.
 */
#include <alloca.h>
#include <cblas.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#define N 64 /* 32 KiB a matrix: whole pages inside each */
#define DEPTH 400

static int wrong; /* relaxed atomics: two threads count */

static void check(const char *what, double got, double want)
{
  if (fabs(got - want) > 1e-9 * fmax(1.0, fabs(want))) {
    printf("FAILED %s: %.17g, want %.17g\n", what, got, want);
    __atomic_add_fetch(&wrong, 1, __ATOMIC_RELAXED);
  }
}

static double val(int i, int seed)
{
  return (double)((i * 2654435761u + (unsigned)seed * 40503u) % 1000) / 250.0 - 2.0;
}

/* Deep frames over the pages the operands had: each writes 1 KiB of its
 * own and sums it on the way back. */
__attribute__((noinline)) static uint64_t deep(int depth, uint64_t seed)
{
  volatile unsigned char buf[1024];
  for (int i = 0; i < 1024; i++) buf[i] = (unsigned char)(seed + (uint64_t)i);
  uint64_t sum = depth ? deep(depth - 1, seed * 31 + 7) : 0;
  for (int i = 0; i < 1024; i++) sum += buf[i];
  return sum;
}

/* C = A B, y = A^T x, x . y on a, b, c (N x N) and x, y (N), checked. */
static void calls_on(double *a, double *b, double *c, double *x, double *y)
{
  for (int i = 0; i < N * N; i++) a[i] = val(i, 1), b[i] = val(i, 2), c[i] = 0;
  for (int i = 0; i < N; i++) x[i] = val(i, 3);
  for (int r = 0; r < 2; r++) /* twice: a cached operand would be a hit */
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0, a, N, b, N, 0.0, c, N);
  cblas_dgemv(CblasColMajor, CblasTrans, N, N, 1.0, a, N, x, 1, 0.0, y, 1);
  for (int j = 0; j < N; j += 9)
    for (int i = 0; i < N; i += 7) {
      double w = 0;
      for (int k = 0; k < N; k++) w += a[i + k * N] * b[k + j * N];
      check("dgemm on the stack", c[i + j * N], w);
    }
  double w = 0;
  for (int i = 0; i < N; i++) w += y[i] * x[i];
  check("ddot on the stack", cblas_ddot(N, y, 1, x, 1), w);
}

__attribute__((noinline)) static void arrays(void)
{
  double a[N * N], b[N * N], c[N * N], x[N], y[N];
  calls_on(a, b, c, x, y);
}

__attribute__((noinline)) static void allocas(void)
{
  double *a = alloca(N * N * sizeof(double)), *b = alloca(N * N * sizeof(double));
  double *c = alloca(N * N * sizeof(double)), *x = alloca(N * sizeof(double));
  calls_on(a, b, c, x, alloca(N * sizeof(double)));
}

/* The stack cases, each followed by deep calls over its pages. */
static void *stack_cases(void *main_x)
{
  const uint64_t want = deep(DEPTH, 1);
  arrays();
  if (deep(DEPTH, 1) != want) check("deep calls after stack operands", 0, 1);
  allocas();
  if (deep(DEPTH, 1) != want) check("deep calls after alloca'd operands", 0, 1);
  if (main_x) { /* main's array: another thread's stack */
    double y[N];
    for (int i = 0; i < N; i++) y[i] = 1;
    cblas_dscal(N, 2.0, main_x, 1);
    check("dscal of main's array", cblas_ddot(N, main_x, 1, y, 1), 2.0 * N * (N - 1) / 2);
  }
  return NULL;
}

/* ---- the fault handler's own stack ---- */

static double *heap_c;
static char *small_base; /* the lowest usable byte of the small stack */
static volatile double seen;

/* On the small stack: use it up to 256 bytes, then read the
 * cached matrix (write-back: its pages have no access, so the read faults
 * with no room below for the handler's frame). */
static void tight(void)
{
  char here;
  const size_t room = (size_t)(&here - small_base);
  volatile char *pad = alloca(room > 256 ? room - 256 : 1);
  pad[0] = 1;
  seen = heap_c[N * N / 2];
}

static void no_room_for_the_handler(void)
{
  double *a = malloc(N * N * sizeof(double)), *b = malloc(N * N * sizeof(double));
  heap_c = malloc(N * N * sizeof(double));
  for (int i = 0; i < N * N; i++) a[i] = val(i, 4), b[i] = val(i, 5);
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0, a, N, b, N, 0.0, heap_c, N);
  const int i = (N * N / 2) % N, j = (N * N / 2) / N;
  const double want = cblas_ddot(N, a + i, N, b + (size_t)j * N, 1);
  /* the small stack: 64 KiB over a guard page */
  const size_t ps = (size_t)sysconf(_SC_PAGESIZE), len = 16 * ps;
  char *m = mmap(NULL, len + ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return;
  mprotect(m, ps, PROT_NONE);
  small_base = m + ps;
  ucontext_t back, ctx;
  getcontext(&ctx);
  ctx.uc_stack.ss_sp = small_base;
  ctx.uc_stack.ss_size = len;
  ctx.uc_link = &back;
  makecontext(&ctx, tight, 0);
  swapcontext(&back, &ctx);
  check("a cached matrix read with no stack left", seen, want);
  munmap(m, len + ps);
  free(a), free(b), free(heap_c);
}

int main(void)
{
  double main_x[N];
  for (int i = 0; i < N; i++) main_x[i] = i;
  stack_cases(NULL);
  pthread_t t;
  if (pthread_create(&t, NULL, stack_cases, main_x) == 0) pthread_join(t, NULL);
  else check("pthread_create", 0, 1);
  no_room_for_the_handler();
  if (wrong) return 1;
  printf("stack: ok\n");
  return 0;
}
