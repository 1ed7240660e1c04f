/*
 * gesummv.cu - gesummv's GPU side: the plan for the matvec engine (A and
 * B stacked as one 2n x n matrix, row products with x) and the last step,
 * y = alpha A x + beta B x, from the two halves of the products.
 *
 * The device arena (matvec.cuh): x [0, n) | d = [A x; B x] [n, 3n) |
 * y [3n, 4n).
 */
#include "rodinia-io/gesummv/gesummv.h"

#include <errno.h>

#include "rodinia-io/matvec/matvec.cuh"

#define GESUMMV_THREADS 256

/* y_i = alpha d_i + beta d_{n+i}: one thread an element. */
__global__ void gesummv_combine_kernel(const float *d, float *y, uint64_t n)
{
  const uint64_t i = (uint64_t)blockIdx.x * GESUMMV_THREADS + threadIdx.x;
  if (i < n)
    y[i] = fmaf(GESUMMV_ALPHA, d[i], GESUMMV_BETA * d[n + i]);
}

static int gesummv_finish(struct rio_run *run, float *arena, cudaStream_t s)
{
  const uint64_t n = ((const struct matvec_state *)run->state)->n;
  gesummv_combine_kernel<<<(unsigned)((n + GESUMMV_THREADS - 1) / GESUMMV_THREADS), GESUMMV_THREADS, 0, s>>>(
      arena + n, arena + 3 * n, n);
  return RIO_CUDA(run, cudaGetLastError());
}

int gesummv_run(struct rio_run *run, enum rio_version v)
{
  return gesummv_run_rows(run, v, 0, ((const struct matvec_state *)run->state)->n);
}

int gesummv_run_rows(struct rio_run *run, enum rio_version v, uint64_t i0, uint64_t i1)
{
  const uint64_t n = ((const struct matvec_state *)run->state)->n;
  struct matvec_plan p;
  p.n = n;
  p.nparts = 2;
  p.part_in[0] = GESUMMV_IN_A;
  p.part_in[1] = GESUMMV_IN_B;
  p.nvec = 1;
  p.vec_in[0] = GESUMMV_IN_X;
  p.nzero = 3 * n;
  p.x = 0;
  p.y = n;
  p.w = MATVEC_NONE;
  p.c = MATVEC_NONE;
  p.result = 3 * n;
  p.finish = gesummv_finish;
  if (i1 <= i0 || i1 > n)
    return rio_fail(run, -EINVAL, "gesummv: rows [%llu, %llu) of %llu", (unsigned long long)i0,
                    (unsigned long long)i1, (unsigned long long)n);
  return matvec_run_rows(run, v, &p, i0, i1 - i0);
}

extern "C" const struct rio_bench rio_bench_gesummv = {
    "gesummv",
    "PolyBench gesummv: y = alpha A x + beta B x, A and B 11584^2 floats streamed by rows (1.07 GB)",
    gesummv_setup,
    matvec_generate,
    gesummv_reference,
    gesummv_run,
    gesummv_verify,
    matvec_teardown};
