/*
 * multigpu.cu - gpufs_bench's "mgpu" workload: one libgpufs instance per
 * GPU, every GPU reading at once, beside what the host gives N GPUs at once.
 * Runs when the process sees two GPUs or more (--gpus N: the first N); on
 * one GPU it adds a single n/a row.  --quick runs a subset: seq with own
 * files at 4 KiB pages (both worker counts), registered,
 * peer, rand with the most workers.  N is at most GPUFS_MAX_INSTANCES.
 *
 * Files: GPU k reads its own pattern file (GPU 0 the data file, GPU k > 0
 * a file of seed BENCH_SEED ^ k << 52 beside it, written once and kept).
 * Every run on several GPUs starts its kernels together: one host thread per
 * GPU, a barrier right before each kernel's start (bench_read_params
 * before_launch) or each expert pass.  An aggregate rate is the bytes of
 * all GPUs over the slowest GPU's time: what the machine delivered while
 * all were busy.
 *
 *   mgpu_ceiling_sum      the pinned H2D ceiling of each GPU measured alone,
 *                         summed: the links' capacity
 *   mgpu_ceiling_together pinned H2D copies on every GPU at once: what the
 *                         host (its memory, its root ports) gives them all;
 *                         baseline mgpu_ceiling_sum
 *   mgpu_expert_together  the expert pipeline (best thread count of the
 *                         baselines) on every GPU at once, each its own file
 *   mgpu_seq              seq, 4 KiB pages, 1 MiB calls, each GPU its own
 *                         file ("own") or every GPU the data file ("shared"),
 *                         the default daemon and workers = 16 per GPU (up to
 *                         the cores), then own files registered; rows against
 *                         mgpu_ceiling_sum and mgpu_expert_together
 *   mgpu_seq/pass1..3     the default configuration (no register call), own
 *                         files, then one shared file, read three times in
 *                         one instance set with a cache a quarter of the
 *                         file: the second open asks for the automatic pin
 *   mgpu_peer             GPU N-1 reads the data file that GPU 0 holds:
 *                         its misses are copied from GPU 0's cache over the
 *                         GPUs' link; baseline: GPU N-1 reading its own file
 *                         from the host in the same instance set; host_bytes_x:
 *                         the data file's bytes the daemon read / its size
 *   mgpu_peer_fanout      GPUs 1..N-1 at once read the data file GPU 0 holds
 *   mgpu_rand             rand (4 KiB pages, cold cache) on every GPU at
 *                         once, each its own file; baseline: GPU 0 alone
 *                         (value x N is perfect scaling); daemon_busy: the
 *                         workers' busy share
 * Every byte every GPU reads is checked against its file's pattern.  The
 * running of one thing on every GPU at once is bench/multigpu_run.cu.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda_runtime.h>

#include "benchlib/baselines.h"
#include "benchlib/baselines_util.h"
#include "benchlib/cuda_check.h"
#include "benchlib/datafile.h"
#include "benchlib/report.h"
#include "benchlib/util.h"
#include "bench/driver.h"
#include "bench/multigpu.h"
#include "bench/multigpu_run.h"
#include "bench/workloads.h"
#include "include/gpufs.cuh"

/* ---------------- baselines on every GPU ---------------- */

struct mg_copy {
  int gpu;
  uint64_t bytes;
  int expert_threads; /* 0: the ceiling, else the expert at that count */
  const char *path;
  uint64_t seed;
  int rc;
  double seconds;
  struct bench_rate rate;
};

/* One GPU's pinned copy (3 timed passes, each after the barrier), or its
 * expert pipeline with a barrier before each pass. */
static void *mg_copy_main(void *a)
{
  struct mg_copy *c = (struct mg_copy *)a;
  void *dev = NULL, *host = NULL;
  double s[3];
  c->rc = BENCH_CUDA(cudaSetDevice(c->gpu));
  if (!c->rc)
    c->rc = BENCH_CUDA(cudaMalloc(&dev, c->bytes));
  if (c->expert_threads) {
    if (!c->rc)
      c->rc = bench_expert_passes(c->path, dev, c->bytes, c->seed, c->expert_threads, 3,
                                  mg_wait_pass, &g_mg.bar, &c->rate);
    else
      for (int r = 0; r < 3; r++)
        mg_wait(&g_mg.bar); /* the others wait for this GPU's passes */
    c->seconds = c->rc ? NAN : c->rate.seconds;
  } else {
    if (!c->rc)
      c->rc = BENCH_CUDA(cudaHostAlloc(&host, c->bytes, cudaHostAllocPortable));
    if (!c->rc)
      memset(host, 0x5a, c->bytes);
    for (int r = 0; r < 3; r++) {
      mg_wait(&g_mg.bar);
      const double t0 = bench_now();
      if (!c->rc)
        c->rc = BENCH_CUDA(cudaMemcpy(dev, host, c->bytes, cudaMemcpyHostToDevice));
      s[r] = bench_now() - t0;
    }
    c->seconds = c->rc ? NAN : bench_median(s, 3);
  }
  if (host)
    cudaFreeHost(host);
  if (dev)
    cudaFree(dev);
  return NULL;
}

