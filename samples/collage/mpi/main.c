/*
 * mpi/main.c - `collage_mpi`: the LSH image collage over MPI ranks (issue
 * 17, "Beyond one machine", first piece).
 *
 *   mpirun -np N collage_mpi [options] IN OUT
 *   mpirun -np N collage_mpi [options] --size WxH OUT
 *
 * Rank 0 prepares the data as `collage` does (seed pictures, the dataset
 * and the LSH index, built when missing); then every other rank opens the
 * dataset and the index and checks that they are rank 0's.  Rank 0 reads
 * the picture and scatters its block rows (collage_mpi_rows: contiguous,
 * as even as possible); each rank runs the one chosen version on its rows
 * as a picture of their own (a block's tile depends on its own pixels
 * only, so the choices are those of the whole picture), with the
 * collage's version functions (cpu.c, cpugpu.cu, gpu.cu).  A GPU version
 * runs on GPU (rank on the node) % (GPUs the rank sees), the gpufs ones
 * with a libgpufs instance of the rank's own and its share of that GPU's
 * cache (collage_mpi_cache_share).  Rank 0 gathers the choices, renders
 * and writes OUT: the bytes `collage --versions V IN OUT` writes.
 * With --version cpu no CUDA call is made at all.
 *
 * Every step ends with an agreement (MPI_Allreduce of the highest exit
 * status): a rank that fails says why, naming itself and its host, and
 * every rank stops with that status.  Exit status: 0 done; 1 a version
 * failed, or a data file or the picture is bad; 2 bad options or a bad
 * rank / GPU configuration.  docs/mpi.md has the rest.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda_runtime_api.h>
#include <mpi.h>

#include <gpufs.cuh> /* the host API (C linkage) */

#include "benchlib/opts.h"
#include "benchlib/util.h"
#include "samples/collage/collage.h"
#include "samples/collage/mpi/collage_mpi.h"
#include "benchlib/mpi/place.h"

/* This rank: where it runs and what it may use. */
struct mpi_rank {
  int rank, size;            /* in MPI_COMM_WORLD */
  int local, nlocal;         /* on its node (MPI_Comm_split_type SHARED) */
  int nodes;
  MPI_Comm node;
  char host[MPI_MAX_PROCESSOR_NAME];
  int gpu;                   /* CUDA device; -1: none (the cpu version) */
  int ngpus;                 /* the GPUs it sees */
  int sharers;               /* ranks of its node on the same GPU (told by UUID) */
  uint64_t cache;            /* its GPU page cache (gpufs versions) */
  uint64_t gpu_mem;          /* its GPU's memory, bytes (0: no GPU) */
  int threads;               /* host threads (cpu, cpu-gpu) */
};

/* What the steps share. */
struct mpi_ctx {
  struct collage_mpi_options m;
  struct mpi_rank r;
  struct gpufs_config cfg;       /* the gpufs versions' instance */
  struct collage_seeds seeds;    /* rank 0 */
  struct collage_dataset ds;
  struct collage_index ix;
  struct collage_gpu_index gix;
  int have_seeds, have_ds, have_ix, have_gix;
  struct collage_image in;       /* rank 0: the whole picture */
  struct collage_image part;     /* this rank's block rows (rank 0: the top of in) */
  int w, h, first, rows;         /* the picture; this rank's block rows */
  uint32_t *choice;              /* rank 0: every block; others: their rows' */
  struct collage_stats st;
};

/* Per rank, gathered to rank 0 for the report. */
enum { REP_SECONDS, REP_BLOCKS, REP_CANDIDATES, REP_FIRST, REP_ROWS, REP_GPU, REP_SHARERS, REP_CACHE, REP_THREADS,
       REP_N };

static int mpi_is_gpufs(enum collage_version v)
{
  return v == COLLAGE_GPUFS_BLOCK || v == COLLAGE_GPUFS_WARP || v == COLLAGE_GPUFS_GREAD;
}

