/*
 * queue_test.cpp - the request queue protocol of libgpufs/common/queue.h on
 * host threads.
 *
 * Producers play GPU groups (reserve k tickets, wait for their slots, fill,
 * post, wait for the answers, release), consumers play host workers (claim
 * runs, serve, complete).  Every field of a slot and its staging is written
 * and read with plain accesses, so a slot used by two owners at once shows
 * up as a wrong value or as a ThreadSanitizer race.  Small slot counts make
 * wrap-around and waiting for a free slot the common case.  The one-request
 * helpers (gpufs_q_fill, gpufs_q_read_req, gpufs_q_call) are checked field
 * by field and against the real daemon.
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>

#include "libgpufs/common/queue.h"
#include "tests/host/daemon_fixture.h"
#include "tests/host/stress_util.h"

namespace {

using namespace gpufs_test;

constexpr uint32_t kStride = 64;

/* A queue in host memory, laid out as the library lays it out. */
struct host_queue {
  std::vector<gpufs_slot> slots;
  gpufs_queue_hdr hdr{};
  uint64_t tail = 0;
  std::vector<uint64_t> free_seq;
  std::vector<uint8_t> staging;
  gpufs_queue_ref q{};

  host_queue(uint32_t nslots, uint32_t stride)
      : slots(nslots, gpufs_slot{}), free_seq(nslots), staging((size_t)nslots * stride, 0)
  {
    for (uint32_t i = 0; i < nslots; i++) free_seq[i] = i; /* slot i is free for ticket i */
    hdr.state = GPUFS_Q_RUNNING;
    hdr.nslots = nslots;
    hdr.stride = stride;
    q.slots = slots.data();
    q.hdr = &hdr;
    q.tail = &tail;
    q.free_seq = free_seq.data();
    q.staging_in = staging.data();
    q.staging_host = staging.data();
    q.nslots = nslots;
    q.stride = stride;
  }
  host_queue(const host_queue &) = delete;
  host_queue &operator=(const host_queue &) = delete;

  uint8_t *stage(uint64_t t) { return staging.data() + (size_t)gpufs_q_index(&q, t) * q.stride; }
  void stop() { gpufs_st_relaxed_u32_sys(&hdr.state, (uint32_t)GPUFS_Q_STOPPED); }
};

/* What a producer sends for (ticket, nonce) and what the consumer answers. */
uint64_t req_word(uint64_t t, uint32_t nonce, uint32_t w) { return mix64(t * 131 + nonce) ^ w; }
uint64_t reply_word(uint64_t t, uint32_t nonce, uint32_t w) { return ~req_word(t, nonce, w) * 3; }
int64_t reply_result(uint64_t t, uint32_t nonce) { return (int64_t)(t * 7 + nonce); }

void put_words(uint8_t *d, uint32_t len, uint64_t (*f)(uint64_t, uint32_t, uint32_t), uint64_t t,
               uint32_t nonce)
{
  for (uint32_t w = 0; w < len / 8; w++) {
    uint64_t v = f(t, nonce, w);
    memcpy(d + 8 * w, &v, 8);
  }
}

bool words_ok(const uint8_t *d, uint32_t len, uint64_t (*f)(uint64_t, uint32_t, uint32_t),
              uint64_t t, uint32_t nonce)
{
  for (uint32_t w = 0; w < len / 8; w++) {
    uint64_t v;
    memcpy(&v, d + 8 * w, 8);
    if (v != f(t, nonce, w)) return false;
  }
  return true;
}

/* ------------------------------------------------------------------ */
/* Single-threaded protocol                                             */
/* ------------------------------------------------------------------ */

void post_read(host_queue &hq, uint64_t t)
{
  ASSERT_EQ(gpufs_q_wait_free(&hq.q, t), 0);
  gpufs_slot *s = gpufs_q_slot(&hq.q, t);
  s->op = GPUFS_OP_READ;
  s->offset = t;
  s->len = 8;
  put_words(hq.stage(t), 8, req_word, t, 0);
  gpufs_q_post(&hq.q, t);
}

void serve(host_queue &hq, uint64_t first, uint32_t n)
{
  for (uint64_t t = first; t < first + n; t++) {
    gpufs_slot *s = gpufs_q_slot(&hq.q, t);
    EXPECT_EQ(s->offset, t);
    EXPECT_TRUE(words_ok(hq.stage(t), 8, req_word, t, 0));
    s->result = reply_result(t, 0);
    put_words(hq.stage(t), 8, reply_word, t, 0);
    gpufs_q_complete(s, t);
  }
}

