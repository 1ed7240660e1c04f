/*
 * update.h - the updated-graph service's writer (docs/graphs.md, "The
 * updated-graph service"): which edges a round rewrites, and the pwrite
 * of their new weights.  A round changes a share of the edges as `runs`
 * contiguous runs of the weights section, one in each of `runs` equal
 * strata of the edge array, each run as long as the share of its
 * stratum, placed within it by a hash of the seed, the round and the
 * stratum:
 *
 *   edges  |---- stratum 0 ----|---- stratum 1 ----|---- stratum 2 ----|
 *   round  |     [run 0]       |[run 1]            |        [run 2]    |
 *
 * The same seed, round and share give the same runs and weights, so every
 * version of the service sees the same files.  Plain C.
 */
#ifndef GRAPHS_UPDATE_H
#define GRAPHS_UPDATE_H

#include <stdint.h>

#include "graphs/format.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GRAPH_UPDATE_MAX_RUNS 1024

/* What a round changes: the share and where. */
struct graph_update_spec {
  uint64_t edges;  /* the graph's edges (entries of the weights section) */
  double share;    /* percent of the edges a round rewrites, (0, 100] */
  uint32_t runs;   /* contiguous runs a round, 1 .. GRAPH_UPDATE_MAX_RUNS */
  uint64_t seed;
};

struct graph_update_run {
  uint64_t first, count; /* edges [first, first + count) */
};

/* A round's runs: ascending, disjoint, `total` edges in all. */
struct graph_update_plan {
  uint32_t nruns;
  uint64_t total;
  struct graph_update_run run[GRAPH_UPDATE_MAX_RUNS];
};

/* The runs of round `round` (any number; the service counts from 1).
 * total = the share of the edges rounded to the nearest edge, at least 1;
 * runs: min(s->runs, total) of them.  0, or -EINVAL for a share outside
 * (0, 100], runs outside 1 .. GRAPH_UPDATE_MAX_RUNS, or a graph without
 * edges. */
int graph_update_choose(const struct graph_update_spec *s, uint64_t round, struct graph_update_plan *p);

/* The new weight of edge e in round `round`: 1..255, from the three. */
uint32_t graph_update_weight(uint64_t seed, uint64_t round, uint64_t e);

/* Write the plan's new weights into the weights section (at byte
 * weights_off) of the file open as fd, with pwrite.  0 or -errno. */
int graph_update_apply(int fd, uint64_t weights_off, const struct graph_update_plan *p, uint64_t seed,
                       uint64_t round);

/* The bytes of the file the plan changes lie in [*off, *off + *len): from
 * the first run's first weight to the last run's last. */
void graph_update_span(const struct graph_update_plan *p, uint64_t weights_off, uint64_t *off, uint64_t *len);

#ifdef __cplusplus
}
#endif
#endif /* GRAPHS_UPDATE_H */
