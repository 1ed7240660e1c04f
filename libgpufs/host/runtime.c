/*
 * runtime.c - the process runtime: gpufs_start / gpufs_stop / gpufs_sync
 * and the instances' refs.
 *
 * One runtime per process owns the daemon (its workers and the host file
 * table) and the instances, one per GPU entry of the configuration
 * (instance.h).  It lives from gpufs_start to gpufs_stop; the host API
 * calls take rt_lock, so they may come from any thread.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>

#include "libgpufs/host/acquire_hash.h"
#include "libgpufs/common/devcalls.h"
#include "libgpufs/host/detail.h"
#include "libgpufs/host/hostfiles.h"
#include "libgpufs/host/instance.h"
#include "libgpufs/host/pinner.h"
#include "libgpufs/host/register.h"
#include "libgpufs/host/stats_json.h"

_Static_assert(GPUFS_MAX_INSTANCES == GPUFS_DAEMON_MAX_QUEUES,
               "one daemon queue per instance");

struct gpufs_runtime {
  struct gpufs_instances all;
  struct gpufs_daemon *daemon;
  uint64_t reg_refused; /* gpufs_register calls that failed; under rt_lock */
  /* the automatic pinner (pinner.h), a struct gpufs_pinner *: set once
   * after the daemon starts, read by its workers' pin hints (atomics) */
  uint64_t pinner;
  int pin_device; /* the pinner's CUDA device: the first instance's */
  struct gpufs_acq_table *acq; /* gpufs_acquire's page hashes; under rt_lock */
};

/* The daemon's pin_hint hook (fileops.h): to the runtime's pinner. */
static void runtime_pin_hint(void *ctx, int fd)
{
  struct gpufs_runtime *r = ctx;
  /* relaxed: the pinner was made before any kernel could open a file */
  gpufs_pinner_hint((struct gpufs_pinner *)(uintptr_t)gpufs_ld_relaxed_u64_dev(&r->pinner), fd);
}

/* Stop the pinner (its pins stay in the table).  Context: rt_lock held. */
static void runtime_pinner_stop(struct gpufs_runtime *r)
{
  gpufs_pinner_stop((struct gpufs_pinner *)(uintptr_t)gpufs_ld_relaxed_u64_dev(&r->pinner));
  gpufs_st_relaxed_u64_dev(&r->pinner, 0);
}

static pthread_mutex_t rt_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gpufs_runtime *rt;
static const struct gpufs_io_ops *test_io; /* fault injection, under rt_lock */

/* Take rt_lock for a public call; its CUDA error scope (instance.h) is
 * the returned value, for api_unlock. */
static int api_lock(void)
{
  const int clean = gpufs_cuda_scope_enter();
  pthread_mutex_lock(&rt_lock);
  return clean;
}

static void api_unlock(int clean)
{
  pthread_mutex_unlock(&rt_lock);
  gpufs_cuda_scope_leave(clean);
}

void gpufs_test_set_io_ops(const struct gpufs_io_ops *io)
{
  pthread_mutex_lock(&rt_lock);
  test_io = io;
  pthread_mutex_unlock(&rt_lock);
}

/* The configuration's devices: cfg->devices[0..ndevices), or cfg->device. */
static uint32_t config_devices(const struct gpufs_config *cfg, int dev[GPUFS_MAX_INSTANCES])
{
  if (cfg->ndevices == 0) {
    dev[0] = cfg->device;
    return 1;
  }
  memcpy(dev, cfg->devices, cfg->ndevices * sizeof(int));
  return cfg->ndevices;
}

/* Forget the instances published on each device of dev[0..n) (kernels
 * launched there later find none). */
static void clear_devices(const int *dev, uint32_t n)
{
  int old = -1;
  cudaGetDevice(&old);
  for (uint32_t i = 0; i < n; i++) {
    int seen = 0;
    for (uint32_t j = 0; j < i; j++) seen |= dev[j] == dev[i];
    if (seen || cudaSetDevice(dev[i]) != cudaSuccess) continue;
    gpufs_dev_clear();
  }
  if (old >= 0) cudaSetDevice(old);
}

