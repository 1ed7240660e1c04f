/*
 * pathfinder.h - Rodinia's pathfinder in the rodinia-io suite: dynamic
 * programming down a grid of rows x cols int32 costs.
 *
 * Inputs (raw little-endian int32):
 *   0 "first"  row 0 of the grid, cols values
 *   1 "wall"   rows 1 .. rows - 1, (rows - 1) x cols values, row-major
 * Cell (r, c) = rio_rand(seed, 1, r * cols + c) % 10 (one random field
 * over both files).
 * cols = 262144 * scale, a multiple of 1024, at least 2048; rows = 953
 * (1 MiB + 952 MiB at scale 1).  Below the scale of 2048 columns the rows
 * shrink in proportion instead, to 953 * (262144 * scale) / 2048, at least
 * 32, so that tiny scales give tiny inputs.
 *
 * The step from row r - 1 (src) to row r (dst), starting at src = first:
 *   dst[c] = wall[r][c] + min(src[c - 1], src[c], src[c + 1])
 * where the border columns take only the neighbours that exist.
 * Output: the last row (cols int32; every value is below 10 * rows),
 * exact against the CPU reference.
 */
#ifndef RIO_PATHFINDER_H
#define RIO_PATHFINDER_H

#include <stdint.h>

#include "rodinia-io/harness/rio.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PATHFINDER_FULL_COLS 262144ull
#define PATHFINDER_FULL_ROWS 953ull
#define PATHFINDER_MIN_COLS 2048ull
#define PATHFINDER_MIN_ROWS 32ull

#define PATHFINDER_IN_FIRST 0
#define PATHFINDER_IN_WALL 1

struct pathfinder_state {
  uint64_t cols, rows;
  int32_t *got;  /* the last run's last row (cols), written by pathfinder_run */
  int32_t *want; /* the reference's (cols) */
};

int pathfinder_setup(struct rio_run *run);
int pathfinder_generate(struct rio_run *run, int i, void *buf);
int pathfinder_reference(struct rio_run *run);
int pathfinder_verify(struct rio_run *run);
void pathfinder_teardown(struct rio_run *run);

/* The columns [*b_lo, *b_hi) of every row that the last row's columns
 * [lo, hi) depend on: [lo, hi) widened by rows - 1 each side, clipped to
 * the grid (a cell reaches one column further a row). */
void pathfinder_window(uint64_t cols, uint64_t rows, uint64_t lo, uint64_t hi, uint64_t *b_lo, uint64_t *b_hi);

/* The last row's columns [lo, hi) into out (hi - lo values), on the
 * calling thread, from the window [b_lo, b_hi) of pathfinder_window:
 * first[x] and wall[(r - 1) stride + x] hold column b_lo + x of row 0 and
 * of row r.  The window is run as a grid of its own; a cut edge (b_lo > 0
 * or b_hi < cols) is wrong in one more column a row, rows - 1 columns at
 * the last row, which is why the window is that much wider.  The
 * reference is this over slices of the columns.  0 or -ENOMEM. */
int pathfinder_last_columns(const int32_t *first, const int32_t *wall, uint64_t stride, uint64_t cols,
                            uint64_t rows, uint64_t lo, uint64_t hi, int32_t *out);

/* In pathfinder.cu (CUDA).  pathfinder_run is pathfinder_run_columns(run,
 * v, 0, cols, the state's got). */
int pathfinder_run(struct rio_run *run, enum rio_version v);
/* The last row's columns [lo, hi) by version v into out (hi - lo values,
 * host memory).  A part of the columns only in the gpufs versions (-EINVAL
 * in the others, which load whole files): they read the window
 * (pathfinder_window) of each row and nothing else, and run the pyramids
 * on it as on a grid of its own (pathfinder_last_columns says why that is
 * exact on [lo, hi)). */
int pathfinder_run_columns(struct rio_run *run, enum rio_version v, uint64_t lo, uint64_t hi, int32_t *out);
extern const struct rio_bench rio_bench_pathfinder;

#ifdef __cplusplus
}
#endif
#endif /* RIO_PATHFINDER_H */
