/*
 * service_run.c - the service's rounds, their checks, rows and table
 * (service_run.h).
 *
 * Each version and share starts from the file as generated (its weights
 * written back, untimed), sets the version up (untimed), runs SSSP once
 * (round 0: everything read from nothing, a row field of its own), then
 * per round: the writer rewrites the round's runs with pwrite on its own
 * descriptor (untimed), the version's round runs (timed: its copy, reread
 * or acquire, and SSSP until the distances are in host memory), and the
 * distances are compared with the reference for the file as it is now
 * (untimed).  The writer's rounds are the same for every version, so a
 * reference is computed once per share and round and kept as the XXH3 sum
 * of its distances; a result whose sum differs is compared with the
 * reference again for the first vertex that differs.
 */
#include "graphs/service_run.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "benchlib/report.h"
#include "benchlib/util.h"
#include "graphs/algo.h"
#include "graphs/update.h"

/* One version and share: what the row and the table need. */
struct svc_entry {
  int v, share;        /* enum graph_svc_version; index into o->shares */
  int rounds;          /* rounds run after round 0 */
  int checked, passed; /* rounds whose distances were compared; equal */
  int failed;          /* a round failed or differed (why) */
  int capped;          /* stopped at --cap before --rounds */
  double first_s;      /* round 0 */
  double mean_s, median_s, fetch_s; /* per round; fetch: the copy, reread or acquire */
  double pcie_bytes;   /* per round, where known (< 0: not) */
  double dropped;      /* per round: pages the acquire dropped */
  double evictions;    /* per round: gpufs's evictions */
  double changed_bytes; /* per round: the writer's */
  char why[512];
};

static struct svc_entry svc_entries[GRAPH_SVC_NVERSIONS * GRAPH_SVC_MAX_SHARES];
static int svc_nentries;

/* The references' sums: [share][round], round 0 shared by every share. */
struct svc_refs {
  uint64_t n;
  uint64_t *sum;
  uint8_t *have;
  int rounds;
  uint64_t *buf; /* one reference's distances */
};

static uint64_t *svc_ref_slot(struct svc_refs *R, int share, int round, uint8_t **have)
{
  const size_t i = round == 0 ? 0 : (size_t)share * (size_t)(R->rounds + 1) + (size_t)round;
  *have = &R->have[i];
  return &R->sum[i];
}

static int svc_reference(const struct graph_svc_options *o, const struct graph_svc_file *f, uint64_t *out)
{
  if (o->ref == GRAPH_SVC_REF_CPU)
    return graph_cpu_run(GRAPH_SSSP, &f->g, f->source, o->threads, out);
  return graph_reference(GRAPH_SSSP, &f->g, f->source, out);
}

/* Compare got with the reference of the file as it is (share, round):
 * 0, or -EIO / -ENOMEM with why. */
static int svc_check(const struct graph_svc_options *o, const struct graph_svc_file *f, struct svc_refs *R,
                     int share, int round, const uint64_t *got, char *why, size_t len)
{
  uint8_t *have;
  uint64_t *sum = svc_ref_slot(R, share, round, &have);
  const uint64_t bytes = R->n * 8;
  int fresh = 0;
  if (!*have) {
    const double t0 = bench_now();
    if (svc_reference(o, f, R->buf) != 0)
      return snprintf(why, len, "no memory for the reference"), -ENOMEM;
    fprintf(stderr, "graph_service: reference of share %g%% round %d in %.2f s\n", o->shares[share], round,
            bench_now() - t0);
    *sum = graph_data_sum(R->buf, bytes);
    *have = 1;
    fresh = 1;
  }
  if (graph_data_sum(got, bytes) == *sum)
    return 0;
  if (!fresh && svc_reference(o, f, R->buf) != 0)
    return snprintf(why, len, "no memory for the reference"), -ENOMEM;
  struct graph_err e;
  if (graph_verify(GRAPH_SSSP, &f->g, R->buf, got, &e) == 0)
    snprintf(e.msg, sizeof(e.msg), "the distances' sum differs from the reference's");
  snprintf(why, len, "round %d: %.480s", round, e.msg);
  return -EIO;
}

