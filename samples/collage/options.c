/*
 * options.c - the `collage` command line: parsing and the usage text.
 * Every bad value is refused with a message naming the option.
 */
#include "samples/collage/options.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "benchlib/opts.h"
#include "benchlib/util.h"

const char collage_usage[] =
    "usage: collage [options] [IN OUT]\n"
    "  IN OUT             make the collage of picture IN (PNG or JPEG; cropped to whole 32x32\n"
    "                     blocks) and write it to OUT (PNG); without them: the benchmark, every\n"
    "                     version on every input size, a table last\n"
    "  --tiles N          dataset size (default 1M; 10M is the paper's: 41 GB)\n"
    "  --dir DIR          data folder for the dataset and index (default /tmp/gpufs_collage)\n"
    "  --seeds DIR        seed photographs (default DIR/seeds; fetched from Debian's archive\n"
    "                     when empty, else a procedural set)\n"
    "  --no-fetch         do not fetch seed photographs\n"
    "  --rebuild          build the dataset and the index anew\n"
    "  --no-register      gpufs versions: do not register the dataset (by default gpufs_register\n"
    "                     pins it, so that a miss copies its page from the host page cache with no\n"
    "                     request to the daemon; a dataset that cannot be registered is read\n"
    "                     through the daemon, with a message)\n"
    "  --L N --K N --cap N  LSH tables (32), key bits (default: about 16 tiles a bucket), bucket cap (64)\n"
    "  --versions LIST    comma-separated: cpu,cpu-gpu,gpufs-block,gpufs-warp,gpufs-gread\n"
    "                     (benchmark default: all; picture default: gpufs-warp)\n"
    "  --sizes LIST       input sizes, e.g. 512x384,8192x6144 (default 512x384 .. 8192x6144)\n"
    "  --reps N           timed repetitions, the fastest kept (default 3)\n"
    "  --cache SIZE       GPU page cache of the gpufs versions (default: the dataset + 64M)\n"
    "  --small-cache SIZE the gpufs versions again on the largest input with this cache, or\n"
    "                     NUMx: the dataset NUM times larger than the cache (make collage: 10x)\n"
    "  --threads N        host threads of the cpu and cpu-gpu versions (default: every core, <= 16)\n"
    "  --device N         CUDA device (default 0)\n"
    "  --out FILE         append one JSON row per version and size to FILE\n"
    "  --collage-out PNG  benchmark: write the collage of the largest input up to 2048 wide\n"
    "  --quick            20k tiles, sizes 512x384 and 1024x768, 1 repetition\n";

static const char *const collage_version_names[COLLAGE_NVERSIONS] = {"cpu", "cpu-gpu", "gpufs-block",
                                                                     "gpufs-warp", "gpufs-gread"};

const char *collage_version_name(enum collage_version v)
{
  return (unsigned)v < COLLAGE_NVERSIONS ? collage_version_names[v] : "?";
}

static const int collage_default_w[] = {512, 1024, 2048, 4096, 8192};
static const int collage_default_h[] = {384, 768, 1536, 3072, 6144};

static int collage_bad(char *err, size_t len, const char *fmt, const char *arg)
{
  snprintf(err, len, fmt, arg);
  return -EINVAL;
}

/* --versions: the versions in the order given. */
static int collage_versions(struct bench_opts *p, struct collage_options *o)
{
  static const struct bench_names choices = {collage_version_names, COLLAGE_NVERSIONS, "version"};
  int idx[COLLAGE_NVERSIONS];
  int rc = bench_opts_names(p, &choices, idx, &o->nversions);
  for (int k = 0; rc == 0 && k < o->nversions; k++)
    o->versions[k] = (enum collage_version)idx[k];
  o->versions_given = 1;
  return rc;
}

static int collage_parse_sizes(const char *s, struct collage_options *o, char *err, size_t len)
{
  char buf[256];
  if (strlen(s) >= sizeof(buf))
    return collage_bad(err, len, "--sizes %s: too long", s);
  strcpy(buf, s);
  o->nsizes = 0;
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    int w, h, n = 0;
    if (sscanf(tok, "%dx%d%n", &w, &h, &n) != 2 || tok[n] || w < (int)COLLAGE_TILE || h < (int)COLLAGE_TILE ||
        w > 65536 || h > 65536 || (int64_t)w * h > ((int64_t)1 << 30))
      return collage_bad(err, len, "--sizes: '%s' is not WxH with 32 <= W, H <= 65536 (and 2^30 pixels at most)",
                         tok);
    if (o->nsizes == COLLAGE_MAX_SIZES)
      return collage_bad(err, len, "--sizes %s: at most 8 sizes", s);
    o->w[o->nsizes] = w;
    o->h[o->nsizes] = h;
    o->nsizes++;
  }
  if (o->nsizes == 0)
    return collage_bad(err, len, "--sizes '%s': no size", s);
  return 0;
}

