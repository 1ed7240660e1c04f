/*
 * service_opts.c - graph_service's command line (service_run.h), on
 * benchlib's parser (benchlib/opts.h).
 */
#include "graphs/service_run.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchlib/opts.h"
#include "graphs/options.h"
#include "graphs/update.h"

const char *const graph_svc_names[GRAPH_SVC_NVERSIONS] = {"copy", "uvm", "gpufs-reopen", "gpufs-acquire",
                                                          "gpufs-acquire-file"};

const char graph_svc_usage[] =
    "usage: graph_service [options]\n"
    "  SSSP on one weighted graph file, then for --rounds rounds: a writer rewrites the weights of a\n"
    "  share of the edges with pwrite, the GPU runs SSSP again; every version and share.\n"
    "  --scale N          Kronecker graph of 2^N vertices (default 24: a 4.4 GB file)\n"
    "  --edge-factor N    generated edges per vertex (default 16; each stored both ways)\n"
    "  --seed N           the generator's and the writer's seed (default 1)\n"
    "  --input FILE       a weighted graph file (graph_convert's) instead\n"
    "  --shares LIST      percent of the edges a round rewrites (default 1,10,25,50,75,100)\n"
    "  --runs N           contiguous runs a round's changes make (default 1)\n"
    "  --rounds N         rounds after the first SSSP (default 100)\n"
    "  --versions LIST    copy,uvm,gpufs-reopen,gpufs-acquire,gpufs-acquire-file (default: all)\n"
    "  --verify-every K   check rounds 0, 1, 1+K, 1+2K, ... (default 1: every round)\n"
    "  --ref KIND         dijkstra (one thread) or cpu (every core) (default dijkstra)\n"
    "  --cap SECONDS      a version and share stops after this long, its checks not counted: fewer\n"
    "                     rounds (default 0: none)\n"
    "  --quick            --scale 16 --rounds 10 (seconds)\n"
    "  --cache Nx         the gpufs versions' cache: N times the file (default 2x; its frames are split\n"
    "                     in rings by warp, so a cache of the file's size evicts)\n"
    "  --page SIZE        libgpufs's page size (default 4K)\n"
    "  --dir DIR          where the graph files are kept (default /tmp/gpufs_graphs)\n"
    "  --out FILE         append one JSON row per version and share to FILE\n"
    "  --threads N        host threads of the loaders and the cpu reference (default: every core)\n"
    "  --device N         CUDA device (default 0)\n"
    "  --regen            write the graph file anew\n";

enum {
  SO_SCALE = BENCH_OPTS_FIRST, SO_EF, SO_SEED, SO_INPUT, SO_SHARES, SO_RUNS, SO_ROUNDS, SO_VERSIONS, SO_VERIFY,
  SO_REF, SO_CAP, SO_QUICK, SO_CACHE, SO_PAGE, SO_DIR, SO_OUT, SO_THREADS, SO_DEVICE, SO_REGEN,
};

static const struct bench_opt svc_opt_table[] = {
    {"scale", BENCH_OPT_VALUE, SO_SCALE},       {"edge-factor", BENCH_OPT_VALUE, SO_EF},
    {"seed", BENCH_OPT_VALUE, SO_SEED},         {"input", BENCH_OPT_VALUE, SO_INPUT},
    {"shares", BENCH_OPT_VALUE, SO_SHARES},     {"runs", BENCH_OPT_VALUE, SO_RUNS},
    {"rounds", BENCH_OPT_VALUE, SO_ROUNDS},     {"versions", BENCH_OPT_VALUE, SO_VERSIONS},
    {"verify-every", BENCH_OPT_VALUE, SO_VERIFY}, {"ref", BENCH_OPT_VALUE, SO_REF},
    {"cap", BENCH_OPT_VALUE, SO_CAP},           {"quick", BENCH_OPT_FLAG, SO_QUICK},
    {"cache", BENCH_OPT_VALUE, SO_CACHE},       {"page", BENCH_OPT_VALUE, SO_PAGE},         {"dir", BENCH_OPT_VALUE, SO_DIR},
    {"out", BENCH_OPT_VALUE, SO_OUT},           {"threads", BENCH_OPT_VALUE, SO_THREADS},
    {"device", BENCH_OPT_VALUE, SO_DEVICE},     {"regen", BENCH_OPT_FLAG, SO_REGEN},
};

/* --shares: numbers in (0, 100], comma-separated, each at most once. */
static int svc_parse_shares(struct bench_opts *p, struct graph_svc_options *o)
{
  static const char rule[] = "percentages above 0 and at most 100, comma-separated, each once (1,10,25)";
  char buf[256];
  if (strlen(p->val) >= sizeof(buf))
    return bench_opts_fail(p, rule);
  strcpy(buf, p->val);
  o->nshares = 0;
  for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    char *end;
    const double s = strtod(t, &end);
    if (*end || end == t || !(s > 0 && s <= 100) || o->nshares == GRAPH_SVC_MAX_SHARES)
      return bench_opts_fail(p, rule);
    for (int i = 0; i < o->nshares; i++)
      if (o->shares[i] == s)
        return bench_opts_fail(p, rule);
    o->shares[o->nshares++] = s;
  }
  return o->nshares ? 0 : bench_opts_fail(p, rule);
}

