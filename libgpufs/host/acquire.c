/*
 * acquire.c - gpufs_acquire's work (docs/api.md, "gpufs_acquire,
 * gpufs_release"): bring every instance's view of a file up to date with
 * the host without a close and open, re-reading only the pages whose
 * bytes changed.
 *
 *   fstat: a file as the last acquire left it has nothing to do (a
 *     whole-file acquire; a range is always hashed); else hash every page
 *     from the host page cache (acquire_hash.c; only the range's pages
 *     for gpufs_acquire_range once the file is known), by several threads; fstat again: a file that moved meanwhile is hashed
 *     again (at most ACQ_TRIES times, then -EAGAIN)
 *   the pages whose hash differs from the file's last acquire (all of
 *     them at its first)
 *   each instance: the drop kernel (device/drop.cu) frees those pages
 *     from its cache; a page a kernel still uses is tried again for at
 *     most ACQ_BUSY_MS, then -EBUSY (the file's hashes are forgotten, so
 *     the next acquire drops every page)
 *   the host file record takes the file's times (hostfiles.h): the next
 *     gopen keeps the version, and with it the pages that did not change
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "libgpufs/host/acquire_hash.h"
#include "libgpufs/common/devcalls.h"
#include "libgpufs/host/detail.h"
#include "libgpufs/host/hostfiles.h"
#include "libgpufs/host/instance.h"

#define ACQ_TRIES 3       /* hashes of a file that keeps changing */
#define ACQ_BUSY_MS 1000  /* how long pages in use are tried again */
#define ACQ_THREADS 16u   /* hashing threads, at most the online CPUs */

/* Hash pages [p0, p1) of fd's file (all of them: p1 = UINT64_MAX) until
 * two fstats around the hashing agree: *st and *hash (malloc'd, the
 * caller frees; pg gets the size and the pages hashed).  0 or -errno. */
static int acq_hash_stable(int fd, struct gpufs_acq_pages *pg, struct stat *st, uint64_t **hash)
{
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  const uint32_t threads = cpus > 0 && (uint64_t)cpus < ACQ_THREADS ? (uint32_t)cpus : ACQ_THREADS;
  const uint64_t want = pg->p1;
  for (int t = 0; t < ACQ_TRIES; t++) {
    struct stat after;
    if (fstat(fd, st) != 0) return -errno;
    if (!S_ISREG(st->st_mode)) return S_ISDIR(st->st_mode) ? -EISDIR : -EINVAL;
    const uint64_t npages = ((uint64_t)st->st_size + pg->page - 1) / pg->page;
    pg->size = (uint64_t)st->st_size;
    pg->p1 = want < npages ? want : npages;
    if (pg->p0 > pg->p1) pg->p0 = pg->p1;
    if (!(*hash = malloc((pg->p1 - pg->p0 + 1) * sizeof(uint64_t)))) return -ENOMEM;
    int rc = gpufs_acq_hash(fd, pg, threads, *hash);
    if (rc == 0 && fstat(fd, &after) != 0) rc = -errno;
    if (rc == 0 && gpufs_stat_same(st, &after)) return 0;
    free(*hash);
    *hash = NULL;
    if (rc != 0) return rc;
  }
  gpufs_set_detail("the file kept changing while gpufs_acquire read it");
  return -EAGAIN;
}

/* The pages of fd's file that changed since its last acquire, and *st:
 * only those of *range (bytes) when the table knows the file at its size,
 * else all of them.  0 or -errno. */
static int acq_changed(struct gpufs_acq_table *t, int fd, uint32_t page,
                       const struct gpufs_acq_range *range, struct stat *st, uint64_t **changed,
                       uint64_t *nchanged)
{
  uint64_t *hash = NULL;
  *changed = NULL;
  *nchanged = 0;
  if (fstat(fd, st) != 0) return -errno;
  /* a range is hashed even so: several ranges written before the first
   * of them is acquired leave the file's times as that acquire records */
  if (!range && S_ISREG(st->st_mode) && gpufs_acq_unchanged(t, st, page)) return 0;
  if (range && range->len > 0) {
    struct gpufs_acq_pages pg = {0, page, (uint64_t)range->off / page,
                                 ((uint64_t)range->off + range->len + page - 1) / page};
    int rc = acq_hash_stable(fd, &pg, st, &hash);
    if (rc == 0) rc = gpufs_acq_update_range(t, st, &pg, hash, changed, nchanged);
    free(hash);
    if (rc != -ENOENT) return rc; /* else: no record of this shape, read it all */
  }
  struct gpufs_acq_pages all = {0, page, 0, UINT64_MAX};
  int rc = acq_hash_stable(fd, &all, st, &hash);
  return rc ? rc : gpufs_acq_update(t, st, page, hash, changed, nchanged);
}