/* n GPUs at once: aggregate GB/s (bytes of all / the slowest), or NaN. */
static double mg_together(struct mg_copy *c, int n)
{
  double worst = 0;
  mg_parallel(n, mg_copy_main, c, sizeof(*c));
  for (int k = 0; k < n; k++) {
    if (c[k].rc)
      return NAN;
    worst = c[k].seconds > worst ? c[k].seconds : worst;
  }
  return worst > 0 ? (double)n * (double)c[0].bytes / worst / 1e9 : NAN;
}

static void mg_baselines(void)
{
  struct mg_copy c[MG_MAX];
  char config[96], note[400];
  const int n = g_mg.n;
  double sum = 0;
  int ok = 1;

  snprintf(config, sizeof(config), "gpus=%d bytes=%llu", n, (unsigned long long)g_bench.size);
  note[0] = 0;
  for (int k = 0; k < n; k++) {
    void *dev = NULL;
    struct bench_rate r;
    int rc = BENCH_CUDA(cudaSetDevice(k));
    rc = rc ? rc : BENCH_CUDA(cudaMalloc(&dev, g_bench.size));
    rc = rc ? rc : bench_ceiling(dev, g_bench.size, g_bench.seed, &r);
    if (dev)
      cudaFree(dev);
    ok &= rc == 0;
    sum += rc == 0 ? r.gbps : 0;
    snprintf(note + strlen(note), sizeof(note) - strlen(note), "%sGPU %d %.2f", k ? ", " : "",
             k, rc == 0 ? r.gbps : NAN);
  }
  cudaSetDevice(0);
  g_mg.ceiling_sum = ok ? sum : NAN;
  mg_row("mgpu_ceiling_sum", config, sum, "GB/s", NULL, NAN, ok, note);

  memset(c, 0, sizeof(c));
  for (int k = 0; k < n; k++) {
    c[k].gpu = k;
    c[k].bytes = g_bench.size;
  }
  double v = mg_together(c, n);
  mg_row("mgpu_ceiling_together", config, v, "GB/s", "mgpu_ceiling_sum", g_mg.ceiling_sum,
         !isnan(v), "pinned cudaMemcpy H2D on every GPU at once, median of 3 passes each");

  const int t = g_bench.expert_threads > 0 ? g_bench.expert_threads : 16;
  for (int k = 0; k < n; k++) {
    c[k].expert_threads = t;
    c[k].path = g_mg.paths[k];
    c[k].seed = g_mg.seeds[k];
  }
  v = mg_together(c, n);
  g_mg.experts = v;
  snprintf(note, sizeof(note), "%d experts at once, %d host threads each, own files; %s", n, t,
           isnan(v) ? "failed (see stderr)" : c[0].rate.note);
  mg_row("mgpu_expert_together", config, v, "GB/s", "mgpu_ceiling_sum", g_mg.ceiling_sum,
         !isnan(v), note);
}

/* ---------------- libgpufs on every GPU ---------------- */

struct mg_seq_cfg {
  int own;          /* each GPU its own file, else every GPU the data file */
  int active;       /* GPUs reading (0..active-1; 0: all); the others idle */
  uint32_t page;    /* cache page size */
  uint32_t workers; /* daemon threads, 0: the default */
  int reg;          /* the files registered first */
  uint32_t passes;  /* 0: one pass, cache twice the file; n: the reads n
                       times in one instance set, a cache a quarter of the
                       file, rows mgpu_seq/pass1..n (automatic pins) */
};

/* Where one pass of mg_seq puts its rows. */
struct mg_pass_out {
  const char *name;   /* the rows' workload */
  const char *config;
  char *note;         /* in: a failure so far; out: the pass's note */
  size_t note_len;
  uint32_t workers;
  int active;         /* GPUs reading */
  int ok;             /* out: the pass read every byte right */
};

