/*
 * daemon_queues_test.cpp - one daemon serving several request queues (one
 * per libgpufs instance) with one host file table: every queue served at
 * once with its own geometry and transport, per-queue counters, fairness
 * between a flooded queue and a light one, close-to-open consistency
 * between queues, stop, and bad parameters.  Every byte served is checked
 * against the file it came from.
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <random>
#include <thread>
#include <unistd.h>
#include <vector>

#include "daemon_fixture.h"

using namespace gpufs_test;

namespace {

struct QueueShape {
  uint32_t nslots, stride;
};

/* A daemon over several fresh CPU queues, stopped at the end of a test. */
class DaemonQueues : public ::testing::Test {
protected:
  TempDir dir;
  std::vector<std::unique_ptr<CpuQueue>> qs;
  gpufs_daemon *d = nullptr;

  ~DaemonQueues() override { gpufs_daemon_stop(d); }

  void start(const std::vector<QueueShape> &shapes, uint32_t nthreads = 3,
             uint32_t max_batch = 32, uint32_t max_open = 64, const gpufs_io_ops *io = nullptr)
  {
    std::vector<CpuQueue *> raw;
    for (const QueueShape &s : shapes) {
      qs.push_back(std::make_unique<CpuQueue>(s.nslots, s.stride));
      raw.push_back(qs.back().get());
    }
    gpufs_daemon_params p = multi_params(raw, nthreads, max_batch, max_open);
    p.io = io;
    ASSERT_EQ(0, gpufs_daemon_start(&p, &d));
  }

  gpufs_daemon_stats qstats(uint32_t q)
  {
    gpufs_daemon_stats s;
    EXPECT_EQ(0, gpufs_daemon_get_queue_stats(d, q, &s));
    return s;
  }

  gpufs_daemon_stats total()
  {
    gpufs_daemon_stats s;
    gpufs_daemon_get_stats(d, &s);
    return s;
  }

  std::string pattern_file(const std::string &name, uint64_t size, uint64_t seed)
  {
    std::string path = dir.file(name);
    EXPECT_EQ(0, write_pattern_file(path, size, seed));
    return path;
  }
};

/* A served READ is right: its length and every byte. */
bool read_ok(const Request &r, uint64_t size, uint64_t seed)
{
  uint64_t want = expected_len(size, r.offset, r.len);
  return r.result == (int64_t)want && r.data.size() == want &&
         first_mismatch(r.data.data(), want, seed, r.offset) < 0;
}

/* What one client thread did. */
struct Tally {
  uint64_t tickets = 0; /* posted and served */
  uint64_t bytes = 0;   /* served by READs */
  uint64_t bad = 0;     /* wrong results or bytes */
};

/* Random runs of page READs (1..8 tickets, some posted in reverse so that a
 * worker claims them as one run), every byte checked. */
void read_client(CpuQueue &q, int32_t hfid, uint64_t size, uint64_t seed, int runs,
                 uint64_t rng_seed, Tally *t)
{
  std::mt19937_64 rng(rng_seed);
  const uint64_t pages = size / q.stride + 2; /* a page past EOF too */
  const uint32_t max_run = std::min<uint32_t>(8, q.nslots);
  for (int i = 0; i < runs; i++) {
    uint32_t n = 1 + (uint32_t)(rng() % max_run);
    uint64_t page = rng() % pages;
    std::vector<Request> reqs;
    for (uint32_t j = 0; j < n; j++)
      reqs.push_back(read_req(hfid, (page + j) * q.stride, q.stride));
    if (client_run(q, reqs.data(), n, rng() % 2 == 0) != 0) {
      t->bad++;
      return;
    }
    for (const Request &r : reqs) {
      if (!read_ok(r, size, seed)) t->bad++;
      if (r.result > 0) t->bytes += (uint64_t)r.result;
    }
    t->tickets += n;
  }
}

void expect_same_counts(const gpufs_daemon_stats &a, const gpufs_daemon_stats &b)
{
  EXPECT_EQ(a.requests, b.requests);
  EXPECT_EQ(a.batches, b.batches);
  EXPECT_EQ(a.preads, b.preads);
  EXPECT_EQ(a.merged, b.merged);
  EXPECT_EQ(a.bytes_read, b.bytes_read);
  EXPECT_EQ(a.opens, b.opens);
  EXPECT_EQ(a.errors, b.errors);
}

