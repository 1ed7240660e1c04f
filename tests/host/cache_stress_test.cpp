/*
 * cache_stress_test.cpp - libgpufs/common/cache.h under many host threads.
 *
 * 16 threads over a pool far smaller than the key space check, while each
 * frame is pinned, that every byte is the one its key and version were
 * loaded with (a frame reused under a reader would show here, or as a
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

#include "tests/host/cache_util.h"

namespace {

using namespace cache_test;

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
    const gpufs_ring_stats &g = hc.stats[r];
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
  for (uint32_t r = 0; r < p.nrings; r++) nofree += hc.stats[r].nofree;
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

