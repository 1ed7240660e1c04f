/*
 * cuda_api.c - gpufs_start / gpufs_stop / gpufs_get_stats: one libgpufs
 * instance per process, its GPU and pinned memory, and the CUDA transfer
 * hooks of the daemon.
 *
 *   device memory          page frames, frame table, hash heads + locks,
 *                          rings, file table, queue tail + free_seq,
 *                          device staging (DMA path)
 *   pinned mapped host     queue slots + header, host staging
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "include/gpufs.cuh"
#include "libgpufs/common/devstate.h"
#include "libgpufs/host/cuda_glue.h"
#include "libgpufs/host/daemon.h"
#include "libgpufs/host/detail.h"

struct gpufs_instance {
  struct gpufs_config cfg;
  struct gpufs_dev dev;       /* what the device calls see (device pointers) */
  struct gpufs_queue_hdr *hdr;/* host pointers of the mapped memory */
  struct gpufs_slot *slots;
  uint8_t *staging;
  uint8_t *dev_staging;       /* DMA path only */
  cudaStream_t *streams;      /* DMA path: one per worker */
  cudaStream_t stats_stream;  /* stats copies and gpufs_sync's kernel */
  int *sync_results;          /* gpufs_sync: one per file-table entry (device) */
  struct gpufs_daemon *daemon;
};

static pthread_mutex_t inst_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gpufs_instance *inst;
static const struct gpufs_io_ops *test_io; /* fault injection, under inst_lock */

void gpufs_test_set_io_ops(const struct gpufs_io_ops *io)
{
  pthread_mutex_lock(&inst_lock);
  test_io = io;
  pthread_mutex_unlock(&inst_lock);
}

static int cuda_fail(cudaError_t e, const char *what)
{
  gpufs_set_detail("%s: %s", what, cudaGetErrorString(e));
  return e == cudaErrorMemoryAllocation ? -ENOMEM : -EIO;
}