static void collage_defaults(struct collage_options *o)
{
  memset(o, 0, sizeof(*o));
  strcpy(o->dir, "/tmp/gpufs_collage");
  o->tiles = 1000000;
  o->L = COLLAGE_DEFAULT_L;
  o->cap = COLLAGE_DEFAULT_CAP;
  o->reps = 3;
  o->fetch = 1;
  o->reg = 1;
  o->nsizes = 5;
  for (int i = 0; i < 5; i++)
    o->w[i] = collage_default_w[i], o->h[i] = collage_default_h[i];
}

enum {
  CO_TILES = BENCH_OPTS_FIRST, CO_L, CO_K, CO_CAP, CO_REPS, CO_THREADS, CO_DEVICE, CO_CACHE, CO_SMALL_CACHE,
  CO_VERSIONS, CO_SIZES, CO_DIR, CO_SEEDS, CO_OUT, CO_COLLAGE_OUT, CO_NO_FETCH, CO_NO_REGISTER, CO_REBUILD,
  CO_QUICK,
};

static const struct bench_opt collage_table[] = {
    {"tiles", BENCH_OPT_VALUE, CO_TILES},       {"L", BENCH_OPT_VALUE, CO_L},
    {"K", BENCH_OPT_VALUE, CO_K},               {"cap", BENCH_OPT_VALUE, CO_CAP},
    {"reps", BENCH_OPT_VALUE, CO_REPS},         {"threads", BENCH_OPT_VALUE, CO_THREADS},
    {"device", BENCH_OPT_VALUE, CO_DEVICE},     {"cache", BENCH_OPT_VALUE, CO_CACHE},
    {"small-cache", BENCH_OPT_VALUE, CO_SMALL_CACHE}, {"versions", BENCH_OPT_VALUE, CO_VERSIONS},
    {"sizes", BENCH_OPT_VALUE, CO_SIZES},       {"dir", BENCH_OPT_VALUE, CO_DIR},
    {"seeds", BENCH_OPT_VALUE, CO_SEEDS},       {"out", BENCH_OPT_VALUE, CO_OUT},
    {"collage-out", BENCH_OPT_VALUE, CO_COLLAGE_OUT}, {"no-fetch", BENCH_OPT_FLAG, CO_NO_FETCH},
    {"no-register", BENCH_OPT_FLAG, CO_NO_REGISTER}, {"rebuild", BENCH_OPT_FLAG, CO_REBUILD},
    {"quick", BENCH_OPT_FLAG, CO_QUICK},
};

/* --small-cache: a size, or NUMx (the dataset NUM times the cache). */
static int collage_small_cache(struct bench_opts *p, struct collage_options *o)
{
  const char *val = p->val;
  if (!*val || val[strlen(val) - 1] != 'x')
    return bench_opts_size(p, 1u << 20, 1ull << 40, &o->small_cache);
  char *end;
  o->small_factor = strtod(val, &end);
  if (end == val || *end != 'x' || end[1] || !(o->small_factor >= 1) || o->small_factor > 1e6)
    return bench_opts_fail(p, "NUMx means the dataset NUM times the cache (1 <= NUM <= 1e6)");
  return 0;
}

/* An option with a small unsigned range into a uint32_t field. */
static int collage_u32(struct bench_opts *p, long lo, long hi, uint32_t *dst)
{
  int v = 0, rc = bench_opts_int(p, lo, hi, &v);
  *dst = (uint32_t)v;
  return rc;
}

