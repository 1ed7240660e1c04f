/*
 * queue_stress_test.cpp - the request queue protocol of
 * libgpufs/common/queue.h under many host threads.
 *
 * Producers play GPU groups (reserve k tickets, wait for their slots, fill
 * with gpufs_q_fill, post, wait for the answers, release), consumers play
 * host workers (claim runs, past their max where tickets continue a run,
 * serve, complete).  Staging is written and read with plain accesses, so a
 * slot used by two owners at once shows up as a wrong value or as a
 * ThreadSanitizer race; the request fields are filled with relaxed stores,
 * as the GPU fills them, because a claim reads the fields of slots it has
 * not won yet.  Small slot counts make wrap-around and waiting for a free
 * slot the common case.
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tests/host/queue_util.h"

namespace {

using namespace gpufs_test;

/* ------------------------------------------------------------------ */
/* Stress                                                               */
/* ------------------------------------------------------------------ */

struct queue_params {
  uint32_t nslots;
  uint32_t nproducers;
  uint32_t nconsumers;
  uint32_t requests; /* per producer; each reserves 1..8 tickets */
  uint64_t stop_after; /* 0: serve everything; else consumers quit after this many
                          tickets and the queue is stopped */
};

struct run_rec {
  uint64_t first;
  uint32_t n;
};