/* A failure of this rank, named by rank and host. */
static void mpi_say(const struct mpi_rank *r, const char *fmt, ...)
{
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  fprintf(stderr, "collage_mpi: rank %d of %d (%s): %s\n", r->rank, r->size, r->host, msg);
}

static void mpi_place(struct mpi_rank *r)
{
  bench_mpi_place(&r->rank, &r->size, &r->local, &r->nlocal, &r->nodes, &r->node, r->host);
  r->gpu = -1;
}

/* ---------------- the GPU of a GPU version ---------------- */

/* The rank's GPU and its sharers (bench_mpi_gpu).  Every rank of the node
 * calls it.  0 or 2. */
static int mpi_pick_gpu(struct mpi_rank *r, enum collage_version v)
{
  struct bench_mpi_gpu g;
  char why[512];
  const int rc = bench_mpi_gpu(r->node, r->local, r->nlocal, &g, why, sizeof(why));
  if (rc)
    mpi_say(r, "%s: the %s version needs a GPU on every node (or --version cpu)", why, collage_version_name(v));
  r->gpu = g.gpu;
  r->ngpus = g.ngpus;
  r->sharers = g.sharers;
  r->gpu_mem = g.mem;
  return rc ? 2 : 0;
}

/* The libgpufs configuration of a gpufs version: the collage's (4 KiB
 * pages, GPUFS_* variables), then this rank's GPU and cache share.  0 or 2. */
static int mpi_gpufs_config(struct mpi_ctx *c)
{
  struct gpufs_config *cfg = &c->cfg;
  const char *bad = NULL;
  gpufs_config_default(cfg);
  cfg->page_size = 4096;
  if (gpufs_config_from_env(cfg, &bad) != 0) {
    mpi_say(&c->r, "%s: not a valid value", bad);
    return 2;
  }
  cfg->ndevices = 0; /* one instance, on this rank's GPU (GPUFS_DEVICE(S) do not apply) */
  cfg->device = c->r.gpu;
  /* --cache: one GPU's, divided; else each rank the whole dataset, as
   * long as the GPU holds them (every rank reads candidates from all of it) */
  c->r.cache = c->m.o.cache ? collage_mpi_cache_share(c->m.o.cache, c->r.sharers, cfg->page_size)
                            : collage_mpi_cache_default(c->ds.bytes, c->r.sharers, c->r.gpu_mem, cfg->page_size);
  if (c->r.cache == 0) {
    mpi_say(&c->r, "a GPU page cache of %llu MiB shared by the %d ranks of GPU %d leaves less than 1 MiB a "
                   "rank: give a larger --cache, or fewer ranks a GPU",
            (unsigned long long)((c->m.o.cache ? c->m.o.cache : c->r.gpu_mem / 4 * 3) >> 20), c->r.sharers,
            c->r.gpu);
    return 2;
  }
  cfg->cache_size = c->r.cache;
  const uint64_t frames = cfg->cache_size / cfg->page_size;
  if (frames / 256 < gpufs_config_rings(cfg)) /* a small cache: at least 256 frames a ring (as collage) */
    cfg->nrings = frames / 256 < 1 ? 1 : (uint32_t)(frames / 256);
  return 0;
}

/* ---------------- the data ---------------- */

static void mpi_paths(const struct collage_options *o, char *ds, size_t dslen, char *ix, size_t ixlen)
{
  snprintf(ds, dslen, "%s/collage-%llu.ds", o->dir, (unsigned long long)o->tiles);
  snprintf(ix, ixlen, "%s/collage-%llu-L%u-K%u-C%u.ix", o->dir, (unsigned long long)o->tiles, o->L, o->K, o->cap);
}

/* Rank 0, before any work: IN readable (unless --size), OUT writable.
 * 0, or 2 with the reason on stderr. */
