/*
 * datafile.h - benchmark data files: generated content (benchlib/pattern.h),
 * written once, reused while they still match, kept in the host page cache.
 * Plain C; callable from .c and .cu files.  Errors are negative errno.
 */
#ifndef BENCH_DATAFILE_H
#define BENCH_DATAFILE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Ensure path holds size bytes of pattern seed (size a multiple of 8).
 * A file already there with that exact size and matching words at its start,
 * middle and end is kept; otherwise it is written (4 MiB chunks on several
 * threads, into path.tmp, then renamed), which leaves it in the page cache.
 * Returns 0 (kept or written), or -errno (-EINVAL for a size that is 0 or
 * not a multiple of 8). */
int bench_make_file(const char *path, uint64_t size, uint64_t seed);

/* Read the whole file once on several threads (1 MiB preads, discarded), so
 * that the benchmarks find it in the host page cache.  0 or -errno. */
int bench_warm_file(const char *path);

/* Fill buf with the bytes [offset, offset + bytes) of pattern seed, on
 * several threads (offset and bytes multiples of 8).  0 or -errno. */
int bench_fill_pattern(void *buf, uint64_t offset, uint64_t bytes, uint64_t seed);

/* Count the 8-byte words of buf that differ from the pattern at file offset
 * offset (bytes and offset multiples of 8); single-threaded, for tests and
 * small buffers. */
uint64_t bench_check_host(const void *buf, uint64_t offset, uint64_t bytes, uint64_t seed);

/* Check every 8-byte word of the bytes [offset, offset + bytes) of the file
 * at path against pattern seed (offset and bytes multiples of 8), reading it
 * in 4 MiB preads on several threads: how a written file is verified.
 * Returns 0 with *mismatches = the wrong words and *first_bad = the file
 * offset of the first wrong word (UINT64_MAX when none); -EIO when the file
 * ends before offset + bytes; -EINVAL; -errno of open/pread. */
int bench_check_file(const char *path, uint64_t offset, uint64_t bytes, uint64_t seed,
                     uint64_t *mismatches, uint64_t *first_bad);

#ifdef __cplusplus
}
#endif
#endif /* BENCH_DATAFILE_H */
