/*
 * progress.cu - what every part of gpufs_bench shares while it runs: the
 * progress lines on stderr (a read run's outcome among them), the watchdog that ends a stuck step, the
 * --only selection, and the write workload's file names (bench/driver.h).
 */
#include "bench/driver.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <gpufs.cuh>

#include "bench/workloads.h"
#include "benchlib/report.h"
#include "benchlib/util.h"

void bench_progress(const char *fmt, ...)
{
  va_list ap;
  fprintf(stderr, "[%6.1f s] ", bench_now() - g_bench.t_start);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

static char g_watch_msg[512];

static void bench_on_alarm(int sig)
{
  (void)sig;
  /* write(2) is async-signal-safe, stdio is not */
  if (write(2, g_watch_msg, strlen(g_watch_msg)) < 0)
    _exit(4);
  _exit(3);
}

void bench_watch(const char *step, double seconds)
{
  static int installed;
  if (!installed) {
    signal(SIGALRM, bench_on_alarm);
    installed = 1;
  }
  alarm(0);
  snprintf(g_watch_msg, sizeof(g_watch_msg),
           "\ngpufs_bench: '%s' did not finish within %.0f s: giving up (rows measured "
           "before it: %s)\n",
           step, seconds, g_bench.opt.out ? g_bench.opt.out : "none kept, no --out");
  if (seconds > 0)
    alarm((unsigned)seconds + 1);
}

int bench_selected(const char *name)
{
  const char *p = g_bench.opt.only;
  size_t len = strlen(name);
  if (!p)
    return !g_bench.opt.quick || strcmp(name, "cold") != 0; /* bench/plan.c says why */
  while (*p) {
    const char *comma = strchr(p, ',');
    size_t n = comma ? (size_t)(comma - p) : strlen(p);
    if (n == len && !strncmp(p, name, len))
      return 1;
    if (n == 3 && !strncmp(p, "hit", 3) && !strcmp(name, "seq"))
      return 1; /* hit is measured by the seq runs */
    p += n + (comma ? 1 : 0);
  }
  return 0;
}

void bench_write_path(char *buf, int len, const char *suffix)
{
  char sz[32];
  snprintf(buf, (size_t)len, "%s/write_%s%s.bin", g_bench.opt.dir,
           bench_fmt_size(g_bench.size, sz, sizeof(sz)), suffix);
}

void bench_print_outcome(const char *what, const struct bench_row *row,
                         const struct bench_read_result *r, const struct gpufs_stats *st)
{
  /* mean microseconds per round in each phase */
  double rounds = st->rounds ? (double)st->rounds : 1.0;
  bench_progress("%s: %.3f %s in %.2f s, %s%s%s; hits %llu misses %llu ra_pages %llu requests "
                 "%llu batches %llu preads %llu map_copies %llu merged %llu; %llu rounds, us/round fetch %.1f fill %.1f "
                 "settle %.1f copy %.1f; us/group open %.0f read %.0f check %.0f close %.0f, "
                 "start skew %.0f, span %.0f; us/gopen lock %.0f host %.0f wait %.0f; "
                 "daemon s: busy %.2f io %.2f",
                 what, r->gbps, "GB/s", r->seconds,
                 row->status == BENCH_OK ? "ok" : row->status == BENCH_CAPPED ? "capped" : "FAILED",
                 row->note[0] ? ": " : "", row->note, (unsigned long long)st->hits,
                 (unsigned long long)st->misses, (unsigned long long)st->ra_pages,
                 (unsigned long long)st->requests,
                 (unsigned long long)st->batches, (unsigned long long)st->preads,
                 (unsigned long long)st->map_copies, (unsigned long long)st->merged,
                 (unsigned long long)st->rounds,
                 st->fetch_ns / 1e3 / rounds, st->fill_ns / 1e3 / rounds,
                 st->settle_ns / 1e3 / rounds, st->copy_ns / 1e3 / rounds, r->open_us, r->read_us,
                 r->check_us, r->close_us, r->start_skew_us, r->span_us,
                 st->gopens ? st->gopen_lock_ns / 1e3 / st->gopens : 0.0,
                 st->gopens ? st->gopen_host_ns / 1e3 / st->gopens : 0.0,
                 st->gopens ? st->gopen_wait_ns / 1e3 / st->gopens : 0.0,
                 st->daemon_busy_ns / 1e9, st->daemon_io_ns / 1e9);
}
