/*
 * dirty_test.cpp - libgpufs/common/dirty.h on host threads (ThreadSanitizer).
 *
 * The runs a cursor finds in a bitmap; and a stress run in which writers
 * store into grains and mark them while flushers take lists and "write
 * back" (copy grains to a shadow file), some write-backs failing.  After a
 * final flush the shadow file must equal the frames byte for byte, every
 * bitmap word must be 0 and no frame DIRTY, WB or pinned: no write lost,
 * none written back out of order.
 */
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <utility>
#include <vector>

#include "libgpufs/common/dirty.h"
#include "tests/host/host_cache.h"
#include "tests/host/stress_util.h"

namespace {

using gpufs_test::failure;
using gpufs_test::mix64;
using gpufs_test::watchdog;

std::vector<std::pair<uint32_t, uint32_t>> runs_of(host_cache &hc, uint32_t f)
{
  std::vector<std::pair<uint32_t, uint32_t>> out;
  struct gpufs_dirty_cursor k;
  gpufs_dirty_cursor_init(&k, &hc.c, f);
  uint32_t g0, g1;
  while (gpufs_dirty_next_run(&k, &g0, &g1)) out.push_back({g0, g1});
  return out;
}

TEST(Dirty, CursorFindsEveryRun)
{
  host_cache hc(2, 16384, 1); /* 256 grains: 8 words */
  std::vector<std::pair<uint32_t, uint32_t>> want = {
      {0, 1}, {3, 5}, {31, 33}, {40, 96}, {100, 101}, {127, 160}, {200, 256}};
  for (auto &r : want) gpufs_dirty_bits(&hc.c, 1, r.first * 64, r.second * 64);
  EXPECT_EQ(want, runs_of(hc, 1));
  for (uint32_t w = 0; w < hc.c.dwords; w++) EXPECT_EQ(0u, hc.dirty[hc.c.dwords + w]);
  EXPECT_TRUE(runs_of(hc, 1).empty());
  /* byte ranges round out to whole grains */
  gpufs_dirty_bits(&hc.c, 0, 65, 130);
  std::vector<std::pair<uint32_t, uint32_t>> grains = {{1, 3}};
  EXPECT_EQ(grains, runs_of(hc, 0));
  gpufs_dirty_bits(&hc.c, 0, 0, 16384);
  grains = {{0, 256}};
  EXPECT_EQ(grains, runs_of(hc, 0));
}

TEST(Dirty, FlagSaysWhoPushes)
{
  host_cache hc(1, 4096, 1);
  hc.frames[0].state = (uint32_t)GPUFS_PG_VALID << GPUFS_PG_SHIFT;
  EXPECT_TRUE(gpufs_dirty_flag(&hc.c, 0));
  EXPECT_FALSE(gpufs_dirty_flag(&hc.c, 0));
  uint32_t head = GPUFS_NIL;
  gpufs_dlist_push(&hc.c, &head, 0, 7);
  EXPECT_EQ(0u, gpufs_dlist_take(&head));
  EXPECT_EQ(GPUFS_NIL, head);
  EXPECT_EQ(7u, hc.frames[0].wfile);
  gpufs_dirty_take(&hc.c, 0);
  EXPECT_EQ(GPUFS_PG_WB | 1u, hc.word(0) & (GPUFS_PG_WB | GPUFS_PG_DIRTY | GPUFS_PG_PINS));
  EXPECT_TRUE(gpufs_dirty_flag(&hc.c, 0)) << "a write after the take pushes again";
  gpufs_dirty_done(&hc.c, 0);
  EXPECT_EQ(GPUFS_PG_DIRTY, hc.word(0) & (GPUFS_PG_WB | GPUFS_PG_DIRTY | GPUFS_PG_PINS));
}

constexpr uint32_t kPage = 4096;
constexpr uint32_t kWords = kPage / 8;
constexpr uint32_t kFrames = 16;
constexpr uint32_t kLists = 4;

struct dirty_world {
  host_cache hc{kFrames, kPage, 1};
  std::vector<uint32_t> heads = std::vector<uint32_t>(kLists, GPUFS_NIL);
  std::vector<uint64_t> disk = std::vector<uint64_t>((size_t)kFrames * kWords, 0);
  std::vector<std::atomic<uint32_t>> writing = std::vector<std::atomic<uint32_t>>(kFrames);

  dirty_world()
  {
    for (auto &f : hc.frames) f.state = (uint32_t)GPUFS_PG_VALID << GPUFS_PG_SHIFT;
  }
  uint64_t *word(uint32_t f, uint32_t w) { return (uint64_t *)hc.data.data() + (size_t)f * kWords + w; }

