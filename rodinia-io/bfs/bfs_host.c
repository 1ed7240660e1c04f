/*
 * bfs_host.c - bfs's sizes, graph generator, CPU reference and check
 * (plain C; the GPU versions are in bfs.cu).
 *
 * The generator builds the CSR graph on the host's threads in four passes
 * over the nodes, each one or two parallel loops (the joins order them):
 * count the degrees, prefix-sum them into starts, fill the lists, sort the
 * incoming part of each list.  Threads meet only on the atomic degree
 * counts and slot claims; the counts are order-free sums and the sort
 * undoes the claims' order, so the bytes depend on the seed and n alone,
 * not on the thread count or timing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "benchlib/util.h"
#include "rodinia-io/bfs/bfs.h"

uint64_t bfs_picks(uint64_t seed, uint64_t v)
{
  return 2 + rio_rand(seed, 0, v) % 3;
}

uint64_t bfs_target(uint64_t seed, uint64_t n, uint64_t v, uint64_t m)
{
  return rio_rand(seed, 1, v * 4 + m) % n;
}

/* ---------------- sizes ---------------- */

struct bfs_count {
  uint64_t seed;
  uint64_t picks; /* summed atomically by the slices */
};

static int bfs_count_picks(void *arg, uint64_t lo, uint64_t hi)
{
  struct bfs_count *c = arg;
  uint64_t sum = 0;
  for (uint64_t v = lo; v < hi; v++)
    sum += bfs_picks(c->seed, v);
  __atomic_fetch_add(&c->picks, sum, __ATOMIC_RELAXED);
  return 0;
}

int bfs_setup(struct rio_run *run)
{
  if (!(run->scale * (double)BFS_FULL_NODES >= (double)BFS_MIN_NODES))
    return rio_fail(run, -EINVAL, "bfs: scale %g gives fewer than %llu nodes", run->scale,
                    BFS_MIN_NODES);
  struct bfs_state *st = calloc(1, sizeof *st);
  if (!st)
    return rio_fail(run, -ENOMEM, "bfs: no memory for the state");
  run->state = st;
  st->n = rio_scaled(run, BFS_FULL_NODES, BFS_MIN_NODES);
  struct bfs_count c = {run->seed, 0};
  int rc = rio_parallel_for(st->n, bfs_count_picks, &c);
  if (rc)
    return rio_fail(run, rc, "bfs: counting the picks failed");
  /* every pick is stored from both ends */
  st->n_edges = 2 * c.picks;
  run->ninputs = 2;
  strcpy(run->in[0].name, "nodes");
  run->in[0].size = st->n * sizeof(struct bfs_node);
  strcpy(run->in[1].name, "edges");
  run->in[1].size = st->n_edges * sizeof(int64_t);
  st->want = malloc(st->n * sizeof(int32_t));
  st->got = malloc(st->n * sizeof(int32_t));
  if (!st->want || !st->got)
    return rio_fail(run, -ENOMEM, "bfs: no memory for the costs");
  return 0;
}

/* ---------------- the generator ---------------- */

struct bfs_build {
  uint64_t seed, n;
  struct bfs_node *nodes;
  int64_t *edges;
};

/* Pass 1: degree = own picks, then += 1 for every pick of this node by
 * another (atomic: any slice may pick it). */
static int bfs_own_degrees(void *arg, uint64_t lo, uint64_t hi)
{
  struct bfs_build *b = arg;
  for (uint64_t v = lo; v < hi; v++)
    b->nodes[v].degree = (int64_t)bfs_picks(b->seed, v);
  return 0;
}

static int bfs_incoming_degrees(void *arg, uint64_t lo, uint64_t hi)
{
  struct bfs_build *b = arg;
  for (uint64_t v = lo; v < hi; v++) {
    const uint64_t k = bfs_picks(b->seed, v);
    for (uint64_t m = 0; m < k; m++)
      __atomic_fetch_add(&b->nodes[bfs_target(b->seed, b->n, v, m)].degree, 1, __ATOMIC_RELAXED);
  }
  return 0;
}

/* Pass 2, the prefix sum, on fixed slices so that phase 2 knows where each
 * slice begins: phase 1 sums each slice, phase 2 writes the starts and
 * resets each degree to the node's own picks, the fill cursor of pass 3. */
#define BFS_MAX_SLICES 64

struct bfs_scan {
  struct bfs_build *b;
  int slices;
  int64_t base[BFS_MAX_SLICES];
};