/* One pass of mg_seq in the started instances: the first o->active GPUs
 * read at once (when ok: nothing failed before), then the pass's rows
 * (counters so far, all instances). */
static void mg_seq_pass(const struct mg_seq_cfg *c, struct mg_read *m, int ok,
                        struct mg_pass_out *o)
{
  struct gpufs_stats all;
  const int n = g_mg.n, a = o->active;
  double worst = 0;
  uint64_t bytes = 0;
  if (ok) {
    mg_reads(m, n, c->own, BENCH_SEQ_BLOCK, BENCH_MIB, 0);
    mg_parallel(a, mg_read_main, m, sizeof(m[0]));
    for (int k = 0; k < a; k++) {
      ok &= mg_read_ok(&m[k], o->note, o->note_len);
      worst = m[k].r.seconds > worst ? m[k].r.seconds : worst;
      bytes += m[k].r.bytes;
    }
  }
  memset(&all, 0, sizeof(all));
  gpufs_get_stats(&all);
  const double v = worst > 0 ? bytes / worst / 1e9 : NAN;
  char per[160] = "";
  for (int k = 0; ok && k < a; k++)
    snprintf(per + strlen(per), sizeof(per) - strlen(per), "%s%.1f", k ? "/" : "", m[k].r.gbps);
  if (ok)
    snprintf(o->note, o->note_len,
             "per GPU %s GB/s; host bytes %.2fx one file; %llu peer hits; %llu pinned pages "
             "(%llu automatic pins)%s",
             per, (double)all.bytes_read / (double)g_bench.size,
             (unsigned long long)all.peer_hits, (unsigned long long)all.reg_pages,
             (unsigned long long)all.pins_auto, c->reg ? "; registered" : "");
  const uint64_t file_bytes = c->own ? (uint64_t)a * g_bench.size : g_bench.size;
  if (a < n) {
    struct bench_row row;
    if (a == 1)
      g_mg.seq_one = ok ? v : NAN;
    bench_row_init(&row, "mgpu_seq_scaling", o->config, ok ? v : NAN, "GB/s");
    bench_row_baseline(&row, "linear", a * g_mg.seq_one);
    mg_stats_fields(&row, &all, worst, o->workers, file_bytes);
    bench_row_status(&row, ok ? BENCH_OK : BENCH_FAILED, "%s", o->note);
    bench_report_add(&row);
  } else {
    static const char *names[] = {"mgpu_ceiling_sum", "mgpu_expert_together"};
    const double bases[] = {g_mg.ceiling_sum, g_mg.experts};
    for (int b = 0; b < 2; b++) {
      struct bench_row row;
      bench_row_init(&row, o->name, o->config, ok ? v : NAN, "GB/s");
      bench_row_baseline(&row, names[b], bases[b]);
      mg_stats_fields(&row, &all, worst, o->workers, file_bytes);
      bench_row_status(&row, ok ? BENCH_OK : BENCH_FAILED, "%s", o->note);
      bench_report_add(&row);
    }
  }
  bench_progress("%s %s: %.2f GB/s (%s)", o->name, o->config, v, o->note);
  o->ok = ok;
}

/* One seq run, every GPU (or the first c->active) at once: rows against the
 * ceilings' sum and the experts, or, for a scaling run (active < N),
 * against active x the rate of one GPU alone (g_mg.seq_one). */
static void mg_seq(const struct mg_seq_cfg *c)
{
  struct mg_read m[MG_MAX];
  char config[200], note[512] = "", pg[32];
  const int n = g_mg.n, a = c->active > 0 && c->active < n ? c->active : n;
  const uint64_t cache = c->passes ? g_bench.size / 4 / c->page * c->page : 2 * g_bench.size;
  uint32_t w = c->workers;

  if (mg_start(n, c->page, cache, w, note, sizeof(note)) != 0) {
    mg_row("mgpu_seq", "start", NAN, "GB/s", NULL, NAN, 0, note);
    return;
  }
  if (!w)
    w = mg_default_workers(n);
  snprintf(config, sizeof(config), "gpus=%d", n);
  if (a < n)
    snprintf(config + strlen(config), sizeof(config) - strlen(config), " active=%d", a);
  snprintf(config + strlen(config), sizeof(config) - strlen(config),
           " %s page=%s io=1M workers=%u%s", c->own ? "own files" : "one shared file",
           bench_fmt_size(c->page, pg, sizeof(pg)), w, c->reg ? " registered" : "");
  if (c->passes)
    snprintf(config + strlen(config), sizeof(config) - strlen(config), " cache=file/4");
  int ok = 1;
  for (int k = 0; c->reg && k < (c->own ? a : 1); k++) {
    int rc = gpufs_register(g_mg.paths[k]);
    if (rc) {
      snprintf(note, sizeof(note), "gpufs_register: %s (%s)", gpufs_strerror(rc),
               gpufs_error_detail());
      ok = 0;
    }
  }
  for (uint32_t pass = 0; pass < (c->passes ? c->passes : 1); pass++) {
    static const char *const pass_names[] = {"mgpu_seq/pass1", "mgpu_seq/pass2", "mgpu_seq/pass3"};
    struct mg_pass_out o = {c->passes ? pass_names[pass < 3 ? pass : 2] : "mgpu_seq", config,
                            note, sizeof(note), w, a};
    mg_seq_pass(c, m, ok, &o);
    ok = o.ok;
  }
  for (int k = 0; c->reg && k < (c->own ? a : 1); k++)
    gpufs_unregister(g_mg.paths[k]);
  gpufs_stop();
}

