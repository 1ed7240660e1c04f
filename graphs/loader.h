/*
 * loader.h - how the resident and uvm versions bring the graph file into
 * memory: host threads pread it in 8 MiB pieces, into pinned buffers
 * copied to GPU memory on a stream per thread (two buffers a thread, one
 * filling while the other copies), or straight into a host-visible
 * destination (managed memory).  Plain C.
 */
#ifndef GRAPHS_LOADER_H
#define GRAPHS_LOADER_H

#include <stddef.h>
#include <stdint.h>

#include "graphs/format.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GRAPH_LOAD_PIECE (8ull << 20)
#define GRAPH_LOAD_MAX_THREADS 32

struct graph_loader;

/* threads (0: every core, at most GRAPH_LOAD_MAX_THREADS) with their
 * pinned buffers and streams on CUDA device `device`, made before a timed
 * run.  0 or -errno. */
int graph_loader_make(int threads, int device, struct graph_loader **out);
void graph_loader_free(struct graph_loader *l);

/* [0, size) of path into dev (GPU memory); returns when it is there.
 * 0 or -errno with why. */
int graph_loader_to_device(struct graph_loader *l, const char *path, uint64_t size, void *dev, struct graph_err *why);

/* [0, size) of path into dst (any memory the host can write), by
 * `threads` threads (0: every core).  0 or -errno with why. */
int graph_load_to_host(const char *path, uint64_t size, void *dst, int threads, struct graph_err *why);

/* A program's paths before it starts (graphs, graph_service): --input
 * (when given) must be a readable file, else --dir is made; --out (when
 * given) must be writable and is opened for the rows.  0, or 2 (the exit
 * status of bad options) after a line on stderr naming prog. */
int graph_check_paths(const char *prog, const char *input, const char *dir, const char *out);

/* The rows' run context: the device's name (or "cpu only" for device
 * < 0; also into name[len]), the commit the program was built from
 * (commit, or NULL), and the suite's name. */
void graph_report_context(int device, const char *commit, const char *suite, char *name, size_t len);

/* The commit a program's main was built with (-DBENCH_COMMIT), or NULL. */
#ifdef BENCH_COMMIT
#define GRAPH_COMMIT BENCH_COMMIT
#else
#define GRAPH_COMMIT NULL
#endif

#ifdef __cplusplus
}
#endif
#endif /* GRAPHS_LOADER_H */
