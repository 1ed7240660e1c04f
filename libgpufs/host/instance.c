/*
 * instance.c - one libgpufs instance: one GPU's page cache, request
 * queue, file table and readahead state, and its pinned queue memory
 * (instance.h).
 *
 *   device memory          page frames, frame table, hash heads + locks,
 *                          rings, file table, queue tail + free_seq
 *   pinned mapped host     queue slots + header, host staging (portable:
 *                          the daemon's workers touch it with any device
 *                          current; the GPU copies served pages from it)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "libgpufs/common/devcalls.h"
#include "libgpufs/host/detail.h"
#include "libgpufs/host/instance.h"

int gpufs_cuda_fail(cudaError_t e, const char *what)
{
  gpufs_set_detail("%s: %s", what, cudaGetErrorString(e));
  return e == cudaErrorMemoryAllocation ? -ENOMEM : -EIO;
}

int gpufs_cuda_scope_enter(void) { return cudaPeekAtLastError() == cudaSuccess; }

void gpufs_cuda_scope_leave(int clean)
{
  if (clean) (void)cudaGetLastError();
}

int gpufs_instance_enter(const struct gpufs_instance *in)
{
  int old = -1;
  if (cudaGetDevice(&old) != cudaSuccess) old = -1;
  if (old != in->device) cudaSetDevice(in->device);
  return old;
}

void gpufs_instance_leave(int old)
{
  int cur = -1;
  if (old >= 0 && (cudaGetDevice(&cur) != cudaSuccess || cur != old)) cudaSetDevice(old);
}

struct gpufs_daemon_queue gpufs_instance_queue(struct gpufs_instance *in)
{
  struct gpufs_daemon_queue q = {
      .hdr = in->hdr,
      .slots = in->slots,
      .staging = in->staging,
      .nslots = in->dev.q.nslots,
      .stride = in->dev.q.stride,
  };
  return q;
}

static uint32_t pow2_at_least(uint64_t v)
{
  uint32_t p = 1;
  while (p < v && p < (1u << 31)) p <<= 1;
  return p;
}

void gpufs_instance_destroy(struct gpufs_instance *in)
{
  if (!in) return;
  int old = gpufs_instance_enter(in);
  struct gpufs_dev *d = &in->dev;
  cudaFree(d->cache.data);
  cudaFree(d->cache.frames);
  cudaFree(d->cache.heads);
  cudaFree(d->cache.locks);
  cudaFree(d->cache.rings);
  cudaFree(d->cache.stats);
  cudaFree(d->cache.dirty);
  cudaFree(in->sync_results);
  cudaFree(d->ftab.files);
  cudaFree(d->ftab.nodes);
  cudaFree(d->ftab.paths);
  cudaFree(d->ftab.lock);
  cudaFree(d->ftab.writers);
  cudaFree(d->ftab.stats);
  cudaFree(d->maps.recs);
  cudaFree(d->maps.lock);
  cudaFree(d->maps.live);
  cudaFree(d->ra.slots);
  cudaFree(d->ra.posted);
  cudaFree(d->ra.nposted);
  cudaFree(d->q.tail);
  cudaFree(d->q.free_seq);
  cudaFreeHost(in->hdr);
  cudaFreeHost(in->slots);
  cudaFreeHost(in->staging);
  if (in->stats_stream) cudaStreamDestroy(in->stats_stream);
  free(in);
  gpufs_instance_leave(old);
}

/* cudaMalloc of `bytes` at *p, zeroed: the failing call's error, else
 * cudaSuccess (for CU). */
