/*
 * main.cu - `graphs`: the graph suite (docs/graphs.md).  Each graph is
 * generated once into --dir (or read from --input), then every algorithm
 * runs in every version, each result verified against the CPU reference;
 * a progress line per run on stderr, a JSON row per graph, algorithm and
 * version (--out), the table last on stdout.
 *
 * Exit status: 0 every result verified; 1 a version failed or gave a
 * wrong result, or a graph could not be made or read; 2 bad options or no
 * usable GPU.
 */
#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "benchlib/opts.h"
#include "benchlib/datafile.h"
#include "benchlib/report.h"
#include "benchlib/util.h"
#include "graphs/loader.h"
#include "graphs/gen.h"
#include "graphs/options.h"
#include "graphs/suite.h"

/* One graph's file: generated (or kept) in --dir, or --input. */
static int graph_prepare(const struct graph_options *o, int i, struct graph_suite_graph *sg)
{
  struct graph_err err;
  int made = 0, rc;
  memset(sg, 0, sizeof(*sg));
  if (o->input[0]) {
    snprintf(sg->path, sizeof(sg->path), "%s", o->input);
    char tmp[1024];
    snprintf(tmp, sizeof(tmp), "%s", o->input);
    snprintf(sg->name, sizeof(sg->name), "%s", basename(tmp));
  } else {
    graph_gen_name(&o->graphs[i], sg->name, sizeof(sg->name));
    snprintf(sg->path, sizeof(sg->path), "%s/%s.csr", o->dir, sg->name);
    fprintf(stderr, "graphs: %s: %s\n", sg->name, "checking or generating the file");
    const double t0 = bench_now();
    if ((rc = graph_ensure(sg->path, &o->graphs[i], o->regen, &made, &err)) != 0) {
      fprintf(stderr, "graphs: %s: %s\n", sg->name, err.msg);
      return rc;
    }
    fprintf(stderr, "graphs: %s: %s in %.1f s\n", sg->name, made ? "generated" : "kept (checksum verified)",
            bench_now() - t0);
  }
  /* verify the data of a file not just written, then warm the page cache */
  if ((rc = graph_open(sg->path, !made, &sg->g, &sg->h, &err)) != 0) {
    fprintf(stderr, "graphs: %s\n", err.msg);
    return rc;
  }
  if (made && (rc = bench_warm_file(sg->path)) != 0)
    fprintf(stderr, "graphs: %s: could not read it into the page cache\n", sg->path);
  sg->source = graph_source(&sg->g);
  return 0;
}

int main(int argc, char **argv)
{
  struct graph_options o;
  char err[512] = "";
  int rc = graph_parse_options(argc, argv, &o, err, sizeof(err));
  if ((rc = bench_opts_exit("graphs", rc, err, graph_usage)) >= 0)
    return rc;
  if (graph_check_paths("graphs", o.input, o.dir, o.out) != 0)
    return 2;
  const int gpu = !(o.nversions == 1 && o.versions[0] == GRAPH_V_CPU);
  if (gpu && bench_need_gpu("graphs", o.device) != 0)
    return 2;
  char device_name[256];
  graph_report_context(gpu ? o.device : -1, GRAPH_COMMIT, "graphs", device_name, sizeof(device_name));

  const int ngraphs = o.input[0] ? 1 : o.ngraphs;
  int failed = 0;
  for (int i = 0; i < ngraphs; i++) {
    struct graph_suite_graph sg;
    if (graph_prepare(&o, i, &sg) != 0) {
      failed = 1;
      continue;
    }
    if (graph_suite_run(&o, &sg) != 0)
      failed = 1;
    graph_free(&sg.g);
  }
  graph_suite_table(&o);
  printf(failed ? "\nFAILED: see the rows above\n" : "\nevery version of every algorithm verified (%s)\n", device_name);
  bench_report_close();
  return failed;
}
