/*
 * cpu_client.cpp - the CPU producer of the request queue (see cpu_client.h).
 *
 * It follows the GPU side of the protocol in queue.h step by step: reserve,
 * wait_free, fill (gpufs_q_fill), post, wait_done, copy out, release; a
 * single request with no bytes to read back is gpufs_q_call, as on the GPU.
 * Everything it needs from a slot is copied before the slot is released.
 */
#include "cpu_client.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace gpufs_test {

static void *zalloc(size_t align, size_t size)
{
  size = (size + align - 1) / align * align;
  void *p = aligned_alloc(align, size);
  if (!p) abort();
  memset(p, 0, size);
  return p;
}

CpuQueue::CpuQueue(uint32_t nslots_, uint32_t stride_) : nslots(nslots_), stride(stride_)
{
  hdr = static_cast<gpufs_queue_hdr *>(zalloc(64, sizeof(gpufs_queue_hdr)));
  slots = static_cast<gpufs_slot *>(zalloc(128, sizeof(gpufs_slot) * nslots));
  tail = static_cast<uint64_t *>(zalloc(64, sizeof(uint64_t)));
  free_seq = static_cast<uint64_t *>(zalloc(64, sizeof(uint64_t) * nslots));
  for (uint32_t i = 0; i < nslots; i++) free_seq[i] = i; /* ticket i owns slot i first */
  staging = static_cast<uint8_t *>(zalloc(4096, (size_t)nslots * stride));
  hdr->nslots = nslots;
  hdr->stride = stride;
  ref.slots = slots;
  ref.hdr = hdr;
  ref.tail = tail;
  ref.free_seq = free_seq;
  ref.staging = staging;
  ref.nslots = nslots;
  ref.stride = stride;
}

CpuQueue::~CpuQueue()
{
  free(hdr);
  free(slots);
  free(tail);
  free(free_seq);
  free(staging);
}

void CpuQueue::renew()
{
  *tail = 0;
  for (uint32_t i = 0; i < nslots; i++) free_seq[i] = i;
  gpufs_q_forget_tickets(slots, nslots);
}

gpufs_daemon_queue CpuQueue::queue() const
{
  gpufs_daemon_queue q;
  memset(&q, 0, sizeof(q));
  q.hdr = hdr;
  q.slots = slots;
  q.staging = staging;
  q.nslots = nslots;
  q.stride = stride;
  return q;
}

gpufs_daemon_params CpuQueue::params(uint32_t nthreads, uint32_t max_batch,
                                     uint32_t max_open_files) const
{
  return multi_params({const_cast<CpuQueue *>(this)}, nthreads, max_batch, max_open_files);
}

gpufs_daemon_params multi_params(const std::vector<CpuQueue *> &queues, uint32_t nthreads,
                                 uint32_t max_batch, uint32_t max_open_files)
{
  gpufs_daemon_params p;
  memset(&p, 0, sizeof(p));
  if (queues.size() > GPUFS_DAEMON_MAX_QUEUES) abort();
  for (size_t i = 0; i < queues.size(); i++) p.queues[i] = queues[i]->queue();
  p.nqueues = (uint32_t)queues.size();
  p.nthreads = nthreads;
  p.max_batch = max_batch;
  p.max_open_files = max_open_files;
  return p;
}

Request read_req(int32_t hfid, uint64_t offset, uint32_t len)
{
  Request r;
  r.op = GPUFS_OP_READ;
  r.hfid = hfid;
  r.offset = offset;
  r.len = len;
  return r;
}

Request write_req(int32_t hfid, uint64_t offset, const std::vector<uint8_t> &bytes)
{
  Request r;
  r.op = GPUFS_OP_WRITE;
  r.hfid = hfid;
  r.offset = offset;
  r.len = (uint32_t)bytes.size();
  r.data = bytes;
  return r;
}

int64_t client_post(CpuQueue &q, Request *reqs, uint32_t n, bool reverse)
{
  uint64_t first = gpufs_q_reserve(&q.ref, n);
  for (uint32_t i = 0; i < n; i++) {
    uint64_t t = first + i;
    if (gpufs_q_wait_free(&q.ref, t) != 0) return -GPUFS_ESHUTDOWN;
    const Request &r = reqs[i];
    gpufs_req w = r;
    uint8_t *stg = q.staging + (size_t)gpufs_q_index(&q.ref, t) * q.stride;
    if (r.op == GPUFS_OP_WRITE) memcpy(stg, r.data.data(), std::min<size_t>(r.data.size(), q.stride));
    if (r.op == GPUFS_OP_OPEN || r.op == GPUFS_OP_UNLINK) {
      if (r.unterminated) {
        memset(stg, 'a', q.stride);
        w.len = q.stride;
      } else {
        memcpy(stg, r.path.c_str(), r.path.size() + 1);
        w.len = (uint32_t)r.path.size();
      }
    }
    gpufs_q_fill(gpufs_q_slot(&q.ref, t), &w);
    if (!reverse) gpufs_q_post(&q.ref, t);
  }
  if (reverse)
    for (uint32_t i = n; i-- > 0;) gpufs_q_post(&q.ref, first + i);
  return (int64_t)first;
}

