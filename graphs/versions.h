/*
 * versions.h - the versions of every algorithm (docs/graphs.md,
 * "Versions"), one call each: where the CSR lives while the kernels read
 * it, and how it gets there.  The clock of a run starts with the first
 * read of the file (or its registration) and stops when the result is in
 * host memory; buffers are made before it starts.
 *
 *   cpu        every core over the file's mapping (graph_cpu_run)
 *   resident   the file's sections read by host threads into pinned
 *              buffers and copied to GPU memory, then the kernels
 *   zero-copy  the file's mapping pinned and mapped for the GPU
 *              (cudaHostRegister), kernels read host memory, a warp per
 *              vertex (coalesced, as EMOGI)
 *   uvm        the file read into cudaMallocManaged memory, pages
 *              migrated on the kernels' demand; uvm-rm: the same with
 *              cudaMemAdviseSetReadMostly
 *   gpufs      kernels read the file through libgpufs: each warp holds
 *              one mapped page (gmmap_warp) of the offsets, of the
 *              neighbours and of the weights, and reads every vertex of
 *              its runs that lies in them there
 * Callable from C and C++.
 */
#ifndef GRAPHS_VERSIONS_H
#define GRAPHS_VERSIONS_H

#include <stdint.h>

#include "graphs/algo.h"
#include "graphs/format.h"
#include "include/gpufs.cuh"

#ifdef __cplusplus
extern "C" {
#endif

enum graph_version {
  GRAPH_V_CPU = 0,
  GRAPH_V_RESIDENT,
  GRAPH_V_ZERO_COPY,
  GRAPH_V_UVM,
  GRAPH_V_UVM_RM,
  GRAPH_V_GPUFS,
  GRAPH_NVERSIONS
};

/* The versions' names (options.c: the names --versions takes). */
extern const char *const graph_version_names[GRAPH_NVERSIONS];
const char *graph_version_name(enum graph_version v);

/* One run: the graph, the algorithm and where. */
struct graph_run_opts {
  const char *path;           /* the graph file */
  const struct graph *g;      /* its mapping (graph_open) */
  const struct graph_header *h;
  enum graph_algo algo;
  uint32_t source;            /* bfs, sssp */
  uint64_t limit;             /* GPU memory the graph may use: gpufs's cache,
                                 and what uvm may migrate into (the rest of
                                 the GPU held by a reserved allocation); 0:
                                 none (gpufs: the file + 64 MiB).  resident
                                 is the bound: it holds the whole graph */
  uint32_t page_size;         /* gpufs's pages */
  int threads;                /* cpu version and host loaders (0: every core) */
  int device;
  double cap_s;               /* a GPU version stops once it ran this long,
                                 between rounds or inside one (its warps take
                                 no more vertices; r->capped); 0: no cap */
};

struct graph_run_result {
  int ok;              /* ran; the result is in out (not yet verified) */
  int na;              /* could not run here (why says so) */
  int capped;          /* stopped at o->cap_s: e2e_s is a lower bound, out incomplete */
  char why[512];
  double e2e_s;        /* first read to result in host memory */
  double load_s;       /* of it, moving or registering the CSR before the kernels */
  uint64_t pcie_bytes; /* graph bytes moved to the GPU, where known */
  int pcie_known;
  uint32_t rounds;     /* frontier rounds (bfs, sssp, cc) or iterations (pr) */
  int has_stats;       /* gpufs: its counters */
  struct gpufs_stats st;
};

/* Run a with version v; out: graph_out_bytes(a) * n bytes of host memory.
 * Returns 0 (r->ok) or -errno (r->why; r->na when not possible here;
 * -ETIMEDOUT with r->capped at the time cap). */
int graph_run_version(enum graph_version v, const struct graph_run_opts *o, void *out, struct graph_run_result *r);

#ifdef __cplusplus
}
#endif
#endif /* GRAPHS_VERSIONS_H */
