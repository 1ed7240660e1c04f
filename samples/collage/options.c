/*
 * options.c - the `collage` command line: parsing and the usage text.
 * Every bad value is refused with a message naming the option.
 */
#include "samples/collage/options.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

const char *collage_version_name(enum collage_version v)
{
  static const char *const names[COLLAGE_NVERSIONS] = {"cpu", "cpu-gpu", "gpufs-block", "gpufs-warp",
                                                        "gpufs-gread"};
  return (unsigned)v < COLLAGE_NVERSIONS ? names[v] : "?";
}

static const int collage_default_w[] = {512, 1024, 2048, 4096, 8192};
static const int collage_default_h[] = {384, 768, 1536, 3072, 6144};

static int collage_bad(char *err, size_t len, const char *fmt, const char *arg)
{
  snprintf(err, len, fmt, arg);
  return -EINVAL;
}

uint64_t collage_parse_count(const char *s)
{
  char *end;
  double v = strtod(s, &end);
  if (end == s || !(v > 0))
    return 0;
  if (*end == 'k' || *end == 'K')
    v *= 1e3, end++;
  else if (*end == 'M' || *end == 'm')
    v *= 1e6, end++;
  if (*end || v > 4e9 || v != (double)(uint64_t)v)
    return 0;
  return (uint64_t)v;
}

static int collage_parse_uint(const char *s, long lo, long hi, long *out)
{
  char *end;
  long v = strtol(s, &end, 10);
  if (end == s || *end || v < lo || v > hi)
    return -1;
  *out = v;
  return 0;
}

static int collage_parse_versions(const char *s, struct collage_options *o, char *err, size_t len)
{
  char buf[256];
  if (strlen(s) >= sizeof(buf))
    return collage_bad(err, len, "--versions %s: too long", s);
  strcpy(buf, s);
  o->nversions = 0;
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    int v;
    for (v = 0; v < COLLAGE_NVERSIONS; v++)
      if (!strcmp(tok, collage_version_name((enum collage_version)v)))
        break;
    if (v == COLLAGE_NVERSIONS)
      return collage_bad(err, len,
                         "--versions: unknown version '%s' (cpu, cpu-gpu, gpufs-block, gpufs-warp, gpufs-gread)",
                         tok);
    for (int k = 0; k < o->nversions; k++)
      if (o->versions[k] == (enum collage_version)v)
        return collage_bad(err, len, "--versions: '%s' named twice", tok);
    o->versions[o->nversions++] = (enum collage_version)v;
  }
  if (o->nversions == 0)
    return collage_bad(err, len, "--versions '%s': no version", s);
  return 0;
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