static void runtime_free(struct gpufs_runtime *r)
{
  int dev[GPUFS_MAX_INSTANCES];
  for (uint32_t i = 0; i < r->all.n; i++) dev[i] = r->all.in[i]->device;
  clear_devices(dev, r->all.n);
  gpufs_instances_unlink(&r->all);
  for (uint32_t i = 0; i < r->all.n; i++) gpufs_instance_destroy(r->all.in[i]);
  gpufs_acq_table_destroy(r->acq);
  free(r);
}

static int check_config(const struct gpufs_config *cfg, int dev[GPUFS_MAX_INSTANCES], uint32_t *n)
{
  const char *field = NULL, *why = NULL;
  int ndev = 0;
  if (gpufs_config_check(cfg, &field, &why) != 0) {
    gpufs_set_detail("%s: %s", field, why);
    return -EINVAL;
  }
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    gpufs_set_detail("no CUDA device");
    return -ENODEV;
  }
  *n = config_devices(cfg, dev);
  for (uint32_t i = 0; i < *n; i++) {
    if (dev[i] >= ndev) {
      gpufs_set_detail("%s: %d, but only %d CUDA devices", cfg->ndevices ? "devices" : "device",
                       dev[i], ndev);
      return -EINVAL;
    }
  }
  return 0;
}

/* gpufs_start, within its CUDA error scope. */
static int start(const struct gpufs_config *user_cfg)
{
  struct gpufs_config cfg;
  const char *field = NULL;
  int dev[GPUFS_MAX_INSTANCES];
  uint32_t n = 0;
  gpufs_clear_detail();
  if (user_cfg) {
    cfg = *user_cfg;
  } else {
    gpufs_config_default(&cfg);
    if (gpufs_config_from_env(&cfg, &field) != 0) {
      gpufs_set_detail("%s: not a valid value", field);
      return -EINVAL;
    }
  }
  int rc = check_config(&cfg, dev, &n);
  if (rc) return rc;
  pthread_mutex_lock(&rt_lock);
  if (rt) {
    pthread_mutex_unlock(&rt_lock);
    gpufs_set_detail("libgpufs is already started");
    return -EBUSY;
  }
  struct gpufs_runtime *r = calloc(1, sizeof(*r));
  if (!r || gpufs_acq_table_create(&r->acq) != 0) {
    free(r);
    pthread_mutex_unlock(&rt_lock);
    return -ENOMEM;
  }
  clear_devices(dev, n); /* a device listed now holds no older instance */
  for (uint32_t i = 0; i < n && rc == 0; i++) {
    rc = gpufs_instance_create(&cfg, i, dev[i], &r->all.in[i]);
    if (rc == 0) r->all.n++;
  }
  if (rc == 0) rc = gpufs_instances_publish(&r->all);
  struct gpufs_daemon_params p = {
      .nqueues = r->all.n,
      .nthreads = gpufs_config_daemon_threads(&cfg),
      .max_batch = cfg.max_batch,
      .max_open_files = cfg.max_open_files * n,
      .io = test_io,
      .write_behind = cfg.write_behind,
      /* test I/O hooks stand for the disk, which a pin's mapping would
       * bypass: no automatic pins under them */
      .pin_hint = cfg.auto_pin && !test_io ? runtime_pin_hint : NULL,
      .pin_ctx = r,
  };
  for (uint32_t i = 0; i < r->all.n; i++) p.queues[i] = gpufs_instance_queue(r->all.in[i]);
  if (rc == 0 && (rc = gpufs_daemon_start(&p, &r->daemon)) != 0)
    gpufs_set_detail("cannot start the daemon: %s", gpufs_strerror(rc));
  struct gpufs_pinner *pn = NULL;
  r->pin_device = dev[0];
  const struct gpufs_pin_ops pin_ops = {gpufs_cuda_pin_ops.pin, gpufs_cuda_pin_ops.unpin, &r->pin_device};
  if (rc == 0 && (rc = gpufs_pinner_start(gpufs_daemon_files(r->daemon),
                                          gpufs_runtime_pin_budget(cfg.register_max), &pin_ops, &pn)) != 0)
    gpufs_set_detail("cannot start the pinner: %s", gpufs_strerror(rc));
  /* relaxed: published to the workers' hints by the kernel launches after
   * gpufs_start returns */
  gpufs_st_relaxed_u64_dev(&r->pinner, (uint64_t)(uintptr_t)pn);
  if (rc != 0) {
    runtime_pinner_stop(r); /* before the table it pins into goes */
    gpufs_daemon_stop(r->daemon); /* NULL when it did not start */
    runtime_free(r);
    pthread_mutex_unlock(&rt_lock);
    return rc;
  }
  rt = r;
  pthread_mutex_unlock(&rt_lock);
  return 0;
}

