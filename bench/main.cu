/*
 * main.cu - gpufs_bench: libgpufs against its baselines, in one run.
 *
 *   gpufs_bench [--out FILE] [--size SIZE] [--quick] [--only LIST] [--dir DIR]
 *               [--threads N] [--cap SECONDS] [--budget SECONDS] [--device N]
 *               [--gpus N]
 *
 * 1. writes (or reuses) the pattern file and reads it into the page cache;
 * 2. measures the baselines once: ceiling, naive, expert at 4, 8 and 16
 *    host threads (expert_t4, expert_t8, expert_t16; --threads N: N alone),
 *    the best of which is "expert", the baseline of the libgpufs rows;
 *    zero-copy, cufile, the device-to-device copy rate, and, when write or
 *    baselines is selected, expert_write (device memory to a new file: the
 *    write workload's baseline);
 * 3. runs each libgpufs workload (bench/driver.cu) in a fresh gpufs_start /
 *    gpufs_stop, the registered twins ("/reg" rows) with the data file
 *    gpufs_register()ed around the kernel (bench/registered.cu); last the
 *    cold rows (bench/cold.cu): expert_cold, then seq/cold and seq/cold/reg,
 *    each with the data file dropped from the host page cache first (not
 *    in --quick's default set);
 * 3b. with two GPUs or more, the mgpu rows (bench/multigpu.cu): one
 *    instance per GPU, all at once, against the ceilings and experts of
 *    every GPU at once;
 * 4. prints the share of the registered rows' misses served from the
 *    mapping, then the table of every row last on stdout.
 * Rows go to FILE as JSON lines as they are measured.  Progress: stderr.
 * docs/benchmarks.md explains every row.  Exit status 1 if a row failed.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cuda_runtime.h>

#include "benchlib/baselines.h"
#include "benchlib/cuda_check.h"
#include "benchlib/datafile.h"
#include "benchlib/opts.h"
#include "bench/driver.h"
#include "bench/multigpu.h"
#include "bench/acquire.h"
#include "bench/peer.h"
#include "bench/registered.h"
#include "benchlib/report.h"
#include "benchlib/util.h"

/* ---------------- options ---------------- */

static const char bench_usage[] =
    "usage: gpufs_bench [--out FILE] [--size SIZE] [--quick] [--only LIST] [--dir DIR]\n"
    "                   [--threads N] [--cap SECONDS] [--budget SECONDS] [--device N]\n"
    "                   [--gpus N]\n"
    "  --out FILE      append every row as a JSON line to FILE\n"
    "  --size SIZE     data file size: GiB (4, 0.25) or with a unit (512M, 8G); default 4\n"
    "                  (--quick: 1)\n"
    "  --quick         small file, fewer configurations, shorter caps\n"
    "  --only LIST     comma-separated: baselines, seq (with hit and seq/reg), seq_warp,\n"
    "                  rand (with rand/reg and their rand20 twins),\n"
    "                  big, ra, passes (seq and rand read three times in one\n"
    "                  instance, no register call: automatic pins), write, peer,\n"
    "                  acquire (a file changed in place between kernels: gpufs_acquire\n"
    "                  against a reopen and a whole copy),\n"
    "                  cold (expert_cold, seq/cold, seq/cold/reg: the\n"
    "                  file dropped from the page cache first; needs --dir on a disk file\n"
    "                  system; not run by --quick unless named), reg (the registered rows\n"
    "                  alone, cold's excepted), mgpu (every GPU at once: needs two or\n"
    "                  more); baselines are always measured\n"
    "  --dir DIR       where the data file lives (default /tmp/gpufs_bench)\n"
    "  --threads N     host threads of the expert baseline (default: 4, 8 and 16, each\n"
    "                  a row, the best one is expert, which expert_cold also uses) and\n"
    "                  of expert_write (default 8)\n"
    "  --cap SECONDS   longest a workload's kernel keeps issuing calls (default 60)\n"
    "  --budget SECONDS  caps shrink so that the libgpufs part fits (default 300)\n"
    "  --device N      CUDA device (default 0)\n"
    "  --gpus N        mgpu: the first N GPUs (default: every visible one, at most 8)\n";

