/*
 * bicg.cu - bicg's GPU side: the plan for the matvec engine.  Device arena
 * (matvec.cuh): r [0, n) | p [n, 2n) | q [2n, 3n) | s [3n, 4n), q and s
 * starting at 0.
 */
#include "rodinia-io/bicg/bicg.h"

#include "rodinia-io/matvec/matvec.cuh"

int bicg_run(struct rio_run *run, enum rio_version v)
{
  const uint64_t n = ((const struct matvec_state *)run->state)->n;
  struct matvec_plan p;
  p.n = n;
  p.nparts = 1;
  p.part_in[0] = BICG_IN_A;
  p.nvec = 2;
  p.vec_in[0] = BICG_IN_R;
  p.vec_in[1] = BICG_IN_P;
  p.nzero = 2 * n;
  p.x = n;     /* q = A p */
  p.y = 2 * n;
  p.w = 0;     /* s = A^T r */
  p.c = 3 * n;
  p.result = 2 * n;
  p.finish = NULL;
  return matvec_run(run, v, &p);
}

extern "C" const struct rio_bench rio_bench_bicg = {
    "bicg",
    "PolyBench bicg: q = A p, s = A^T r in one pass over A, 16384^2 floats streamed by rows (1 GiB)",
    bicg_setup,
    matvec_generate,
    bicg_reference,
    bicg_run,
    bicg_verify,
    matvec_teardown};
