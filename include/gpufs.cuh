/*
 * gpufs.cuh - libgpufs: POSIX-like file calls for CUDA kernels.
 *
 * Host code starts libgpufs (gpufs_start: one instance per listed GPU, each
 * with its own page cache, all served by one host daemon and one host file
 * table); kernels then open, read, write and sync ordinary host files with
 * gopen/gread/gwrite/gfsync/gclose/...; host code may write back everything
 * (gpufs_sync) and stops it (gpufs_stop).  A kernel's calls go to the
 * instance of the GPU it runs on (its first, where a GPU has several),
 * or to the instance a gpufs_ref names (gpufs_get_ref).
 * Build your program with nvcc -rdc=true and link libgpufs.a:
 *
 *   nvcc -arch=sm_90 -rdc=true -I$PREFIX/include app.cu -L$PREFIX/lib -lgpufs
 *
 * Two granularities of every device call:
 *   block-level  (gopen, gread, ...):  every thread of the threadblock calls
 *                 it, at the same point, with equal arguments, like
 *                 __syncthreads(); it synchronizes the block.
 *   warp-level   (gopen_warp, gread_warp, ...): every thread of one warp
 *                 calls it with equal arguments, the warp converged; it
 *                 synchronizes the warp only.  Blocks may mix both, but a
 *                 block-level call needs the whole block.
 * The result is returned to every calling thread.
 *
 * Errors are negative errno values (-EBADF, -ENOENT, ...; gpufs_strerror
 * names them).  docs/api.md has the full contracts.
 */
#ifndef GPUFS_CUH
#define GPUFS_CUH

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <gpufs/config.h>
#include <gpufs/errors.h>
#include <gpufs/version.h>

