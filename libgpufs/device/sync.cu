/*
 * sync.cu - gpufs_sync's kernel: host code writes back every file (or one:
 * gpufs_release).
 *
 * One block per file-table entry of one instance: a block whose entry is
 * open for writing holds it, writes back its file's dirty lists (its
 * node's: entries of one file share them), waits for other write-backs of
 * the file and fsyncs it on the host.  The ranges of the entry's writable
 * mappings that are still live are marked first: their stores (as far as
 * the storing kernel has made them visible; all of them once it ended)
 * are written back as a gmsync would, so that gpufs_stop drops none.  It runs on the caller's stream, beside
 * kernels that may be using the files.
 */
#include <cuda_runtime.h>

#include "libgpufs/common/wmaps.h"
#include "libgpufs/device/writeback.cuh"
#include "libgpufs/common/devcalls.h"

#define SYNC_THREADS 256

/* Mark the range of every live writable mapping that holds entry fd dirty.
 * One thread; the mappings' pins keep their frames. */
static __device__ void mark_live_mappings(const struct gpufs_dev *d, uint32_t fd)
{
  const struct gpufs_wmaps *m = &d->maps;
  /* relaxed: a mapping made meanwhile is the running kernel's, not ours */
  if (gpufs_ld_relaxed_u32_dev(m->live) == 0) return;
  const uint32_t S = d->cache.page_size;
  gpufs_spin_lock(m->lock, GPUFS_PAUSE_MAX_NS);
  for (uint32_t i = 0; i < m->cap; i++) {
    const struct gpufs_wmap *r = &m->recs[i];
    if (r->off == 0 || r->entry != fd) continue;
    const uint64_t off = r->off - 1;
    const uint32_t lo = (uint32_t)(off % S);
    gpufs_mark_dirty(d, fd, (uint32_t)(off / S), lo, lo + r->size, 0);
  }
  gpufs_spin_unlock(m->lock);
}

static __global__ void sync_kernel(uint32_t instance, uint32_t cid, int *results)
{
  gpufs_block_group g{};
  const struct gpufs_dev *d = gpufs_instance(instance);
  const int fd = (int)blockIdx.x;
  if (d == NULL) { /* not published on this GPU: nothing to sync */
    if (g.rank() == 0) results[fd] = -GPUFS_ENODEV;
    return;
  }
  const uint32_t ring = g.id() % d->cache.nrings;
  int64_t held = 0;
  if (g.rank() == 0) held = gpufs_fd_hold(d, fd);
  held = g.bcast(held);
  if (held) { /* not open for writing: nothing of ours to sync */
    if (g.rank() == 0) results[fd] = 0;
    return;
  }
  /* relaxed: the hold keeps the entry open, its cid set */
  if (cid != 0 && gpufs_ld_relaxed_u32_dev(&d->ftab.files[fd].cid) != cid) { /* another file */
    g.sync(); /* every thread has read the cid before the hold goes */
    if (g.rank() == 0) {
      results[fd] = 0;
      gpufs_fd_unhold(d, fd);
    }
    return;
  }
  /* the hold keeps the file open (its last gclose waits) through the fsync */
  if (g.rank() == 0) mark_live_mappings(d, (uint32_t)fd);
  int64_t err = gpufs_wb_file(g, d, (uint32_t)fd, ring);
  g.sync();
  if (g.rank() == 0) {
    gpufs_node_wait_flushes(d, (uint32_t)fd); /* others' write-backs of the file */
    struct gpufs_call c = {GPUFS_OP_FSYNC, d->ftab.files[fd].hfid, 0, 0, 0, NULL, 0};
    uint64_t out[4];
    int64_t r = gpufs_host_call(d, &c, out);
    results[fd] = (int)(err ? err : r);
    gpufs_fd_unhold(d, fd);
  }
}

extern "C" int gpufs_dev_sync_launch(uint32_t instance, uint32_t cid, uint32_t nfiles, int *results,
                                     void *stream)
{
  sync_kernel<<<nfiles, SYNC_THREADS, 0, (cudaStream_t)stream>>>(instance, cid, results);
  return cudaGetLastError() == cudaSuccess ? 0 : -GPUFS_EIO;
}

extern "C" int gpufs_dev_preload(void)
{
  struct cudaFuncAttributes a;
  if (cudaFuncGetAttributes(&a, sync_kernel) != cudaSuccess) return -GPUFS_EIO;
  if (gpufs_dev_drop_preload() != 0) return -GPUFS_EIO;
  return gpufs_dev_host_read_preload();
}
