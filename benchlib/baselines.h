/*
 * baselines.h - the ways to move a page-cached file into GPU memory that
 * libgpufs is measured against (docs/benchmarks.md, shared BENCHMARKS.md).
 *
 * Each one moves the first `bytes` of a file written by bench_make_file
 * (pattern seed) into device memory, times it, then checks every 8-byte word
 * that arrived on the GPU against bench_word: wrong data fails the baseline.
 * `dev` is device memory of at least `bytes` bytes from cudaMalloc (never
 * managed memory), owned by the caller; its content is overwritten.  `bytes`
 * is a multiple of 8 and at most the file's size.
 *
 * Each returns 0 with *out filled (gbps = bytes / seconds / 1e9), or
 *   -ENOTSUP  not available here (zero-copy refused, no libcufile): out->note
 *             says why; report it as "n/a";
 *   -EBADMSG  the data that reached the GPU was wrong (out->note: how much);
 *   -EIO      a CUDA call failed (printed on stderr with file:line);
 *   -errno    of open/read/mmap/allocation.
 * Never exits, never aborts.  Callable from C and C++ (nvcc) code.
 * bench_expert_write goes the other way (device memory to a new file): see
 * there.
 */
#ifndef BENCH_BASELINES_H
#define BENCH_BASELINES_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct bench_rate {
  double gbps;          /* 1e9 bytes per second of the median repetition; 0 if none */
  double seconds;       /* the median timed repetition */
  double setup_seconds; /* untimed preparation: pinning, registration, driver open */
  uint64_t bytes;       /* moved per repetition */
  int reps;             /* timed repetitions (after one untimed warm-up, where any) */
  char note[256];       /* how it was measured, or why it failed / is n/a */
};

/* ceiling: cudaMemcpy H2D of `bytes` that already sit in pinned host memory
 * (filled with the pattern, not read from a file): the PCIe link alone.
 * Warm-up, then the median of 5. */
int bench_ceiling(void *dev, uint64_t bytes, uint64_t seed, struct bench_rate *out);

/* naive: one thread read()s the file into a malloc'ed buffer (touched
 * beforehand, untimed), then one cudaMemcpy; both timed together.
 * Warm-up, then the median of 3. */
int bench_naive(const char *path, void *dev, uint64_t bytes, uint64_t seed,
                struct bench_rate *out);

/* expert: `threads` host threads (<= 0: 8) pread 1 MiB chunks (thread t takes
 * chunks t, t+threads, ...) into 4 pinned buffers each and cudaMemcpyAsync
 * them on a stream per thread, a buffer reused once its copy is done (what
 * KvikIO's compatibility mode does).  Warm-up, then the median of 3. */
int bench_expert(const char *path, void *dev, uint64_t bytes, uint64_t seed, int threads,
                 struct bench_rate *out);

/* Run before each timed pass of bench_expert_passes, untimed: 0 to go on,
 * or a negative errno after writing why into note (len bytes, NUL ended),
 * which ends the baseline with that error and note. */
typedef int (*bench_pass_hook)(void *arg, char *note, int len);

/* expert without the warm-up, for a file that must not be warmed (a cold
 * read): reps (1..5) timed passes, the median, each after before(arg) when
 * before is not NULL (e.g. dropping the file from the host page cache). */
int bench_expert_passes(const char *path, void *dev, uint64_t bytes, uint64_t seed, int threads,
                        int reps, bench_pass_hook before, void *arg, struct bench_rate *out);

/* zero-copy: mmap the file, cudaHostRegister it Mapped|ReadOnly (or Mapped
 * alone when ReadOnly is refused), and time a kernel that reads and checks
 * every word through the device pointer; no device buffer is needed.
 * Registration is setup_seconds.  Warm-up, then the median of 3. */
int bench_zero_copy(const char *path, uint64_t bytes, uint64_t seed, struct bench_rate *out);

/* cuFile in compatibility mode (bench/cufile.cu): dlopen libcufile.so with
 * CUFILE_ALLOW_COMPAT_MODE=true, register the file (no O_DIRECT, so the
 * page cache serves it) and dev, cuFileRead 64 MiB pieces in order on one
 * thread.  Timed once after a one-piece warm-up.  -ENOTSUP when the library
 * or any registration is refused. */
int bench_cufile(const char *path, void *dev, uint64_t bytes, uint64_t seed,
                 struct bench_rate *out);

/* expert write, the baseline of the write workload (the reverse of expert):
 * dev holds the pattern's first `bytes` (bench_fill_device); `threads` host
 * threads (<= 0: 8) cudaMemcpyAsync 1 MiB chunks (thread t takes chunks t,
 * t+threads, ...) device-to-host into 4 pinned buffers each, on a stream per
 * thread, keeping all 4 in flight, and pwrite each once its copy is done to
 * a new file at path (unlinked first, opened O_CREAT|O_TRUNC); then fsync
 * and close.  Timed end to end, from the open to the close.  Warm-up, then
 * the median of 3; every word of the last file is checked on the host
 * (bench_check_file: -EBADMSG when wrong), and path is unlinked at the end. */
int bench_expert_write(const char *path, const void *dev, uint64_t bytes, uint64_t seed,
                       int threads, struct bench_rate *out);

/* Fill `bytes` of device memory at dev with the pattern's bytes from file
 * offset `offset` (both multiples of 8), on the GPU.  0, -EINVAL or -EIO. */
int bench_fill_device(void *dev, uint64_t bytes, uint64_t offset, uint64_t seed);

/* Device-to-device cudaMemcpy of `bytes` (gbps counts bytes copied once; the
 * memory moves twice that).  Warm-up, then the median of 5.  No check. */
int bench_d2d(void *dst, const void *src, uint64_t bytes, struct bench_rate *out);

/* Check `bytes` at p (device memory, or the device pointer of mapped host
 * memory) against the pattern at file offset `offset`; both multiples of 8.
 * *mismatches = the wrong words; *first_bad = the file offset of the first
 * wrong byte's word (UINT64_MAX when none).  0 or -EIO (CUDA error). */
int bench_verify(const void *p, uint64_t bytes, uint64_t offset, uint64_t seed,
                 uint64_t *mismatches, uint64_t *first_bad);

/* bench_verify over [0, bytes) of a file's image at p, as the baselines
 * check their result: 0, -EBADMSG with out->note saying how many words were
 * wrong and where the first was, or -EIO.  *ms (may be NULL) gets the
 * kernel's time. */
int bench_check_device(const void *p, uint64_t bytes, uint64_t seed, struct bench_rate *out,
                       float *ms);

#ifdef __cplusplus
}
#endif
#endif /* BENCH_BASELINES_H */