/* ---------------- host API (C linkage) ---------------- */
#ifdef __cplusplus
extern "C" {
#endif

struct gpufs_stats {
  /* page cache (GPU) */
  uint64_t hits;        /* pages found VALID */
  uint64_t misses;      /* pages this instance loaded */
  uint64_t evictions;   /* VALID pages whose frame was reused */
  uint64_t scanned;     /* frames looked at by allocations */
  uint64_t nofree;      /* allocations that found every frame pinned or loading */
  uint64_t alloc_ns;    /* time meta lanes spent allocating frames, evictions
                           included, summed over lanes (peak SM clock) */
  uint64_t rounds;      /* rounds of up to 32 pages served by gread/gwrite/gmmap
                           (a one-page gread or gmmap of a cached page, and
                           the cached pages from a gread's first on, are
                           hits without a round) */
  uint64_t fetch_ns;    /* their time, summed over groups (peak SM clock): */
  uint64_t fill_ns;     /*   lookups + requests + host / copies into frames / */
  uint64_t settle_ns;   /*   publishing + waiting for others' loads / */
  uint64_t copy_ns;     /*   copies to or from the caller + unpin */
  uint64_t ra_pages;    /* pages loaded by readahead beyond what a gread asked for */
  uint64_t gopens;      /* gopen calls */
  uint64_t gopen_ns;    /* their time, summed: */
  uint64_t gopen_lock_ns; /*  waiting for the file table's lock / */
  uint64_t gopen_host_ns; /*  first openers' requests to the host / */
  uint64_t gopen_wait_ns; /*  sharers waiting for a first opener */
  uint64_t chains;      /* hash buckets holding frames, at the time of the call */
  uint64_t chained;     /* frames in them (chained / chains = mean chain length) */
  uint64_t chain_max;   /* the longest chain */
  /* daemon (host) */
  uint64_t requests;    /* requests served */
  uint64_t batches;     /* claims of one or more requests */
  uint64_t preads;      /* pread calls after merging */
  uint64_t merged;      /* page requests served by an earlier request's pread */
  uint64_t bytes_read;  /* bytes preaded */
  uint64_t opens;       /* host opens */
  uint64_t errors;      /* requests that failed */
  uint64_t daemon_io_ns;   /* workers' time in pread/pwrite, summed */
  uint64_t daemon_busy_ns; /* workers' time serving claimed requests, summed */
  uint64_t map_copies;     /* of preads, READ runs copied from the file's
                              page-cache mapping */
  uint64_t map_faults;     /* copies that hit SIGBUS (the file shrank under
                              the mapping) and were preread instead */
  /* write path */
  uint64_t pwrites;     /* pwrite calls (after merging) */
  uint64_t bytes_written;
  uint64_t write_starts; /* write-outs of a file to disk the daemon started
                            (write_behind) */
  uint64_t writebacks;  /* dirty byte ranges the GPU wrote back */
  uint64_t cleanings;   /* allocations that found only dirty frames and
                           wrote a file's dirty pages back to free some */
  uint64_t dirty;       /* frames holding unwritten bytes, at the time of the call */
  /* several instances */
  uint64_t peer_hits;   /* pages a miss copied from another instance's cache
                           instead of reading them from the host */
  /* registered files (gpufs_register) */
  uint64_t reg_pages;   /* pages a miss copied straight from a registered
                           file's mapping: no request, no host copy */
  uint64_t reg_files;   /* files registered now (runtime-wide) */
  uint64_t reg_bytes;   /* bytes they pin (runtime-wide) */
  uint64_t reg_refused; /* gpufs_register calls that failed: those files
                           stay on the daemon path (runtime-wide) */
  uint64_t reg_retired; /* registrations retired because the file was found
                           shorter at a gopen or was truncated: served by the
                           daemon until registered again (runtime-wide) */
  /* automatic pins (docs/api.md, "Automatic pins") */
  uint64_t pins_auto;     /* files pinned automatically (runtime-wide; counted
                             in reg_files and reg_bytes while pinned) */
  uint64_t pins_released; /* automatic pins released to make room under
                             register_max (runtime-wide) */
  uint64_t pins_bytes;    /* bytes pinned automatically, summed over every
                             pin made (runtime-wide) */
};

/* Start libgpufs: one instance on cfg->device, or, with cfg->ndevices > 0,
 * instance i on cfg->devices[i] for each i (a device may be listed twice:
 * two instances on one GPU, each with its own cache and queue).  Every
 * instance gets cfg's sizes; one daemon with cfg->daemon_threads workers
 * serves them all.  Between listed GPUs with peer access and native peer
 * atomics it enables peer access (peer caching); gpufs_stop disables what
 * it enabled, and access the program enabled itself stays as it was.  cfg NULL: defaults, then GPUFS_* environment overrides
 * (GPUFS_DEVICES=0,1).  Returns 0, -EINVAL for a bad configuration or a
 * device that does not exist (gpufs_error_detail names the field), -EBUSY
 * if already started, -ENODEV without a CUDA device, -ENOMEM when a cache or
 * staging cannot be allocated (then nothing stays started). */
int gpufs_start(const struct gpufs_config *cfg);

/* Stop every instance, in this order (docs/api.md, "gpufs_stop"): write
 * back the dirty pages of files still open beside the kernels that still
 * run (as gpufs_sync, for at most stop_timeout_ms, 10 s by default); GPU
 * calls still waiting on the host return -ESHUTDOWN; wait for every kernel
 * on the instances' GPUs; write back what is still dirty then (pages the
 * first write-back could not reach while kernels filled every SM, or
 * written after it); close the host files and free everything.  A daemon
 * worker stuck in a host call (open(2) of a FIFO) is given up on after
 * stop_timeout_ms: -EIO, the detail names the call, and what it uses
 * stays allocated.  Returns 0; -EIO when dirty bytes could not be written
 * (write errors: gpufs_error_detail says how many pages: nothing is
 * dropped silently), a worker was given up on, or a GPU reported an
 * error.  Safe to call twice and without a start (returns 0).
 * Every host call of this header leaves no CUDA error of its own behind
 * (an error the program had pending stays the program's), and writes
 * nothing into caller memory past what it reports. */
int gpufs_stop(void);

/* Write back every dirty page of every file open on any instance and fsync
 * those files, from host code (kernels may be running: it uses a kernel of
 * its own on a side stream of each instance).  The ranges of writable
 * mappings still live are written back too, as gmsync would (stores a
 * running kernel has not yet made visible may be missed).  0, or the first write-back
 * error (-EIO, -ENOSPC, ...; the pages stay dirty), -EINVAL when not
 * started. */
int gpufs_sync(void);

/* Counters since gpufs_start, of every instance together.  0, or -EINVAL
 * when not started. */
int gpufs_get_stats(struct gpufs_stats *st);

/* The counters of instance `instance` alone (its cache, and the daemon's
 * work on its requests).  0, or -EINVAL when not started or for an
 * instance that does not exist. */
int gpufs_get_instance_stats(int instance, struct gpufs_stats *st);

/* Read size bytes at offset of the host file `path` into buf, through the
 * instances' page caches: a page an instance holds (at the file's current
 * version, dirty pages included, which are newer than the file) is copied
 * from that GPU's cache, the rest is read from the file.  buf may be any
 * host memory; pinned memory (cudaHostAlloc, cudaHostRegister) is written
 * by the GPU directly, pageable memory through a pinned bounce buffer.
 * Returns the bytes read: size, fewer at the end of the file (its size,
 * taken when the call starts, is the larger of the host file's and what
 * open GPU descriptors of it say; nothing past the count is written into
 * buf), 0 at or past it; or -ENOENT, -EACCES, -EISDIR, ... as open(2) and
 * pread(2), -EINVAL (offset < 0, or libgpufs not started), -EFAULT (path
 * or buf NULL), -ENOMEM, -EIO.
 * Consistency: a page is read as the GPU holds it when the call looks
 * (bytes a running kernel writes meanwhile may or may not be seen, as a
 * pread beside a writer); a kernel's writes are seen once the kernel
 * returned (or once it called gfsync), whether written back or not.
 * Differences to POSIX: by path, not descriptor (the file is opened and
 * closed for the call); host API calls wait while it runs. */
ssize_t gpufs_pread(const char *path, void *buf, size_t size, int64_t offset);

/* Acquire/release consistency (GAIA's model; docs/api.md, "gpufs_acquire,
 * gpufs_release"), beside close-to-open.
 * gpufs_acquire(path): from host code, between kernels, after the host
 * (any process) changed the file in place: bring every instance's view of
 * it up to date without a close and open.  Every page of the file is
 * hashed from the host page cache and compared with the file's previous
 * acquire; the pages that changed are dropped from the GPU caches (their
 * next read loads them again), the others stay cached, also for later
 * gopens.  The first acquire of a file drops every page of it.  A page a
 * GPU holds dirty stays (the GPU's own writes win).  Returns the pages
 * dropped over all instances (>= 0); -ENOENT, -EACCES, ... as open(2);
 * -EISDIR, -EINVAL (not a regular file, path NULL: -EFAULT, or libgpufs
 * not started); -EBUSY when a running kernel kept a changed page in use
 * for 1 s (call it between kernels; the next acquire drops every page);
 * -EAGAIN when the file kept changing while it was read; -ENOMEM, -EIO.
 * Cost: reading the whole file from the host page cache once (several
 * threads; nothing when the file's size, mtime and ctime are as the last
 * acquire left them), and one small kernel per instance.  A size change is seen at
 * the next gopen (open descriptors keep their size).  Differences to GAIA:
 * the writer needs no help (no hook in the host's page cache): changes
 * are found by content, so a page rewritten with the same bytes counts as
 * unchanged.
 * gpufs_release(path): write back every dirty page the instances hold of
 * the file and fsync it (gpufs_sync for one file), so that host readers
 * see the GPUs' writes; waits for kernels that hold the file's write-back.
 * 0, the first write-back error, -EINVAL when not started, or -errno of
 * the path's lookup.  Device code releases with gfsync. */
int64_t gpufs_acquire(const char *path);
/* gpufs_acquire_range(path, offset, len): gpufs_acquire for a caller that
 * knows what it changed: only the pages of [offset, offset + len) are
 * hashed and compared (the caller vouches that no other byte changed since
 * the file's last acquire, or is acquired by another range call), so the
 * cost is that range's, not the file's.  The range is hashed even when
 * the file's times are as the last acquire left them: several ranges
 * written together are acquired by one call each.  A file with no
 * earlier acquire at its current size is acquired whole.
 * Returns and errors as gpufs_acquire; -EINVAL for offset < 0 or a range
 * past 2^64. */
int64_t gpufs_acquire_range(const char *path, int64_t offset, uint64_t len);
int gpufs_release(const char *path);

/* Register the host file `path` (any name of it) for reads straight from
 * the host page cache: the file is mapped (read-only, shared) and its
 * mapping pinned and mapped for every GPU (cudaHostRegister); a gopen of
 * the file afterwards (on any instance) learns the mapping, and a miss on a
 * page that lies wholly within the registered length copies it from there
 * into its frame: no request, no daemon worker, no staging copy.  Pages
 * past the registered length (a file grown since, or the last partial 4
 * KiB of it) and writes take the daemon path as before; a page the GPU
 * wrote back is in the page cache and so in the mapping.  Consistency is
 * unchanged: the mapping is the page cache, so a gopen that finds no name
 * of the file open reads the host's bytes as they are then (a CPU write
 * during a kernel may or may not be seen, as on the daemon path).
 * Call it from host code after gpufs_start and before the kernels that
 * should use it open the file (descriptors already open keep the daemon
 * path).  Pinning reads the whole file into the page cache and keeps it
 * there (about 0.14 s for 4 GiB); while a kernel runs on a GPU, CUDA may
 * make the call wait for it: never call it from code a running kernel
 * waits for.
 * Truncation: a registered file must not be truncated while registered.
 * A gftruncate or O_TRUNC through libgpufs, or a file found shorter than
 * its registered length at a gopen, retires the registration (counted in
 * reg_retired; the file is served by the daemon until unregistered and
 * registered again).  A file truncated from the host and grown back to its
 * registered length between two gopens is not detected: unregister first.
 * Returns 0, or (the file stays on the daemon path; reg_refused counts
 * it; gpufs_error_detail says why):
 *   -EINVAL when not started, for a file that is not a regular file, or one
 *   shorter than 4 KiB; -EFAULT for path NULL; -ENOENT, -EACCES, ... as open(2);
 *   -EEXIST when the file (by any name) is registered already; -EFBIG
 *   when the registered files would pin more than register_max bytes
 *   together; -ENOMEM when the mapping cannot be made or pinned. */
int gpufs_register(const char *path);

/* Undo gpufs_register of the file `path` names (any name of it): unpin and
 * unmap it.  0; -EINVAL when not started or for a file not registered;
 * -EFAULT for path NULL; -ENOENT, -EACCES, ... as stat(2); -EBUSY while a
 * GPU descriptor of the file is open on any instance (gclose them first)
 * or while the library still pins an automatic pin of it (try again).
 * gpufs_stop unregisters every file still registered (also one whose last
 * name was removed, which no path names any more).  With several
 * instances, a truncation through one retires the registration for the
 * next opens, while the others keep reading the mapping until they close
 * the file (close-to-open: their view of the file is older anyway). */
int gpufs_unregister(const char *path);

/* How many instances run (0 when not started). */
int gpufs_instance_count(void);

/* The CUDA device of instance `instance`, or -EINVAL. */
int gpufs_instance_device(int instance);

/* A kernel's handle on one instance: pass it by value to a kernel, which
 * gives it to gopen/gunlink (gopen(ref, path, flags)); every call on the
 * descriptor then goes to that instance.  Trivially copyable. */
struct gpufs_ref {
  uint32_t instance;
};

/* *ref for instance `instance`: 0, or -EINVAL when not started or for an
 * instance that does not exist.  A ref is valid until gpufs_stop, in
 * kernels on that instance's device (elsewhere gopen(ref) fails with
 * -ENODEV). */
int gpufs_get_ref(int instance, struct gpufs_ref *ref);

/* The version of the library linked, "MAJOR.MINOR.PATCH" (the
 * GPUFS_VERSION_* macros of the header compiled against may differ); each
 * pointer given (may be NULL) gets its part.  Safe before gpufs_start. */
const char *gpufs_version(int *major, int *minor, int *patch);

/* A human-readable name of a (negative) libgpufs error. */
const char *gpufs_strerror(int err);

/* Why the calling thread's last failed gpufs_start failed (e.g. "page_size:
 * must be a power of two between 4 KiB and 2 MiB"); empty after a
 * successful gpufs_start. */
const char *gpufs_error_detail(void);

#ifdef __cplusplus
}
#endif