/* Four queues of different sizes and page sizes, two client threads each, all at once; per-queue counters add up to the total. */
TEST_F(DaemonQueues, SeveralQueuesServedAtOnce)
{
  const std::vector<QueueShape> shapes = {{128, 4096}, {16, 8192}, {64, 16384}, {8, 4096}};
  start(shapes, 3, 32);
  const uint64_t size = 40 * 16384 + 123;
  std::string path = pattern_file("shared", size, 77);
  const uint32_t nq = (uint32_t)shapes.size();
  std::vector<int32_t> hfid(nq);
  for (uint32_t q = 0; q < nq; q++) {
    uint64_t out[4];
    int64_t h = client_open(*qs[q], path, O_RDONLY, out);
    ASSERT_GE(h, 0) << "queue " << q;
    EXPECT_EQ(size, out[0]);
    hfid[q] = (int32_t)h;
  }
  constexpr int kThreads = 2, kRuns = 120;
  std::vector<Tally> tally(nq * kThreads);
  std::vector<std::thread> th;
  for (uint32_t q = 0; q < nq; q++)
    for (int k = 0; k < kThreads; k++)
      th.emplace_back(read_client, std::ref(*qs[q]), hfid[q], size, 77, kRuns, 10 * q + k,
                      &tally[q * kThreads + k]);
  for (auto &t : th) t.join();

  gpufs_daemon_stats sum{};
  for (uint32_t q = 0; q < nq; q++) {
    uint64_t tickets = 0, bytes = 0;
    for (int k = 0; k < kThreads; k++) {
      const Tally &t = tally[q * kThreads + k];
      EXPECT_EQ(0u, t.bad) << "queue " << q << " thread " << k;
      tickets += t.tickets;
      bytes += t.bytes;
    }
    EXPECT_GT(bytes, 0u);
    gpufs_daemon_stats s = qstats(q);
    EXPECT_EQ(tickets + 1, s.requests) << "queue " << q << ": its reads and its open";
    EXPECT_EQ(1u, s.opens) << "queue " << q;
    EXPECT_EQ(bytes, s.bytes_read) << "queue " << q;
    EXPECT_EQ(0u, s.errors) << "queue " << q;
    EXPECT_GE(s.batches, 1u);
    sum.requests += s.requests;
    sum.batches += s.batches;
    sum.preads += s.preads;
    sum.merged += s.merged;
    sum.bytes_read += s.bytes_read;
    sum.opens += s.opens;
    sum.errors += s.errors;
  }
  expect_same_counts(sum, total());
  gpufs_daemon_stats none;
  EXPECT_EQ(-EINVAL, gpufs_daemon_get_queue_stats(d, nq, &none));
  EXPECT_EQ(-EINVAL, gpufs_daemon_get_queue_stats(d, GPUFS_DAEMON_MAX_QUEUES, &none));
}

/* A pread that takes 50 us more: the workers, not the clients, are the
 * bottleneck. */
ssize_t slow_pread(int fd, void *buf, size_t len, off_t off)
{
  struct timespec nap = {0, 50000};
  nanosleep(&nap, nullptr);
  return pread(fd, buf, len, off);
}
const gpufs_io_ops kSlowReads = [] {
  gpufs_io_ops io{};
  io.pread = slow_pread;
  return io;
}();

/* Queue 0 is flooded: more client threads than workers keep tickets posted
 * at its head all the time (pages far apart: no merging, one slow pread
 * each), so a worker always finds work there.  Queue 1's fixed number of
 * requests must still be served within a generous bound (never a hang: the
 * daemon is stopped at the deadline, which releases every waiter). */