/* GPU N-1 from the host (its own file), GPU 0 loads the data file, GPU N-1
 * reads it from GPU 0's cache; then GPUs 1..N-1 at once. */
static void mg_peer(void)
{
  struct mg_read m[MG_MAX];
  struct gpufs_stats sb, s0, s1, s2;
  char config[160], note[512] = "", a[32];
  const int n = g_mg.n, b = n - 1;

  if (mg_start(n, 65536, g_bench.size + (256ull << 20), 0, note, sizeof(note)) != 0) {
    mg_row("mgpu_peer", "start", NAN, "GB/s", NULL, NAN, 0, note);
    return;
  }
  snprintf(config, sizeof(config), "gpus=%d page=64K io=1M cache=%s GPU %d from GPU 0", n,
           bench_fmt_size(g_bench.size + (256ull << 20), a, sizeof(a)), b);
  mg_reads(m, n, 1, BENCH_SEQ_BLOCK, BENCH_MIB, 0);
  for (int k = 0; k < n; k++)
    m[k].use_barrier = 0;
  /* GPU b alone from the host: its own file */
  mg_read_main(&m[b]);
  int ok = mg_read_ok(&m[b], note, sizeof(note));
  const double host_rate = m[b].r.gbps;
  gpufs_get_stats(&sb);
  /* GPU 0 loads the data file */
  mg_read_main(&m[0]);
  ok &= mg_read_ok(&m[0], note, sizeof(note));
  gpufs_get_stats(&s0);
  /* GPU b reads it: from GPU 0's cache */
  struct mg_read pb = m[b];
  pb.path = g_mg.paths[0];
  pb.seed = g_mg.seeds[0];
  mg_read_main(&pb);
  ok &= mg_read_ok(&pb, note, sizeof(note));
  gpufs_get_stats(&s1);
  {
    struct bench_row row;
    bench_row_init(&row, "mgpu_peer", config, ok ? pb.r.gbps : NAN, "GB/s");
    bench_row_baseline(&row, "gpu_from_host", host_rate);
    bench_row_u64(&row, "gpus", (uint64_t)n);
    /* the data file's bytes the daemon read: GPU 0's load and the peer run */
    bench_row_f64(&row, "host_bytes_x",
                  (double)(s1.bytes_read - sb.bytes_read) / (double)g_bench.size);
    bench_row_u64(&row, "peer_hits", s1.peer_hits - s0.peer_hits);
    bench_row_u64(&row, "misses", s1.misses - s0.misses);
    bench_row_u64(&row, "bytes_read_by_peer_run", s1.bytes_read - s0.bytes_read);
    if (ok)
      snprintf(note, sizeof(note), "GPU %d: %.2f GB/s from GPU 0's cache, %.2f from the host; "
               "%llu of %llu misses peer hits; daemon bytes in the peer run %llu", b, pb.r.gbps,
               host_rate, (unsigned long long)(s1.peer_hits - s0.peer_hits),
               (unsigned long long)(s1.misses - s0.misses),
               (unsigned long long)(s1.bytes_read - s0.bytes_read));
    bench_row_status(&row, ok ? BENCH_OK : BENCH_FAILED, "%s", note);
    bench_report_add(&row);
    bench_progress("mgpu_peer: %s", note);
  }
  /* GPUs 1..n-2 have not read the data file: all of 1..n-1 at once (b
   * again, from its own cache now: left out when n > 2) */
  if (n > 2) {
    struct mg_read f[MG_MAX];
    const int nf = n - 2;
    mg_reads(f, n, 0, BENCH_SEQ_BLOCK, BENCH_MIB, 0);
    note[0] = 0;
    mg_parallel(nf, mg_read_main, f + 1, sizeof(f[0]));
    double worst = 0;
    uint64_t bytes = 0;
    int ok2 = 1;
    for (int k = 1; k <= nf; k++) {
      ok2 &= mg_read_ok(&f[k], note, sizeof(note));
      worst = f[k].r.seconds > worst ? f[k].r.seconds : worst;
      bytes += f[k].r.bytes;
    }
    gpufs_get_stats(&s2);
    const double v = worst > 0 ? bytes / worst / 1e9 : NAN;
    struct bench_row row;
    snprintf(config, sizeof(config), "gpus=%d page=64K io=1M GPUs 1..%d at once from GPU 0", n,
             nf);
    bench_row_init(&row, "mgpu_peer_fanout", config, ok2 ? v : NAN, "GB/s");
    bench_row_baseline(&row, "gpu_from_host", host_rate);
    bench_row_u64(&row, "gpus", (uint64_t)n);
    bench_row_u64(&row, "peer_hits", s2.peer_hits - s1.peer_hits);
    bench_row_u64(&row, "bytes_read", s2.bytes_read - s1.bytes_read);
    if (ok2)
      snprintf(note, sizeof(note), "%d GPUs at once, aggregate; %llu peer hits, daemon bytes "
               "%llu", nf, (unsigned long long)(s2.peer_hits - s1.peer_hits),
               (unsigned long long)(s2.bytes_read - s1.bytes_read));
    bench_row_status(&row, ok2 ? BENCH_OK : BENCH_FAILED, "%s", note);
    bench_report_add(&row);
    bench_progress("mgpu_peer_fanout: %.2f GB/s (%s)", v, note);
  }
  gpufs_stop();
}

