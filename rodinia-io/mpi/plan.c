/*
 * plan.c - `rodinia_mpi`'s command line and the rules that place its work
 * (rio_mpi.h): how each benchmark is cut into units, the units of a rank,
 * what a rank reads, its GPU page cache.  No MPI and no CUDA here.
 *
 * The command line reuses the suite's parser (rio_parse_options: its
 * checks and messages) for the options they share; rodinia_mpi takes out
 * its own --versions (cpu, gpufs-4k, gpufs-64k) and --no-single first, and
 * refuses what only the single-process suite has.
 */
#include "rodinia-io/mpi/rio_mpi.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "benchlib/opts.h"
#include "rodinia-io/conv2d/conv2d.h"
#include "rodinia-io/gesummv/gesummv.h"
#include "rodinia-io/harness/options.h"
#include "rodinia-io/pathfinder/pathfinder.h"

const char rio_mpi_usage[] =
    "usage: mpirun [mpirun options] rodinia_mpi [options] [BENCH ...]\n"
    "  Each benchmark's work is split among the ranks (2dconv: 16-row bands of the image;\n"
    "  gesummv: rows of A and B; pathfinder: columns of the last row, each rank reading its\n"
    "  columns' window of every row); every rank reads its part of the same input files, rank 0\n"
    "  gathers the result, checks it against the CPU reference and compares it bit for bit with\n"
    "  the single-process result.  One JSON row per run on stdout, a table last.  docs/mpi.md.\n"
    "  BENCH ...          2dconv, gesummv, pathfinder (default: all three)\n"
    "  --versions LIST    comma-separated: cpu,gpufs-4k,gpufs-64k (default: all); cpu needs no GPU\n"
    "                     and makes no CUDA call\n"
    "  --scale X          input sizes times X (1: the readahead paper's sizes)\n"
    "  --quick            --scale 1/64 --reps 1\n"
    "  --reps N           timed repetitions per version, median kept (default 3)\n"
    "  --cache SIZE       GPU page cache of ONE GPU, divided among the ranks that share it\n"
    "                     (default: each rank the bytes it reads + 64M)\n"
    "  --no-single        rank 0 does not run the single-process gpufs version to compare with\n"
    "  --dir DIR          data folder (default /tmp/gpufs_rodinia): rank 0 makes missing inputs,\n"
    "                     every rank reads them (a shared file system across nodes)\n"
    "  --out FILE         append the JSON rows to FILE too\n"
    "  --regen            rank 0 writes every input file anew\n"
    "  --no-generate      a missing input file is an error\n"
    "  --list             print the benchmarks and exit\n"
    "  Each rank uses GPU (its rank on the node) % (GPUs it sees).  Exit status: 0 every run\n"
    "  verified and identical; 1 a run failed or differs, or an input is bad; 2 bad options, more\n"
    "  ranks than a benchmark's units, or no GPU for a gpufs version.\n";

static const char *const rio_mpi_names[RIO_MPI_NBENCHES] = {"2dconv", "gesummv", "pathfinder"};
static const char *const rio_mpi_vnames[RIO_MPI_NVERSIONS] = {"cpu", "gpufs-4k", "gpufs-64k"};
/* what a unit is, for messages */
static const char *const rio_mpi_unit_names[RIO_MPI_NBENCHES] = {"16-row bands", "rows", "columns"};

const char *rio_mpi_version_name(enum rio_mpi_version v)
{
  return v >= 0 && v < RIO_MPI_NVERSIONS ? rio_mpi_vnames[v] : "?";
}

enum rio_version rio_mpi_harness_version(enum rio_mpi_version v)
{
  return v == RIO_MPI_GPUFS_64K ? RIO_GPUFS_64K : RIO_GPUFS_4K;
}

const char *rio_mpi_bench_name(enum rio_mpi_bench b) { return b >= 0 && b < RIO_MPI_NBENCHES ? rio_mpi_names[b] : "?"; }

static int rio_mpi_bad(char *err, size_t len, const char *fmt, const char *arg)
{
  snprintf(err, len, fmt, arg);
  return -EINVAL;
}