/* Drop pages[0, n) of file id from instance in's cache, trying pages in
 * use again for ACQ_BUSY_MS (dirty pages stay: the GPU's bytes win).
 * *dropped counts them.  0, -EBUSY, or -errno. */
static int acq_drop_instance(struct gpufs_instance *in, const struct gpufs_hostfile_id *id,
                             const uint64_t *pages, uint64_t n, uint64_t *dropped)
{
  int rc = 0, old = gpufs_instance_enter(in);
  uint64_t *dpages = NULL;
  unsigned long long *dcounts = NULL, counts[GPUFS_DROP_RESULTS];
  cudaStream_t st = in->stats_stream;
  CU(cudaMalloc((void **)&dpages, n * sizeof(uint64_t)));
  CU(cudaMalloc((void **)&dcounts, sizeof(counts)));
  CU(cudaMemcpyAsync(dpages, pages, n * sizeof(uint64_t), cudaMemcpyHostToDevice, st));
  for (int waited = 0;; waited++) {
    const struct gpufs_drop_params p = {in->index, id->cid, id->version, dpages, n, dcounts};
    CU(cudaMemsetAsync(dcounts, 0, sizeof(counts), st));
    if ((rc = gpufs_dev_drop_launch(&p, st)) != 0) goto fail;
    CU(cudaMemcpyAsync(counts, dcounts, sizeof(counts), cudaMemcpyDeviceToHost, st));
    CU(cudaStreamSynchronize(st));
    *dropped += counts[GPUFS_DROP_DONE];
    if (counts[GPUFS_DROP_BUSY] == 0) break;
    if (waited >= ACQ_BUSY_MS) {
      gpufs_set_detail("gpufs_acquire: %llu changed pages stay in use by a running kernel",
                       (unsigned long long)counts[GPUFS_DROP_BUSY]);
      rc = -EBUSY;
      break;
    }
    struct timespec ms = {0, 1000000L};
    nanosleep(&ms, NULL);
  }
fail:
  cudaFree(dpages);
  cudaFree(dcounts);
  gpufs_instance_leave(old);
  return rc;
}

int64_t gpufs_runtime_acquire(struct gpufs_instances *all, struct gpufs_daemon *daemon,
                              struct gpufs_acq_table *t, const char *path,
                              const struct gpufs_acq_range *range)
{
  if (!path) return -EFAULT;
  if (range && (range->off < 0 || range->len > UINT64_MAX - (uint64_t)range->off)) return -EINVAL;
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  const uint32_t page = all->in[0]->dev.cache.page_size;
  struct stat st;
  uint64_t *changed = NULL, nchanged = 0, dropped = 0;
  int rc = acq_changed(t, fd, page, range, &st, &changed, &nchanged);
  close(fd);
  struct gpufs_hostfiles *hf = gpufs_daemon_files(daemon);
  struct gpufs_hostfile_id id;
  /* no GPU opened the file: none caches any of it */
  const int known = rc == 0 && gpufs_hostfiles_acquire_ident(hf, &st, &id) == 0;
  for (uint32_t i = 0; known && nchanged && i < all->n && rc == 0; i++)
    rc = acq_drop_instance(all->in[i], &id, changed, nchanged, &dropped);
  if (rc == 0) gpufs_hostfiles_acquired(hf, &st, nchanged);
  else if (nchanged) gpufs_acq_forget(t, &st); /* some pages may be stale: all next time */
  free(changed);
  return rc < 0 ? rc : (int64_t)dropped;
}
