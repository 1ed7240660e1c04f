/*
 * main.cu - `rodinia`: the rodinia-io suite.  Every benchmark in every
 * version (cpu-io, expert, gpufs-4k, gpufs-64k), each verified against its
 * CPU reference; a progress line per benchmark and version on stderr, a
 * JSON row per benchmark and version (--out), the table last on stdout.
 *
 * Exit status: 0 every version verified; 1 a version failed or gave a wrong
 * result, or an input file is missing, truncated or from another seed;
 * 2 bad options, unknown benchmark, no usable GPU.
 * docs/rodinia-io.md says what is measured and how.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime.h>

#include "benchlib/opts.h"
#include "benchlib/report.h"
#include "benchlib/util.h"
#include "rodinia-io/harness/driver.h"
#include "rodinia-io/harness/options.h"
#include "rodinia-io/harness/rio.h"

/* speedup a / b of two end-to-end times, NaN when either is missing */
static double rio_speedup(const struct rio_result *base, const struct rio_result *r)
{
  if (!base->ok || !r->ok || !(r->e2e_s > 0))
    return NAN;
  return base->e2e_s / r->e2e_s;
}

static double rio_io_speedup(const struct rio_result *base, const struct rio_result *r)
{
  if (!base->ok || !r->ok || !(r->io_s > 0))
    return NAN;
  return base->io_s / r->io_s;
}

static void rio_row(const struct rio_bench_result *br, const struct rio_result *r,
                    const struct rio_options *o)
{
  struct bench_row row;
  char config[160], cache[32];
  const struct rio_result *cpu = &br->r[RIO_CPU_IO], *ex = &br->r[RIO_EXPERT];
  if (r->cache)
    snprintf(cache, sizeof(cache), "%lluM", (unsigned long long)(r->cache >> 20));
  else
    snprintf(cache, sizeof(cache), "full");
  snprintf(config, sizeof(config), "version=%s scale=%g cache=%s reps=%d threads=%d",
           rio_version_name(r->v), o->scale, cache, o->reps, o->expert_threads);
  bench_row_init(&row, br->bench->name, config, r->ok ? r->e2e_s : NAN, "s");
  if (r->v != RIO_CPU_IO)
    bench_row_baseline(&row, "cpu-io", cpu->ok ? cpu->e2e_s : NAN);
  if (!r->ok)
    bench_row_status(&row, BENCH_FAILED, "%s", r->why);
  bench_row_str(&row, "version", rio_version_name(r->v));
  bench_row_u64(&row, "input_bytes", br->input_bytes);
  bench_row_f64(&row, "e2e_min_s", r->e2e_min_s);
  bench_row_f64(&row, "e2e_max_s", r->e2e_max_s);
  bench_row_f64(&row, "io_s", r->io_s);
  bench_row_f64(&row, "io_gbps", r->io_gbps);
  bench_row_u64(&row, "overlapped", (uint64_t)r->overlapped);
  bench_row_f64(&row, "speedup_cpuio", rio_speedup(cpu, r));
  bench_row_f64(&row, "speedup_expert", rio_speedup(ex, r));
  bench_row_f64(&row, "io_speedup_cpuio", rio_io_speedup(cpu, r));
  bench_row_str(&row, "verified", r->ok ? "yes" : "no");
  bench_row_u64(&row, "cache_bytes", r->cache);
  if (r == &br->small[r->v]) /* the small-cache run: its throughput against the full cache's */
    bench_row_f64(&row, "full_cache_ratio", rio_speedup(&br->r[r->v], r));
  if (r->has_stats) {
    bench_row_u64(&row, "page_size", r->v == RIO_GPUFS_4K ? 4096 : 65536);
    bench_row_u64(&row, "misses", r->st.misses);
    bench_row_u64(&row, "hits", r->st.hits);
    bench_row_u64(&row, "evictions", r->st.evictions);
    bench_row_u64(&row, "ra_pages", r->st.ra_pages);
    bench_row_u64(&row, "preads", r->st.preads);
    bench_row_f64(&row, "daemon_busy_s", r->st.daemon_busy_ns * 1e-9);
  }
  bench_report_add(&row);
}

