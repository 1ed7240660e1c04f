/*
 * cold.cu - gpufs_bench's cold-file rows: the data file dropped from the
 * host page cache before each timed read, the check that it left, the
 * expert_cold baseline and the fields of the seq/cold rows.  Contracts:
 * bench/cold.h.
 *
 * The drop is checked, not assumed: a file system that ignores DONTNEED
 * (tmpfs keeps its pages: they are the file) would give a page-cache figure
 * under a cold name, so such a row fails instead.  Coldness is measured
 * after everything untimed (gpufs_start, pinned buffers) and right before
 * the timed read.
 */
#include "bench/cold.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <cuda_runtime.h>

#include "benchlib/baselines.h"
#include "benchlib/cuda_check.h"
#include "benchlib/datafile.h"
#include "benchlib/report.h"
#include "benchlib/util.h"
#include "bench/driver.h"
#include "bench/plan.h"
#include "bench/registered.h"
#include "bench/workloads.h"

#define BENCH_DROP_CACHES "/proc/sys/vm/drop_caches"

/* expert_cold's GB/s in this run: the seq/cold rows' baseline; NaN until
 * measured or when it failed. */
static double g_cold_expert_gbps = NAN;

/* The fraction of the size bytes of fd resident in the page cache, from
 * mincore() on a read-only mapping (which faults nothing in).  0 or -errno. */
static int bench_cold_resident(int fd, uint64_t size, double *frac)
{
  const uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE), n = (size + pg - 1) / pg;
  unsigned char *v;
  uint64_t i, in = 0;
  void *m;
  int rc = 0;

  m = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED)
    return -errno;
  v = (unsigned char *)malloc(n);
  if (!v)
    rc = -ENOMEM;
  else if (mincore(m, size, v) != 0)
    rc = -errno;
  for (i = 0; rc == 0 && i < n; i++)
    in += v[i] & 1;
  if (rc == 0)
    *frac = (double)in / (double)n;
  free(v);
  munmap(m, size);
  return rc;
}

/* sync(), then drop the clean page cache of the whole system: root only.
 * 0, or -errno (-EPERM when we may not). */
static int bench_cold_drop_caches(void)
{
  int fd, rc = 0;
  if (geteuid() != 0 || access(BENCH_DROP_CACHES, W_OK) != 0)
    return -EPERM;
  sync();
  fd = open(BENCH_DROP_CACHES, O_WRONLY);
  if (fd < 0)
    return -errno;
  if (write(fd, "1", 1) != 1)
    rc = -errno;
  close(fd);
  return rc;
}

/* Drop the data file from the host page cache and check it left (see
 * bench/cold.h).  0 with *c filled; or -errno / -EAGAIN (still resident)
 * with why (len bytes) set; c->resident is NaN when it was not measured. */
static int bench_cold_drop(struct bench_cold *c, char *why, int len)
{
  struct statfs fs;
  int fd, rc, kept_fs;

  c->method = "fadvise";
  c->resident = NAN;
  fd = open(g_bench.path, O_RDONLY);
  if (fd < 0) {
    rc = -errno;
    snprintf(why, (size_t)len, "open %s: %s", g_bench.path, strerror(-rc));
    return rc;
  }
  kept_fs = fstatfs(fd, &fs) == 0 &&
            (fs.f_type == (__fsword_t)TMPFS_MAGIC || fs.f_type == (__fsword_t)RAMFS_MAGIC);
  /* DONTNEED drops clean pages only: write back first */
  if (fdatasync(fd) != 0) {
    rc = -errno;
    snprintf(why, (size_t)len, "fdatasync %s: %s", g_bench.path, strerror(-rc));
    goto out;
  }
  if ((rc = -posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)) != 0) {
    snprintf(why, (size_t)len, "posix_fadvise(DONTNEED) %s: %s", g_bench.path, strerror(-rc));
    goto out;
  }
  if ((rc = bench_cold_resident(fd, g_bench.size, &c->resident)) != 0) {
    snprintf(why, (size_t)len, "mincore on a mapping of %s: %s", g_bench.path, strerror(-rc));
    goto out;
  }
  if (!kept_fs && c->resident > BENCH_COLD_MAX_RESIDENT && bench_cold_drop_caches() == 0) {
    c->method = "drop_caches";
    if ((rc = bench_cold_resident(fd, g_bench.size, &c->resident)) != 0) {
      snprintf(why, (size_t)len, "mincore on a mapping of %s: %s", g_bench.path, strerror(-rc));
      goto out;
    }
  }
  if (kept_fs || c->resident > BENCH_COLD_KEPT) {
    rc = -EAGAIN;
    snprintf(why, (size_t)len,
             "the data directory keeps pages in memory (tmpfs?): use --dir on a disk file system");
  } else if (c->resident > BENCH_COLD_MAX_RESIDENT) {
    rc = -EAGAIN;
    snprintf(why, (size_t)len,
             "invalid: %.1f%% of the file resident after %s (more than %.0f%%): not a cold read",
             100.0 * c->resident, c->method, 100.0 * BENCH_COLD_MAX_RESIDENT);
  }
out:
  close(fd);
  return rc;
}

/* ---------------- expert_cold ---------------- */

/* Before each of expert_cold's passes: the drop.  arg: the largest resident
 * fraction any pass started with, and the strongest method any needed. */
