/*
 * acquire_hash.h - finding the pages of a file the host changed, for
 * gpufs_acquire (docs/api.md, "gpufs_acquire, gpufs_release"); no CUDA.
 *
 * The writer does not help: at each acquire every page of the file is
 * hashed (XXH3, 64 bits, over the bytes within the file's size) from the
 * host page cache by several threads, and compared with the hashes the
 * file's previous acquire recorded.  A page whose hash differs changed
 * since then (a GPU may hold its old bytes); the first acquire of a file,
 * or one that finds another size or page size, reports every page.
 * Between two acquires the GPUs load pages only as the host had them at
 * the first (the writer is quiet while kernels read), so a page the GPU
 * holds is stale exactly when it changed between the two.
 */
#ifndef GPUFS_HOST_ACQUIRE_H
#define GPUFS_HOST_ACQUIRE_H

#include <stdint.h>
#include <sys/stat.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The hashes each file's last acquire recorded.  Not thread-safe: the
 * runtime's lock serialises its users. */
struct gpufs_acq_table;

int gpufs_acq_table_create(struct gpufs_acq_table **out);
void gpufs_acq_table_destroy(struct gpufs_acq_table *t);

/* Hash pages [p0, p1) of the file behind fd (size bytes), `page` bytes
 * each (the last one up to size), into out[0 .. p1 - p0), with up to
 * nthreads threads (at least 1).  0, or -errno (the file could not be
 * mapped or read). */
struct gpufs_acq_pages {
  uint64_t size;
  uint32_t page;
  uint64_t p0, p1;
};
int gpufs_acq_hash(int fd, const struct gpufs_acq_pages *pg, uint32_t nthreads, uint64_t *out);

/* 1 when t's record of the file st names is of st's size, mtime and ctime
 * at this page size (nothing changed since its last acquire), else 0. */
int gpufs_acq_unchanged(struct gpufs_acq_table *t, const struct stat *st, uint32_t page);

/* gpufs_acquire_range: like gpufs_acq_update for pages [pg->p0, pg->p1)
 * alone (hash holds their hashes; the caller vouches that no other page
 * changed), when t has a record of the file at st's size and this page
 * size: 0, *changed, *nchanged, and those hashes and st's times recorded
 * (hash stays the caller's).  -ENOENT when there is no such record (a full
 * acquire is needed), -ENOMEM. */
int gpufs_acq_update_range(struct gpufs_acq_table *t, const struct stat *st,
                           const struct gpufs_acq_pages *pg, const uint64_t *hash,
                           uint64_t **changed, uint64_t *nchanged);

/* The pages whose hash differs from what t recorded for the file st
 * names (every page when t has no record of it at this size and page
 * size): *changed (malloc'd, the caller frees; NULL when none) and
 * *nchanged.  Then records `hash` (npages of them, taken over by t: the
 * caller does not free it) as the file's.  0 or -ENOMEM (nothing
 * recorded; hash is freed). */
int gpufs_acq_update(struct gpufs_acq_table *t, const struct stat *st, uint32_t page,
                     uint64_t *hash, uint64_t **changed, uint64_t *nchanged);

/* Drop t's record of the file st names, if any: its next acquire reports
 * every page (an acquire whose drops failed). */
void gpufs_acq_forget(struct gpufs_acq_table *t, const struct stat *st);

#ifdef __cplusplus
}
#endif
#endif /* GPUFS_HOST_ACQUIRE_H */
