/*
 * pinner.h - automatic pins: a background thread that pins the files the
 * host file table hints (read-only opens after a file's first:
 * hostfiles.h) within a budget, in 64 MiB windows whose growing prefix
 * the GPUs read as soon as it is pinned, releasing least-recently-used
 * automatic pins to make room.
 *
 * Plain C, no CUDA: the pin and unpin themselves are hooks (the runtime's
 * are cudaHostRegister / cudaHostUnregister, register.c), so the
 * policy and the thread are tested on the host under ThreadSanitizer.
 *
 * Why a thread of its own: CUDA may make a pin wait for the kernels that
 * run, and those kernels may wait for the daemon's workers.  A worker only
 * hands the file over (gpufs_pinner_hint: a lock, a push, a signal) and
 * answers at once; the pinner holds no lock of the daemon's or the
 * runtime's while it pins.
 */
#ifndef GPUFS_HOST_PINNER_H
#define GPUFS_HOST_PINNER_H

#include <stdint.h>
#include <sys/stat.h>

#include "libgpufs/host/hostfiles.h"

#ifdef __cplusplus
extern "C" {
#endif


/* Pinning for the GPUs: pin(ctx, addr, len) makes [addr, addr+len) of a
 * read-only mapping readable by every GPU at the same address (0 or
 * -errno); unpin undoes it. */
struct gpufs_pin_ops {
  int (*pin)(void *ctx, void *addr, uint64_t len);
  void (*unpin)(void *ctx, void *addr, uint64_t len);
  void *ctx;
};

/* Map the file behind fd (st: its fresh fstat) read-only and shared for a
 * registration: *r gets dev, ino, the mapping and its lengths (automatic
 * 0).  0; -EINVAL (not a regular file, or shorter than 4 KiB), -EFBIG
 * (larger than 1 TiB: gpufs_reg_word's limit), -ENOMEM (mmap failed, or
 * the mapping lies above 2^48).  Nothing is pinned. */
int gpufs_reg_map(int fd, const struct stat *st, struct gpufs_hostfile_reg *r);

/* Unpin (ops) and unmap a registration. */
void gpufs_reg_release(const struct gpufs_pin_ops *ops, const struct gpufs_hostfile_reg *r);

/* Room for `need` more pinned bytes in `files` under `budget`: evict
 * automatic registrations (least recently used, of files no hfid has
 * open; unpinned with ops) while the registrations hold more than budget -
 * need.  1 when there is room, else 0. */
int gpufs_reg_make_room(struct gpufs_hostfiles *files, uint64_t budget,
                        const struct gpufs_pin_ops *ops, uint64_t need);

struct gpufs_pinner;

/* Start the pinner over table `files` (which must outlive it) with a
 * budget of `budget` bytes for every registration together.  0, -ENOMEM
 * or pthread_create's -errno. */
int gpufs_pinner_start(struct gpufs_hostfiles *files, uint64_t budget,
                       const struct gpufs_pin_ops *ops, struct gpufs_pinner **out);

/* A daemon worker's hint (hostfiles' pin_hint): pin the file behind fd,
 * releasing least recently used automatic pins for room.  The pinner owns
 * fd (a dup the caller made) and closes it.  Never blocks on the pinner's
 * work.  NULL pinner: closes fd. */
void gpufs_pinner_hint(struct gpufs_pinner *pn, int fd);

/* Wait until every hint given so far has been served (tests, benchmarks). */
void gpufs_pinner_drain(struct gpufs_pinner *pn);

/* Serve no more hints (those pending are dropped, their files declined),
 * join the thread, free it.  The pins made stay in the table (gpufs_stop
 * releases them with the others).  NULL is a no-op. */
void gpufs_pinner_stop(struct gpufs_pinner *pn);

#ifdef __cplusplus
}
#endif
#endif /* GPUFS_HOST_PINNER_H */
