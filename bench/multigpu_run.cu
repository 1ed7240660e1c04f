/*
 * multigpu_run.cu - running one thing on every GPU at once for the mgpu
 * workload (multigpu_run.h): a thread per GPU started together, one
 * libgpufs read per GPU, the instances' start, the rows' common fields.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cuda_runtime.h>

#include "benchlib/cuda_check.h"
#include "benchlib/util.h"
#include "bench/driver.h"
#include "bench/multigpu_run.h"

struct mg_state g_mg;

/* A barrier of every GPU's thread: bench_read_params.before_launch. */
void mg_wait(void *arg)
{
  pthread_barrier_wait((pthread_barrier_t *)arg);
}

/* The same as an expert pass hook. */
int mg_wait_pass(void *arg, char *note, int len)
{
  (void)note;
  (void)len;
  pthread_barrier_wait((pthread_barrier_t *)arg);
  return 0;
}

/* Run fn(&args[k]) on one thread per GPU k < n, the barrier set for n. */
void mg_parallel(int n, void *(*fn)(void *), void *args, size_t arg_size)
{
  pthread_t th[MG_MAX];
  pthread_barrier_init(&g_mg.bar, NULL, (unsigned)n);
  for (int k = 0; k < n; k++)
    pthread_create(&th[k], NULL, fn, (char *)args + k * arg_size);
  for (int k = 0; k < n; k++)
    pthread_join(th[k], NULL);
  pthread_barrier_destroy(&g_mg.bar);
}

void mg_row(const char *name, const char *config, double v, const char *unit,
                   const char *base, double base_v, int ok, const char *note)
{
  struct bench_row row;
  bench_row_init(&row, name, config, ok ? v : NAN, unit);
  if (base)
    bench_row_baseline(&row, base, base_v);
  bench_row_u64(&row, "gpus", (uint64_t)g_mg.n);
  bench_row_status(&row, ok ? BENCH_OK : BENCH_FAILED, "%s", note);
  bench_report_add(&row);
  bench_progress("%-22s %s %8.2f %s  (%s)", name, config, v, unit, note);
}

void *mg_read_main(void *a)
{
  struct mg_read *m = (struct mg_read *)a;
  struct bench_read_params p;
  int sms = g_bench.sms;
  memset(&p, 0, sizeof(p));
  m->rc = BENCH_CUDA(cudaSetDevice(m->gpu));
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, m->gpu);
  p.path = m->path;
  p.file_size = g_bench.size;
  p.seed = m->seed;
  p.access = m->access;
  p.blocks = sms * (m->access == BENCH_RAND_WARP ? BENCH_RAND_BLOCKS_PER_SM
                                                 : BENCH_SEQ_BLOCKS_PER_SM);
  p.threads = BENCH_BLOCK_THREADS;
  p.io_size = m->io;
  p.rand_reads = m->rand_reads;
  p.cap_seconds = g_bench.opt.cap;
  p.instance = m->instance;
  if (m->use_barrier) {
    p.before_launch = mg_wait;
    p.before_arg = &g_mg.bar;
  }
  if (m->rc) {
    if (m->use_barrier)
      mg_wait(&g_mg.bar);
    return NULL;
  }
  m->rc = bench_gpufs_read(&p, &m->r);
  return NULL;
}

/* Whether one read came out whole and right; its outcome into note. */
int mg_read_ok(const struct mg_read *m, char *note, size_t len)
{
  const int ok = m->rc == 0 && m->r.errors == 0 && m->r.mismatches == 0 &&
                 m->r.bytes == m->r.expected_bytes;
  if (!ok)
    snprintf(note + strlen(note), len - strlen(note),
             "%sGPU %d: rc %d, %llu of %llu bytes, %llu wrong words, %llu errors (first %lld)",
             note[0] ? "; " : "", m->gpu, m->rc, (unsigned long long)m->r.bytes,
             (unsigned long long)m->r.expected_bytes, (unsigned long long)m->r.mismatches,
             (unsigned long long)m->r.errors, (long long)m->r.first_error);
  return ok;
}

uint32_t mg_default_workers(int n)
{
  struct gpufs_config d;
  gpufs_config_default(&d);
  d.ndevices = (uint32_t)n;
  return gpufs_config_daemon_threads(&d);
}

/* Start one instance per GPU (0..n-1); workers 0: the default. */
int mg_start(int n, uint32_t page, uint64_t cache, uint32_t workers, char *note, size_t len)
{
  struct gpufs_config cfg;
  const char *bad = NULL;
  gpufs_config_default(&cfg);
  if (gpufs_config_from_env(&cfg, &bad) != 0)
    bench_progress("warning: GPUFS_* environment: %s does not parse; ignored", bad);
  cfg.page_size = page;
  cfg.cache_size = cache;
  if (workers)
    cfg.daemon_threads = workers;
  cfg.ndevices = (uint32_t)n;
  for (int k = 0; k < n; k++)
    cfg.devices[k] = k;
  if (cfg.staging_size && cfg.staging_size < (uint64_t)GPUFS_MIN_SLOTS * page)
    cfg.staging_size = (uint64_t)GPUFS_MIN_SLOTS * page;
  const int rc = gpufs_start(&cfg);
  if (rc)
    snprintf(note, len, "gpufs_start: %s (%s)", gpufs_strerror(rc), gpufs_error_detail());
  return rc;
}

/* Fill m[k] for GPU k reading its own file (own) or the data file. */
void mg_reads(struct mg_read *m, int n, int own, enum bench_access access, uint64_t io,
                     uint64_t rand_reads)
{
  memset(m, 0, sizeof(*m) * (size_t)n);
  for (int k = 0; k < n; k++) {
    m[k].gpu = m[k].instance = k;
    m[k].path = own ? g_mg.paths[k] : g_mg.paths[0];
    m[k].seed = own ? g_mg.seeds[k] : g_mg.seeds[0];
    m[k].access = access;
    m[k].io = io;
    m[k].rand_reads = rand_reads;
    m[k].use_barrier = 1;
  }
}

/* The fields every mgpu libgpufs row carries, from the instances' counters. */
void mg_stats_fields(struct bench_row *row, const struct gpufs_stats *all, double seconds,
                            uint32_t workers, uint64_t file_bytes)
{
  bench_row_u64(row, "gpus", (uint64_t)g_mg.n);
  bench_row_u64(row, "daemon_threads", workers);
  bench_row_f64(row, "seconds", seconds);
  bench_row_u64(row, "misses", all->misses);
  bench_row_u64(row, "peer_hits", all->peer_hits);
  bench_row_u64(row, "reg_pages", all->reg_pages);
  bench_row_u64(row, "bytes_read", all->bytes_read);
  bench_row_f64(row, "host_bytes_x", (double)all->bytes_read / (double)file_bytes);
  bench_row_u64(row, "requests", all->requests);
  bench_row_u64(row, "preads", all->preads);
  if (seconds > 0 && workers) {
    bench_row_f64(row, "daemon_busy", all->daemon_busy_ns / 1e9 / (seconds * workers));
    bench_row_f64(row, "daemon_io", all->daemon_io_ns / 1e9 / (seconds * workers));
  }
}

/* One seq run's configuration. */
