/*
 * main.cu - build/tests/fsx, the random exerciser (`make fsx`): options,
 * one run (fsx_run), the report.  Exit status 0: no mismatch; 1: a
 * mismatch (the call that caused it is printed); 2: could not set up (no
 * GPU, options); 3: a hang (the watchdog's report is printed).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/fsx/fsx.h"

static void usage(FILE *f)
{
  fprintf(f,
          "usage: fsx [--ops N] [--seed N] [--files N] [--blocks N] [--ops-per-group N]\n"
          "           [--file-size BYTES] [--page BYTES] [--cache BYTES] [--timeout S] [--dir DIR] [-v]\n"
          "  --ops N            device calls to make, at least (10M)\n"
          "  --seed N           everything random derives from it (default: the time; printed)\n"
          "  --files N          files, 1..%d, each under four names (4)\n"
          "  --blocks N         blocks of 256 threads in the many-group kernels (12)\n"
          "  --ops-per-group N  random calls of a group in one kernel (300)\n"
          "  --file-size BYTES  largest file size (2M)\n"
          "  --page BYTES       libgpufs page size (4K)\n"
          "  --cache BYTES      libgpufs cache size (4M: half the files)\n"
          "  --timeout S        a kernel running longer is a hang (120)\n"
          "  --dir DIR          where the run's directory is made (/tmp)\n"
          "  -v                 a line per epoch\n"
          "BYTES take K, M, G suffixes.\n",
          FSX_MAX_FILES);
}

/* A number with an optional K, M, G suffix; false when it does not parse. */
static bool parse_u64(const char *s, uint64_t *v)
{
  char *end = NULL;
  unsigned long long x = strtoull(s, &end, 0);
  if (end == s) return false;
  if (*end == 'K' || *end == 'k') x <<= 10, end++;
  else if (*end == 'M' || *end == 'm') x <<= 20, end++;
  else if (*end == 'G' || *end == 'g') x <<= 30, end++;
  if (*end != '\0') return false;
  *v = x;
  return true;
}

int main(int argc, char **argv)
{
  struct fsx_opts o;
  fsx_opts_default(&o);
  o.seed = (uint64_t)time(NULL);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    uint64_t v = 0;
    if (strcmp(a, "-v") == 0) {
      o.verbose = 1;
      continue;
    }
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      usage(stdout);
      return 0;
    }
    if (i + 1 >= argc) {
      usage(stderr);
      return 2;
    }
    const char *val = argv[++i];
    if (strcmp(a, "--dir") == 0) {
      o.dir = val;
      continue;
    }
    if (!parse_u64(val, &v)) {
      fprintf(stderr, "fsx: %s: not a number: %s\n", a, val);
      return 2;
    }
    if (strcmp(a, "--ops") == 0) o.ops = v;
    else if (strcmp(a, "--seed") == 0) o.seed = v;
    else if (strcmp(a, "--files") == 0) o.files = (uint32_t)v;
    else if (strcmp(a, "--blocks") == 0) o.blocks = (uint32_t)v;
    else if (strcmp(a, "--ops-per-group") == 0) o.ops_per_group = (uint32_t)v;
    else if (strcmp(a, "--file-size") == 0) o.file_size = v;
    else if (strcmp(a, "--page") == 0) o.page_size = (uint32_t)v;
    else if (strcmp(a, "--cache") == 0) o.cache_size = v;
    else if (strcmp(a, "--timeout") == 0) o.kernel_timeout_s = (uint32_t)v;
    else {
      usage(stderr);
      return 2;
    }
  }
  printf("fsx: seed %llu, %llu calls, %u files of up to %llu bytes (4 names each), %u blocks, "
         "%u calls per group, page %u, cache %llu\n",
         (unsigned long long)o.seed, (unsigned long long)o.ops, o.files, (unsigned long long)o.file_size, o.blocks,
         o.ops_per_group, o.page_size, (unsigned long long)o.cache_size);
  fflush(stdout);
  struct fsx_report r;
  int rc = fsx_run(&o, &r);
  fsx_print_report(rc == 0 ? stdout : stderr, &r);
  if (rc == 1) fprintf(stderr, "fsx: rerun with --seed %llu\n", (unsigned long long)o.seed);
  return rc;
}
