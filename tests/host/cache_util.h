/*
 * cache_util.h - what the cache tests share (cache_test.cpp: the
 * single-threaded semantics; cache_stress_test.cpp: many threads): the
 * bytes a page of (key, version) holds, filling and checking a frame, and
 * the hash chain of a key.
 */
#ifndef GPUFS_TESTS_HOST_CACHE_UTIL_H
#define GPUFS_TESTS_HOST_CACHE_UTIL_H

#include <stdint.h>

#include <vector>

#include "tests/host/host_cache.h"
#include "tests/host/stress_util.h"

namespace cache_test {

using namespace gpufs_test;


inline constexpr uint32_t kPage = 64;
inline constexpr int32_t kLoadErr = -GPUFS_EIO;

/* The bytes a page of (key, version) holds: word w = seed ^ w.  Another key
 * or another version of the same key gives other words. */
inline uint64_t page_seed(uint64_t key, uint32_t version)
{
  return mix64(key ^ ((uint64_t)version << 52) ^ ((uint64_t)version >> 12));
}

/* Valid bytes of the page: a multiple of 8 in [page - 24, page]. */
inline uint32_t page_len(uint32_t page_size, uint64_t key, uint32_t version)
{
  return page_size - 8u * (uint32_t)(page_seed(key, version) % 4);
}

/* Word w of the whole frame: the page's words below len, and a filler that
 * also depends on (key, version) above it, so every byte is checked. */
inline uint64_t frame_word(uint64_t seed, uint32_t len, uint32_t w)
{
  return w < len / 8 ? seed ^ w : ~(seed ^ w);
}

inline void fill_page(gpufs_cache *c, uint32_t f, uint64_t key, uint32_t version, uint32_t len)
{
  uint64_t seed = page_seed(key, version);
  uint8_t *d = gpufs_frame_data(c, f);
  for (uint32_t w = 0; w < c->page_size / 8; w++) {
    uint64_t v = frame_word(seed, len, w);
    memcpy(d + 8 * w, &v, 8);
  }
}

/* Index of the first word of the frame that is not (key, version)'s, or -1. */
inline int bad_word(gpufs_cache *c, uint32_t f, uint64_t key, uint32_t version, uint32_t len)
{
  uint64_t seed = page_seed(key, version);
  const uint8_t *d = gpufs_frame_data(c, f);
  for (uint32_t w = 0; w < c->page_size / 8; w++) {
    uint64_t v;
    memcpy(&v, d + 8 * w, 8);
    if (v != frame_word(seed, len, w)) return (int)w;
  }
  return -1;
}

/* Load (key, version) on ring r and return its frame unpinned (VALID). */
inline uint32_t load_unpinned(gpufs_cache *c, uint64_t key, uint32_t version, uint32_t r)
{
  uint32_t f = GPUFS_NIL;
  EXPECT_EQ(gpufs_cache_get(c, key, version, r, &f), GPUFS_GET_LOAD);
  fill_page(c, f, key, version, kPage);
  gpufs_frame_loaded(c, f, kPage);
  gpufs_frame_unpin(c, f);
  return f;
}

/* Frames on the chain of key's bucket, head first. */
inline std::vector<uint32_t> chain_of(host_cache &hc, uint64_t key)
{
  std::vector<uint32_t> v;
  for (uint32_t f = hc.heads[gpufs_bucket(&hc.c, key)]; f != GPUFS_NIL && v.size() <= hc.c.nframes;
       f = hc.frames[f].next)
    v.push_back(f);
  return v;
}

/* Is frame f on key's chain, holding key? */
inline bool chained(host_cache &hc, uint64_t key, uint32_t f)
{
  for (uint32_t g : chain_of(hc, key))
    if (g == f && hc.frames[g].key == key) return true;
  return false;
}

} // namespace cache_test

#endif