int gpufs_start(const struct gpufs_config *cfg)
{
  nvtxRangePushA("gpufs_start");
  const int clean = gpufs_cuda_scope_enter();
  const int rc = start(cfg);
  gpufs_cuda_scope_leave(clean);
  nvtxRangePop();
  return rc;
}

/* gpufs_sync's work for one instance, with rt_lock held: run the sync
 * kernel on the instance's side stream (every file, or cid's alone) and
 * wait for it at most timeout_ms (< 0: no limit).  0, the first file's
 * error, or -ETIMEDOUT (the kernel still runs). */
static int sync_instance(struct gpufs_instance *in, uint32_t cid, int timeout_ms)
{
  uint32_t n = in->dev.ftab.nfiles;
  int rc = 0;
  int old = gpufs_instance_enter(in);
  int *res = calloc(n, sizeof(int));
  if (!res) {
    gpufs_instance_leave(old);
    return -ENOMEM;
  }
  if ((rc = gpufs_dev_sync_launch(in->index, cid, n, in->sync_results, in->stats_stream)) != 0) goto out;
  for (int waited = 0;; waited++) {
    cudaError_t q = cudaStreamQuery(in->stats_stream);
    if (q == cudaSuccess) break;
    if (q != cudaErrorNotReady) {
      rc = gpufs_cuda_fail(q, "gpufs_sync kernel");
      goto out;
    }
    if (timeout_ms >= 0 && waited >= timeout_ms) {
      rc = -ETIMEDOUT;
      goto out;
    }
    struct timespec ms = {0, 1000000L};
    nanosleep(&ms, NULL);
  }
  cudaError_t e = cudaMemcpyAsync(res, in->sync_results, n * sizeof(int), cudaMemcpyDeviceToHost,
                                  in->stats_stream);
  if (e == cudaSuccess) e = cudaStreamSynchronize(in->stats_stream);
  if (e != cudaSuccess) rc = gpufs_cuda_fail(e, "gpufs_sync results");
  for (uint32_t i = 0; i < n && rc == 0; i++) rc = res[i];
out:
  free(res);
  gpufs_instance_leave(old);
  return rc;
}

int gpufs_sync(void)
{
  const int clean = api_lock();
  int rc = rt ? 0 : -EINVAL;
  nvtxRangePushA("gpufs_sync");
  for (uint32_t i = 0; rt && i < rt->all.n; i++) {
    int r = sync_instance(rt->all.in[i], 0, -1);
    if (r && !rc) rc = r;
  }
  nvtxRangePop();
  api_unlock(clean);
  return rc;
}

#define STOP_TIMEOUT_MS 10000 /* stop_timeout_ms 0 */

/* Instance i's counters (gpufs_get_instance_stats).  Context: rt_lock held. */
static int runtime_instance_stats(struct gpufs_runtime *r, uint32_t i, struct gpufs_stats *st)
{
  struct gpufs_daemon_stats ds;
  gpufs_daemon_get_queue_stats(r->daemon, i, &ds);
  int old = gpufs_instance_enter(r->all.in[i]);
  int rc = gpufs_instance_stats(r->all.in[i], &ds, st);
  gpufs_instance_leave(old);
  if (rc == 0) gpufs_runtime_reg_stats(r->daemon, r->reg_refused, st);
  return rc;
}

