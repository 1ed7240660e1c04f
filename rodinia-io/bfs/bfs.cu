/*
 * bfs.cu - bfs's four versions: the graph files -> GPU memory, then a
 * level-synchronous BFS as Rodinia does it, with four arrays over the
 * nodes: the frontier mask, the updating mask (reached at this level),
 * visited, and cost.  Each level is two kernels, expand then commit, and
 * one flag read back by the host: the loop ends at the first level that
 * reaches no new node.
 *
 * No version overlaps I/O with compute: any node may be reached through
 * any edge, so the first level already needs both files whole.  The gpufs
 * versions therefore read them with rio_gpufs_load (the generic I/O kernel)
 * and then run the same kernels as cpu-io and expert.
 */
#include <errno.h>
#include <string.h>

#include "rodinia-io/bfs/bfs.h"
#include "rodinia-io/harness/rio_cuda.h"

#define BFS_THREADS 256
#define BFS_MAX_BLOCKS 4096

/* Node `source` at level 0 and in the frontier, every other unreached.
 * Any grid; no synchronization. */
__global__ void bfs_init(uint8_t *frontier, uint8_t *updating, uint8_t *visited, int32_t *cost,
                         uint64_t n, uint64_t source)
{
  for (uint64_t v = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; v < n;
       v += (uint64_t)gridDim.x * blockDim.x) {
    const uint8_t here = v == source;
    frontier[v] = here;
    visited[v] = here;
    updating[v] = 0;
    cost[v] = here ? 0 : -1;
  }
}

/*
 * Expand: every frontier node leaves the frontier and marks its unvisited
 * neighbours as reached one level further.  Several frontier nodes may
 * reach the same neighbour: they all write the same cost and flag, so the
 * races are benign; a frontier node's own cost is never written here (it
 * is visited).  Any grid; no synchronization.
 */
__global__ void bfs_expand(const longlong2 *nodes, const int64_t *edges, uint8_t *frontier,
                           uint8_t *updating, const uint8_t *visited, int32_t *cost, uint64_t n)
{
  for (uint64_t v = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; v < n;
       v += (uint64_t)gridDim.x * blockDim.x) {
    if (!frontier[v])
      continue;
    frontier[v] = 0;
    const longlong2 nd = nodes[v]; /* {start, degree} */
    const int32_t next = cost[v] + 1;
    for (int64_t e = nd.x; e < nd.x + nd.y; e++) {
      const int64_t w = edges[e];
      if (!visited[w]) {
        cost[w] = next;
        updating[w] = 1;
      }
    }
  }
}

/*
 * Commit: the nodes reached by this level become visited and the next
 * frontier; *more is set when there is one (every writer writes 1).  Run
 * after bfs_expand has finished (stream order), so that no node is marked
 * visited while the level still tests it.  Any grid; no synchronization.
 */
__global__ void bfs_commit(uint8_t *frontier, uint8_t *updating, uint8_t *visited, uint64_t n,
                           int *more)
{
  for (uint64_t v = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; v < n;
       v += (uint64_t)gridDim.x * blockDim.x) {
    if (!updating[v])
      continue;
    updating[v] = 0;
    frontier[v] = 1;
    visited[v] = 1;
    *more = 1;
  }
}

/* The BFS on the graph already in d_nodes / d_edges, into d_cost.
 * masks holds the three byte arrays of n; more is one device int. */
static int bfs_levels(struct rio_run *run, const void *d_nodes, const int64_t *d_edges,
                      uint8_t *masks, int32_t *d_cost, int *more)
{
  const struct bfs_state *st = (const struct bfs_state *)run->state;
  const uint64_t n = st->n;
  uint8_t *frontier = masks, *updating = masks + n, *visited = masks + 2 * n;
  uint64_t blocks = (n + BFS_THREADS - 1) / BFS_THREADS;
  if (blocks > BFS_MAX_BLOCKS)
    blocks = BFS_MAX_BLOCKS;
  int rc;
  bfs_init<<<(unsigned)blocks, BFS_THREADS>>>(frontier, updating, visited, d_cost, n, BFS_SOURCE);
  if ((rc = RIO_CUDA(run, cudaGetLastError())) != 0)
    return rc;
  for (int h_more = 1; h_more;) {
    if ((rc = RIO_CUDA(run, cudaMemset(more, 0, sizeof(int)))) != 0)
      return rc;
    bfs_expand<<<(unsigned)blocks, BFS_THREADS>>>((const longlong2 *)d_nodes, d_edges, frontier,
                                                  updating, visited, d_cost, n);
    if ((rc = RIO_CUDA(run, cudaGetLastError())) != 0)
      return rc;
    bfs_commit<<<(unsigned)blocks, BFS_THREADS>>>(frontier, updating, visited, n, more);
    if ((rc = RIO_CUDA(run, cudaGetLastError())) != 0 ||
        (rc = RIO_CUDA(run, cudaMemcpy(&h_more, more, sizeof(int), cudaMemcpyDeviceToHost))) != 0)
      return rc;
  }
  return 0;
}

int bfs_run(struct rio_run *run, enum rio_version v)
{
  struct bfs_state *st = (struct bfs_state *)run->state;
  const uint64_t n = st->n;
  void *d_nodes;
  int64_t *d_edges;
  uint8_t *masks;
  int32_t *d_cost;
  int *more;
  struct rio_timed t;
  int rc;

  /* the levels run on the legacy stream and end in a blocking copy:
   * the result's copy on t.stream follows them */
  if ((rc = rio_timed_init(&t, run, v, RIO_READS_WHOLE)) != 0)
    return rc;
  if ((rc = rio_timed_alloc(&t, &d_nodes, run->in[0].size)) != 0 ||
      (rc = rio_timed_alloc(&t, (void **)&d_edges, run->in[1].size)) != 0 ||
      (rc = rio_timed_alloc(&t, (void **)&masks, 3 * n)) != 0 ||
      (rc = rio_timed_alloc(&t, (void **)&d_cost, n * sizeof(int32_t))) != 0 ||
      (rc = rio_timed_alloc(&t, (void **)&more, sizeof(int))) != 0 ||
      (rc = rio_timed_begin(&t, st->got, n * sizeof(int32_t))) != 0 || (rc = rio_timed_load(&t, 0, d_nodes)) != 0 ||
      (rc = rio_timed_load(&t, 1, d_edges)) != 0 || (rc = bfs_levels(run, d_nodes, d_edges, masks, d_cost, more)) != 0)
    return rio_timed_end(&t, rc);
  return rio_timed_end(&t, rio_timed_result(&t, d_cost, "bfs"));
}

extern "C" const struct rio_bench rio_bench_bfs = {
    "bfs",
    "breadth-first search from node 0 over a random undirected CSR graph, "
    "2^24 nodes and ~100 M edges (~1.1 GB) at scale 1",
    bfs_setup, bfs_generate, bfs_reference, bfs_run, bfs_verify, bfs_teardown};
