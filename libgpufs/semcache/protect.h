/*
 * protect.h - inside SemCache's cache: a range's entry, and the page
 * protection that detects the CPU's accesses (protect.c), shared by
 * cache.c and protect.c.  Every function here but sc_page_span runs with
 * the cache's lock held (sc_lock), the fault handler's included.
 */
#ifndef SEMCACHE_PROTECT_H
#define SEMCACHE_PROTECT_H

#include "cache.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sc_entry {
  uintptr_t host;            /* the range [host, host + bytes) */
  size_t bytes;
  void *dev;                 /* its device copy (bytes long) */
  enum sc_state state;
  uint32_t pins;             /* calls between sc_acquire and sc_release */
  int writing_back;          /* its open write-back is writing back its neighbours */
  uint64_t stamp;            /* last acquire, for LRU */
  uintptr_t page_lo, page_hi;/* host pages [lo, hi) it touches, as page numbers */
  struct sc_entry *next;
};

/* Memory of its own pages (mmap), zeroed: the cache's entries and the CPU
 * backend's "device" buffers, which must never share a page with the
 * program's ranges (a protected page would fault under the cache's lock).
 * NULL when out of memory. */
void *sc_pages_alloc(size_t bytes);
void sc_pages_free(void *p);

void sc_lock(struct sc_cache *c);

/* Nonzero on a thread while its SIGSEGV handler works for a cache (the
 * backend's copies then: a thread that may hold the C library's
 * allocator lock, or any other, where it faulted; gpu.c hands them to its
 * copier thread).  And, set by a backend's copier thread, sc_fault_fatal:
 * a fault there while a requester holds the cache's lock would wait for
 * that lock forever, so it aborts with a message instead. */
extern __thread int sc_in_fault;
extern __thread int sc_fault_fatal;
void sc_unlock(struct sc_cache *c);

/* The pages [lo, hi) (page numbers) that [host, host + bytes) touches. */
void sc_page_span(uintptr_t host, size_t bytes, uintptr_t *lo, uintptr_t *hi);

/* Whether two ranges share a host page. */
int sc_pages_meet(const struct sc_entry *a, const struct sc_entry *b);

/* Give pages [lo, hi) the protection the strictest range of c on each
 * needs (SHARED: read-only; MODIFIED: none; else read-write). */
void sc_protect_span(struct sc_cache *c, uintptr_t lo, uintptr_t hi);

/* Pages [lo, hi) left the cache (their last range dropped: readable and
 * writable again).  Locked.  A fault taken there before the drop whose
 * handler gets the lock after it finds no range: it retries the access
 * rather than passing the fault on as the program's own (eviction by
 * another thread, with four threads, crashed so). */
void sc_note_dropped(uintptr_t lo, uintptr_t hi);

/* Make e's pages readable and writable, for the cache's own copy into
 * them (sc_protect_span puts the protection back). */
void sc_open_pages(const struct sc_entry *e);

/* Copy a MODIFIED range back to the host; SHARED after (cache.c).  The
 * _open one leaves its pages readable and writable: the caller protects
 * its span after (a write fault, which invalidates it at once). */
int sc_write_back(struct sc_cache *c, struct sc_entry *e);
int sc_write_back_open(struct sc_cache *c, struct sc_entry *e);

/* Closed stores on (1) or off (0) from now on, whatever the probe said
 * (tests; SEMCACHE_STORE=open sets off at the first registration). */
void sc_store_set_closed(int on);

/* Add c to / take c from the caches the SIGSEGV handler looks in; the
 * first registration installs the handler (the one before it is chained:
 * a fault on no cache's pages goes to it).  0 or -ENOSPC (too many
 * caches). */
int sc_register(struct sc_cache *c);
void sc_unregister(struct sc_cache *c);

#ifdef __cplusplus
}
#endif
#endif /* SEMCACHE_PROTECT_H */
