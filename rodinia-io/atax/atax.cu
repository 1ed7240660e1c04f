/*
 * atax.cu - atax's GPU side: the plan for the matvec engine.  The column
 * products' weights are the row products themselves (w = y = tmp): the
 * engine finishes a row block's products before its column sums read
 * them.  Device arena (matvec.cuh): x [0, n) | tmp [n, 2n) | y [2n, 3n),
 * tmp and y starting at 0.
 */
#include "rodinia-io/atax/atax.h"

#include "rodinia-io/matvec/matvec.cuh"

int atax_run(struct rio_run *run, enum rio_version v)
{
  const uint64_t n = ((const struct matvec_state *)run->state)->n;
  struct matvec_plan p;
  p.n = n;
  p.nparts = 1;
  p.part_in[0] = ATAX_IN_A;
  p.nvec = 1;
  p.vec_in[0] = ATAX_IN_X;
  p.nzero = 2 * n;
  p.x = 0;     /* tmp = A x */
  p.y = n;
  p.w = n;     /* y = A^T tmp */
  p.c = 2 * n;
  p.result = n;
  p.finish = NULL;
  return matvec_run(run, v, &p);
}

extern "C" const struct rio_bench rio_bench_atax = {
    "atax",
    "PolyBench atax: y = A^T (A x) in one pass over A, 16384^2 floats streamed by rows (1 GiB)",
    atax_setup,
    matvec_generate,
    atax_reference,
    atax_run,
    atax_verify,
    matvec_teardown};