/* Complete and release tickets [first, first + n) whatever they asked. */
void serve_any(host_queue &hq, uint64_t first, uint32_t n)
{
  for (uint64_t t = first; t < first + n; t++) {
    gpufs_slot *s = gpufs_q_slot(&hq.q, t);
    s->result = 0;
    gpufs_q_complete(s, t);
    ASSERT_EQ(gpufs_q_wait_done(&hq.q, t), 0);
    gpufs_q_release(&hq.q, t);
  }
}

void finish(host_queue &hq, uint64_t t)
{
  ASSERT_EQ(gpufs_q_wait_done(&hq.q, t), 0);
  EXPECT_EQ(gpufs_q_slot(&hq.q, t)->result, reply_result(t, 0));
  EXPECT_TRUE(words_ok(hq.stage(t), 8, reply_word, t, 0));
  gpufs_q_release(&hq.q, t);
}

TEST(QueueBasic, ClaimedRunsStopAtTheEndOfTheArrayAndAtGaps)
{
  host_queue hq(8, kStride);
  uint64_t first = 99;

  EXPECT_EQ(gpufs_q_claim(&hq.hdr, hq.slots.data(), 8, 8, 8, &first), 0u); /* nothing posted */
  ASSERT_EQ(gpufs_q_reserve(&hq.q, 6), 0u);
  for (uint64_t t = 0; t < 6; t++) post_read(hq, t);
  EXPECT_EQ(gpufs_q_claim(&hq.hdr, hq.slots.data(), 8, 4, 4, &first), 4u); /* max */
  EXPECT_EQ(first, 0u);
  EXPECT_EQ(gpufs_q_claim(&hq.hdr, hq.slots.data(), 8, 8, 8, &first), 2u);
  EXPECT_EQ(first, 4u);
  serve(hq, 0, 6);
  for (uint64_t t = 0; t < 6; t++) finish(hq, t);

  /* tickets 6..9 occupy slots 6, 7, 0, 1: two runs, never one that wraps */
  ASSERT_EQ(gpufs_q_reserve(&hq.q, 4), 6u);
  for (uint64_t t = 6; t < 10; t++) post_read(hq, t);
  ASSERT_EQ(gpufs_q_claim(&hq.hdr, hq.slots.data(), 8, 8, 8, &first), 2u);
  EXPECT_EQ(first, 6u);
  ASSERT_EQ(gpufs_q_claim(&hq.hdr, hq.slots.data(), 8, 8, 8, &first), 2u);
  EXPECT_EQ(first, 8u);
  serve(hq, 6, 4);
  for (uint64_t t = 6; t < 10; t++) finish(hq, t);

  /* a run ends at the first ticket not yet posted */
  ASSERT_EQ(gpufs_q_reserve(&hq.q, 3), 10u);
  post_read(hq, 10);
  ASSERT_EQ(gpufs_q_wait_free(&hq.q, 11), 0);
  post_read(hq, 12);
  ASSERT_EQ(gpufs_q_claim(&hq.hdr, hq.slots.data(), 8, 8, 8, &first), 1u);
  EXPECT_EQ(first, 10u);
  EXPECT_EQ(gpufs_q_claim(&hq.hdr, hq.slots.data(), 8, 8, 8, &first), 0u);
  gpufs_slot *s = gpufs_q_slot(&hq.q, 11);
  s->op = GPUFS_OP_READ;
  s->offset = 11;
  s->len = 8;
  put_words(hq.stage(11), 8, req_word, 11, 0);
  gpufs_q_post(&hq.q, 11);
  ASSERT_EQ(gpufs_q_claim(&hq.hdr, hq.slots.data(), 8, 8, 8, &first), 2u);
  EXPECT_EQ(first, 11u);
  serve(hq, 10, 3);
  for (uint64_t t = 10; t < 13; t++) finish(hq, t);
  EXPECT_EQ(hq.hdr.host_head, 13u);
  EXPECT_EQ(hq.tail, 13u);
}