/* ---------------- device calls ---------------- */

/* Open flags: the Linux values, shared with the host's open(2). */
#define GPUFS_O_RDONLY 00
#define GPUFS_O_WRONLY 01
#define GPUFS_O_RDWR 02
#define GPUFS_O_CREAT 0100
#define GPUFS_O_EXCL 0200
#define GPUFS_O_TRUNC 01000

struct gstat {
  int64_t st_size;      /* bytes */
  uint32_t st_mode;     /* as stat(2) */
  uint64_t st_ino;
  int64_t st_mtime_ns;  /* modification time, ns since the epoch */
};

#if defined(__CUDACC__)
/*
 * gopen: open the host file `path` (NUL-terminated, < GPUFS_PATH_MAX bytes).
 *   flags: one of GPUFS_O_RDONLY, GPUFS_O_WRONLY, GPUFS_O_RDWR, or'ed with
 *   any of GPUFS_O_CREAT, GPUFS_O_EXCL, GPUFS_O_TRUNC; mode: permissions of
 *   a file O_CREAT creates (the host's umask applies).
 *   Returns a descriptor >= 0, shared by every group that opens the same path
 *   with the same flags (reference counted: each successful gopen needs one
 *   gclose).  Every name of one host file (other spellings of the path,
 *   hard links: the same device and inode) open on the instance is the same
 *   GPU file: one size, one version, one set of dirty pages, whatever
 *   descriptor a call uses.  O_CREAT and O_EXCL act when the host opens the
 *   file, that is, for the first of the groups sharing a descriptor; a
 *   gopen with O_CREAT|O_EXCL of a path open on the GPU fails with -EEXIST.
 *   O_TRUNC acts at every gopen that asks for it, as open(2), also one that
 *   joins an open descriptor: the file becomes empty for every descriptor
 *   of it, and bytes written to it before (not yet written back) are
 *   dropped; O_TRUNC needs O_WRONLY or O_RDWR (with O_RDONLY: -EINVAL).
 *   Errors: -ENOENT, -EACCES, -EEXIST, -EISDIR, ... as the host's open(2) (a
 *   directory opens read-only; reading it fails with -EISDIR);
 *   -EMFILE when max_open_files distinct files are open; -ENAMETOOLONG;
 *   -EFBIG for a file of 2^40 pages or more; -ENFILE after 2^24 - 1
 *   distinct files in one instance; -EINVAL for unknown flags; -ESHUTDOWN
 *   when libgpufs is stopped while the call waits (calls made after
 *   gpufs_stop returned, from a kernel launched later, are undefined).
 *   Differences to POSIX: descriptors are shared, not per caller;
 *   close-to-open consistency: a gopen that finds no name of the file open
 *   on the instance sees the host file as it is (its size, and its bytes:
 *   cached pages of an older version are not used); one that finds the file
 *   open shares the open file's view.  Until every name is closed, the
 *   file's size is changed only by this GPU's gwrite, gftruncate and
 *   O_TRUNC, and cached pages are served as they are: changes others make
 *   to the host file meanwhile are not seen (bytes it lost, not cached,
 *   read as zeros).  Changes are detected by size, mtime and ctime: a
 *   change that keeps the size, made within the file system's timestamp
 *   granularity (a few ms) after the last change the GPU saw (at its
 *   previous open, or its own last write-back), can be missed.  Cached
 *   pages include those readahead loaded.
 */