static int svc_option(struct bench_opts *p, int id, struct graph_svc_options *o, int *quick)
{
  static const struct bench_names versions = {graph_svc_names, GRAPH_SVC_NVERSIONS, "version"};
  uint64_t v;
  int rc;
  switch (id) {
  case SO_SCALE:
    if ((rc = bench_opts_u64(p, 1, 31, &v)) == 0)
      o->gen.size = v;
    return rc;
  case SO_EF: return bench_opts_u64(p, 1, 1024, &o->gen.edge_factor);
  case SO_SEED: return bench_opts_u64(p, 0, UINT64_MAX, &o->gen.seed);
  case SO_INPUT: return bench_opts_string(p, o->input, sizeof(o->input));
  case SO_SHARES: return svc_parse_shares(p, o);
  case SO_RUNS:
    if ((rc = bench_opts_u64(p, 1, GRAPH_UPDATE_MAX_RUNS, &v)) == 0)
      o->runs = (uint32_t)v;
    return rc;
  case SO_ROUNDS: return bench_opts_int(p, 1, 100000, &o->rounds);
  case SO_VERSIONS: return bench_opts_names(p, &versions, o->versions, &o->nversions);
  case SO_VERIFY: return bench_opts_int(p, 1, 100000, &o->verify_every);
  case SO_REF:
    if (!strcmp(p->val, "dijkstra") || !strcmp(p->val, "cpu")) {
      o->ref = p->val[0] == 'c' ? GRAPH_SVC_REF_CPU : GRAPH_SVC_REF_DIJKSTRA;
      return 0;
    }
    return bench_opts_fail(p, "dijkstra or cpu");
  case SO_CAP: return bench_opts_double(p, 0, 86400, &o->cap_s);
  case SO_QUICK: *quick = 1; return 0;
  case SO_CACHE: {
    char *end;
    const size_t len = strlen(p->val);
    o->cache_x = strtod(p->val, &end);
    if (len < 2 || p->val[len - 1] != 'x' || end != p->val + len - 1 || !(o->cache_x >= 1 && o->cache_x <= 16))
      return bench_opts_fail(p, "a multiple of the file from 1x to 16x (2x, 1.5x)");
    return 0;
  }
  case SO_PAGE: return graph_parse_page(p, &o->page);
  case SO_DIR: return bench_opts_string(p, o->dir, sizeof(o->dir) - 64);
  case SO_OUT: return bench_opts_string(p, o->out, sizeof(o->out));
  case SO_THREADS: return bench_opts_int(p, 1, 256, &o->threads);
  case SO_DEVICE: return bench_opts_int(p, 0, 1023, &o->device);
  case SO_REGEN: o->regen = 1; return 0;
  }
  return -EINVAL;
}

int graph_svc_parse(int argc, char **argv, struct graph_svc_options *o, char *err, size_t errlen)
{
  static const double shares[] = {1, 10, 25, 50, 75, 100};
  struct bench_opts p;
  int id, rc = 0, quick = 0;
  memset(o, 0, sizeof(*o));
  o->gen = (struct graph_gen){GRAPH_GEN_KRONECKER, 1, 0, 16, 1};
  o->rounds = 0;
  o->runs = 1;
  o->verify_every = 1;
  o->page = 4096;
  o->cache_x = 2;
  snprintf(o->dir, sizeof(o->dir), "/tmp/gpufs_graphs");
  for (int v = 0; v < GRAPH_SVC_NVERSIONS; v++)
    o->versions[o->nversions++] = v;
  for (size_t i = 0; i < sizeof(shares) / sizeof(shares[0]); i++)
    o->shares[o->nshares++] = shares[i];
  bench_opts_init(&p, argc, argv, svc_opt_table, sizeof(svc_opt_table) / sizeof(svc_opt_table[0]), err, errlen);
  while (!rc && (id = bench_opts_next(&p)) > BENCH_OPTS_HELP)
    rc = svc_option(&p, id, o, &quick);
  if (rc)
    return rc;
  if (id == BENCH_OPTS_HELP)
    return 1;
  if (id < 0)
    return id;
  if ((rc = bench_opts_operands(&p, 0)) != 0)
    return rc;
  if (!o->gen.size)
    o->gen.size = quick ? 16 : 24;
  if (!o->rounds)
    o->rounds = quick ? 10 : 100;
  if (o->input[0])
    o->gen.kind = GRAPH_GEN_NONE;
  return 0;
}
