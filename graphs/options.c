/*
 * options.c - the `graphs` suite's command line (options.h), on
 * benchlib's parser (benchlib/opts.h).
 */
#include "graphs/options.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchlib/opts.h"

const char *const graph_version_names[GRAPH_NVERSIONS] = {"cpu", "resident", "zero-copy",
                                                          "uvm", "uvm-rm", "gpufs"};

const char *graph_version_name(enum graph_version v) { return v < GRAPH_NVERSIONS ? graph_version_names[v] : "?"; }

const char graph_usage[] =
    "usage: graphs [options]\n"
    "  --graphs LIST      comma-separated kron:SCALE and uniform:VERTICES (k, M suffixes) graphs\n"
    "                     (default kron:26,uniform:64M: 15-16 GB files with weights)\n"
    "  --input FILE       a graph file (graph_convert's) instead of generated graphs\n"
    "  --edge-factor N    generated edges per vertex (default 16; each stored both ways)\n"
    "  --seed N           generators' seed (default 1)\n"
    "  --algos LIST       bfs,sssp,pr,cc (default: all)\n"
    "  --versions LIST    cpu,resident,zero-copy,uvm,uvm-rm,gpufs (default: all)\n"
    "  --limit SIZE|Nx    GPU memory for the graph: libgpufs's cache, and what uvm may use (the\n"
    "                     rest of the GPU held by a reservation); Nx: the graph's size / N\n"
    "  --page SIZE        libgpufs's page size (default 4K)\n"
    "  --reps N           timed runs per version, the median kept (default 1)\n"
    "  --cap SECONDS      a GPU version stops after this long, inside a round too: its row is capped,\n"
    "                     its time a lower bound (default 60; uvm thrashes when the graph does not fit)\n"
    "  --ref KIND         verify against: serial (one-thread references, default) or cpu (the cpu\n"
    "                     version on every core: minutes less at scale 25)\n"
    "  --quick            --graphs kron:18,uniform:256k --cap 2 (about a minute)\n"
    "  --dir DIR          where the graph files are kept (default /tmp/gpufs_graphs)\n"
    "  --out FILE         append one JSON row per graph, algorithm and version to FILE\n"
    "  --threads N        host threads of the cpu version and the loaders (default: every core)\n"
    "  --device N         CUDA device (default 0)\n"
    "  --regen            write the graph files anew\n";

enum {
  GO_GRAPHS = BENCH_OPTS_FIRST, GO_INPUT, GO_EDGE_FACTOR, GO_SEED, GO_ALGOS, GO_VERSIONS, GO_LIMIT, GO_PAGE,
  GO_REPS, GO_QUICK, GO_DIR, GO_OUT, GO_THREADS, GO_DEVICE, GO_REGEN, GO_CAP, GO_REF,
};

static const struct bench_opt graph_opt_table[] = {
    {"graphs", BENCH_OPT_VALUE, GO_GRAPHS},   {"input", BENCH_OPT_VALUE, GO_INPUT},
    {"edge-factor", BENCH_OPT_VALUE, GO_EDGE_FACTOR}, {"seed", BENCH_OPT_VALUE, GO_SEED},
    {"algos", BENCH_OPT_VALUE, GO_ALGOS},     {"versions", BENCH_OPT_VALUE, GO_VERSIONS},
    {"limit", BENCH_OPT_VALUE, GO_LIMIT},     {"page", BENCH_OPT_VALUE, GO_PAGE},
    {"reps", BENCH_OPT_VALUE, GO_REPS},       {"quick", BENCH_OPT_FLAG, GO_QUICK},
    {"dir", BENCH_OPT_VALUE, GO_DIR},         {"out", BENCH_OPT_VALUE, GO_OUT},
    {"threads", BENCH_OPT_VALUE, GO_THREADS}, {"device", BENCH_OPT_VALUE, GO_DEVICE},
    {"regen", BENCH_OPT_FLAG, GO_REGEN},      {"cap", BENCH_OPT_VALUE, GO_CAP},
    {"ref", BENCH_OPT_VALUE, GO_REF},
};