/* rand: GPU 0 alone, then every GPU at once (own files, cold caches). */
static void mg_rand(uint32_t workers)
{
  struct mg_read m[MG_MAX];
  struct gpufs_stats all;
  char config[160], note[512] = "";
  const int n = g_mg.n;
  const uint64_t reads = g_bench.opt.quick ? (1ull << 18) : (1ull << 20);
  const uint64_t cache = 2 * g_bench.size;
  const uint32_t w = workers ? workers : mg_default_workers(n);

  for (int pass = 0; pass < 2; pass++) {
    const int alone = pass == 0;
    if (alone && !isnan(g_mg.rand_alone))
      continue;
    note[0] = 0;
    if (mg_start(n, 4096, cache, w, note, sizeof(note)) != 0) {
      mg_row("mgpu_rand", "start", NAN, "M pages/s", NULL, NAN, 0, note);
      return;
    }
    mg_reads(m, n, 1, BENCH_RAND_WARP, 4096, reads);
    mg_parallel(alone ? 1 : n, mg_read_main, m, sizeof(m[0]));
    double worst = 0;
    uint64_t calls = 0;
    int ok = 1;
    for (int k = 0; k < (alone ? 1 : n); k++) {
      ok &= mg_read_ok(&m[k], note, sizeof(note));
      worst = m[k].r.seconds > worst ? m[k].r.seconds : worst;
      calls += m[k].r.calls;
    }
    gpufs_get_stats(&all);
    gpufs_stop();
    const double v = worst > 0 ? calls / worst / 1e6 : NAN;
    snprintf(config, sizeof(config), "gpus=%d%s page=4K reads=%llu per GPU workers=%u",
             alone ? 1 : n, alone ? " (GPU 0 alone)" : " at once, own files",
             (unsigned long long)reads, w);
    struct bench_row row;
    bench_row_init(&row, alone ? "mgpu_rand_alone" : "mgpu_rand", config, ok ? v : NAN,
                   "M pages/s");
    if (!alone)
      bench_row_baseline(&row, "mgpu_rand_alone", g_mg.rand_alone);
    mg_stats_fields(&row, &all, worst, w, (uint64_t)(alone ? 1 : n) * g_bench.size);
    if (ok)
      snprintf(note, sizeof(note), "%llu pages in %.3f s; daemon busy %.2f of %u workers",
               (unsigned long long)calls, worst,
               worst > 0 ? all.daemon_busy_ns / 1e9 / (worst * w) : NAN, w);
    bench_row_status(&row, ok ? BENCH_OK : BENCH_FAILED, "%s", note);
    bench_report_add(&row);
    bench_progress("%s %s: %.2f M pages/s (%s)", alone ? "mgpu_rand_alone" : "mgpu_rand",
                   config, v, note);
    if (alone)
      g_mg.rand_alone = ok ? v : NAN;
  }
}

