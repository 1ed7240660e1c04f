/*
 * service.h - the GPU side of the updated-graph service (docs/graphs.md,
 * "The updated-graph service"): one version kept set up over the rounds,
 * each round bringing the GPU's view of the changed file up to date and
 * running SSSP again.
 *
 *   copy                the CUDA way: host threads pread the whole file
 *                       into pinned buffers and copy it to GPU memory
 *                       (the resident version's loader), then the kernels
 *   uvm                 the whole file read again into cudaMallocManaged
 *                       memory, pages migrated on the kernels' demand
 *   gpufs-reopen        close-to-open: the kernels gopen the file, run,
 *                       gclose it; the changed file is a new version, read
 *                       again as the kernels touch it
 *   gpufs-acquire       the descriptor kept open; gpufs_acquire_range of
 *                       the bytes the writer changed, then the kernels:
 *                       only the pages whose bytes changed are read again
 *   gpufs-acquire-file  the same with gpufs_acquire of the whole file
 *                       (changes found by content, no help from the writer)
 * Callable from C and C++.
 */
#ifndef GRAPHS_SERVICE_H
#define GRAPHS_SERVICE_H

#include <stdint.h>

#include "graphs/versions.h"

#ifdef __cplusplus
extern "C" {
#endif

enum graph_svc_version {
  GRAPH_SVC_COPY = 0,
  GRAPH_SVC_UVM,
  GRAPH_SVC_REOPEN,
  GRAPH_SVC_ACQUIRE,
  GRAPH_SVC_ACQUIRE_FILE,
  GRAPH_SVC_NVERSIONS
};

/* The versions' names (service_opts.c: the names --versions takes). */
extern const char *const graph_svc_names[GRAPH_SVC_NVERSIONS];

/* The bytes of the file a round's writer changed (for gpufs-acquire). */
struct graph_svc_change {
  uint64_t off, len;
};

struct graph_svc;

/* Set version v up for o (o->algo GRAPH_SSSP; o->limit: the gpufs
 * versions' cache, 0: the file and 64 MiB; o->cap_s unused): GPU arrays, pinned result, libgpufs started for the gpufs
 * versions (one at a time in a process), the descriptor of the acquire
 * versions opened after a first gpufs_acquire of the file.  Nothing is
 * read of the file yet.  0 or -errno with r->why. */
int graph_svc_open(enum graph_svc_version v, const struct graph_run_opts *o, struct graph_svc **out,
                   struct graph_run_result *r);

/* One round: bring the GPU's view of the file up to date (c: what the
 * writer changed since the last round; NULL for the first round, which
 * reads what it needs from nothing), then SSSP.  r: e2e_s (the whole
 * round), load_s (of it, the copy, reread or acquire), rounds (SSSP's
 * frontier rounds), pcie_bytes where known (copy: the file; gpufs: this
 * round's misses times the page), st (gpufs: the counters, misses and
 * evictions this round's alone);
 * *dropped: the pages the acquire dropped (0 for the others).  0 or
 * -errno with r->why. */
int graph_svc_round(struct graph_svc *s, const struct graph_svc_change *c, struct graph_run_result *r,
                    int64_t *dropped);

/* The distances of the last round (n uint64, host memory). */
const uint64_t *graph_svc_result(const struct graph_svc *s);

/* Release everything (libgpufs stopped); s may be NULL. */
void graph_svc_close(struct graph_svc *s);

#ifdef __cplusplus
}
#endif
#endif /* GRAPHS_SERVICE_H */