/* --algos, --versions: a list of names (bench_opts_names), kept in the
 * table's order so that the baselines run before the ratios need them. */
static int graph_parse_list(struct bench_opts *p, const struct bench_names *c, int *out, int *count)
{
  int idx[GRAPH_NVERSIONS], k = 0;
  const int rc = bench_opts_names(p, c, idx, &k);
  *count = 0;
  for (int i = 0; rc == 0 && i < c->n; i++)
    for (int j = 0; j < k; j++)
      if (idx[j] == i)
        out[(*count)++] = i;
  return rc;
}

/* A count with an optional k (1e3) or M (1e6) suffix, the whole string. */
static int graph_count(const char *s, uint64_t *out)
{
  char *end;
  if (*s < '0' || *s > '9')
    return -EINVAL;
  errno = 0;
  uint64_t v = strtoull(s, &end, 10);
  if (*end == 'k')
    v *= 1000, end++;
  else if (*end == 'M')
    v *= 1000000, end++;
  if (errno || *end)
    return -EINVAL;
  *out = v;
  return 0;
}

static int graph_parse_graphs(struct bench_opts *p, const char *s, struct graph_options *o)
{
  char buf[256];
  if (strlen(s) >= sizeof(buf))
    return bench_opts_fail(p, "too long");
  strcpy(buf, s);
  o->ngraphs = 0;
  for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    struct graph_gen *g = &o->graphs[o->ngraphs];
    uint64_t v;
    if (o->ngraphs == GRAPH_MAX_GRAPHS)
      return bench_opts_fail(p, "at most 8 graphs");
    memset(g, 0, sizeof(*g));
    if (!strncmp(t, "kron:", 5) && !graph_count(t + 5, &v) && v >= 1 && v <= 31)
      g->kind = GRAPH_GEN_KRONECKER;
    else if (!strncmp(t, "uniform:", 8) && !graph_count(t + 8, &v) && v >= 1 && v <= GRAPH_MAX_VERTICES)
      g->kind = GRAPH_GEN_UNIFORM;
    else
      return bench_opts_fail(p, "kron:SCALE (1..31) or uniform:VERTICES, comma-separated");
    g->size = v;
    o->ngraphs++;
  }
  return o->ngraphs ? 0 : bench_opts_fail(p, "no graph");
}

static int graph_parse_limit(struct bench_opts *p, struct graph_options *o)
{
  const size_t len = strlen(p->val);
  if (len > 1 && p->val[len - 1] == 'x') {
    char *end;
    o->limit_div = strtod(p->val, &end);
    if (end != p->val + len - 1 || !(o->limit_div >= 1 && o->limit_div <= 1024))
      return bench_opts_fail(p, "a size (500M, 4G) or a divisor of the graph's size from 1x to 1024x");
    o->limit = 0;
    return 0;
  }
  o->limit_div = 0;
  return bench_opts_size(p, 16ull << 20, 1ull << 40, &o->limit);
}

/* What the user gave, for --quick's defaults. */
struct graph_given {
  uint64_t ef, seed;
  int cap, quick;
};

int graph_parse_page(struct bench_opts *p, uint32_t *page)
{
  uint64_t v;
  int rc = bench_opts_size(p, 4096, 2u << 20, &v);
  if (rc != 0)
    return rc;
  if (v & (v - 1))
    return bench_opts_fail(p, "a power of two from 4K to 2M");
  *page = (uint32_t)v;
  return 0;
}

static int graph_parse_ref(struct bench_opts *p, struct graph_options *o)
{
  if (!strcmp(p->val, "serial"))
    o->ref = GRAPH_REF_SERIAL;
  else if (!strcmp(p->val, "cpu"))
    o->ref = GRAPH_REF_CPU;
  else
    return bench_opts_fail(p, "serial or cpu");
  return 0;
}

