/*
 * suite.h - one graph through every algorithm and version (the `graphs`
 * program): references, runs, verification, rows and the table.
 */
#ifndef GRAPHS_SUITE_H
#define GRAPHS_SUITE_H

#include <stdint.h>

#include "graphs/format.h"
#include "graphs/options.h"
#include "graphs/versions.h"

#ifdef __cplusplus
extern "C" {
#endif

struct graph_suite_graph {
  char name[64];
  char path[1100];
  struct graph g; /* the file's mapping */
  struct graph_header h;
  uint32_t source;
};

/* Every algorithm of o in every version of o on sg: progress on stderr,
 * rows to the report.  0 when every result verified, else -EIO. */
int graph_suite_run(const struct graph_options *o, const struct graph_suite_graph *sg);

/* The table of every run so far, then gpufs's geometric means against
 * each baseline with the targets. */
void graph_suite_table(const struct graph_options *o);

#ifdef __cplusplus
}
#endif
#endif /* GRAPHS_SUITE_H */
