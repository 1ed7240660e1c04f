/*
 * build.h - edge lists and the CSR built from them: what the generators
 * and the converter produce, and how it becomes a struct graph.
 * Plain C; errors are negative errno with a sentence in err.
 */
#ifndef GRAPHS_BUILD_H
#define GRAPHS_BUILD_H

#include <stddef.h>
#include <stdint.h>

#include "graphs/format.h"

#ifdef __cplusplus
extern "C" {
#endif

/* m edges src[i] -> dst[i] (weight w[i] when w is not NULL) over n vertices. */
struct graph_edges {
  uint64_t n, m, cap;
  uint32_t *src, *dst, *w;
};

/* Room for cap edges (weighted: with w).  0 or -ENOMEM. */
int graph_edges_alloc(struct graph_edges *e, uint64_t n, uint64_t cap, int weighted);
/* Append one edge, growing the arrays.  0 or -ENOMEM. */
int graph_edges_push(struct graph_edges *e, uint32_t u, uint32_t v, uint32_t w);
void graph_edges_free(struct graph_edges *e);

/*
 * The CSR of e into *g (owned by g: graph_free).  symmetric: each edge
 * also gives its reverse (g->flags gets GRAPH_SYMMETRIC).  Self loops are
 * dropped; each vertex's neighbours are sorted and repeated edges kept
 * once, with the smallest of their weights.  Weighted when e->w is set.
 * Several threads.  0, -EINVAL (an endpoint >= n, or n past
 * GRAPH_MAX_VERTICES), -ENOMEM.
 */
int graph_build(const struct graph_edges *e, int symmetric, struct graph *g, struct graph_err *err);

#ifdef __cplusplus
}
#endif
#endif /* GRAPHS_BUILD_H */
