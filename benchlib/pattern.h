/*
 * pattern.h - the content of every benchmark data file.
 *
 * A generated file is the little-endian sequence of 8-byte words
 * bench_word(seed, 0), bench_word(seed, 1), ...; the byte at offset o lies in
 * word o / 8.  Any piece of a file can so be checked where it lands (host
 * buffer, device buffer, mapped host memory) without a copy of the file.
 * Files are a multiple of 8 bytes long.
 *
 * Plain C for the host (.c files) and host+device under nvcc.
 */
#ifndef BENCH_PATTERN_H
#define BENCH_PATTERN_H

#include <stdint.h>

#ifdef __CUDACC__
#define BENCH_HD __host__ __device__ __forceinline__
#else
#define BENCH_HD static inline
#endif

/* splitmix64 of seed ^ index: every word differs from its neighbours, so a
 * page read from the wrong offset or a stale frame never passes the check. */
BENCH_HD uint64_t bench_word(uint64_t seed, uint64_t word_index)
{
  uint64_t z = (seed ^ word_index) + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

#ifdef __CUDACC__
/*
 * Checks words [0, n) at p, which must hold the file's words first, first+1,
 * ...: thread t of nthreads checks words t, t + nthreads, ... (coalesced).
 * Returns this thread's mismatch count; *first_bad (per thread, start it at
 * UINT64_MAX) gets the lowest mismatching file word index it saw.
 * Who calls: any threads; no synchronization.
 */
__device__ __forceinline__ uint64_t bench_check_words(const uint64_t *p, uint64_t n, uint64_t first,
                                                      uint64_t seed, uint64_t t, uint64_t nthreads,
                                                      uint64_t *first_bad)
{
  /* eight independent loads in flight per thread: a check that waited a
   * memory latency per word would cost more than the read it checks */
  uint64_t bad = 0;
  uint64_t i = t;
  for (; i + 7 * nthreads < n; i += 8 * nthreads) {
    uint64_t v[8];
#pragma unroll
    for (int k = 0; k < 8; k++)
      v[k] = p[i + k * nthreads];
#pragma unroll
    for (int k = 0; k < 8; k++) {
      const uint64_t w = first + i + k * nthreads;
      if (v[k] != bench_word(seed, w)) {
        if (w < *first_bad)
          *first_bad = w;
        bad++;
      }
    }
  }
  for (; i < n; i += nthreads) {
    if (p[i] != bench_word(seed, first + i)) {
      if (first + i < *first_bad)
        *first_bad = first + i;
      bad++;
    }
  }
  return bad;
}
#endif /* __CUDACC__ */

#endif /* BENCH_PATTERN_H */