static void bfs_slice(const struct bfs_scan *s, int t, uint64_t *lo, uint64_t *hi)
{
  *lo = s->b->n * (uint64_t)t / (uint64_t)s->slices;
  *hi = s->b->n * (uint64_t)(t + 1) / (uint64_t)s->slices;
}

static int bfs_scan_sum(void *arg, int t)
{
  struct bfs_scan *s = arg;
  uint64_t lo, hi;
  int64_t sum = 0;
  bfs_slice(s, t, &lo, &hi);
  for (uint64_t v = lo; v < hi; v++)
    sum += s->b->nodes[v].degree;
  s->base[t] = sum;
  return 0;
}

static int bfs_scan_starts(void *arg, int t)
{
  struct bfs_scan *s = arg;
  struct bfs_build *b = s->b;
  uint64_t lo, hi;
  int64_t at = s->base[t];
  bfs_slice(s, t, &lo, &hi);
  for (uint64_t v = lo; v < hi; v++) {
    b->nodes[v].start = at;
    at += b->nodes[v].degree;
    b->nodes[v].degree = (int64_t)bfs_picks(b->seed, v);
  }
  return 0;
}

/* Pass 3: own picks at the head of the list in m order; each pick also
 * claims the next slot of its target's list (atomic), so incoming edges
 * land in an order that depends on timing until pass 4.  Ends with every
 * degree back at its full value. */
static int bfs_fill(void *arg, uint64_t lo, uint64_t hi)
{
  struct bfs_build *b = arg;
  for (uint64_t v = lo; v < hi; v++) {
    const uint64_t k = bfs_picks(b->seed, v);
    const int64_t start = b->nodes[v].start;
    for (uint64_t m = 0; m < k; m++) {
      const uint64_t t = bfs_target(b->seed, b->n, v, m);
      b->edges[start + (int64_t)m] = (int64_t)t;
      const int64_t slot = __atomic_fetch_add(&b->nodes[t].degree, 1, __ATOMIC_RELAXED);
      b->edges[b->nodes[t].start + slot] = (int64_t)v;
    }
  }
  return 0;
}

/* Pass 4: incoming edges by ascending source.  Insertion sort: a node gets
 * about 3 incoming edges on average and rarely more than 20. */
static int bfs_sort_incoming(void *arg, uint64_t lo, uint64_t hi)
{
  struct bfs_build *b = arg;
  for (uint64_t v = lo; v < hi; v++) {
    const int64_t k = (int64_t)bfs_picks(b->seed, v);
    int64_t *in = b->edges + b->nodes[v].start + k;
    const int64_t count = b->nodes[v].degree - k;
    for (int64_t j = 1; j < count; j++) {
      const int64_t x = in[j];
      int64_t i = j;
      for (; i > 0 && in[i - 1] > x; i--)
        in[i] = in[i - 1];
      in[i] = x;
    }
  }
  return 0;
}

static int bfs_build_graph(struct bfs_build *b)
{
  struct bfs_scan s = {.b = b};
  int rc;
  if ((rc = rio_parallel_for(b->n, bfs_own_degrees, b)) != 0 ||
      (rc = rio_parallel_for(b->n, bfs_incoming_degrees, b)) != 0)
    return rc;
  s.slices = bench_host_threads();
  if (s.slices > BFS_MAX_SLICES)
    s.slices = BFS_MAX_SLICES;
  if ((rc = bench_parallel(s.slices, bfs_scan_sum, &s)) != 0)
    return rc;
  int64_t at = 0;
  for (int t = 0; t < s.slices; t++) {
    const int64_t sum = s.base[t];
    s.base[t] = at;
    at += sum;
  }
  if ((rc = bench_parallel(s.slices, bfs_scan_starts, &s)) != 0 ||
      (rc = rio_parallel_for(b->n, bfs_fill, b)) != 0)
    return rc;
  return rio_parallel_for(b->n, bfs_sort_incoming, b);
}

struct bfs_copy {
  int64_t *dst;
  const int64_t *src;
};

static int bfs_copy_words(void *arg, uint64_t lo, uint64_t hi)
{
  struct bfs_copy *c = arg;
  memcpy(c->dst + lo, c->src + lo, (hi - lo) * sizeof(int64_t));
  return 0;
}

