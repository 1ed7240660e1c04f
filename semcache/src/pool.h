/*
 * pool.h - SemCache's device memory sub-allocator (pool.c): first fit over
 * one region the GPU backend reserves at start, so that a device copy is
 * allocated and freed with no CUDA call, under the cache's lock (gpu.c
 * says why that matters).  Its bookkeeping lives on pages of its own
 * (mmap).  Not thread-safe: the cache's lock serializes it.
 */
#ifndef SEMCACHE_POOL_H
#define SEMCACHE_POOL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SC_POOL_ALIGN 256 /* what cuBLAS wants of a matrix's start */

struct sc_pool_extent {
  uintptr_t at;
  size_t bytes;
};

struct sc_pool {
  uintptr_t base;
  size_t size;
  struct sc_pool_extent *free; /* free extents by address, none adjacent */
  int nfree, max;
};

/* A pool over [base, base + size) with room for max free extents.
 * 0 or -ENOMEM. */
int sc_pool_init(struct sc_pool *p, uintptr_t base, size_t size, int max);
void sc_pool_destroy(struct sc_pool *p);

/* bytes (rounded up to SC_POOL_ALIGN) at *at: 0, -ENOMEM when no free
 * extent is large enough, -EINVAL for 0 bytes. */
int sc_pool_alloc(struct sc_pool *p, size_t bytes, uintptr_t *at);

/* Give back what sc_pool_alloc gave for bytes at at (coalesced with its
 * free neighbours).  With no room for a new extent the bytes are lost
 * (never more than max allocations are live in SemCache's use). */
void sc_pool_free(struct sc_pool *p, uintptr_t at, size_t bytes);

#ifdef __cplusplus
}
#endif
#endif /* SEMCACHE_POOL_H */