enum {
  BO_OUT = BENCH_OPTS_FIRST, BO_SIZE, BO_QUICK, BO_ONLY, BO_DIR, BO_THREADS, BO_CAP, BO_BUDGET, BO_DEVICE, BO_GPUS,
};

static const struct bench_opt bench_table[] = {
    {"out", BENCH_OPT_VALUE, BO_OUT},         {"size", BENCH_OPT_VALUE, BO_SIZE},
    {"quick", BENCH_OPT_FLAG, BO_QUICK},      {"only", BENCH_OPT_VALUE, BO_ONLY},
    {"dir", BENCH_OPT_VALUE, BO_DIR},         {"threads", BENCH_OPT_VALUE, BO_THREADS},
    {"cap", BENCH_OPT_VALUE, BO_CAP},         {"budget", BENCH_OPT_VALUE, BO_BUDGET},
    {"device", BENCH_OPT_VALUE, BO_DEVICE},   {"gpus", BENCH_OPT_VALUE, BO_GPUS},
};

/* --size: GiB as a plain number, or a size with a unit; 1 MiB at least. */
static int bench_size_option(struct bench_opts *p, double *gib)
{
  const char *v = p->val;
  const size_t n = strlen(v);
  const int unit = n && ((v[n - 1] >= 'A' && v[n - 1] <= 'Z') || (v[n - 1] >= 'a' && v[n - 1] <= 'z'));
  uint64_t bytes = 0;
  double g = 0;
  int bad;
  if (unit) {
    bad = bench_opts_size(p, BENCH_MIB, 16384 * BENCH_GIB, &bytes) != 0;
    g = (double)bytes / (double)BENCH_GIB;
  } else {
    bad = bench_opts_double(p, 0, 16384, &g) != 0 || g * 1024 < 1;
  }
  if (bad)
    return bench_opts_fail(p, "GiB from 1/1024 to 16384 (4, 0.25), or a size with a unit (512M, 8G)");
  *gib = g;
  return 0;
}

/* --only: the groups, each named once. */
static int bench_only_option(struct bench_opts *p)
{
  static const char *const groups[] = {"baselines", "seq", "hit", "seq_warp", "rand", "big", "ra", "passes",
                                       "write", "peer", "acquire", "cold", "reg", "mgpu"};
  const int n = (int)(sizeof(groups) / sizeof(groups[0]));
  const struct bench_names choices = {groups, n, "workload"};
  int idx[sizeof(groups) / sizeof(groups[0])], count = 0;
  return bench_opts_names(p, &choices, idx, &count);
}

static int bench_option(struct bench_opts *p, int id, struct bench_options *o)
{
  switch (id) {
  case BO_OUT: o->out = p->val; return bench_check_output("--out", p->val, p->err, p->errlen);
  case BO_SIZE: return bench_size_option(p, &o->size_gib);
  case BO_QUICK: o->quick = 1; return 0;
  case BO_ONLY: o->only = p->val; return bench_only_option(p);
  case BO_DIR: o->dir = p->val; return *p->val ? 0 : bench_opts_fail(p, "a folder, not an empty name");
  case BO_THREADS: o->threads_given = 1; return bench_opts_int(p, 1, 256, &o->threads);
  case BO_CAP: return bench_opts_double(p, 0, 86400, &o->cap);
  case BO_BUDGET: return bench_opts_double(p, 0, 864000, &o->budget);
  case BO_DEVICE: return bench_opts_int(p, 0, 63, &o->device);
  case BO_GPUS: return bench_opts_int(p, 1, 8, &o->gpus);
  }
  return -EINVAL;
}

