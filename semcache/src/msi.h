/*
 * msi.h - SemCache's cache (issue 18): the GPU copies of host address
 * ranges at the granularity a BLAS call names (a matrix with its leading
 * dimension: one range from its first to its last element), kept coherent
 * with the host by an MSI protocol whose CPU side is detected with page
 * protection.
 *
 * States, of a range's device copy against the host's bytes:
 *   SC_INVALID   no device copy, or a stale one: the next call sends it
 *   SC_SHARED    both equal; the range's interior pages are read-only, so
 *                a CPU write there faults and invalidates the device copy
 *                (then the pages are writable again)
 *   SC_MODIFIED  (write-back only) the device copy of the interior is
 *                newer; the interior pages are inaccessible, so a CPU
 *                access faults, copies it back and makes the range SHARED
 *                (a write invalidates it in the same fault)
 * Write-through copies a call's outputs back at once (they end SHARED);
 * write-back leaves them MODIFIED until the CPU touches them, the range is
 * evicted, or sc_flush.
 *
 * Protection works on whole host pages, and only a range's interior (the
 * pages wholly inside it) is ever protected.  Its edges (bytes on pages it
 * shares with whatever lies beside it: the allocator's chunk headers, a
 * neighbouring matrix) are kept coherent by copying instead: a call that
 * reads the range compares them with the copy the cache keeps and sends
 * them when the CPU changed them; a call that writes it brings them back
 * at its release, in both protocols.  So nothing but the program's own
 * access to its matrix ever faults: never the C library's allocator, nor
 * a thread inside the CUDA driver writing beside a matrix (cache.c says
 * why that matters).

 * The device is a backend (struct sc_backend): the GPU's memory through the
 * CUDA runtime (gpu.h), or host memory (sc_cpu_backend), so the protocol
 * runs and is tested without a GPU.  Every backend call is made with the
 * cache's lock held, so a backend needs no lock of its own for its copy
 * buffers; and it must never fault on a protected page itself (gpu.c says
 * how the GPU backend keeps that).  Thread-safe: one lock per cache;
 * the SIGSEGV handler takes it too (a fault is taken on the faulting
 * thread, which never holds it: the cache makes pages accessible before it
 * touches host bytes itself).
 */
#ifndef SEMCACHE_CACHE_H
#define SEMCACHE_CACHE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum sc_state { SC_INVALID = 0, SC_SHARED = 1, SC_MODIFIED = 2 };
enum sc_protocol { SC_WRITE_THROUGH = 0, SC_WRITE_BACK = 1 };

/* How a call uses a range: an operand it reads, an output it overwrites
 * whole (its old bytes are not sent), or both (gemm's C with beta != 0). */
enum sc_use { SC_READ = 1, SC_WRITE = 2, SC_READ_WRITE = 3 };

/* How a copy to the host writes the host's bytes (to_host's `how`):
 *   SC_STORE_OPEN    plain stores: the pages are writable (the cache opened
 *                    them, or nothing protects them)
 *   SC_STORE_CLOSED  past the pages' protection (sc_host_store), which stays as
 *                    it is: a MODIFIED range's pages keep no access while
 *                    its newest bytes come back, so another thread's access
 *                    faults and waits for the cache's lock instead of
 *                    reading bytes from before the copy.
 * A backend's to_host writes the host bytes with sc_host_store(how, ...). */
enum sc_store { SC_STORE_OPEN = 0, SC_STORE_CLOSED = 1 };

/* Write n bytes at dst as `how` says: memcpy (OPEN), or through
 * /proc/self/mem (CLOSED), which writes pages the process may not access.
 * 0, or -errno (CLOSED: pages no longer mapped, -EFAULT). */
int sc_host_store(enum sc_store how, void *dst, const void *src, size_t n);

/* Whether SC_STORE_CLOSED works in this process (probed once: a kernel or
 * sandbox without a writable /proc/self/mem).  Where it does not, the
 * cache opens a range's pages for its copy back, and a thread that reads
 * them during the copy may see the bytes from before it
 * (docs/semcache.md, "Known limits"). */
int sc_store_closed_ok(void);

/* The device side.  Each returns 0 or a negative errno; alloc -ENOMEM when
 * the device is full (the cache evicts and tries again).  Context: called
 * with the cache's lock held (see above). */
struct sc_backend {
  void *ctx;
  int (*alloc)(void *ctx, size_t bytes, void **dev);
  void (*free)(void *ctx, void *dev, size_t bytes);
  int (*to_dev)(void *ctx, void *dev, const void *host, size_t bytes);
  int (*to_host)(void *ctx, void *host, const void *dev, size_t bytes, enum sc_store how);
};

/* Host memory standing for device memory: the protocol without a GPU. */
extern const struct sc_backend sc_cpu_backend;