static int mpi_check_files(const struct collage_mpi_options *m)
{
  char err[512];
  int rc = m->have_size ? 0 : bench_check_input("IN", m->in, 0, err, sizeof(err));
  if (rc == 0)
    rc = bench_check_output("OUT", m->out, err, sizeof(err));
  if (rc)
    fprintf(stderr, "collage_mpi: %s\n", err);
  return rc ? 2 : 0;
}

/* Rank 0: the seeds, the dataset and the index, built when missing (as
 * collage builds them: the same files).  0, 1 or 2. */
static int mpi_prepare(struct mpi_ctx *c)
{
  struct collage_options *o = &c->m.o;
  char path[4200], ipath[4300], err[512];
  if (bench_mkdirs(o->dir) != 0) {
    mpi_say(&c->r, "cannot make the data folder %s", o->dir);
    return 2;
  }
  if (!o->seeds[0])
    snprintf(o->seeds, sizeof(o->seeds), "%s/seeds", o->dir);
  if (o->fetch)
    collage_seeds_fetch(o->seeds, stderr); /* says why when it cannot: the procedural set follows */
  if (collage_seeds_load(o->seeds, &c->seeds, stderr) != 0) {
    mpi_say(&c->r, "no seed pictures");
    return 1;
  }
  c->have_seeds = 1;
  mpi_paths(o, path, sizeof(path), ipath, sizeof(ipath));
  if (o->rebuild)
    unlink(path), unlink(ipath);
  int rc = collage_dataset_open(path, 4096, &c->ds, err, sizeof(err));
  if (rc == -ENOENT) {
    fprintf(stderr, "collage_mpi: building the dataset %s: %llu tiles from %d %s seed pictures\n", path,
            (unsigned long long)o->tiles, c->seeds.n, c->seeds.source);
    rc = collage_dataset_build(path, &c->seeds, o->tiles, COLLAGE_DATASET_SEED, c->r.threads, stderr);
    if (rc) {
      mpi_say(&c->r, "building %s failed: %s", path, strerror(-rc));
      return 1;
    }
    rc = collage_dataset_open(path, 4096, &c->ds, err, sizeof(err));
  }
  if (rc) {
    mpi_say(&c->r, "%s (remove it, or run with --rebuild)", err);
    return 1;
  }
  c->have_ds = 1;
  if (c->ds.hdr.seeds_id != c->seeds.id) {
    mpi_say(&c->r, "%s was built from other seed pictures than %s holds now: pass --seeds with the folder it "
                   "was made from, or --rebuild", path, o->seeds);
    return 1;
  }
  rc = collage_index_read(ipath, &c->ds, &c->ix, err, sizeof(err));
  if (rc == -ENOENT) {
    fprintf(stderr, "collage_mpi: building the index %s\n", ipath);
    rc = collage_index_build(&c->ds, o->L, o->K, o->cap, COLLAGE_INDEX_SEED, c->r.threads, &c->ix, stderr);
    if (rc == 0)
      rc = collage_index_write(ipath, &c->ix);
    if (rc) {
      mpi_say(&c->r, "building %s failed: %s", ipath, strerror(-rc));
      return 1;
    }
  } else if (rc) {
    mpi_say(&c->r, "%s (remove it, or run with --rebuild)", err);
    return 1;
  }
  c->have_ix = 1;
  return 0;
}

/* The other ranks, after rank 0 has prepared: open the same files (never
 * build them).  0 or 1. */
static int mpi_open(struct mpi_ctx *c)
{
  char path[4200], ipath[4300], err[512];
  mpi_paths(&c->m.o, path, sizeof(path), ipath, sizeof(ipath));
  const char *shared = " (rank 0 has it: the data folder must be on a file system every node shares, "
                       "or hold the same files on each)";
  int rc = collage_dataset_open(path, 4096, &c->ds, err, sizeof(err));
  if (rc) {
    mpi_say(&c->r, "%s%s", err, rc == -ENOENT ? shared : "");
    return 1;
  }
  c->have_ds = 1;
  if ((rc = collage_index_read(ipath, &c->ds, &c->ix, err, sizeof(err))) != 0) {
    mpi_say(&c->r, "%s%s", err, rc == -ENOENT ? shared : "");
    return 1;
  }
  c->have_ix = 1;
  return 0;
}