__device__ int gopen(const char *path, int flags, int mode = 0666);
__device__ int gopen_warp(const char *path, int flags, int mode = 0666);

/*
 * gopen with a ref: the same, on the instance ref names (gpufs_get_ref)
 *   rather than on the default instance of the GPU the kernel runs on.
 *   Descriptors carry their instance: every other call on the descriptor
 *   goes to it.  The same file open on two instances is two descriptors
 *   with two caches, consistent close-to-open between them: a gclose (or
 *   gfsync) on one, then a gopen on the other, reads the bytes written.
 *   Extra error: -ENODEV when the ref's instance does not run on this GPU
 *   (the plain gopen fails so too on a GPU with no instance).
 */
__device__ int gopen(struct gpufs_ref ref, const char *path, int flags, int mode = 0666);
__device__ int gopen_warp(struct gpufs_ref ref, const char *path, int flags, int mode = 0666);

/*
 * gclose: drop one reference to fd (a writable mapping of fd holds one
 *   more until its gmunmap).  With the last reference of a descriptor open
 *   for writing, the file's dirty pages (through any name of it) are
 *   written back (no fsync); then the host descriptor is closed.
 *   Returns 0; -EBADF for a descriptor that is not open; with the last
 *   reference, a write-back error (-EIO, -ENOSPC, ...), the host close(2)'s
 *   error or -ESHUTDOWN.
 *   Differences to POSIX: when the write-back fails the descriptor stays
 *   open with this last reference and its pages stay dirty: retry gclose
 *   (or gfsync) once the cause is fixed.  Nothing is dropped silently.
 */