static int bench_cold_pass(void *arg, char *note, int len)
{
  struct bench_cold *worst = (struct bench_cold *)arg;
  struct bench_cold c;
  const int rc = bench_cold_drop(&c, note, len);
  if (isnan(worst->resident) || c.resident > worst->resident)
    worst->resident = c.resident;
  if (!strcmp(c.method, "drop_caches"))
    worst->method = c.method;
  return rc;
}

void bench_cold_expert(void)
{
  const int threads = g_bench.expert_threads > 0 ? g_bench.expert_threads : 8;
  struct bench_cold worst;
  struct bench_rate rate;
  struct bench_row row;
  char config[160], sz[32];
  void *dev = NULL;
  int rc;

  memset(&rate, 0, sizeof(rate));
  rate.bytes = g_bench.size;
  worst.method = "fadvise";
  worst.resident = NAN;
  snprintf(config, sizeof(config), "file=%s cold", bench_fmt_size(g_bench.size, sz, sizeof(sz)));
  bench_progress("expert_cold: %d threads (%s), the file dropped before each pass", threads,
                 g_bench.expert_threads > 0 ? "the best expert row" : "no expert row: default");
  bench_watch("expert_cold", 900); /* 3 reads from the disk */
  rc = BENCH_CUDA(cudaMalloc(&dev, g_bench.size));
  if (rc == 0)
    rc = bench_expert_passes(g_bench.path, dev, g_bench.size, g_bench.seed, threads, 3,
                             bench_cold_pass, &worst, &rate);
  else
    snprintf(rate.note, sizeof(rate.note), "no device buffer of %llu bytes",
             (unsigned long long)g_bench.size);
  BENCH_CUDA(cudaFree(dev));
  g_cold_expert_gbps = rc == 0 ? rate.gbps : NAN;

  bench_row_init(&row, "expert_cold", config, g_cold_expert_gbps, "GB/s");
  bench_row_baseline(&row, "expert", g_bench.expert_gbps);
  if (rc == 0)
    bench_row_status(&row, BENCH_OK, "%.160s; the file dropped from the host page cache before "
                     "each pass", rate.note);
  else
    bench_row_status(&row, BENCH_FAILED, "%s", rate.note);
  bench_row_f64(&row, "seconds", rate.seconds);
  bench_row_f64(&row, "setup_seconds", rate.setup_seconds);
  bench_row_u64(&row, "reps", (uint64_t)rate.reps);
  bench_row_u64(&row, "host_threads", (uint64_t)threads);
  bench_row_str(&row, "cold_method", worst.method);
  bench_row_f64(&row, "resident_before", worst.resident);
  bench_report_add(&row);
  if (rc == 0)
    bench_progress("expert_cold %7.2f GB/s  (%s; at most %.3f of the file resident before a "
                   "pass)", rate.gbps, worst.method, worst.resident);
  else
    bench_progress("expert_cold FAILED: %s", rate.note);
  bench_watch("", 0);
}

/* ---------------- the libgpufs cold jobs ---------------- */

int bench_cold_begin(const struct bench_job *j, const char *config, struct bench_cold *c)
{
  struct bench_row row;
  char why[256];
  const int rc = bench_cold_drop(c, why, (int)sizeof(why));

  if (rc == 0) {
    bench_progress("%s: dropped from the host page cache (%s): %.3f of the file resident",
                   j->workload, c->method, c->resident);
    return 0;
  }
  bench_row_init(&row, j->workload, config, NAN, "GB/s");
  bench_row_baseline(&row, "expert_cold", g_cold_expert_gbps);
  bench_row_status(&row, BENCH_FAILED, "%s", why);
  bench_row_str(&row, "cold_method", c->method);
  bench_row_f64(&row, "resident_before", c->resident);
  bench_report_add(&row);
  bench_progress("%s: %s", j->workload, why);
  return rc;
}

void bench_cold_row(struct bench_row *row, const struct bench_cold *c, const struct bench_reg *reg,
                    const struct bench_read_result *r)
{
  static const char reg_note[] = "the value counts gpufs_register, which pins and so reads the "
                                 "whole cold file: bytes / (register_s + kernel seconds)";
  bench_row_str(row, "cold_method", c->method);
  bench_row_f64(row, "resident_before", c->resident);
  if (reg->on) {
    const double total = reg->register_s + r->seconds;
    bench_row_f64(row, "total_seconds", total);
    if (row->status != BENCH_FAILED)
      row->value = total > 0 ? (double)r->bytes / total / 1e9 : NAN;
    if (row->note[0]) {
      char note[sizeof(row->note)];
      snprintf(note, sizeof(note), "%s", row->note);
      snprintf(row->note, sizeof(row->note), "%.100s; %s", note, reg_note);
    } else {
      snprintf(row->note, sizeof(row->note), "%s", reg_note);
    }
  }
  bench_row_baseline(row, "expert_cold", g_cold_expert_gbps);
}

void bench_cold_end(void)
{
  int rc;
  bench_watch("warming the data file again", 600);
  rc = bench_warm_file(g_bench.path);
  if (rc == 0)
    bench_progress("%s is in the page cache again", g_bench.path);
  else
    bench_progress("warning: reading %s into the page cache again: %s", g_bench.path,
                   strerror(-rc));
  bench_watch("", 0);
}
