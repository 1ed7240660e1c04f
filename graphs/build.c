/*
 * build.c - edge list -> CSR (build.h): count the degrees, place the
 * edges by a prefix sum, sort and deduplicate each vertex's list, then
 * compact.  Each pass runs on several threads over ranges of edges or
 * vertices; the counters they share are relaxed atomics (only their final
 * values matter, read after the threads are joined).
 */
#include "graphs/build.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "benchlib/util.h"

#define GRAPH_EDGE_CHUNK (1ull << 16)
#define GRAPH_VERTEX_CHUNK (1ull << 12)

int graph_edges_alloc(struct graph_edges *e, uint64_t n, uint64_t cap, int weighted)
{
  memset(e, 0, sizeof(*e));
  e->n = n;
  e->cap = cap ? cap : 16;
  e->src = (uint32_t *)malloc(e->cap * 4);
  e->dst = (uint32_t *)malloc(e->cap * 4);
  e->w = weighted ? (uint32_t *)malloc(e->cap * 4) : NULL;
  if (!e->src || !e->dst || (weighted && !e->w)) {
    graph_edges_free(e);
    return -ENOMEM;
  }
  return 0;
}

static int graph_grow(uint32_t **a, uint64_t cap)
{
  uint32_t *p = (uint32_t *)realloc(*a, cap * 4);
  if (!p)
    return -ENOMEM;
  *a = p;
  return 0;
}

int graph_edges_push(struct graph_edges *e, uint32_t u, uint32_t v, uint32_t w)
{
  if (e->m == e->cap) {
    const uint64_t cap = e->cap * 2;
    if (graph_grow(&e->src, cap) || graph_grow(&e->dst, cap) || (e->w && graph_grow(&e->w, cap)))
      return -ENOMEM;
    e->cap = cap;
  }
  e->src[e->m] = u;
  e->dst[e->m] = v;
  if (e->w)
    e->w[e->m] = w;
  e->m++;
  return 0;
}

void graph_edges_free(struct graph_edges *e)
{
  free(e->src);
  free(e->dst);
  free(e->w);
  memset(e, 0, sizeof(*e));
}

struct graph_build_job {
  const struct graph_edges *e;
  int symmetric;
  uint64_t *deg;    /* degrees, then the next free slot of each vertex */
  uint64_t *start;  /* n + 1: where each vertex's list begins in pairs */
  uint64_t *pairs;  /* (neighbour << 32 | weight), by source */
  uint64_t *kept;   /* per vertex: entries left after deduplication */
};

static int graph_count(void *arg, uint64_t lo, uint64_t hi)
{
  struct graph_build_job *j = (struct graph_build_job *)arg;
  for (uint64_t i = lo; i < hi; i++) {
    const uint32_t u = j->e->src[i], v = j->e->dst[i];
    if (u == v)
      continue;
    __atomic_fetch_add(&j->deg[u], 1, __ATOMIC_RELAXED);
    if (j->symmetric)
      __atomic_fetch_add(&j->deg[v], 1, __ATOMIC_RELAXED);
  }
  return 0;
}

static int graph_place(void *arg, uint64_t lo, uint64_t hi)
{
  struct graph_build_job *j = (struct graph_build_job *)arg;
  for (uint64_t i = lo; i < hi; i++) {
    const uint32_t u = j->e->src[i], v = j->e->dst[i], w = j->e->w ? j->e->w[i] : 0;
    if (u == v)
      continue;
    j->pairs[__atomic_fetch_add(&j->deg[u], 1, __ATOMIC_RELAXED)] = (uint64_t)v << 32 | w;
    if (j->symmetric)
      j->pairs[__atomic_fetch_add(&j->deg[v], 1, __ATOMIC_RELAXED)] = (uint64_t)u << 32 | w;
  }
  return 0;
}