__device__ int gclose(int fd);
__device__ int gclose_warp(int fd);

/*
 * gread: read up to size bytes at offset of fd into buf (device memory,
 *   visible to the whole group), through the page cache: pread semantics.
 *   Returns the bytes read: size, fewer at end of file (see gopen: the size
 *   at open, as this GPU's writes changed it), 0 at or past it (then buf is
 *   not looked at, even if NULL).  Bytes this GPU wrote are read back at
 *   once, before any write-back.  Errors: -EBADF (fd not open, or opened
 *   O_WRONLY), -EINVAL (offset < 0), -EFAULT (buf NULL), -EIO and
 *   other errors of the host's pread, -ENOMEM (no frame could be had within
 *   alloc_timeout_ms: every frame of the group's allocator ring pinned or
 *   loading), -ESHUTDOWN.
 *   On an error no byte count is returned, though part of buf may be written.
 *   Readahead: when a group's calls on fd follow each other (each starts
 *   where the group's last one ended, or at offset 0), the last round of a
 *   call also loads the pages after it into the cache, up to a window of
 *   readahead_max bytes counted from the call's start (it doubles while the
 *   reads stay sequential; see gfadvise).  An error on such a page is not
 *   the call's.  With readahead_async (gpufs/config.h) the next window is
 *   posted to the host when a call reaches the current window's first
 *   page, and not waited for; the bytes returned are the same.
 *   Differences to POSIX: no file position; buf must not overlap the cache.
 */
