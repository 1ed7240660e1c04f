/*
 * convert_main.c - `graph_convert`: a text edge list or a MatrixMarket
 * file into a graph file (docs/graphs.md, "Converting").
 *
 *   graph_convert [--directed] [--one-based] [--unweighted] IN OUT
 *
 * Exit status: 0 written; 1 the input could not be read or converted;
 * 2 bad options.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchlib/opts.h"
#include "graphs/build.h"
#include "graphs/convert.h"
#include "graphs/format.h"

static const char graph_convert_usage[] =
    "usage: graph_convert [options] IN OUT\n"
    "  IN                 a text edge list (\"u v\" or \"u v w\" a line) or a MatrixMarket coordinate file\n"
    "                     (found by its %%MatrixMarket banner)\n"
    "  OUT                the graph file to write\n"
    "  --directed         keep edges one way (default: each edge both ways, as bfs..cc expect;\n"
    "                     pr and cc need both ways)\n"
    "  --one-based        text ids start at 1 (MatrixMarket's always do)\n"
    "  --unweighted       drop the weights of the input\n";

enum { GC_DIRECTED = BENCH_OPTS_FIRST, GC_ONE_BASED, GC_UNWEIGHTED };

static const struct bench_opt graph_convert_table[] = {
    {"directed", BENCH_OPT_FLAG, GC_DIRECTED},
    {"one-based", BENCH_OPT_FLAG, GC_ONE_BASED},
    {"unweighted", BENCH_OPT_FLAG, GC_UNWEIGHTED},
};

struct graph_convert_opts {
  int directed, unweighted;
  struct graph_read_opts read;
  const char *in, *out;
};

static int graph_convert_parse(int argc, char **argv, struct graph_convert_opts *c, char *err, size_t len)
{
  struct bench_opts p;
  int id;
  memset(c, 0, sizeof(*c));
  bench_opts_init(&p, argc, argv, graph_convert_table, sizeof(graph_convert_table) / sizeof(graph_convert_table[0]),
                  err, len);
  while ((id = bench_opts_next(&p)) > BENCH_OPTS_HELP) {
    if (id == GC_DIRECTED)
      c->directed = 1;
    else if (id == GC_ONE_BASED)
      c->read.one_based = 1;
    else
      c->unweighted = 1;
  }
  if (id != BENCH_OPTS_END)
    return id == BENCH_OPTS_HELP ? 1 : id;
  int rc = bench_opts_operands(&p, 2);
  if (rc)
    return rc;
  if (argc - p.optind != 2) {
    snprintf(err, len, "IN and OUT are needed");
    return -EINVAL;
  }
  c->in = argv[p.optind];
  c->out = argv[p.optind + 1];
  if ((rc = bench_check_input("IN", c->in, 0, err, len)) != 0)
    return rc;
  return bench_check_output("OUT", c->out, err, len);
}

/* Read IN (MatrixMarket by its banner, else text) into e. */
static int graph_convert_read(const struct graph_convert_opts *c, struct graph_edges *e, struct graph_read_info *info,
                              struct graph_err *err)
{
  FILE *f = fopen(c->in, "r");
  char first[16] = "";
  if (!f)
    return graph_errf(err, -errno, "%s: %s", c->in, strerror(errno));
  const size_t got = fread(first, 1, 14, f);
  rewind(f);
  struct graph_err why;
  const int mtx = got == 14 && !strncmp(first, "%%MatrixMarket", 14);
  const int rc = mtx ? graph_read_mtx(f, e, info, &why) : graph_read_text(f, &c->read, e, info, &why);
  fclose(f);
  return rc ? graph_errf(err, rc, "%s: %s", c->in, why.msg) : 0;
}

int main(int argc, char **argv)
{
  struct graph_convert_opts c;
  struct graph_edges e;
  struct graph_read_info info;
  struct graph g;
  struct graph_err err;
  int rc = graph_convert_parse(argc, argv, &c, err.msg, sizeof(err.msg));
  if ((rc = bench_opts_exit("graph_convert", rc, err.msg, graph_convert_usage)) >= 0)
    return rc;
  if (graph_convert_read(&c, &e, &info, &err) != 0) {
    fprintf(stderr, "graph_convert: %s\n", err.msg);
    return 1;
  }
  if (c.unweighted) {
    free(e.w);
    e.w = NULL;
  }
  /* MatrixMarket "symmetric" stores one triangle: the reverse edges are implied */
  rc = graph_build(&e, !c.directed || info.symmetric, &g, &err);
  graph_edges_free(&e);
  const struct graph_gen gen = {GRAPH_GEN_CONVERTED, g.weights != NULL, 0, 0, 0};
  if (!rc)
    rc = graph_write(&g, &gen, c.out, &err);
  if (rc) {
    fprintf(stderr, "graph_convert: %s\n", err.msg);
    graph_free(&g);
    return 1;
  }
  printf("%s: %llu vertices, %llu edges%s%s\n", c.out, (unsigned long long)g.n, (unsigned long long)g.m,
         g.weights ? ", weighted" : "", g.flags & GRAPH_SYMMETRIC ? ", both ways" : ", directed");
  graph_free(&g);
  return 0;
}
