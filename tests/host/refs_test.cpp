/*
 * refs_test.cpp - libgpufs/common/refs.h on host threads (ThreadSanitizer).
 *
 * A small table used as the GPU file table uses it: threads open one of a
 * few keys (join an entry of that key without the lock, by add or by CAS,
 * or under the lock join one or create one), use it, and close it (drop without the lock
 * while not the last, else under the lock, where the last frees the entry
 * for reuse by any key).  Checked: a joined entry holds the key its joiner
 * looked for while the joiner uses it; no entry is freed while a user holds
 * it; no drop finds no reference; everything is free at the end.
 */
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "libgpufs/common/refs.h"
#include "tests/host/stress_util.h"

namespace {

using gpufs_test::failure;
using gpufs_test::mix64;
using gpufs_test::watchdog;

TEST(Refs, JoinByAddNeedsTheSameIncarnationAndLeavesNoMarkWhenItFails)
{
  uint64_t word = 0;
  const uint64_t w0 = gpufs_refs_read(&word);
  EXPECT_FALSE(gpufs_refs_join_add(&word, w0)) << "a never-used entry has no reference";
  EXPECT_EQ(0u, word) << "a failed join takes its mark back";
  gpufs_refs_renew(&word);
  const uint64_t w1 = gpufs_refs_read(&word);
  EXPECT_TRUE(gpufs_refs_join_add(&word, w1));
  EXPECT_TRUE(gpufs_refs_join_add(&word, w1)) << "the count changed, the generation did not";
  EXPECT_EQ(3u, gpufs_refs_count(word));
  EXPECT_EQ(0u, gpufs_refs_pending(word)) << "a taken join's mark became its reference";
  EXPECT_EQ(3u, gpufs_refs_drop_locked(&word));
  EXPECT_EQ(2u, gpufs_refs_drop_locked(&word));
  EXPECT_EQ(gpufs_refs_gen(w1), gpufs_refs_gen(word)) << "not the last drop";
  EXPECT_EQ(1u, gpufs_refs_drop_locked(&word));
  EXPECT_NE(gpufs_refs_gen(w1), gpufs_refs_gen(word)) << "the last drop starts a new generation";
  EXPECT_FALSE(gpufs_refs_join_add(&word, w1)) << "a closed incarnation";
  EXPECT_FALSE(gpufs_refs_join(&word, w1)) << "a closed incarnation, by CAS";
  gpufs_refs_renew(&word);
  EXPECT_FALSE(gpufs_refs_join_add(&word, w1)) << "an older incarnation's word";
  EXPECT_EQ(1u, gpufs_refs_count(word));
  EXPECT_EQ(0u, gpufs_refs_pending(word));
  EXPECT_TRUE(gpufs_refs_join_add(&word, gpufs_refs_read(&word)));
  EXPECT_EQ(2u, gpufs_refs_count(word));
}

/* A join by add in flight (its mark added, its verdict not yet) when the
 * last reference is dropped under the lock: the drop waits, then finds the
 * joiner's reference (not the last any more) or, if the join failed, drops
 * the last. */
TEST(Refs, LastDropWaitsForPendingJoins)
{
  for (int taken = 0; taken < 2; taken++) {
    uint64_t word = 0;
    gpufs_refs_renew(&word);
    const uint64_t w = gpufs_refs_read(&word);
    /* the first half of gpufs_refs_join_add, by hand */
    gpufs_add_acqrel_u64_dev(&word, GPUFS_REFS_PENDING_ONE);
    std::atomic<int> done{0};
    std::atomic<uint32_t> had{99};
    std::thread closer([&] {
      had = gpufs_refs_drop_locked(&word);
      done = 1;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(0, done.load()) << "the last drop went on with a join pending";
    EXPECT_EQ(gpufs_refs_gen(w), gpufs_refs_gen(gpufs_refs_read(&word)));
    /* the second half: the verdict */
    gpufs_add_acqrel_u64_dev(&word, taken ? 1ull - GPUFS_REFS_PENDING_ONE : 0ull - GPUFS_REFS_PENDING_ONE);
    closer.join();
    if (taken) {
      EXPECT_EQ(2u, had.load()) << "the joiner's reference: not the last";
      EXPECT_EQ(1u, gpufs_refs_count(word));
      EXPECT_EQ(gpufs_refs_gen(w), gpufs_refs_gen(word));
    } else {
      EXPECT_EQ(1u, had.load()) << "the join failed: the last";
      EXPECT_EQ(0u, gpufs_refs_count(word));
      EXPECT_NE(gpufs_refs_gen(w), gpufs_refs_gen(word));
    }
    EXPECT_EQ(0u, gpufs_refs_pending(word));
  }
}

TEST(Refs, JoinNeedsTheSameIncarnationWithAReference)
{
  uint64_t word = 0;
  uint64_t w0 = gpufs_refs_read(&word);
  EXPECT_FALSE(gpufs_refs_join(&word, w0)) << "a never-used entry has no reference";
  gpufs_refs_renew(&word);
  uint64_t w1 = gpufs_refs_read(&word);
  EXPECT_EQ(1u, gpufs_refs_count(w1));
  EXPECT_TRUE(gpufs_refs_join(&word, w1));
  EXPECT_TRUE(gpufs_refs_drop(&word)) << "2 -> 1 without the lock";
  EXPECT_FALSE(gpufs_refs_drop(&word)) << "the last reference is dropped under the lock";
  EXPECT_EQ(1u, gpufs_refs_drop_locked(&word));
  EXPECT_EQ(0u, gpufs_refs_drop_locked(&word)) << "nothing to drop";
  EXPECT_FALSE(gpufs_refs_join(&word, w1)) << "count 0";
  gpufs_refs_renew(&word);
  EXPECT_FALSE(gpufs_refs_join(&word, w1)) << "an older incarnation's word";
  EXPECT_TRUE(gpufs_refs_join(&word, gpufs_refs_read(&word)));
}

constexpr int kEntries = 6;
constexpr int kKeys = 4;

struct entry {
  uint64_t refs = 0;
  uint32_t key = 0;  /* 0: free; written under the lock, read by joiners */
  std::atomic<int> users{0};
};

struct table {
  std::mutex lock;
  entry e[kEntries];

  /* Open key k, joining without the lock by add or by CAS: the entry
   * index, or -1 when the table is full. */
  int open(uint32_t k, bool by_add)
  {
    for (int i = 0; i < kEntries; i++) {
      uint64_t w = gpufs_refs_read(&e[i].refs);
      if (gpufs_ld_relaxed_u32_dev(&e[i].key) == k &&
          (by_add ? gpufs_refs_join_add(&e[i].refs, w) : gpufs_refs_join(&e[i].refs, w)))
        return i;
    }
    std::lock_guard<std::mutex> g(lock);
    int free_slot = -1;
    for (int i = 0; i < kEntries; i++) {
      uint32_t key = gpufs_ld_relaxed_u32_dev(&e[i].key);
      if (key == k) {
        gpufs_refs_add(&e[i].refs);
        return i;
      }
      if (key == 0 && free_slot < 0) free_slot = i;
    }
    if (free_slot < 0) return -1;
    gpufs_st_relaxed_u32_dev(&e[free_slot].key, k);
    gpufs_refs_renew(&e[free_slot].refs);
    return free_slot;
  }

  void close(int i, failure &fl)
  {
    if (gpufs_refs_drop(&e[i].refs)) return;
    std::lock_guard<std::mutex> g(lock);
    uint32_t had = gpufs_refs_drop_locked(&e[i].refs);
    if (had == 0) fl.report("a drop found no reference");
    if (had == 1) {
      if (e[i].users.load() != 0) fl.report("the last drop freed an entry in use");
      gpufs_st_relaxed_u32_dev(&e[i].key, 0u);
    }
  }
};

TEST(Refs, StressJoinsDropsAndReuse)
{
  watchdog dog("Refs.StressJoinsDropsAndReuse");
  table t;
  failure fl;
  std::atomic<uint64_t> opens{0}, full{0};
  std::vector<std::thread> th;
  for (int n = 0; n < 8; n++) {
    th.emplace_back([&, n] {
      uint64_t x = mix64((uint64_t)n + 77);
      for (int it = 0; it < 60000 && !fl.any; it++) {
        x = mix64(x + (uint64_t)it);
        uint32_t k = 1 + (uint32_t)(x % kKeys);
        int i = t.open(k, (x >> 20) & 1);
        if (i < 0) {
          full++;
          continue;
        }
        opens++;
        t.e[i].users++;
        if (gpufs_ld_relaxed_u32_dev(&t.e[i].key) != k)
          fl.report("joined an entry that holds another key");
        if ((x >> 40) % 8 == 0) std::this_thread::yield();
        if (gpufs_ld_relaxed_u32_dev(&t.e[i].key) != k)
          fl.report("an entry changed key while in use");
        t.e[i].users--;
        t.close(i, fl);
      }
    });
  }
  for (auto &h : th) h.join();
  ASSERT_FALSE(fl.any) << fl.first;
  EXPECT_GT(opens.load(), 100000u);
  for (int i = 0; i < kEntries; i++) {
    EXPECT_EQ(0u, gpufs_refs_count(t.e[i].refs)) << i;
    EXPECT_EQ(0u, gpufs_refs_pending(t.e[i].refs)) << i << ": a join's mark left behind";
    EXPECT_EQ(0u, t.e[i].key) << i;
  }
}

} // namespace
