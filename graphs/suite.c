/*
 * suite.c - one graph through every algorithm and version (suite.h).
 */
#include "graphs/suite.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchlib/report.h"
#include "benchlib/util.h"

#define GRAPH_MAX_RUNS (GRAPH_MAX_GRAPHS * GRAPH_NALGOS * GRAPH_NVERSIONS)

/* What the table needs of a run. */
struct graph_entry {
  char graph[64];
  enum graph_algo a;
  enum graph_version v;
  struct graph_run_result r;
  int verified;
  uint64_t file_bytes;
};

static struct graph_entry graph_entries[GRAPH_MAX_RUNS];
static int graph_nentries;

/* The entry of version v among this graph and algorithm's, or NULL. */
static const struct graph_entry *graph_find(const char *graph, enum graph_algo a, enum graph_version v)
{
  for (int i = 0; i < graph_nentries; i++) {
    const struct graph_entry *e = &graph_entries[i];
    if (e->a == a && e->v == v && !strcmp(e->graph, graph))
      return e;
  }
  return NULL;
}

/* base's time / e's time: NaN when e did not verify or base neither
 * verified nor stopped at the time cap; *lower (may be NULL) is set when
 * base stopped at the cap: its time, and so the ratio, is a lower bound. */
static double graph_ratio_of(const struct graph_entry *e, enum graph_version base, int *lower)
{
  const struct graph_entry *b = graph_find(e->graph, e->a, base);
  if (!b || !(b->verified || b->r.capped) || !e->verified || !(e->r.e2e_s > 0))
    return NAN;
  if (lower)
    *lower |= b->r.capped;
  return b->r.e2e_s / e->r.e2e_s;
}

static double graph_ratio(const struct graph_entry *e, enum graph_version base)
{
  return graph_ratio_of(e, base, NULL);
}

static void graph_row(const struct graph_options *o, const struct graph_suite_graph *sg, const struct graph_entry *e)
{
  struct bench_row row;
  char config[160], lim[32];
  const struct graph_entry *cpu = graph_find(e->graph, e->a, GRAPH_V_CPU);
  const uint64_t limit = graph_limit_for(o, sg->h.file_size, o->page);
  if (limit)
    bench_fmt_size(limit, lim, sizeof(lim));
  else
    snprintf(lim, sizeof(lim), "none");
  snprintf(config, sizeof(config), "graph=%s version=%s limit=%s page=%u reps=%d cap=%gs", e->graph,
           graph_version_name(e->v), lim, o->page, o->reps, o->cap_s);
  bench_row_init(&row, graph_algo_name(e->a), config, e->verified || e->r.capped ? e->r.e2e_s : NAN, "s");
  if (e->v != GRAPH_V_CPU)
    bench_row_baseline(&row, "cpu", cpu && cpu->verified ? cpu->r.e2e_s : NAN);
  if (e->r.capped)
    bench_row_status(&row, BENCH_CAPPED, "%s: the time is a lower bound", e->r.why);
  else if (e->r.na)
    bench_row_status(&row, BENCH_NA, "%s", e->r.why);
  else if (!e->verified)
    bench_row_status(&row, BENCH_FAILED, "%s", e->r.why);
  bench_row_str(&row, "graph", e->graph);
  bench_row_str(&row, "version", graph_version_name(e->v));
  bench_row_u64(&row, "vertices", sg->g.n);
  bench_row_u64(&row, "edges", sg->g.m);
  bench_row_u64(&row, "file_bytes", sg->h.file_size);
  bench_row_u64(&row, "limit_bytes", limit);
  bench_row_f64(&row, "load_s", e->r.load_s);
  bench_row_u64(&row, "rounds", e->r.rounds);
  if (e->r.pcie_known)
    bench_row_u64(&row, "pcie_bytes", e->r.pcie_bytes);
  bench_row_f64(&row, "x_cpu", graph_ratio(e, GRAPH_V_CPU));
  bench_row_f64(&row, "x_resident", graph_ratio(e, GRAPH_V_RESIDENT));
  bench_row_f64(&row, "x_zero_copy", graph_ratio(e, GRAPH_V_ZERO_COPY));
  bench_row_f64(&row, "x_uvm", graph_ratio(e, GRAPH_V_UVM));
  bench_row_f64(&row, "x_uvm_rm", graph_ratio(e, GRAPH_V_UVM_RM));
  bench_row_str(&row, "verified", e->verified ? "yes" : e->r.capped ? "capped" : "no");
  bench_row_str(&row, "reference", o->ref == GRAPH_REF_CPU ? "cpu" : "serial");
  if (e->r.has_stats) {
    bench_row_u64(&row, "misses", e->r.st.misses);
    bench_row_u64(&row, "hits", e->r.st.hits);
    bench_row_u64(&row, "evictions", e->r.st.evictions);
  }
  bench_report_add(&row);
}