/* Copy a path argument, refusing an empty or too long one. */
static int collage_path(char *dst, size_t cap, const char *opt, const char *val, char *err, size_t len)
{
  if (!*val || strlen(val) >= cap) {
    snprintf(err, len, "%s: the path is empty or too long", opt);
    return -EINVAL;
  }
  strcpy(dst, val);
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

int collage_parse_options(int argc, char **argv, struct collage_options *o, char *err, size_t len)
{
  const char *pos[2];
  int npos = 0, versions_given = 0;
  collage_defaults(o);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    long v = 0;
    if (!strcmp(a, "--help") || !strcmp(a, "-h"))
      return 1;
    if (!strcmp(a, "--no-fetch")) {
      o->fetch = 0;
      continue;
    }
    if (!strcmp(a, "--no-register")) {
      o->reg = 0;
      continue;
    }
    if (!strcmp(a, "--rebuild")) {
      o->rebuild = 1;
      continue;
    }
    if (!strcmp(a, "--quick")) {
      o->tiles = 20000;
      o->reps = 1;
      o->nsizes = 2;
      continue;
    }
    if (a[0] == '-' && a[1]) {
      static const char *const valued[] = {"--tiles", "--L", "--K", "--cap", "--reps", "--threads", "--device",
                                           "--cache", "--small-cache", "--versions", "--sizes", "--dir",
                                           "--seeds", "--out", "--collage-out"};
      int known = 0;
      for (size_t k = 0; k < sizeof(valued) / sizeof(valued[0]); k++)
        known |= !strcmp(a, valued[k]);
      if (!known)
        return collage_bad(err, len, "unknown option %s", a);
      if (i + 1 >= argc)
        return collage_bad(err, len, "%s needs a value", a);
      const char *val = argv[++i];
      int rc = 0;
      if (!strcmp(a, "--tiles")) {
        if ((o->tiles = collage_parse_count(val)) < 16)
          rc = collage_bad(err, len, "--tiles %s: a count of at least 16 (1M, 20k, ...)", val);
      } else if (!strcmp(a, "--L")) {
        if (collage_parse_uint(val, 1, COLLAGE_MAX_L, &v))
          rc = collage_bad(err, len, "--L %s: 1 to 64 tables", val);
        o->L = (uint32_t)v;
      } else if (!strcmp(a, "--K")) {
        if (collage_parse_uint(val, 1, COLLAGE_MAX_K, &v))
          rc = collage_bad(err, len, "--K %s: 1 to 24 bits", val);
        o->K = (uint32_t)v;
      } else if (!strcmp(a, "--cap")) {
        if (collage_parse_uint(val, 1, COLLAGE_MAX_CAP, &v))
          rc = collage_bad(err, len, "--cap %s: 1 to 256 tiles a bucket", val);
        o->cap = (uint32_t)v;
      } else if (!strcmp(a, "--reps")) {
        if (collage_parse_uint(val, 1, 100, &v))
          rc = collage_bad(err, len, "--reps %s: 1 to 100", val);
        o->reps = (int)v;
      } else if (!strcmp(a, "--threads")) {
        if (collage_parse_uint(val, 1, 1024, &v))
          rc = collage_bad(err, len, "--threads %s: 1 to 1024", val);
        o->threads = (int)v;
      } else if (!strcmp(a, "--device")) {
        if (collage_parse_uint(val, 0, 63, &v))
          rc = collage_bad(err, len, "--device %s: a CUDA device number", val);
        o->device = (int)v;
      } else if (!strcmp(a, "--small-cache") && *val && val[strlen(val) - 1] == 'x') {
        char *end;
        o->small_factor = strtod(val, &end);
        if (end == val || *end != 'x' || end[1] || !(o->small_factor >= 1) || o->small_factor > 1e6)
          rc = collage_bad(err, len, "--small-cache %s: NUMx means the dataset NUM times the cache (NUM >= 1)", val);
      } else if (!strcmp(a, "--cache") || !strcmp(a, "--small-cache")) {
        uint64_t *dst = !strcmp(a, "--cache") ? &o->cache : &o->small_cache;
        if ((*dst = bench_parse_size(val)) < (1u << 20))
          rc = collage_bad(err, len, "%s: a size of at least 1M (e.g. 400M, 8G)", a);
      } else if (!strcmp(a, "--versions")) {
        rc = collage_parse_versions(val, o, err, len);
        versions_given = 1;
      } else if (!strcmp(a, "--sizes")) {
        rc = collage_parse_sizes(val, o, err, len);
      } else if (!strcmp(a, "--dir")) {
        rc = collage_path(o->dir, sizeof(o->dir), a, val, err, len);
      } else if (!strcmp(a, "--seeds")) {
        rc = collage_path(o->seeds, sizeof(o->seeds), a, val, err, len);
      } else if (!strcmp(a, "--out")) {
        rc = collage_path(o->rows, sizeof(o->rows), a, val, err, len);
      } else if (!strcmp(a, "--collage-out")) {
        rc = collage_path(o->collage_out, sizeof(o->collage_out), a, val, err, len);
      }
      if (rc)
        return rc;
      continue;
    }
    if (npos == 2)
      return collage_bad(err, len, "'%s': at most two pictures (IN OUT)", a);
    pos[npos++] = a;
  }
  if (npos == 1)
    return collage_bad(err, len, "'%s': give the output picture too (collage IN OUT)", pos[0]);
  if (npos == 2) {
    o->mode = COLLAGE_MODE_PICTURE;
    if (collage_path(o->in, sizeof(o->in), "IN", pos[0], err, len) ||
        collage_path(o->out, sizeof(o->out), "OUT", pos[1], err, len))
      return -EINVAL;
    if (!versions_given) {
      o->nversions = 1;
      o->versions[0] = COLLAGE_GPUFS_WARP;
    }
  } else if (!versions_given) {
    o->nversions = COLLAGE_NVERSIONS;
    for (int v = 0; v < COLLAGE_NVERSIONS; v++)
      o->versions[v] = (enum collage_version)v;
  }
  if (o->K == 0)
    o->K = collage_default_k(o->tiles);
  if ((uint64_t)o->L * o->cap > COLLAGE_GPU_MAX_SHORTLIST) {
    snprintf(err, len, "--L %u x --cap %u: at most %u candidates a block (the GPU's shortlist)", o->L, o->cap,
             COLLAGE_GPU_MAX_SHORTLIST);
    return -EINVAL;
  }
  return 0;
}