static int graph_option(struct bench_opts *p, int id, struct graph_options *o, struct graph_given *g)
{
  static const struct bench_names algos = {graph_algo_names, GRAPH_NALGOS, "algorithm"};
  static const struct bench_names versions = {graph_version_names, GRAPH_NVERSIONS, "version"};
  switch (id) {
  case GO_GRAPHS: return graph_parse_graphs(p, p->val, o);
  case GO_INPUT: return bench_opts_string(p, o->input, sizeof(o->input));
  case GO_EDGE_FACTOR: return bench_opts_u64(p, 1, 1024, &g->ef);
  case GO_SEED: return bench_opts_u64(p, 0, UINT64_MAX, &g->seed);
  case GO_ALGOS: return graph_parse_list(p, &algos, o->algos, &o->nalgos);
  case GO_VERSIONS: return graph_parse_list(p, &versions, o->versions, &o->nversions);
  case GO_LIMIT: return graph_parse_limit(p, o);
  case GO_PAGE: return graph_parse_page(p, &o->page);
  case GO_REPS: return bench_opts_int(p, 1, 100, &o->reps);
  case GO_QUICK: g->quick = 1; return graph_parse_graphs(p, "kron:18,uniform:256k", o);
  case GO_CAP: g->cap = 1; return bench_opts_double(p, 0, 86400, &o->cap_s);
  case GO_DIR: return bench_opts_string(p, o->dir, sizeof(o->dir) - 64);
  case GO_OUT: return bench_opts_string(p, o->out, sizeof(o->out));
  case GO_THREADS: return bench_opts_int(p, 1, 256, &o->threads);
  case GO_DEVICE: return bench_opts_int(p, 0, 1023, &o->device);
  case GO_REGEN: o->regen = 1; return 0;
  case GO_REF: return graph_parse_ref(p, o);
  }
  return -EINVAL;
}

int graph_parse_options(int argc, char **argv, struct graph_options *o, char *err, size_t errlen)
{
  struct bench_opts p;
  struct graph_given g = {16, 1, 0, 0};
  int id, rc = 0;
  memset(o, 0, sizeof(*o));
  o->reps = 1;
  o->page = 4096;
  snprintf(o->dir, sizeof(o->dir), "/tmp/gpufs_graphs");
  for (int a = 0; a < GRAPH_NALGOS; a++)
    o->algos[o->nalgos++] = a;
  for (int v = 0; v < GRAPH_NVERSIONS; v++)
    o->versions[o->nversions++] = v;
  bench_opts_init(&p, argc, argv, graph_opt_table, sizeof(graph_opt_table) / sizeof(graph_opt_table[0]), err,
                  errlen);
  while (!rc && (id = bench_opts_next(&p)) > BENCH_OPTS_HELP)
    rc = graph_option(&p, id, o, &g);
  if (rc)
    return rc;
  if (id == BENCH_OPTS_HELP)
    return 1;
  if (id < 0)
    return id;
  if ((rc = bench_opts_operands(&p, 0)) != 0)
    return rc;
  if (!o->ngraphs && !o->input[0]) {
    o->graphs[0] = (struct graph_gen){GRAPH_GEN_KRONECKER, 1, 26, 0, 0};
    o->graphs[1] = (struct graph_gen){GRAPH_GEN_UNIFORM, 1, 64000000, 0, 0};
    o->ngraphs = 2;
  }
  for (int i = 0; i < o->ngraphs; i++) {
    o->graphs[i].weighted = 1;
    o->graphs[i].edge_factor = g.ef;
    o->graphs[i].seed = g.seed;
  }
  if (!g.cap)
    o->cap_s = g.quick ? 2 : 60;
  if (o->input[0])
    o->ngraphs = 0;
  return 0;
}

uint64_t graph_limit_for(const struct graph_options *o, uint64_t file_bytes, uint32_t page)
{
  uint64_t l = o->limit_div > 0 ? (uint64_t)((double)file_bytes / o->limit_div) : o->limit;
  if (l == 0)
    return 0;
  l = (l + page - 1) / page * page;
  return l < (16ull << 20) ? 16ull << 20 : l;
}