/* One algorithm on one graph: its runs' options, the reference and the
 * buffer each version's result lands in. */
struct graph_algo_job {
  const struct graph_suite_graph *sg;
  struct graph_run_opts ro;
  int reps;
  const void *ref;
  void *out;
};

/* reps runs of e->v, the median kept (every result verified). */
static void graph_run_one(const struct graph_algo_job *j, struct graph_entry *e)
{
  double t[100];
  int n = 0;
  e->verified = 1;
  for (int k = 0; k < j->reps && e->verified; k++) {
    graph_run_version(e->v, &j->ro, j->out, &e->r);
    struct graph_err why;
    e->verified = e->r.ok && graph_verify(e->a, &j->sg->g, j->ref, j->out, &why) == 0;
    if (e->r.ok && !e->verified)
      snprintf(e->r.why, sizeof(e->r.why), "%s", why.msg);
    t[n++] = e->r.e2e_s;
  }
  for (int a = 0; a < n; a++) /* the median of a few */
    for (int b = a + 1; b < n; b++)
      if (t[b] < t[a]) {
        const double x = t[a];
        t[a] = t[b];
        t[b] = x;
      }
  if (e->verified)
    e->r.e2e_s = t[n / 2];
}

static int graph_algo_runs(const struct graph_options *o, const struct graph_suite_graph *sg, enum graph_algo a,
                           void *ref, void *out)
{
  const struct graph_algo_job j = {sg,
                                   {sg->path, &sg->g, &sg->h, a, sg->source, graph_limit_for(o, sg->h.file_size, o->page),
                                    o->page, o->threads, o->device, o->cap_s},
                                   o->reps, ref, out};
  int failed = 0;
  for (int v = 0; v < GRAPH_NVERSIONS; v++) { /* table order: baselines before their ratios */
    int asked = 0;
    for (int k = 0; k < o->nversions; k++)
      asked |= o->versions[k] == v;
    if (!asked || graph_nentries == GRAPH_MAX_RUNS)
      continue;
    struct graph_entry *e = &graph_entries[graph_nentries++];
    memset(e, 0, sizeof(*e));
    snprintf(e->graph, sizeof(e->graph), "%s", sg->name);
    e->a = a;
    e->v = (enum graph_version)v;
    e->file_bytes = sg->h.file_size;
    graph_run_one(&j, e);
    fprintf(stderr, "graphs: %s %s %-9s %8.4f s  %s\n", sg->name, graph_algo_name(a), graph_version_name(e->v),
            e->r.e2e_s, e->verified ? "verified" : e->r.why);
    failed |= !e->verified && !e->r.na && !e->r.capped;
    graph_row(o, sg, e);
  }
  return failed;
}

/* The result every version of a is verified against (--ref), into ref
 * (graph_ref_bytes(a) a vertex): 0 or -ENOMEM. */
static int graph_suite_reference(const struct graph_options *o, const struct graph_suite_graph *sg, enum graph_algo a,
                                 void *ref)
{
  if (o->ref == GRAPH_REF_SERIAL)
    return graph_reference(a, &sg->g, sg->source, ref);
  const int rc = graph_cpu_run(a, &sg->g, sg->source, o->threads, ref);
  if (!rc && a == GRAPH_PR) /* the cpu version's floats widened in place, the last first */
    for (uint64_t v = sg->g.n; v-- > 0;)
      ((double *)ref)[v] = ((const float *)ref)[v];
  return rc;
}

int graph_suite_run(const struct graph_options *o, const struct graph_suite_graph *sg)
{
  const uint64_t n = sg->g.n ? sg->g.n : 1;
  int failed = 0;
  void *ref = malloc(n * 8), *out = malloc(n * 8);
  if (!ref || !out) {
    free(ref);
    free(out);
    fprintf(stderr, "graphs: no memory for the results of %s\n", sg->name);
    return -ENOMEM;
  }
  fprintf(stderr, "graphs: %s: %llu vertices, %llu edges, %.2f GB, source %u\n", sg->name,
          (unsigned long long)sg->g.n, (unsigned long long)sg->g.m, sg->h.file_size / 1e9, sg->source);
  for (int k = 0; k < o->nalgos; k++) {
    const enum graph_algo a = (enum graph_algo)o->algos[k];
    struct graph_err why;
    if (graph_algo_check(a, &sg->g, &why) != 0) {
      fprintf(stderr, "graphs: %s %s: skipped: %s\n", sg->name, graph_algo_name(a), why.msg);
      continue;
    }
    const double t0 = bench_now();
    if (graph_suite_reference(o, sg, a, ref) != 0) {
      fprintf(stderr, "graphs: %s %s: no memory for the reference\n", sg->name, graph_algo_name(a));
      failed = 1;
      continue;
    }
    fprintf(stderr, "graphs: %s %s: reference (%s) in %.2f s\n", sg->name, graph_algo_name(a),
            o->ref == GRAPH_REF_CPU ? "cpu version" : "serial", bench_now() - t0);
    failed |= graph_algo_runs(o, sg, a, ref, out);
  }
  free(ref);
  free(out);
  return failed ? -EIO : 0;
}

