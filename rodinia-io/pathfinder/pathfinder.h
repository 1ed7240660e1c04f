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

/* In pathfinder.cu (CUDA). */
int pathfinder_run(struct rio_run *run, enum rio_version v);
extern const struct rio_bench rio_bench_pathfinder;

#ifdef __cplusplus
}
#endif
#endif /* RIO_PATHFINDER_H */
