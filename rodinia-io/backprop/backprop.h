/*
 * backprop.h - Rodinia's backprop in the rodinia-io suite: one training
 * step of a perceptron of n input units, 16 hidden units and 1 output unit.
 *
 * Inputs (raw little-endian float32):
 *   0 "input"         n + 1 units: unit 0 is the bias (1.0), units 1..n
 *                     uniform in [0, 1); one zero float of padding (n + 1
 *                     is odd) so that the size is a multiple of 8 bytes
 *   1 "weights"       the input->hidden weights, n + 1 rows of 17 floats:
 *                     row i is input unit i, column j hidden unit j; column
 *                     0 is unused (hidden units are 1..16, as in Rodinia)
 *                     but filled; uniform in [-b, b) with b = 3 / sqrt(n + 1),
 *                     so that a forward sum has a standard deviation of
 *                     about 1 and the hidden units do not saturate (with
 *                     weights of order 1 every sum is ~sqrt(n) and every
 *                     delta 0); one zero float of padding
 *   2 "prev_weights"  the previous weight changes, same shape, uniform in
 *                     [-b / 10, b / 10); one zero float of padding
 * n = 22 * 2^20 * scale, a multiple of 1024, at least 1024 (3.23 GB at
 * scale 1).  The hidden->output weights w2[0..16] (w2[0] for the bias
 * hidden unit 0 = 1) are uniform in [-1, 1), made by setup from the seed.
 *
 * The step (double where not said otherwise):
 *   S_j = sum_{i=0..n} w[i][j] in[i]              j = 1..16
 *   h_j = squash(S_j) = 1 / (1 + exp(-S_j)),  h_0 = 1
 *   o = squash(sum_{j=0..16} w2[j] h_j)
 *   delta_o = o (1 - o) (BACKPROP_TARGET - o)
 *   delta_j = h_j (1 - h_j) w2[j] delta_o         (rounded to float)
 *   dw = ETA delta_j in[i] + MOMENTUM prev[i][j];  w[i][j] += dw;  prev[i][j] = dw
 * for j = 1..16 (column 0 keeps its values).
 * Output: struct backprop_units (hidden units, output, deltas) and the
 * adjusted weights and prev weights, (n + 1) x 17 floats each.
 */
#ifndef RIO_BACKPROP_H
#define RIO_BACKPROP_H

#include <math.h>
#include <stdint.h>

#include "rodinia-io/harness/rio.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BACKPROP_FULL_N (22ull << 20)
#define BACKPROP_HIDDEN 16
#define BACKPROP_COLS (BACKPROP_HIDDEN + 1) /* floats a row of the weight files */
#define BACKPROP_ETA 0.3
#define BACKPROP_MOMENTUM 0.3
#define BACKPROP_TARGET 0.1

#define BACKPROP_IN_INPUT 0
#define BACKPROP_IN_WEIGHTS 1
#define BACKPROP_IN_PREV 2

/* The GPU's forward pass: a block of BACKPROP_THREADS threads sums a chunk
 * of BACKPROP_CHUNK_ROWS rows, each thread BACKPROP_CHUNK_ROWS /
 * BACKPROP_THREADS rows in float, the warps' totals in float, then the
 * warps and the chunks in double.  verify's tolerance follows from these. */
#define BACKPROP_CHUNK_ROWS 16384
#define BACKPROP_THREADS 512

/* The units of one step, as a run reports them (index 0 of hidden is the
 * bias, 1; index 0 of hid_delta is unused, 0). */
struct backprop_units {
  float hidden[BACKPROP_COLS];
  float output;
  float out_delta;
  float hid_delta[BACKPROP_COLS];
};

struct backprop_state {
  uint64_t n;          /* input units besides the bias */
  uint64_t rows;       /* n + 1: rows of the weight matrices */
  uint64_t nchunks;    /* rows / BACKPROP_CHUNK_ROWS, rounded up */
  double wbound;       /* |weights| < wbound, |prev| < wbound / 10 */
  float w2[BACKPROP_COLS];
  /* the last run's result (run() writes it) */
  struct backprop_units got;
  float *got_w, *got_prev;       /* rows x 17 each */
  /* the reference */
  struct backprop_units want;
  float *want_w, *want_prev;
  double abs_sum[BACKPROP_COLS]; /* sum_i |w[i][j] in[i]|: the scale of S_j's rounding */
};

/*
 * From the forward sums sum[1..16]: the hidden units, the output unit, its
 * delta and the hidden deltas into u, computed in double.  The CPU
 * reference and the GPU's kernel both use it (host and device code).
 */
#ifdef __CUDACC__
__host__ __device__
#endif
static inline void backprop_backward(const double *sum, const float *w2, struct backprop_units *u)
{
  double h[BACKPROP_COLS], z = w2[0];
  h[0] = 1.0;
  for (int j = 1; j < BACKPROP_COLS; j++) {
    h[j] = 1.0 / (1.0 + exp(-sum[j]));
    z += (double)w2[j] * h[j];
  }
  const double o = 1.0 / (1.0 + exp(-z));
  const double d_o = o * (1.0 - o) * (BACKPROP_TARGET - o);
  u->output = (float)o;
  u->out_delta = (float)d_o;
  for (int j = 0; j < BACKPROP_COLS; j++) {
    u->hidden[j] = (float)h[j];
    u->hid_delta[j] = j ? (float)(h[j] * (1.0 - h[j]) * (double)w2[j] * d_o) : 0.0f;
  }
}

int backprop_setup(struct rio_run *run);
int backprop_generate(struct rio_run *run, int i, void *buf);
int backprop_reference(struct rio_run *run);
int backprop_verify(struct rio_run *run);
void backprop_teardown(struct rio_run *run);

/* In backprop.cu (CUDA). */
int backprop_run(struct rio_run *run, enum rio_version v);
extern const struct rio_bench rio_bench_backprop;

#ifdef __cplusplus
}
#endif
#endif /* RIO_BACKPROP_H */