/* A ratio's cell: "+" after it when the baseline stopped at the cap. */
static void graph_ratio_cell(char *buf, size_t len, const struct graph_entry *e, enum graph_version base)
{
  int lower = 0;
  bench_fmt_value(buf, len, graph_ratio_of(e, base, &lower), lower ? "%.2fx+" : "%.2fx");
}

/* gpufs against each baseline: the geometric mean over the algorithms of each graph */
static void graph_means(void)
{
  static const struct {
    enum graph_version v;
    const char *target;
  } base[] = {{GRAPH_V_UVM, ">= 1.5x"}, {GRAPH_V_UVM_RM, ">= 1.5x"}, {GRAPH_V_ZERO_COPY, ">= 1.1x"},
              {GRAPH_V_RESIDENT, ">= 0.5x"}, {GRAPH_V_CPU, ">= 3x"}};
  int any = 0;
  for (int i = 0; i < graph_nentries; i++)
    any |= graph_entries[i].v == GRAPH_V_GPUFS;
  if (!any)
    return;
  printf("\ngpufs against the baselines (geometric mean over the algorithms; target):\n");
  for (int i = 0; i < graph_nentries; i++) {
    const struct graph_entry *e = &graph_entries[i];
    int first = 1;
    for (int j = 0; j < i; j++)
      first &= strcmp(graph_entries[j].graph, e->graph) != 0;
    if (!first)
      continue;
    for (size_t b = 0; b < sizeof(base) / sizeof(base[0]); b++) {
      double lg = 0;
      int k = 0, lower = 0;
      for (int j = i; j < graph_nentries; j++)
        if (!strcmp(graph_entries[j].graph, e->graph) && graph_entries[j].v == GRAPH_V_GPUFS) {
          const double x = graph_ratio_of(&graph_entries[j], base[b].v, &lower);
          if (!isnan(x))
            lg += log(x), k++;
        }
      if (k)
        printf("  %-22s x %-9s %6.2fx%s (target %s, %d algorithms)\n", e->graph, graph_version_name(base[b].v),
               exp(lg / k), lower ? "+" : " ", base[b].target, k);
    }
  }
}

void graph_suite_table(const struct graph_options *o)
{
  char e2e[16], load[16], xc[16], xr[16], xz[16], xu[16], pcie[16], rounds[16];
  (void)o;
  printf("\n%-22s %-5s %-9s %9s %9s %8s %8s %8s %8s %8s %6s %s\n", "graph", "algo", "version", "e2e s", "load s",
         "x cpu", "x resid", "x zcopy", "x uvm", "PCIe GB", "rounds", "verified");
  for (int i = 0; i < graph_nentries; i++) {
    const struct graph_entry *e = &graph_entries[i];
    bench_fmt_value(e2e, sizeof(e2e), e->verified || e->r.capped ? e->r.e2e_s : NAN, e->r.capped ? ">%.2f" : "%.4f");
    bench_fmt_value(load, sizeof(load), e->verified && e->v != GRAPH_V_CPU ? e->r.load_s : NAN, "%.4f");
    graph_ratio_cell(xc, sizeof(xc), e, GRAPH_V_CPU);
    graph_ratio_cell(xr, sizeof(xr), e, GRAPH_V_RESIDENT);
    graph_ratio_cell(xz, sizeof(xz), e, GRAPH_V_ZERO_COPY);
    graph_ratio_cell(xu, sizeof(xu), e, GRAPH_V_UVM);
    bench_fmt_value(pcie, sizeof(pcie), e->r.pcie_known ? e->r.pcie_bytes / 1e9 : NAN, "%.3f");
    bench_fmt_value(rounds, sizeof(rounds), e->r.rounds ? (double)e->r.rounds : NAN, "%.0f");
    printf("%-22s %-5s %-9s %9s %9s %8s %8s %8s %8s %8s %6s %s\n", e->graph, graph_algo_name(e->a),
           graph_version_name(e->v), e2e, load, xc, xr, xz, xu, pcie, rounds,
           e->verified ? "yes" : e->r.capped ? "capped" : e->r.na ? "n/a" : "NO");
    if (!e->verified)
      printf("    %s\n", e->r.why);
  }
  printf("(x: the baseline's time over this one's; +: the baseline stopped at the --cap, so the ratio is at least this)\n");
  graph_means();
}
