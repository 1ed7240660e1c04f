/*
 * main.cu - build/tests/fsx, the random exerciser (`make fsx`): options,
 * one run (fsx_run), the report.  Exit status 0: no mismatch; 1: a
 * mismatch (the call that caused it is printed); 2: could not set up (no
 * GPU, options); 3: a hang (the watchdog's report is printed).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "benchlib/opts.h"
#include "benchlib/report.h"
#include "tests/fsx/fsx.h"

static const char fsx_usage[] =
    "usage: fsx [--ops N] [--seed N] [--files N] [--blocks N] [--ops-per-group N]\n"
    "           [--file-size BYTES] [--page BYTES] [--cache BYTES] [--timeout S] [--dir DIR] [-v]\n"
    "  --ops N            device calls to make, at least (10M; k and M suffixes)\n"
    "  --seed N           everything random derives from it (default: the time; printed)\n"
    "  --files N          files, 1..8, each under four names (4)\n"
    "  --blocks N         blocks of 256 threads in the many-group kernels (12)\n"
    "  --ops-per-group N  random calls of a group in one kernel (300)\n"
    "  --file-size BYTES  largest file size, at least 4 pages (2M)\n"
    "  --page BYTES       libgpufs page size (4K)\n"
    "  --cache BYTES      libgpufs cache size (4M: half the files)\n"
    "  --timeout S        a kernel running longer is a hang (120)\n"
    "  --dir DIR          where the run's directory is made (/tmp)\n"
    "  -v                 a line per epoch\n"
    "BYTES take K, M, G suffixes.\n";

enum {
  FO_OPS = BENCH_OPTS_FIRST, FO_SEED, FO_FILES, FO_BLOCKS, FO_OPS_PER_GROUP, FO_FILE_SIZE, FO_PAGE, FO_CACHE,
  FO_TIMEOUT, FO_DIR, FO_VERBOSE,
};

static const struct bench_opt fsx_table[] = {
    {"ops", BENCH_OPT_VALUE, FO_OPS},         {"seed", BENCH_OPT_VALUE, FO_SEED},
    {"files", BENCH_OPT_VALUE, FO_FILES},     {"blocks", BENCH_OPT_VALUE, FO_BLOCKS},
    {"ops-per-group", BENCH_OPT_VALUE, FO_OPS_PER_GROUP}, {"file-size", BENCH_OPT_VALUE, FO_FILE_SIZE},
    {"page", BENCH_OPT_VALUE, FO_PAGE},       {"cache", BENCH_OPT_VALUE, FO_CACHE},
    {"timeout", BENCH_OPT_VALUE, FO_TIMEOUT}, {"dir", BENCH_OPT_VALUE, FO_DIR},
    {"v", BENCH_OPT_FLAG, FO_VERBOSE},
};

/* An int-ranged option into a uint32_t field. */
static int fsx_u32(struct bench_opts *p, long lo, long hi, uint32_t *dst)
{
  int v = 0, rc = bench_opts_int(p, lo, hi, &v);
  *dst = (uint32_t)v;
  return rc;
}

static int fsx_option(struct bench_opts *p, int id, struct fsx_opts *o)
{
  uint64_t v = 0;
  int rc;
  switch (id) {
  case FO_OPS: return bench_opts_count(p, 1, 1000000000000ull, &o->ops);
  case FO_SEED: return bench_opts_u64(p, 0, UINT64_MAX, &o->seed);
  case FO_FILES: return fsx_u32(p, 1, FSX_MAX_FILES, &o->files);
  case FO_BLOCKS: return fsx_u32(p, 1, 65536, &o->blocks);
  case FO_OPS_PER_GROUP: return fsx_u32(p, 1, 1000000, &o->ops_per_group);
  case FO_FILE_SIZE: return bench_opts_size(p, 16384, 1ull << 34, &o->file_size);
  case FO_PAGE:
    rc = bench_opts_size(p, 4096, 1u << 24, &v);
    o->page_size = (uint32_t)v;
    return rc;
  case FO_CACHE: return bench_opts_size(p, 1u << 16, 1ull << 40, &o->cache_size);
  case FO_TIMEOUT: return fsx_u32(p, 1, 86400, &o->kernel_timeout_s);
  case FO_DIR: o->dir = p->val; return bench_check_input("--dir", p->val, 1, p->err, p->errlen);
  case FO_VERBOSE: o->verbose = 1; return 0;
  }
  return -EINVAL;
}

/* The command line over the defaults: 0, 1 for --help, -EINVAL with err. */
static int fsx_parse(int argc, char **argv, struct fsx_opts *o, char *err, size_t len)
{
  struct bench_opts p;
  int id, rc = 0;
  bench_opts_init(&p, argc, argv, fsx_table, sizeof(fsx_table) / sizeof(fsx_table[0]), err, len);
  while (rc == 0 && (id = bench_opts_next(&p)) != BENCH_OPTS_END)
    rc = id == BENCH_OPTS_HELP ? 1 : id < 0 ? id : fsx_option(&p, id, o);
  if (rc == 0)
    rc = bench_opts_operands(&p, 0);
  return rc ? rc : fsx_opts_check(o, err, len);
}

int main(int argc, char **argv)
{
  struct fsx_opts o;
  char err[256];
  fsx_opts_default(&o);
  o.seed = (uint64_t)time(NULL);
  int rc = fsx_parse(argc, argv, &o, err, sizeof(err));
  if ((rc = bench_opts_exit("fsx", rc, err, fsx_usage)) >= 0)
    return rc;
  if (bench_need_gpu("fsx", 0) != 0)
    return 2;
  printf("fsx: seed %llu, %llu calls, %u files of up to %llu bytes (4 names each), %u blocks, "
         "%u calls per group, page %u, cache %llu\n",
         (unsigned long long)o.seed, (unsigned long long)o.ops, o.files, (unsigned long long)o.file_size, o.blocks,
         o.ops_per_group, o.page_size, (unsigned long long)o.cache_size);
  fflush(stdout);
  struct fsx_report r;
  rc = fsx_run(&o, &r);
  fsx_print_report(rc == 0 ? stdout : stderr, &r);
  if (rc == 1) fprintf(stderr, "fsx: rerun with --seed %llu\n", (unsigned long long)o.seed);
  return rc;
}