/* --versions (taken out of argv before the suite's parser runs): the
 * versions in table order. */
static int rio_mpi_parse_versions(const char *s, struct rio_mpi_options *o, char *err, size_t len)
{
  static const struct bench_names choices = {rio_mpi_vnames, RIO_MPI_NVERSIONS, "version"};
  struct bench_opts p = {.name = "--versions", .val = s, .err = err, .errlen = len};
  int idx[RIO_MPI_NVERSIONS], n = 0;
  int rc = bench_opts_names(&p, &choices, idx, &n);
  o->nversions = 0;
  for (int v = 0; rc == 0 && v < RIO_MPI_NVERSIONS; v++)
    for (int k = 0; k < n; k++)
      if (idx[k] == v)
        o->versions[o->nversions++] = (enum rio_mpi_version)v;
  return rc;
}

int rio_mpi_parse_options(int argc, char **argv, struct rio_mpi_options *o, char *err, size_t len)
{
  /* the shared options, handed to the suite's parser: at most argc */
  char *args[argc + 1];
  struct rio_options ro;
  int nargs = 0;
  memset(o, 0, sizeof(*o));
  o->single = 1;
  o->nversions = RIO_MPI_NVERSIONS;
  for (int v = 0; v < RIO_MPI_NVERSIONS; v++)
    o->versions[v] = (enum rio_mpi_version)v;
  args[nargs++] = (char *)"rodinia_mpi";
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *val = NULL;
    if (!strcmp(a, "--help") || !strcmp(a, "-h"))
      return 1;
    if (bench_opts_is(a, "--device", &val))
      return rio_mpi_bad(err, len, "%s: each rank picks its GPU (its rank on the node %% the GPUs it sees); "
                                   "restrict them with CUDA_VISIBLE_DEVICES", a);
    if (bench_opts_is(a, "--small-cache", &val) || bench_opts_is(a, "--threads", &val))
      return rio_mpi_bad(err, len, "%s: an option of the single-process suite (rodinia), not of rodinia_mpi", a);
    if (!strcmp(a, "--no-single")) {
      o->single = 0;
    } else if (bench_opts_is(a, "--versions", &val)) {
      if (!val && i + 1 >= argc)
        return rio_mpi_bad(err, len, "%s needs a value", a);
      const int rc = rio_mpi_parse_versions(val ? val : argv[++i], o, err, len);
      if (rc)
        return rc;
    } else {
      args[nargs++] = argv[i];
    }
  }
  args[nargs] = NULL;
  const int rc = rio_parse_options(nargs, args, rio_mpi_names, RIO_MPI_NBENCHES, &ro, err, len);
  if (rc)
    return rc < 0 ? rc : -EINVAL;
  o->scale = ro.scale;
  o->reps = ro.reps;
  o->cache = ro.cache;
  o->gen = ro.gen;
  o->list = ro.list;
  snprintf(o->dir, sizeof(o->dir), "%s", ro.dir);
  snprintf(o->out, sizeof(o->out), "%s", ro.out);
  o->nbenches = 0;
  for (int b = 0; b < RIO_MPI_NBENCHES; b++) /* table order */
    for (int k = 0; k < ro.nbenches; k++)
      if (!strcmp(ro.benches[k], rio_mpi_names[b]))
        o->benches[o->nbenches++] = (enum rio_mpi_bench)b;
  if (o->nbenches == 0)
    for (int b = 0; b < RIO_MPI_NBENCHES; b++)
      o->benches[o->nbenches++] = (enum rio_mpi_bench)b;
  return 0;
}

/* ---------------- the split ---------------- */

struct rio_mpi_split rio_mpi_split_of(enum rio_mpi_bench b, const struct rio_run *run)
{
  struct rio_mpi_split sp = {0, 0};
  switch (b) {
  case RIO_MPI_2DCONV: {
    const uint64_t n = ((const struct conv2d_state *)run->state)->n;
    sp.units = n / CONV2D_BAND;
    sp.unit_bytes = CONV2D_BAND * n * sizeof(float);
    break;
  }
  case RIO_MPI_GESUMMV:
    sp.units = ((const struct matvec_state *)run->state)->n;
    sp.unit_bytes = sizeof(float);
    break;
  default:
    sp.units = ((const struct pathfinder_state *)run->state)->cols;
    sp.unit_bytes = sizeof(int32_t);
    break;
  }
  return sp;
}

