/*
 * mvt.cu - mvt's GPU side: the plan for the matvec engine.  The files "y"
 * and "x" are loaded side by side, so the products are added straight to
 * x1 and x2 as they start: device arena (matvec.cuh)
 * y1 [0, n) | y2 [n, 2n) | x1 [2n, 3n) | x2 [3n, 4n).
 */
#include "rodinia-io/mvt/mvt.h"

#include "rodinia-io/matvec/matvec.cuh"

int mvt_run(struct rio_run *run, enum rio_version v)
{
  const uint64_t n = ((const struct matvec_state *)run->state)->n;
  struct matvec_plan p;
  p.n = n;
  p.nparts = 1;
  p.part_in[0] = MVT_IN_A;
  p.nvec = 2;
  p.vec_in[0] = MVT_IN_Y;
  p.vec_in[1] = MVT_IN_X;
  p.nzero = 0;
  p.x = 0;     /* x1 += A y1 */
  p.y = 2 * n;
  p.w = n;     /* x2 += A^T y2 */
  p.c = 3 * n;
  p.result = 2 * n;
  p.finish = NULL;
  return matvec_run(run, v, &p);
}

extern "C" const struct rio_bench rio_bench_mvt = {
    "mvt",
    "PolyBench mvt: x1 += A y1, x2 += A^T y2 in one pass over A, 16384^2 floats streamed by rows (1 GiB)",
    mvt_setup,
    matvec_generate,
    mvt_reference,
    mvt_run,
    mvt_verify,
    matvec_teardown};
