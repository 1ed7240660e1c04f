/*
 * cpu_client.h - a CPU stand-in for the GPU side of the request queue.
 *
 * It owns a queue in plain host memory laid out exactly as the library lays
 * it out in pinned memory (header, slots, staging; `tail` and `free_seq`,
 * which live in device memory on a GPU, are host words here) and drives it
 * with the producer helpers of queue.h, so the daemon is tested over the real
 * protocol.
 */
#ifndef GPUFS_TESTS_HOST_CPU_CLIENT_H
#define GPUFS_TESTS_HOST_CPU_CLIENT_H

#include <cstdint>
#include <string>
#include <vector>

#include "libgpufs/host/daemon.h"

namespace gpufs_test {

struct CpuQueue {
  CpuQueue(uint32_t nslots, uint32_t stride);
  ~CpuQueue();
  CpuQueue(const CpuQueue &) = delete;
  CpuQueue &operator=(const CpuQueue &) = delete;

  /* This queue as the daemon serves it. */
  gpufs_daemon_queue queue() const;

  /* Make the producers' side new, as an instance does before
   * gpufs_daemon_resume: tail 0, free_seq[i] = i, no ticket in any slot.
   * No client may use the queue meanwhile. */
  void renew();

  /* Daemon parameters that serve this queue alone (queue 0). */
  gpufs_daemon_params params(uint32_t nthreads, uint32_t max_batch,
                             uint32_t max_open_files) const;

  uint32_t nslots, stride;
  gpufs_queue_hdr *hdr;
  gpufs_slot *slots;
  uint64_t *tail;
  uint64_t *free_seq;
  uint8_t *staging; /* host staging: payloads and served bytes */
  gpufs_queue_ref ref;
};

/* One request (the fields a GPU producer fills: gpufs_req; OPEN and UNLINK
 * post their path's length as len), its payload and, once served, its
 * answer (gpufs_reply). */
struct Request : gpufs_req, gpufs_reply {
  Request() : gpufs_req{GPUFS_OP_NONE, -1, 0, 0, 0}, gpufs_reply{0, {0, 0, 0, 0}} {}

  std::string path;         /* OPEN, UNLINK: copied with its NUL into staging */
  bool unterminated = false; /* OPEN, UNLINK: fill the whole staging with 'a', no NUL */
  std::vector<uint8_t> data; /* READ: the result bytes served; WRITE: the bytes to write */
};

/* Daemon parameters that serve queues[i] as queue i (at most
 * GPUFS_DAEMON_MAX_QUEUES of them). */
gpufs_daemon_params multi_params(const std::vector<CpuQueue *> &queues, uint32_t nthreads,
                                 uint32_t max_batch, uint32_t max_open_files);

Request read_req(int32_t hfid, uint64_t offset, uint32_t len);
/* A WRITE of bytes at offset (at most one stride). */
Request write_req(int32_t hfid, uint64_t offset, const std::vector<uint8_t> &bytes);

/* Take n consecutive tickets (n <= nslots), fill their slots and post them.
 * reverse posts the last first, so that a worker sees the whole run at once
 * (it claims only from the head).  Returns the first ticket, or
 * -GPUFS_ESHUTDOWN. */
int64_t client_post(CpuQueue &q, Request *reqs, uint32_t n, bool reverse = false);

/* Wait for the n tickets from first, copy their answers into reqs and give
 * the slots back.  0, or -GPUFS_ESHUTDOWN (then no slot is given back: the
 * daemon may still write into it). */
int client_finish(CpuQueue &q, uint64_t first, Request *reqs, uint32_t n);

/* post + finish. */
int client_run(CpuQueue &q, Request *reqs, uint32_t n, bool reverse = false);

/* One-request conveniences; each returns the request's result, or
 * -GPUFS_ESHUTDOWN.  All but client_read (whose bytes are copied out of
 * staging before the slot is given back: client_run) are gpufs_q_call;
 * client_open's path is shorter than the stride. */
int64_t client_open(CpuQueue &q, const std::string &path, uint32_t flags, uint64_t out[4],
                    uint32_t mode = 0);
int64_t client_close(CpuQueue &q, int32_t hfid);
int64_t client_fstat(CpuQueue &q, int32_t hfid, uint64_t out[4]);
int64_t client_read(CpuQueue &q, int32_t hfid, uint64_t offset, uint32_t len,
                    std::vector<uint8_t> *data);

/* Deterministic file content: byte at offset off of a file with this seed. */
uint8_t pattern_byte(uint64_t seed, uint64_t off);

/* Write a file of size bytes of pattern(seed).  0 or -errno. */
int write_pattern_file(const std::string &path, uint64_t size, uint64_t seed);

/* Index of the first of n bytes that differs from pattern(seed) at off..,
 * or -1 if all match. */
int64_t first_mismatch(const uint8_t *p, uint64_t n, uint64_t seed, uint64_t off);

} // namespace gpufs_test

#endif /* GPUFS_TESTS_HOST_CPU_CLIENT_H */