/* GPUFS_STATS=FILE: every instance's counters as JSON (stats_json.c),
 * taken when the kernels have ended and the write-back is done.  A file
 * that cannot be written is said on stderr; gpufs_stop's result stays.
 * Context: rt_lock held. */
static void stop_write_stats(struct gpufs_runtime *r)
{
  const char *path = getenv("GPUFS_STATS");
  struct gpufs_stats st[GPUFS_MAX_INSTANCES];
  if (!path || !*path) return;
  for (uint32_t i = 0; i < r->all.n; i++)
    if (runtime_instance_stats(r, i, &st[i]) != 0) memset(&st[i], 0, sizeof(st[i]));
  int rc = gpufs_stats_json_file(path, st, r->all.n);
  if (rc) fprintf(stderr, "libgpufs: GPUFS_STATS=%s: %s\n", path, strerror(-rc));
}

/* Write back what the instances hold dirty, each sync kernel waited for at
 * most limit_ms: kernels may still run, and one that fills every SM keeps
 * the sync kernel from starting (it then runs once they end).  With
 * nothing dirty no kernel is launched.  Context: rt_lock held. */
static void stop_write_back(struct gpufs_runtime *r, uint32_t limit_ms)
{
  for (uint32_t i = 0; i < r->all.n; i++) {
    struct gpufs_instance *in = r->all.in[i];
    int old = gpufs_instance_enter(in);
    if (gpufs_instance_dirty(in) != 0) sync_instance(in, 0, (int)limit_ms);
    gpufs_instance_leave(old);
  }
}

/* Wait until every kernel on the instances' GPUs has ended (the program's,
 * and the sync kernels a write-back left running).  0, or -EIO when a GPU
 * reports an error.  Context: rt_lock held; the daemon is paused or
 * serving. */
static int stop_wait_kernels(struct gpufs_runtime *r)
{
  int rc = 0;
  for (uint32_t i = 0; i < r->all.n; i++) {
    int old = gpufs_instance_enter(r->all.in[i]);
    if (cudaDeviceSynchronize() != cudaSuccess) rc = -EIO;
    gpufs_instance_leave(old);
  }
  return rc;
}

/* Frames still dirty over every instance, or -1 when some instance cannot
 * be read.  Context: no kernel of the instances runs. */
static int64_t stop_dirty(struct gpufs_runtime *r)
{
  int64_t dirty = 0;
  for (uint32_t i = 0; i < r->all.n; i++) {
    int old = gpufs_instance_enter(r->all.in[i]);
    const int64_t di = gpufs_instance_dirty(r->all.in[i]);
    gpufs_instance_leave(old);
    if (di != 0) dirty = di < 0 || dirty < 0 ? -1 : dirty + di;
  }
  return dirty;
}

/* The daemon serves again, on queues made new (the calls that gave up at
 * the pause left tickets no one will post).  0 or -errno.  Context:
 * rt_lock held, the daemon paused, no kernel of the instances running. */
static int stop_resume(struct gpufs_runtime *r)
{
  int rc = 0;
  for (uint32_t i = 0; i < r->all.n && rc == 0; i++) {
    int old = gpufs_instance_enter(r->all.in[i]);
    rc = gpufs_instance_queue_renew(r->all.in[i]);
    gpufs_instance_leave(old);
  }
  return rc ? rc : gpufs_daemon_resume(r->daemon);
}

/* gpufs_stop's steps (api.md, "gpufs_stop"):
 *   1. write back beside the kernels that still run (limit: stop_timeout_ms)
 *   2. pause the daemon: calls still waiting on the host give up with
 *      -ESHUTDOWN, so kernels that wait on it can end
 *   3. wait for every kernel of the instances' GPUs
 *   4. what is still dirty (pages written while 1 could not run, or after
 *      it) is written back by the daemon serving again on new queues, then
 *      it pauses again
 *   5. count what stays dirty (write errors): -EIO; free everything
 * A daemon worker stuck in a host call past the limit (2 or 4) ends the
 * steps there: its memory stays allocated for it. */
