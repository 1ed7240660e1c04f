/*
 * cache_drop_test.cpp - gpufs_cache_drop (libgpufs/common/cache.h) on host
 * threads: what gpufs_acquire does to a page the host changed.  A VALID,
 * clean, unpinned page is unchained and its frame freed (the next lookup
 * loads it again); a page not cached, at another version, dirty, pinned by
 * a reader or loading is reported and kept.  Under ThreadSanitizer: drops
 * racing with readers never free a frame a reader holds, and a reader
 * never sees another page's bytes.
 */
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "tests/host/cache_util.h"

namespace {

using namespace cache_test;

TEST(CacheDrop, AValidCleanPageIsDroppedAndLoadsAgain)
{
  host_cache hc(8, kPage, 1);
  gpufs_cache *c = &hc.c;
  const uint64_t key = gpufs_key(3, 7);
  const uint32_t f = load_unpinned(c, key, 2, 0);
  EXPECT_EQ(GPUFS_DROP_ABSENT, gpufs_cache_drop(c, gpufs_key(3, 8), 2)) << "another page";
  EXPECT_EQ(GPUFS_DROP_ABSENT, gpufs_cache_drop(c, key, 1)) << "another version";
  EXPECT_EQ(GPUFS_DROP_DONE, gpufs_cache_drop(c, key, 2));
  EXPECT_EQ(hc.word(f), (uint32_t)GPUFS_PG_FREE << GPUFS_PG_SHIFT);
  EXPECT_FALSE(chained(hc, key, f));
  EXPECT_EQ(GPUFS_DROP_ABSENT, gpufs_cache_drop(c, key, 2)) << "dropped once";
  uint32_t g = GPUFS_NIL;
  ASSERT_EQ(GPUFS_GET_LOAD, gpufs_cache_get(c, key, 2, 0, &g)) << "the next lookup loads";
  fill_page(c, g, key, 2, kPage);
  gpufs_frame_loaded(c, g, kPage);
  gpufs_frame_unpin(c, g);
}

TEST(CacheDrop, DirtyPinnedAndLoadingPagesStay)
{
  host_cache hc(8, kPage, 1);
  gpufs_cache *c = &hc.c;
  /* dirty: the GPU's own bytes win */
  const uint64_t dk = gpufs_key(1, 0);
  const uint32_t d = load_unpinned(c, dk, 1, 0);
  hc.frames[d].state |= GPUFS_PG_DIRTY; /* single-threaded here */
  EXPECT_EQ(GPUFS_DROP_DIRTY, gpufs_cache_drop(c, dk, 1));
  EXPECT_TRUE(chained(hc, dk, d));
  EXPECT_EQ(0u, hc.pins(d)) << "the dropper's pin is given back";
  hc.frames[d].state &= ~GPUFS_PG_DIRTY;
  /* pinned by a reader */
  const uint64_t pk = gpufs_key(1, 1);
  const uint32_t p = load_unpinned(c, pk, 1, 0);
  uint32_t st = 0;
  ASSERT_EQ(p, gpufs_chain_find(c, pk, 1, &st));
  EXPECT_EQ(GPUFS_DROP_BUSY, gpufs_cache_drop(c, pk, 1));
  EXPECT_EQ(1u, hc.pins(p)) << "only the reader's pin is left";
  EXPECT_EQ(bad_word(c, p, pk, 1, kPage), -1);
  gpufs_frame_unpin(c, p);
  EXPECT_EQ(GPUFS_DROP_DONE, gpufs_cache_drop(c, pk, 1)) << "once the reader is done";
  /* loading */
  const uint64_t lk = gpufs_key(1, 2);
  uint32_t l = GPUFS_NIL;
  ASSERT_EQ(GPUFS_GET_LOAD, gpufs_cache_get(c, lk, 1, 0, &l));
  EXPECT_EQ(GPUFS_DROP_BUSY, gpufs_cache_drop(c, lk, 1));
  EXPECT_EQ((uint32_t)GPUFS_PG_LOADING, hc.state(l));
  fill_page(c, l, lk, 1, kPage);
  gpufs_frame_loaded(c, l, kPage);
  gpufs_frame_unpin(c, l);
  EXPECT_EQ(GPUFS_DROP_DONE, gpufs_cache_drop(c, lk, 1));
}

/* Readers look pages up (loading them when missing) and check every word
 * of what they pinned while another thread drops pages; each drop that
 * succeeds frees a frame no reader holds. */
TEST(CacheDrop, DropsRaceWithReaders)
{
  const uint32_t nframes = 64, npages = 48;
  host_cache hc(nframes, kPage, 2);
  gpufs_cache *c = &hc.c;
  std::atomic<bool> stop{false};
  uint32_t never = 0; /* the frame waits' stop word: never set */
  std::atomic<uint64_t> bad{0}, reads{0}, drops{0};
  auto reader = [&](uint32_t r, uint32_t seed) {
    uint32_t x = seed;
    while (!stop.load(std::memory_order_relaxed)) {
      x = x * 1664525u + 1013904223u;
      const uint64_t key = gpufs_key(5, (x >> 8) % npages);
      uint32_t f = GPUFS_NIL;
      const int got = gpufs_cache_get(c, key, 1, r, &f);
      if (got == GPUFS_GET_NOFRAME) continue;
      if (got == GPUFS_GET_LOAD) {
        fill_page(c, f, key, 1, kPage);
        gpufs_frame_loaded(c, f, kPage);
      } else if (got == GPUFS_GET_WAIT) {
        if (gpufs_frame_wait(c, f, &never, 1) != 0) {
          gpufs_frame_unpin(c, f);
          continue;
        }
      }
      if (bad_word(c, f, key, 1, kPage) != -1) bad++;
      reads++;
      gpufs_frame_unpin(c, f);
    }
  };
  std::vector<std::thread> th;
  for (uint32_t i = 0; i < 4; i++) th.emplace_back(reader, i % 2, 17 * i + 1);
  th.emplace_back([&] {
    for (uint32_t i = 0; i < 20000; i++)
      drops += gpufs_cache_drop(c, gpufs_key(5, i % npages), 1) == GPUFS_DROP_DONE;
    stop = true;
  });
  for (auto &t : th) t.join();
  EXPECT_EQ(0u, bad.load()) << "a reader saw another page's bytes";
  EXPECT_GT(reads.load(), 0u);
  EXPECT_GT(drops.load(), 0u);
  for (uint32_t f = 0; f < nframes; f++) EXPECT_EQ(0u, hc.pins(f)) << "frame " << f;
}

} // namespace
