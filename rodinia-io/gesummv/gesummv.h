/*
 * gesummv.h - PolyBench-GPU's gesummv (scalar, vector and matrix
 * multiplication) in the rodinia-io suite:
 *   y = alpha A x + beta B x,  alpha = 43532, beta = 12313 (PolyBench-GPU's)
 *
 * Inputs (raw little-endian float; content and check: matvec.h):
 *   0 "A"  n x n, row-major
 *   1 "B"  n x n, row-major
 *   2 "x"  n
 * n = 11584 sqrt(scale), a multiple of 64, at least 64: A and B are
 * 1.07 GB together at scale 1 (n = 11584).
 * Output: y, n floats.
 *
 * The GPU streams A and B as one 2n x n matrix [A; B] through the
 * matvec engine (row products only: dots d = [A x; B x]), then
 * y_i = alpha d_i + beta d_{n+i}.
 */
#ifndef RIO_GESUMMV_H
#define RIO_GESUMMV_H

#include "rodinia-io/harness/rio.h"
#include "rodinia-io/matvec/matvec.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GESUMMV_FULL_N 11584ull
#define GESUMMV_ALPHA 43532.0f
#define GESUMMV_BETA 12313.0f

#define GESUMMV_IN_A 0
#define GESUMMV_IN_B 1
#define GESUMMV_IN_X 2

/* state: struct matvec_state, result y (n floats); generate and teardown:
 * matvec_generate, matvec_teardown */
int gesummv_setup(struct rio_run *run);
int gesummv_reference(struct rio_run *run);
int gesummv_verify(struct rio_run *run);
/* y of `rows` rows from those rows of A and B (a and b: rows x n floats)
 * and x, as the reference computes them (the products in double, on the
 * host's threads; gesummv_reference is gesummv_cpu_rows over all n rows):
 * y[k] is the same float whichever rows are asked for.  0 or -errno. */
int gesummv_cpu_rows(const float *a, const float *b, const float *x, uint64_t n, uint64_t rows, float *y);
/* gesummv.cu: the four versions.  gesummv_run is gesummv_run_rows(run, v,
 * 0, n). */
int gesummv_run(struct rio_run *run, enum rio_version v);
/* y's rows [i0, i1) by version v into the state's got (its other rows 0):
 * the gpufs versions read rows [i0, i1) of A and B and all of x, nothing
 * else (matvec_run_rows).  Each y_i is one warp's dot of row i, whichever
 * rows the run covers, so a part gives the floats of the whole run. */
int gesummv_run_rows(struct rio_run *run, enum rio_version v, uint64_t i0, uint64_t i1);

extern const struct rio_bench rio_bench_gesummv;

#ifdef __cplusplus
}
#endif
#endif /* RIO_GESUMMV_H */
