/*
 * util.h - host helpers of the benchmarks: clock, thread fan-out, folders.
 * Plain C; callable from .c and .cu files.
 */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BENCH_KIB (1024ull)
#define BENCH_MIB (1024ull * 1024ull)
#define BENCH_GIB (1024ull * 1024ull * 1024ull)

/* "500M", "2G", "64K", "4096" (binary units): bytes; 0 when it does not
 * parse or is past 1e15. */
uint64_t bench_parse_size(const char *s);

/* Seconds on CLOCK_MONOTONIC. */
double bench_now(void);

/* Threads worth starting for host-side file work: online CPUs, 1..16. */
int bench_host_threads(void);

/* Runs fn(arg, t) for t = 0..n-1, each on its own thread, and joins them.
 * Returns 0, the first nonzero value a thread returned (lowest t), or -errno
 * when a thread could not be started (the started ones are joined). */
int bench_parallel(int n, int (*fn)(void *arg, int t), void *arg);

/* Runs fn(arg, lo, hi) over [0, n) in pieces of `chunk` items (0: n split
 * evenly), taken in order by `threads` threads (0: bench_host_threads())
 * as each finishes its last one, so uneven work balances.  Returns 0 or the
 * first nonzero value a call returned; after an error the threads take no
 * more pieces. */
int bench_parallel_for(uint64_t n, uint64_t chunk, int threads,
                       int (*fn)(void *arg, uint64_t lo, uint64_t hi), void *arg);

/* pread (is_write 0) or pwrite (is_write 1) all len bytes at off, retrying short
 * transfers and EINTR.  0, -EIO when the file ends first, or -errno. */
int bench_pio_full(int fd, void *buf, uint64_t len, uint64_t off, int is_write);

/* mkdir -p.  0 or -errno. */
int bench_mkdirs(const char *dir);

/* "4K", "64K", "1M", "8G", or plain bytes when not a whole unit, into buf. */
const char *bench_fmt_size(uint64_t bytes, char *buf, int len);

/* v printed with fmt (one double conversion) into buf, or "-" for NaN (not
 * measured): a table cell. */
void bench_fmt_value(char *buf, size_t len, double v, const char *fmt);

#ifdef __cplusplus
}
#endif
#endif /* BENCH_UTIL_H */
