/*
 * util.c - host helpers of the benchmarks: clock, thread fan-out, folders.
 */
#include "benchlib/util.h"

#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* "500M", "2G", "4096": bytes, or 0 when it does not parse. */
uint64_t bench_parse_size(const char *s)
{
  char *end;
  double v = strtod(s, &end);
  if (end == s || !(v > 0) || !isfinite(v))
    return 0;
  double mul = 1;
  if (*end == 'K' || *end == 'k')
    mul = 1024.0, end++;
  else if (*end == 'M' || *end == 'm')
    mul = 1048576.0, end++;
  else if (*end == 'G' || *end == 'g')
    mul = 1073741824.0, end++;
  if (*end || v * mul > 1e15)
    return 0;
  return (uint64_t)(v * mul);
}

double bench_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int bench_host_threads(void)
{
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  if (n < 1)
    return 1;
  return n > 16 ? 16 : (int)n;
}

struct bench_thread {
  pthread_t tid;
  int (*fn)(void *arg, int t);
  void *arg;
  int t;
  int rc;
};

static void *bench_thread_main(void *p)
{
  struct bench_thread *th = (struct bench_thread *)p;
  th->rc = th->fn(th->arg, th->t);
  return NULL;
}

int bench_parallel(int n, int (*fn)(void *arg, int t), void *arg)
{
  struct bench_thread *th;
  int started = 0, rc = 0, i;

  if (n < 1)
    return -EINVAL;
  th = (struct bench_thread *)calloc((size_t)n, sizeof(*th));
  if (!th)
    return -ENOMEM;
  for (i = 0; i < n; i++) {
    int err;
    th[i].fn = fn;
    th[i].arg = arg;
    th[i].t = i;
    err = pthread_create(&th[i].tid, NULL, bench_thread_main, &th[i]);
    if (err) {
      rc = -err;
      break;
    }
    started++;
  }
  for (i = 0; i < started; i++) {
    pthread_join(th[i].tid, NULL);
    if (rc == 0 && th[i].rc != 0)
      rc = th[i].rc;
  }
  free(th);
  return rc;
}

int bench_pio_full(int fd, void *buf, uint64_t len, uint64_t off, int is_write)
{
  char *p = (char *)buf;
  while (len > 0) {
    /* Linux moves at most ~2 GiB per call; ask for 1 GiB at a time */
    size_t want = len < BENCH_GIB ? (size_t)len : (size_t)BENCH_GIB;
    ssize_t n = is_write ? pwrite(fd, p, want, (off_t)off) : pread(fd, p, want, (off_t)off);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return -errno;
    }
    if (n == 0)
      return -EIO;
    p += n;
    off += (uint64_t)n;
    len -= (uint64_t)n;
  }
  return 0;
}

int bench_mkdirs(const char *dir)
{
  char buf[4096];
  size_t len = strlen(dir);
  size_t i;

  if (len == 0 || len >= sizeof(buf))
    return -ENAMETOOLONG;
  memcpy(buf, dir, len + 1);
  for (i = 1; i <= len; i++) {
    if (buf[i] != '/' && buf[i] != '\0')
      continue;
    buf[i] = '\0';
    if (mkdir(buf, 0755) != 0 && errno != EEXIST)
      return -errno;
    if (i < len)
      buf[i] = '/';
  }
  return 0;
}

const char *bench_fmt_size(uint64_t bytes, char *buf, int len)
{
  static const char units[] = "KMGT";
  uint64_t scale = BENCH_KIB * BENCH_KIB * BENCH_KIB * BENCH_KIB;
  int u;

  for (u = 3; u >= 0; u--, scale /= 1024) {
    if (bytes >= scale && bytes % scale == 0) {
      snprintf(buf, (size_t)len, "%llu%c", (unsigned long long)(bytes / scale), units[u]);
      return buf;
    }
  }
  snprintf(buf, (size_t)len, "%llu", (unsigned long long)bytes);
  return buf;
}

struct bench_pfor {
  uint64_t n, chunk;
  int (*fn)(void *arg, uint64_t lo, uint64_t hi);
  void *arg;
  atomic_uint_fast64_t next; /* the first item not yet taken */
  atomic_int failed;         /* set by the first failed piece: stop taking */
};

static int bench_pfor_worker(void *p, int t)
{
  struct bench_pfor *f = (struct bench_pfor *)p;
  (void)t;
  /* Relaxed: the counter only hands out disjoint ranges; the items' data is
   * published to the caller by the threads' join. */
  while (!atomic_load_explicit(&f->failed, memory_order_relaxed)) {
    uint64_t lo = atomic_fetch_add_explicit(&f->next, f->chunk, memory_order_relaxed);
    if (lo >= f->n)
      break;
    uint64_t hi = f->n - lo < f->chunk ? f->n : lo + f->chunk;
    int rc = f->fn(f->arg, lo, hi);
    if (rc) {
      atomic_store_explicit(&f->failed, 1, memory_order_relaxed);
      return rc;
    }
  }
  return 0;
}

int bench_parallel_for(uint64_t n, uint64_t chunk, int threads,
                       int (*fn)(void *arg, uint64_t lo, uint64_t hi), void *arg)
{
  struct bench_pfor f;
  if (n == 0)
    return 0;
  if (threads <= 0)
    threads = bench_host_threads();
  if ((uint64_t)threads > n)
    threads = (int)n;
  if (chunk == 0)
    chunk = (n + (uint64_t)threads - 1) / (uint64_t)threads;
  if (threads == 1)
    return fn(arg, 0, n);
  f.n = n;
  f.chunk = chunk;
  f.fn = fn;
  f.arg = arg;
  atomic_init(&f.next, 0);
  atomic_init(&f.failed, 0);
  return bench_parallel(threads, bench_pfor_worker, &f);
}

void bench_fmt_value(char *buf, size_t len, double v, const char *fmt)
{
  if (isnan(v))
    snprintf(buf, len, "-");
  else
    snprintf(buf, len, fmt, v);
}