#define CU(call)                                                                              \
  do {                                                                                        \
    cudaError_t e_ = (call);                                                                  \
    if (e_ != cudaSuccess) {                                                                  \
      rc = cuda_fail(e_, #call);                                                              \
      goto fail;                                                                              \
    }                                                                                         \
  } while (0)

/* DMA hooks: each worker copies with its own stream. */
static int dma_worker_init(void *ctx, uint32_t w)
{
  struct gpufs_instance *in = ctx;
  if (cudaSetDevice(in->cfg.device) != cudaSuccess) return -EIO;
  if (in->streams == NULL) return 0;
  return cudaStreamCreateWithFlags(&in->streams[w], cudaStreamNonBlocking) == cudaSuccess ? 0
                                                                                          : -EIO;
}

static void dma_worker_fini(void *ctx, uint32_t w)
{
  struct gpufs_instance *in = ctx;
  if (in->streams && in->streams[w]) cudaStreamDestroy(in->streams[w]);
}

static int dma_to_device(void *ctx, uint32_t w, uint64_t off, uint64_t len)
{
  struct gpufs_instance *in = ctx;
  if (cudaMemcpyAsync(in->dev_staging + off, in->staging + off, len, cudaMemcpyHostToDevice,
                      in->streams[w]) != cudaSuccess)
    return -EIO;
  return cudaStreamSynchronize(in->streams[w]) == cudaSuccess ? 0 : -EIO;
}

static uint32_t pow2_at_least(uint64_t v)
{
  uint32_t p = 1;
  while (p < v && p < (1u << 31)) p <<= 1;
  return p;
}

static void instance_free(struct gpufs_instance *in)
{
  struct gpufs_dev *d = &in->dev;
  cudaFree(d->cache.data);
  cudaFree(d->cache.frames);
  cudaFree(d->cache.heads);
  cudaFree(d->cache.locks);
  cudaFree(d->cache.rings);
  cudaFree(d->cache.dirty);
  cudaFree(in->sync_results);
  cudaFree(d->ftab.files);
  cudaFree(d->ftab.paths);
  cudaFree(d->ftab.lock);
  cudaFree(d->ftab.writers);
  cudaFree(d->ftab.stats);
  cudaFree(d->ra.slots);
  cudaFree(d->q.tail);
  cudaFree(d->q.free_seq);
  cudaFree(in->dev_staging);
  cudaFreeHost(in->hdr);
  cudaFreeHost(in->slots);
  cudaFreeHost(in->staging);
  if (in->stats_stream) cudaStreamDestroy(in->stats_stream);
  free(in->streams);
  free(in);
}

/* Frame table, hash, rings: initial contents built on the host. */
static int cache_init(struct gpufs_instance *in)
{
  struct gpufs_cache *c = &in->dev.cache;
  int rc = 0;
  struct gpufs_frame *fr = NULL;
  struct gpufs_ring *rings = NULL;
  c->page_size = in->cfg.page_size;
  c->nframes = (uint32_t)(in->cfg.cache_size / in->cfg.page_size);
  c->nbuckets = pow2_at_least(2ull * c->nframes);
  c->nrings = in->cfg.nrings;
  c->dwords = c->page_size / GPUFS_DIRTY_GRAIN / 32;
  CU(cudaMalloc((void **)&c->data, (size_t)c->nframes * c->page_size));
  CU(cudaMalloc((void **)&c->dirty, (size_t)c->nframes * c->dwords * sizeof(uint32_t)));
  CU(cudaMemset(c->dirty, 0, (size_t)c->nframes * c->dwords * sizeof(uint32_t)));
  CU(cudaMalloc((void **)&c->frames, (size_t)c->nframes * sizeof(*fr)));
  CU(cudaMalloc((void **)&c->heads, (size_t)c->nbuckets * sizeof(uint32_t)));
  CU(cudaMalloc((void **)&c->locks, (size_t)c->nbuckets * sizeof(uint32_t)));
  CU(cudaMalloc((void **)&c->rings, (size_t)c->nrings * sizeof(*rings)));
  CU(cudaMemset(c->heads, 0xff, (size_t)c->nbuckets * sizeof(uint32_t))); /* GPUFS_NIL */
  CU(cudaMemset(c->locks, 0, (size_t)c->nbuckets * sizeof(uint32_t)));
  fr = calloc(c->nframes, sizeof(*fr));
  rings = calloc(c->nrings, sizeof(*rings));
  if (!fr || !rings) {
    rc = -ENOMEM;
    goto fail;
  }
  for (uint32_t i = 0; i < c->nframes; i++) fr[i].next = GPUFS_NIL;
  for (uint32_t r = 0; r < c->nrings; r++) {
    uint64_t a = (uint64_t)r * c->nframes / c->nrings, b = (uint64_t)(r + 1) * c->nframes / c->nrings;
    rings[r].first = (uint32_t)a;
    rings[r].count = (uint32_t)(b - a);
    rings[r].dirty_hint = GPUFS_NIL;
  }
  CU(cudaMemcpy(c->frames, fr, (size_t)c->nframes * sizeof(*fr), cudaMemcpyHostToDevice));
  CU(cudaMemcpy(c->rings, rings, (size_t)c->nrings * sizeof(*rings), cudaMemcpyHostToDevice));
fail:
  free(fr);
  free(rings);
  return rc;
}

static int queue_init(struct gpufs_instance *in)
{
  struct gpufs_queue_ref *q = &in->dev.q;
  int rc = 0;
  uint64_t *seq = NULL;
  q->nslots = (uint32_t)(gpufs_config_staging(&in->cfg) / in->cfg.page_size);
  q->stride = in->cfg.page_size;
  q->poll_max_ns = in->cfg.poll_max_ns;
  size_t stage_bytes = (size_t)q->nslots * q->stride;
  CU(cudaHostAlloc((void **)&in->hdr, sizeof(*in->hdr), cudaHostAllocMapped));
  CU(cudaHostAlloc((void **)&in->slots, (size_t)q->nslots * sizeof(struct gpufs_slot),
                   cudaHostAllocMapped));
  CU(cudaHostAlloc((void **)&in->staging, stage_bytes, cudaHostAllocMapped));
  memset(in->hdr, 0, sizeof(*in->hdr));
  memset(in->slots, 0, (size_t)q->nslots * sizeof(struct gpufs_slot));
  in->hdr->nslots = q->nslots;
  in->hdr->stride = q->stride;
  CU(cudaHostGetDevicePointer((void **)&q->hdr, in->hdr, 0));
  CU(cudaHostGetDevicePointer((void **)&q->slots, in->slots, 0));
  CU(cudaHostGetDevicePointer((void **)&q->staging_host, in->staging, 0));
  q->staging_in = q->staging_host;
  if (in->cfg.xfer == GPUFS_XFER_DMA) {
    CU(cudaMalloc((void **)&in->dev_staging, stage_bytes));
    q->staging_in = in->dev_staging;
  }
  CU(cudaMalloc((void **)&q->tail, sizeof(uint64_t)));
  CU(cudaMemset(q->tail, 0, sizeof(uint64_t)));
  CU(cudaMalloc((void **)&q->free_seq, (size_t)q->nslots * sizeof(uint64_t)));
  seq = malloc((size_t)q->nslots * sizeof(uint64_t));
  if (!seq) {
    rc = -ENOMEM;
    goto fail;
  }
  for (uint32_t i = 0; i < q->nslots; i++) seq[i] = i; /* slot i is free for ticket i */
  CU(cudaMemcpy(q->free_seq, seq, (size_t)q->nslots * sizeof(uint64_t), cudaMemcpyHostToDevice));
fail:
  free(seq);
  return rc;
}

static int ftab_init(struct gpufs_instance *in)
{
  struct gpufs_ftab *t = &in->dev.ftab;
  int rc = 0;
  t->nfiles = in->cfg.max_open_files;
  CU(cudaMalloc((void **)&t->files, (size_t)t->nfiles * sizeof(struct gpufs_gfile)));
  CU(cudaMemset(t->files, 0, (size_t)t->nfiles * sizeof(struct gpufs_gfile))); /* all FREE */
  CU(cudaMalloc((void **)&t->paths, (size_t)t->nfiles * GPUFS_PATH_MAX));
  CU(cudaMalloc((void **)&t->lock, sizeof(uint32_t)));
  CU(cudaMemset(t->lock, 0, sizeof(uint32_t)));
  CU(cudaMalloc((void **)&t->writers, sizeof(uint32_t)));
  CU(cudaMemset(t->writers, 0, sizeof(uint32_t)));
  CU(cudaMalloc((void **)&t->stats, sizeof(*t->stats)));
  CU(cudaMemset(t->stats, 0, sizeof(*t->stats)));
  CU(cudaMalloc((void **)&in->sync_results, (size_t)t->nfiles * sizeof(int)));
fail:
  return rc;
}

/* Readahead slots: enough that the groups resident at once rarely share
 * one (2,112 warps of 264 blocks on an H200; docs/design.md). */
#define GPUFS_RA_SLOTS 16384u

static int ra_init(struct gpufs_instance *in)
{
  struct gpufs_ra_ref *ra = &in->dev.ra;
  int rc = 0;
  uint32_t w = in->cfg.readahead_max / in->cfg.page_size;
  ra->max_pages = w < GPUFS_CHUNK ? w : GPUFS_CHUNK;
  ra->nslots = GPUFS_RA_SLOTS;
  CU(cudaMalloc((void **)&ra->slots, 2ull * ra->nslots * sizeof(uint64_t)));
  CU(cudaMemset(ra->slots, 0, 2ull * ra->nslots * sizeof(uint64_t)));
fail:
  return rc;
}

int gpufs_start(const struct gpufs_config *user_cfg)
{
  struct gpufs_config cfg;
  const char *field = NULL, *why = NULL;
  int rc, ndev = 0;
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
  if (gpufs_config_check(&cfg, &field, &why) != 0) {
    gpufs_set_detail("%s: %s", field, why);
    return -EINVAL;
  }
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    gpufs_set_detail("no CUDA device");
    return -ENODEV;
  }
  if (cfg.device >= ndev) {
    gpufs_set_detail("device: %d, but only %d CUDA devices", cfg.device, ndev);
    return -EINVAL;
  }
  pthread_mutex_lock(&inst_lock);
  if (inst) {
    pthread_mutex_unlock(&inst_lock);
    gpufs_set_detail("libgpufs is already started");
    return -EBUSY;
  }
  struct gpufs_instance *in = calloc(1, sizeof(*in));
  if (!in) {
    pthread_mutex_unlock(&inst_lock);
    return -ENOMEM;
  }
  in->cfg = cfg;
  rc = 0;
  CU(cudaSetDevice(cfg.device));
  CU(cudaStreamCreateWithFlags(&in->stats_stream, cudaStreamNonBlocking));
  if ((rc = cache_init(in)) != 0) goto fail;
  if ((rc = queue_init(in)) != 0) goto fail;
  if ((rc = ftab_init(in)) != 0) goto fail;
  if ((rc = ra_init(in)) != 0) goto fail;
  in->dev.alloc_timeout_us = cfg.alloc_timeout_ms * 1000u;
  CU(cudaDeviceSynchronize());
  if ((rc = gpufs_dev_publish(&in->dev)) != 0) {
    gpufs_set_detail("cannot publish the device state");
    goto fail;
  }
  if (cfg.xfer == GPUFS_XFER_DMA) {
    in->streams = calloc(cfg.daemon_threads, sizeof(cudaStream_t));
    if (!in->streams) {
      rc = -ENOMEM;
      goto fail;
    }
  }
  struct gpufs_daemon_params p = {
      .hdr = in->hdr,
      .slots = in->slots,
      .staging = in->staging,
      .nslots = in->dev.q.nslots,
      .stride = in->dev.q.stride,
      .nthreads = cfg.daemon_threads,
      .max_batch = cfg.max_batch,
      .max_open_files = cfg.max_open_files,
      .to_device = cfg.xfer == GPUFS_XFER_DMA ? dma_to_device : NULL,
      .worker_init = dma_worker_init,
      .worker_fini = dma_worker_fini,
      .ctx = in,
      .io = test_io,
  };
  if ((rc = gpufs_daemon_start(&p, &in->daemon)) != 0) {
    gpufs_set_detail("cannot start the daemon: %s", gpufs_strerror(rc));
    goto fail;
  }
  inst = in;
  pthread_mutex_unlock(&inst_lock);
  return 0;
fail:
  instance_free(in);
  pthread_mutex_unlock(&inst_lock);
  return rc;
}

