/*
 * stats.c - the counters of an instance (its cache, read from device
 * memory on its side stream while kernels may run, and the daemon's work on
 * its queue), and their sum over instances.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "libgpufs/host/detail.h"
#include "libgpufs/host/instance.h"

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

void gpufs_stats_add(struct gpufs_stats *sum, const struct gpufs_stats *one)
{
  /* every field is a uint64_t counter summed over instances, but the
   * longest chain, which is the longest of any */
  _Static_assert(sizeof(struct gpufs_stats) % sizeof(uint64_t) == 0, "counters only");
  uint64_t *s = (uint64_t *)sum;
  const uint64_t *o = (const uint64_t *)one;
  const size_t max_at = offsetof(struct gpufs_stats, chain_max) / sizeof(uint64_t);
  for (size_t k = 0; k < sizeof(*sum) / sizeof(uint64_t); k++)
    s[k] = k == max_at ? (s[k] > o[k] ? s[k] : o[k]) : s[k] + o[k];
}

int gpufs_instance_stats(const struct gpufs_instance *in, const struct gpufs_daemon_stats *ds,
                         struct gpufs_stats *st)
{
  int rc = 0, khz = 0;
  struct gpufs_ring_stats *rings = NULL;
  memset(st, 0, sizeof(*st));
  uint32_t n = in->dev.cache.nrings;
  rings = malloc(n * sizeof(*rings));
  if (!rings) return -ENOMEM;
  /* a side stream: the counters can be read while kernels run */
  CU(cudaMemcpyAsync(rings, in->dev.cache.stats, n * sizeof(*rings), cudaMemcpyDeviceToHost,
                     in->stats_stream));
  CU(cudaStreamSynchronize(in->stats_stream));
  CU(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, in->device));
  uint64_t cycles = 0, phase[4] = {0, 0, 0, 0};
  for (uint32_t r = 0; r < n; r++) {
    for (int k = 0; k < 4; k++) phase[k] += rings[r].phase_cycles[k];
    st->rounds += rings[r].rounds;
    st->ra_pages += rings[r].ra_pages;
    st->peer_hits += rings[r].peer_hits;
    st->reg_pages += rings[r].reg_pages;
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
  st->requests = ds->requests;
  st->batches = ds->batches;
  st->preads = ds->preads;
  st->merged = ds->merged;
  st->bytes_read = ds->bytes_read;
  st->opens = ds->opens;
  st->errors = ds->errors;
  st->daemon_io_ns = ds->io_ns;
  st->daemon_busy_ns = ds->busy_ns;
  st->pwrites = ds->pwrites;
  st->bytes_written = ds->bytes_written;
  st->map_copies = ds->map_copies;
  st->map_faults = ds->map_faults;
  st->write_starts = ds->write_starts;
fail:
  free(rings);
  return rc;
}