struct sc_stats {
  uint64_t hits;           /* acquires whose range's device copy was valid */
  uint64_t misses;         /* acquires that sent (or allocated) the range */
  uint64_t to_dev, to_dev_bytes;   /* copies host -> device */
  uint64_t to_host, to_host_bytes; /* copies device -> host */
  uint64_t invalidations;  /* device copies made stale by CPU writes, frees */
  uint64_t faults;         /* protection faults taken */
  uint64_t evictions;      /* ranges dropped for room */
  uint64_t refused;        /* acquires that could not get device memory even
                              after evicting everything unpinned */
  uint64_t closed_stores;  /* copies back past the pages' protection */
  uint64_t edge_copies, edge_bytes; /* of the copies above, those of
                              ranges' unprotected edges (either way) */
  uint64_t copy_ns;        /* time in the backend's copies */
  uint64_t bookkeeping_ns; /* time the cache's lock was held, less the
                              backend's copies in it: directory, protection,
                              fault handling, device allocation */
};

struct sc_entry;

struct sc_cache {
  pthread_mutex_t lock;
  uint64_t owner;          /* the thread holding lock (0: none); atomics only */
  struct sc_backend be;
  enum sc_protocol protocol;
  size_t capacity, used;   /* device bytes allowed / held */
  uint64_t clock;          /* use stamps for LRU */
  struct sc_entry *head;   /* every range, unordered */
  struct sc_stats st;
  uint64_t held_since_ns;  /* when the lock's holder took it (bookkeeping_ns) */
  uint64_t held_copy_ns;   /* backend copies during this hold */
  struct sc_cache *next_registered; /* the fault handler's list */
  uintptr_t lo_bound, hi_bound; /* every range ever cached lies in
                                   [lo_bound, hi_bound): relaxed atomics,
                                   widened under the lock (sc_host_access's
                                   quick test) */
};

/* Start a cache over backend be (copied); capacity 0: no limit but the
 * backend's.  Registers it with the fault handler.  0 or -errno. */
int sc_cache_init(struct sc_cache *c, const struct sc_backend *be, enum sc_protocol p,
                  size_t capacity);

/* Write back every MODIFIED range, unprotect every page, free every device
 * copy and unregister.  0, or the first backend error (everything is freed
 * all the same). */
int sc_cache_destroy(struct sc_cache *c);

/* The device copy of host [host, host + bytes) for a call that uses it as
 * `use`, valid until sc_release: sent when the copy is INVALID and the call
 * reads it, allocated when missing (evicting unpinned ranges, least
 * recently used first, MODIFIED ones written back).  A cached range that
 * overlaps this one without being it is written back and dropped first.
 * Pins the range.  0 and *dev; -ENOSPC when no room can be made (the caller
 * runs the call on the CPU; counted as refused); -EINVAL for bytes 0 or a
 * NULL host; backend errors. */
int sc_acquire(struct sc_cache *c, void *host, size_t bytes, enum sc_use use, void **dev);

/* End the call's use of a range sc_acquire gave: unpin; if the call wrote
 * it (use has SC_WRITE), the device copy is the newest: write-through
 * copies it back now and leaves it SHARED, write-back leaves it MODIFIED.
 * 0, -ENOENT for a range not acquired, or a backend error (then the range
 * is INVALID and the host keeps its old bytes). */
int sc_release(struct sc_cache *c, void *host, size_t bytes, enum sc_use use);

/* The program gives up [addr, addr + len) (free, munmap, realloc): every
 * range overlapping it is dropped without a write-back and its pages are
 * made writable again.  How a buffer freed and allocated again at the same
 * address is never served from the old copy. */
void sc_forget(struct sc_cache *c, void *addr, size_t len);

/* A system call is about to read (use SC_READ: write(), send()) or write
 * (SC_WRITE: read(), recv()) [addr, addr + len) on the CPU's behalf: the
 * kernel's own access to a protected page fails with EFAULT instead of
 * faulting, so first every range there that is MODIFIED comes back, and
 * for SC_WRITE every one there is INVALID with its pages writable (its
 * device copy kept, sent again at its next call).  Any thread but the
 * lock's holder. */
void sc_host_access(struct sc_cache *c, const void *addr, size_t len, enum sc_use use);

/* Write back every MODIFIED range (they become SHARED).  0 or an error. */
int sc_flush(struct sc_cache *c);

/* The state of the range cached at exactly [host, host + bytes), or -1
 * (without the lock where no range was ever cached there). */
int sc_state_of(struct sc_cache *c, const void *host, size_t bytes);

void sc_get_stats(struct sc_cache *c, struct sc_stats *st);

/* SEMCACHE_CACHE=off (blas.h's SC_NO_CACHE): device memory and copies that
 * bypass the directory, nothing kept between calls, made under the lock
 * (the backend's rule) and counted in the stats.  sc_dev_alloc: 0, or
 * -ENOSPC when the backend has no room or capacity would be passed
 * (counted as refused), -EINVAL for 0 bytes.  The copies touch host bytes
 * nothing protects (no range is cached in this mode): 0 or the backend's
 * error. */
int sc_dev_alloc(struct sc_cache *c, size_t bytes, void **dev);
void sc_dev_free(struct sc_cache *c, void *dev, size_t bytes);
int sc_copy_to_dev(struct sc_cache *c, void *dev, const void *host, size_t bytes);
int sc_copy_to_host(struct sc_cache *c, void *host, const void *dev, size_t bytes);

#ifdef __cplusplus
}
#endif
#endif /* SEMCACHE_CACHE_H */