void post_page(host_queue &hq, uint64_t t, uint32_t op, int32_t hfid, uint64_t page)
{
  ASSERT_EQ(gpufs_q_wait_free(&hq.q, t), 0);
  gpufs_slot *s = gpufs_q_slot(&hq.q, t);
  s->op = op;
  s->hfid = hfid;
  s->offset = page * kStride;
  s->len = kStride;
  gpufs_q_post(&hq.q, t);
}

/* Past max, a claim goes on while the next posted ticket continues the
 * READ or WRITE run of the last (same op and file, the next bytes), up to
 * run_max: a run a group posted at once is one worker's, served by one
 * host call.  Another file, another op, a gap, run_max, a ticket not yet
 * posted and the end of the array each end it. */
TEST(QueueBasic, ClaimTakesARunPastMax)
{
  host_queue hq(32, kStride);
  uint64_t first = 99;
  ASSERT_EQ(gpufs_q_reserve(&hq.q, 30), 0u);
  for (uint64_t t = 0; t < 6; t++) post_page(hq, t, GPUFS_OP_READ, 1, 10 + t);
  post_page(hq, 6, GPUFS_OP_READ, 2, 16);  /* another file */
  post_page(hq, 7, GPUFS_OP_READ, 2, 17);
  post_page(hq, 8, GPUFS_OP_WRITE, 2, 18); /* another op */
  post_page(hq, 9, GPUFS_OP_WRITE, 2, 19);
  post_page(hq, 10, GPUFS_OP_WRITE, 2, 21); /* a gap */
  for (uint64_t t = 11; t < 30; t++) post_page(hq, t, GPUFS_OP_READ, 3, t);
  EXPECT_EQ(gpufs_q_claim(&hq.hdr, hq.slots.data(), 32, 4, 64, &first), 6u);
  EXPECT_EQ(first, 0u);
  EXPECT_EQ(gpufs_q_claim(&hq.hdr, hq.slots.data(), 32, 1, 64, &first), 2u);
  EXPECT_EQ(first, 6u);
  EXPECT_EQ(gpufs_q_claim(&hq.hdr, hq.slots.data(), 32, 1, 64, &first), 2u);
  EXPECT_EQ(first, 8u);
  EXPECT_EQ(gpufs_q_claim(&hq.hdr, hq.slots.data(), 32, 1, 64, &first), 1u);
  EXPECT_EQ(first, 10u);
  EXPECT_EQ(gpufs_q_claim(&hq.hdr, hq.slots.data(), 32, 2, 8, &first), 8u) << "run_max";
  EXPECT_EQ(first, 11u);
  EXPECT_EQ(gpufs_q_claim(&hq.hdr, hq.slots.data(), 32, 2, 64, &first), 11u) << "not posted";
  EXPECT_EQ(first, 19u);
  /* tickets 30..33: slots 30, 31, 0, 1 of one run; the claim stops at the
   * end of the array */
  serve_any(hq, 0, 30);
  ASSERT_EQ(gpufs_q_reserve(&hq.q, 4), 30u);
  for (uint64_t t = 30; t < 34; t++) post_page(hq, t, GPUFS_OP_READ, 4, t);
  EXPECT_EQ(gpufs_q_claim(&hq.hdr, hq.slots.data(), 32, 1, 64, &first), 2u);
  EXPECT_EQ(first, 30u);
  EXPECT_EQ(gpufs_q_claim(&hq.hdr, hq.slots.data(), 32, 1, 64, &first), 2u);
  EXPECT_EQ(first, 32u);
}

TEST(QueueBasic, SlotIsFreeOnlyAfterReleaseOfTheTicketBefore)
{
  watchdog wd("slot release");
  host_queue hq(4, kStride);
  ASSERT_EQ(gpufs_q_reserve(&hq.q, 4), 0u);
  for (uint64_t t = 0; t < 4; t++) post_read(hq, t);
  ASSERT_EQ(gpufs_q_reserve(&hq.q, 1), 4u);

  std::atomic<int> rc{1};
  std::thread w([&] { rc = gpufs_q_wait_free(&hq.q, 4); });
  uint64_t first;
  ASSERT_EQ(gpufs_q_claim(&hq.hdr, hq.slots.data(), 4, 4, 4, &first), 4u);
  serve(hq, 0, 4);
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(rc.load(), 1); /* served is not released */
  for (uint64_t t = 1; t < 4; t++) finish(hq, t);
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(rc.load(), 1); /* other slots do not help */
  finish(hq, 0);
  w.join();
  EXPECT_EQ(rc.load(), 0);
}

