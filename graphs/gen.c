/*
 * gen.c - the Kronecker and uniform generators and their input files
 * (gen.h).
 */
#include "graphs/gen.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "benchlib/util.h"

#define GRAPH_GEN_CHUNK (1ull << 16)

/* splitmix64 of (a, b): the generators' only source of randomness */
static uint64_t graph_hash(uint64_t a, uint64_t b)
{
  uint64_t z = a + (b + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* a uniform double in [0, 1) from 53 bits of h */
static double graph_unit(uint64_t h) { return (double)(h >> 11) * (1.0 / 9007199254740992.0); }

uint32_t graph_kron_perm(uint64_t x, unsigned scale, uint64_t seed)
{
  /* odd multipliers, additions and x ^= x >> k are each a bijection mod 2^scale */
  const uint64_t mask = scale >= 64 ? ~0ull : (1ull << scale) - 1;
  const uint64_t k1 = graph_hash(seed, 0xF00D) | 1, k2 = graph_hash(seed, 0xBEEF) | 1;
  const unsigned s = scale / 2 ? scale / 2 : 1;
  x = (x * k1 + graph_hash(seed, 7)) & mask;
  x ^= x >> s;
  x = (x * k2) & mask;
  x ^= x >> s;
  return (uint32_t)x;
}

struct graph_gen_job {
  const struct graph_gen *p;
  struct graph_edges *e;
};

static int graph_gen_range(void *arg, uint64_t lo, uint64_t hi)
{
  const struct graph_gen_job *j = (const struct graph_gen_job *)arg;
  const struct graph_gen *p = j->p;
  const uint64_t seed = graph_hash(p->seed, p->kind);
  for (uint64_t i = lo; i < hi; i++) {
    uint64_t u = 0, v = 0;
    if (p->kind == GRAPH_GEN_KRONECKER) {
      for (unsigned b = 0; b < p->size; b++) {
        const double r = graph_unit(graph_hash(seed ^ i, b));
        const int ubit = r >= GRAPH_KRON_A + GRAPH_KRON_B; /* quadrants C and D */
        const int vbit = (r >= GRAPH_KRON_A && r < GRAPH_KRON_A + GRAPH_KRON_B) ||
                         r >= GRAPH_KRON_A + GRAPH_KRON_B + GRAPH_KRON_C; /* B and D */
        u |= (uint64_t)ubit << b;
        v |= (uint64_t)vbit << b;
      }
      u = graph_kron_perm(u, (unsigned)p->size, seed);
      v = graph_kron_perm(v, (unsigned)p->size, seed);
    } else {
      u = graph_hash(seed, 2 * i) % p->size;
      v = graph_hash(seed, 2 * i + 1) % p->size;
    }
    j->e->src[i] = (uint32_t)u;
    j->e->dst[i] = (uint32_t)v;
    if (j->e->w)
      j->e->w[i] = 1 + (uint32_t)(graph_hash(seed ^ 0x5EED, i) % GRAPH_WEIGHT_MAX);
  }
  return 0;
}

int graph_gen_edges(const struct graph_gen *p, struct graph_edges *e, struct graph_err *err)
{
  uint64_t n;
  memset(e, 0, sizeof(*e));
  if (p->kind == GRAPH_GEN_KRONECKER) {
    if (p->size < 1 || p->size > 31)
      return graph_errf(err, -EINVAL, "Kronecker scale %" PRIu64 ": from 1 to 31", p->size);
    n = 1ull << p->size;
  } else if (p->kind == GRAPH_GEN_UNIFORM) {
    if (p->size < 1 || p->size > GRAPH_MAX_VERTICES)
      return graph_errf(err, -EINVAL, "uniform graph of %" PRIu64 " vertices: from 1 to %llu", p->size,
                        GRAPH_MAX_VERTICES);
    n = p->size;
  } else {
    return graph_errf(err, -EINVAL, "generator %u: not Kronecker or uniform", p->kind);
  }
  const uint64_t m = n * p->edge_factor;
  if (graph_edges_alloc(e, n, m, p->weighted) != 0)
    return graph_errf(err, -ENOMEM, "no memory for %" PRIu64 " edges", m);
  e->m = m;
  struct graph_gen_job j = {p, e};
  bench_parallel_for(m, GRAPH_GEN_CHUNK, 0, graph_gen_range, &j);
  return 0;
}

int graph_generate(const struct graph_gen *p, struct graph *g, struct graph_err *err)
{
  struct graph_edges e;
  int rc = graph_gen_edges(p, &e, err);
  if (rc)
    return rc;
  rc = graph_build(&e, 1, g, err);
  graph_edges_free(&e);
  return rc;
}

void graph_gen_name(const struct graph_gen *p, char *buf, size_t len)
{
  if (p->kind == GRAPH_GEN_KRONECKER)
    snprintf(buf, len, "kron%" PRIu64 "-%" PRIu64, p->size, p->edge_factor);
  else if (p->kind == GRAPH_GEN_UNIFORM)
    snprintf(buf, len, "uniform%" PRIu64 "-%" PRIu64, p->size, p->edge_factor);
  else
    snprintf(buf, len, "graph");
}

/* 1 when the file at path is p's graph, whole and unchanged. */
static int graph_is_current(const char *path, const struct graph_gen *p)
{
  struct graph_header h;
  struct graph g;
  if (graph_read_header(path, &h, NULL) != 0 || memcmp(&h.gen, p, sizeof(*p)) != 0)
    return 0;
  if (graph_open(path, 1, &g, NULL, NULL) != 0)
    return 0;
  graph_free(&g);
  return 1;
}

int graph_ensure(const char *path, const struct graph_gen *p, int regen, int *made, struct graph_err *err)
{
  struct graph g;
  *made = 0;
  if (!regen && graph_is_current(path, p))
    return 0;
  int rc = graph_generate(p, &g, err);
  if (rc)
    return rc;
  rc = graph_write(&g, p, path, err);
  graph_free(&g);
  *made = rc == 0;
  return rc;
}
