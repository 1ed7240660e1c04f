/*
 * service_run.h - the updated-graph service's program (graph_service,
 * docs/graphs.md "The updated-graph service"): its options, the rounds of
 * every version and share on one graph file, each round's distances
 * verified, JSON rows and the table.
 */
#ifndef GRAPHS_SERVICE_RUN_H
#define GRAPHS_SERVICE_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "graphs/format.h"
#include "graphs/gen.h"
#include "graphs/service.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GRAPH_SVC_MAX_SHARES 16

/* How a round's distances are checked: against Dijkstra (graph_reference,
 * one thread) or the cpu version (every core, itself tested against
 * Dijkstra), run on the host mapping of the file as the round left it. */
enum graph_svc_ref { GRAPH_SVC_REF_DIJKSTRA = 0, GRAPH_SVC_REF_CPU = 1 };

struct graph_svc_options {
  struct graph_gen gen;        /* the generated graph (kind 0 with input) */
  char input[1024];            /* --input: a weighted graph file instead */
  char dir[1024];
  char out[1024];
  int nversions;
  int versions[GRAPH_SVC_NVERSIONS]; /* enum graph_svc_version, in its order */
  int nshares;
  double shares[GRAPH_SVC_MAX_SHARES]; /* percent of the edges a round rewrites */
  int rounds;                  /* after the first SSSP */
  uint32_t runs;               /* contiguous runs a round */
  int verify_every;            /* verify rounds 1, 1 + k, ... and the last (1: every round) */
  enum graph_svc_ref ref;
  double cap_s;                /* a version and share stops after this long (0: none) */
  double cache_x;              /* the gpufs versions' cache: this many times the file */
  uint32_t page;
  int threads;
  int device;
  int regen;
};

extern const char graph_svc_usage[];

/* Parse argv; 0, 1 for --help, or -EINVAL with err. */
int graph_svc_parse(int argc, char **argv, struct graph_svc_options *o, char *err, size_t errlen);

/* The service's file: a copy of the graph at `path` (the writer changes
 * it; the original stays as generated), open for the rounds. */
struct graph_svc_file {
  char name[64];  /* the original's, for the rows */
  char path[1100];
  struct graph g; /* its shared mapping: the references read each round's weights */
  struct graph_header h;
  uint32_t source;
  uint32_t *weights0; /* the weights as generated: each version and share starts from them */
};

/* Every version and share of o on f: progress on stderr, rows to the
 * report, the table on stdout.  0 when every checked round verified. */
int graph_svc_run_all(const struct graph_svc_options *o, struct graph_svc_file *f);

/* The table of the runs: a line per share, the mean round of each
 * version, gpufs-acquire against copy and gpufs-reopen with the targets. */
void graph_svc_table(const struct graph_svc_options *o);

#ifdef __cplusplus
}
#endif
#endif /* GRAPHS_SERVICE_RUN_H */