/* The table, then the geometric means over the benchmarks per version. */
static void rio_table(const struct rio_bench_result *res, int n, const struct rio_options *o)
{
  char e2e[16], io[16], gbps[16], sc[16], se[16];
  double lg_cpu[RIO_NVERSIONS] = {0}, lg_ex[RIO_NVERSIONS] = {0}, lg_io[RIO_NVERSIONS] = {0};
  int n_cpu[RIO_NVERSIONS] = {0}, n_ex[RIO_NVERSIONS] = {0}, n_io[RIO_NVERSIONS] = {0};

  printf("\n%-11s %-10s %9s %9s %8s %9s %9s %-10s %s\n", "benchmark", "version", "e2e s", "I/O s",
         "I/O GB/s", "x cpu-io", "x expert", "overlap", "verified");
  for (int b = 0; b < n; b++) {
    const struct rio_bench_result *br = &res[b];
    if (br->setup_failed) {
      printf("%-11s %-10s %s\n", br->bench->name, "-", br->why);
      continue;
    }
    for (int k = 0; k < o->nversions; k++) {
      const struct rio_result *r = &br->r[o->versions[k]];
      const double s_cpu = rio_speedup(&br->r[RIO_CPU_IO], r);
      const double s_ex = rio_speedup(&br->r[RIO_EXPERT], r);
      const double s_io = rio_io_speedup(&br->r[RIO_CPU_IO], r);
      bench_fmt_value(e2e, sizeof(e2e), r->ok ? r->e2e_s : NAN, "%.4f");
      bench_fmt_value(io, sizeof(io), r->ok ? r->io_s : NAN, "%.4f");
      bench_fmt_value(gbps, sizeof(gbps), r->ok ? r->io_gbps : NAN, "%.2f");
      bench_fmt_value(sc, sizeof(sc), s_cpu, "%.2fx");
      bench_fmt_value(se, sizeof(se), s_ex, "%.2fx");
      printf("%-11s %-10s %9s %9s %8s %9s %9s %-10s %s\n", br->bench->name, rio_version_name(r->v), e2e,
             io, gbps, sc, se, r->ok ? (r->overlapped ? "yes" : "no") : "-",
             r->ok ? "yes" : "NO");
      if (!r->ok)
        printf("    %s\n", r->why);
      const int v = r->v;
      if (!isnan(s_cpu))
        lg_cpu[v] += log(s_cpu), n_cpu[v]++;
      if (!isnan(s_ex))
        lg_ex[v] += log(s_ex), n_ex[v]++;
      if (!isnan(s_io))
        lg_io[v] += log(s_io), n_io[v]++;
    }
  }
  if (o->small_cache) {
    double lg[RIO_NVERSIONS] = {0};
    int nlg[RIO_NVERSIONS] = {0};
    printf("\ncache smaller than the inputs (throughput against the full cache; target >= 0.8x):\n");
    printf("%-11s %-10s %8s %9s %9s %9s %s\n", "benchmark", "version", "cache", "inputs GB", "e2e s", "x full",
           "verified");
    for (int b = 0; b < n; b++) {
      const struct rio_bench_result *br = &res[b];
      for (int k = 0; !br->setup_failed && k < o->nversions; k++) {
        const struct rio_result *r = &br->small[o->versions[k]];
        if (!r->ran)
          continue;
        const double x = rio_speedup(&br->r[r->v], r);
        bench_fmt_value(e2e, sizeof(e2e), r->ok ? r->e2e_s : NAN, "%.4f");
        bench_fmt_value(sc, sizeof(sc), x, "%.2fx");
        printf("%-11s %-10s %7lluM %9.2f %9s %9s %s\n", br->bench->name, rio_version_name(r->v),
               (unsigned long long)(r->cache >> 20), br->input_bytes / 1e9, e2e, sc, r->ok ? "yes" : "NO");
        if (!r->ok)
          printf("    %s\n", r->why);
        if (!isnan(x))
          lg[r->v] += log(x), nlg[r->v]++;
      }
    }
    for (int v = RIO_GPUFS_4K; v <= RIO_GPUFS_64K; v++)
      if (nlg[v])
        printf("  %-10s geometric mean %.2fx the full cache's throughput\n", rio_version_name((enum rio_version)v),
               exp(lg[v] / nlg[v]));
  }
  printf("\ngeometric means over the benchmarks (end to end; I/O):\n");
  for (int k = 0; k < o->nversions; k++) {
    const int v = o->versions[k];
    if (v == RIO_CPU_IO)
      continue;
    bench_fmt_value(sc, sizeof(sc), n_cpu[v] ? exp(lg_cpu[v] / n_cpu[v]) : NAN, "%.2fx");
    bench_fmt_value(se, sizeof(se), n_ex[v] && v != RIO_EXPERT ? exp(lg_ex[v] / n_ex[v]) : NAN, "%.2fx");
    bench_fmt_value(gbps, sizeof(gbps), n_io[v] ? exp(lg_io[v] / n_io[v]) : NAN, "%.2fx");
    printf("  %-10s %8s cpu-io  %8s expert   I/O %8s cpu-io\n", rio_version_name((enum rio_version)v), sc,
           se, gbps);
  }
}

