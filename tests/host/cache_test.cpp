/*
 * cache_test.cpp - libgpufs/common/cache.h on host threads.
 *
 * The first tests pin down the single-threaded semantics (LOAD/HIT/WAIT,
 * versions, failed loads, eviction order, NOFRAME, frame_put).  The stress
 * tests run 16 threads over a pool far smaller than the key space and check,
 * while each frame is pinned, that every byte is the one its key and version
 * were loaded with (a frame reused under a reader would show here, or as a
 * ThreadSanitizer race), then audit the quiescent structure at the end.
 */
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/host/host_cache.h"
#include "tests/host/stress_util.h"

namespace {

using namespace gpufs_test;

constexpr uint32_t kPage = 64;
constexpr int32_t kLoadErr = -GPUFS_EIO;

/* The bytes a page of (key, version) holds: word w = seed ^ w.  Another key
 * or another version of the same key gives other words. */
uint64_t page_seed(uint64_t key, uint32_t version)
{
  return mix64(key ^ ((uint64_t)version << 52) ^ ((uint64_t)version >> 12));
}

/* Valid bytes of the page: a multiple of 8 in [page - 24, page]. */
uint32_t page_len(uint32_t page_size, uint64_t key, uint32_t version)
{
  return page_size - 8u * (uint32_t)(page_seed(key, version) % 4);
}

/* Word w of the whole frame: the page's words below len, and a filler that
 * also depends on (key, version) above it, so every byte is checked. */
uint64_t frame_word(uint64_t seed, uint32_t len, uint32_t w)
{
  return w < len / 8 ? seed ^ w : ~(seed ^ w);
}

void fill_page(gpufs_cache *c, uint32_t f, uint64_t key, uint32_t version, uint32_t len)
{
  uint64_t seed = page_seed(key, version);
  uint8_t *d = gpufs_frame_data(c, f);
  for (uint32_t w = 0; w < c->page_size / 8; w++) {
    uint64_t v = frame_word(seed, len, w);
    memcpy(d + 8 * w, &v, 8);
  }
}

/* Index of the first word of the frame that is not (key, version)'s, or -1. */
int bad_word(gpufs_cache *c, uint32_t f, uint64_t key, uint32_t version, uint32_t len)
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
uint32_t load_unpinned(gpufs_cache *c, uint64_t key, uint32_t version, uint32_t r)
{
  uint32_t f = GPUFS_NIL;
  EXPECT_EQ(gpufs_cache_get(c, key, version, r, &f), GPUFS_GET_LOAD);
  fill_page(c, f, key, version, kPage);
  gpufs_frame_loaded(c, f, kPage);
  gpufs_frame_unpin(c, f);
  return f;
}

/* Frames on the chain of key's bucket, head first. */
std::vector<uint32_t> chain_of(host_cache &hc, uint64_t key)
{
  std::vector<uint32_t> v;
  for (uint32_t f = hc.heads[gpufs_bucket(&hc.c, key)]; f != GPUFS_NIL && v.size() <= hc.c.nframes;
       f = hc.frames[f].next)
    v.push_back(f);
  return v;
}

/* Is frame f on key's chain, holding key? */
bool chained(host_cache &hc, uint64_t key, uint32_t f)
{
  for (uint32_t g : chain_of(hc, key))
    if (g == f && hc.frames[g].key == key) return true;
  return false;
}

/* ------------------------------------------------------------------ */
/* Single-threaded semantics                                            */
/* ------------------------------------------------------------------ */

TEST(CacheBasic, LoadThenHit)
{
  host_cache hc(8, kPage, 1);
  gpufs_cache *c = &hc.c;
  uint64_t key = gpufs_key(1, 5);
  uint32_t f = GPUFS_NIL;

  ASSERT_EQ(gpufs_cache_get(c, key, 1, 0, &f), GPUFS_GET_LOAD);
  ASSERT_LT(f, 8u);
  EXPECT_EQ(hc.state(f), (uint32_t)GPUFS_PG_LOADING);
  EXPECT_EQ(hc.pins(f), 1u);
  EXPECT_EQ(hc.frames[f].key, key);
  EXPECT_EQ(hc.frames[f].version, 1u);
  EXPECT_EQ(chain_of(hc, key), std::vector<uint32_t>{f});

  fill_page(c, f, key, 1, 40);
  gpufs_frame_loaded(c, f, 40);
  EXPECT_EQ(hc.state(f), (uint32_t)GPUFS_PG_VALID);
  EXPECT_EQ(hc.pins(f), 1u);
  EXPECT_EQ(hc.frames[f].len, 40u);

  uint32_t g = GPUFS_NIL;
  ASSERT_EQ(gpufs_cache_get(c, key, 1, 0, &g), GPUFS_GET_HIT);
  EXPECT_EQ(g, f);
  EXPECT_EQ(hc.pins(f), 2u);
  EXPECT_EQ(bad_word(c, f, key, 1, 40), -1);
  gpufs_frame_unpin(c, f);
  gpufs_frame_unpin(c, f);
  EXPECT_EQ(hc.word(f), (uint32_t)GPUFS_PG_VALID << GPUFS_PG_SHIFT);

  ASSERT_EQ(gpufs_cache_get(c, key, 1, 0, &g), GPUFS_GET_HIT);
  EXPECT_EQ(g, f);
  gpufs_frame_unpin(c, f);

  /* another page of the same file, and the same page of another file */
  uint32_t f2 = load_unpinned(c, gpufs_key(1, 6), 1, 0);
  uint32_t f3 = load_unpinned(c, gpufs_key(2, 5), 1, 0);
  EXPECT_NE(f2, f);
  EXPECT_NE(f3, f);
  EXPECT_NE(f2, f3);

  EXPECT_EQ(hc.rings[0].misses, 3u);
  EXPECT_EQ(hc.rings[0].hits, 2u);
  EXPECT_EQ(hc.rings[0].evictions, 0u);
}

TEST(CacheBasic, WaitersSeeTheLoad)
{
  host_cache hc(8, kPage, 1);
  gpufs_cache *c = &hc.c;
  uint64_t key = gpufs_key(3, 77);
  uint32_t stop = 0;
  uint32_t f = GPUFS_NIL, g = GPUFS_NIL;

  ASSERT_EQ(gpufs_cache_get(c, key, 4, 0, &f), GPUFS_GET_LOAD);
  ASSERT_EQ(gpufs_cache_get(c, key, 4, 0, &g), GPUFS_GET_WAIT);
  EXPECT_EQ(g, f);
  EXPECT_EQ(hc.pins(f), 2u);

  std::atomic<int> woke{0};
  std::atomic<int> result{1};
  std::atomic<int> bad{-2};
  std::thread waiter([&] {
    uint32_t h = GPUFS_NIL;
    if (gpufs_cache_get(c, key, 4, 0, &h) != GPUFS_GET_WAIT || h != f) {
      woke = -1;
      return;
    }
    result = gpufs_frame_wait(c, h, &stop, 1);
    bad = bad_word(c, h, key, 4, gpufs_ld_relaxed_u32_dev(&hc.frames[h].len));
    woke = 1;
    gpufs_frame_unpin(c, h);
  });
  /* the waiter is pinned and must stay asleep while the frame loads */
  while (hc.pins(f) != 3u && woke.load() == 0) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(woke.load(), 0);

  fill_page(c, f, key, 4, kPage);
  gpufs_frame_loaded(c, f, kPage);
  waiter.join();
  EXPECT_EQ(woke.load(), 1);
  EXPECT_EQ(result.load(), 0);
  EXPECT_EQ(bad.load(), -1);

  EXPECT_EQ(gpufs_frame_wait(c, g, &stop, 1), 0);
  gpufs_frame_unpin(c, g);
  gpufs_frame_unpin(c, f);
  EXPECT_EQ(hc.word(f), (uint32_t)GPUFS_PG_VALID << GPUFS_PG_SHIFT);
  EXPECT_EQ(hc.rings[0].misses, 1u);
  EXPECT_EQ(hc.rings[0].hits, 0u); /* waits are neither */
}

TEST(CacheBasic, VersionMismatchMisses)
{
  host_cache hc(8, kPage, 1);
  gpufs_cache *c = &hc.c;
  uint64_t key = gpufs_key(1, 9);

  uint32_t f1 = load_unpinned(c, key, 1, 0);
  uint32_t f2 = GPUFS_NIL;
  ASSERT_EQ(gpufs_cache_get(c, key, 2, 0, &f2), GPUFS_GET_LOAD);
  EXPECT_NE(f2, f1);
  EXPECT_EQ(hc.frames[f2].version, 2u);
  /* while version 2 loads, version 1 still hits its own frame */
  uint32_t g = GPUFS_NIL;
  ASSERT_EQ(gpufs_cache_get(c, key, 1, 0, &g), GPUFS_GET_HIT);
  EXPECT_EQ(g, f1);
  gpufs_frame_unpin(c, g);
  ASSERT_EQ(gpufs_cache_get(c, key, 2, 0, &g), GPUFS_GET_WAIT);
  EXPECT_EQ(g, f2);
  gpufs_frame_unpin(c, g);

  fill_page(c, f2, key, 2, kPage);
  gpufs_frame_loaded(c, f2, kPage);
  gpufs_frame_unpin(c, f2);
  ASSERT_EQ(gpufs_cache_get(c, key, 2, 0, &g), GPUFS_GET_HIT);
  EXPECT_EQ(g, f2);
  EXPECT_EQ(bad_word(c, g, key, 2, kPage), -1);
  gpufs_frame_unpin(c, g);
  /* a version never loaded misses */
  ASSERT_EQ(gpufs_cache_get(c, key, 3, 0, &g), GPUFS_GET_LOAD);
  EXPECT_NE(g, f1);
  EXPECT_NE(g, f2);
  gpufs_frame_failed(c, g, kLoadErr);
  gpufs_frame_unpin(c, g);
  EXPECT_TRUE(chained(hc, key, f1));
  EXPECT_TRUE(chained(hc, key, f2));
  EXPECT_FALSE(chained(hc, key, g));
}

TEST(CacheBasic, FailedLoadWakesWaitersWithError)
{
  host_cache hc(8, kPage, 1);
  gpufs_cache *c = &hc.c;
  uint64_t key = gpufs_key(1, 42);
  uint32_t stop = 0;
  uint32_t f = GPUFS_NIL, g = GPUFS_NIL;

  ASSERT_EQ(gpufs_cache_get(c, key, 1, 0, &f), GPUFS_GET_LOAD);
  ASSERT_EQ(gpufs_cache_get(c, key, 1, 0, &g), GPUFS_GET_WAIT);
  ASSERT_EQ(g, f);

  std::atomic<int> result{1};
  std::thread waiter([&] {
    uint32_t h = GPUFS_NIL;
    if (gpufs_cache_get(c, key, 1, 0, &h) != GPUFS_GET_WAIT || h != f) {
      result = 2;
      return;
    }
    result = gpufs_frame_wait(c, h, &stop, 1);
    gpufs_frame_unpin(c, h);
  });
  while (hc.pins(f) != 3u && result.load() == 1) std::this_thread::yield();

  gpufs_frame_failed(c, f, kLoadErr);
  EXPECT_EQ(hc.state(f), (uint32_t)GPUFS_PG_ERROR);
  EXPECT_FALSE(chained(hc, key, f));
  waiter.join();
  EXPECT_EQ(result.load(), kLoadErr);
  EXPECT_EQ(gpufs_frame_wait(c, g, &stop, 1), kLoadErr);
  gpufs_frame_unpin(c, g);
  gpufs_frame_unpin(c, f);
  EXPECT_EQ(hc.word(f), (uint32_t)GPUFS_PG_ERROR << GPUFS_PG_SHIFT);

  /* the failed page is not cached: the next get loads it again */
  uint32_t f2 = GPUFS_NIL;
  ASSERT_EQ(gpufs_cache_get(c, key, 1, 0, &f2), GPUFS_GET_LOAD);
  EXPECT_NE(f2, f);
  fill_page(c, f2, key, 1, kPage);
  gpufs_frame_loaded(c, f2, kPage);
  gpufs_frame_unpin(c, f2);
  ASSERT_EQ(gpufs_cache_get(c, key, 1, 0, &g), GPUFS_GET_HIT);
  EXPECT_EQ(g, f2);
  gpufs_frame_unpin(c, g);

  /* an ERROR frame is reused without counting as an eviction */
  std::set<uint32_t> seen;
  for (uint32_t i = 0; i < 7; i++) seen.insert(load_unpinned(c, gpufs_key(2, i), 1, 0));
  EXPECT_EQ(seen.count(f), 1u);
  EXPECT_EQ(hc.rings[0].evictions, 0u);
  EXPECT_EQ(hc.rings[0].misses, 9u);
}

TEST(CacheBasic, WaitGivesUpWhenStopped)
{
  host_cache hc(4, kPage, 1);
  gpufs_cache *c = &hc.c;
  uint64_t key = gpufs_key(1, 1);
  uint32_t stop = 0;
  uint32_t f = GPUFS_NIL, g = GPUFS_NIL;
  ASSERT_EQ(gpufs_cache_get(c, key, 1, 0, &f), GPUFS_GET_LOAD);
  ASSERT_EQ(gpufs_cache_get(c, key, 1, 0, &g), GPUFS_GET_WAIT);

  std::atomic<int> result{1};
  std::thread waiter([&] { result = gpufs_frame_wait(c, g, &stop, 2); });
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(result.load(), 1);
  gpufs_st_relaxed_u32_sys(&stop, 2u);
  waiter.join();
  EXPECT_EQ(result.load(), -GPUFS_ESHUTDOWN);
  gpufs_frame_unpin(c, g);
  gpufs_frame_failed(c, f, kLoadErr);
  gpufs_frame_unpin(c, f);
}

TEST(CacheBasic, EvictsLeastRecentlyAllocatedNeverPinnedOrLoading)
{
  host_cache hc(8, kPage, 1);
  gpufs_cache *c = &hc.c;
  auto K = [](uint32_t i) { return gpufs_key(1, 1000 + i); };
  uint32_t g = GPUFS_NIL;

  for (uint32_t i = 0; i < 8; i++) EXPECT_EQ(load_unpinned(c, K(i), 1, 0), i);
  EXPECT_EQ(hc.rings[0].evictions, 0u);

  /* full: key 8 takes the frame allocated first (key 0's) */
  EXPECT_EQ(load_unpinned(c, K(8), 1, 0), 0u);
  EXPECT_EQ(hc.rings[0].evictions, 1u);
  EXPECT_FALSE(chained(hc, K(0), 0));
  EXPECT_TRUE(chained(hc, K(8), 0));
  /* key 0 is gone: it loads again, into key 1's frame */
  EXPECT_EQ(load_unpinned(c, K(0), 1, 0), 1u);
  ASSERT_EQ(gpufs_cache_get(c, K(1), 1, 0, &g), GPUFS_GET_LOAD);
  EXPECT_EQ(g, 2u);
  fill_page(c, g, K(1), 1, kPage);
  gpufs_frame_loaded(c, g, kPage);
  gpufs_frame_unpin(c, g);
  /* frames: 0 key8, 1 key0, 2 key1, 3..7 keys 3..7; the hand is at 3 */

  /* pin key 3 (VALID) and keep key 9 LOADING (pinned by its loader) */
  uint32_t pinned = GPUFS_NIL, loading = GPUFS_NIL;
  ASSERT_EQ(gpufs_cache_get(c, K(3), 1, 0, &pinned), GPUFS_GET_HIT);
  EXPECT_EQ(pinned, 3u);
  ASSERT_EQ(gpufs_cache_get(c, K(9), 1, 0, &loading), GPUFS_GET_LOAD);
  EXPECT_EQ(loading, 4u); /* 3 was skipped */

  /* two full turns of the hand: neither frame is ever handed out */
  for (uint32_t i = 0; i < 12; i++) {
    uint32_t f = load_unpinned(c, K(20 + i), 1, 0);
    EXPECT_NE(f, pinned);
    EXPECT_NE(f, loading);
  }
  EXPECT_EQ(hc.word(pinned), ((uint32_t)GPUFS_PG_VALID << GPUFS_PG_SHIFT) + 1u);
  EXPECT_EQ(hc.word(loading), ((uint32_t)GPUFS_PG_LOADING << GPUFS_PG_SHIFT) + 1u);
  EXPECT_EQ(bad_word(c, pinned, K(3), 1, kPage), -1);
  ASSERT_EQ(gpufs_cache_get(c, K(9), 1, 0, &g), GPUFS_GET_WAIT);
  EXPECT_EQ(g, loading);
  gpufs_frame_unpin(c, g);

  /* the state alone keeps a LOADING frame: drop the loader's pin for a
   * while (LOADING, 0 pins) and allocate around it */
  gpufs_frame_unpin(c, loading);
  gpufs_frame_unpin(c, pinned);
  bool pinned_reused = false;
  for (uint32_t i = 0; i < 14; i++) {
    uint32_t f = load_unpinned(c, K(40 + i), 1, 0);
    EXPECT_NE(f, loading);
    pinned_reused |= f == pinned;
  }
  EXPECT_TRUE(pinned_reused); /* unpinned VALID frames are fair game again */
  EXPECT_EQ(hc.word(loading), (uint32_t)GPUFS_PG_LOADING << GPUFS_PG_SHIFT);
  ASSERT_EQ(gpufs_cache_get(c, K(9), 1, 0, &g), GPUFS_GET_WAIT);
  fill_page(c, g, K(9), 1, kPage);
  gpufs_frame_loaded(c, g, kPage);
  gpufs_frame_unpin(c, g);

  /* every allocation after the first 8 frames evicted one VALID frame */
  EXPECT_EQ(hc.rings[0].misses, 8u + 3u + 1u + 12u + 14u);
  EXPECT_EQ(hc.rings[0].evictions, hc.rings[0].misses - 8u);
}

TEST(CacheBasic, NoFrameWhenTheRingIsPinned)
{
  host_cache hc(8, kPage, 2); /* ring 0: frames 0..3, ring 1: 4..7 */
  gpufs_cache *c = &hc.c;
  ASSERT_EQ(hc.rings[0].first, 0u);
  ASSERT_EQ(hc.rings[0].count, 4u);
  ASSERT_EQ(hc.rings[1].first, 4u);
  auto K = [](uint32_t i) { return gpufs_key(7, i); };

  uint32_t held[4];
  for (uint32_t i = 0; i < 4; i++) {
    ASSERT_EQ(gpufs_cache_get(c, K(i), 1, 0, &held[i]), GPUFS_GET_LOAD);
    if (i < 2) { /* two VALID, two still LOADING; all four pinned */
      fill_page(c, held[i], K(i), 1, kPage);
      gpufs_frame_loaded(c, held[i], kPage);
    }
  }
  std::vector<uint32_t> words, heads = hc.heads;
  for (uint32_t f = 0; f < 8; f++) words.push_back(hc.word(f));

  uint32_t g = 12345;
  EXPECT_EQ(gpufs_cache_get(c, K(100), 1, 0, &g), GPUFS_GET_NOFRAME);
  EXPECT_EQ(gpufs_cache_get(c, K(101), 1, 0, &g), GPUFS_GET_NOFRAME);
  for (uint32_t f = 0; f < 8; f++) EXPECT_EQ(hc.word(f), words[f]) << "frame " << f;
  EXPECT_EQ(hc.heads, heads);
  EXPECT_EQ(hc.rings[0].nofree, 2u);
  EXPECT_EQ(hc.rings[0].misses, 4u);

  /* a cached page still hits; the other ring still allocates */
  ASSERT_EQ(gpufs_cache_get(c, K(0), 1, 0, &g), GPUFS_GET_HIT);
  EXPECT_EQ(g, held[0]);
  gpufs_frame_unpin(c, g);
  ASSERT_EQ(gpufs_cache_get(c, K(100), 1, 1, &g), GPUFS_GET_LOAD);
  EXPECT_GE(g, 4u);
  gpufs_frame_failed(c, g, kLoadErr);
  gpufs_frame_unpin(c, g);

  /* unpin one VALID frame: it is the one that goes */
  gpufs_frame_unpin(c, held[1]);
  ASSERT_EQ(gpufs_cache_get(c, K(101), 1, 0, &g), GPUFS_GET_LOAD);
  EXPECT_EQ(g, held[1]);
  EXPECT_EQ(hc.rings[0].evictions, 1u);
  gpufs_frame_failed(c, g, kLoadErr);
  gpufs_frame_unpin(c, g);
  for (uint32_t i : {0u, 2u, 3u}) {
    if (i >= 2) gpufs_frame_failed(c, held[i], kLoadErr);
    gpufs_frame_unpin(c, held[i]);
  }
  for (uint32_t f = 0; f < 8; f++) EXPECT_EQ(hc.pins(f), 0u);
}

TEST(CacheBasic, FramePutReturnsTheFrame)
{
  host_cache hc(2, kPage, 1);
  gpufs_cache *c = &hc.c;

  uint32_t f = gpufs_ring_alloc(c, 0);
  ASSERT_EQ(f, 0u);
  EXPECT_EQ(hc.word(f), (uint32_t)GPUFS_PG_OWNED << GPUFS_PG_SHIFT);
  uint32_t f2 = gpufs_ring_alloc(c, 0);
  ASSERT_EQ(f2, 1u);
  EXPECT_EQ(gpufs_ring_alloc(c, 0), GPUFS_NIL); /* both OWNED */
  gpufs_frame_put(c, f);
  EXPECT_EQ(hc.word(f), (uint32_t)GPUFS_PG_FREE << GPUFS_PG_SHIFT);
  EXPECT_EQ(gpufs_ring_alloc(c, 0), f);
  gpufs_frame_put(c, f);
  gpufs_frame_put(c, f2);

  /* evicting a VALID frame unchains it; put leaves it FREE, not VALID */
  uint64_t key = gpufs_key(1, 3);
  uint32_t v = load_unpinned(c, key, 1, 0);
  uint32_t w = load_unpinned(c, gpufs_key(1, 4), 1, 0);
  EXPECT_NE(v, w);
  uint32_t e = gpufs_ring_alloc(c, 0);
  ASSERT_EQ(e, v);
  EXPECT_FALSE(chained(hc, key, v));
  gpufs_frame_put(c, e);
  EXPECT_EQ(hc.word(e), (uint32_t)GPUFS_PG_FREE << GPUFS_PG_SHIFT);
  uint32_t g = GPUFS_NIL;
  EXPECT_EQ(gpufs_cache_get(c, key, 1, 0, &g), GPUFS_GET_LOAD);
  gpufs_frame_failed(c, g, kLoadErr);
  gpufs_frame_unpin(c, g);
}

/* A chain longer than GPUFS_WALK_MAX: the lock-free walk gives up, the get
 * allocates, finds the page under the bucket lock and puts its new frame
 * back. */
TEST(CacheBasic, LongChainFallsBackToTheLock)
{
  const uint32_t n = GPUFS_WALK_MAX + 8;
  host_cache hc(n + 4, kPage, 1, 1); /* one bucket */
  gpufs_cache *c = &hc.c;
  for (uint32_t i = 0; i < n; i++) load_unpinned(c, gpufs_key(1, i), 1, 0);
  ASSERT_EQ(chain_of(hc, gpufs_key(1, 0)).size(), n);

  uint32_t st = 0;
  EXPECT_EQ(gpufs_chain_find(c, gpufs_key(1, 0), 1, &st), GPUFS_NIL); /* deepest */
  uint32_t g = GPUFS_NIL;
  ASSERT_EQ(gpufs_cache_get(c, gpufs_key(1, 0), 1, 0, &g), GPUFS_GET_HIT);
  EXPECT_EQ(g, 0u);
  EXPECT_EQ(bad_word(c, g, gpufs_key(1, 0), 1, kPage), -1);
  gpufs_frame_unpin(c, g);
  EXPECT_EQ(hc.word(n), (uint32_t)GPUFS_PG_FREE << GPUFS_PG_SHIFT); /* put back */
  EXPECT_EQ(hc.rings[0].misses, n);
  EXPECT_EQ(hc.rings[0].hits, 1u);
  /* a shallow page is found without the lock */
  EXPECT_EQ(gpufs_chain_find(c, gpufs_key(1, n - 1), 1, &st), n - 1);
  EXPECT_EQ(st, (uint32_t)GPUFS_PG_VALID);
  gpufs_frame_unpin(c, n - 1);
}

/* ------------------------------------------------------------------ */
/* Stress                                                               */
/* ------------------------------------------------------------------ */

struct stress_params {
  uint32_t nframes;
  uint32_t nrings;
  uint32_t nbuckets; /* 0: the default */
  uint32_t nthreads;
  uint32_t nkeys;
  uint32_t ops;      /* per thread */
};

struct thread_counts {
  uint64_t loads_ok = 0, loads_failed = 0, hits = 0, waits_ok = 0, waits_err = 0, nofree = 0,
           bumps = 0;
};

void run_stress(const stress_params &p)
{
  host_cache hc(p.nframes, kPage, p.nrings, p.nbuckets);
  gpufs_cache *c = &hc.c;
  std::vector<uint64_t> keys(p.nkeys);
  for (uint32_t i = 0; i < p.nkeys; i++) keys[i] = gpufs_key(1 + i % 2, (uint64_t)(i / 2) * 4099 + 17);
  std::vector<std::atomic<uint32_t>> versions(p.nkeys);
  for (auto &v : versions) v = 1;
  uint32_t stop = 0;
  failure fail;
  std::vector<thread_counts> counts(p.nthreads);

  auto worker = [&](uint32_t t) {
    /* a failing thread may leave a frame LOADING: wake its waiters */
    auto give_up = [&] { gpufs_st_relaxed_u32_sys(&stop, 1u); };
    std::mt19937_64 rng(0x5eed0000u + t);
    const uint32_t r = t % p.nrings;
    thread_counts &n = counts[t];
    auto bad = [&](const char *what, uint64_t key, uint32_t version, uint32_t f) {
      fail.report(std::string(what) + ": thread " + std::to_string(t) + " key " +
                  std::to_string(key) + " version " + std::to_string(version) + " frame " +
                  std::to_string(f));
      give_up();
    };
    /* while pinned: the frame holds (key, version) and exactly its bytes */
    auto check_valid = [&](uint32_t f, uint64_t key, uint32_t version) {
      gpufs_frame *fr = &hc.frames[f];
      uint32_t w = gpufs_ld_relaxed_u32_dev(&fr->state);
      uint32_t len = gpufs_ld_relaxed_u32_dev(&fr->len);
      if (gpufs_pg_state(w) != GPUFS_PG_VALID || (w & GPUFS_PG_PINS) == 0)
        return bad("pinned frame not VALID", key, version, f);
      if (gpufs_ld_relaxed_u64_dev(&fr->key) != key ||
          gpufs_ld_relaxed_u32_dev(&fr->version) != version)
        return bad("frame holds another key or version", key, version, f);
      if (len != page_len(kPage, key, version)) return bad("wrong len", key, version, f);
      if (bad_word(c, f, key, version, len) >= 0) return bad("wrong bytes", key, version, f);
      if (rng() % 8 == 0) { /* give allocators a chance to take it from under us */
        std::this_thread::yield();
        if (bad_word(c, f, key, version, len) >= 0)
          return bad("bytes changed while pinned", key, version, f);
      }
    };

    /* Under the bucket lock the chain holds still: ours is on it, and no
     * other frame on it is LOADING or VALID with our (key, version).  (An
     * OWNED one is being evicted and waits for this lock to unlink it.) */
    auto check_unique = [&](uint32_t f, uint64_t key, uint32_t version) {
      uint32_t b = gpufs_bucket(c, key);
      bool ours = false, dup = false;
      uint32_t steps = 0;
      gpufs_bucket_lock(c, b);
      for (uint32_t g = gpufs_ld_relaxed_u32_dev(&hc.heads[b]); g != GPUFS_NIL && steps <= p.nframes;
           g = gpufs_ld_relaxed_u32_dev(&hc.frames[g].next), steps++) {
        if (g == f) {
          ours = true;
          continue;
        }
        uint32_t st = hc.state(g);
        if (gpufs_ld_relaxed_u64_dev(&hc.frames[g].key) == key &&
            gpufs_ld_relaxed_u32_dev(&hc.frames[g].version) == version &&
            (st == GPUFS_PG_LOADING || st == GPUFS_PG_VALID))
          dup = true;
      }
      gpufs_bucket_unlock(c, b);
      if (steps > p.nframes) return bad("chain longer than the pool (cycle)", key, version, f);
      if (!ours) return bad("LOADING frame not on its chain", key, version, f);
      if (dup) return bad("two live frames for one (key, version)", key, version, f);
    };

    for (uint32_t op = 0; op < p.ops && !fail.any.load(std::memory_order_relaxed); op++) {
      /* 60% a hot set of a quarter of the pool (hits, waits, pins), 20%
       * skewed, 20% uniform over the key space (evictions) */
      uint32_t idx;
      uint64_t x = rng();
      uint32_t mode = (uint32_t)(x % 10);
      x >>= 8;
      if (mode < 6) {
        idx = (uint32_t)(x % (p.nframes / 4)) * (p.nkeys / (p.nframes / 4));
      } else if (mode < 8) {
        double u = (double)(x & 0xfffff) / 0x100000;
        idx = (uint32_t)(u * u * u * u * p.nkeys);
      } else {
        idx = (uint32_t)(x % p.nkeys);
      }
      if (rng() % 4096 == 0) { /* the file changed: old pages must never hit */
        versions[idx].fetch_add(1, std::memory_order_relaxed);
        n.bumps++;
      }
      const uint32_t version = versions[idx].load(std::memory_order_relaxed);
      const uint64_t key = keys[idx];

      uint32_t f = GPUFS_NIL;
      int res;
      uint32_t spins = 0;
      while ((res = gpufs_cache_get(c, key, version, r, &f)) == GPUFS_GET_NOFRAME) {
        n.nofree++;
        if (++spins > 1000000) return bad("NOFRAME forever", key, version, f);
        if (fail.any.load(std::memory_order_relaxed)) return;
        std::this_thread::yield();
      }
      if (f >= p.nframes) return bad("frame out of range", key, version, f);

      if (res == GPUFS_GET_LOAD) {
        gpufs_frame *fr = &hc.frames[f];
        uint32_t w = gpufs_ld_relaxed_u32_dev(&fr->state);
        if (gpufs_pg_state(w) != GPUFS_PG_LOADING || (w & GPUFS_PG_PINS) == 0 ||
            gpufs_ld_relaxed_u64_dev(&fr->key) != key ||
            gpufs_ld_relaxed_u32_dev(&fr->version) != version)
          return bad("LOAD frame not ours", key, version, f);
        if (f < hc.rings[r].first || f >= hc.rings[r].first + hc.rings[r].count)
          return bad("LOAD frame outside the ring", key, version, f);
        check_unique(f, key, version);
        if (rng() % 4 == 0) std::this_thread::yield(); /* let waiters pile up */
        if (rng() % 64 == 0) {
          gpufs_frame_failed(c, f, kLoadErr);
          n.loads_failed++;
          gpufs_frame_unpin(c, f);
          continue;
        }
        uint32_t len = page_len(kPage, key, version);
        fill_page(c, f, key, version, len);
        gpufs_frame_loaded(c, f, len);
        n.loads_ok++;
      } else if (res == GPUFS_GET_WAIT) {
        int e = gpufs_frame_wait(c, f, &stop, 1);
        if (e == kLoadErr) {
          gpufs_frame *fr = &hc.frames[f];
          uint32_t w = gpufs_ld_relaxed_u32_dev(&fr->state);
          /* our pin keeps the failed frame from reuse */
          if (gpufs_pg_state(w) != GPUFS_PG_ERROR || (w & GPUFS_PG_PINS) == 0 ||
              gpufs_ld_relaxed_u64_dev(&fr->key) != key ||
              gpufs_ld_relaxed_u32_dev(&fr->version) != version ||
              (int32_t)gpufs_ld_relaxed_u32_dev((uint32_t *)&fr->err) != kLoadErr)
            return bad("failed frame not as the loader left it", key, version, f);
          n.waits_err++;
          gpufs_frame_unpin(c, f);
          continue;
        }
        if (e != 0) return bad("gpufs_frame_wait", key, version, f);
        n.waits_ok++;
      } else if (res == GPUFS_GET_HIT) {
        n.hits++;
      } else {
        return bad("unknown get result", key, version, f);
      }
      check_valid(f, key, version);
      gpufs_frame_unpin(c, f);
    }
  };

  auto t0 = std::chrono::steady_clock::now();
  {
    /* a broken chain makes the library loop forever: say so and stop */
    watchdog wd("cache stress (deadlock or looping chain)");
    std::vector<std::thread> th;
    for (uint32_t t = 0; t < p.nthreads; t++) th.emplace_back(worker, t);
    for (auto &x : th) x.join();
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_FALSE(fail.any.load()) << fail.first;

  /* ---- quiescent audit ---- */
  thread_counts tot;
  std::vector<thread_counts> per_ring(p.nrings);
  for (uint32_t t = 0; t < p.nthreads; t++) {
    thread_counts &a = per_ring[t % p.nrings], &n = counts[t];
    a.loads_ok += n.loads_ok;
    a.loads_failed += n.loads_failed;
    a.hits += n.hits;
    tot.loads_ok += n.loads_ok;
    tot.loads_failed += n.loads_failed;
    tot.hits += n.hits;
    tot.waits_ok += n.waits_ok;
    tot.waits_err += n.waits_err;
    tot.nofree += n.nofree;
    tot.bumps += n.bumps;
  }

  std::vector<int> seen(p.nframes, 0);
  for (uint32_t b = 0; b < c->nbuckets; b++) {
    EXPECT_EQ(hc.locks[b], 0u) << "bucket " << b << " left locked";
    for (uint32_t f = hc.heads[b]; f != GPUFS_NIL; f = hc.frames[f].next) {
      ASSERT_LT(f, p.nframes) << "bucket " << b;
      ASSERT_EQ(seen[f], 0) << "frame " << f << " chained twice (cycle or two chains)";
      seen[f] = 1;
      EXPECT_EQ(hc.state(f), (uint32_t)GPUFS_PG_VALID) << "chained frame " << f;
      EXPECT_EQ(gpufs_bucket(c, hc.frames[f].key), b) << "frame " << f << " in a wrong bucket";
    }
  }
  std::set<std::pair<uint64_t, uint32_t>> held;
  std::vector<uint64_t> valid_in_ring(p.nrings, 0);
  uint64_t valid = 0;
  for (uint32_t f = 0; f < p.nframes; f++) {
    uint32_t st = hc.state(f);
    EXPECT_EQ(hc.pins(f), 0u) << "frame " << f << " still pinned";
    EXPECT_TRUE(st == GPUFS_PG_FREE || st == GPUFS_PG_VALID || st == GPUFS_PG_ERROR)
        << "frame " << f << " in state " << st;
    if (st != GPUFS_PG_VALID) continue;
    valid++;
    EXPECT_EQ(seen[f], 1) << "VALID frame " << f << " not chained";
    const gpufs_frame &fr = hc.frames[f];
    EXPECT_TRUE(held.insert({fr.key, fr.version}).second)
        << "two VALID frames hold key " << fr.key << " version " << fr.version;
    EXPECT_EQ(fr.len, page_len(kPage, fr.key, fr.version));
    EXPECT_EQ(bad_word(c, f, fr.key, fr.version, fr.len), -1) << "frame " << f;
    for (uint32_t r = 0; r < p.nrings; r++)
      if (f >= hc.rings[r].first && f < hc.rings[r].first + hc.rings[r].count) valid_in_ring[r]++;
  }
  uint64_t evictions = 0;
  for (uint32_t r = 0; r < p.nrings; r++) {
    const gpufs_ring &g = hc.rings[r];
    EXPECT_EQ(g.misses, per_ring[r].loads_ok + per_ring[r].loads_failed) << "ring " << r;
    EXPECT_EQ(g.hits, per_ring[r].hits) << "ring " << r;
    EXPECT_LE(g.evictions, g.misses) << "ring " << r;
    /* a frame becomes VALID only by a load and leaves VALID only by an
     * eviction of its own ring */
    EXPECT_EQ(valid_in_ring[r], per_ring[r].loads_ok - g.evictions) << "ring " << r;
    EXPECT_GE(g.scanned, g.misses) << "ring " << r;
    evictions += g.evictions;
  }
  uint64_t nofree = 0;
  for (uint32_t r = 0; r < p.nrings; r++) nofree += hc.rings[r].nofree;
  EXPECT_EQ(nofree, tot.nofree);

  /* the run exercised what it claims to */
  EXPECT_GT(tot.hits, 0u);
  EXPECT_GT(tot.waits_ok + tot.waits_err, 0u);
  EXPECT_GT(evictions, 0u);
  EXPECT_GT(tot.loads_failed, 0u);
  EXPECT_GT(tot.bumps, 0u);
  printf("  %u threads x %u ops in %.2f s: %lu loads (%lu failed), %lu hits, %lu waits "
         "(%lu saw the error), %lu evictions, %lu NOFRAME, %lu VALID at end\n",
         p.nthreads, p.ops, secs, (unsigned long)(tot.loads_ok + tot.loads_failed),
         (unsigned long)tot.loads_failed, (unsigned long)tot.hits,
         (unsigned long)(tot.waits_ok + tot.waits_err), (unsigned long)tot.waits_err,
         (unsigned long)evictions, (unsigned long)tot.nofree, (unsigned long)valid);
}

/* 256 frames over 100x as many keys, 4 rings. */
TEST(CacheStress, ManyThreadsSmallPool)
{
  run_stress({256, 4, 0, 16, 25600, 100000});
}

/* 8 buckets: chains of ~32 frames that walkers cross while they change. */
TEST(CacheStress, LongChains)
{
  run_stress({256, 4, 8, 16, 25600, 40000});
}

/* 8 rings of 4 frames: rings run out of unpinned frames (NOFRAME). */
TEST(CacheStress, TinyRings)
{
  run_stress({32, 8, 0, 16, 3200, 60000});
}

} // namespace
