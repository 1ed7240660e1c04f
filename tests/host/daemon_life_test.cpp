/*
 * daemon_life_test.cpp - starting and stopping the host daemon: worker
 * init/fini, bad parameters, and stop releasing clients that wait.
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <random>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "daemon_fixture.h"

using namespace gpufs_test;

namespace {

/* ---- start and stop ---- */

std::atomic<int> g_inits{0}, g_finis{0};

int count_init(void *, uint32_t w)
{
  g_inits++;
  return w == 2 ? -EIO : 0;
}

int count_init_ok(void *, uint32_t)
{
  g_inits++;
  return 0;
}

void count_fini(void *, uint32_t) { g_finis++; }

TEST(DaemonLife, StopWithoutRequests)
{
  g_inits = g_finis = 0;
  CpuQueue q(kSlots, kStride);
  gpufs_daemon_params p = q.params(4, 16, 8);
  p.worker_init = count_init_ok;
  p.worker_fini = count_fini;
  gpufs_daemon *d = nullptr;
  ASSERT_EQ(0, gpufs_daemon_start(&p, &d));
  EXPECT_EQ((uint32_t)GPUFS_Q_RUNNING, gpufs_ld_relaxed_u32_sys(&q.hdr->state));
  /* the GPU's waits read the state from the slots' copies */
  for (uint32_t i = 0; i < q.nslots; i++) {
    ASSERT_EQ((uint32_t)GPUFS_Q_RUNNING, gpufs_ld_relaxed_u32_sys(&q.slots[i].stop)) << i;
    ASSERT_FALSE(gpufs_q_stopped(&q.ref, i)) << i;
  }
  gpufs_daemon_stop(d);
  EXPECT_EQ((uint32_t)GPUFS_Q_STOPPED, gpufs_ld_relaxed_u32_sys(&q.hdr->state));
  for (uint32_t i = 0; i < 2 * q.nslots; i++) ASSERT_TRUE(gpufs_q_stopped(&q.ref, i)) << i;
  EXPECT_EQ(4, g_inits.load());
  EXPECT_EQ(4, g_finis.load());
  gpufs_daemon_stop(nullptr);
}

TEST(DaemonLife, FailingWorkerInitFailsStart)
{
  g_inits = g_finis = 0;
  CpuQueue q(kSlots, kStride);
  gpufs_daemon_params p = q.params(4, 16, 8);
  p.worker_init = count_init;
  p.worker_fini = count_fini;
  gpufs_daemon *d = nullptr;
  EXPECT_EQ(-EIO, gpufs_daemon_start(&p, &d));
  EXPECT_EQ(nullptr, d);
  EXPECT_EQ(4, g_inits.load());
  EXPECT_EQ(3, g_finis.load()) << "fini only where init succeeded";
  EXPECT_EQ((uint32_t)GPUFS_Q_STOPPED, gpufs_ld_relaxed_u32_sys(&q.hdr->state));
}

TEST(DaemonLife, BadParamsAreEinval)
{
  CpuQueue q(kSlots, kStride);
  gpufs_daemon *d = nullptr;
  EXPECT_EQ(-EINVAL, gpufs_daemon_start(nullptr, &d));
  gpufs_daemon_params p = q.params(1, 16, 8);
  EXPECT_EQ(-EINVAL, gpufs_daemon_start(&p, nullptr));
  for (int field = 0; field < 7; field++) {
    p = q.params(1, 16, 8);
    switch (field) {
    case 0: p.queues[0].hdr = nullptr; break;
    case 1: p.queues[0].slots = nullptr; break;
    case 2: p.queues[0].staging = nullptr; break;
    case 3: p.queues[0].nslots = 0; break;
    case 4: p.queues[0].stride = 0; break;
    case 5: p.nthreads = 0; break;
    case 6: p.max_open_files = 0; break;
    }
    EXPECT_EQ(-EINVAL, gpufs_daemon_start(&p, &d)) << "field " << field;
  }
  EXPECT_EQ(nullptr, d);
}

/* Requests posted before the daemon starts are served once it runs. */
TEST(DaemonLife, ServesWhatWasPostedBeforeStart)
{
  TempDir dir;
  CpuQueue q(kSlots, kStride);
  std::string path = dir.file("early");
  ASSERT_EQ(0, write_pattern_file(path, 3 * kStride, 23));
  Request r;
  r.op = GPUFS_OP_OPEN;
  r.path = path;
  int64_t first = client_post(q, &r, 1);
  ASSERT_EQ(0, first);
  gpufs_daemon_params p = q.params(1, 16, 8);
  gpufs_daemon *d = nullptr;
  ASSERT_EQ(0, gpufs_daemon_start(&p, &d));
  ASSERT_EQ(0, client_finish(q, 0, &r, 1));
  ASSERT_GE(r.result, 0);
  Request rd = read_req((int32_t)r.result, 0, kStride);
  ASSERT_EQ(0, client_run(q, &rd, 1));
  expect_read_ok(rd, 3 * kStride, 23);
  gpufs_daemon_stop(d);
}

