/*
 * gen.h - the generated graphs (docs/graphs.md, "Generators"): Graph500's
 * Kronecker graph and a uniform random graph, both undirected, both a
 * function of their parameters and seed alone (edge i is drawn from a
 * hash of (seed, i), so the threads that draw them change nothing), and
 * the input files made from them once and reused.
 * Plain C; errors are negative errno with a sentence in err.
 */
#ifndef GRAPHS_GEN_H
#define GRAPHS_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "graphs/build.h"
#include "graphs/format.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Graph500's initiator probabilities (A, B, C; D = 1 - A - B - C). */
#define GRAPH_KRON_A 0.57
#define GRAPH_KRON_B 0.19
#define GRAPH_KRON_C 0.19
#define GRAPH_WEIGHT_MAX 255u /* generated weights are 1..GRAPH_WEIGHT_MAX */

/* The raw edges of p (before symmetrizing and deduplication): for
 * KRONECKER, each edge picks a quadrant per bit of the scale, then both
 * endpoints are renamed by a fixed permutation of [0, 2^scale) (so that
 * vertex ids say nothing about degree); for UNIFORM, both endpoints are
 * uniform.  Weights (p->weighted) are uniform in 1..GRAPH_WEIGHT_MAX.
 * 0, -EINVAL (a kind it does not generate, scale outside 1..31, no
 * vertices), -ENOMEM. */
int graph_gen_edges(const struct graph_gen *p, struct graph_edges *e, struct graph_err *err);

/* graph_gen_edges, then the symmetric CSR (graph_build). */
int graph_generate(const struct graph_gen *p, struct graph *g, struct graph_err *err);

/* Keep or make path as p's graph: a file whose header is valid, names p
 * as its origin and whose data checksum matches is kept (*made = 0);
 * otherwise (or with regen) the graph is generated and written (*made = 1).
 * 0 or -errno with err. */
int graph_ensure(const char *path, const struct graph_gen *p, int regen, int *made, struct graph_err *err);

/* A short name of p for file names and rows: "kron20-16", "uniform1048576-16". */
void graph_gen_name(const struct graph_gen *p, char *buf, size_t len);

/* The permutation of [0, 2^scale) that renames Kronecker vertices (a
 * bijection: tests check it). */
uint32_t graph_kron_perm(uint64_t x, unsigned scale, uint64_t seed);

#ifdef __cplusplus
}
#endif
#endif /* GRAPHS_GEN_H */
