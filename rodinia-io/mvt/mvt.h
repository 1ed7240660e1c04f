/*
 * mvt.h - PolyBench-GPU's mvt (matrix-vector product and transpose) in the
 * rodinia-io suite:
 *   x1 = x1 + A y1,  x2 = x2 + A^T y2
 *
 * Inputs (raw little-endian float; content and check: matvec.h):
 *   0 "A"  n x n, row-major
 *   1 "y"  y1 then y2, n floats each
 *   2 "x"  x1 then x2 as they start, n floats each
 * (the four vectors share two files: the suite takes at most
 * RIO_MAX_INPUTS = 4 inputs a benchmark).  n = 16384 sqrt(scale), a
 * multiple of 64, at least 64: A is 1 GiB at scale 1.
 * Output: x1 then x2, 2n floats.
 *
 * The GPU reads A once (matvec engine): each row block's rows are dotted
 * with y1 (x1) and, weighted by y2, added to the column sums (x2).
 */
#ifndef RIO_MVT_H
#define RIO_MVT_H

#include "rodinia-io/harness/rio.h"
#include "rodinia-io/matvec/matvec.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MVT_FULL_N 16384ull

#define MVT_IN_A 0
#define MVT_IN_Y 1
#define MVT_IN_X 2

/* state: struct matvec_state, result x1 | x2 (2n floats); generate and
 * teardown: matvec_generate, matvec_teardown */
int mvt_setup(struct rio_run *run);
int mvt_reference(struct rio_run *run);
int mvt_verify(struct rio_run *run);
/* mvt.cu: the four versions */
int mvt_run(struct rio_run *run, enum rio_version v);

extern const struct rio_bench rio_bench_mvt;

#ifdef __cplusplus
}
#endif
#endif /* RIO_MVT_H */
