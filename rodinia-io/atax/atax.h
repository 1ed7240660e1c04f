/*
 * atax.h - PolyBench-GPU's atax (matrix transpose and vector
 * multiplication) in the rodinia-io suite:
 *   tmp = A x,  y = A^T tmp
 *
 * Inputs (raw little-endian float; content and check: matvec.h):
 *   0 "A"  n x n, row-major
 *   1 "x"  n
 * n = 16384 sqrt(scale), a multiple of 64, at least 64: A is 1 GiB at
 * scale 1.
 * Output: tmp then y, 2n floats (PolyBench's output is y; tmp is checked
 * too, so that a wrong y is traced to its step).
 *
 * The GPU reads A once (matvec engine): tmp_i = A_i . x needs only row i,
 * so as each row block arrives its rows' products are computed and then
 * tmp_i A_i added to the column sums (y).
 */
#ifndef RIO_ATAX_H
#define RIO_ATAX_H

#include "rodinia-io/harness/rio.h"
#include "rodinia-io/matvec/matvec.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ATAX_FULL_N 16384ull

#define ATAX_IN_A 0
#define ATAX_IN_X 1

/* state: struct matvec_state, result tmp | y (2n floats); generate and
 * teardown: matvec_generate, matvec_teardown */
int atax_setup(struct rio_run *run);
int atax_reference(struct rio_run *run);
int atax_verify(struct rio_run *run);
/* atax.cu: the four versions */
int atax_run(struct rio_run *run, enum rio_version v);

extern const struct rio_bench rio_bench_atax;

#ifdef __cplusplus
}
#endif
#endif /* RIO_ATAX_H */
