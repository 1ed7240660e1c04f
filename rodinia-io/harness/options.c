/*
 * options.c - the rodinia-io driver's command line.
 */
#include "rodinia-io/harness/options.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static int rio_parse_int(const char *s, int lo, int hi, int *out)
{
  char *end;
  long v = strtol(s, &end, 10);
  if (end == s || *end || v < lo || v > hi)
    return -1;
  *out = (int)v;
  return 0;
}

static int rio_parse_versions(const char *s, struct rio_options *o, char *err, size_t len)
{
  char buf[128];
  if (strlen(s) >= sizeof(buf))
    return rio_bad(err, len, "--versions %s: too long", s);
  strcpy(buf, s);
  o->nversions = 0;
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    int v;
    for (v = 0; v < RIO_NVERSIONS; v++)
      if (!strcmp(tok, rio_version_name((enum rio_version)v)))
        break;
    if (v == RIO_NVERSIONS)
      return rio_bad(err, len, "--versions: unknown version '%s' (cpu-io, expert, gpufs-4k, gpufs-64k)", tok);
    for (int k = 0; k < o->nversions; k++)
      if (o->versions[k] == (enum rio_version)v)
        return rio_bad(err, len, "--versions: '%s' given twice", tok);
    o->versions[o->nversions++] = (enum rio_version)v;
  }
  if (o->nversions == 0)
    return rio_bad(err, len, "--versions '%s': no version", s);
  /* table order, so that cpu-io and expert run before the ratios need them */
  for (int a = 0; a < o->nversions; a++)
    for (int b = a + 1; b < o->nversions; b++)
      if (o->versions[b] < o->versions[a]) {
        enum rio_version t = o->versions[a];
        o->versions[a] = o->versions[b];
        o->versions[b] = t;
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
  int reps_given = 0, scale_given = 0, quick = 0;

  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *val = i + 1 < argc ? argv[i + 1] : NULL;
    int takes = !strcmp(a, "--versions") || !strcmp(a, "--scale") || !strcmp(a, "--reps") ||
                !strcmp(a, "--cache") || !strcmp(a, "--small-cache") || !strcmp(a, "--dir") || !strcmp(a, "--out") ||
                !strcmp(a, "--threads") || !strcmp(a, "--device");
    if (takes && !val)
      return rio_bad(err, len, "%s: needs a value", a);
    if (!strcmp(a, "--help") || !strcmp(a, "-h"))
      return 1;
    else if (!strcmp(a, "--quick"))
      quick = 1;
    else if (!strcmp(a, "--list"))
      o->list = 1;
    else if (!strcmp(a, "--regen"))
      o->gen = RIO_GEN_ALWAYS;
    else if (!strcmp(a, "--no-generate"))
      o->gen = RIO_GEN_NEVER;
    else if (!strcmp(a, "--versions")) {
      int rc = rio_parse_versions(val, o, err, len);
      if (rc)
        return rc;
    } else if (!strcmp(a, "--scale")) {
      char *end;
      double s = strtod(val, &end);
      if (end == val || *end || !(s > 0) || s > 16)
        return rio_bad(err, len, "--scale %s: a number in (0, 16]", val);
      o->scale = s;
      scale_given = 1;
    } else if (!strcmp(a, "--reps")) {
      if (rio_parse_int(val, 1, 100, &o->reps))
        return rio_bad(err, len, "--reps %s: 1 to 100", val);
      reps_given = 1;
    } else if (!strcmp(a, "--cache") || !strcmp(a, "--small-cache")) {
      uint64_t *dst = !strcmp(a, "--cache") ? &o->cache : &o->small_cache;
      if ((*dst = bench_parse_size(val)) < (1u << 20)) {
        snprintf(err, len, "%s %s: a size of 1M or more (e.g. 500M, 2G)", a, val);
        return -EINVAL;
      }
    } else if (!strcmp(a, "--threads")) {
      if (rio_parse_int(val, 1, 32, &o->expert_threads))
        return rio_bad(err, len, "--threads %s: 1 to 32", val);
    } else if (!strcmp(a, "--device")) {
      if (rio_parse_int(val, 0, 1023, &o->device))
        return rio_bad(err, len, "--device %s: a CUDA device number", val);
    } else if (!strcmp(a, "--dir") || !strcmp(a, "--out")) {
      char *dst = !strcmp(a, "--dir") ? o->dir : o->out;
      if (!*val || strlen(val) >= sizeof(o->dir) - 64)
        return rio_bad(err, len, "%s: empty or too long", a);
      strcpy(dst, val);
    } else if (a[0] == '-') {
      return rio_bad(err, len, "unknown option '%s' (--help lists them)", a);
    } else {
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
    if (takes)
      i++;
  }
  if (quick) {
    if (!scale_given)
      o->scale = 1.0 / 64;
    if (!reps_given)
      o->reps = 1;
  }
  return 0;
}