static int graph_cmp_u64(const void *a, const void *b)
{
  const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Sort each list; keep the first of each neighbour (its smallest weight). */
static int graph_dedup(void *arg, uint64_t lo, uint64_t hi)
{
  struct graph_build_job *j = (struct graph_build_job *)arg;
  for (uint64_t v = lo; v < hi; v++) {
    uint64_t *p = j->pairs + j->start[v];
    const uint64_t len = j->start[v + 1] - j->start[v];
    qsort(p, len, sizeof(uint64_t), graph_cmp_u64);
    uint64_t k = 0;
    for (uint64_t i = 0; i < len; i++)
      if (k == 0 || p[i] >> 32 != p[k - 1] >> 32)
        p[k++] = p[i];
    j->kept[v] = k;
  }
  return 0;
}

struct graph_fill_job {
  const struct graph_build_job *b;
  uint64_t *offsets;
  uint32_t *neigh, *weights;
};

static int graph_fill(void *arg, uint64_t lo, uint64_t hi)
{
  struct graph_fill_job *f = (struct graph_fill_job *)arg;
  for (uint64_t v = lo; v < hi; v++) {
    const uint64_t *p = f->b->pairs + f->b->start[v];
    for (uint64_t i = 0, o = f->offsets[v]; i < f->b->kept[v]; i++, o++) {
      f->neigh[o] = (uint32_t)(p[i] >> 32);
      if (f->weights)
        f->weights[o] = (uint32_t)p[i];
    }
  }
  return 0;
}

static int graph_check_edges(const struct graph_edges *e, struct graph_err *err)
{
  if (e->n > GRAPH_MAX_VERTICES)
    return graph_errf(err, -EINVAL, "%" PRIu64 " vertices: at most %llu", e->n, GRAPH_MAX_VERTICES);
  for (uint64_t i = 0; i < e->m; i++)
    if (e->src[i] >= e->n || e->dst[i] >= e->n)
      return graph_errf(err, -EINVAL, "edge %" PRIu64 " (%u, %u): a vertex past %" PRIu64, i,
                        e->src[i], e->dst[i], e->n);
  return 0;
}

int graph_build(const struct graph_edges *e, int symmetric, struct graph *g, struct graph_err *err)
{
  struct graph_build_job j = {e, symmetric, NULL, NULL, NULL, NULL};
  const uint64_t n = e->n;
  int rc = graph_check_edges(e, err);
  memset(g, 0, sizeof(*g));
  if (rc)
    return rc;
  j.deg = (uint64_t *)calloc(n + 1, 8);
  j.start = (uint64_t *)malloc((n + 1) * 8);
  j.kept = (uint64_t *)malloc((n + 1) * 8);
  uint64_t *offsets = (uint64_t *)malloc((n + 1) * 8);
  if (!j.deg || !j.start || !j.kept || !offsets) {
    rc = graph_errf(err, -ENOMEM, "no memory for %" PRIu64 " vertices", n);
    goto out;
  }
  bench_parallel_for(e->m, GRAPH_EDGE_CHUNK, 0, graph_count, &j);
  j.start[0] = 0;
  for (uint64_t v = 0; v < n; v++) {
    j.start[v + 1] = j.start[v] + j.deg[v];
    j.deg[v] = j.start[v]; /* now the next free slot */
  }
  j.pairs = (uint64_t *)malloc((j.start[n] ? j.start[n] : 1) * 8);
  if (!j.pairs) {
    rc = graph_errf(err, -ENOMEM, "no memory for %" PRIu64 " edges", j.start[n]);
    goto out;
  }
  bench_parallel_for(e->m, GRAPH_EDGE_CHUNK, 0, graph_place, &j);
  bench_parallel_for(n, GRAPH_VERTEX_CHUNK, 0, graph_dedup, &j);
  offsets[0] = 0;
  for (uint64_t v = 0; v < n; v++)
    offsets[v + 1] = offsets[v] + j.kept[v];
  const uint64_t m = offsets[n];
  struct graph_fill_job f = {&j, offsets, (uint32_t *)malloc((m ? m : 1) * 4),
                             e->w ? (uint32_t *)malloc((m ? m : 1) * 4) : NULL};
  g->own[0] = offsets;
  g->own[1] = f.neigh;
  g->own[2] = f.weights;
  offsets = NULL;
  if (!f.neigh || (e->w && !f.weights)) {
    graph_free(g);
    rc = graph_errf(err, -ENOMEM, "no memory for %" PRIu64 " edges", m);
    goto out;
  }
  bench_parallel_for(n, GRAPH_VERTEX_CHUNK, 0, graph_fill, &f);
  g->n = n;
  g->m = m;
  g->flags = (symmetric ? GRAPH_SYMMETRIC : 0) | (e->w ? GRAPH_WEIGHTED : 0);
  g->offsets = (const uint64_t *)g->own[0];
  g->neigh = f.neigh;
  g->weights = f.weights;
out:
  free(offsets);
  free(j.pairs);
  free(j.kept);
  free(j.start);
  free(j.deg);
  return rc;
}