/* gpufs_sync's work, with inst_lock held: run the sync kernel on the side
 * stream and wait for it at most timeout_ms (< 0: no limit).  0, the first
 * file's error, or -ETIMEDOUT (the kernel still runs). */
static int sync_files(struct gpufs_instance *in, int timeout_ms)
{
  uint32_t n = in->dev.ftab.nfiles;
  int rc = 0;
  int *res = calloc(n, sizeof(int));
  if (!res) return -ENOMEM;
  if ((rc = gpufs_dev_sync_launch(n, in->sync_results, in->stats_stream)) != 0) goto out;
  for (int waited = 0;; waited++) {
    cudaError_t q = cudaStreamQuery(in->stats_stream);
    if (q == cudaSuccess) break;
    if (q != cudaErrorNotReady) {
      rc = cuda_fail(q, "gpufs_sync kernel");
      goto out;
    }
    if (timeout_ms >= 0 && waited >= timeout_ms) {
      rc = -ETIMEDOUT;
      goto out;
    }
    struct timespec ms = {0, 1000000L};
    nanosleep(&ms, NULL);
  }
  CU(cudaMemcpyAsync(res, in->sync_results, n * sizeof(int), cudaMemcpyDeviceToHost,
                     in->stats_stream));
  CU(cudaStreamSynchronize(in->stats_stream));
  for (uint32_t i = 0; i < n && rc == 0; i++) rc = res[i];
fail:
out:
  free(res);
  return rc;
}

