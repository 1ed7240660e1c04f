/*
 * daemon_fixture.h - what the daemon tests share: a temporary directory, a
 * daemon over a fresh CPU queue, and checks of served bytes against the
 * files' deterministic content.
 */
#ifndef GPUFS_TESTS_HOST_DAEMON_FIXTURE_H
#define GPUFS_TESTS_HOST_DAEMON_FIXTURE_H

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cpu_client.h"

namespace gpufs_test {

constexpr uint32_t kStride = 4096;
constexpr uint32_t kSlots = 128;

/* A fresh directory under the system's temporary directory, removed after. */
struct TempDir {
  std::string path;
  TempDir()
  {
    std::string tmpl = (std::filesystem::temp_directory_path() / "gpufs-daemon-XXXXXX").string();
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (!mkdtemp(buf.data())) abort();
    path = buf.data();
  }
  ~TempDir()
  {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string file(const std::string &name) const { return path + "/" + name; }
};

inline uint64_t expected_len(uint64_t size, uint64_t off, uint32_t len)
{
  return off >= size ? 0 : std::min<uint64_t>(len, size - off);
}

/* Checks a served READ against the file it read: length and every byte. */
inline void expect_read_ok(const Request &r, uint64_t size, uint64_t seed)
{
  uint64_t want = expected_len(size, r.offset, r.len);
  ASSERT_EQ((int64_t)want, r.result) << "hfid " << r.hfid << " off " << r.offset << " len "
                                     << r.len;
  ASSERT_EQ(want, r.data.size());
  int64_t bad = first_mismatch(r.data.data(), want, seed, r.offset);
  ASSERT_EQ(-1, bad) << "byte " << bad << " of read at " << r.offset << " (hfid " << r.hfid
                     << ")";
}

/* READ tickets of reqs that the daemon serves with an earlier ticket's pread
 * when they arrive in one run. */
inline uint64_t expected_merges(const std::vector<Request> &reqs)
{
  uint64_t m = 0;
  for (size_t i = 1; i < reqs.size(); i++) {
    const Request &a = reqs[i - 1], &b = reqs[i];
    if (a.op == GPUFS_OP_READ && b.op == GPUFS_OP_READ && a.hfid == b.hfid &&
        a.len == kStride && b.offset == a.offset + kStride)
      m++;
  }
  return m;
}

struct TestFile {
  std::string path;
  uint64_t size;
  uint64_t seed;
  int32_t hfid;
};

/* A daemon over a fresh CPU queue, stopped and freed at the end of a test. */
class DaemonFixture {
protected:
  TempDir dir;
  std::unique_ptr<CpuQueue> q;
  gpufs_daemon *d = nullptr;
  uint64_t write_behind = 0; /* what start() gives the daemon (0: off) */
  void (*pin_hint)(void *ctx, int fd) = nullptr; /* start()'s pin hook (none) */

  ~DaemonFixture() { gpufs_daemon_stop(d); }

  void start(uint32_t nthreads = 2, uint32_t max_batch = 64, uint32_t max_open = 64,
             const gpufs_io_ops *io = nullptr)
  {
    q = std::make_unique<CpuQueue>(kSlots, kStride);
    gpufs_daemon_params p = q->params(nthreads, max_batch, max_open);
    p.io = io;
    p.write_behind = write_behind;
    p.pin_hint = pin_hint;
    ASSERT_EQ(0, gpufs_daemon_start(&p, &d));
  }

  gpufs_daemon_stats stats()
  {
    gpufs_daemon_stats s;
    gpufs_daemon_get_stats(d, &s);
    return s;
  }

  TestFile make_file(const std::string &name, uint64_t size, uint64_t seed, bool open_it = true)
  {
    TestFile f{dir.file(name), size, seed, -1};
    EXPECT_EQ(0, write_pattern_file(f.path, size, seed));
    if (open_it) {
      uint64_t out[4];
      int64_t h = client_open(*q, f.path, O_RDONLY, out);
      EXPECT_GE(h, 0) << f.path;
      EXPECT_EQ(size, out[0]);
      f.hfid = (int32_t)h;
    }
    return f;
  }
};

} // namespace gpufs_test

#endif /* GPUFS_TESTS_HOST_DAEMON_FIXTURE_H */
