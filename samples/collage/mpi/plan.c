/*
 * plan.c - `collage_mpi`'s command line and the rules that place its work
 * (collage_mpi.h): the split of block rows among ranks, a rank's share of
 * its GPU's page cache, and its host threads.  No MPI and no CUDA here.
 *
 * The command line reuses the collage's parser: the shared options are
 * handed to collage_parse_options unchanged (its checks, its messages),
 * with --version V passed as --versions V and --size WxH as --sizes WxH;
 * the pictures (IN OUT, or OUT after --size) are taken out first.
 */
#include "samples/collage/mpi/collage_mpi.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "benchlib/opts.h"

const char collage_mpi_usage[] =
    "usage: mpirun [mpirun options] collage_mpi [options] IN OUT\n"
    "       mpirun [mpirun options] collage_mpi [options] --size WxH OUT\n"
    "  Every rank takes a contiguous share of the picture's 32x32 block rows and runs one\n"
    "  version on it; rank 0 gathers the choices and writes the collage OUT (PNG), the same\n"
    "  bytes `collage --versions V IN OUT` writes.  docs/mpi.md has the details.\n"
    "  IN OUT             the collage of picture IN (PNG or JPEG; cropped to whole 32x32 blocks)\n"
    "  --size WxH         instead of IN: the generated input of that size (seed picture 0\n"
    "                     scaled, the input `collage --sizes WxH --collage-out` uses)\n"
    "  --version V        cpu, cpu-gpu, gpufs-block, gpufs-warp (default) or gpufs-gread;\n"
    "                     cpu needs no GPU and makes no CUDA call\n"
    "  --tiles N          dataset size (default 1M)\n"
    "  --dir DIR          data folder (default /tmp/gpufs_collage): rank 0 builds the dataset and\n"
    "                     index there when missing; every rank opens them (a shared file system\n"
    "                     across nodes, or the same files on each)\n"
    "  --seeds DIR        seed photographs (rank 0 only; default DIR/seeds)\n"
    "  --no-fetch         do not fetch seed photographs\n"
    "  --rebuild          rank 0 builds the dataset and the index anew\n"
    "  --L N --K N --cap N  LSH tables (32), key bits (default: about 16 tiles a bucket), bucket cap (64)\n"
    "  --cache SIZE       GPU page cache of ONE GPU, divided among the ranks of a node that share\n"
    "                     that GPU (each gets SIZE / sharers); default: each rank the dataset +\n"
    "                     64M, while the ranks of a GPU take at most 3/4 of its memory\n"
    "  --no-register      gpufs versions: do not register the dataset (each rank gpufs_registers\n"
    "                     it by default: a miss copies from the host page cache, no daemon)\n"
    "  --threads N        host threads a rank (default: the CPUs it is bound to, at most the node's\n"
    "                     CPUs / its ranks, at most 16)\n"
    "  --quick            20k tiles\n"
    "  Each rank uses GPU (its rank on the node) % (GPUs it sees).  Exit status: 0 done; 1 a run\n"
    "  failed or a data file or picture is bad; 2 bad options or a bad rank / GPU configuration.\n";

/* The collage's options that take a value (options.c), and those of the
 * benchmark that collage_mpi refuses. */
static const char *const mpi_valued[] = {"--tiles", "--L",   "--K",    "--cap",  "--threads",
                                         "--cache", "--dir", "--seeds", "--version", "--size"};
static const char *const mpi_refused[] = {"--versions", "--device", "--sizes", "--reps",
                                          "--out",      "--small-cache", "--collage-out"};

/* Whether a is one of list (--NAME or --NAME=VALUE); *val its VALUE or NULL. */
static int mpi_in(const char *a, const char *const *list, size_t n, const char **val)
{
  for (size_t k = 0; k < n; k++)
    if (bench_opts_is(a, list[k], val))
      return 1;
  return 0;
}

static int mpi_bad(char *err, size_t len, const char *fmt, const char *arg)
{
  snprintf(err, len, fmt, arg);
  return -EINVAL;
}

static int mpi_copy(char *dst, size_t cap, const char *what, const char *val, char *err, size_t len)
{
  if (!*val || strlen(val) >= cap)
    return mpi_bad(err, len, "%s: the path is empty or too long", what);
  strcpy(dst, val);
  return 0;
}

/* The parser's message names --versions / --sizes where the user wrote
 * --version / --size: name what the user wrote. */
static void mpi_rename(char *err, const char *theirs, const char *ours)
{
  const size_t n = strlen(theirs);
  if (!strncmp(err, theirs, n) && (err[n] == ' ' || err[n] == ':')) {
    const size_t m = strlen(ours);
    memmove(err + m, err + n, strlen(err + n) + 1);
    memcpy(err, ours, m);
  }
}