void rio_mpi_units(uint64_t units, int r, int n, uint64_t *u0, uint64_t *u1)
{
  if (n < 1 || r < 0 || r >= n) {
    *u0 = *u1 = 0;
    return;
  }
  const uint64_t q = units / (uint64_t)n, extra = units % (uint64_t)n, rr = (uint64_t)r;
  *u0 = rr * q + (rr < extra ? rr : extra);
  *u1 = *u0 + q + (rr < extra);
}

enum rio_mpi_status rio_mpi_check_ranks(enum rio_mpi_bench b, const struct rio_mpi_split *sp, int n, char *err,
                                        size_t len)
{
  if (n >= 1 && (uint64_t)n <= sp->units)
    return RIO_MPI_DONE;
  snprintf(err, len, "%s: %d ranks for %llu %s at this scale: every rank needs one (fewer ranks, or a larger "
                     "--scale)",
           rio_mpi_names[b], n, (unsigned long long)sp->units, rio_mpi_unit_names[b]);
  return RIO_MPI_BAD_CONFIG;
}

uint64_t rio_mpi_part_bytes(enum rio_mpi_bench b, const struct rio_run *run, uint64_t u0, uint64_t u1)
{
  if (u0 >= u1)
    return 0;
  switch (b) {
  case RIO_MPI_2DCONV: {
    const uint64_t n = ((const struct conv2d_state *)run->state)->n;
    const uint64_t y0 = u0 * CONV2D_BAND, y1 = u1 * CONV2D_BAND;
    const uint64_t a0 = y0 ? y0 - 1 : 0, a1 = y1 < n ? y1 + 1 : n;
    return (a1 - a0) * n * sizeof(float);
  }
  case RIO_MPI_GESUMMV: {
    const uint64_t n = ((const struct matvec_state *)run->state)->n;
    return 2 * (u1 - u0) * n * sizeof(float) + n * sizeof(float);
  }
  default: {
    const struct pathfinder_state *st = (const struct pathfinder_state *)run->state;
    uint64_t b_lo, b_hi;
    pathfinder_window(st->cols, st->rows, u0, u1, &b_lo, &b_hi);
    return st->rows * (b_hi - b_lo) * sizeof(int32_t);
  }
  }
}

uint64_t rio_mpi_cache(uint64_t cache, int sharers, uint64_t part_bytes, uint64_t page)
{
  if (sharers < 1 || page == 0)
    return 0;
  const uint64_t want = cache ? cache / (uint64_t)sharers : part_bytes + (64ull << 20);
  const uint64_t share = want / page * page;
  return share < RIO_MPI_MIN_CACHE ? 0 : share;
}

void *rio_mpi_result(enum rio_mpi_bench b, const struct rio_run *run)
{
  switch (b) {
  case RIO_MPI_2DCONV:
    return ((const struct conv2d_state *)run->state)->out;
  case RIO_MPI_GESUMMV:
    return ((const struct matvec_state *)run->state)->got;
  default:
    return ((const struct pathfinder_state *)run->state)->got;
  }
}

const void *rio_mpi_reference(enum rio_mpi_bench b, const struct rio_run *run)
{
  switch (b) {
  case RIO_MPI_2DCONV:
    return ((const struct conv2d_state *)run->state)->ref;
  case RIO_MPI_GESUMMV:
    return ((const struct matvec_state *)run->state)->want;
  default:
    return ((const struct pathfinder_state *)run->state)->want;
  }
}

uint64_t rio_mpi_result_bytes(enum rio_mpi_bench b, const struct rio_run *run)
{
  const struct rio_mpi_split sp = rio_mpi_split_of(b, run);
  return sp.units * sp.unit_bytes;
}