void run_queue_stress(const queue_params &p)
{
  host_queue hq(p.nslots, kQStride);
  const uint32_t N = p.nslots;
  const uint32_t kmax = std::min(8u, N);
  const uint64_t max_tickets = (uint64_t)p.nproducers * p.requests * kmax;
  std::vector<std::atomic<uint8_t>> served(max_tickets);
  for (auto &b : served) b = 0;
  std::atomic<uint64_t> nserved{0};
  std::atomic<uint32_t> producers_left{p.nproducers};
  std::vector<std::vector<run_rec>> runs(p.nconsumers);
  std::vector<uint64_t> contended(p.nproducers, 0), shutdowns(p.nproducers, 0),
      tickets(p.nproducers, 0);
  failure fail;
  auto report = [&](const std::string &what) {
    fail.report(what);
    hq.stop(); /* wake every waiter so that the failing run ends */
  };

  auto producer = [&](uint32_t id) {
    std::mt19937_64 rng(0xfeed0000u + id);
    auto bad = [&](const std::string &what, uint64_t t) {
      report("producer " + std::to_string(id) + " ticket " + std::to_string(t) + ": " + what);
    };
    std::vector<uint32_t> nonce(kmax), len(kmax);
    for (uint32_t r = 0; r < p.requests && !fail.any.load(std::memory_order_relaxed); r++) {
      const uint32_t k = 1 + (uint32_t)(rng() % kmax);
      const uint64_t t0 = gpufs_q_reserve(&hq.q, k);
      if (t0 + k > max_tickets) return bad("tail beyond all reservations", t0);
      tickets[id] += k;
      const bool interleave = rng() % 2; /* post each at once, or all at the end */
      for (uint32_t j = 0; j < k; j++) {
        const uint64_t t = t0 + j;
        /* relaxed: only counts whether this wait will have to wait */
        if (gpufs_ld_relaxed_u64_dev(&hq.free_seq[gpufs_q_index(&hq.q, t)]) != t) contended[id]++;
        int rc = gpufs_q_wait_free(&hq.q, t);
        if (rc == -GPUFS_ESHUTDOWN && p.stop_after) {
          shutdowns[id]++;
          producers_left--;
          return;
        }
        if (rc != 0) return bad("wait_free " + std::to_string(rc), t);
        gpufs_slot *s = gpufs_q_slot(&hq.q, t);
        /* the slot is as ticket t - N left it: posted, served, no one since */
        uint64_t prev = t >= N ? t - N + 1 : 0;
        if (gpufs_ld_relaxed_u64_sys(&s->req_seq) != prev ||
            gpufs_ld_relaxed_u64_sys(&s->done_seq) != prev)
          return bad("free slot with foreign sequence numbers", t);
        nonce[j] = (uint32_t)rng();
        /* whole pages half the time: runs a claim may take past its max */
        len[j] = rng() % 2 ? kQStride : 8 * (1 + (uint32_t)(rng() % (kQStride / 8)));
        /* consecutive tickets of whole pages form runs; the one slot filler
         * (relaxed stores: a claim may read an unclaimed slot's fields) */
        const gpufs_req req = {GPUFS_OP_READ, (int32_t)id, t * kQStride, len[j], nonce[j]};
        gpufs_q_fill(s, &req);
        s->result = -1;
        put_words(hq.stage(t), len[j], req_word, t, nonce[j]);
        if (interleave) gpufs_q_post(&hq.q, t);
      }
      if (!interleave)
        for (uint32_t j = 0; j < k; j++) gpufs_q_post(&hq.q, t0 + j);
      for (uint32_t j = 0; j < k; j++) {
        const uint64_t t = t0 + j;
        int rc = gpufs_q_wait_done(&hq.q, t);
        if (rc == -GPUFS_ESHUTDOWN && p.stop_after) {
          shutdowns[id]++;
          producers_left--;
          return;
        }
        if (rc != 0) return bad("wait_done " + std::to_string(rc), t);
        const gpufs_slot *s = gpufs_q_slot(&hq.q, t);
        if (s->result != reply_result(t, nonce[j])) return bad("wrong result", t);
        if (s->out[0] != t || s->out[1] >= p.nconsumers) return bad("wrong out[0..1]", t);
        const uint64_t rf = s->out[2], rn = s->out[3];
        if (t < rf || t >= rf + rn || rf % N + rn > N) return bad("served in a bad run", t);
        if (!words_ok(hq.stage(t), len[j], reply_word, t, nonce[j]))
          return bad("wrong reply bytes", t);
        if (rng() % 16 == 0) std::this_thread::yield(); /* hold the slot a while */
        gpufs_q_release(&hq.q, t);
      }
    }
    producers_left--;
  };

  auto consumer = [&](uint32_t id) {
    std::mt19937_64 rng(0xc0de0000u + id);
    auto bad = [&](const std::string &what, uint64_t t) {
      report("consumer " + std::to_string(id) + " ticket " + std::to_string(t) + ": " + what);
    };
    while (!fail.any.load(std::memory_order_relaxed)) {
      if (p.stop_after && nserved.load() >= p.stop_after) return;
      const uint32_t max = 1 + (uint32_t)(rng() % N);
      /* past max only runs of continuing tickets (gpufs_q_continues) */
      const uint32_t run_max = max + (uint32_t)(rng() % N);
      uint64_t first = 0;
      const uint32_t n = gpufs_q_claim(&hq.hdr, hq.slots.data(), N, max, run_max, &first);
      if (n == 0) {
        if (producers_left.load() == 0) return;
        std::this_thread::yield();
        continue;
      }
      if (n > run_max) return bad("run longer than run_max", first);
      for (uint32_t j = max; j < n; j++) { /* past max: each continues the run */
        const gpufs_slot *a = gpufs_q_slot(&hq.q, first + j - 1), *b = gpufs_q_slot(&hq.q, first + j);
        if (a->hfid != b->hfid || a->len != kQStride || b->offset != a->offset + a->len)
          return bad("run past max that does not continue", first + j);
      }
      if (first % N + n > N) return bad("run wraps around the array", first);
      if (first + n > max_tickets) return bad("run beyond all reservations", first);
      runs[id].push_back({first, n});
      for (uint64_t t = first; t < first + n; t++) {
        if (served[t].exchange(1) != 0) return bad("served twice", t);
        const gpufs_slot *s = gpufs_q_slot(&hq.q, t);
        if (s->op != GPUFS_OP_READ || s->offset != t * kQStride || s->len == 0 || s->len > kQStride ||
            s->hfid < 0 || (uint32_t)s->hfid >= p.nproducers)
          return bad("slot fields not the producer's", t);
        if (!words_ok(hq.stage(t), s->len, req_word, t, s->arg)) return bad("wrong payload", t);
      }
      if (rng() % 8 == 0) std::this_thread::yield(); /* the pread */
      const bool backwards = rng() % 2;
      for (uint32_t i = 0; i < n; i++) {
        const uint64_t t = backwards ? first + n - 1 - i : first + i;
        gpufs_slot *s = gpufs_q_slot(&hq.q, t);
        s->result = reply_result(t, s->arg);
        s->out[0] = t;
        s->out[1] = id;
        s->out[2] = first;
        s->out[3] = n;
        put_words(hq.stage(t), s->len, reply_word, t, s->arg);
        gpufs_q_complete(s, t);
        nserved++;
      }
    }
  };

  auto t_start = std::chrono::steady_clock::now();
  {
    watchdog wd("queue stress");
    std::vector<std::thread> th;
    for (uint32_t i = 0; i < p.nproducers; i++) th.emplace_back(producer, i);
    std::vector<std::thread> cons;
    for (uint32_t i = 0; i < p.nconsumers; i++) cons.emplace_back(consumer, i);
    for (auto &x : cons) x.join();
    if (p.stop_after) hq.stop(); /* the workers are gone: every waiter must give up */
    for (auto &x : th) x.join();
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  ASSERT_FALSE(fail.any.load()) << fail.first;

  /* the claimed runs tile [0, host_head): consecutive, no gap, no overlap */
  std::vector<run_rec> all;
  for (auto &v : runs) all.insert(all.end(), v.begin(), v.end());
  std::sort(all.begin(), all.end(), [](const run_rec &a, const run_rec &b) { return a.first < b.first; });
  uint64_t next = 0;
  for (const run_rec &r : all) {
    ASSERT_EQ(r.first, next) << "runs leave a gap or overlap";
    next += r.n;
  }
  EXPECT_EQ(next, hq.hdr.host_head);
  EXPECT_EQ(next, nserved.load());
  uint64_t reserved = 0, ncontended = 0, nshutdown = 0;
  for (uint32_t i = 0; i < p.nproducers; i++) {
    reserved += tickets[i];
    ncontended += contended[i];
    nshutdown += shutdowns[i];
  }
  EXPECT_EQ(hq.tail, reserved);
  for (uint64_t t = 0; t < reserved; t++)
    if (t < next) ASSERT_EQ(served[t].load(), 1) << "ticket " << t << " never served";
    else ASSERT_EQ(served[t].load(), 0) << "ticket " << t;
  if (p.stop_after) {
    EXPECT_LT(next, reserved); /* it really stopped mid-way */
    EXPECT_GT(nshutdown, 0u);  /* and every waiter gave up: the joins returned */
  } else {
    EXPECT_EQ(next, reserved);
    EXPECT_EQ(nshutdown, 0u);
    /* every slot went round many times, and slots were waited for */
    EXPECT_GT(reserved, 100u * N);
    EXPECT_GT(ncontended, 0u);
  }
  printf("  %u slots, %u producers, %u consumers: %lu tickets in %lu runs (%.2f per run), "
         "%lu waits for a slot, %.2f s\n",
         N, p.nproducers, p.nconsumers, (unsigned long)reserved, (unsigned long)all.size(),
         all.empty() ? 0.0 : (double)next / all.size(), (unsigned long)ncontended, secs);
}

TEST(QueueStress, SixteenSlots)
{
  run_queue_stress({16, 8, 4, 25000, 0});
}

TEST(QueueStress, SixtyFourSlots)
{
  run_queue_stress({64, 8, 4, 25000, 0});
}

/* Workers quit half-way and the queue stops: every producer returns. */
TEST(QueueStress, StopWhileBusy)
{
  run_queue_stress({16, 8, 4, 6000, 100000});
}

} // namespace
