/*
 * common.c - small pieces every rodinia-io benchmark uses: failure text,
 * scaled sizes, deterministic random numbers, a parallel for.
 */
#include "rodinia-io/harness/rio.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "benchlib/util.h"

const char *rio_version_name(enum rio_version v)
{
  switch (v) {
  case RIO_CPU_IO:
    return "cpu-io";
  case RIO_EXPERT:
    return "expert";
  case RIO_GPUFS_4K:
    return "gpufs-4k";
  case RIO_GPUFS_64K:
    return "gpufs-64k";
  default:
    return "?";
  }
}

int rio_is_gpufs(enum rio_version v) { return v == RIO_GPUFS_4K || v == RIO_GPUFS_64K; }

int rio_fail(struct rio_run *run, int rc, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(run->why, sizeof(run->why), fmt, ap);
  va_end(ap);
  return rc;
}

uint64_t rio_scaled(const struct rio_run *run, uint64_t full, uint64_t multiple)
{
  double v = (double)full * run->scale;
  uint64_t n = v < 1.0 ? 0 : (uint64_t)v;
  if (multiple == 0)
    multiple = 1;
  n = n / multiple * multiple;
  return n < multiple ? multiple : n;
}

uint64_t rio_scaled_side(double scale, uint64_t full, uint64_t multiple, uint64_t min, uint64_t max)
{
  if (!(scale > 0) || !isfinite(scale) || multiple == 0)
    return 0;
  const double target = (double)full * (double)full * scale;
  /* from the square root, then exact against target (the root may round) */
  uint64_t n = (uint64_t)sqrt(target) / multiple * multiple;
  while ((double)(n + multiple) * (double)(n + multiple) <= target)
    n += multiple;
  while (n > 0 && (double)n * (double)n > target)
    n -= multiple;
  if (max && n > max)
    return 0;
  return n < min ? min : n;
}

uint64_t rio_rand(uint64_t seed, uint64_t stream, uint64_t index)
{
  /* splitmix64 over a key that mixes the three: streams of one seed are
   * independent sequences, and element i never depends on element i-1 */
  uint64_t z = seed * 0xD1B54A32D192ED03ull ^ (stream + 1) * 0x9E3779B97F4A7C15ull ^ index;
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  /* a second round: index and stream enter the first one linearly */
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double rio_rand01(uint64_t seed, uint64_t stream, uint64_t index)
{
  return (double)(rio_rand(seed, stream, index) >> 11) * (1.0 / 9007199254740992.0);
}

int rio_parallel_for(uint64_t n, int (*fn)(void *arg, uint64_t lo, uint64_t hi), void *arg)
{
  return bench_parallel_for(n, 0, 0, fn, arg);
}

struct rio_uniform {
  float *buf;
  uint64_t seed, stream;
};

static int rio_uniform_slice(void *arg, uint64_t lo, uint64_t hi)
{
  const struct rio_uniform *u = (const struct rio_uniform *)arg;
  for (uint64_t i = lo; i < hi; i++)
    u->buf[i] = (float)rio_rand01(u->seed, u->stream, i);
  return 0;
}

int rio_fill_uniform(float *buf, uint64_t n, uint64_t seed, uint64_t stream)
{
  struct rio_uniform u = {buf, seed, stream};
  return rio_parallel_for(n, rio_uniform_slice, &u);
}