__device__ ssize_t gread(int fd, int64_t offset, size_t size, void *buf);
__device__ ssize_t gread_warp(int fd, int64_t offset, size_t size, void *buf);

/*
 * gwrite: write size bytes of buf (device memory) at offset of fd, through
 *   the page cache: pwrite semantics.  The bytes go into cached pages at
 *   once (every later gread on this GPU sees them) and reach the host file
 *   at write-back: gfsync, the last gclose, gpufs_sync, or when the cache
 *   needs the frame.  Only the changed bytes are written back, in
 *   grains of cfg.dirty_grain bytes (GPUFS_DIRTY_GRAIN, 64, by default; 1:
 *   exactly the bytes written): writers of disjoint grains of one page
 *   (other groups, the CPU, another kernel) never overwrite each other.
 *   A write past the end extends the file (the gap reads as zeros).
 *   Returns size; fewer when an error stopped it after some pages were
 *   written; 0 for size 0.  After an error or a short count, pages past
 *   that point which the call covers whole may already hold its bytes
 *   (and are written back), as a page is never published half made.  Errors: -EBADF (fd not open for writing),
 *   -EINVAL (offset < 0), -EFAULT (buf NULL), -EFBIG (past 2^40 pages),
 *   the host's read errors (a partly written page is read first), -ENOMEM
 *   (no frame within alloc_timeout_ms), a write-back error met while freeing
 *   frames (-EIO, -ENOSPC, ...), -ESHUTDOWN.
 *   Differences to POSIX: no file position, no O_APPEND; the data is not
 *   in the host file until write-back; a grain written in part is written
 *   back whole, with the other bytes as the cache holds them.
 */
__device__ ssize_t gwrite(int fd, int64_t offset, size_t size, const void *buf);
__device__ ssize_t gwrite_warp(int fd, int64_t offset, size_t size, const void *buf);

/*
 * gfsync: write back every dirty page of fd's file (whoever dirtied it,
 *   through any name of the file; also when fd is read-only), wait for the
 *   file's write-backs other groups have in flight, then fsync(2) it on the
 *   host.  0; -EBADF; the first write-back or fsync error (-EIO,
 *   -ENOSPC, -EDQUOT, ...: the pages that failed stay dirty and are written
 *   by a later gfsync); -ESHUTDOWN.
 */