/* Stop while clients keep the workers busy: every call ends, either served
 * correctly or with -ESHUTDOWN. */
TEST(DaemonLife, StopUnderLoad)
{
  TempDir dir;
  std::string path = dir.file("load");
  constexpr uint64_t kSize = 32 * kStride;
  ASSERT_EQ(0, write_pattern_file(path, kSize, 24));
  CpuQueue q(kSlots, kStride);
  gpufs_daemon_params p = q.params(3, 16, 8);
  gpufs_daemon *d = nullptr;
  ASSERT_EQ(0, gpufs_daemon_start(&p, &d));
  int64_t hfid = client_open(q, path, O_RDONLY, nullptr);
  ASSERT_GE(hfid, 0);
  std::atomic<int> served{0}, bad{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < 4; t++) {
    clients.emplace_back([&, t] {
      std::mt19937_64 rng(t);
      for (;;) {
        uint64_t page = rng() % 32;
        uint32_t n = 1 + (uint32_t)(rng() % 8);
        std::vector<Request> reqs;
        for (uint32_t j = 0; j < n; j++)
          reqs.push_back(read_req((int32_t)hfid, (page + j) * kStride, kStride));
        if (client_run(q, reqs.data(), n) != 0) return;
        for (auto &r : reqs) {
          uint64_t want = expected_len(kSize, r.offset, r.len);
          if (r.result != (int64_t)want || first_mismatch(r.data.data(), want, 24, r.offset) >= 0)
            bad++;
        }
        served++;
      }
    });
  }
  while (served.load() < 50) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  gpufs_daemon_stop(d);
  for (auto &c : clients) c.join();
  EXPECT_EQ(0, bad.load());
}

/* Post an OPEN of fifo (no writer: the worker that takes it blocks in
 * open(2)) and wait until a worker claimed it; *first is its ticket. */
