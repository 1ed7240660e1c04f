/*
 * stress_util.h - what the host stress tests share: the first failure of
 * many threads, a watchdog that turns a hang into a failure, a 64-bit mix.
 */
#ifndef GPUFS_TESTS_HOST_STRESS_UTIL_H
#define GPUFS_TESTS_HOST_STRESS_UTIL_H

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

namespace gpufs_test {

/* A stress run takes a few seconds alone, but one under ThreadSanitizer on
 * a 2-core machine that also builds took over 60 s (QueueStress, 2026-11-26):
 * the limit catches hangs, not slowness. */
constexpr int kWatchdogSeconds = 240;

inline uint64_t mix64(uint64_t x)
{
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

/* First failure of any thread; the others stop soon after. */
struct failure {
  std::mutex mu;
  std::string first;
  std::atomic<bool> any{false};
  void report(const std::string &what)
  {
    std::lock_guard<std::mutex> g(mu);
    if (first.empty()) first = what;
    any = true;
  }
};

/* Aborts the process if the scope does not end in time: a broken queue or
 * chain hangs rather than fails. */
struct watchdog {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  std::thread th;
  explicit watchdog(const char *what)
  {
    th = std::thread([this, what] {
      std::unique_lock<std::mutex> l(mu);
      if (!cv.wait_for(l, std::chrono::seconds(kWatchdogSeconds), [this] { return done; })) {
        fprintf(stderr, "%s: not done after %d s (a hang?)\n", what, kWatchdogSeconds);
        std::abort();
      }
    });
  }
  ~watchdog()
  {
    {
      std::lock_guard<std::mutex> l(mu);
      done = true;
    }
    cv.notify_one();
    th.join();
  }
};

} // namespace gpufs_test

#endif