int gpufs_sync(void)
{
  pthread_mutex_lock(&inst_lock);
  struct gpufs_instance *in = inst;
  if (!in) {
    pthread_mutex_unlock(&inst_lock);
    return -EINVAL;
  }
  int old = -1;
  cudaGetDevice(&old);
  cudaSetDevice(in->cfg.device);
  int rc = sync_files(in, -1);
  if (old >= 0) cudaSetDevice(old);
  pthread_mutex_unlock(&inst_lock);
  return rc;
}

/* Frames holding bytes not written back, in a snapshot of the frame table
 * (kernels may run: then approximate).  -errno when it cannot be read. */
static int64_t count_dirty(const struct gpufs_cache *c, cudaStream_t stream)
{
  struct gpufs_frame *fr = malloc((size_t)c->nframes * sizeof(*fr));
  int rc = 0;
  int64_t n = 0;
  if (!fr) return -ENOMEM;
  CU(cudaMemcpyAsync(fr, c->frames, (size_t)c->nframes * sizeof(*fr), cudaMemcpyDeviceToHost,
                     stream));
  CU(cudaStreamSynchronize(stream));
  for (uint32_t f = 0; f < c->nframes; f++) n += (fr[f].state & GPUFS_PG_DIRTY) != 0;
fail:
  free(fr);
  return rc < 0 ? rc : n;
}

