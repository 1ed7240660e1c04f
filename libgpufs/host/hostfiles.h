/*
 * hostfiles.h - the daemon's host file table and cache identities.
 *
 * Two tables; opens and the inode table are under one mutex (opens are
 * rare), pins and closes are lock-free on a per-entry atomic word:
 *
 *   hfid -> entry { fd, pins, state }        at most max_open_files at once
 *   (st_dev, st_ino) -> { cid, version, size, mtime, ctime }   never shrinks
 *
 * An hfid is what the GPU names a host file by.  A worker that reads a file
 * pins its entry for the length of the pread, so a concurrent CLOSE never
 * closes (and the kernel never reuses) a descriptor under a pread: the last
 * unpin of a closed entry closes its descriptor.
 *
 * The cid names the inode for the GPU page cache, whatever path, hfid or
 * queue it was opened by.  Its version changes when the inode's size, mtime
 * or ctime (in nanoseconds) differ from what the previous open of it saw:
 * pages cached under an older version are then stale (close-to-open
 * consistency).  Both start at 1, so 0 never names a valid file or version.
 *
 * One table serves every queue (libgpufs instance, one per GPU), so the
 * inode record is shared by all of them.  After the daemon's own write for
 * queue q, gpufs_hostfiles_refresh records the new size and times, so that
 * q's own change does not make q's cached pages stale; but those pages of
 * every other queue are stale now, and the refreshed record hides it from
 * their stat check.  So the record also keeps a mask of queues that must
 * get a new version at their next open:
 *
 *   refresh by q (record matched):  record = new stat, stale |= all but q
 *   open by q, q in stale or stat differs:  version++, stale = 0
 *   renew (truncate):               version++, stale = 0
 *
 * The whole mask is cleared at a bump: the new version makes every older
 * page stale, whoever cached it.  With one queue the mask stays empty and
 * nothing changes from the single-instance rule.
 */
#ifndef GPUFS_HOST_HOSTFILES_H
#define GPUFS_HOST_HOSTFILES_H

#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include "libgpufs/host/io.h"

