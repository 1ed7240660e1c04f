/*
 * cache_test.cpp - libgpufs/common/cache.h on host threads.
 *
 * These tests pin down the single-threaded semantics (LOAD/HIT/WAIT,
 * versions, failed loads, eviction order, NOFRAME, frame_put); the stress
 * tests are in cache_stress_test.cpp.
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

#include "tests/host/cache_util.h"

namespace {

using namespace cache_test;

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

  EXPECT_EQ(hc.stats[0].misses, 3u);
  EXPECT_EQ(hc.stats[0].hits, 2u);
  EXPECT_EQ(hc.stats[0].evictions, 0u);
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
  /* a bounded wait (posted readahead's waiters poll with it) says the
   * frame still loads */
  uint32_t ns = 64;
  EXPECT_EQ(gpufs_frame_wait_some(c, g, &stop, 1, 16, &ns), GPUFS_FRAME_STILL_LOADING);

  fill_page(c, f, key, 4, kPage);
  gpufs_frame_loaded(c, f, kPage);
  waiter.join();
  EXPECT_EQ(woke.load(), 1);
  EXPECT_EQ(result.load(), 0);
  EXPECT_EQ(bad.load(), -1);

  EXPECT_EQ(gpufs_frame_wait(c, g, &stop, 1), 0);
  EXPECT_EQ(gpufs_frame_wait_some(c, g, &stop, 1, 16, &ns), 0);
  gpufs_frame_unpin(c, g);
  gpufs_frame_unpin(c, f);
  EXPECT_EQ(hc.word(f), (uint32_t)GPUFS_PG_VALID << GPUFS_PG_SHIFT);
  EXPECT_EQ(hc.stats[0].misses, 1u);
  EXPECT_EQ(hc.stats[0].hits, 0u); /* waits are neither */
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
  EXPECT_EQ(hc.stats[0].evictions, 0u);
  EXPECT_EQ(hc.stats[0].misses, 9u);
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
  EXPECT_EQ(hc.stats[0].evictions, 0u);

  /* full: key 8 takes the frame allocated first (key 0's) */
  EXPECT_EQ(load_unpinned(c, K(8), 1, 0), 0u);
  EXPECT_EQ(hc.stats[0].evictions, 1u);
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
  EXPECT_EQ(hc.stats[0].misses, 8u + 3u + 1u + 12u + 14u);
  EXPECT_EQ(hc.stats[0].evictions, hc.stats[0].misses - 8u);
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
  EXPECT_EQ(hc.stats[0].nofree, 2u);
  EXPECT_EQ(hc.stats[0].misses, 4u);

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
  EXPECT_EQ(hc.stats[0].evictions, 1u);
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
  EXPECT_EQ(hc.stats[0].misses, n);
  EXPECT_EQ(hc.stats[0].hits, 1u);
  /* a shallow page is found without the lock */
  EXPECT_EQ(gpufs_chain_find(c, gpufs_key(1, n - 1), 1, &st), n - 1);
  EXPECT_EQ(st, (uint32_t)GPUFS_PG_VALID);
  gpufs_frame_unpin(c, n - 1);
}

} // namespace