  /* One flusher's pass over list k; fails runs when fail_one says so. */
  template <typename F> void flush(uint32_t k, F fail_one, failure &fl)
  {
    uint32_t f = gpufs_dlist_take(&heads[k]);
    while (f != GPUFS_NIL) {
      uint32_t next = gpufs_dlist_next(&hc.c, f);
      gpufs_dirty_take(&hc.c, f);
      if (writing[f].fetch_add(1) != 0) fl.report("two write-backs of one frame at once");
      struct gpufs_dirty_cursor cur;
      gpufs_dirty_cursor_init(&cur, &hc.c, f);
      uint32_t g0, g1;
      bool failed = false;
      while (gpufs_dirty_next_run(&cur, &g0, &g1)) {
        if (fail_one()) {
          gpufs_dirty_bits(&hc.c, f, g0 * GPUFS_DIRTY_GRAIN, g1 * GPUFS_DIRTY_GRAIN);
          failed = true;
          continue;
        }
        for (uint32_t w = g0 * GPUFS_DIRTY_GRAIN / 8; w < g1 * GPUFS_DIRTY_GRAIN / 8; w++)
          disk[(size_t)f * kWords + w] = gpufs_ld_relaxed_u64_dev(word(f, w));
      }
      writing[f].fetch_sub(1);
      if (failed && gpufs_dirty_flag(&hc.c, f)) gpufs_dlist_push(&hc.c, &heads[k], f, k);
      gpufs_dirty_done(&hc.c, f);
      f = next;
    }
  }
};

TEST(Dirty, StressNoWriteIsLost)
{
  watchdog dog("Dirty.StressNoWriteIsLost");
  dirty_world world;
  failure fl;
  constexpr int kWriters = 6, kFlushers = 4;
  constexpr uint64_t kIters = 40000;
  std::atomic<int> writers_left{kWriters};
  std::vector<std::thread> th;
  for (int t = 0; t < kWriters; t++) {
    th.emplace_back([&, t] {
      uint64_t x = mix64((uint64_t)t + 1);
      for (uint64_t i = 0; i < kIters && !fl.any; i++) {
        x = mix64(x + i);
        uint32_t f = (uint32_t)(x % kFrames);
        uint32_t w0 = (uint32_t)((x >> 8) % kWords);
        uint32_t n = 1 + (uint32_t)((x >> 20) % 40);
        uint32_t w1 = w0 + n < kWords ? w0 + n : kWords;
        gpufs_add_acqrel_u32_dev(&world.hc.frames[f].state, 1u); /* pin */
        for (uint32_t w = w0; w < w1; w++)
          gpufs_st_relaxed_u64_dev(world.word(f, w), ((uint64_t)t << 48) | i);
        gpufs_dirty_bits(&world.hc.c, f, w0 * 8, w1 * 8);
        if (gpufs_dirty_flag(&world.hc.c, f))
          gpufs_dlist_push(&world.hc.c, &world.heads[(uint32_t)t % kLists], f, 0);
        gpufs_frame_unpin(&world.hc.c, f);
      }
      writers_left--;
    });
  }
  for (int t = 0; t < kFlushers; t++) {
    th.emplace_back([&, t] {
      uint64_t x = mix64(1000 + (uint64_t)t);
      while (writers_left > 0 && !fl.any) {
        x = mix64(x);
        world.flush((uint32_t)(x % kLists), [&] { return (x = mix64(x)) % 10 == 0; }, fl);
      }
    });
  }
  for (auto &h : th) h.join();
  ASSERT_FALSE(fl.any) << fl.first;
  for (uint32_t k = 0; k < kLists; k++) world.flush(k, [] { return false; }, fl);
  for (uint32_t f = 0; f < kFrames; f++) {
    EXPECT_EQ(0u, world.hc.word(f) & (GPUFS_PG_DIRTY | GPUFS_PG_WB | GPUFS_PG_PINS)) << f;
    for (uint32_t w = 0; w < world.hc.c.dwords; w++)
      ASSERT_EQ(0u, world.hc.dirty[(size_t)f * world.hc.c.dwords + w]) << f;
    for (uint32_t w = 0; w < kWords; w++)
      ASSERT_EQ(*world.word(f, w), world.disk[(size_t)f * kWords + w])
          << "frame " << f << " word " << w << ": a write was lost or written back stale";
  }
  for (uint32_t k = 0; k < kLists; k++) EXPECT_EQ(GPUFS_NIL, world.heads[k]);
}

} // namespace