static cudaError_t dev_zalloc(void **p, size_t bytes)
{
  const cudaError_t e = cudaMalloc(p, bytes);
  return e == cudaSuccess ? cudaMemset(*p, 0, bytes) : e;
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
  c->nrings = gpufs_config_rings(&in->cfg);
  const uint32_t grain = in->cfg.dirty_grain ? in->cfg.dirty_grain : GPUFS_DIRTY_GRAIN;
  c->dwords = c->page_size / grain / 32; /* the grain is page_size / (dwords * 32) */
  CU(cudaMalloc((void **)&c->data, (size_t)c->nframes * c->page_size));
  CU(dev_zalloc((void **)&c->dirty, (size_t)c->nframes * c->dwords * sizeof(uint32_t)));
  CU(cudaMalloc((void **)&c->frames, (size_t)c->nframes * sizeof(*fr)));
  CU(cudaMalloc((void **)&c->heads, (size_t)c->nbuckets * sizeof(uint32_t)));
  CU(cudaMalloc((void **)&c->locks, (size_t)c->nbuckets * sizeof(uint32_t)));
  CU(cudaMalloc((void **)&c->rings, (size_t)c->nrings * sizeof(*rings)));
  CU(dev_zalloc((void **)&c->stats, (size_t)c->nrings * sizeof(struct gpufs_ring_stats)));
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

/* The producers' side of a new queue: tail 0, slot i free for ticket i,
 * no ticket seen by any slot.  No kernel of the instance runs and no
 * worker serves the queue (a start, or gpufs_daemon_resume's caller).
 * 0 or -errno. */
int gpufs_instance_queue_renew(struct gpufs_instance *in)
{
  struct gpufs_queue_ref *q = &in->dev.q;
  int rc = 0;
  uint64_t *seq = malloc((size_t)q->nslots * sizeof(uint64_t));
  if (!seq) return -ENOMEM;
  for (uint32_t i = 0; i < q->nslots; i++) seq[i] = i; /* slot i is free for ticket i */
  gpufs_q_forget_tickets(in->slots, q->nslots);
  CU(cudaMemset(q->tail, 0, sizeof(uint64_t)));
  CU(cudaMemcpy(q->free_seq, seq, (size_t)q->nslots * sizeof(uint64_t), cudaMemcpyHostToDevice));
fail:
  free(seq);
  return rc;
}

static int queue_init(struct gpufs_instance *in)
{
  struct gpufs_queue_ref *q = &in->dev.q;
  int rc = 0;
  q->nslots = (uint32_t)(gpufs_config_staging(&in->cfg) / in->cfg.page_size);
  q->stride = in->cfg.page_size;
  q->poll_max_ns = in->cfg.poll_max_ns;
  size_t stage_bytes = (size_t)q->nslots * q->stride;
  CU(cudaHostAlloc((void **)&in->hdr, sizeof(*in->hdr), cudaHostAllocMapped | cudaHostAllocPortable));
  CU(cudaHostAlloc((void **)&in->slots, (size_t)q->nslots * sizeof(struct gpufs_slot),
                   cudaHostAllocMapped | cudaHostAllocPortable));
  CU(cudaHostAlloc((void **)&in->staging, stage_bytes, cudaHostAllocMapped | cudaHostAllocPortable));
  memset(in->hdr, 0, sizeof(*in->hdr));
  memset(in->slots, 0, (size_t)q->nslots * sizeof(struct gpufs_slot));
  in->hdr->nslots = q->nslots;
  in->hdr->stride = q->stride;
  CU(cudaHostGetDevicePointer((void **)&q->hdr, in->hdr, 0));
  CU(cudaHostGetDevicePointer((void **)&q->slots, in->slots, 0));
  CU(cudaHostGetDevicePointer((void **)&q->staging, in->staging, 0));
  CU(cudaMalloc((void **)&q->tail, sizeof(uint64_t)));
  CU(cudaMalloc((void **)&q->free_seq, (size_t)q->nslots * sizeof(uint64_t)));
  rc = gpufs_instance_queue_renew(in);
fail:
  return rc;
}

static int ftab_init(struct gpufs_instance *in)
{
  struct gpufs_ftab *t = &in->dev.ftab;
  int rc = 0;
  t->nfiles = in->cfg.max_open_files;
  CU(dev_zalloc((void **)&t->files, (size_t)t->nfiles * sizeof(struct gpufs_gfile))); /* all FREE */
  CU(dev_zalloc((void **)&t->nodes, (size_t)t->nfiles * sizeof(struct gpufs_gnode))); /* cid 0: free */
  CU(cudaMalloc((void **)&t->paths, (size_t)t->nfiles * GPUFS_PATH_MAX));
  CU(dev_zalloc((void **)&t->lock, sizeof(uint32_t)));
  CU(dev_zalloc((void **)&t->writers, sizeof(uint32_t)));
  CU(dev_zalloc((void **)&t->stats, sizeof(*t->stats)));
  CU(cudaMalloc((void **)&in->sync_results, (size_t)t->nfiles * sizeof(int)));
fail:
  return rc;
}

/* The writable-mapping table (libgpufs/common/wmaps.h): room for one live
 * key per frame, up to GPUFS_WMAPS_MAX keys, at a load of at most 1/2. */
#define GPUFS_WMAPS_MAX 32768u

static int wmaps_init(struct gpufs_instance *in)
{
  struct gpufs_wmaps *m = &in->dev.maps;
  int rc = 0;
  uint32_t want = in->dev.cache.nframes < GPUFS_WMAPS_MAX ? in->dev.cache.nframes : GPUFS_WMAPS_MAX;
  m->cap = 64;
  while (m->cap < 2 * want) m->cap *= 2;
  CU(dev_zalloc((void **)&m->recs, (size_t)m->cap * sizeof(struct gpufs_wmap))); /* all empty */
  CU(dev_zalloc((void **)&m->lock, sizeof(uint32_t)));
  CU(dev_zalloc((void **)&m->live, sizeof(uint32_t)));
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
  const uint32_t most = in->cfg.readahead_async ? GPUFS_RA_POST_MAX : GPUFS_CHUNK;
  ra->max_pages = w < most ? w : most;
  ra->nslots = GPUFS_RA_SLOTS;
  CU(dev_zalloc((void **)&ra->slots, 2ull * ra->nslots * sizeof(uint64_t)));
  /* posted readahead: a word per queue slot, and their count; half the
   * slots at most, so that the calls' own misses always find slots that
   * move (device/post.cu) */
  ra->async = in->cfg.readahead_async;
  ra->post_slots = in->dev.q.nslots / 2;
  CU(dev_zalloc((void **)&ra->posted, (uint64_t)in->dev.q.nslots * sizeof(uint64_t)));
  CU(dev_zalloc((void **)&ra->nposted, sizeof(uint32_t)));
fail:
  return rc;
}

int gpufs_instance_create(const struct gpufs_config *cfg, uint32_t index, int device,
                          struct gpufs_instance **out)
{
  int rc = 0;
  struct gpufs_instance *in = calloc(1, sizeof(*in));
  if (!in) return -ENOMEM;
  in->cfg = *cfg;
  in->device = device;
  in->index = index;
  in->dev.instance = index;
  in->dev.alloc_timeout_us = cfg->alloc_timeout_ms * 1000u;
  in->dev.pull_warps = cfg->pull_warps;
  int old = gpufs_instance_enter(in);
  CU(cudaSetDevice(device));
  if ((rc = gpufs_dev_preload()) != 0) goto fail;
  CU(cudaStreamCreateWithFlags(&in->stats_stream, cudaStreamNonBlocking));
  if ((rc = cache_init(in)) != 0) goto fail;
  if ((rc = queue_init(in)) != 0) goto fail;
  if ((rc = ftab_init(in)) != 0) goto fail;
  if ((rc = wmaps_init(in)) != 0) goto fail;
  if ((rc = ra_init(in)) != 0) goto fail;
  CU(cudaDeviceSynchronize());
  gpufs_instance_leave(old);
  *out = in;
  return 0;
fail:
  gpufs_instance_leave(old);
  gpufs_instance_destroy(in);
  return rc;
}

int64_t gpufs_instance_dirty(const struct gpufs_instance *in)
{
  const struct gpufs_cache *c = &in->dev.cache;
  struct gpufs_frame *fr = malloc((size_t)c->nframes * sizeof(*fr));
  int rc = 0;
  int64_t n = 0;
  if (!fr) return -ENOMEM;
  CU(cudaMemcpyAsync(fr, c->frames, (size_t)c->nframes * sizeof(*fr), cudaMemcpyDeviceToHost,
                     in->stats_stream));
  CU(cudaStreamSynchronize(in->stats_stream));
  for (uint32_t f = 0; f < c->nframes; f++) n += (fr[f].state & GPUFS_PG_DIRTY) != 0;
fail:
  free(fr);
  return rc < 0 ? rc : n;
}

/* Whether kernels on device a may use instance caches on device b: peer
 * access, and atomics on b's memory that are atomic for b's kernels too
 * (the pin protocol). */
static int peer_reachable(int a, int b)
{
  int can = 0, atomics = 0;
  if (cudaDeviceCanAccessPeer(&can, a, b) != cudaSuccess || !can) return 0;
  if (cudaDeviceGetP2PAttribute(&atomics, cudaDevP2PAttrNativeAtomicSupported, a, b) !=
      cudaSuccess)
    return 0;
  return atomics != 0;
}

void gpufs_instances_unlink(struct gpufs_instances *all)
{
  int old = -1;
  cudaGetDevice(&old);
  /* an access that cannot be disabled stays; a later start finds it enabled */
  for (uint32_t k = 0; k < all->npeer_on; k++)
    if (cudaSetDevice(all->peer_on[k].from) == cudaSuccess)
      cudaDeviceDisablePeerAccess(all->peer_on[k].to);
  all->npeer_on = 0;
  if (old >= 0) cudaSetDevice(old);
}

int gpufs_instances_publish(struct gpufs_instances *all)
{
  int rc = 0;
  int old = -1;
  cudaGetDevice(&old);
  for (uint32_t i = 0; i < all->n && rc == 0; i++) {
    struct gpufs_instance *in = all->in[i];
    uint32_t peers = 0;
    int is_default = 1; /* the first instance of a device */
    CU(cudaSetDevice(in->device));
    for (uint32_t j = 0; j < all->n; j++) {
      const struct gpufs_instance *p = all->in[j];
      if (j < i && p->device == in->device) is_default = 0;
      if (j == i) continue;
      if (p->device == in->device) {
        peers |= 1u << j;
        continue;
      }
      if (!peer_reachable(in->device, p->device)) continue;
      int on = 0; /* enabled by an instance before this one (same devices)? */
      for (uint32_t k = 0; k < all->npeer_on; k++)
        on |= all->peer_on[k].from == in->device && all->peer_on[k].to == p->device;
      cudaError_t e = on ? cudaSuccess : cudaDeviceEnablePeerAccess(p->device, 0);
      if (e == cudaErrorPeerAccessAlreadyEnabled) {
        /* the program enabled it: not an error for us, nor ours to undo */
      } else if (e != cudaSuccess) {
        continue; /* no peer caching with that GPU: its pages come from the host */
      } else if (!on) {
        all->peer_on[all->npeer_on].from = in->device;
        all->peer_on[all->npeer_on].to = p->device;
        all->npeer_on++;
      }
      /* the peer's cache only: no gopen, no queue, no mapping reaches it */
      struct gpufs_dev view;
      memset(&view, 0, sizeof(view));
      view.cache = p->dev.cache;
      view.instance = j;
      if ((rc = gpufs_dev_publish(&view, 0)) != 0) goto fail;
      peers |= 1u << j;
    }
    in->dev.peers = peers;
    if ((rc = gpufs_dev_publish(&in->dev, is_default)) != 0) {
      gpufs_set_detail("cannot publish the device state");
      goto fail;
    }
  }
fail:
  if (old >= 0) cudaSetDevice(old);
  return rc;
}
