/*
 * matvec.cuh - the row-block streaming engine of the matrix-vector family
 * (matvec.cu): the four versions of moving a square float matrix from its
 * file(s) onto the GPU while computing, in one pass,
 *   y += A x      (row products: a dot per row, as its row arrives)
 *   c += A^T w    (column products: each arriving row adds w_i A_i)
 * A benchmark describes its vectors and products as a plan (which inputs
 * are the matrix, which the small vectors, where x, y, w and c live in one
 * device array of floats, the "arena") and calls matvec_run, which does
 * the whole timed run and leaves the result in its state's got.
 */
#ifndef RIO_MATVEC_CUH
#define RIO_MATVEC_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "rodinia-io/harness/rio_cuda.h"
#include "rodinia-io/matvec/matvec.h"

#define MATVEC_NONE UINT64_MAX /* an arena offset that is not used */

/*
 * The arena: the small inputs vec_in[0..nvec) loaded whole, one after the
 * other (each its file's size), then nzero floats set to 0 before every
 * run.  Offsets below count floats from its start.
 *   x  the vector of the row products, n floats; NONE: no row products
 *   y  nparts * n floats, the row products are added to (row r of part p
 *      is element p n + r); NONE with x
 *   w  n weights of the column products; NONE: none.  w may be y (atax:
 *      the weight of a row is its own product): each row block's products
 *      are complete before its column sums read them.  Only with nparts 1.
 *   c  n floats the column products are added to
 *   result  where the benchmark's nout floats of result begin
 * finish: the benchmark's own last step (gesummv's alpha/beta sum), queued
 * on s after the products; NULL: none.  0 or -errno (run->why).
 */
struct matvec_plan {
  uint64_t n;
  int nparts;
  int part_in[2];
  int nvec;
  int vec_in[RIO_MAX_INPUTS];
  uint64_t nzero;
  uint64_t x, y, w, c;
  uint64_t result;
  int (*finish)(struct rio_run *run, float *arena, cudaStream_t s);
};

/* Version v of the plan end to end (the timing rule of rio.h): the inputs
 * from their files, the products, finish, the result into the state's got
 * (struct matvec_state); fills run->t.  0 or -errno (run->why). */
int matvec_run(struct rio_run *run, enum rio_version v, const struct matvec_plan *p);

/* The same over rows [row0, row0 + rows) of each part only
 * (matvec_shape_rows): the gpufs versions read those rows of the files and
 * no others; the memory versions still load whole files.  y gets the
 * products of those rows (the others keep 0) and c their column products.
 * matvec_run is matvec_run_rows(run, v, p, 0, p->n). */
int matvec_run_rows(struct rio_run *run, enum rio_version v, const struct matvec_plan *p, uint64_t row0,
                    uint64_t rows);

#endif /* RIO_MATVEC_CUH */