/* The command line over the defaults: 0, 1 for --help, or -EINVAL with err. */
static int bench_parse(int argc, char **argv, struct bench_options *o, char *err, size_t len)
{
  struct bench_opts p;
  int id, rc = 0;
  memset(o, 0, sizeof(*o));
  o->dir = "/tmp/gpufs_bench";
  o->threads = 8;
  o->cap = 60;
  o->budget = 300;
  bench_opts_init(&p, argc, argv, bench_table, sizeof(bench_table) / sizeof(bench_table[0]), err, len);
  while (rc == 0 && (id = bench_opts_next(&p)) != BENCH_OPTS_END)
    rc = id == BENCH_OPTS_HELP ? 1 : id < 0 ? id : bench_option(&p, id, o);
  if (rc == 0)
    rc = bench_opts_operands(&p, 0);
  if (rc)
    return rc;
  if (o->size_gib == 0)
    o->size_gib = o->quick ? 1 : 4;
  if (o->quick && o->cap > 20)
    o->cap = 20;
  return 0;
}

/* ---------------- context of every row ---------------- */

static void bench_context(const struct cudaDeviceProp *prop)
{
  char buf[64];
#ifdef BENCH_COMMIT
  bench_report_run_context(prop->name, BENCH_COMMIT); /* at build time; "+": uncommitted changes */
#else
  bench_report_run_context(prop->name, NULL);
#endif
  snprintf(buf, sizeof(buf), "%llu", (unsigned long long)g_bench.size);
  bench_report_context("file_size", buf);
  bench_report_context("mode", g_bench.opt.quick ? "quick" : "full");
}

/* ---------------- baselines ---------------- */

/* A row of one baseline; ratio to the ceiling except for the ceiling itself,
 * d2d (a device-memory rate) and expert_write (the other direction).
 * threads: the host threads of an expert row (a field of the row), or 0. */
static void bench_baseline_row(const char *name, int rc, const struct bench_rate *rate,
                               int threads)
{
  struct bench_row row;
  char sz[32], config[160];

  snprintf(config, sizeof(config), "file=%s", bench_fmt_size(rate->bytes, sz, sizeof(sz)));
  bench_row_init(&row, name, config, rc == 0 ? rate->gbps : NAN, "GB/s");
  if (strcmp(name, "ceiling") != 0 && strcmp(name, "d2d") != 0 &&
      strcmp(name, "expert_write") != 0)
    bench_row_baseline(&row, "ceiling", g_bench.ceiling_gbps);
  bench_row_status(&row, rc == 0 ? BENCH_OK : rc == -ENOTSUP ? BENCH_NA : BENCH_FAILED, "%s",
                   rate->note);
  bench_row_f64(&row, "seconds", rate->seconds);
  bench_row_f64(&row, "setup_seconds", rate->setup_seconds);
  bench_row_u64(&row, "reps", (uint64_t)rate->reps);
  if (threads > 0)
    bench_row_u64(&row, "host_threads", (uint64_t)threads);
  bench_report_add(&row);
  if (rc == 0)
    bench_progress("%-9s %7.2f GB/s  (%s)", name, rate->gbps, rate->note);
  else
    bench_progress("%-9s %s: %s", name, rc == -ENOTSUP ? "n/a" : "FAILED", rate->note);
}

/* expert at 4, 8 and 16 host threads (--threads N: N alone), a row each
 * (expert_t4, ...), then the best of them again as "expert": the rate every
 * libgpufs row is compared with (g_bench.expert_gbps, expert_threads). */
