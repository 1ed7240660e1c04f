/*
 * queue_test.cpp - the request queue protocol of libgpufs/common/queue.h on
 * host threads.
 *
 * Single-threaded: claims (runs, gaps, the end of the array, runs past
 * max), slot reuse, stop, and the one-request helpers (gpufs_q_fill,
 * gpufs_q_read_req, gpufs_q_call) field by field and against the real
 * daemon.  The many-thread stress is queue_stress_test.cpp.
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
#include "tests/host/queue_util.h"
#include "tests/host/stress_util.h"

namespace {

using namespace gpufs_test;

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
  host_queue hq(8, kQStride);
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
  s->offset = page * kQStride;
  s->len = kQStride;
  gpufs_q_post(&hq.q, t);
}

/* Past max, a claim goes on while the next posted ticket continues the
 * READ or WRITE run of the last (same op and file, the next bytes), up to
 * run_max: a run a group posted at once is one worker's, served by one
 * host call.  Another file, another op, a gap, run_max, a ticket not yet
 * posted and the end of the array each end it. */
TEST(QueueBasic, ClaimTakesARunPastMax)
{
  host_queue hq(32, kQStride);
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

/* A full queue of 4 slots (tickets 0-3 posted) and ticket 4 reserved:
 * its slot is ticket 0's. */
static void fill_and_reserve_one_more(host_queue &hq)
{
  ASSERT_EQ(gpufs_q_reserve(&hq.q, 4), 0u);
  for (uint64_t t = 0; t < 4; t++) post_read(hq, t);
  ASSERT_EQ(gpufs_q_reserve(&hq.q, 1), 4u);
}

TEST(QueueBasic, SlotIsFreeOnlyAfterReleaseOfTheTicketBefore)
{
  watchdog wd("slot release");
  host_queue hq(4, kQStride);
  fill_and_reserve_one_more(hq);
  if (HasFatalFailure()) return;

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

/* A bounded wait for a slot (what posted readahead's waiters poll with)
 * says the slot is still held after its polls, and owns it once the
 * ticket before is released. */
TEST(QueueBasic, BoundedWaitForASlotReportsItStillHeld)
{
  watchdog wd("bounded slot wait");
  host_queue hq(4, kQStride);
  fill_and_reserve_one_more(hq);
  if (HasFatalFailure()) return;
  uint32_t ns = 64;
  EXPECT_EQ(GPUFS_Q_STILL_HELD, gpufs_q_wait_free_some(&hq.q, 4, 16, &ns));
  uint64_t first;
  ASSERT_EQ(gpufs_q_claim(&hq.hdr, hq.slots.data(), 4, 4, 4, &first), 4u);
  serve(hq, 0, 4);
  EXPECT_EQ(GPUFS_Q_STILL_HELD, gpufs_q_wait_free_some(&hq.q, 4, 16, &ns));
  finish(hq, 0);
  EXPECT_EQ(0, gpufs_q_wait_free_some(&hq.q, 4, 16, &ns));
  EXPECT_EQ(0, gpufs_q_wait_free_some(&hq.q, 4, 0, &ns)) << "0: no limit, and owned already";
}

/* ------------------------------------------------------------------ */
/* Stop                                                                 */
/* ------------------------------------------------------------------ */

TEST(QueueStop, WaitDoneGivesUp)
{
  watchdog wd("wait_done after stop");
  host_queue hq(16, kQStride);
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
  host_queue hq(16, kQStride);
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

/* The stop word a wait reads is its key's slot's copy, one per 128-byte
 * line (a word read by every waiter takes the link down on the GPU), and
 * a wait gives up on its own slot's copy alone. */
TEST(QueueStop, StopWordsAreOnePerSlotLine)
{
  watchdog wd("stop words");
  host_queue hq(16, kQStride);
  for (uint64_t k = 0; k < 16; k++) {
    EXPECT_EQ(gpufs_q_stop_word(&hq.q, k), &hq.slots[k].stop) << k;
    EXPECT_EQ(gpufs_q_stop_word(&hq.q, k + 16), &hq.slots[k].stop) << k;
    EXPECT_EQ((uintptr_t)gpufs_q_stop_word(&hq.q, k) / 128, (uintptr_t)&hq.slots[k] / 128) << k;
    EXPECT_FALSE(gpufs_q_stopped(&hq.q, k)) << k;
  }
  ASSERT_EQ(gpufs_q_reserve(&hq.q, 2), 0u);
  post_read(hq, 0);
  post_read(hq, 1);
  std::atomic<int> rc0{1}, rc1{1};
  std::thread w0([&] { rc0 = gpufs_q_wait_done(&hq.q, 0); });
  std::thread w1([&] { rc1 = gpufs_q_wait_done(&hq.q, 1); });
  gpufs_st_relaxed_u32_sys(&hq.slots[1].stop, GPUFS_Q_STOPPED); /* slot 1's copy only */
  w1.join();
  EXPECT_EQ(rc1.load(), -GPUFS_ESHUTDOWN);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(rc0.load(), 1) << "ticket 0 reads its own slot's copy, still RUNNING";
  hq.stop();
  w0.join();
  EXPECT_EQ(rc0.load(), -GPUFS_ESHUTDOWN);
  for (uint64_t k = 0; k < 16; k++) EXPECT_TRUE(gpufs_q_stopped(&hq.q, k)) << k;
  EXPECT_EQ(gpufs_ld_relaxed_u32_sys(&hq.hdr.state), (uint32_t)GPUFS_Q_STOPPED);
}

/* ------------------------------------------------------------------ */
/* One request: gpufs_req, gpufs_q_fill, gpufs_q_call                   */
/* ------------------------------------------------------------------ */

TEST(QueueReq, FillAndReadReqRoundTripEveryField)
{
  host_queue hq(4, kQStride);
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
  CpuQueue q(8, 4096);
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

} // namespace
