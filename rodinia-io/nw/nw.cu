/*
 * nw.cu - nw's GPU side: the score matrix by a wavefront of tiles, and the
 * four versions.
 *
 * The w x w matrix is cut into NW_TILE x NW_TILE tiles (row 0 and column 0
 * are in the first tiles but keep their values).  Tile (bi, bj) needs the
 * row above it and the column left of it, so the tiles of one anti-diagonal
 * bi + bj = d are independent: one launch per d (2 w / T - 1 launches), one
 * warp per tile, the tile and its halo in shared memory, the warp sweeping
 * the tile's own anti-diagonals (2 T - 1 steps, lane t on row t).
 *
 * I/O: diagonal d reads rows [0, (d + 1) T) of both files only, so the
 * expert version starts both loads and lets each of the first w / T
 * diagonals wait (on the GPU) for its row band alone: the wavefront follows
 * the data in.  The gpufs versions load both files whole with
 * rio_gpufs_load, then run the same kernels: greading inside the wavefront
 * would mean 32 reads of 128 bytes per tile and file (a tile's rows are w
 * ints apart) in each of 2 w / T - 1 short launches, and the computation
 * it could hide is small: at w = 16384 on an H100 the 1023 launches take
 * 9 ms, the 2 GiB load 50-85 ms.
 */
#include "rodinia-io/nw/nw.h"

#include <errno.h>
#include <string.h>

#include "rodinia-io/harness/rio_cuda.h"

#define T ((int)NW_TILE)

static_assert(NW_TILE == 32, "one warp a tile: lane t holds the tile's row t");

/*
 * The tiles of anti-diagonal d (nb tiles a side, w = nb T), block x taking
 * the x-th from the top, in place in m.  One warp a block; it synchronizes
 * with __syncwarp, so every lane must run the whole kernel.
 */
__global__ void __launch_bounds__(NW_TILE) nw_diag_kernel(int32_t *m, const int32_t *ref, uint64_t w,
                                                        uint64_t nb, uint64_t d, int penalty)
{
  /* s: the score tile at [1..T][1..T], the row above at [0][*], the column
   * left at [*][0]; rows of T + 2 so that a lane walk along an
   * anti-diagonal (stride T + 1) hits 32 different banks */
  __shared__ int32_t s[T + 1][T + 2];
  __shared__ int32_t r[T][T + 2];
  const uint64_t bi = (d < nb ? 0 : d - nb + 1) + blockIdx.x, bj = d - bi;
  const uint64_t i0 = bi * T, j0 = bj * T;
  const int t = threadIdx.x;

  /* the halo exists except along the matrix's edge, whose cells (row 0,
   * column 0) are never computed and so never need one */
  if (bi > 0) {
    s[0][t + 1] = m[(i0 - 1) * w + j0 + t];
    if (t == 0 && bj > 0)
      s[0][0] = m[(i0 - 1) * w + j0 - 1];
  }
  if (bj > 0)
    s[t + 1][0] = m[(i0 + t) * w + j0 - 1];
  for (int row = 0; row < T; row++) {
    s[row + 1][t + 1] = m[(i0 + row) * w + j0 + t];
    r[row][t] = ref[(i0 + row) * w + j0 + t];
  }
  __syncwarp();

  /* step k: lane t computes cell (t, k - t); its three inputs were made at
   * steps k - 1 and k - 2 or come from the halo */
  const int edge_row = i0 + t == 0;
  for (int k = 0; k < 2 * T - 1; k++) {
    const int c = k - t;
    if (c >= 0 && c < T && !edge_row && j0 + c > 0) {
      const int32_t diag = s[t][c] + r[t][c], up = s[t][c + 1] - penalty, left = s[t + 1][c] - penalty;
      s[t + 1][c + 1] = max(diag, max(up, left));
    }
    __syncwarp();
  }

  for (int row = 0; row < T; row++)
    m[(i0 + row) * w + j0 + t] = s[row + 1][t + 1];
}

/* Anti-diagonal d of the tiles: its launch, on st. */
static void nw_diag_launch(int32_t *m, const int32_t *ref, uint64_t w, uint64_t d, cudaStream_t st)
{
  const uint64_t nb = w / NW_TILE;
  const uint64_t lo = d < nb ? 0 : d - nb + 1, hi = d < nb ? d : nb - 1;
  nw_diag_kernel<<<(unsigned)(hi - lo + 1), NW_TILE, 0, st>>>(m, ref, w, nb, d, NW_PENALTY);
}

/* expert: both files stream in; diagonal d < nb first waits for the row
 * band it reaches, [0, (d + 1) T) (the later ones have every row). */
static int nw_expert(struct rio_timed *t, int32_t *dref, int32_t *dm, uint64_t w)
{
  const uint64_t nb = w / NW_TILE;
  struct rio_expert *jr, *jm;
  int rc = rio_timed_expert(t, NW_IN_REFERENCE, dref, &jr);
  if (!rc)
    rc = rio_timed_expert(t, NW_IN_ITEMSETS, dm, &jm);
  for (uint64_t d = 0; d < 2 * nb - 1 && !rc; d++) {
    if (d < nb) {
      const uint64_t upto = (d + 1) * NW_TILE * w * sizeof(int32_t);
      rc = rio_expert_wait(jr, upto, t->stream);
      if (!rc)
        rc = rio_expert_wait(jm, upto, t->stream);
    }
    if (!rc)
      nw_diag_launch(dm, dref, w, d, t->stream);
  }
  return rc;
}

int nw_run(struct rio_run *run, enum rio_version v)
{
  struct nw_state *s = (struct nw_state *)run->state;
  const uint64_t w = s->w, bytes = w * w * sizeof(int32_t);
  int32_t *dref, *dm;
  struct rio_timed t;
  int rc;

  if ((rc = rio_timed_init(&t, run, v, RIO_READS_WHOLE)) != 0)
    return rc;
  if ((rc = rio_timed_alloc(&t, (void **)&dref, bytes)) != 0 || (rc = rio_timed_alloc(&t, (void **)&dm, bytes)) != 0 ||
      (rc = rio_timed_begin(&t, s->got, bytes)) != 0)
    return rio_timed_end(&t, rc);
  if (v == RIO_EXPERT) {
    rc = nw_expert(&t, dref, dm, w);
  } else if ((rc = rio_timed_load(&t, NW_IN_REFERENCE, dref)) == 0 &&
             (rc = rio_timed_load(&t, NW_IN_ITEMSETS, dm)) == 0) {
    for (uint64_t d = 0; d < 2 * (w / NW_TILE) - 1; d++)
      nw_diag_launch(dm, dref, w, d, t.stream);
  }
  return rio_timed_end(&t, rc ? rc : rio_timed_result(&t, dm, "nw"));
}

extern "C" const struct rio_bench rio_bench_nw = {
    "nw", "Needleman-Wunsch score matrix, tiled wavefront (32), two 16384^2 int32 matrices (1 GiB each)",
    nw_setup, nw_generate, nw_reference, nw_run, nw_verify, nw_teardown};