static void bench_expert_best(void *dev)
{
  static const int sweep[] = {4, 8, 16};
  const int *counts = g_bench.opt.threads_given ? &g_bench.opt.threads : sweep;
  const int n = g_bench.opt.threads_given ? 1 : (int)(sizeof(sweep) / sizeof(sweep[0]));
  struct bench_rate rate, best;
  char name[32], names[96] = "";
  int i, rc, last_rc = 0, best_t = 0;

  memset(&best, 0, sizeof(best));
  for (i = 0; i < n; i++) {
    snprintf(name, sizeof(name), "expert_t%d", counts[i]);
    snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", i ? ", " : "", name);
    bench_progress("%s: %d threads", name, counts[i]);
    rc = bench_expert(g_bench.path, dev, g_bench.size, g_bench.seed, counts[i], &rate);
    bench_baseline_row(name, rc, &rate, counts[i]);
    if (rc == 0 && (best_t == 0 || rate.gbps > best.gbps)) {
      best = rate;
      best_t = counts[i];
    }
    last_rc = rc ? rc : last_rc;
  }
  g_bench.expert_gbps = best_t ? best.gbps : NAN;
  g_bench.expert_threads = best_t;
  if (best_t) {
    snprintf(best.note, sizeof(best.note), "the best of %s: expert_t%d", names, best_t);
    bench_baseline_row("expert", 0, &best, best_t);
  } else {
    memset(&rate, 0, sizeof(rate));
    rate.bytes = g_bench.size;
    snprintf(rate.note, sizeof(rate.note), "%s all failed (see their rows)", names);
    bench_baseline_row("expert", last_rc, &rate, 0);
  }
}

static void bench_baselines(void)
{
  struct bench_rate rate;
  void *dev = NULL;
  int rc;

  bench_watch("baselines", 600);
  if (BENCH_CUDA(cudaMalloc(&dev, g_bench.size)) != 0) {
    bench_progress("baselines: no device buffer of %llu bytes", (unsigned long long)g_bench.size);
    return;
  }
  bench_progress("ceiling: pinned H2D copies of %llu bytes", (unsigned long long)g_bench.size);
  rc = bench_ceiling(dev, g_bench.size, g_bench.seed, &rate);
  g_bench.ceiling_gbps = rc == 0 ? rate.gbps : NAN;
  bench_baseline_row("ceiling", rc, &rate, 0);

  bench_progress("naive: read() + cudaMemcpy");
  rc = bench_naive(g_bench.path, dev, g_bench.size, g_bench.seed, &rate);
  g_bench.naive_gbps = rc == 0 ? rate.gbps : NAN;
  bench_baseline_row("naive", rc, &rate, 0);

  bench_expert_best(dev);

  bench_progress("zero-copy: mmap + cudaHostRegister");
  rc = bench_zero_copy(g_bench.path, g_bench.size, g_bench.seed, &rate);
  bench_baseline_row("zero-copy", rc, &rate, 0);

  bench_progress("cufile: compatibility mode");
  rc = bench_cufile(g_bench.path, dev, g_bench.size, g_bench.seed, &rate);
  bench_baseline_row("cufile", rc, &rate, 0);

  bench_progress("d2d: device-to-device copy of %llu bytes",
                 (unsigned long long)(g_bench.size / 2));
  rc = bench_d2d((char *)dev + g_bench.size / 2, dev, g_bench.size / 2, &rate);
  g_bench.d2d_gbps = rc == 0 ? rate.gbps : NAN;
  bench_baseline_row("d2d", rc, &rate, 0);

  if (bench_selected("write") || bench_selected("baselines")) {
    char path[4096];
    bench_write_path(path, sizeof(path), "_expert");
    bench_progress("expert_write: %d threads, D2H + pwrite + fsync to %s", g_bench.opt.threads,
                   path);
    bench_watch("expert_write", 600); /* 4 file writes with fsync: the disk's pace */
    memset(&rate, 0, sizeof(rate));
    rate.bytes = g_bench.size;
    rc = bench_fill_device(dev, g_bench.size, 0, BENCH_WRITE_SEED);
    if (rc == 0)
      rc = bench_expert_write(path, dev, g_bench.size, BENCH_WRITE_SEED, g_bench.opt.threads,
                              &rate);
    else
      snprintf(rate.note, sizeof(rate.note), "filling the device buffer failed (see stderr)");
    g_bench.expert_write_gbps = rc == 0 ? rate.gbps : NAN;
    bench_baseline_row("expert_write", rc, &rate, g_bench.opt.threads);
  }

  BENCH_CUDA(cudaFree(dev));
  bench_watch("baselines", 0);
}

