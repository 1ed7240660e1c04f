/*
 * nw.h - Rodinia's Needleman-Wunsch alignment in the rodinia-io suite.
 *
 * Two random protein sequences a[1..n] and b[1..n] (residue k of sequence
 * s is rio_rand(seed, s, k) % 20, an index into the 20 amino acids
 * ARNDCQEGHILKMFPSTWYV of nw_blosum62) and two input files of w x w int32,
 * w = n + 1, row-major (raw little-endian):
 *   0 "reference"  ref[i][j] = BLOSUM62[a[i]][b[j]] for i, j >= 1; 0 on
 *                  row 0 and column 0 (never read)
 *   1 "itemsets"   the initial score matrix: M[0][j] = -j NW_PENALTY,
 *                  M[i][0] = -i NW_PENALTY, 0 elsewhere
 * w = 16384 sqrt(scale), rounded down to a multiple of NW_TILE and at least
 * NW_MIN_W (1 GiB each at scale 1; 512 x 512 at scale 1/1024).
 *
 * Output: the whole score matrix, w x w int32, M[i][j] = max(M[i-1][j-1] +
 * ref[i][j], M[i-1][j] - NW_PENALTY, M[i][j-1] - NW_PENALTY) for i, j >= 1
 * (row 0 and column 0 as given), exact against a CPU loop.
 */
#ifndef RIO_NW_H
#define RIO_NW_H

#include <stdint.h>

#include "rodinia-io/harness/rio.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NW_FULL_W 16384ull
#define NW_TILE 32ull   /* the GPU wavefront's tile (nw.cu) */
#define NW_MIN_W 64ull  /* two tiles a side */
#define NW_PENALTY 10
#define NW_AMINO 20
#define NW_IN_REFERENCE 0
#define NW_IN_ITEMSETS 1

/* BLOSUM62 (NCBI's, in 1/2 bit units) over ARNDCQEGHILKMFPSTWYV. */
extern const int8_t nw_blosum62[NW_AMINO][NW_AMINO];

struct nw_state {
  uint64_t w;     /* rows and columns (n + 1) */
  int32_t *want;  /* the reference score matrix (w x w) */
  int32_t *got;   /* the last run's (w x w), written by nw_run */
};

/* w for a scale: NW_FULL_W sqrt(scale) rounded down to a multiple of
 * NW_TILE, at least NW_MIN_W. */
uint64_t nw_dim(double scale);

/* Residue k (1..n) of sequence s (0: a, the rows; 1: b, the columns). */
int nw_residue(uint64_t seed, int s, uint64_t k);

int nw_setup(struct rio_run *run);
int nw_generate(struct rio_run *run, int i, void *buf);
int nw_reference(struct rio_run *run);
/* nw.cu: the four versions */
int nw_run(struct rio_run *run, enum rio_version v);
int nw_verify(struct rio_run *run);
void nw_teardown(struct rio_run *run);

extern const struct rio_bench rio_bench_nw;

#ifdef __cplusplus
}
#endif
#endif /* RIO_NW_H */
