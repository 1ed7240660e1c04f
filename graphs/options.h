/*
 * options.h - the `graphs` suite's command line (graphs --help).
 */
#ifndef GRAPHS_OPTIONS_H
#define GRAPHS_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "graphs/algo.h"
#include "graphs/format.h"
#include "graphs/versions.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GRAPH_MAX_GRAPHS 8

/* What each result is verified against (--ref). */
enum graph_ref_kind {
  GRAPH_REF_SERIAL = 0, /* the references of algo.h: a queue, Dijkstra, PageRank in double, union-find (one thread) */
  GRAPH_REF_CPU,        /* the cpu version (every core), which the host tests check against those */
};

struct graph_options {
  int nalgos;
  int algos[GRAPH_NALGOS];         /* enum graph_algo, in its order */
  int nversions;
  int versions[GRAPH_NVERSIONS];   /* enum graph_version, in its order */
  int ngraphs;
  struct graph_gen graphs[GRAPH_MAX_GRAPHS];
  char input[1024];      /* --input: a graph file instead of generated ones */
  int reps;
  char dir[1024];
  char out[1024];
  uint64_t limit;        /* bytes, or 0 */
  double limit_div;      /* --limit Nx: the graph's size / N, or 0 */
  uint32_t page;
  int threads;
  int device;
  int regen;
  double cap_s;          /* --cap: a GPU version's time cap, seconds */
  enum graph_ref_kind ref;
};

extern const char graph_usage[];

/* Parse argv; 0, 1 for --help, or -EINVAL with err. */
int graph_parse_options(int argc, char **argv, struct graph_options *o, char *err, size_t errlen);

/* The limit for a graph file of file_bytes bytes (0: none). */
/* A --page value: a power of two from 4K to 2M, into *page.  0, or the
 * option's failure (bench_opts_fail). */
struct bench_opts;
int graph_parse_page(struct bench_opts *p, uint32_t *page);

uint64_t graph_limit_for(const struct graph_options *o, uint64_t file_bytes, uint32_t page);

#ifdef __cplusplus
}
#endif
#endif /* GRAPHS_OPTIONS_H */