int bfs_generate(struct rio_run *run, int i, void *buf)
{
  struct bfs_state *st = run->state;
  if (i != 0 && i != 1)
    return rio_fail(run, -EINVAL, "bfs: no input %d", i);
  if (st->cached && st->cached_input == i) {
    struct bfs_copy c = {buf, st->cached};
    const int rc = rio_parallel_for(run->in[i].size / sizeof(int64_t), bfs_copy_words, &c);
    free(st->cached);
    st->cached = NULL;
    return rc ? rio_fail(run, rc, "bfs: copying the %s failed", run->in[i].name) : 0;
  }
  /* a new build: the cache, if any, holds this same file again or is
   * about to be replaced by an identical one */
  free(st->cached);
  st->cached = NULL;
  void *other = malloc(run->in[1 - i].size);
  if (!other)
    return rio_fail(run, -ENOMEM, "bfs: no memory for the %s", run->in[1 - i].name);
  struct bfs_build b = {run->seed, st->n, i == 0 ? buf : other, i == 1 ? buf : other};
  const int rc = bfs_build_graph(&b);
  if (rc) {
    free(other);
    return rio_fail(run, rc, "bfs: building the graph failed");
  }
  st->cached = other;
  st->cached_input = 1 - i;
  return 0;
}

/* ---------------- reference and check ---------------- */

/* Queue places between the prefetch stages: enough to cover a miss. */
#define BFS_AHEAD 8

static int bfs_record_ok(struct bfs_node nd, uint64_t n_edges)
{
  return nd.start >= 0 && nd.degree >= 0 && (uint64_t)nd.start <= n_edges &&
         (uint64_t)nd.degree <= n_edges - (uint64_t)nd.start;
}

int bfs_cpu(const struct bfs_node *nodes, uint64_t n, const int64_t *edges, uint64_t n_edges,
            uint64_t source, int32_t *cost)
{
  uint64_t *queue = malloc(n * sizeof *queue);
  if (!queue)
    return -ENOMEM;
  for (uint64_t v = 0; v < n; v++)
    cost[v] = -1;
  uint64_t head = 0, tail = 0;
  cost[source] = 0;
  queue[tail++] = source;
  while (head < tail) {
    /* the loads are random and miss the caches: ask ahead in the queue
     * for a node's record, then (once it has come) its list, then (once
     * that has come) the costs of its neighbours */
    if (head + 3 * BFS_AHEAD < tail)
      __builtin_prefetch(&nodes[queue[head + 3 * BFS_AHEAD]]);
    if (head + 2 * BFS_AHEAD < tail) {
      const struct bfs_node ahead = nodes[queue[head + 2 * BFS_AHEAD]];
      if (bfs_record_ok(ahead, n_edges))
        __builtin_prefetch(&edges[ahead.start]);
    }
    if (head + BFS_AHEAD < tail) {
      const struct bfs_node ahead = nodes[queue[head + BFS_AHEAD]];
      if (bfs_record_ok(ahead, n_edges))
        for (int64_t e = ahead.start; e < ahead.start + ahead.degree; e++)
          __builtin_prefetch(&cost[edges[e]]);
    }
    const uint64_t v = queue[head++];
    const struct bfs_node nd = nodes[v];
    /* the records of reached nodes are the ones the GPU reads too */
    if (!bfs_record_ok(nd, n_edges)) {
      free(queue);
      return -EINVAL;
    }
    for (int64_t e = nd.start; e < nd.start + nd.degree; e++) {
      const int64_t w = edges[e];
      if (w < 0 || (uint64_t)w >= n) {
        free(queue);
        return -EINVAL;
      }
      if (cost[w] < 0) {
        cost[w] = cost[v] + 1;
        queue[tail++] = (uint64_t)w;
      }
    }
  }
  free(queue);
  return 0;
}

int bfs_reference(struct rio_run *run)
{
  struct bfs_state *st = run->state;
  const int rc = bfs_cpu(run->host_in[0], st->n, run->host_in[1],
                         run->in[1].size / sizeof(int64_t), BFS_SOURCE, st->want);
  if (rc == -EINVAL)
    return rio_fail(run, rc, "bfs: the graph has a record or an edge out of range");
  return rc ? rio_fail(run, rc, "bfs: no memory for the BFS queue") : 0;
}

int bfs_verify(struct rio_run *run)
{
  struct bfs_state *st = run->state;
  return rio_check_i32(run, "cost", st->got, st->want, st->n, 0);
}

void bfs_teardown(struct rio_run *run)
{
  struct bfs_state *st = run->state;
  if (!st)
    return;
  free(st->want);
  free(st->got);
  free(st->cached);
  free(st);
  run->state = NULL;
}
