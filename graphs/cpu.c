/*
 * cpu.c - the cpu version (algo.h): every core over the graph (a file's
 * mapping), the same rounds as the GPU kernels.  bfs, sssp and cc are one
 * min-propagation: the vertices whose value fell in the last round (the
 * frontier) offer value + step to their neighbours (step 1 for bfs, the
 * weight for sssp, 0 for cc), until a round lowers nothing.  Values and
 * frontier flags are shared between the threads as relaxed atomics: a
 * round only needs each lowered value to be seen by the next round, which
 * the join of the threads between rounds orders.
 */
#include "graphs/algo.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "benchlib/util.h"

#define GRAPH_CPU_CHUNK 1024

struct graph_cpu_job {
  const struct graph *g;
  enum graph_algo a;
  uint64_t *val;
  uint8_t *cur, *next;
  int changed;
  float *rank, *contrib;
};

static int graph_cpu_relax(void *arg, uint64_t lo, uint64_t hi)
{
  struct graph_cpu_job *j = (struct graph_cpu_job *)arg;
  const struct graph *g = j->g;
  for (uint64_t v = lo; v < hi; v++) {
    if (!j->cur[v])
      continue;
    const uint64_t base = __atomic_load_n(&j->val[v], __ATOMIC_RELAXED);
    for (uint64_t e = g->offsets[v]; e < g->offsets[v + 1]; e++) {
      const uint32_t w = g->neigh[e];
      const uint64_t c = base + (j->a == GRAPH_CC ? 0 : j->a == GRAPH_BFS || !g->weights ? 1 : g->weights[e]);
      uint64_t old = __atomic_load_n(&j->val[w], __ATOMIC_RELAXED);
      while (c < old)
        if (__atomic_compare_exchange_n(&j->val[w], &old, c, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
          __atomic_store_n(&j->next[w], 1, __ATOMIC_RELAXED);
          __atomic_store_n(&j->changed, 1, __ATOMIC_RELAXED);
          break;
        }
    }
  }
  return 0;
}

static int graph_cpu_contrib(void *arg, uint64_t lo, uint64_t hi)
{
  struct graph_cpu_job *j = (struct graph_cpu_job *)arg;
  for (uint64_t v = lo; v < hi; v++) {
    const uint64_t deg = j->g->offsets[v + 1] - j->g->offsets[v];
    j->contrib[v] = deg ? j->rank[v] / (float)deg : 0.0f;
  }
  return 0;
}

static int graph_cpu_pull(void *arg, uint64_t lo, uint64_t hi)
{
  struct graph_cpu_job *j = (struct graph_cpu_job *)arg;
  const struct graph *g = j->g;
  const float base = (float)((1.0 - GRAPH_PR_DAMPING) / (double)g->n);
  for (uint64_t v = lo; v < hi; v++) {
    float sum = 0;
    for (uint64_t e = g->offsets[v]; e < g->offsets[v + 1]; e++)
      sum += j->contrib[g->neigh[e]];
    j->rank[v] = base + (float)GRAPH_PR_DAMPING * sum;
  }
  return 0;
}

static int graph_cpu_pr(struct graph_cpu_job *j, int threads)
{
  const uint64_t n = j->g->n;
  j->contrib = (float *)malloc((n ? n : 1) * sizeof(float));
  if (!j->contrib)
    return -ENOMEM;
  for (uint64_t v = 0; v < n; v++)
    j->rank[v] = 1.0f / (float)n;
  for (int it = 0; it < GRAPH_PR_ITERS; it++) {
    bench_parallel_for(n, GRAPH_CPU_CHUNK, threads, graph_cpu_contrib, j);
    bench_parallel_for(n, GRAPH_CPU_CHUNK, threads, graph_cpu_pull, j);
  }
  free(j->contrib);
  return 0;
}

static int graph_cpu_min(struct graph_cpu_job *j, uint32_t source, int threads)
{
  const uint64_t n = j->g->n;
  j->cur = (uint8_t *)calloc(n ? n : 1, 1);
  j->next = (uint8_t *)calloc(n ? n : 1, 1);
  if (!j->cur || !j->next) {
    free(j->cur);
    free(j->next);
    return -ENOMEM;
  }
  for (uint64_t v = 0; v < n; v++) {
    j->val[v] = j->a == GRAPH_CC ? v : GRAPH_NONE;
    j->cur[v] = j->a == GRAPH_CC;
  }
  if (j->a != GRAPH_CC && n) {
    j->val[source] = 0;
    j->cur[source] = 1;
  }
  for (j->changed = n > 0; j->changed;) {
    j->changed = 0;
    bench_parallel_for(n, GRAPH_CPU_CHUNK, threads, graph_cpu_relax, j);
    uint8_t *t = j->cur;
    j->cur = j->next;
    j->next = t;
    memset(j->next, 0, n);
  }
  free(j->cur);
  free(j->next);
  return 0;
}

int graph_cpu_run(enum graph_algo a, const struct graph *g, uint32_t source, int threads, void *out)
{
  struct graph_cpu_job j;
  memset(&j, 0, sizeof(j));
  j.g = g;
  j.a = a;
  if (a == GRAPH_PR) {
    j.rank = (float *)out;
    return graph_cpu_pr(&j, threads);
  }
  j.val = (uint64_t *)out;
  return graph_cpu_min(&j, source, threads);
}