int client_finish(CpuQueue &q, uint64_t first, Request *reqs, uint32_t n)
{
  for (uint32_t i = 0; i < n; i++) {
    uint64_t t = first + i;
    if (gpufs_q_wait_done(&q.ref, t) != 0) return -GPUFS_ESHUTDOWN;
    Request &r = reqs[i];
    gpufs_q_read_reply(gpufs_q_slot(&q.ref, t), &r);
    if (r.op == GPUFS_OP_READ) {
      r.data.clear();
      if (r.result > 0) {
        const uint8_t *in = q.ref.staging + (size_t)gpufs_q_index(&q.ref, t) * q.stride;
        r.data.assign(in, in + std::min<int64_t>(r.result, q.stride));
      }
    }
  }
  for (uint32_t i = 0; i < n; i++) gpufs_q_release(&q.ref, first + i);
  return 0;
}

int client_run(CpuQueue &q, Request *reqs, uint32_t n, bool reverse)
{
  int64_t first = client_post(q, reqs, n, reverse);
  if (first < 0) return (int)first;
  return client_finish(q, (uint64_t)first, reqs, n);
}

/* gpufs_q_call of r with payload (a path: sent with its NUL); out[] the
 * reply's (zeros at a stop) if out. */
static int64_t call_one(CpuQueue &q, const gpufs_req &r, const std::string *payload,
                        uint64_t out[4])
{
  gpufs_reply rep{};
  const uint32_t n = payload ? (uint32_t)payload->size() + 1 : 0;
  int64_t rc = gpufs_q_call(&q.ref, &r, payload ? payload->c_str() : nullptr, n, &rep);
  if (out) memcpy(out, rep.out, sizeof(rep.out));
  return rc;
}

int64_t client_open(CpuQueue &q, const std::string &path, uint32_t flags, uint64_t out[4],
                    uint32_t mode)
{
  const gpufs_req r = {GPUFS_OP_OPEN, -1, mode, (uint32_t)path.size(), flags};
  return call_one(q, r, &path, out);
}

int64_t client_close(CpuQueue &q, int32_t hfid)
{
  const gpufs_req r = {GPUFS_OP_CLOSE, hfid, 0, 0, 0};
  return call_one(q, r, nullptr, nullptr);
}

int64_t client_fstat(CpuQueue &q, int32_t hfid, uint64_t out[4])
{
  const gpufs_req r = {GPUFS_OP_FSTAT, hfid, 0, 0, 0};
  return call_one(q, r, nullptr, out);
}

int64_t client_read(CpuQueue &q, int32_t hfid, uint64_t offset, uint32_t len,
                    std::vector<uint8_t> *data)
{
  Request r = read_req(hfid, offset, len);
  int rc = client_run(q, &r, 1);
  if (data) *data = std::move(r.data);
  return rc < 0 ? rc : r.result;
}

static uint64_t mix64(uint64_t x)
{
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

uint8_t pattern_byte(uint64_t seed, uint64_t off)
{
  return (uint8_t)(mix64((off >> 3) * 0x9e3779b97f4a7c15ull + seed) >> ((off & 7) * 8));
}

int write_pattern_file(const std::string &path, uint64_t size, uint64_t seed)
{
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return -errno;
  std::vector<uint8_t> buf(1 << 16);
  for (uint64_t off = 0; off < size;) {
    size_t n = (size_t)std::min<uint64_t>(buf.size(), size - off);
    for (size_t i = 0; i < n; i++) buf[i] = pattern_byte(seed, off + i);
    ssize_t w = pwrite(fd, buf.data(), n, (off_t)off);
    if (w <= 0) {
      int e = w < 0 ? -errno : -EIO;
      close(fd);
      return e;
    }
    off += (uint64_t)w;
  }
  return close(fd) == 0 ? 0 : -errno;
}

int64_t first_mismatch(const uint8_t *p, uint64_t n, uint64_t seed, uint64_t off)
{
  for (uint64_t i = 0; i < n; i++)
    if (p[i] != pattern_byte(seed, off + i)) return (int64_t)i;
  return -1;
}

} // namespace gpufs_test