/* Write the weights as generated back into the file. */
static int svc_restore(int fd, const struct graph_svc_file *f)
{
  const uint64_t bytes = 4 * f->h.nedges;
  for (uint64_t done = 0; done < bytes;) {
    const ssize_t w = pwrite(fd, (const uint8_t *)f->weights0 + done, bytes - done, (off_t)(f->h.weights_off + done));
    if (w <= 0)
      return w < 0 ? -errno : -EIO;
    done += (uint64_t)w;
  }
  return 0;
}

static int svc_median_cmp(const void *a, const void *b)
{
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static int svc_verify_round(const struct graph_svc_options *o, int round)
{
  return round == 0 || (round - 1) % o->verify_every == 0;
}

/* The rounds of e->v at share e->share over the file open for writing as wfd. */
static void svc_rounds(const struct graph_svc_options *o, struct graph_svc_file *f, struct svc_refs *R, int wfd,
                       struct graph_svc *s, struct svc_entry *e, double *t)
{
  const struct graph_update_spec spec = {f->h.nedges, o->shares[e->share], o->runs, o->gen.seed};
  double start = bench_now(); /* moved on by the checks: --cap counts the rounds and the writer */
  struct graph_run_result r;
  int64_t dropped;
  double fetch = 0, pcie = 0, drop = 0, changed = 0, evict = 0;
  int pcie_known = 1;
  for (int round = 0; round <= o->rounds && !e->failed; round++) {
    struct graph_update_plan plan;
    struct graph_svc_change c = {0, 0};
    if (round > 0) {
      if (o->cap_s > 0 && bench_now() - start > o->cap_s) {
        e->capped = 1;
        break;
      }
      int rc = graph_update_choose(&spec, (uint64_t)round, &plan);
      if (!rc)
        rc = graph_update_apply(wfd, f->h.weights_off, &plan, spec.seed, (uint64_t)round);
      if (rc) {
        snprintf(e->why, sizeof(e->why), "round %d: the writer: %s", round, strerror(-rc));
        e->failed = 1;
        break;
      }
      graph_update_span(&plan, f->h.weights_off, &c.off, &c.len);
      changed += 4.0 * (double)plan.total;
    }
    if (graph_svc_round(s, round ? &c : NULL, &r, &dropped) != 0) {
      snprintf(e->why, sizeof(e->why), "round %d: %.480s", round, r.why);
      e->failed = 1;
      break;
    }
    if (round == 0) {
      e->first_s = r.e2e_s;
    } else {
      t[e->rounds++] = r.e2e_s;
      fetch += r.load_s;
      pcie += (double)r.pcie_bytes;
      pcie_known &= r.pcie_known;
      drop += (double)dropped;
      evict += (double)r.st.evictions;
    }
    if (svc_verify_round(o, round)) {
      const double t0 = bench_now();
      e->checked++;
      if (svc_check(o, f, R, e->share, round, graph_svc_result(s), e->why, sizeof(e->why)) != 0)
        e->failed = 1;
      else
        e->passed++;
      start += bench_now() - t0;
    }
  }
  double sum = 0;
  for (int i = 0; i < e->rounds; i++)
    sum += t[i];
  const int k = e->rounds ? e->rounds : 1;
  e->mean_s = e->rounds ? sum / k : NAN;
  e->fetch_s = fetch / k;
  e->pcie_bytes = pcie_known ? pcie / k : -1;
  e->dropped = drop / k;
  e->evictions = evict / k;
  e->changed_bytes = changed / k;
  qsort(t, (size_t)e->rounds, sizeof(double), svc_median_cmp);
  e->median_s = e->rounds ? t[e->rounds / 2] : NAN;
}

static const struct svc_entry *svc_find(int v, int share)
{
  for (int i = 0; i < svc_nentries; i++)
    if (svc_entries[i].v == v && svc_entries[i].share == share)
      return &svc_entries[i];
  return NULL;
}

/* base's mean round over e's: NaN unless both ran rounds without a failure. */
static double svc_ratio(const struct svc_entry *e, int base)
{
  const struct svc_entry *b = svc_find(base, e->share);
  if (!b || b->failed || e->failed || !(b->mean_s > 0) || !(e->mean_s > 0))
    return NAN;
  return b->mean_s / e->mean_s;
}

static void svc_row(const struct graph_svc_options *o, const struct graph_svc_file *f, const struct svc_entry *e)
{
  struct bench_row row;
  char config[160];
  snprintf(config, sizeof(config), "graph=%s version=%s share=%g%% runs=%u rounds=%d page=%u cache=%gx", f->name,
           graph_svc_names[e->v], o->shares[e->share], o->runs, e->rounds, o->page, o->cache_x);
  bench_row_init(&row, "graph-service", config, e->failed ? NAN : e->mean_s, "s");
  const struct svc_entry *copy = svc_find(GRAPH_SVC_COPY, e->share);
  bench_row_baseline(&row, "copy", e->v != GRAPH_SVC_COPY && copy && !copy->failed ? copy->mean_s : NAN);
  if (e->failed)
    bench_row_status(&row, BENCH_FAILED, "%s", e->why);
  else if (e->capped)
    bench_row_status(&row, BENCH_CAPPED, "stopped at the %.0f s cap after %d of %d rounds", o->cap_s, e->rounds,
                     o->rounds);
  bench_row_str(&row, "graph", f->name);
  bench_row_str(&row, "version", graph_svc_names[e->v]);
  bench_row_f64(&row, "share_pct", o->shares[e->share]);
  bench_row_u64(&row, "runs", o->runs);
  bench_row_f64(&row, "cache_x", o->cache_x);
  bench_row_u64(&row, "vertices", f->g.n);
  bench_row_u64(&row, "edges", f->g.m);
  bench_row_u64(&row, "file_bytes", f->h.file_size);
  bench_row_u64(&row, "rounds", (uint64_t)e->rounds);
  bench_row_f64(&row, "first_s", e->first_s);
  bench_row_f64(&row, "median_s", e->median_s);
  bench_row_f64(&row, "fetch_s", e->fetch_s);
  bench_row_f64(&row, "changed_bytes", e->changed_bytes);
  if (e->pcie_bytes >= 0)
    bench_row_f64(&row, "pcie_bytes", e->pcie_bytes);
  if (e->v == GRAPH_SVC_ACQUIRE || e->v == GRAPH_SVC_ACQUIRE_FILE)
    bench_row_f64(&row, "dropped_pages", e->dropped);
  if (e->v >= GRAPH_SVC_REOPEN)
    bench_row_f64(&row, "evictions", e->evictions);
  bench_row_f64(&row, "x_copy", svc_ratio(e, GRAPH_SVC_COPY));
  bench_row_f64(&row, "x_uvm", svc_ratio(e, GRAPH_SVC_UVM));
  bench_row_f64(&row, "x_reopen", svc_ratio(e, GRAPH_SVC_REOPEN));
  bench_row_u64(&row, "checked_rounds", (uint64_t)e->checked);
  bench_row_str(&row, "reference", o->ref == GRAPH_SVC_REF_CPU ? "cpu" : "dijkstra");
  bench_row_str(&row, "verified", e->failed ? "no" : "yes");
  bench_report_add(&row);
}

/* Version v at share i: set up, round 0 and the rounds, released. */
static void svc_one(const struct graph_svc_options *o, struct graph_svc_file *f, struct svc_refs *R,
                    struct svc_entry *e, double *t)
{
  const uint64_t cache = (uint64_t)(o->cache_x * (double)f->h.file_size) / o->page * o->page + o->page;
  const struct graph_run_opts ro = {f->path, &f->g, &f->h, GRAPH_SSSP, f->source, cache, o->page, o->threads,
                                    o->device, 0};
  struct graph_run_result r;
  struct graph_svc *s = NULL;
  const int wfd = open(f->path, O_WRONLY | O_CLOEXEC);
  int rc = wfd < 0 ? -errno : svc_restore(wfd, f);
  if (rc)
    snprintf(e->why, sizeof(e->why), "%.400s: %s", f->path, strerror(-rc));
  else if ((rc = graph_svc_open((enum graph_svc_version)e->v, &ro, &s, &r)) != 0)
    snprintf(e->why, sizeof(e->why), "%s", r.why);
  else
    svc_rounds(o, f, R, wfd, s, e, t);
  e->failed |= rc != 0;
  graph_svc_close(s);
  if (wfd >= 0)
    close(wfd);
}

int graph_svc_run_all(const struct graph_svc_options *o, struct graph_svc_file *f)
{
  struct svc_refs R = {f->g.n ? f->g.n : 1, NULL, NULL, o->rounds, NULL};
  const size_t slots = (size_t)o->nshares * (size_t)(o->rounds + 1);
  double *t = malloc((size_t)(o->rounds + 1) * sizeof(double));
  R.sum = calloc(slots, sizeof(uint64_t));
  R.have = calloc(slots, 1);
  R.buf = malloc(R.n * 8);
  int failed = 0;
  if (!t || !R.sum || !R.have || !R.buf) {
    fprintf(stderr, "graph_service: no memory for the references\n");
    failed = 1;
  }
  for (int k = 0; !failed && k < o->nversions; k++)
    for (int i = 0; i < o->nshares; i++) {
      struct svc_entry *e = &svc_entries[svc_nentries++];
      memset(e, 0, sizeof(*e));
      e->v = o->versions[k];
      e->share = i;
      svc_one(o, f, &R, e, t);
      fprintf(stderr, "graph_service: %-18s %5g%%  %3d rounds  %9.4f s a round (first %.4f s)  %d/%d checked %s\n",
              graph_svc_names[e->v], o->shares[i], e->rounds, e->mean_s, e->first_s, e->passed, e->checked,
              e->failed ? e->why : "verified");
      failed |= e->failed;
      svc_row(o, f, e); /* now: a run stopped by a time limit keeps its rows (baselines run first) */
    }
  free(t);
  free(R.sum);
  free(R.have);
  free(R.buf);
  return failed ? -EIO : 0;
}

/* The table: a line per share, a column per version (ms a round), then
 * gpufs-acquire against copy and gpufs-reopen beside issue 38's targets. */
void graph_svc_table(const struct graph_svc_options *o)
{
  char cell[GRAPH_SVC_NVERSIONS][16], xc[16], xr[16];
  printf("\n%-6s", "share");
  for (int v = 0; v < GRAPH_SVC_NVERSIONS; v++)
    printf(" %18s", graph_svc_names[v]);
  printf(" %9s %9s  %s\n", "acq/copy", "acq/reop", "target (issue 38)");
  for (int i = 0; i < o->nshares; i++) {
    for (int v = 0; v < GRAPH_SVC_NVERSIONS; v++) {
      const struct svc_entry *e = svc_find(v, i);
      bench_fmt_value(cell[v], sizeof(cell[v]), e && !e->failed ? 1e3 * e->mean_s : NAN, "%.2f ms");
    }
    const struct svc_entry *a = svc_find(GRAPH_SVC_ACQUIRE, i);
    bench_fmt_value(xc, sizeof(xc), a ? svc_ratio(a, GRAPH_SVC_COPY) : NAN, "%.2fx");
    bench_fmt_value(xr, sizeof(xr), a ? svc_ratio(a, GRAPH_SVC_REOPEN) : NAN, "%.2fx");
    const double s = o->shares[i];
    const char *target = s == 10 ? ">= 3x copy, >= 2x reopen" : s <= 75 ? ">= 1x copy" : "";
    printf("%5g%%", s);
    for (int v = 0; v < GRAPH_SVC_NVERSIONS; v++)
      printf(" %18s", cell[v]);
    printf(" %9s %9s  %s\n", xc, xr, target);
  }
  printf("(ms: the mean round, the writer's pwrite not counted; each version's fetch and SSSP until the distances "
         "are in host memory)\n");
}
