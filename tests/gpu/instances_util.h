/*
 * instances_util.h - what the several-instances tests share
 * (instances_test.cu, peer_test.cu): a fixture that starts n instances on
 * GPU 0 (two instances on one GPU stand for two GPUs) and stops them, refs,
 * and a file's bytes as the host has them.
 */
#ifndef GPUFS_TESTS_GPU_INSTANCES_UTIL_H
#define GPUFS_TESTS_GPU_INSTANCES_UTIL_H

#include <vector>

#include "tests/gpu/gpu_util.h"

/* The whole file as the host has it ({} when it cannot be read). */
inline std::vector<uint8_t> file_bytes(const std::string &path)
{
  std::vector<uint8_t> v;
  FILE *f = fopen(path.c_str(), "rb");
  if (!f) return v;
  uint8_t b[65536];
  size_t n;
  while ((n = fread(b, 1, sizeof(b), f)) > 0) v.insert(v.end(), b, b + n);
  fclose(f);
  return v;
}

/* Bytes that differ between a and b over n. */
inline size_t ndiff(const uint8_t *a, const uint8_t *b, size_t n)
{
  size_t d = 0;
  for (size_t i = 0; i < n; i++) d += a[i] != b[i];
  return d;
}

class InstancesFixture : public StartedFixture {
protected:
  /* n instances, all on device 0, each with a cache of `cache` bytes. */
  void start(uint32_t n, uint32_t page = 4096, uint64_t cache = 64ull << 20)
  {
    struct gpufs_config c = small_config(page, cache);
    c.nrings = 1; /* one block's calls use one ring: let it hold every file here */
    c.auto_pin = 0; /* the counters here are the daemon's and the peers' */
    c.ndevices = n;
    for (uint32_t i = 0; i < n; i++) c.devices[i] = 0;
    ASSERT_EQ(0, gpufs_start(&c)) << gpufs_error_detail();
    started = true;
  }
  gpufs_ref ref(int i)
  {
    gpufs_ref r{~0u};
    EXPECT_EQ(0, gpufs_get_ref(i, &r));
    return r;
  }
};

#endif