static int collage_option(struct bench_opts *p, int id, struct collage_options *o, char *err, size_t len)
{
  switch (id) {
  case CO_TILES: return bench_opts_count(p, 16, 4000000000ull, &o->tiles);
  case CO_L: return collage_u32(p, 1, COLLAGE_MAX_L, &o->L);
  case CO_K: return collage_u32(p, 1, COLLAGE_MAX_K, &o->K);
  case CO_CAP: return collage_u32(p, 1, COLLAGE_MAX_CAP, &o->cap);
  case CO_REPS: return bench_opts_int(p, 1, 100, &o->reps);
  case CO_THREADS: return bench_opts_int(p, 1, 1024, &o->threads);
  case CO_DEVICE: return bench_opts_int(p, 0, 63, &o->device);
  case CO_CACHE: return bench_opts_size(p, 1u << 20, 1ull << 40, &o->cache);
  case CO_SMALL_CACHE: return collage_small_cache(p, o);
  case CO_VERSIONS: return collage_versions(p, o);
  case CO_SIZES: return collage_parse_sizes(p->val, o, err, len);
  case CO_DIR: return bench_opts_string(p, o->dir, sizeof(o->dir));
  case CO_SEEDS: return bench_opts_string(p, o->seeds, sizeof(o->seeds));
  case CO_OUT: return bench_opts_string(p, o->rows, sizeof(o->rows));
  case CO_COLLAGE_OUT: return bench_opts_string(p, o->collage_out, sizeof(o->collage_out));
  case CO_NO_FETCH: o->fetch = 0; return 0;
  case CO_NO_REGISTER: o->reg = 0; return 0;
  case CO_REBUILD: o->rebuild = 1; return 0;
  case CO_QUICK: o->tiles = 20000, o->reps = 1, o->nsizes = 2; return 0;
  }
  return -EINVAL;
}

/* IN OUT, or none: the mode and its default versions. */
static int collage_operands(char **pos, int npos, struct collage_options *o, char *err, size_t len)
{
  if (npos > 2)
    return collage_bad(err, len, "'%s': at most two pictures (IN OUT)", pos[2]);
  if (npos == 1)
    return collage_bad(err, len, "'%s': give the output picture too (collage IN OUT)", pos[0]);
  if (npos == 2) {
    o->mode = COLLAGE_MODE_PICTURE;
    if (!*pos[0] || strlen(pos[0]) >= sizeof(o->in) || !*pos[1] || strlen(pos[1]) >= sizeof(o->out))
      return collage_bad(err, len, "'%s': IN and OUT are paths of 1 to 4095 characters", pos[0]);
    strcpy(o->in, pos[0]);
    strcpy(o->out, pos[1]);
    if (!o->versions_given) {
      o->nversions = 1;
      o->versions[0] = COLLAGE_GPUFS_WARP;
    }
  } else if (!o->versions_given) {
    o->nversions = COLLAGE_NVERSIONS;
    for (int v = 0; v < COLLAGE_NVERSIONS; v++)
      o->versions[v] = (enum collage_version)v;
  }
  return 0;
}

int collage_parse_options(int argc, char **argv, struct collage_options *o, char *err, size_t len)
{
  struct bench_opts p;
  int id, rc = 0;
  collage_defaults(o);
  bench_opts_init(&p, argc, argv, collage_table, sizeof(collage_table) / sizeof(collage_table[0]), err, len);
  while (rc == 0 && (id = bench_opts_next(&p)) != BENCH_OPTS_END)
    rc = id == BENCH_OPTS_HELP ? 1 : id < 0 ? id : collage_option(&p, id, o, err, len);
  if (rc)
    return rc;
  if ((rc = collage_operands(argv + p.optind, argc - p.optind, o, err, len)) != 0)
    return rc;
  if (o->K == 0)
    o->K = collage_default_k(o->tiles);
  if ((uint64_t)o->L * o->cap > COLLAGE_GPU_MAX_SHORTLIST) {
    snprintf(err, len, "--L %u x --cap %u: at most %u candidates a block (the GPU's shortlist)", o->L, o->cap,
             COLLAGE_GPU_MAX_SHORTLIST);
    return -EINVAL;
  }
  return 0;
}

int collage_check_files(const struct collage_options *o, char *err, size_t len)
{
  int rc = 0;
  if (o->mode == COLLAGE_MODE_PICTURE && (rc = bench_check_input("IN", o->in, 0, err, len)) == 0)
    rc = bench_check_output("OUT", o->out, err, len);
  if (rc == 0 && o->rows[0])
    rc = bench_check_output("--out", o->rows, err, len);
  if (rc == 0 && o->collage_out[0])
    rc = bench_check_output("--collage-out", o->collage_out, err, len);
  if (rc == 0 && o->seeds[0] && access(o->seeds, F_OK) == 0)
    rc = bench_check_input("--seeds", o->seeds, 1, err, len);
  return rc;
}