/* ---------------- the workload ---------------- */

static int mg_files(void)
{
  char sz[32];
  for (int k = 0; k < g_mg.n; k++) {
    g_mg.seeds[k] = k == 0 ? g_bench.seed : g_bench.seed ^ ((uint64_t)k << 52);
    if (k == 0) {
      snprintf(g_mg.paths[0], sizeof(g_mg.paths[0]), "%s", g_bench.path);
      continue;
    }
    snprintf(g_mg.paths[k], sizeof(g_mg.paths[k]), "%s/pattern_%s_gpu%d.bin", g_bench.opt.dir,
             bench_fmt_size(g_bench.size, sz, sizeof(sz)), k);
    int rc = bench_make_file(g_mg.paths[k], g_bench.size, g_mg.seeds[k]);
    rc = rc ? rc : bench_warm_file(g_mg.paths[k]);
    if (rc) {
      bench_progress("mgpu: %s: %s", g_mg.paths[k], strerror(-rc));
      return rc;
    }
  }
  return 0;
}

void bench_multigpu(void)
{
  int count = 0;
  char note[160];
  cudaGetDeviceCount(&count);
  memset(&g_mg, 0, sizeof(g_mg));
  g_mg.n = g_bench.opt.gpus > 0 && g_bench.opt.gpus < count ? g_bench.opt.gpus : count;
  if (g_mg.n > MG_MAX)
    g_mg.n = MG_MAX;
  g_mg.ceiling_sum = g_mg.experts = g_mg.rand_alone = g_mg.seq_one = NAN;
  if (g_mg.n < 2) {
    struct bench_row row;
    snprintf(note, sizeof(note), "%d GPU%s visible: the mgpu rows need two or more", count,
             count == 1 ? "" : "s");
    bench_row_init(&row, "mgpu", "gpus<2", NAN, "GB/s");
    bench_row_status(&row, BENCH_NA, "%s", note);
    bench_report_add(&row);
    bench_progress("mgpu: n/a (%s)", note);
    return;
  }
  bench_watch("mgpu: files", 900);
  if (mg_files() != 0)
    return;
  bench_watch("mgpu: baselines", 600);
  mg_baselines();
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  const uint32_t many = (uint32_t)(16 * g_mg.n < cpus ? 16 * g_mg.n : cpus);
  const uint32_t workers[2] = {0, many};
  const int quick = g_bench.opt.quick;
  struct mg_seq_cfg c;
  /* --quick: own files at 4 KiB (both worker counts), registered, peer,
   * rand with the most workers */
  for (int i = 0; i < 2; i++) {
    bench_watch("mgpu: seq", 600);
    c = (struct mg_seq_cfg){1, 0, 4096, workers[i], 0, 0};
    mg_seq(&c);
    if (!quick) {
      c.own = 0;
      mg_seq(&c);
    }
  }
  /* 64 KiB pages: a sixteenth of the requests for the same bytes */
  for (int i = 0; i < (quick ? 0 : 2); i++) {
    bench_watch("mgpu: seq 64K", 600);
    c = (struct mg_seq_cfg){1, 0, 65536, workers[i], 0, 0};
    mg_seq(&c);
  }
  /* scaling: 1 .. N-1 GPUs at once, the most workers */
  for (int a = 1; a < (quick ? 1 : g_mg.n); a++) {
    bench_watch("mgpu: seq scaling", 600);
    c = (struct mg_seq_cfg){1, a, 4096, many, 0, 0};
    mg_seq(&c);
  }
  bench_watch("mgpu: seq registered", 600);
  c = (struct mg_seq_cfg){1, 0, 4096, 0, 1, 0};
  mg_seq(&c);
  /* the default configuration read three times (automatic pins): own files,
   * then one file every GPU reads */
  for (int own = 1; own >= 0; own--) {
    bench_watch("mgpu: seq passes", 900);
    c = (struct mg_seq_cfg){own, 0, 4096, 0, 0, 3};
    mg_seq(&c);
  }
  bench_watch("mgpu: peer", 600);
  mg_peer();
  for (int i = quick ? 1 : 0; i < 2; i++) {
    bench_watch("mgpu: rand", 600);
    mg_rand(workers[i]);
  }
  bench_watch("", 0);
  cudaSetDevice(g_bench.opt.device);
}