#define STOP_SYNC_MS 10000 /* how long gpufs_stop lets the write-back run */

int gpufs_stop(void)
{
  /* held to the end: a gpufs_start racing this one waits until the old
   * instance's kernels are done and its memory is gone */
  pthread_mutex_lock(&inst_lock);
  struct gpufs_instance *in = inst;
  inst = NULL;
  if (!in) {
    pthread_mutex_unlock(&inst_lock);
    return 0;
  }
  int old = -1;
  cudaGetDevice(&old);
  cudaSetDevice(in->cfg.device); /* the caller's thread may have another one current */
  /* write back what files left open hold, while the daemon still serves;
   * a kernel that never ends must not keep us here, and with nothing dirty
   * no kernel is launched (it could wait behind a kernel stuck on the
   * host, which only the stop below releases) */
  if (count_dirty(&in->dev.cache, in->stats_stream) != 0) sync_files(in, STOP_SYNC_MS);
  /* waiting device calls see STOPPED and return -ESHUTDOWN; then the
   * kernels can finish and the memory they use can go */
  gpufs_daemon_stop(in->daemon);
  cudaError_t e = cudaDeviceSynchronize();
  int rc = e == cudaSuccess ? 0 : -EIO;
  int64_t dirty = e == cudaSuccess ? count_dirty(&in->dev.cache, in->stats_stream) : 0;
  if (dirty != 0) {
    gpufs_set_detail("%lld pages held bytes that could not be written back",
                     (long long)(dirty < 0 ? -1 : dirty));
    rc = -EIO;
  }
  instance_free(in);
  if (old >= 0) cudaSetDevice(old);
  pthread_mutex_unlock(&inst_lock);
  return rc;
}

/* Chain lengths of a snapshot of the hash table (kernels may be changing
 * it: every walk is bounded, the figures are approximate then). */
static int chain_stats(const struct gpufs_cache *c, cudaStream_t stream, struct gpufs_stats *st)
{
  int rc = 0;
  uint32_t *heads = malloc((size_t)c->nbuckets * sizeof(uint32_t));
  struct gpufs_frame *fr = malloc((size_t)c->nframes * sizeof(*fr));
  if (!heads || !fr) {
    rc = -ENOMEM;
    goto fail;
  }
  /* the side stream: a kernel running on the default stream must not
   * hold these copies up */
  CU(cudaMemcpyAsync(heads, c->heads, (size_t)c->nbuckets * sizeof(uint32_t),
                     cudaMemcpyDeviceToHost, stream));
  CU(cudaMemcpyAsync(fr, c->frames, (size_t)c->nframes * sizeof(*fr), cudaMemcpyDeviceToHost,
                     stream));
  CU(cudaStreamSynchronize(stream));
  for (uint32_t f = 0; f < c->nframes; f++) st->dirty += (fr[f].state & GPUFS_PG_DIRTY) != 0;
  for (uint32_t b = 0; b < c->nbuckets; b++) {
    uint64_t n = 0;
    for (uint32_t f = heads[b]; f < c->nframes && n < c->nframes; f = fr[f].next) n++;
    if (n == 0) continue;
    st->chains++;
    st->chained += n;
    if (n > st->chain_max) st->chain_max = n;
  }
fail:
  free(heads);
  free(fr);
  return rc;
}

