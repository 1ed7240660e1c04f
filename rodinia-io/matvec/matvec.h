/*
 * matvec.h - what the rodinia-io ports of PolyBench-GPU's matrix-vector
 * benchmarks (gesummv, mvt, bicg, atax) share: the shape of a square float
 * matrix streamed from its file by row blocks, the inputs' content, the
 * CPU reference's products and the check.  Plain C (matvec_host.c); the
 * streaming engine of the GPU versions is in matvec.cuh / matvec.cu.
 *
 * Every benchmark of the family reads one n x n float matrix (gesummv two),
 * row-major, one file each, plus small vector files, and computes some of
 *   row products     y_i += A_i . x               (A x, one dot per row)
 *   column products  c_j += sum_i w_i A_ij        (A^T w)
 * in one pass over the matrix: the rows arrive in row blocks of about
 * 1 MiB, and each row block's rows are dotted with x and their
 * contributions w_i A_i added to the column sums before the next arrives.
 *
 * Content: every input is rio_rand01(seed, input index + 1, element), in
 * [0, 1): PolyBench's init formulas (i * j / n and the like) grow with n
 * past what float sums of 16384 terms keep exactly, and uniform values make
 * every term of every sum >= 0, which is what makes the check below sound.
 *
 * Check (PolyBench's): |got - want| / |want| <= 0.05 %, that is
 * rio_check_f32 with rtol MATVEC_RTOL = 5e-4 and atol MATVEC_ATOL = 1e-5,
 * which only matters for a true value of 0 (none is: every sum has >= 64
 * terms >= 0).  The reference sums in double.  Why the GPU's float sums
 * stay inside: with terms >= 0 a float sum of k terms in sequence errs by
 * at most k u its value (u = 2^-24), with no cancellation to magnify it.
 * The GPU's float chains (matvec.cu): a row product is n / 32 + 5 terms
 * (one lane's fmas, then a 5-level warp tree) plus one rounding when it is
 * added to y; a column sum is at most MATVEC_MAX_BLOCK_ROWS fmas per row
 * block, after which it goes on in double and is rounded once to float.
 * atax's weights are the GPU's row products, which adds their error to its
 * column sums; gesummv's alpha and beta combine two row products with
 * positive coefficients (two roundings).  At the largest side,
 * MATVEC_MAX_N = 65536, all together stay below
 * (2048 + 6 + 512 + 2) u < 1.6e-4, a third of the tolerance.
 */
#ifndef RIO_MATVEC_H
#define RIO_MATVEC_H

#include <stdint.h>

#include "rodinia-io/harness/rio.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MATVEC_STEP 64ull          /* the side is a multiple of it (whole float4s per row, 256 B rows) */
#define MATVEC_MIN_N 64ull
#define MATVEC_MAX_N 65536ull      /* the bound on the float error above (scale 16 of a 16384 side) */
#define MATVEC_BLOCK_BYTES (1ull << 20) /* a row block: the whole rows that fit in 1 MiB */
#define MATVEC_MAX_BLOCK_ROWS 512ull    /* min(n, 2^18 / n) for n a multiple of 64 */
#define MATVEC_GROUPS 128ull       /* shares of the row blocks: gpufs blocks, column partials */
#define MATVEC_RTOL 5e-4
#define MATVEC_ATOL 1e-5

/* How a matrix of side n (nparts of them stacked by rows: gesummv's A and
 * B are one 2n x n matrix) is cut.  Row block k of part p holds rows
 * [k block_rows, min(n, (k + 1) block_rows)) of that part; global row
 * block p nblocks + k.  Share g (g < groups) is the contiguous run of
 * global row blocks [total g / groups, total (g + 1) / groups): one gpufs
 * block reads and consumes it in order, and its column sums go to partial
 * row g; the memory versions keep the same shares and order, so every
 * version computes the same floats. */
struct matvec_shape {
  uint64_t n;           /* columns; rows of each part */
  uint64_t nparts;
  uint64_t row0, rows;  /* the rows of each part in the pass: [row0, row0 + rows) (matvec_shape_of: all) */
  uint64_t block_rows;  /* rows of a row block (the last of a part may have fewer) */
  uint64_t nblocks;     /* row blocks of a part */
  uint64_t total;       /* nparts * nblocks */
  uint64_t groups;      /* min(MATVEC_GROUPS, total) */
};

struct matvec_shape matvec_shape_of(uint64_t n, uint64_t nparts);
/* The same over rows [row0, row0 + rows) of each part only (a rank's share
 * under MPI, rodinia-io/mpi/): row blocks of the same block_rows from
 * row0 on, the last of a part cut at row0 + rows. */
struct matvec_shape matvec_shape_rows(uint64_t n, uint64_t nparts, uint64_t row0, uint64_t rows);

#ifdef __CUDACC__
#define MATVEC_HD __host__ __device__ __forceinline__
#else
#define MATVEC_HD inline
#endif

/* Share g's global row blocks [*lo, *hi) (host and GPU). */
static MATVEC_HD void matvec_share(const struct matvec_shape *sh, uint64_t g, uint64_t *lo, uint64_t *hi)
{
  *lo = sh->total * g / sh->groups;
  *hi = sh->total * (g + 1) / sh->groups;
}

/* Global row block rb: its part, its first row in the part, its rows. */
static MATVEC_HD void matvec_rows_of(const struct matvec_shape *sh, uint64_t rb, uint64_t *part, uint64_t *row0,
                                     uint64_t *rows)
{
  const uint64_t end = sh->row0 + sh->rows;
  *part = rb / sh->nblocks;
  *row0 = sh->row0 + rb % sh->nblocks * sh->block_rows;
  *rows = end - *row0 < sh->block_rows ? end - *row0 : sh->block_rows;
}

/* The side for a scale: full sqrt(scale), a multiple of MATVEC_STEP, at
 * least MATVEC_MIN_N; 0 when the scale is not positive or the side would
 * pass MATVEC_MAX_N. */
uint64_t matvec_side(double scale, uint64_t full);

/* A benchmark's state: the side, and its result as runs return it and as
 * the reference has it, nout floats each (its output vectors one after
 * the other). */
struct matvec_state {
  uint64_t n;
  uint64_t nout;
  float *got;
  float *want;
};

/* Common setup: n from run->scale and full (-EINVAL with run->why when
 * matvec_side refuses it), run->state with got and want of nout_per_n * n
 * floats, no inputs yet (matvec_input adds them). */
int matvec_setup(struct rio_run *run, const char *bench, uint64_t full, uint64_t nout_per_n);

/* Declare the next input: name and a size of `floats` floats. */
void matvec_input(struct rio_run *run, const char *name, uint64_t floats);

/* Every input's content (see above); a rio_bench's generate. */
int matvec_generate(struct rio_run *run, int i, void *buf);

/* Free run->state; a rio_bench's teardown. */
void matvec_teardown(struct rio_run *run);

/* Reference products in double, on the host's threads:
 *   rows: out[i] = sum_j a[i][j] x[j], i < rows
 *   cols: out[j] = sum_i w[i] a[i][j], i < rows
 * a has n columns.  0 or -errno (the threads). */
int matvec_ref_rows(const float *a, uint64_t rows, uint64_t n, const float *x, double *out);
int matvec_ref_cols(const float *a, uint64_t rows, uint64_t n, const double *w, double *out);

/* got[off, off + n) against want's with the family's tolerance; what names
 * the vector in run->why. */
int matvec_check(struct rio_run *run, const char *what, uint64_t off, uint64_t n);

#ifdef __cplusplus
}
#endif
#endif /* RIO_MATVEC_H */
