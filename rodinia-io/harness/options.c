/*
 * options.c - the rodinia-io driver's command line.
 */
#include "rodinia-io/harness/options.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchlib/opts.h"
#include "benchlib/util.h"

const char rio_usage[] =
    "usage: rodinia [options] [BENCH ...]\n"
    "  BENCH ...          benchmarks to run (default: all; --list names them)\n"
    "  --versions LIST    comma-separated: cpu-io,expert,gpufs-4k,gpufs-64k (default: all)\n"
    "  --scale X          input sizes times X (default 1: the readahead paper's sizes)\n"
    "  --quick            --scale 1/64 --reps 1 (under a minute)\n"
    "  --reps N           timed repetitions per version, median kept (default 3)\n"
    "  --cache SIZE       GPU page cache of the gpufs versions (e.g. 500M; default: inputs + 64M)\n"
    "  --small-cache SIZE then the gpufs versions again with this page cache, smaller than the\n"
    "                     inputs (a benchmark may name its own: 3dconv 256M): the ratio to the full cache\n"
    "  --dir DIR          data folder (default /tmp/gpufs_rodinia)\n"
    "  --out FILE         append one JSON row per benchmark and version to FILE\n"
    "  --threads N        host threads of the expert version (default 8)\n"
    "  --device N         CUDA device (default 0)\n"
    "  --regen            write every input file anew\n"
    "  --no-generate      a missing input file is an error\n"
    "  --list             print the benchmarks and exit\n";

static int rio_bad(char *err, size_t len, const char *fmt, const char *arg)
{
  snprintf(err, len, fmt, arg);
  return -EINVAL;
}

/* --versions: the versions in table order, so that cpu-io and expert run
 * before the ratios need them. */
static int rio_versions(struct bench_opts *p, struct rio_options *o)
{
  const char *names[RIO_NVERSIONS];
  int idx[RIO_NVERSIONS], n = 0;
  for (int v = 0; v < RIO_NVERSIONS; v++)
    names[v] = rio_version_name((enum rio_version)v);
  const struct bench_names choices = {names, RIO_NVERSIONS, "version"};
  int rc = bench_opts_names(p, &choices, idx, &n);
  o->nversions = 0;
  for (int v = 0; rc == 0 && v < RIO_NVERSIONS; v++)
    for (int k = 0; k < n; k++)
      if (idx[k] == v)
        o->versions[o->nversions++] = (enum rio_version)v;
  return rc;
}

enum {
  RO_VERSIONS = BENCH_OPTS_FIRST, RO_SCALE, RO_REPS, RO_CACHE, RO_SMALL_CACHE, RO_DIR, RO_OUT, RO_THREADS,
  RO_DEVICE, RO_QUICK, RO_LIST, RO_REGEN, RO_NO_GENERATE,
};

static const struct bench_opt rio_table[] = {
    {"versions", BENCH_OPT_VALUE, RO_VERSIONS}, {"scale", BENCH_OPT_VALUE, RO_SCALE},
    {"reps", BENCH_OPT_VALUE, RO_REPS},         {"cache", BENCH_OPT_VALUE, RO_CACHE},
    {"small-cache", BENCH_OPT_VALUE, RO_SMALL_CACHE}, {"dir", BENCH_OPT_VALUE, RO_DIR},
    {"out", BENCH_OPT_VALUE, RO_OUT},           {"threads", BENCH_OPT_VALUE, RO_THREADS},
    {"device", BENCH_OPT_VALUE, RO_DEVICE},     {"quick", BENCH_OPT_FLAG, RO_QUICK},
    {"list", BENCH_OPT_FLAG, RO_LIST},          {"regen", BENCH_OPT_FLAG, RO_REGEN},
    {"no-generate", BENCH_OPT_FLAG, RO_NO_GENERATE},
};

/* What the user gave, for --quick's defaults. */
struct rio_given {
  int reps, scale, quick;
};