/* ---------------- main ---------------- */

int main(int argc, char **argv)
{
  struct cudaDeviceProp prop;
  char name[64], sz[32], err[512];
  double t0;
  int rc;

  g_bench.t_start = bench_now();
  rc = bench_parse(argc, argv, &g_bench.opt, err, sizeof(err));
  if ((rc = bench_opts_exit("gpufs_bench", rc, err, bench_usage)) >= 0)
    return rc;
  if (bench_need_gpu("gpufs_bench", g_bench.opt.device) != 0)
    return 2;
  g_bench.size = (uint64_t)(g_bench.opt.size_gib * 1024 + 0.5) * BENCH_MIB;
  if (g_bench.size == 0)
    g_bench.size = BENCH_MIB;
  g_bench.seed = BENCH_SEED;
  g_bench.ceiling_gbps = g_bench.naive_gbps = g_bench.expert_gbps = NAN;
  g_bench.expert_threads = 0;
  g_bench.d2d_gbps = g_bench.seq64_gbps = g_bench.ra64_gbps = g_bench.expert_write_gbps = NAN;
  if (BENCH_CUDA(cudaSetDevice(g_bench.opt.device)) ||
      BENCH_CUDA(cudaGetDeviceProperties(&prop, g_bench.opt.device)))
    return 2;
  g_bench.sms = prop.multiProcessorCount;
  if (g_bench.opt.out && (rc = bench_report_open(g_bench.opt.out)) != 0) {
    fprintf(stderr, "gpufs_bench: %s: %s\n", g_bench.opt.out, strerror(-rc));
    return 2;
  }
  bench_context(&prop);
  bench_progress("%s, %d SMs; file %s in %s; %s mode", prop.name, g_bench.sms,
                 bench_fmt_size(g_bench.size, sz, sizeof(sz)), g_bench.opt.dir,
                 g_bench.opt.quick ? "quick" : "full");

  if ((rc = bench_mkdirs(g_bench.opt.dir)) != 0) {
    fprintf(stderr, "gpufs_bench: mkdir %s: %s\n", g_bench.opt.dir, strerror(-rc));
    return 2;
  }
  snprintf(name, sizeof(name), "/pattern_%s.bin", sz);
  snprintf(g_bench.path, sizeof(g_bench.path), "%s%s", g_bench.opt.dir, name);
  bench_watch("writing the data file", 600);
  t0 = bench_now();
  rc = bench_make_file(g_bench.path, g_bench.size, g_bench.seed);
  if (rc < 0) {
    fprintf(stderr, "gpufs_bench: writing %s: %s\n", g_bench.path, strerror(-rc));
    return 2;
  }
  bench_progress("%s ready (%.1f s: written, or reused when it matched)", g_bench.path,
                 bench_now() - t0);
  if ((rc = bench_warm_file(g_bench.path)) != 0) {
    fprintf(stderr, "gpufs_bench: reading %s: %s\n", g_bench.path, strerror(-rc));
    return 2;
  }
  bench_watch("", 0);
  bench_progress("%s is in the page cache", g_bench.path);

  bench_baselines();
  if (!g_bench.opt.only || strcmp(g_bench.opt.only, "baselines") != 0)
    bench_plan_run();
  if (bench_selected("peer"))
    bench_peer();
  if (bench_selected("acquire"))
    bench_acquire();
  if (bench_selected("mgpu"))
    bench_multigpu();

  bench_progress("done: %d rows, %d failed", bench_report_count(), bench_report_failures());
  bench_report_close();
  fflush(stderr);
  bench_reg_summary(stdout);
  printf("\n");
  bench_report_table(stdout);
  return bench_report_failures() ? 1 : 0;
}