TEST_F(DaemonQueues, BusyQueueDoesNotStarveAnother)
{
  start({{128, 4096}, {16, 4096}}, 2, 4, 64, &kSlowReads);
  const uint64_t size = 64 * 4096 + 9;
  std::string path = pattern_file("flood", size, 5);
  int64_t h0 = client_open(*qs[0], path, O_RDONLY, nullptr);
  int64_t h1 = client_open(*qs[1], path, O_RDONLY, nullptr);
  ASSERT_GE(h0, 0);
  ASSERT_GE(h1, 0);

  std::atomic<bool> flood_stop{false};
  std::atomic<uint64_t> flood_tickets{0}, flood_bad{0};
  std::vector<std::thread> flooders;
  for (int k = 0; k < 8; k++) {
    flooders.emplace_back([&, k] {
      std::mt19937_64 rng(100 + k);
      while (!flood_stop.load()) {
        std::vector<Request> reqs;
        for (uint32_t j = 0; j < 8; j++)
          reqs.push_back(read_req((int32_t)h0, (rng() % 32) * 2 * 4096, 4096));
        if (client_run(*qs[0], reqs.data(), 8) != 0) return; /* stopped at the deadline */
        for (const Request &r : reqs)
          if (!read_ok(r, size, 5)) flood_bad++;
        flood_tickets += 8;
      }
    });
  }
  /* queue 1 starts once queue 0 is busy */
  while (flood_tickets.load() < 64) std::this_thread::sleep_for(std::chrono::milliseconds(1));

  constexpr int kLight = 100;
  std::atomic<bool> light_done{false};
  Tally light;
  std::thread client([&] {
    read_client(*qs[1], (int32_t)h1, size, 5, kLight, 7, &light);
    light_done = true;
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!light_done.load() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const bool in_time = light_done.load();
  const uint64_t flooded = flood_tickets.load();
  if (!in_time) { /* release the starved client, and everyone else */
    gpufs_daemon_stop(d);
    d = nullptr;
  }
  client.join();
  flood_stop = true;
  for (auto &t : flooders) t.join();

  ASSERT_TRUE(in_time) << "queue 1 starved: " << light.tickets << " tickets in 10 s";
  EXPECT_EQ(0u, light.bad);
  EXPECT_EQ(0u, flood_bad.load());
  EXPECT_GT(flooded, 64u) << "queue 0 was served meanwhile too";
  EXPECT_EQ(light.tickets + 1, qstats(1).requests) << "queue 1's reads and its open";
  EXPECT_EQ(flood_tickets.load() + 1, qstats(0).requests);
}

/* The same file through two queues: one cid, one version while nobody
 * writes, and either queue's hfid names the same host file. */
TEST_F(DaemonQueues, SameFileSameCidThroughEveryQueue)
{
  start({{16, 4096}, {16, 4096}});
  const uint64_t size = 3 * 4096 + 5;
  std::string a = pattern_file("a", size, 41);
  std::string b = pattern_file("b", size, 42);
  uint64_t o0[4], o1[4], ob[4];
  int64_t h0 = client_open(*qs[0], a, O_RDONLY, o0);
  int64_t h1 = client_open(*qs[1], a, O_RDONLY, o1);
  int64_t hb = client_open(*qs[1], b, O_RDONLY, ob);
  ASSERT_GE(h0, 0);
  ASSERT_GE(h1, 0);
  ASSERT_GE(hb, 0);
  EXPECT_NE(h0, h1) << "two opens, two host descriptors";
  EXPECT_EQ(o0[1], o1[1]) << "one inode, one cid";
  EXPECT_EQ(o0[2], o1[2]) << "nobody wrote: one version";
  EXPECT_NE(o0[1], ob[1]) << "another file, another cid";
  std::vector<uint8_t> data;
  EXPECT_EQ(4096, client_read(*qs[1], (int32_t)h0, 4096, 4096, &data));
  EXPECT_EQ(-1, first_mismatch(data.data(), data.size(), 41, 4096)) << "queue 0's hfid via queue 1";
  EXPECT_EQ(0, client_close(*qs[1], (int32_t)h0));
  EXPECT_EQ(-EBADF, client_read(*qs[0], (int32_t)h0, 0, 10, nullptr));
  EXPECT_EQ(0, client_close(*qs[0], (int32_t)h1));
  EXPECT_EQ(0, client_close(*qs[1], (int32_t)hb));
}

/* Open, write bytes in place (the size does not change), close: through
 * queue q.  The version the open got. */
uint64_t write_through(CpuQueue &q, const std::string &path, uint64_t off,
                       const std::vector<uint8_t> &bytes)
{
  uint64_t out[4];
  int64_t h = client_open(q, path, O_RDWR, out);
  EXPECT_GE(h, 0);
  Request w = write_req((int32_t)h, off, bytes);
  EXPECT_EQ(0, client_run(q, &w, 1));
  EXPECT_EQ((int64_t)bytes.size(), w.result);
  EXPECT_EQ(0, client_close(q, (int32_t)h));
  return out[2];
}

/* The version an open through q gets (the file is closed again). */
uint64_t version_at_open(CpuQueue &q, const std::string &path)
{
  uint64_t out[4] = {0, 0, 0, 0};
  int64_t h = client_open(q, path, O_RDONLY, out);
  EXPECT_GE(h, 0);
  EXPECT_EQ(0, client_close(q, (int32_t)h));
  return out[2];
}

/* Close-to-open between queues: a queue's own write keeps its version at
 * its next open, but another queue that opens the file afterwards gets a
 * newer one (and reads the written bytes); a change by the CPU bumps it
 * for every queue. */
TEST_F(DaemonQueues, CloseToOpenBetweenQueues)
{
  start({{16, 4096}, {16, 4096}, {16, 4096}});
  const uint64_t size = 2 * 4096;
  std::string path = pattern_file("c2o", size, 61);
  const uint64_t v0 = version_at_open(*qs[1], path);
  ASSERT_GE(v0, 1u);
  EXPECT_EQ(v0, version_at_open(*qs[2], path));

  EXPECT_EQ(v0, write_through(*qs[0], path, 100, std::vector<uint8_t>(100, 0xee)));
  EXPECT_EQ(v0, version_at_open(*qs[0], path)) << "queue 0's own write keeps its version";
  const uint64_t v1 = version_at_open(*qs[1], path);
  EXPECT_GT(v1, v0) << "queue 1 must not trust pages cached before queue 0's write";
  std::vector<uint8_t> data;
  uint64_t out[4];
  int64_t h = client_open(*qs[2], path, O_RDONLY, out);
  ASSERT_GE(h, 0);
  EXPECT_EQ(v1, out[2]) << "one bump made every older page stale; no second one";
  EXPECT_EQ(4096, client_read(*qs[2], (int32_t)h, 0, 4096, &data));
  ASSERT_EQ(4096u, data.size());
  for (uint64_t i = 0; i < 4096; i++) {
    const uint8_t want = i >= 100 && i < 200 ? 0xee : pattern_byte(61, i);
    ASSERT_EQ(want, data[i]) << "byte " << i;
  }
  EXPECT_EQ(0, client_close(*qs[2], (int32_t)h));
  EXPECT_EQ(v1, version_at_open(*qs[0], path)) << "nobody wrote since";

  /* the other way round: queue 1 writes, queue 0 must see a new version */
  EXPECT_EQ(v1, write_through(*qs[1], path, 5000, std::vector<uint8_t>(10, 0x11)));
  EXPECT_EQ(v1, version_at_open(*qs[1], path));
  const uint64_t v2 = version_at_open(*qs[0], path);
  EXPECT_GT(v2, v1);

  /* the CPU appends: every queue's next open sees a newer version */
  int cpu = open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  ASSERT_GE(cpu, 0);
  ASSERT_EQ(1, write(cpu, "x", 1));
  close(cpu);
  const uint64_t v3 = version_at_open(*qs[2], path);
  EXPECT_GT(v3, v2);
  EXPECT_GE(version_at_open(*qs[0], path), v3);
  EXPECT_GE(version_at_open(*qs[1], path), v3);
}

/* Stop while clients of every queue keep the workers busy: each call ends
 * served correctly or with -ESHUTDOWN, every queue is STOPPED, and a call
 * made after the stop gives up on every queue. */
TEST_F(DaemonQueues, StopWithSeveralQueues)
{
  start({{32, 4096}, {16, 8192}, {64, 4096}}, 2, 16);
  const uint64_t size = 24 * 8192;
  std::string path = pattern_file("stop", size, 71);
  std::vector<int32_t> hfid;
  for (auto &q : qs) {
    int64_t h = client_open(*q, path, O_RDONLY, nullptr);
    ASSERT_GE(h, 0);
    hfid.push_back((int32_t)h);
  }
  std::atomic<int> served{0}, bad{0}, shut{0};
  std::vector<std::thread> clients;
  for (uint32_t q = 0; q < qs.size(); q++) {
    for (int k = 0; k < 2; k++) {
      clients.emplace_back([&, q, k] {
        CpuQueue &cq = *qs[q];
        std::mt19937_64 rng(q * 10 + k);
        for (;;) {
          uint64_t page = rng() % (size / cq.stride);
          uint32_t n = 1 + (uint32_t)(rng() % 6);
          std::vector<Request> reqs;
          for (uint32_t j = 0; j < n; j++)
            reqs.push_back(read_req(hfid[q], (page + j) * cq.stride, cq.stride));
          int rc = client_run(cq, reqs.data(), n);
          if (rc != 0) {
            if (rc == -GPUFS_ESHUTDOWN) shut++;
            else bad++;
            return;
          }
          for (const Request &r : reqs)
            if (!read_ok(r, size, 71)) bad++;
          served++;
        }
      });
    }
  }
  while (served.load() < 60) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  gpufs_daemon_stop(d);
  d = nullptr;
  for (auto &c : clients) c.join();
  EXPECT_EQ(0, bad.load());
  EXPECT_EQ((int)clients.size(), shut.load()) << "every client ends with -ESHUTDOWN";
  for (uint32_t q = 0; q < qs.size(); q++) {
    EXPECT_EQ((uint32_t)GPUFS_Q_STOPPED, gpufs_ld_relaxed_u32_sys(&qs[q]->hdr->state)) << q;
    Request r = read_req(hfid[q], 0, 10);
    EXPECT_EQ(-GPUFS_ESHUTDOWN, client_run(*qs[q], &r, 1)) << "queue " << q;
  }
}

TEST_F(DaemonQueues, BadParamsAreEinval)
{
  CpuQueue a(16, 4096), b(16, 4096);
  gpufs_daemon *bad = nullptr;
  gpufs_daemon_params p = multi_params({&a, &b}, 2, 16, 8);
  p.nqueues = 0;
  EXPECT_EQ(-EINVAL, gpufs_daemon_start(&p, &bad)) << "no queue";
  p = multi_params({&a, &b}, 2, 16, 8);
  p.nqueues = GPUFS_DAEMON_MAX_QUEUES + 1;
  EXPECT_EQ(-EINVAL, gpufs_daemon_start(&p, &bad)) << "more than the maximum";
  for (int field = 0; field < 5; field++) {
    p = multi_params({&a, &b}, 2, 16, 8);
    gpufs_daemon_queue &q1 = p.queues[1]; /* the second queue is the bad one */
    switch (field) {
    case 0: q1.hdr = nullptr; break;
    case 1: q1.slots = nullptr; break;
    case 2: q1.staging = nullptr; break;
    case 3: q1.nslots = 0; break;
    case 4: q1.stride = 0; break;
    }
    EXPECT_EQ(-EINVAL, gpufs_daemon_start(&p, &bad)) << "field " << field;
  }
  EXPECT_EQ(nullptr, bad);
  EXPECT_EQ(0u, gpufs_ld_relaxed_u32_sys(&a.hdr->state)) << "a refused start touches no queue";

  /* the most queues there may be: all served */
  std::vector<std::unique_ptr<CpuQueue>> many;
  std::vector<CpuQueue *> raw;
  for (uint32_t i = 0; i < GPUFS_DAEMON_MAX_QUEUES; i++) {
    many.push_back(std::make_unique<CpuQueue>(4, 4096));
    raw.push_back(many.back().get());
  }
  p = multi_params(raw, 2, 16, 8);
  ASSERT_EQ(0, gpufs_daemon_start(&p, &d));
  std::string path = pattern_file("max", 4096 + 3, 81);
  for (uint32_t i = 0; i < GPUFS_DAEMON_MAX_QUEUES; i++) {
    EXPECT_EQ((uint32_t)GPUFS_Q_RUNNING, gpufs_ld_relaxed_u32_sys(&many[i]->hdr->state));
    int64_t h = client_open(*many[i], path, O_RDONLY, nullptr);
    ASSERT_GE(h, 0) << "queue " << i;
    Request r = read_req((int32_t)h, 4096, 4096);
    ASSERT_EQ(0, client_run(*many[i], &r, 1));
    EXPECT_TRUE(read_ok(r, 4096 + 3, 81)) << "queue " << i;
    EXPECT_EQ(0, client_close(*many[i], (int32_t)h));
    EXPECT_EQ(3u, qstats(i).requests) << "queue " << i;
  }
  gpufs_daemon_stop(d);
  d = nullptr;
  for (uint32_t i = 0; i < GPUFS_DAEMON_MAX_QUEUES; i++)
    EXPECT_EQ((uint32_t)GPUFS_Q_STOPPED, gpufs_ld_relaxed_u32_sys(&many[i]->hdr->state));
}

} // namespace