static int stop(void)
{
  const int clean = gpufs_cuda_scope_enter();
  /* held to the end: a gpufs_start racing this one waits until the old
   * instances' kernels are done and their memory is gone */
  pthread_mutex_lock(&rt_lock);
  struct gpufs_runtime *r = rt;
  rt = NULL;
  if (!r) {
    pthread_mutex_unlock(&rt_lock);
    gpufs_cuda_scope_leave(clean);
    return 0;
  }
  const uint32_t limit =
      r->all.in[0]->cfg.stop_timeout_ms ? r->all.in[0]->cfg.stop_timeout_ms : STOP_TIMEOUT_MS;
  stop_write_back(r, limit);
  char why[512] = "";
  int stuck = gpufs_daemon_pause_within(r->daemon, limit, why, sizeof(why)) != 0;
  int rc = stop_wait_kernels(r);
  if (!stuck && rc == 0 && stop_dirty(r) != 0 && stop_resume(r) == 0) {
    stop_write_back(r, limit);
    stuck = gpufs_daemon_pause_within(r->daemon, limit, why, sizeof(why)) != 0;
    rc = stop_wait_kernels(r);
  }
  /* the kernels are done (a pin waits for them), so the pinner ends; the
   * registrations leave the host file table while the daemon lives, and
   * their mappings go now that no kernel can read them */
  struct gpufs_hostfile_reg *regs = NULL;
  uint32_t nregs = 0;
  if (!stuck) {
    stop_write_stats(r);
    runtime_pinner_stop(r);
    gpufs_runtime_reg_take_all(r->daemon, &regs, &nregs);
  }
  gpufs_runtime_reg_release_all(regs, nregs);
  const int64_t dirty = rc == 0 ? stop_dirty(r) : 0;
  if (dirty != 0) {
    gpufs_set_detail("%lld pages held bytes that could not be written back",
                     (long long)(dirty < 0 ? -1 : dirty));
    rc = -EIO;
  }
  if (stuck) {
    /* the stuck worker uses the daemon and the queues' memory: all of it
     * stays; kernels launched later find no instance */
    gpufs_set_detail("%s after %u ms; its memory stays allocated", why, limit);
    int dev[GPUFS_MAX_INSTANCES];
    for (uint32_t i = 0; i < r->all.n; i++) dev[i] = r->all.in[i]->device;
    clear_devices(dev, r->all.n);
    pthread_mutex_unlock(&rt_lock);
    gpufs_cuda_scope_leave(clean);
    return -EIO;
  }
  gpufs_daemon_stop(r->daemon);
  r->daemon = NULL;
  runtime_free(r);
  pthread_mutex_unlock(&rt_lock);
  gpufs_cuda_scope_leave(clean);
  return rc;
}

int gpufs_stop(void)
{
  nvtxRangePushA("gpufs_stop");
  const int rc = stop();
  nvtxRangePop();
  return rc;
}

int gpufs_instance_count(void)
{
  pthread_mutex_lock(&rt_lock);
  int n = rt ? (int)rt->all.n : 0;
  pthread_mutex_unlock(&rt_lock);
  return n;
}

int gpufs_instance_device(int instance)
{
  pthread_mutex_lock(&rt_lock);
  int d = rt && instance >= 0 && (uint32_t)instance < rt->all.n ? rt->all.in[instance]->device
                                                                 : -EINVAL;
  pthread_mutex_unlock(&rt_lock);
  return d;
}

int gpufs_get_ref(int instance, struct gpufs_ref *ref)
{
  pthread_mutex_lock(&rt_lock);
  int ok = rt && ref && instance >= 0 && (uint32_t)instance < rt->all.n;
  if (ok) ref->instance = (uint32_t)instance;
  pthread_mutex_unlock(&rt_lock);
  return ok ? 0 : -EINVAL;
}

