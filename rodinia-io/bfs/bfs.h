/*
 * bfs.h - Rodinia's breadth-first search in the rodinia-io suite.
 *
 * Inputs (raw little-endian, a CSR graph):
 *   0 "nodes"  n records {int64 start, int64 degree}: node v's neighbours
 *              are edges[start, start + degree)
 *   1 "edges"  int64 destination node ids (sum of the degrees)
 * n = 2^24 * scale, a multiple of 1024 (16 M nodes, ~100 M edges, ~1.1 GB at
 * scale 1); scales below 2^-14 (fewer than 1024 nodes) are refused.
 *
 * The graph, from run->seed like Rodinia's generator: node v picks
 * k_v = 2 + rio_rand(seed, 0, v) % 3 neighbours, pick m < k_v being
 * rio_rand(seed, 1, 4 v + m) % n; each pick adds the edge in both
 * directions (undirected, average degree ~6).  Self loops are kept (a pick
 * of v itself puts v twice in v's list) and so are repeated picks, so that
 * the edge count is 2 * sum k_v, known before the graph is built.  Node v's
 * list holds its own picks in m order, then the nodes that picked v in
 * ascending order (a node that picked v twice appears twice).
 *
 * Output: cost[v] = the BFS level of v from node 0 (int32, -1 unreachable),
 * exact against a queue-based CPU BFS.
 */
#ifndef RIO_BFS_H
#define RIO_BFS_H

#include <stdint.h>

#include "rodinia-io/harness/rio.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BFS_FULL_NODES (1ull << 24)
#define BFS_MIN_NODES 1024ull
#define BFS_SOURCE 0

/* One node of the "nodes" file. */
struct bfs_node {
  int64_t start;
  int64_t degree;
};

struct bfs_state {
  uint64_t n;        /* nodes */
  uint64_t n_edges;  /* entries of the edges file (2 * sum k_v) */
  int32_t *want;     /* reference costs (n) */
  int32_t *got;      /* the last run's costs (n), written by bfs_run */
  /* The graph is built whole for the first generate() call, which writes
   * its file straight into the caller's buffer; the other file waits here
   * for the next call (input cached_input, NULL when none). */
  void *cached;
  int cached_input;
};

int bfs_setup(struct rio_run *run);
int bfs_generate(struct rio_run *run, int i, void *buf);
int bfs_reference(struct rio_run *run);
int bfs_verify(struct rio_run *run);
void bfs_teardown(struct rio_run *run);

/* The number of picks node v makes, and the target of its pick m. */
uint64_t bfs_picks(uint64_t seed, uint64_t v);
uint64_t bfs_target(uint64_t seed, uint64_t n, uint64_t v, uint64_t m);

/* Queue-based BFS from `source` over a CSR graph of n nodes and n_edges
 * edge entries into cost (n); -EINVAL when a record points outside the
 * edges or an edge outside the nodes. */
int bfs_cpu(const struct bfs_node *nodes, uint64_t n, const int64_t *edges, uint64_t n_edges,
            uint64_t source, int32_t *cost);

/* In bfs.cu (CUDA). */
int bfs_run(struct rio_run *run, enum rio_version v);
extern const struct rio_bench rio_bench_bfs;

#ifdef __cplusplus
}
#endif
#endif /* RIO_BFS_H */
