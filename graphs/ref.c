/*
 * ref.c - the CPU references and the checks of results (algo.h).
 */
#include "graphs/algo.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const graph_algo_names[GRAPH_NALGOS] = {"bfs", "sssp", "pr", "cc"};

const char *graph_algo_name(enum graph_algo a) { return a < GRAPH_NALGOS ? graph_algo_names[a] : "?"; }

size_t graph_out_bytes(enum graph_algo a) { return a == GRAPH_PR ? sizeof(float) : sizeof(uint64_t); }
size_t graph_ref_bytes(enum graph_algo a) { return a == GRAPH_PR ? sizeof(double) : sizeof(uint64_t); }

int graph_algo_check(enum graph_algo a, const struct graph *g, struct graph_err *why)
{
  if ((a == GRAPH_PR || a == GRAPH_CC) && !(g->flags & GRAPH_SYMMETRIC))
    return graph_errf(why, -EINVAL, "%s needs an undirected (symmetric) graph", graph_algo_name(a));
  return 0;
}

static void graph_ref_bfs(const struct graph *g, uint32_t s, uint64_t *depth)
{
  uint32_t *queue = (uint32_t *)malloc((g->n ? g->n : 1) * sizeof(uint32_t));
  uint64_t head = 0, tail = 0;
  for (uint64_t v = 0; v < g->n; v++)
    depth[v] = GRAPH_NONE;
  depth[s] = 0;
  queue[tail++] = s;
  while (head < tail) {
    const uint32_t u = queue[head++];
    for (uint64_t e = g->offsets[u]; e < g->offsets[u + 1]; e++)
      if (depth[g->neigh[e]] == GRAPH_NONE) {
        depth[g->neigh[e]] = depth[u] + 1;
        queue[tail++] = g->neigh[e];
      }
  }
  free(queue);
}

/* Dijkstra with a binary heap of (distance, vertex), stale entries skipped. */
struct graph_heap_item {
  uint64_t d;
  uint32_t v;
};