__device__ int gfsync(int fd);
__device__ int gfsync_warp(int fd);

/*
 * gftruncate: set fd's file to length bytes, shrinking or growing it (new
 *   bytes read as zeros).  The file's dirty pages (through any name) are
 *   written back first; then every descriptor of the file has the new size,
 *   and its cached pages are stale and read again when used.  0; -EBADF (not open); -EINVAL (length < 0, or fd not open
 *   for writing, as Linux); -EFBIG; the host's ftruncate or write-back
 *   error; -ESHUTDOWN.
 *   Must not run concurrently with gwrite of the same file.
 */
__device__ int gftruncate(int fd, int64_t length);
__device__ int gftruncate_warp(int fd, int64_t length);

/*
 * gunlink: remove the name path on the host (unlink(2)).  Files open on
 *   the GPU stay readable and writable through their descriptors; a file
 *   later created under the same name is a new file to the cache.  0 or the
 *   host's -errno (-ENOENT, -EACCES, -EISDIR, ...); -ENAMETOOLONG; -EFAULT;
 *   -ESHUTDOWN.
 */
__device__ int gunlink(const char *path);
__device__ int gunlink_warp(const char *path);
/* gunlink through the daemon queue of the instance ref names (-ENODEV when
 * it does not run on this GPU); the effect is the same. */
__device__ int gunlink(struct gpufs_ref ref, const char *path);
__device__ int gunlink_warp(struct gpufs_ref ref, const char *path);

/* gmmap protections, flags and gmsync flags: the Linux values. */
#define GPUFS_PROT_READ 0x1
#define GPUFS_PROT_WRITE 0x2
#define GPUFS_MAP_SHARED 0x01
#define GPUFS_MAP_PRIVATE 0x02
#define GPUFS_MS_ASYNC 1
#define GPUFS_MS_INVALIDATE 2
#define GPUFS_MS_SYNC 4

/* gmmap's result is an error, not a pointer; GPUFS_MAP_ERRNO gives -errno. */
#define GPUFS_MAP_FAILED(p) ((uintptr_t)(p) >= (uintptr_t)-4095)
#define GPUFS_MAP_ERRNO(p) ((int)(intptr_t)(p))

/*
 * gmmap: a pointer to the cached bytes [offset, offset+size) of fd, which
 *   must lie within one page (offset % page_size + size <= page_size).  The
 *   page is loaded if needed and stays pinned in the cache, never evicted,
 *   until gmunmap; the pointer is valid until then.  Bytes of the page past
 *   the end of the file read as zero.
 *   addr: a hint, ignored.  prot: GPUFS_PROT_READ, or'ed with
 *   GPUFS_PROT_WRITE for a descriptor open for writing.  flags:
 *   GPUFS_MAP_SHARED (writes reach the file) or GPUFS_MAP_PRIVATE (read-only
 *   mappings only).
 *   Writes through a PROT_WRITE mapping are shared at once with every
 *   reader of the page on this GPU; the range given to gmsync or gmunmap,
 *   [addr, addr+size), is marked dirty there (whole grains) and written
 *   back as gwrite's bytes are: there is no pristine copy to diff against,
 *   so map only the bytes you change.  A writable mapping (PROT_WRITE,
 *   MAP_SHARED) holds a reference on fd until gmunmap: a gclose before it is
 *   not the last, and the gmunmap that drops the last reference writes the
 *   file back and closes it, as that gclose would have.  Read-only mappings
 *   (no PROT_WRITE, MAP_PRIVATE) mark nothing and write nothing back.  Bytes
 *   past the end of the file are not written.
 *   Errors (test with GPUFS_MAP_FAILED, read with GPUFS_MAP_ERRNO): -EBADF,
 *   -EINVAL (size 0, offset < 0, a range crossing a page boundary, bad prot
 *   or flags), -EACCES (PROT_WRITE on a read-only descriptor), -ENXIO (offset
 *   at or past the end of the file), the host's read errors, -ENOMEM (every
 *   frame pinned or loading for alloc_timeout_ms; or, for PROT_WRITE, more
 *   live writable mappings than the instance records: one per cache frame,
 *   at most 32768), -ESHUTDOWN.
 *   Each successful call pins once per group: one gmunmap releases it.
 *   Differences to POSIX: at most one page; no address hint; the mapping is
 *   of the group, not of a process.
 */
