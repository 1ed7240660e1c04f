/*
 * convert.h - graphs a user brings (docs/graphs.md, "Converting"): text
 * edge lists and MatrixMarket coordinate files, read into an edge list
 * that graph_build turns into a CSR.  Plain C; errors are negative errno
 * with the line that failed in err.
 */
#ifndef GRAPHS_CONVERT_H
#define GRAPHS_CONVERT_H

#include <stddef.h>
#include <stdio.h>

#include "graphs/build.h"

#ifdef __cplusplus
extern "C" {
#endif

struct graph_read_opts {
  int one_based; /* text: vertex ids start at 1 (MatrixMarket always does) */
};

/* What a reader learnt besides the edges. */
struct graph_read_info {
  int weighted;  /* the input carries weights */
  int symmetric; /* MatrixMarket "symmetric": the reverse edges are implied */
};

/*
 * A text edge list: one edge a line, "u v" or "u v w" (every line the
 * same), fields separated by blanks or commas; lines starting with '#'
 * or '%' and empty lines are skipped.  Ids are decimal (0-based unless
 * opts->one_based); n is the largest id + 1.  Weights are integers
 * 0..2^32-1.  0, -EINVAL naming the line, -ENOMEM.
 */
int graph_read_text(FILE *f, const struct graph_read_opts *opts, struct graph_edges *e,
                    struct graph_read_info *info, struct graph_err *err);

/*
 * A MatrixMarket file: "%%MatrixMarket matrix coordinate FIELD SYMMETRY"
 * with FIELD pattern (no weights), integer (weights as given, 0..2^32-1)
 * or real (weights rounded to the nearest integer; negative refused), and
 * SYMMETRY general or symmetric; then "rows cols entries" and one "i j
 * [value]" a line, 1-based.  Entry (i, j) is the edge i -> j; the graph
 * has max(rows, cols) vertices.  0, -EINVAL naming the line, -ENOMEM.
 */
int graph_read_mtx(FILE *f, struct graph_edges *e, struct graph_read_info *info, struct graph_err *err);

#ifdef __cplusplus
}
#endif
#endif /* GRAPHS_CONVERT_H */