static void graph_heap_push(struct graph_heap_item *h, uint64_t *len, uint64_t d, uint32_t v)
{
  uint64_t i = (*len)++;
  while (i > 0 && h[(i - 1) / 2].d > d) {
    h[i] = h[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  h[i].d = d;
  h[i].v = v;
}

static struct graph_heap_item graph_heap_pop(struct graph_heap_item *h, uint64_t *len)
{
  const struct graph_heap_item top = h[0], last = h[--*len];
  uint64_t i = 0;
  for (;;) {
    uint64_t c = 2 * i + 1;
    if (c >= *len)
      break;
    if (c + 1 < *len && h[c + 1].d < h[c].d)
      c++;
    if (h[c].d >= last.d)
      break;
    h[i] = h[c];
    i = c;
  }
  h[i] = last;
  return top;
}

static int graph_ref_sssp(const struct graph *g, uint32_t s, uint64_t *dist)
{
  /* each edge pushes at most once: m + 1 entries suffice */
  struct graph_heap_item *h = (struct graph_heap_item *)malloc((g->m + 1) * sizeof(*h));
  uint64_t len = 0;
  if (!h)
    return -ENOMEM;
  for (uint64_t v = 0; v < g->n; v++)
    dist[v] = GRAPH_NONE;
  dist[s] = 0;
  graph_heap_push(h, &len, 0, s);
  while (len) {
    const struct graph_heap_item it = graph_heap_pop(h, &len);
    if (it.d != dist[it.v])
      continue;
    for (uint64_t e = g->offsets[it.v]; e < g->offsets[it.v + 1]; e++) {
      const uint64_t nd = it.d + (g->weights ? g->weights[e] : 1);
      if (nd < dist[g->neigh[e]]) {
        dist[g->neigh[e]] = nd;
        graph_heap_push(h, &len, nd, g->neigh[e]);
      }
    }
  }
  free(h);
  return 0;
}

static int graph_ref_pr(const struct graph *g, double *rank)
{
  double *contrib = (double *)malloc((g->n ? g->n : 1) * sizeof(double));
  if (!contrib)
    return -ENOMEM;
  for (uint64_t v = 0; v < g->n; v++)
    rank[v] = 1.0 / (double)g->n;
  for (int it = 0; it < GRAPH_PR_ITERS; it++) {
    for (uint64_t v = 0; v < g->n; v++) {
      const uint64_t deg = g->offsets[v + 1] - g->offsets[v];
      contrib[v] = deg ? rank[v] / (double)deg : 0.0;
    }
    for (uint64_t v = 0; v < g->n; v++) {
      double sum = 0;
      for (uint64_t e = g->offsets[v]; e < g->offsets[v + 1]; e++)
        sum += contrib[g->neigh[e]];
      rank[v] = (1.0 - GRAPH_PR_DAMPING) / (double)g->n + GRAPH_PR_DAMPING * sum;
    }
  }
  free(contrib);
  return 0;
}

static uint64_t graph_find(uint64_t *parent, uint64_t v)
{
  while (parent[v] != v) {
    parent[v] = parent[parent[v]];
    v = parent[v];
  }
  return v;
}

/* union-find, the smaller root kept: each root is its component's smallest vertex */
static void graph_ref_cc(const struct graph *g, uint64_t *label)
{
  for (uint64_t v = 0; v < g->n; v++)
    label[v] = v;
  for (uint64_t u = 0; u < g->n; u++)
    for (uint64_t e = g->offsets[u]; e < g->offsets[u + 1]; e++) {
      const uint64_t a = graph_find(label, u), b = graph_find(label, g->neigh[e]);
      if (a != b)
        label[a > b ? a : b] = a < b ? a : b;
    }
  for (uint64_t v = 0; v < g->n; v++)
    label[v] = graph_find(label, v);
}

int graph_reference(enum graph_algo a, const struct graph *g, uint32_t source, void *out)
{
  switch (a) {
  case GRAPH_BFS: graph_ref_bfs(g, source, (uint64_t *)out); return 0;
  case GRAPH_SSSP: return graph_ref_sssp(g, source, (uint64_t *)out);
  case GRAPH_PR: return graph_ref_pr(g, (double *)out);
  case GRAPH_CC: graph_ref_cc(g, (uint64_t *)out); return 0;
  default: return -EINVAL;
  }
}

static int graph_cmp_u64(const void *x, const void *y)
{
  const uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
  return a < b ? -1 : a > b;
}

/* Same partition: every vertex of a reference component has the label of
 * the component's smallest vertex (the reference's label), and no two
 * components share a label. */
static int graph_verify_cc(const struct graph *g, const uint64_t *ref, const uint64_t *got, struct graph_err *why)
{
  for (uint64_t v = 0; v < g->n; v++)
    if (got[v] != got[ref[v]])
      return graph_errf(why, -EIO, "cc: vertices %" PRIu64 " and %" PRIu64 " share a component but got labels %"
                        PRIu64 " and %" PRIu64, ref[v], v, got[ref[v]], got[v]);
  uint64_t *roots = (uint64_t *)malloc((g->n ? g->n : 1) * 8), k = 0;
  int rc = 0;
  if (!roots)
    return graph_errf(why, -ENOMEM, "no memory to verify");
  for (uint64_t v = 0; v < g->n; v++)
    if (ref[v] == v)
      roots[k++] = got[v];
  qsort(roots, k, 8, graph_cmp_u64);
  for (uint64_t i = 1; i < k && !rc; i++)
    if (roots[i] == roots[i - 1])
      rc = graph_errf(why, -EIO, "cc: two components share the label %" PRIu64, roots[i]);
  free(roots);
  return rc;
}

int graph_verify(enum graph_algo a, const struct graph *g, const void *ref, const void *got, struct graph_err *why)
{
  if (a == GRAPH_CC)
    return graph_verify_cc(g, (const uint64_t *)ref, (const uint64_t *)got, why);
  for (uint64_t v = 0; v < g->n; v++) {
    if (a == GRAPH_PR) {
      const double r = ((const double *)ref)[v], x = ((const float *)got)[v];
      if (!(fabs(x - r) <= GRAPH_PR_TOLERANCE * r))
        return graph_errf(why, -EIO, "pr: vertex %" PRIu64 ": %.9g, the reference %.9g", v, x, r);
    } else if (((const uint64_t *)ref)[v] != ((const uint64_t *)got)[v]) {
      return graph_errf(why, -EIO, "%s: vertex %" PRIu64 ": %" PRIu64 ", the reference %" PRIu64,
                        graph_algo_name(a), v, ((const uint64_t *)got)[v], ((const uint64_t *)ref)[v]);
    }
  }
  return 0;
}