static int rio_option(struct bench_opts *p, int id, struct rio_options *o, struct rio_given *g)
{
  switch (id) {
  case RO_VERSIONS: return rio_versions(p, o);
  case RO_SCALE: g->scale = 1; return bench_opts_double(p, 0, 16, &o->scale);
  case RO_REPS: g->reps = 1; return bench_opts_int(p, 1, 100, &o->reps);
  case RO_CACHE: return bench_opts_size(p, 1u << 20, 1ull << 40, &o->cache);
  case RO_SMALL_CACHE: return bench_opts_size(p, 1u << 20, 1ull << 40, &o->small_cache);
  case RO_DIR: return bench_opts_string(p, o->dir, sizeof(o->dir) - 64);
  case RO_OUT: return bench_opts_string(p, o->out, sizeof(o->out));
  case RO_THREADS: return bench_opts_int(p, 1, 32, &o->expert_threads);
  case RO_DEVICE: return bench_opts_int(p, 0, 1023, &o->device);
  case RO_QUICK: g->quick = 1; return 0;
  case RO_LIST: o->list = 1; return 0;
  case RO_REGEN: o->gen = RIO_GEN_ALWAYS; return 0;
  case RO_NO_GENERATE: o->gen = RIO_GEN_NEVER; return 0;
  }
  return -EINVAL;
}

/* BENCH operands: known names, each once. */
static int rio_parse_benches(char **pos, int npos, const char *const *known, int nknown, struct rio_options *o,
                       char *err, size_t len)
{
  for (int i = 0; i < npos; i++) {
    const char *a = pos[i];
    int k;
    for (k = 0; k < nknown; k++)
      if (!strcmp(a, known[k]))
        break;
    if (k == nknown)
      return rio_bad(err, len, "unknown benchmark '%s' (--list names them)", a);
    for (int j = 0; j < o->nbenches; j++)
      if (!strcmp(o->benches[j], a))
        return rio_bad(err, len, "benchmark '%s' given twice", a);
    if (o->nbenches == RIO_MAX_BENCHES)
      return rio_bad(err, len, "too many benchmarks at '%s'", a);
    snprintf(o->benches[o->nbenches++], sizeof(o->benches[0]), "%s", a);
  }
  return 0;
}

int rio_parse_options(int argc, char **argv, const char *const *known, int nknown,
                      struct rio_options *o, char *err, size_t len)
{
  memset(o, 0, sizeof(*o));
  o->nversions = RIO_NVERSIONS;
  for (int v = 0; v < RIO_NVERSIONS; v++)
    o->versions[v] = (enum rio_version)v;
  o->scale = 1.0;
  o->reps = 3;
  o->expert_threads = 8;
  strcpy(o->dir, "/tmp/gpufs_rodinia");
  struct rio_given g = {0, 0, 0};
  struct bench_opts p;
  int id, rc = 0;
  bench_opts_init(&p, argc, argv, rio_table, sizeof(rio_table) / sizeof(rio_table[0]), err, len);
  while (rc == 0 && (id = bench_opts_next(&p)) != BENCH_OPTS_END)
    rc = id == BENCH_OPTS_HELP ? 1 : id < 0 ? id : rio_option(&p, id, o, &g);
  if (rc == 0)
    rc = rio_parse_benches(argv + p.optind, argc - p.optind, known, nknown, o, err, len);
  if (rc)
    return rc;
  if (g.quick) {
    if (!g.scale)
      o->scale = 1.0 / 64;
    if (!g.reps)
      o->reps = 1;
  }
  return 0;
}

int rio_check_files(const struct rio_options *o, char *err, size_t len)
{
  int rc = bench_mkdirs(o->dir);
  if (rc) {
    snprintf(err, len, "--dir %s: cannot make the folder (%s)", o->dir, strerror(-rc));
    return rc;
  }
  if ((rc = bench_check_input("--dir", o->dir, 1, err, len)) == 0 && o->out[0])
    rc = bench_check_output("--out", o->out, err, len);
  return rc;
}