#ifdef __cplusplus
extern "C" {
#endif

struct gpufs_hostfiles;

/* Queues one table can tell apart: one stale bit each in a 32-bit mask. */
#define GPUFS_HOSTFILES_MAX_QUEUES 32u

/* What an open tells the GPU about the file. */
struct gpufs_hostfile_id {
  uint64_t size;
  uint32_t cid;
  uint32_t version;
  uint64_t reg; /* its registered mapping (gpufs_reg_word, queue.h), or 0 */
  uint32_t pin_hint; /* enum gpufs_pin_hint: whether this open asks for an
                        automatic pin of the file (a read-only open, not
                        the first, of a regular file of 4 KiB or more with
                        no registration; once per file until its pin is
                        made, declined or released): the daemon tells the
                        runtime */
  uint64_t reread_at; /* host-side: bytes READ through this open after
                         which the file counts as read again and earns an
                         automatic pin (its size + 1: a file of such an
                         open that was not hinted); 0: never */
};

/* What an open asks of the automatic pinner (pinner.h). */
enum gpufs_pin_hint {
  GPUFS_PIN_HINT_NONE = 0,  /* a first open: a file read once does not
                               repay a pin (docs/pinning.md) */
  GPUFS_PIN_HINT_EARNED = 1 /* opened again: pin it, releasing least
                               recently used automatic pins for room */
};

/* A registered file (gpufs_register, register.c): its read-only shared
 * mapping, pinned for the GPUs.  The inode record keeps it; the table
 * neither maps nor pins (the caller does, before add and after remove). */
struct gpufs_hostfile_reg {
  uint64_t dev, ino;
  void *addr;       /* the mapping */
  uint64_t map_len; /* its length (the file's size then, rounded up to 4 KiB) */
  uint64_t len;     /* bytes the GPU may read from it: the pinned prefix,
                       at most the file's size then rounded down to 4 KiB */
  uint64_t window;  /* pinned in registrations of this many bytes from addr
                       (automatic pins); 0: one registration of map_len */
  uint64_t pinned;  /* bytes pinned from addr (window > 0) */
  uint32_t automatic; /* 1: pinned by the library (released
                         least-recently-used to make room); 0:
                         gpufs_register's, kept until unregistered */
  uint32_t pinning; /* 1 while the pinner still pins windows of it: never
                       evicted or removed then (it ends with reg_grow) */
};

/* Registrations and what they pin, those retired since the start, and the
 * automatic ones made and released since the start. */
struct gpufs_hostfile_regstats {
  uint64_t files, bytes, retired;
  uint64_t auto_made, auto_released, auto_bytes;
};

/* A table of max_open entries whose files are opened and closed through io
 * (which must stay valid for the table's life).  0 or -ENOMEM. */
int gpufs_hostfiles_create(uint32_t max_open, const struct gpufs_io_ops *io,
                           struct gpufs_hostfiles **out);

/* Closes every descriptor still open and frees the table.  No pin may be
 * held (the workers are joined).  NULL is a no-op. */
void gpufs_hostfiles_destroy(struct gpufs_hostfiles *hf);

/* Open path with the caller's flags and mode, for queue `queue` (<
 * GPUFS_HOSTFILES_MAX_QUEUES).  Returns the hfid (>= 0) and fills *id, or
 * -errno: -EINVAL for a bad queue, -EMFILE when every entry is taken, or
 * what open or fstat reported.  May block as long as open(2) does (a FIFO);
 * the table is not locked meanwhile.  hfids are shared: any queue may name
 * an hfid another queue opened. */
int gpufs_hostfiles_open(struct gpufs_hostfiles *hf, const char *path, int flags,
                         mode_t mode, uint32_t queue, struct gpufs_hostfile_id *id);

/* 0, or -EBADF for an hfid that is not open.  The descriptor is closed now,
 * or by the last unpin if a worker still reads it. */
int gpufs_hostfiles_close(struct gpufs_hostfiles *hf, int32_t hfid);

/* The descriptor of an open hfid, pinned until gpufs_hostfiles_unpin; or
 * -EBADF.  Every successful pin needs exactly one unpin. */
int gpufs_hostfiles_pin(struct gpufs_hostfiles *hf, int32_t hfid);
void gpufs_hostfiles_unpin(struct gpufs_hostfiles *hf, int32_t hfid);

/* The read-only mapping of pinned hfid's file (filemap.h),
 * made at the first call, of the file's size then (*len).  NULL when there
 * is none: another worker is making it, the file is empty, not a regular
 * file or not readable, or a truncation by the daemon retired it (the
 * caller reads with pread).  The mapping lives until the entry's
 * descriptor is closed, so while the caller's pin lasts. */
const uint8_t *gpufs_hostfiles_map(struct gpufs_hostfiles *hf, int32_t hfid, uint64_t *len);

/* 1 for the first caller since hfid was opened (pinned by the caller), 0
 * after: who gives the file's host readahead advice, once (fileops.c). */
int gpufs_hostfiles_advise_once(struct gpufs_hostfiles *hf, int32_t hfid);

/* The daemon read `bytes` more for pinned hfid.  1 for the one caller
 * whose bytes take those read through the open past its file's size (the
 * file is read again: its pages went to the GPU before) when that earns
 * the file an automatic pin (hostfile_id's reread_at; none asked for and
 * no registration); the caller then hints it as an OPEN does.  Else 0. */
int gpufs_hostfiles_read_again(struct gpufs_hostfiles *hf, int32_t hfid, uint64_t bytes);

/* The daemon wrote `bytes` more to pinned hfid's file.  1 for the one
 * caller whose bytes bring those written since the last 1 to `every` or
 * more (it starts the kernel's write-out of the file: write_behind), else
 * 0; always 0 with every == 0. */
int gpufs_hostfiles_written(struct gpufs_hostfiles *hf, int32_t hfid, uint64_t bytes,
                            uint64_t every);

/* The daemon itself just changed the file behind descriptor fd for queue
 * `queue`; the file was as *before when it started.  If the inode's record
 * still says *before (nobody else changed the file since the last open),
 * record the new size and times, so that the queue's own change does not
 * make its cached pages stale at its next open, and mark every other queue
 * stale: their next open bumps the version.  Otherwise leave the record:
 * the next open sees the difference and bumps the version. */
void gpufs_hostfiles_refresh(struct gpufs_hostfiles *hf, int fd, const struct stat *before,
                             uint32_t queue);

/* The daemon truncated the file behind fd: the GPU drops every page it
 * cached of it.  Gives the inode a new version (which every queue's next
 * open gets), records its size and times, clears the stale mask, retires
 * its registration if it has one (pages past the cut are no longer the
 * mapping's: opens get none until it is removed and added again), and
 * returns the version; 0 if fstat fails. */
uint32_t gpufs_hostfiles_renew(struct gpufs_hostfiles *hf, int fd);

/* The cache identity under which GPU caches hold the current bytes of the
 * file st describes (a fresh fstat): 0 and *id (size as recorded) when
 * the inode is known and the record still says st's size, mtime and ctime
 * (nobody changed the file since the GPUs' last open or own write); else
 * -ENOENT (the GPUs hold nothing newer than the file, or nothing). */
int gpufs_hostfiles_ident(struct gpufs_hostfiles *hf, const struct stat *st,
                          struct gpufs_hostfile_id *id);

/* gpufs_acquire: the cache identity GPU caches hold the inode st names
 * under (its current version), whatever changed since their last open: 0
 * and *id (size as recorded), or -ENOENT when no GPU opened it. */
int gpufs_hostfiles_acquire_ident(struct gpufs_hostfiles *hf, const struct stat *st,
                                  struct gpufs_hostfile_id *id);

/* gpufs_acquire dropped from every GPU cache the nchanged pages of the
 * inode st names (a fstat taken before it hashed them, unchanged after)
 * that changed: the GPUs now hold the file as st says.  Records st's
 * times when the record has st's size (so the next open keeps the version
 * and the pages; a size change is left for that open to see), clears the
 * stale mask, and retires an automatic pin when pages changed (a
 * truncation may have taken its pinned pages out of the file).  A file
 * with changed pages is not pinned automatically from then on: the host
 * changes it between acquires, and each change would retire the pin (a
 * service keeping it open earned one when it read the changed pages
 * again: docs/api.md, "Automatic pins"). */
void gpufs_hostfiles_acquired(struct gpufs_hostfiles *hf, const struct stat *st, uint64_t nchanged);

/* The daemon removed the last name of inode (dev, ino) it may know: a file
 * created later with the same numbers gets a new version at its open. */
void gpufs_hostfiles_forget(struct gpufs_hostfiles *hf, uint64_t dev, uint64_t ino);

/* Record registration r of the inode st describes (a fresh fstat of the
 * file mapped).  Opens from now on get r in their id (while the file is
 * not shorter than r->len).  0; -EEXIST when the inode has a registration
 * (live or retired: remove it first); -EFBIG when every registration's
 * map_len together would exceed max_bytes; -ENOMEM, -ENFILE. */
int gpufs_hostfiles_reg_add(struct gpufs_hostfiles *hf, const struct stat *st,
                            const struct gpufs_hostfile_reg *r, uint64_t max_bytes);

/* What the pinner tells of a registration it pins window by window. */
enum gpufs_reg_grow {
  GPUFS_REG_GROW_MORE = 0, /* more windows follow */
  GPUFS_REG_GROW_DONE = 1, /* no more: it may be evicted and removed again */
  GPUFS_REG_GROW_STALE = 2 /* no more: the file changed while being pinned
                              (the pinned pages may not be its own): retire */
};

/* The pinner pinned `pinned` bytes from addr of the registration of the
 * inode st describes (the fstat it was added with): the GPUs may read
 * that prefix (at most the file's size then, rounded down to 4 KiB), and
 * every open entry of the inode gets the longer word.  0; -ESTALE when
 * the registration is retired (the pinner should stop); -ENOENT when the
 * inode has no registration at addr. */
int gpufs_hostfiles_reg_grow(struct gpufs_hostfiles *hf, const struct stat *st, const void *addr,
                             uint64_t pinned, enum gpufs_reg_grow how);

/* 1 when inode (dev, ino) has a registration (live or retired), else 0. */
int gpufs_hostfiles_reg_has(struct gpufs_hostfiles *hf, uint64_t dev, uint64_t ino);

/* Take back the registration of inode (dev, ino) into *out, for the caller
 * to unpin and unmap.  0; -EINVAL when there is none; -EBUSY while an
 * hfid of the inode is open (a GPU descriptor may hold its address) or
 * the pinner still pins it. */
int gpufs_hostfiles_reg_remove(struct gpufs_hostfiles *hf, uint64_t dev, uint64_t ino,
                               struct gpufs_hostfile_reg *out);

/* Take back any one registration, open or not (gpufs_stop, after the
 * kernels are done): 0 and *out, or -ENOENT when none is left. */
int gpufs_hostfiles_reg_pop(struct gpufs_hostfiles *hf, struct gpufs_hostfile_reg *out);

void gpufs_hostfiles_reg_stats(struct gpufs_hostfiles *hf, struct gpufs_hostfile_regstats *s);

/* The live registration word (gpufs_reg_word) of open hfid's inode, or 0:
 * what a READ reply tells the GPU, so that a descriptor opened before its
 * file was pinned learns the mapping.  Lock-free; the caller pins hfid
 * (the registration cannot be removed while the hfid is open). */
uint64_t gpufs_hostfiles_reg_word(struct gpufs_hostfiles *hf, int32_t hfid);

/* gpufs_register of a file pinned automatically: the registration becomes
 * the program's (kept until unregistered).  0; -EEXIST when it is the
 * program's already; -EINVAL when the inode has none. */
int gpufs_hostfiles_reg_keep(struct gpufs_hostfiles *hf, uint64_t dev, uint64_t ino);

/* Take back the least recently used automatic registration of an inode no
 * hfid has open, for the caller to unpin and unmap (room for another pin):
 * 0 and *out; -ENOENT when there is none.  The inode may earn a pin again. */
int gpufs_hostfiles_reg_evict(struct gpufs_hostfiles *hf, struct gpufs_hostfile_reg *out);

/* An automatic pin the runtime was asked for and did not make (no room
 * now, a file that cannot be mapped or pinned): the inode's next open may
 * hint it again. */
void gpufs_hostfiles_pin_declined(struct gpufs_hostfiles *hf, uint64_t dev, uint64_t ino);

/* fstat of an open hfid: 0, -EBADF or fstat's -errno. */
int gpufs_hostfiles_fstat(struct gpufs_hostfiles *hf, int32_t hfid, struct stat *st);

/* A stat time in nanoseconds since the epoch. */
static inline int64_t gpufs_timespec_ns(struct timespec ts)
{
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* 1 when a and b say the same size, mtime and ctime: the file did not
 * change between the two stats (the record's test, hostfiles.c). */
static inline int gpufs_stat_same(const struct stat *a, const struct stat *b)
{
  return a->st_size == b->st_size && gpufs_timespec_ns(a->st_mtim) == gpufs_timespec_ns(b->st_mtim) &&
         gpufs_timespec_ns(a->st_ctim) == gpufs_timespec_ns(b->st_ctim);
}

#ifdef __cplusplus
}
#endif
#endif /* GPUFS_HOST_HOSTFILES_H */