__device__ void *gmmap(void *addr, size_t size, int prot, int flags, int fd, int64_t offset);
__device__ void *gmmap_warp(void *addr, size_t size, int prot, int flags, int fd, int64_t offset);

/*
 * gmunmap: release a mapping made by gmmap (addr and size: the pointer it
 *   returned and the size it was given).  For a writable mapping,
 *   [addr, addr+size) is marked dirty first (written back later, as by
 *   gwrite), then its reference on the descriptor is dropped: the last one
 *   writes back and closes, as gclose.  Mappings are told apart by address
 *   and size: a writable mapping is ended only by a gmunmap of its own
 *   address and size (another pair releases a pin as a read-only mapping),
 *   and while a read-only and a writable mapping of the same address and
 *   size are live, the first gmunmap of them ends the writable one.  0;
 *   -EINVAL when addr does not point into a mapped (pinned) page of the
 *   cache; the last close's error (the descriptor then stays open: gclose
 *   it to try again).  Unmapping a page the caller did not map releases
 *   another group's mapping (as a double free would), so don't.
 */
__device__ int gmunmap(void *addr, size_t size);
__device__ int gmunmap_warp(void *addr, size_t size);

/*
 * gmsync: flags GPUFS_MS_SYNC or GPUFS_MS_ASYNC (one of them), optionally
 *   GPUFS_MS_INVALIDATE (ignored: the cache is the only copy on the GPU).
 *   For a writable mapping (addr and size as given to gmmap), [addr,
 *   addr+size) is marked dirty and, with MS_SYNC, the file's dirty pages are
 *   written back (no fsync); with MS_ASYNC they are written back later.  A
 *   read-only mapping has nothing to write back: 0.  0; -EINVAL for bad
 *   flags, -ENOMEM when the range is not mapped (as msync); write-back
 *   errors.
 */
__device__ int gmsync(void *addr, size_t size, int flags);
__device__ int gmsync_warp(void *addr, size_t size, int flags);

/* gfadvise advice: the Linux values of posix_fadvise. */
#define GPUFS_FADV_NORMAL 0
#define GPUFS_FADV_RANDOM 1
#define GPUFS_FADV_SEQUENTIAL 2
#define GPUFS_FADV_WILLNEED 3
#define GPUFS_FADV_DONTNEED 4
#define GPUFS_FADV_NOREUSE 5

/*
 * gfadvise: pass an access-pattern hint for [offset, offset+len) of fd (len
 *   0: to the end of the file) to the host's page cache, as posix_fadvise(2)
 *   on the daemon's descriptor: SEQUENTIAL widens the host's readahead for
 *   the file, RANDOM turns it off, WILLNEED starts reading the range into
 *   the host's page cache now (a file not yet cached, read later through
 *   gread, then comes from memory), DONTNEED drops its clean host pages.
 *   NORMAL, SEQUENTIAL and RANDOM also set the GPU's readahead for every
 *   gread of fd (not only the range): RANDOM turns it off, SEQUENTIAL
 *   starts every call at the largest window, NORMAL detects sequential
 *   groups.  It does not change what the GPU cache holds.
 *   Returns 0; -EBADF; -EINVAL (offset < 0, len < 0, unknown advice);
 *   -ESHUTDOWN.
 *   Differences to POSIX: the hint acts on the host's cache of the file,
 *   shared by every descriptor, and on the GPU's readahead for the whole
 *   descriptor; lengths past 4 GiB - 1 mean to the end.
 */
__device__ int gfadvise(int fd, int64_t offset, int64_t len, int advice);
__device__ int gfadvise_warp(int fd, int64_t offset, int64_t len, int advice);

/*
 * gfstat: fresh stat of fd from the host (mode, inode, mtime); the size is
 *   the larger of the host file's and the GPU file's (bytes this GPU wrote
 *   past the host's end are the file's, not yet written back).  0, -EBADF,
 *   -EIO, -ESHUTDOWN.
 */
__device__ int gfstat(int fd, struct gstat *st);
__device__ int gfstat_warp(int fd, struct gstat *st);
#endif /* __CUDACC__ */

#endif /* GPUFS_CUH */
