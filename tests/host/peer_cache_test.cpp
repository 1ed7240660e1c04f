/*
 * peer_cache_test.cpp - peer caching against a CPU cache model: threads of
 * instance B load their misses from instance A's cache (gpufs_peer_find,
 * as a GPU round does) while A's own threads load, hit and evict the same
 * keys.  While a frame is pinned, every byte is checked: a peer frame that
 * A reused under B's copy, or a page B published from a peer with another
 * key's bytes, shows here (or as a ThreadSanitizer race).
 */
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tests/host/cache_util.h"

namespace {

using namespace cache_test;

struct side_counts {
  uint64_t host_loads = 0, peer_loads = 0, hits = 0, waits = 0, peer_loading = 0;
};

/* One thread's pass over the keys of a cache: a miss is loaded from the
 * peer when it holds the page VALID, else from the "host" (the pattern). */
void run_side(host_cache &own, host_cache *peer, uint32_t t, uint32_t nkeys, uint32_t ops,
              uint32_t version, failure &fail, uint32_t *stop, side_counts &n)
{
  gpufs_cache *c = &own.c;
  std::mt19937_64 rng(0xfeed0000u + t + (peer ? 1000 : 0));
  const uint32_t ring = t % c->nrings;
  auto bad = [&](const char *what, uint64_t key, uint32_t f) {
    fail.report(std::string(what) + ": key " + std::to_string(key) + " frame " +
                std::to_string(f) + (peer ? " (instance B)" : " (instance A)"));
    gpufs_st_relaxed_u32_sys(stop, 1u);
  };
  for (uint32_t op = 0; op < ops && !fail.any.load(std::memory_order_relaxed); op++) {
    const uint64_t key = gpufs_key(7, rng() % nkeys);
    uint32_t f = GPUFS_NIL;
    int res;
    while ((res = gpufs_cache_get(c, key, version, ring, &f)) == GPUFS_GET_NOFRAME) {
      if (fail.any.load(std::memory_order_relaxed)) return;
      std::this_thread::yield();
    }
    const uint32_t len = page_len(kPage, key, version);
    if (res == GPUFS_GET_LOAD) {
      uint32_t pf = peer ? gpufs_peer_find(&peer->c, key, version) : GPUFS_NIL;
      if (pf != GPUFS_NIL) {
        /* the peer's bytes, as a round's phase C copies them */
        if (gpufs_ld_relaxed_u32_dev(&peer->frames[pf].len) != len ||
            bad_word(&peer->c, pf, key, version, len) >= 0)
          return bad("peer frame does not hold the page", key, pf);
        memcpy(gpufs_frame_data(c, f), gpufs_frame_data(&peer->c, pf), kPage);
        if (rng() % 8 == 0) std::this_thread::yield(); /* give A's allocators a chance */
        if (bad_word(&peer->c, pf, key, version, len) >= 0)
          return bad("peer frame changed while pinned", key, pf);
        gpufs_frame_unpin(&peer->c, pf);
        n.peer_loads++;
      } else {
        fill_page(c, f, key, version, len);
        n.host_loads++;
      }
      gpufs_frame_loaded(c, f, len);
    } else if (res == GPUFS_GET_WAIT) {
      if (gpufs_frame_wait(c, f, stop, 1) != 0) return bad("wait", key, f);
      n.waits++;
    } else {
      n.hits++;
    }
    if (bad_word(c, f, key, version, len) >= 0) return bad("own frame bytes", key, f);
    gpufs_frame_unpin(c, f);
  }
}

TEST(PeerCache, LoadsFromAPeerThatEvictsMeanwhile)
{
  /* A: a pool much smaller than the keys (it evicts all the time); B: as
   * large as the keys, so what B loads stays and B's later passes hit */
  const uint32_t nkeys = 2048, ops = 20000;
  host_cache a(256, kPage, 4), b(2048, kPage, 4);
  failure fail;
  uint32_t stop = 0;
  std::vector<side_counts> na(6), nb(6);
  {
    watchdog wd("peer cache stress");
    std::vector<std::thread> th;
    for (uint32_t t = 0; t < 6; t++)
      th.emplace_back([&, t] { run_side(a, nullptr, t, nkeys, ops, 1, fail, &stop, na[t]); });
    for (uint32_t t = 0; t < 6; t++)
      th.emplace_back([&, t] { run_side(b, &a, t, nkeys, ops, 1, fail, &stop, nb[t]); });
    for (auto &x : th) x.join();
  }
  ASSERT_FALSE(fail.any.load()) << fail.first;
  side_counts tb;
  for (auto &n : nb) {
    tb.host_loads += n.host_loads;
    tb.peer_loads += n.peer_loads;
    tb.hits += n.hits;
  }
  EXPECT_GT(tb.peer_loads, 0u) << "B never found a page in A";
  EXPECT_GT(tb.host_loads, 0u) << "A never missed a page B wanted";
  EXPECT_GT(tb.hits, 0u);
  /* no pin left behind on either side */
  for (uint32_t f = 0; f < 256; f++) EXPECT_EQ(a.pins(f), 0u) << "A frame " << f;
  for (uint32_t f = 0; f < 2048; f++) EXPECT_EQ(b.pins(f), 0u) << "B frame " << f;
  printf("  B: %lu from the peer, %lu from the host, %lu hits\n",
         (unsigned long)tb.peer_loads, (unsigned long)tb.host_loads, (unsigned long)tb.hits);
}

TEST(PeerCache, OtherVersionsAndLoadingFramesAreNotServed)
{
  host_cache a(64, kPage, 1);
  const uint64_t key = gpufs_key(3, 10);
  uint32_t f = GPUFS_NIL;
  ASSERT_EQ(GPUFS_GET_LOAD, gpufs_cache_get(&a.c, key, 2, 0, &f));
  /* LOADING in the peer: not served, and not left pinned */
  EXPECT_EQ(GPUFS_NIL, gpufs_peer_find(&a.c, key, 2));
  EXPECT_EQ(1u, a.pins(f)) << "only the loader's pin";
  fill_page(&a.c, f, key, 2, kPage);
  gpufs_frame_loaded(&a.c, f, kPage);
  gpufs_frame_unpin(&a.c, f);
  EXPECT_EQ(GPUFS_NIL, gpufs_peer_find(&a.c, key, 1)) << "an older version";
  EXPECT_EQ(GPUFS_NIL, gpufs_peer_find(&a.c, key, 3)) << "a newer version";
  EXPECT_EQ(GPUFS_NIL, gpufs_peer_find(&a.c, gpufs_key(4, 10), 2)) << "another file";
  uint32_t p = gpufs_peer_find(&a.c, key, 2);
  ASSERT_EQ(f, p);
  EXPECT_EQ(1u, a.pins(f));
  EXPECT_EQ(-1, bad_word(&a.c, p, key, 2, kPage));
  gpufs_frame_unpin(&a.c, p);
  EXPECT_EQ(0u, a.pins(f));
}

} // namespace