int collage_mpi_parse_options(int argc, char **argv, struct collage_mpi_options *m, char *err, size_t len)
{
  /* the shared options, then --versions V and --sizes WxH: at most argc + 4 */
  char *args[argc + 5];
  const char *pos[2], *version = "gpufs-warp", *size = NULL;
  int nargs = 0, npos = 0;
  memset(m, 0, sizeof(*m));
  args[nargs++] = (char *)"collage_mpi";
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *val = NULL;
    if (!strcmp(a, "--help") || !strcmp(a, "-h"))
      return 1;
    if (mpi_in(a, mpi_refused, sizeof(mpi_refused) / sizeof(mpi_refused[0]), &val)) {
      if (bench_opts_is(a, "--versions", &val))
        return mpi_bad(err, len, "%s: collage_mpi runs one version: --version V", a);
      if (bench_opts_is(a, "--device", &val))
        return mpi_bad(err, len, "%s: each rank picks its GPU (its rank on the node %% the GPUs it sees); "
                                 "restrict them with CUDA_VISIBLE_DEVICES",
                       a);
      return mpi_bad(err, len, "%s: an option of the collage benchmark, not of collage_mpi", a);
    }
    if (a[0] == '-' && a[1]) {
      if (!mpi_in(a, mpi_valued, sizeof(mpi_valued) / sizeof(mpi_valued[0]), &val) || val) {
        /* a flag, or --NAME=VALUE: collage_parse_options takes it whole and refuses an unknown one */
        if (bench_opts_is(a, "--version", &version) || bench_opts_is(a, "--size", &size))
          continue;
        args[nargs++] = argv[i];
        continue;
      }
      if (i + 1 >= argc)
        return mpi_bad(err, len, "%s needs a value", a);
      if (!strcmp(a, "--version")) {
        version = argv[++i];
      } else if (!strcmp(a, "--size")) {
        size = argv[++i];
      } else {
        args[nargs++] = argv[i];
        args[nargs++] = argv[++i];
      }
      continue;
    }
    if (npos == 2)
      return mpi_bad(err, len, "'%s': at most two pictures (IN OUT)", a);
    pos[npos++] = a;
  }
  args[nargs++] = (char *)"--versions";
  args[nargs++] = (char *)version;
  if (size) {
    args[nargs++] = (char *)"--sizes";
    args[nargs++] = (char *)size;
  }
  args[nargs] = NULL;
  int rc = collage_parse_options(nargs, args, &m->o, err, len);
  if (rc != 0) {
    mpi_rename(err, "--versions", "--version");
    mpi_rename(err, "--sizes", "--size");
    return rc < 0 ? rc : -EINVAL;
  }
  if (m->o.nversions != 1)
    return mpi_bad(err, len, "--version %s: one version (cpu, cpu-gpu, gpufs-block, gpufs-warp, gpufs-gread)",
                   version);
  m->version = m->o.versions[0];
  if (size) {
    m->have_size = 1;
    m->w = m->o.w[0];
    m->h = m->o.h[0];
    if (npos != 1)
      return mpi_bad(err, len, "--size %s: give the output picture alone (collage_mpi --size WxH OUT)", size);
    return mpi_copy(m->out, sizeof(m->out), "OUT", pos[0], err, len);
  }
  if (npos != 2)
    return mpi_bad(err, len, "%s", npos ? "give the output picture too (collage_mpi IN OUT)"
                                         : "no picture: collage_mpi IN OUT, or --size WxH OUT");
  rc = mpi_copy(m->in, sizeof(m->in), "IN", pos[0], err, len);
  return rc ? rc : mpi_copy(m->out, sizeof(m->out), "OUT", pos[1], err, len);
}

void collage_mpi_rows(int bh, int r, int n, int *first, int *count)
{
  if (bh < 0 || n < 1 || r < 0 || r >= n) {
    *first = *count = 0;
    return;
  }
  const int q = bh / n, extra = bh % n;
  *first = r * q + (r < extra ? r : extra);
  *count = q + (r < extra);
}

uint64_t collage_mpi_cache_share(uint64_t total, int sharers, uint64_t page)
{
  if (sharers < 1 || page == 0)
    return 0;
  const uint64_t share = total / (uint64_t)sharers / page * page;
  return share < COLLAGE_MPI_MIN_CACHE ? 0 : share;
}

uint64_t collage_mpi_cache_default(uint64_t dataset, int sharers, uint64_t gpu_mem, uint64_t page)
{
  if (sharers < 1 || page == 0)
    return 0;
  const uint64_t want = (dataset + (64ull << 20) + page - 1) / page * page;
  const uint64_t room = gpu_mem / 4 * 3;
  if (gpu_mem == 0 || want <= room / (uint64_t)sharers)
    return want;
  return collage_mpi_cache_share(room, sharers, page);
}

int collage_mpi_threads(int allowed, int online, int nlocal)
{
  int t = allowed > 0 ? allowed : 1;
  if (online > 0 && nlocal > 0 && t > online / nlocal)
    t = online / nlocal;
  if (t > COLLAGE_MPI_MAX_THREADS)
    t = COLLAGE_MPI_MAX_THREADS;
  return t < 1 ? 1 : t;
}

int collage_mpi_cpus_allowed(void)
{
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0)
    return collage_mpi_cpus_online();
  return CPU_COUNT(&set);
}

int collage_mpi_cpus_online(void)
{
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : (int)n;
}
