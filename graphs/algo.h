/*
 * algo.h - the four graph algorithms (docs/graphs.md, "Algorithms"), what
 * each computes, its CPU reference and how a result is verified; and the
 * `cpu` version (every core over the mapped file).
 *
 *   bfs   hops from the source (the vertex of the largest degree);
 *         GRAPH_NONE where unreached.  Exact.
 *   sssp  shortest distances from the source, weights as stored (1 each
 *         in a graph without weights); GRAPH_NONE where unreached.  Exact.
 *   pr    PageRank, pulled: GRAPH_PR_ITERS rounds of
 *         r'(v) = (1 - d) / n + d * sum over neighbours u of r(u) / deg(u),
 *         d = GRAPH_PR_DAMPING, from r = 1 / n; float.  Each vertex within
 *         GRAPH_PR_TOLERANCE (relative) of the double reference.
 *   cc    connected components: a label per vertex; verified as a
 *         partition (same label exactly where the reference has the same
 *         component), whatever the labels are.
 * pr and cc read the CSR as undirected: they need a GRAPH_SYMMETRIC graph.
 * Results: uint64_t per vertex for bfs, sssp and cc, float for pr (the
 * reference's pr: double).  Plain C.
 */
#ifndef GRAPHS_ALGO_H
#define GRAPHS_ALGO_H

#include <stddef.h>
#include <stdint.h>

#include "graphs/format.h"

#ifdef __cplusplus
extern "C" {
#endif

enum graph_algo { GRAPH_BFS = 0, GRAPH_SSSP = 1, GRAPH_PR = 2, GRAPH_CC = 3, GRAPH_NALGOS = 4 };

#define GRAPH_NONE UINT64_MAX     /* unreached (bfs, sssp) */
#define GRAPH_PR_DAMPING 0.85
#define GRAPH_PR_ITERS 20
#define GRAPH_PR_TOLERANCE 1e-3

extern const char *const graph_algo_names[GRAPH_NALGOS];
const char *graph_algo_name(enum graph_algo a);

/* Bytes per vertex of a version's result and of the reference's. */
size_t graph_out_bytes(enum graph_algo a);
size_t graph_ref_bytes(enum graph_algo a);

/* 0, or -EINVAL with why when a cannot run on g (pr, cc: not symmetric). */
int graph_algo_check(enum graph_algo a, const struct graph *g, struct graph_err *why);

/* The reference, one thread: BFS by a queue, Dijkstra by a binary heap,
 * PageRank in double, components by union-find (label: the smallest
 * vertex).  out: graph_ref_bytes(a) * g->n bytes.  0 or -ENOMEM. */
int graph_reference(enum graph_algo a, const struct graph *g, uint32_t source, void *out);

/* Compare a version's result with the reference's: 0, or -EIO with the
 * first difference in why. */
int graph_verify(enum graph_algo a, const struct graph *g, const void *ref, const void *got, struct graph_err *why);

/* The cpu version: `threads` threads (0: every core) over g, as the GPU
 * kernels do it (level-synchronous frontiers, pull rounds); out:
 * graph_out_bytes(a) * g->n bytes.  0 or -ENOMEM. */
int graph_cpu_run(enum graph_algo a, const struct graph *g, uint32_t source, int threads, void *out);

#ifdef __cplusplus
}
#endif
#endif /* GRAPHS_ALGO_H */
