/*
 * bicg.h - PolyBench-GPU's bicg (the BiCGStab kernel) in the rodinia-io
 * suite:
 *   q = A p,  s = A^T r
 *
 * Inputs (raw little-endian float; content and check: matvec.h):
 *   0 "A"  n x n, row-major
 *   1 "r"  n
 *   2 "p"  n
 * n = 16384 sqrt(scale), a multiple of 64, at least 64: A is 1 GiB at
 * scale 1.
 * Output: q then s, 2n floats.
 *
 * The GPU reads A once (matvec engine): each row block's rows are dotted
 * with p (q) and, weighted by r, added to the column sums (s).
 */
#ifndef RIO_BICG_H
#define RIO_BICG_H

#include "rodinia-io/harness/rio.h"
#include "rodinia-io/matvec/matvec.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BICG_FULL_N 16384ull

#define BICG_IN_A 0
#define BICG_IN_R 1
#define BICG_IN_P 2

/* state: struct matvec_state, result q | s (2n floats); generate and
 * teardown: matvec_generate, matvec_teardown */
int bicg_setup(struct rio_run *run);
int bicg_reference(struct rio_run *run);
int bicg_verify(struct rio_run *run);
/* bicg.cu: the four versions */
int bicg_run(struct rio_run *run, enum rio_version v);

extern const struct rio_bench rio_bench_bicg;

#ifdef __cplusplus
}
#endif
#endif /* RIO_BICG_H */
