/*
 * pool.c - SemCache's device memory sub-allocator (pool.h).
 */
#include "pool.h"

#include <errno.h>
#include <string.h>

#include "protect.h"

static size_t round_up(size_t bytes)
{
  return (bytes + SC_POOL_ALIGN - 1) / SC_POOL_ALIGN * SC_POOL_ALIGN;
}

int sc_pool_init(struct sc_pool *p, uintptr_t base, size_t size, int max)
{
  memset(p, 0, sizeof(*p));
  p->free = sc_pages_alloc((size_t)max * sizeof(*p->free));
  if (!p->free) return -ENOMEM;
  p->base = base;
  p->size = size;
  p->max = max;
  p->free[0] = (struct sc_pool_extent){base, size};
  p->nfree = size ? 1 : 0;
  return 0;
}

void sc_pool_destroy(struct sc_pool *p)
{
  sc_pages_free(p->free);
  memset(p, 0, sizeof(*p));
}

int sc_pool_alloc(struct sc_pool *p, size_t bytes, uintptr_t *at)
{
  if (bytes == 0) return -EINVAL;
  bytes = round_up(bytes);
  for (int i = 0; i < p->nfree; i++) {
    struct sc_pool_extent *e = &p->free[i];
    if (e->bytes < bytes) continue;
    *at = e->at;
    e->at += bytes;
    e->bytes -= bytes;
    if (e->bytes == 0) {
      memmove(e, e + 1, (size_t)(p->nfree - i - 1) * sizeof(*e));
      p->nfree--;
    }
    return 0;
  }
  return -ENOMEM;
}

void sc_pool_free(struct sc_pool *p, uintptr_t at, size_t bytes)
{
  bytes = round_up(bytes);
  int i = 0;
  while (i < p->nfree && p->free[i].at < at) i++;
  /* [i - 1] ends at or before at; [i] starts after it */
  const int join_prev = i > 0 && p->free[i - 1].at + p->free[i - 1].bytes == at;
  const int join_next = i < p->nfree && at + bytes == p->free[i].at;
  if (join_prev && join_next) {
    p->free[i - 1].bytes += bytes + p->free[i].bytes;
    memmove(&p->free[i], &p->free[i + 1], (size_t)(p->nfree - i - 1) * sizeof(p->free[0]));
    p->nfree--;
  } else if (join_prev) {
    p->free[i - 1].bytes += bytes;
  } else if (join_next) {
    p->free[i].at = at;
    p->free[i].bytes += bytes;
  } else if (p->nfree < p->max) {
    memmove(&p->free[i + 1], &p->free[i], (size_t)(p->nfree - i) * sizeof(p->free[0]));
    p->free[i] = (struct sc_pool_extent){at, bytes};
    p->nfree++;
  }
}
