/*
 * queue_util.h - what the queue tests share (queue_test.cpp,
 * queue_stress_test.cpp): a queue in host memory laid out as the library
 * lays it out, and the words producers send and consumers answer.
 */
#ifndef GPUFS_TESTS_HOST_QUEUE_UTIL_H
#define GPUFS_TESTS_HOST_QUEUE_UTIL_H

#include <cstdint>
#include <cstring>
#include <vector>

#include "libgpufs/common/queue.h"
#include "tests/host/stress_util.h"

namespace gpufs_test {

constexpr uint32_t kQStride = 64;

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
    gpufs_q_set_state(&hdr, slots.data(), nslots, GPUFS_Q_RUNNING);
    hdr.nslots = nslots;
    hdr.stride = stride;
    q.slots = slots.data();
    q.hdr = &hdr;
    q.tail = &tail;
    q.free_seq = free_seq.data();
    q.staging = staging.data();
    q.nslots = nslots;
    q.stride = stride;
  }
  host_queue(const host_queue &) = delete;
  host_queue &operator=(const host_queue &) = delete;

  uint8_t *stage(uint64_t t) { return staging.data() + (size_t)gpufs_q_index(&q, t) * q.stride; }
  void stop() { gpufs_q_set_state(&hdr, slots.data(), (uint32_t)slots.size(), GPUFS_Q_STOPPED); }
};

/* What a producer sends for (ticket, nonce) and what the consumer answers. */
inline uint64_t req_word(uint64_t t, uint32_t nonce, uint32_t w) { return mix64(t * 131 + nonce) ^ w; }
inline uint64_t reply_word(uint64_t t, uint32_t nonce, uint32_t w) { return ~req_word(t, nonce, w) * 3; }
inline int64_t reply_result(uint64_t t, uint32_t nonce) { return (int64_t)(t * 7 + nonce); }

inline void put_words(uint8_t *d, uint32_t len, uint64_t (*f)(uint64_t, uint32_t, uint32_t), uint64_t t,
               uint32_t nonce)
{
  for (uint32_t w = 0; w < len / 8; w++) {
    uint64_t v = f(t, nonce, w);
    memcpy(d + 8 * w, &v, 8);
  }
}

inline bool words_ok(const uint8_t *d, uint32_t len, uint64_t (*f)(uint64_t, uint32_t, uint32_t),
              uint64_t t, uint32_t nonce)
{
  for (uint32_t w = 0; w < len / 8; w++) {
    uint64_t v;
    memcpy(&v, d + 8 * w, 8);
    if (v != f(t, nonce, w)) return false;
  }
  return true;
}

} // namespace gpufs_test

#endif /* GPUFS_TESTS_HOST_QUEUE_UTIL_H */