/* ------------------------------------------------------------------ */
/* Stop                                                                 */
/* ------------------------------------------------------------------ */

TEST(QueueStop, WaitDoneGivesUp)
{
  watchdog wd("wait_done after stop");
  host_queue hq(16, kStride);
  ASSERT_EQ(gpufs_q_reserve(&hq.q, 1), 0u);
  post_read(hq, 0);
  std::atomic<int> rc{1};
  std::thread w([&] { rc = gpufs_q_wait_done(&hq.q, 0); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(rc.load(), 1); /* nobody serves: still waiting */
  hq.stop();
  w.join();
  EXPECT_EQ(rc.load(), -GPUFS_ESHUTDOWN);
}

TEST(QueueStop, WaitFreeGivesUp)
{
  watchdog wd("wait_free after stop");
  host_queue hq(16, kStride);
  ASSERT_EQ(gpufs_q_reserve(&hq.q, 16), 0u); /* every slot taken, none released */
  for (uint64_t t = 0; t < 16; t++) post_read(hq, t);
  ASSERT_EQ(gpufs_q_reserve(&hq.q, 2), 16u);
  std::atomic<int> rc16{1}, rc17{1};
  std::thread w16([&] { rc16 = gpufs_q_wait_free(&hq.q, 16); });
  std::thread w17([&] { rc17 = gpufs_q_wait_free(&hq.q, 17); });
  uint64_t first;
  ASSERT_EQ(gpufs_q_claim(&hq.hdr, hq.slots.data(), 16, 16, 16, &first), 16u);
  serve(hq, 0, 16);
  finish(hq, 0); /* frees slot 0 for ticket 16 only */
  w16.join();
  EXPECT_EQ(rc16.load(), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(rc17.load(), 1);
  hq.stop();
  w17.join();
  EXPECT_EQ(rc17.load(), -GPUFS_ESHUTDOWN);
}

/* ------------------------------------------------------------------ */
/* One request: gpufs_req, gpufs_q_fill, gpufs_q_call                   */
/* ------------------------------------------------------------------ */

TEST(QueueReq, FillAndReadReqRoundTripEveryField)
{
  host_queue hq(4, kStride);
  const uint64_t t = gpufs_q_reserve(&hq.q, 1);
  ASSERT_EQ(gpufs_q_wait_free(&hq.q, t), 0);
  gpufs_slot *s = gpufs_q_slot(&hq.q, t);
  s->result = 77;
  for (int i = 0; i < 4; i++) s->out[i] = 100 + i;
  /* every bit pattern distinct, hfid negative, len and offset past 31 bits */
  const gpufs_req r = {GPUFS_OP_FADVISE, -7, 0x0123456789abcdefull, 0xfedcba98u, 0x13579bdfu};
  gpufs_q_fill(s, &r);
  EXPECT_EQ(s->req_seq, 0u); /* not posted yet */
  EXPECT_EQ(s->done_seq, 0u);
  EXPECT_EQ(s->result, 77);   /* the reply is left alone */
  EXPECT_EQ(s->out[3], 103u);
  gpufs_q_post(&hq.q, t);
  uint64_t first;
  ASSERT_EQ(gpufs_q_claim(&hq.hdr, hq.slots.data(), 4, 4, 4, &first), 1u);
  ASSERT_EQ(first, t);
  gpufs_req got;
  memset(&got, 0xee, sizeof(got));
  gpufs_q_read_req(s, &got);
  EXPECT_EQ(got.op, (uint32_t)GPUFS_OP_FADVISE);
  EXPECT_EQ(got.hfid, -7);
  EXPECT_EQ(got.offset, 0x0123456789abcdefull);
  EXPECT_EQ(got.len, 0xfedcba98u);
  EXPECT_EQ(got.arg, 0x13579bdfu);
  const gpufs_reply rep = {-GPUFS_EINVAL, {~0ull, 1, 1ull << 63, 42}};
  gpufs_q_put_reply(s, &rep);
  gpufs_q_complete(s, t);
  ASSERT_EQ(gpufs_q_wait_done(&hq.q, t), 0);
  gpufs_reply back;
  gpufs_q_read_reply(s, &back);
  EXPECT_EQ(back.result, -GPUFS_EINVAL);
  for (int i = 0; i < 4; i++) EXPECT_EQ(back.out[i], rep.out[i]) << "out[" << i << "]";
  gpufs_q_release(&hq.q, t);
}

/* gpufs_q_call against the real daemon: OPEN with its path as payload,
 * FSTAT, a bad descriptor, and -ESHUTDOWN once the daemon has stopped. */
TEST(QueueReq, CallIsAnsweredByTheDaemonAndGivesUpAfterStop)
{
  watchdog wd("gpufs_q_call");
  TempDir dir;
  const std::string path = dir.file("call");
  const uint64_t size = 12345;
  ASSERT_EQ(0, write_pattern_file(path, size, 3));
  struct stat st;
  ASSERT_EQ(0, stat(path.c_str(), &st));
  CpuQueue q(8, 4096, false);
  gpufs_daemon_params p = q.params(2, 8, 8);
  gpufs_daemon *d = nullptr;
  ASSERT_EQ(0, gpufs_daemon_start(&p, &d));

  gpufs_reply rep{};
  const gpufs_req r_open = {GPUFS_OP_OPEN, -1, 0, (uint32_t)path.size(), O_RDONLY};
  const int64_t h = gpufs_q_call(&q.ref, &r_open, path.c_str(), (uint32_t)path.size() + 1, &rep);
  ASSERT_GE(h, 0);
  EXPECT_EQ(rep.result, h);
  EXPECT_EQ(rep.out[0], size);
  for (int i = 0; i < 20; i++) { /* more calls than slots: each gives its slot back */
    const gpufs_req r_fstat = {GPUFS_OP_FSTAT, (int32_t)h, 0, 0, 0};
    rep = gpufs_reply{};
    ASSERT_EQ(0, gpufs_q_call(&q.ref, &r_fstat, nullptr, 0, &rep)) << i;
    EXPECT_EQ(rep.out[0], size);
    EXPECT_EQ(rep.out[1], (uint64_t)st.st_mode);
    EXPECT_EQ(rep.out[3], (uint64_t)st.st_ino);
  }
  const gpufs_req r_bad = {GPUFS_OP_FSTAT, (int32_t)h + 1, 0, 0, 0};
  EXPECT_EQ(-GPUFS_EBADF, gpufs_q_call(&q.ref, &r_bad, nullptr, 0, &rep));
  EXPECT_EQ(rep.result, -GPUFS_EBADF);
  const gpufs_req r_close = {GPUFS_OP_CLOSE, (int32_t)h, 0, 0, 0};
  EXPECT_EQ(0, gpufs_q_call(&q.ref, &r_close, nullptr, 0, &rep));

  gpufs_daemon_stop(d);
  rep = gpufs_reply{5, {6, 7, 8, 9}};
  const gpufs_req r_again = {GPUFS_OP_FSTAT, (int32_t)h, 0, 0, 0};
  EXPECT_EQ(-GPUFS_ESHUTDOWN, gpufs_q_call(&q.ref, &r_again, nullptr, 0, &rep));
  EXPECT_EQ(rep.result, 5); /* untouched */
  EXPECT_EQ(rep.out[3], 9u);
}

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
  host_queue hq(p.nslots, kStride);
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
        len[j] = rng() % 2 ? kStride : 8 * (1 + (uint32_t)(rng() % (kStride / 8)));
        /* consecutive tickets of whole pages form runs; the one slot filler
         * (relaxed stores: a claim may read an unclaimed slot's fields) */
        const gpufs_req req = {GPUFS_OP_READ, (int32_t)id, t * kStride, len[j], nonce[j]};
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
        if (a->hfid != b->hfid || a->len != kStride || b->offset != a->offset + a->len)
          return bad("run past max that does not continue", first + j);
      }
      if (first % N + n > N) return bad("run wraps around the array", first);
      if (first + n > max_tickets) return bad("run beyond all reservations", first);
      runs[id].push_back({first, n});
      for (uint64_t t = first; t < first + n; t++) {
        if (served[t].exchange(1) != 0) return bad("served twice", t);
        const gpufs_slot *s = gpufs_q_slot(&hq.q, t);
        if (s->op != GPUFS_OP_READ || s->offset != t * kStride || s->len == 0 || s->len > kStride ||
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