/* Every rank's dataset and index must be rank 0's (another copy of the
 * folder may hold other files under the same names).  0 or 1. */
static int mpi_same_data(struct mpi_ctx *c)
{
  uint64_t id[2] = {c->ds.hdr.id, c->ix.hdr.check};
  MPI_Bcast(id, 2, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  if (id[0] == c->ds.hdr.id && id[1] == c->ix.hdr.check)
    return 0;
  mpi_say(&c->r, "%s or its index is not rank 0's (dataset %016llx, rank 0's %016llx): every node must see the "
                 "same files",
          c->ds.path, (unsigned long long)c->ds.hdr.id, (unsigned long long)id[0]);
  return 1;
}

/* ---------------- the picture and its rows ---------------- */

/* Rank 0: IN, or the generated input of --size; cropped to whole blocks. */
static int mpi_read_picture(struct mpi_ctx *c)
{
  const struct collage_mpi_options *m = &c->m;
  char err[512];
  if (m->have_size) {
    if (collage_input_picture(&c->seeds, 0, m->w, m->h, &c->in) != 0) {
      mpi_say(&c->r, "cannot make the %dx%d input picture", m->w, m->h);
      return 1;
    }
  } else if (collage_image_read(m->in, &c->in, err, sizeof(err)) != 0) {
    mpi_say(&c->r, "%s", err);
    return 1;
  }
  const int w0 = c->in.w, h0 = c->in.h, rc = collage_image_crop_blocks(&c->in);
  if (rc < 0) {
    mpi_say(&c->r, "%s is %dx%d: smaller than one 32x32 block", m->have_size ? "the input" : m->in, w0, h0);
    return 1;
  }
  if (rc == 1)
    fprintf(stderr, "collage_mpi: %s is %dx%d, not whole 32x32 blocks: cropped to %dx%d\n",
            m->have_size ? "the input" : m->in, w0, h0, c->in.w, c->in.h);
  return 0;
}

/* Counts and offsets of every rank's block rows, times `unit`. */
static void mpi_counts(const struct mpi_ctx *c, int unit, int *count, int *displ)
{
  for (int r = 0; r < c->r.size; r++) {
    int first, rows;
    collage_mpi_rows(c->h / (int)COLLAGE_TILE, r, c->r.size, &first, &rows);
    count[r] = rows * unit;
    displ[r] = first * unit;
  }
}

/* The picture's size to every rank, then each rank's rows (MPI_Scatterv
 * of whole block rows) and room for its choices.  0 or 1. */
static int mpi_scatter(struct mpi_ctx *c)
{
  int dims[3] = {0, 0, 0}, rc = 0;
  if (c->r.rank == 0)
    dims[0] = mpi_read_picture(c), dims[1] = c->in.w, dims[2] = c->in.h;
  MPI_Bcast(dims, 3, MPI_INT, 0, MPI_COMM_WORLD);
  if (dims[0])
    return dims[0]; /* rank 0 said why */
  c->w = dims[1], c->h = dims[2];
  const int bw = c->w / (int)COLLAGE_TILE, bh = c->h / (int)COLLAGE_TILE;
  const size_t row = (size_t)COLLAGE_TILE * (size_t)c->w * 3;
  collage_mpi_rows(bh, c->r.rank, c->r.size, &c->first, &c->rows);
  if (c->r.rank == 0 && c->r.size > bh)
    fprintf(stderr, "collage_mpi: %d ranks for %d block rows: ranks %d to %d get none\n", c->r.size, bh, bh,
            c->r.size - 1);
  c->part.w = c->w;
  c->part.h = c->rows * (int)COLLAGE_TILE;
  c->part.rgb = c->r.rank == 0 ? c->in.rgb : c->rows ? (uint8_t *)malloc(row * (size_t)c->rows) : NULL;
  c->choice = (uint32_t *)malloc(sizeof(uint32_t) * (size_t)bw * (size_t)(c->r.rank == 0 ? bh : c->rows) + 4);
  if ((c->rows && !c->part.rgb) || !c->choice) {
    mpi_say(&c->r, "no memory for %d block rows of %dx%d", c->rows, c->w, c->h);
    rc = 1;
  }
  if ((rc = bench_mpi_agree(rc)) != 0)
    return rc;
  MPI_Datatype rowtype;
  MPI_Type_contiguous((int)row, MPI_BYTE, &rowtype);
  MPI_Type_commit(&rowtype);
  if (c->r.rank == 0) {
    int *count = (int *)malloc(sizeof(int) * 2 * (size_t)c->r.size);
    if (!count)
      MPI_Abort(MPI_COMM_WORLD, 1);
    mpi_counts(c, 1, count, count + c->r.size);
    MPI_Scatterv(c->in.rgb, count, count + c->r.size, rowtype, MPI_IN_PLACE, 0, rowtype, 0, MPI_COMM_WORLD);
    free(count);
  } else {
    MPI_Scatterv(NULL, NULL, NULL, rowtype, c->part.rgb, c->rows, rowtype, 0, MPI_COMM_WORLD);
  }
  MPI_Type_free(&rowtype);
  return 0;
}

/* Rank 0 gathers every rank's choices into its array, in picture order. */
static void mpi_gather(struct mpi_ctx *c)
{
  const int bw = c->w / (int)COLLAGE_TILE;
  if (c->r.rank == 0) {
    int *count = (int *)malloc(sizeof(int) * 2 * (size_t)c->r.size);
    if (!count)
      MPI_Abort(MPI_COMM_WORLD, 1);
    mpi_counts(c, bw, count, count + c->r.size);
    MPI_Gatherv(MPI_IN_PLACE, 0, MPI_UINT32_T, c->choice, count, count + c->r.size, MPI_UINT32_T, 0,
                MPI_COMM_WORLD);
    free(count);
  } else {
    MPI_Gatherv(c->choice, c->rows * bw, MPI_UINT32_T, NULL, NULL, NULL, MPI_UINT32_T, 0, MPI_COMM_WORLD);
  }
}

/* ---------------- the run ---------------- */

/* The chosen version on this rank's rows (nothing for a rank without
 * rows).  0 or 1. */
static int mpi_run(struct mpi_ctx *c)
{
  const enum collage_version v = c->m.version;
  int rc;
  memset(&c->st, 0, sizeof(c->st));
  if (c->rows == 0)
    return 0;
  switch (v) {
  case COLLAGE_CPU:
    rc = collage_cpu_run(&c->ds, &c->ix, &c->part, c->r.threads, c->choice, &c->st);
    break;
  case COLLAGE_CPU_GPU:
    rc = collage_cpugpu_run(&c->ds, &c->ix, &c->gix, &c->part, c->r.threads, c->choice, &c->st);
    break;
  default:
    if ((rc = gpufs_start(&c->cfg)) != 0) {
      mpi_say(&c->r, "gpufs_start on GPU %d with a %llu MiB cache: %s (%s)", c->r.gpu,
              (unsigned long long)(c->r.cache >> 20), gpufs_strerror(rc), gpufs_error_detail());
      return 1;
    }
    if (c->m.o.reg) { /* as collage: misses copy from the host page cache, no request */
      const int rr = gpufs_register(c->ds.path);
      if (rr)
        mpi_say(&c->r, "gpufs_register %s: %s (%s): this rank reads it through the daemon", c->ds.path,
                gpufs_strerror(rr), gpufs_error_detail());
    }
    rc = collage_gpufs_run(v, c->ds.path, &c->gix, &c->part, c->choice, &c->st);
    const int rs = gpufs_stop();
    if (rc == 0 && rs != 0) {
      mpi_say(&c->r, "gpufs_stop: %s (%s)", gpufs_strerror(rs), gpufs_error_detail());
      return 1;
    }
    break;
  }
  if (rc) {
    mpi_say(&c->r, "%s failed on block rows %d to %d: %s", collage_version_name(v), c->first,
            c->first + c->rows - 1, gpufs_strerror(rc));
    return 1;
  }
  return 0;
}

/* Rank 0: one line a rank (where it ran, what it did), then the total. */
static void mpi_report(const struct mpi_ctx *c, double wall)
{
  double mine[REP_N] = {c->st.seconds, (double)c->st.blocks, (double)c->st.candidates, c->first, c->rows,
                        c->r.gpu, c->r.sharers, (double)(c->r.cache >> 20), c->r.threads};
  const int n = c->r.size;
  double *all = c->r.rank == 0 ? (double *)malloc(sizeof(mine) * (size_t)n) : NULL;
  char *hosts = c->r.rank == 0 ? (char *)malloc(MPI_MAX_PROCESSOR_NAME * (size_t)n) : NULL;
  if (c->r.rank == 0 && (!all || !hosts))
    MPI_Abort(MPI_COMM_WORLD, 1);
  MPI_Gather(mine, REP_N, MPI_DOUBLE, all, REP_N, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  MPI_Gather(c->r.host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, hosts, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0,
             MPI_COMM_WORLD);
  if (c->r.rank != 0)
    return;
  double slowest = 0;
  for (int r = 0; r < n; r++) {
    const double *a = all + r * REP_N;
    char where[160] = "";
    if (a[REP_GPU] >= 0 && mpi_is_gpufs(c->m.version))
      snprintf(where, sizeof(where), ", GPU %.0f (shared by %.0f, cache %.0f MiB)", a[REP_GPU], a[REP_SHARERS],
               a[REP_CACHE]);
    else if (a[REP_GPU] >= 0)
      snprintf(where, sizeof(where), ", GPU %.0f, %.0f thread%s", a[REP_GPU], a[REP_THREADS],
               a[REP_THREADS] == 1 ? "" : "s");
    else
      snprintf(where, sizeof(where), ", %.0f thread%s", a[REP_THREADS], a[REP_THREADS] == 1 ? "" : "s");
    const char *host = hosts + (size_t)r * MPI_MAX_PROCESSOR_NAME;
    if (a[REP_ROWS] == 0)
      fprintf(stderr, "collage_mpi: rank %d on %s%s: no block rows\n", r, host, where);
    else
      fprintf(stderr, "collage_mpi: rank %d on %s%s: block rows %.0f to %.0f, %.0f blocks in %.3f s (%.0f "
                      "candidates a block)\n",
              r, host, where, a[REP_FIRST], a[REP_FIRST] + a[REP_ROWS] - 1, a[REP_BLOCKS], a[REP_SECONDS],
              a[REP_CANDIDATES] / a[REP_BLOCKS]);
    slowest = a[REP_SECONDS] > slowest ? a[REP_SECONDS] : slowest;
  }
  fprintf(stderr, "collage_mpi: %s on %d ranks, %d node%s: %llu blocks in %.3f s (scatter, runs, gather; the "
                  "slowest run %.3f s)\n",
          collage_version_name(c->m.version), n, c->r.nodes, c->r.nodes == 1 ? "" : "s",
          (unsigned long long)((c->w / COLLAGE_TILE) * (c->h / COLLAGE_TILE)), wall, slowest);
  free(all);
  free(hosts);
}

/* Rank 0: the collage of the gathered choices into OUT.  0 or 1. */
static int mpi_write(struct mpi_ctx *c)
{
  struct collage_image out;
  char err[512];
  int rc = collage_render(&c->ds, &c->seeds, &c->in, c->choice, &out, err, sizeof(err));
  if (rc) {
    mpi_say(&c->r, "%s", err);
    return 1;
  }
  if ((rc = collage_image_write_png(c->m.out, &out)) != 0)
    mpi_say(&c->r, "cannot write %s: %s", c->m.out, strerror(-rc));
  else
    fprintf(stderr, "collage_mpi: %s written (%dx%d)\n", c->m.out, out.w, out.h);
  collage_image_free(&out);
  return rc ? 1 : 0;
}

/* ---------------- the steps ---------------- */

static int mpi_main(struct mpi_ctx *c, int argc, char **argv)
{
  struct mpi_rank *r = &c->r;
  const int me0 = r->rank == 0;
  char err[512];
  int rc = collage_mpi_parse_options(argc, argv, &c->m, err, sizeof(err));
  if (rc == 1) {
    if (me0)
      fputs(collage_mpi_usage, stdout);
    return 0;
  }
  if (rc) { /* every rank parsed the same argv: rank 0 speaks for all */
    if (me0)
      fprintf(stderr, "collage_mpi: %s\n  (collage_mpi --help lists the options)\n", err);
    return 2;
  }
  if ((rc = bench_mpi_agree(me0 ? mpi_check_files(&c->m) : 0)) != 0)
    return rc;
  const enum collage_version v = c->m.version;
  r->threads = c->m.o.threads ? c->m.o.threads
                              : collage_mpi_threads(collage_mpi_cpus_allowed(), collage_mpi_cpus_online(), r->nlocal);
  /* the cpu version touches no GPU: no CUDA call at all */
  if (v != COLLAGE_CPU && (rc = bench_mpi_agree(mpi_pick_gpu(r, v))) != 0)
    return rc;
  if ((rc = bench_mpi_agree(me0 ? mpi_prepare(c) : 0)) != 0)
    return rc;
  if ((rc = bench_mpi_agree(me0 ? 0 : mpi_open(c))) != 0 || (rc = bench_mpi_agree(mpi_same_data(c))) != 0)
    return rc;
  if (mpi_is_gpufs(v) && (rc = bench_mpi_agree(mpi_gpufs_config(c))) != 0)
    return rc;
  if ((rc = mpi_scatter(c)) != 0)
    return rc;
  if (v != COLLAGE_CPU && c->rows > 0) {
    if ((rc = collage_gpu_index_upload(&c->ix, &c->gix)) != 0)
      mpi_say(r, "the index does not fit GPU %d: %s", r->gpu, strerror(-rc));
    c->have_gix = rc == 0;
  }
  if ((rc = bench_mpi_agree(rc ? 1 : 0)) != 0)
    return rc;
  const double t0 = MPI_Wtime();
  rc = bench_mpi_agree(mpi_run(c));
  if (rc == 0)
    mpi_gather(c);
  const double wall = MPI_Wtime() - t0;
  if (rc)
    return rc;
  mpi_report(c, wall);
  rc = me0 ? mpi_write(c) : 0;
  MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return rc;
}

int main(int argc, char **argv)
{
  struct mpi_ctx c;
  int provided = 0;
  /* only the main thread calls MPI; the versions' own threads never do */
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    fprintf(stderr, "collage_mpi: MPI_Init_thread failed\n");
    return 2;
  }
  memset(&c, 0, sizeof(c));
  c.ds.fd = -1;
  mpi_place(&c.r);
  const int rc = mpi_main(&c, argc, argv);
  if (c.have_gix)
    collage_gpu_index_free(&c.gix);
  if (c.have_ix)
    collage_index_free(&c.ix);
  if (c.have_ds)
    collage_dataset_close(&c.ds);
  if (c.have_seeds)
    collage_seeds_free(&c.seeds);
  if (c.r.rank == 0)
    collage_image_free(&c.in);
  else
    free(c.part.rgb);
  free(c.choice);
  MPI_Comm_free(&c.r.node);
  MPI_Finalize();
  return rc;
}