int gpufs_get_stats(struct gpufs_stats *st)
{
  int rc = 0, khz = 0;
  struct gpufs_ring *rings = NULL;
  pthread_mutex_lock(&inst_lock);
  struct gpufs_instance *in = inst;
  if (!in || !st) {
    pthread_mutex_unlock(&inst_lock);
    return -EINVAL;
  }
  memset(st, 0, sizeof(*st));
  int old = -1;
  cudaGetDevice(&old);
  cudaSetDevice(in->cfg.device); /* its streams and memory belong to that device */
  uint32_t n = in->dev.cache.nrings;
  rings = malloc(n * sizeof(*rings));
  if (!rings) {
    rc = -ENOMEM;
    goto fail;
  }
  /* a side stream: the counters can be read while kernels run */
  CU(cudaMemcpyAsync(rings, in->dev.cache.rings, n * sizeof(*rings), cudaMemcpyDeviceToHost,
                     in->stats_stream));
  CU(cudaStreamSynchronize(in->stats_stream));
  CU(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, in->cfg.device));
  uint64_t cycles = 0, phase[4] = {0, 0, 0, 0};
  for (uint32_t r = 0; r < n; r++) {
    for (int k = 0; k < 4; k++) phase[k] += rings[r].phase_cycles[k];
    st->rounds += rings[r].rounds;
    st->ra_pages += rings[r].ra_pages;
    st->hits += rings[r].hits;
    st->misses += rings[r].misses;
    st->evictions += rings[r].evictions;
    st->scanned += rings[r].scanned;
    st->nofree += rings[r].nofree;
    st->writebacks += rings[r].writebacks;
    st->cleanings += rings[r].cleanings;
    cycles += rings[r].alloc_cycles;
  }
  st->alloc_ns = khz > 0 ? (uint64_t)((double)cycles * 1e6 / khz) : 0;
  uint64_t *ns[4] = {&st->fetch_ns, &st->fill_ns, &st->settle_ns, &st->copy_ns};
  for (int k = 0; k < 4; k++) *ns[k] = khz > 0 ? (uint64_t)((double)phase[k] * 1e6 / khz) : 0;
  if ((rc = chain_stats(&in->dev.cache, in->stats_stream, st)) != 0) goto fail;
  struct gpufs_ftab_stats fs;
  CU(cudaMemcpyAsync(&fs, in->dev.ftab.stats, sizeof(fs), cudaMemcpyDeviceToHost,
                     in->stats_stream));
  CU(cudaStreamSynchronize(in->stats_stream));
  st->gopens = fs.calls;
  st->gopen_ns = fs.total_ns;
  st->gopen_lock_ns = fs.lock_ns;
  st->gopen_host_ns = fs.host_ns;
  st->gopen_wait_ns = fs.wait_ns;
  struct gpufs_daemon_stats ds;
  gpufs_daemon_get_stats(in->daemon, &ds);
  st->requests = ds.requests;
  st->batches = ds.batches;
  st->preads = ds.preads;
  st->merged = ds.merged;
  st->bytes_read = ds.bytes_read;
  st->transfers = ds.transfers;
  st->opens = ds.opens;
  st->errors = ds.errors;
  st->daemon_io_ns = ds.io_ns;
  st->daemon_busy_ns = ds.busy_ns;
  st->pwrites = ds.pwrites;
  st->bytes_written = ds.bytes_written;
fail:
  free(rings);
  if (old >= 0) cudaSetDevice(old);
  pthread_mutex_unlock(&inst_lock);
  return rc;
}