void post_fifo_open(CpuQueue &q, const std::string &fifo, int64_t *first)
{
  Request r;
  r.op = GPUFS_OP_OPEN;
  r.path = fifo;
  r.arg = O_RDONLY;
  *first = client_post(q, &r, 1);
  ASSERT_GE(*first, 0);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (gpufs_ld_relaxed_u64_sys(&q.hdr->host_head) <= (uint64_t)*first &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_GT(gpufs_ld_relaxed_u64_sys(&q.hdr->host_head), (uint64_t)*first) << "never claimed";
}

/* A pause makes waiting clients give up (-ESHUTDOWN) and joins the
 * workers, keeping the host file table; after the queue is made new, a
 * resume serves it again with the files still open.  The client that
 * waits sits behind a ticket that was taken and never posted (a producer
 * that gave up): only a new queue gets past it. */
TEST(DaemonLife, PauseReleasesWaitersAndResumeServesANewQueue)
{
  TempDir dir;
  const std::string path = dir.file("paused");
  ASSERT_EQ(0, write_pattern_file(path, 64 * kStride, 51));
  g_inits = g_finis = 0;
  CpuQueue q(kSlots, kStride);
  gpufs_daemon_params p = q.params(2, 16, 8);
  p.worker_init = count_init_ok;
  p.worker_fini = count_fini;
  gpufs_daemon *d = nullptr;
  ASSERT_EQ(0, gpufs_daemon_start(&p, &d));
  EXPECT_EQ(-GPUFS_EINVAL, gpufs_daemon_resume(d)) << "not paused";
  uint64_t out[4] = {0, 0, 0, 0};
  const int64_t hfid = client_open(q, path, O_RDONLY, out);
  ASSERT_GE(hfid, 0);

  (void)gpufs_q_reserve(&q.ref, 1); /* a ticket no one will post */
  std::vector<Request> reqs{read_req((int32_t)hfid, 0, kStride)};
  const int64_t t = client_post(q, reqs.data(), 1);
  ASSERT_GE(t, 0);
  int rc = 0;
  std::thread client([&] { rc = client_finish(q, (uint64_t)t, reqs.data(), 1); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(0, gpufs_daemon_pause_within(d, 5000, nullptr, 0));
  client.join();
  EXPECT_EQ(-GPUFS_ESHUTDOWN, rc) << "the waiting client gives up";
  EXPECT_EQ(2, g_finis.load()) << "both workers left";
  EXPECT_EQ((uint32_t)GPUFS_Q_STOPPED, gpufs_ld_relaxed_u32_sys(&q.hdr->state));

  q.renew();
  ASSERT_EQ(0, gpufs_daemon_resume(d));
  EXPECT_EQ(4, g_inits.load()) << "the workers started again";
  EXPECT_EQ((uint32_t)GPUFS_Q_RUNNING, gpufs_ld_relaxed_u32_sys(&q.slots[0].stop));
  for (uint64_t page = 0; page < 64; page += 7) {
    std::vector<uint8_t> data;
    ASSERT_EQ((int64_t)kStride, client_read(q, (int32_t)hfid, page * kStride, kStride, &data))
        << "the file opened before the pause is still open";
    EXPECT_EQ(-1, first_mismatch(data.data(), kStride, 51, page * kStride)) << "page " << page;
  }
  EXPECT_EQ(0, client_close(q, (int32_t)hfid));
  gpufs_daemon_stop(d);
  EXPECT_EQ(4, g_finis.load());
}

/* A client waits for a request no worker can finish (the only worker is
 * blocked opening a FIFO that has no writer): stopping the daemon makes the
 * wait give up with -ESHUTDOWN.  The FIFO is opened for writing only after
 * that, which lets the worker finish its batch so that stop can join it. */
TEST(DaemonLife, StopReleasesAWaitingClient)
{
  TempDir dir;
  std::string fifo = dir.file("fifo");
  ASSERT_EQ(0, mkfifo(fifo.c_str(), 0600));
  CpuQueue q(kSlots, kStride);
  gpufs_daemon_params p = q.params(1, 16, 8);
  gpufs_daemon *d = nullptr;
  ASSERT_EQ(0, gpufs_daemon_start(&p, &d));

  int64_t first = -1;
  ASSERT_NO_FATAL_FAILURE(post_fifo_open(q, fifo, &first));
  ASSERT_GE(first, 0);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);

  std::atomic<bool> client_done{false};
  int client_rc = 0;
  std::thread client([&] {
    client_rc = gpufs_q_wait_done(&q.ref, (uint64_t)first);
    client_done = true;
  });
  std::atomic<bool> stopped{false};
  std::thread stopper([&] {
    gpufs_daemon_stop(d);
    stopped = true;
  });
  while (!client_done.load() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_TRUE(client_done.load()) << "the waiting client did not give up";
  EXPECT_FALSE(stopped.load()) << "stop returned while its worker was still blocked";

  int wfd = -1;
  while ((wfd = open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC)) < 0 && errno == ENXIO &&
         std::chrono::steady_clock::now() < deadline + std::chrono::seconds(10))
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_GE(wfd, 0) << strerror(errno);
  stopper.join();
  if (!client_done.load()) gpufs_q_set_state(q.hdr, q.slots, q.nslots, GPUFS_Q_STOPPED);
  client.join();
  if (wfd >= 0) close(wfd);
  EXPECT_EQ(-GPUFS_ESHUTDOWN, client_rc);
}

/* The same blocked worker, stopped with a limit: the stop gives up on it
 * after the limit, says which call it is stuck in, and leaves the daemon
 * to it; once the FIFO gets a writer the worker finishes its ticket and
 * leaves by itself (the queue stays alive until then). */
TEST(DaemonLife, StopWithinGivesUpOnAStuckWorker)
{
  TempDir dir;
  std::string fifo = dir.file("stuck-fifo");
  ASSERT_EQ(0, mkfifo(fifo.c_str(), 0600));
  CpuQueue q(kSlots, kStride);
  gpufs_daemon_params p = q.params(2, 16, 8);
  g_finis = 0;
  p.worker_fini = count_fini;
  gpufs_daemon *d = nullptr;
  ASSERT_EQ(0, gpufs_daemon_start(&p, &d));
  int64_t first = -1;
  ASSERT_NO_FATAL_FAILURE(post_fifo_open(q, fifo, &first));
  ASSERT_GE(first, 0);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);

  char why[512] = "";
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(-ETIMEDOUT, gpufs_daemon_stop_within(d, 300, why, sizeof(why)));
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GE(secs, 0.25);
  EXPECT_LT(secs, 5.0) << "the limit was not kept";
  EXPECT_NE(nullptr, strstr(why, "open")) << why;
  EXPECT_NE(nullptr, strstr(why, "stuck-fifo")) << why;
  EXPECT_EQ((uint32_t)GPUFS_Q_STOPPED, gpufs_ld_relaxed_u32_sys(&q.hdr->state));
  EXPECT_EQ(-GPUFS_ESHUTDOWN, gpufs_q_wait_done(&q.ref, (uint64_t)first));
  EXPECT_EQ(1, g_finis.load()) << "the idle worker left, the stuck one did not";

  /* release the stuck worker: it completes the ticket and leaves */
  int wfd = -1;
  while ((wfd = open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC)) < 0 && errno == ENXIO &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_GE(wfd, 0) << strerror(errno);
  while (g_finis.load() < 2 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(2, g_finis.load()) << "the stuck worker never left";
  EXPECT_EQ((uint64_t)first + 1, gpufs_ld_relaxed_u64_sys(&q.slots[first % kSlots].done_seq))
      << "its ticket was completed";
  if (wfd >= 0) close(wfd);
  /* the worker's last steps after worker_fini: give them time before q goes */
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
}

} // namespace
