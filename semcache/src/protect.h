/*
 * protect.h - inside SemCache's cache: what protect.c gives cache.c (the
 * page size, pages of its own, the SIGSEGV handler and its registry, the
 * dropped pages) and what the handler calls back (sc_cache_fault).
 */
#ifndef SEMCACHE_PROTECT_H
#define SEMCACHE_PROTECT_H

#include "msi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The host page size (sysconf, read once). */
uintptr_t sc_page_size(void);

/* Memory of its own pages (mmap; small mappings freed are kept and
 * reused), zeroed: the cache's entries and the CPU backend's "device"
 * buffers, which must never share a page with the program's ranges.
 * NULL when out of memory.  Not from the fault handler. */
void *sc_pages_alloc(size_t bytes);
void sc_pages_free(void *p);

void sc_lock(struct sc_cache *c);
void sc_unlock(struct sc_cache *c);

/* Nonzero on a thread while its SIGSEGV handler works for a cache (the
 * backend's copies then: a thread that may hold the C library's
 * allocator lock, or any other, where it faulted; gpu.c hands them to its
 * copier thread).  And, set by a backend's copier thread, sc_fault_fatal:
 * a fault there while a requester holds the cache's lock would wait for
 * that lock forever, so it aborts with a message instead. */
extern __thread int sc_in_fault;
extern __thread int sc_fault_fatal;

/* Pages [lo, hi) (page numbers) left the cache: readable and writable
 * again.  Locked.  A fault taken there before the drop whose handler gets
 * the lock after it finds no range: it retries the access rather than
 * passing the fault on as the program's own (eviction by another thread,
 * with four threads, crashed so). */
void sc_note_dropped(uintptr_t lo, uintptr_t hi);
int sc_was_dropped(uintptr_t page);

/* A protection fault at page `page` (a write: is_write 1, a read 0,
 * unknown -1), on the faulting thread, which holds no cache lock
 * (cache.c).  1 when c has a range there (or just dropped one): the access
 * runs again. */
int sc_cache_fault(struct sc_cache *c, uintptr_t page, int is_write);

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
