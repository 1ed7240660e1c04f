/*
 * host_cache.h - a struct gpufs_cache in host memory, for the host tests.
 *
 * Lays the cache out exactly as the GPU instance does (frames FREE with no
 * chain link, empty buckets, unlocked, frames split evenly over the rings),
 * so that libgpufs/common/cache.h runs unchanged on host threads.
 */
#ifndef GPUFS_TESTS_HOST_CACHE_H
#define GPUFS_TESTS_HOST_CACHE_H

#include <stdint.h>
#include <vector>

#include "libgpufs/common/cache.h"
#include "gpufs/config.h"

struct host_cache {
  std::vector<struct gpufs_frame> frames;
  std::vector<uint8_t> data;
  std::vector<uint32_t> heads;
  std::vector<uint32_t> locks;
  std::vector<struct gpufs_ring> rings;
  std::vector<struct gpufs_ring_stats> stats;
  std::vector<uint32_t> dirty;
  struct gpufs_cache c;

  /* nbuckets 0: the smallest power of two >= nframes, as the library sizes
   * it; a test may ask for fewer to get long chains. */
  host_cache(uint32_t nframes, uint32_t page_size, uint32_t nrings, uint32_t nbuckets = 0)
  {
    if (nbuckets == 0) {
      nbuckets = 1;
      while (nbuckets < nframes) nbuckets <<= 1;
    }
    frames.assign(nframes, gpufs_frame{});
    for (auto &f : frames) {
      f.state = (uint32_t)GPUFS_PG_FREE << GPUFS_PG_SHIFT;
      f.next = GPUFS_NIL;
    }
    data.assign((size_t)nframes * page_size, 0);
    heads.assign(nbuckets, GPUFS_NIL);
    locks.assign(nbuckets, 0u);
    rings.assign(nrings, gpufs_ring{});
    stats.assign(nrings, gpufs_ring_stats{});
    c.dwords = page_size / GPUFS_DIRTY_GRAIN / 32;
    dirty.assign((size_t)nframes * c.dwords, 0u);
    for (uint32_t r = 0; r < nrings; r++) {
      rings[r].dirty_hint = GPUFS_NIL;
      rings[r].first = (uint32_t)((uint64_t)nframes * r / nrings);
      rings[r].count = (uint32_t)((uint64_t)nframes * (r + 1) / nrings) - rings[r].first;
    }
    c.frames = frames.data();
    c.data = data.data();
    c.heads = heads.data();
    c.locks = locks.data();
    c.rings = rings.data();
    c.stats = stats.data();
    c.dirty = dirty.data();
    c.nframes = nframes;
    c.page_size = page_size;
    c.nbuckets = nbuckets;
    c.nrings = nrings;
  }
  host_cache(const host_cache &) = delete;
  host_cache &operator=(const host_cache &) = delete;

  /* relaxed: observation only, safe while other threads run */
  uint32_t word(uint32_t f) { return gpufs_ld_relaxed_u32_dev(&frames[f].state); }
  uint32_t state(uint32_t f) { return gpufs_pg_state(word(f)); }
  uint32_t pins(uint32_t f) { return word(f) & GPUFS_PG_PINS; }
};

#endif /* GPUFS_TESTS_HOST_CACHE_H */