int main(int argc, char **argv)
{
  struct rio_options o;
  char err[256];
  const char *names[RIO_MAX_BENCHES];
  for (int i = 0; i < rio_nbenches; i++)
    names[i] = rio_benches[i]->name;
  int rc = rio_parse_options(argc, argv, names, rio_nbenches, &o, err, sizeof(err));
  if ((rc = bench_opts_exit("rodinia", rc, err, rio_usage)) >= 0)
    return rc;
  if (o.list) {
    for (int i = 0; i < rio_nbenches; i++)
      printf("%-11s %s\n", rio_benches[i]->name, rio_benches[i]->summary);
    return 0;
  }
  if (rio_check_files(&o, err, sizeof(err)) != 0) {
    fprintf(stderr, "rodinia: %s\n", err);
    return 2;
  }
  if (bench_need_gpu("rodinia", o.device) != 0)
    return 2;
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, o.device);
  if (o.out[0] && bench_report_open(o.out) != 0) {
    fprintf(stderr, "rodinia: cannot open %s\n", o.out);
    return 2;
  }
#ifdef BENCH_COMMIT
  bench_report_run_context(prop.name, BENCH_COMMIT);
#else
  bench_report_run_context(prop.name, NULL);
#endif
  bench_report_context("suite", "rodinia-io");

  const int n = o.nbenches ? o.nbenches : rio_nbenches;
  struct rio_bench_result *res = (struct rio_bench_result *)calloc((size_t)n, sizeof(*res));
  if (!res) {
    fprintf(stderr, "rodinia: no memory\n");
    return 1;
  }
  fprintf(stderr, "rodinia-io on %s: %d benchmark(s), scale %g, %d repetition(s), data in %s\n",
          prop.name, n, o.scale, o.reps, o.dir);
  int failed = 0;
  for (int b = 0; b < n; b++) {
    const struct rio_bench *bench = o.nbenches ? rio_find_bench(o.benches[b]) : rio_benches[b];
    if (rio_run_bench(bench, &o, &res[b], 1) != 0)
      failed = 1;
    for (int k = 0; !res[b].setup_failed && k < o.nversions; k++) {
      rio_row(&res[b], &res[b].r[o.versions[k]], &o);
      if (res[b].small[o.versions[k]].ran)
        rio_row(&res[b], &res[b].small[o.versions[k]], &o);
    }
  }
  rio_table(res, n, &o);
  printf(failed ? "\nFAILED: see the rows above\n" : "\nevery version of every benchmark verified (%s)\n",
         prop.name);
  bench_report_close();
  free(res);
  return failed ? 1 : 0;
}