int gpufs_get_instance_stats(int instance, struct gpufs_stats *st)
{
  const int clean = api_lock();
  int rc = -EINVAL;
  if (rt && st && instance >= 0 && (uint32_t)instance < rt->all.n)
    rc = runtime_instance_stats(rt, (uint32_t)instance, st);
  api_unlock(clean);
  return rc;
}

int gpufs_get_stats(struct gpufs_stats *st)
{
  const int clean = api_lock();
  if (!rt || !st) {
    api_unlock(clean);
    return -EINVAL;
  }
  int rc = 0;
  struct gpufs_stats sum;
  memset(&sum, 0, sizeof(sum));
  for (uint32_t i = 0; i < rt->all.n && rc == 0; i++) {
    struct gpufs_instance *in = rt->all.in[i];
    struct gpufs_daemon_stats ds;
    struct gpufs_stats one;
    gpufs_daemon_get_queue_stats(rt->daemon, i, &ds);
    int old = gpufs_instance_enter(in);
    rc = gpufs_instance_stats(in, &ds, &one);
    gpufs_instance_leave(old);
    gpufs_stats_add(&sum, &one);
  }
  if (rc == 0) {
    gpufs_runtime_reg_stats(rt->daemon, rt->reg_refused, &sum);
    *st = sum;
  }
  api_unlock(clean);
  return rc;
}

int gpufs_register(const char *path)
{
  nvtxRangePushA("gpufs_register");
  const int clean = api_lock();
  int rc = -EINVAL;
  if (!rt) {
    gpufs_set_detail("libgpufs is not started");
  } else {
    struct gpufs_instance *in = rt->all.in[0];
    int old = gpufs_instance_enter(in);
    rc = gpufs_runtime_register(rt->daemon, in->cfg.register_max, path);
    gpufs_instance_leave(old);
    if (rc) rt->reg_refused++;
  }
  api_unlock(clean);
  nvtxRangePop();
  return rc;
}

int gpufs_unregister(const char *path)
{
  const int clean = api_lock();
  int rc = -EINVAL;
  if (!rt) {
    gpufs_set_detail("libgpufs is not started");
  } else {
    int old = gpufs_instance_enter(rt->all.in[0]);
    rc = gpufs_runtime_unregister(rt->daemon, path);
    gpufs_instance_leave(old);
  }
  api_unlock(clean);
  return rc;
}

ssize_t gpufs_pread(const char *path, void *buf, size_t size, int64_t offset)
{
  const int clean = api_lock();
  ssize_t r = rt ? gpufs_runtime_pread(&rt->all, rt->daemon, path, buf, size, offset) : -EINVAL;
  api_unlock(clean);
  return r;
}

/* gpufs_acquire and gpufs_acquire_range: range NULL for the whole file. */
static int64_t acquire(const char *path, const struct gpufs_acq_range *range)
{
  const int clean = api_lock();
  const int64_t r = rt ? gpufs_runtime_acquire(&rt->all, rt->daemon, rt->acq, path, range) : -EINVAL;
  api_unlock(clean);
  return r;
}

int64_t gpufs_acquire(const char *path) { return acquire(path, NULL); }

int64_t gpufs_acquire_range(const char *path, int64_t offset, uint64_t len)
{
  const struct gpufs_acq_range r = {offset, len};
  return acquire(path, &r);
}

int gpufs_release(const char *path)
{
  const int clean = api_lock();
  struct stat st;
  struct gpufs_hostfile_id id;
  int rc = !rt ? -EINVAL : !path ? -EFAULT : stat(path, &st) != 0 ? -errno : 0;
  /* no GPU opened the file: none holds its pages dirty */
  const int known = rc == 0 && gpufs_hostfiles_acquire_ident(gpufs_daemon_files(rt->daemon), &st, &id) == 0;
  for (uint32_t i = 0; known && i < rt->all.n; i++) {
    int r = sync_instance(rt->all.in[i], id.cid, -1);
    if (r && !rc) rc = r;
  }
  api_unlock(clean);
  return rc;
}
