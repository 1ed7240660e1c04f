/*
 * cache.c - SemCache's directory of ranges and its MSI protocol
 * (cache.h).  The page protection and the fault handler are protect.c.
 */
#include "cache.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "protect.h"

/* CLOCK_MONOTONIC through the vDSO: no lock, no allocation, safe in the
 * fault handler. */
static uint64_t now_ns(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The lock, with its holder remembered: the fault handler refuses to wait
 * for a lock its own thread holds (protect.c).  The time it is held, less
 * the backend's copies, is the cache's bookkeeping (stats). */
void sc_lock(struct sc_cache *c)
{
  pthread_mutex_lock(&c->lock);
  __atomic_store_n(&c->owner, (uint64_t)pthread_self(), __ATOMIC_RELAXED);
  c->held_since_ns = now_ns();
  c->held_copy_ns = 0;
}

void sc_unlock(struct sc_cache *c)
{
  const uint64_t held = now_ns() - c->held_since_ns;
  c->st.bookkeeping_ns += held > c->held_copy_ns ? held - c->held_copy_ns : 0;
  __atomic_store_n(&c->owner, 0, __ATOMIC_RELAXED);
  pthread_mutex_unlock(&c->lock);
}

/* Which way a backend copy goes, and for one to the host how its bytes
 * are stored (cache.h, enum sc_store). */
enum sc_dir { SC_TO_DEV, SC_TO_HOST_OPEN, SC_TO_HOST_CLOSED };

/* A backend copy, timed apart from the bookkeeping and counted.  Locked. */
static int copy(struct sc_cache *c, enum sc_dir dir, void *dst, const void *src, size_t bytes)
{
  const uint64_t t0 = now_ns();
  int rc = dir == SC_TO_DEV ? c->be.to_dev(c->be.ctx, dst, src, bytes)
                            : c->be.to_host(c->be.ctx, dst, src, bytes,
                                            dir == SC_TO_HOST_CLOSED ? SC_STORE_CLOSED : SC_STORE_OPEN);
  c->held_copy_ns += now_ns() - t0;
  if (rc == 0 && dir == SC_TO_DEV) {
    c->st.to_dev++;
    c->st.to_dev_bytes += bytes;
  } else if (rc == 0) {
    c->st.to_host++;
    c->st.to_host_bytes += bytes;
    c->st.closed_stores += dir == SC_TO_HOST_CLOSED;
  }
  return rc;
}

static struct sc_entry *find_exact(struct sc_cache *c, uintptr_t host, size_t bytes)
{
  for (struct sc_entry *e = c->head; e; e = e->next)
    if (e->host == host && e->bytes == bytes) return e;
  return NULL;
}

/* Copy a MODIFIED range back; it is SHARED after.  Past its pages'
 * protection where this process can (sc_store_closed_ok): they keep no
 * access during the copy, so a thread touching them waits in the fault
 * handler for this lock and then finds the copy done.  Else its pages are
 * opened for the copy (the MODIFIED neighbours on them written back
 * first, so no stale bytes of theirs become readable; its own are
 * readable until the copy ends: "Known limits").  Locked. */
int sc_write_back_open(struct sc_cache *c, struct sc_entry *e)
{
  if (e->state != SC_MODIFIED) return 0;
  const int closed = sc_store_closed_ok();
  if (!closed) {
    /* a neighbour's own write-back skips e (else two MODIFIED ranges on
     * one page would write each other back forever) */
    e->writing_back = 1;
    int rc = 0;
    for (struct sc_entry *o = c->head; o && rc == 0; o = o->next)
      if (o != e && o->state == SC_MODIFIED && !o->writing_back && sc_pages_meet(o, e))
        rc = sc_write_back(c, o);
    e->writing_back = 0;
    if (rc) return rc;
    sc_open_pages(e);
  }
  int rc = copy(c, closed ? SC_TO_HOST_CLOSED : SC_TO_HOST_OPEN, (void *)e->host, e->dev, e->bytes);
  e->state = rc == 0 ? SC_SHARED : SC_INVALID;
  return rc;
}

int sc_write_back(struct sc_cache *c, struct sc_entry *e)
{
  if (e->state != SC_MODIFIED) return 0;
  int rc = sc_write_back_open(c, e);
  sc_protect_span(c, e->page_lo, e->page_hi);
  return rc;
}

/* Take e out of the directory and free its device copy; its pages get the
 * protection the remaining ranges need.  Locked; e unpinned. */
static void drop(struct sc_cache *c, struct sc_entry *e)
{
  for (struct sc_entry **p = &c->head; *p; p = &(*p)->next)
    if (*p == e) {
      *p = e->next;
      break;
    }
  c->used -= e->bytes;
  c->be.free(c->be.ctx, e->dev, e->bytes);
  sc_protect_span(c, e->page_lo, e->page_hi);
  sc_note_dropped(e->page_lo, e->page_hi);
  sc_pages_free(e);
}

/* Evict the least recently used unpinned range (written back first when
 * MODIFIED).  0, or -ENOSPC when every range is pinned. */
static int evict_one(struct sc_cache *c)
{
  struct sc_entry *v = NULL;
  for (struct sc_entry *e = c->head; e; e = e->next)
    if (e->pins == 0 && (!v || e->stamp < v->stamp)) v = e;
  if (!v) return -ENOSPC;
  int rc = sc_write_back(c, v);
  if (rc) return rc;
  c->st.evictions++;
  drop(c, v);
  return 0;
}

/* A new INVALID entry with device memory, making room as needed. */
static int make_entry(struct sc_cache *c, uintptr_t host, size_t bytes, struct sc_entry **out)
{
  struct sc_entry *e = sc_pages_alloc(sizeof(*e));
  if (!e) return -ENOMEM;
  int rc = 0;
  for (;;) {
    if (c->capacity && bytes > c->capacity) {
      rc = -ENOSPC;
      break;
    }
    if (c->capacity && c->used + bytes > c->capacity) {
      if ((rc = evict_one(c))) break;
      continue;
    }
    rc = c->be.alloc(c->be.ctx, bytes, &e->dev);
    if (rc != -ENOMEM) break;
    if ((rc = evict_one(c))) break; /* the device is full: make room there */
  }
  if (rc) {
    sc_pages_free(e);
    if (rc == -ENOSPC) c->st.refused++;
    return rc;
  }
  e->host = host;
  e->bytes = bytes;
  e->state = SC_INVALID;
  sc_page_span(host, bytes, &e->page_lo, &e->page_hi);
  e->next = c->head;
  c->head = e;
  c->used += bytes;
  *out = e;
  return 0;
}

int sc_acquire(struct sc_cache *c, void *host, size_t bytes, enum sc_use use, void **dev)
{
  const uintptr_t h = (uintptr_t)host;
  if (!c || !host || bytes == 0 || !dev || h + bytes < h) return -EINVAL;
  sc_lock(c);
  int rc = 0;
  struct sc_entry *e = find_exact(c, h, bytes);
  /* a cached range that overlaps this one but is another: its newest bytes
   * to the host, then out (a call's range is one device buffer) */
  for (struct sc_entry *o = c->head, *nx; o && rc == 0; o = nx) {
    nx = o->next;
    if (o == e || o->host >= h + bytes || h >= o->host + o->bytes) continue;
    if (o->pins) {
      rc = -EBUSY; /* another call uses it now */
      break;
    }
    if ((rc = sc_write_back(c, o)) == 0) drop(c, o);
  }
  if (rc == 0 && !e) {
    c->st.misses++;
    rc = make_entry(c, h, bytes, &e);
  } else if (rc == 0) {
    if (e->state == SC_INVALID && (use & SC_READ)) c->st.misses++;
    else c->st.hits++;
  }
  if (rc == 0 && e->state == SC_INVALID && (use & SC_READ)) {
    /* readable host pages (a MODIFIED neighbour on them written back), read-
     * only before the copy: a CPU write during it faults, waits for this
     * lock, and then finds the range SHARED to invalidate */
    for (struct sc_entry *o = c->head; o && rc == 0; o = o->next)
      if (o != e && o->state == SC_MODIFIED && sc_pages_meet(o, e)) rc = sc_write_back(c, o);
    if (rc == 0) {
      e->state = SC_SHARED;
      sc_protect_span(c, e->page_lo, e->page_hi);
      rc = copy(c, SC_TO_DEV, e->dev, host, bytes);
      if (rc) {
        e->state = SC_INVALID;
        sc_protect_span(c, e->page_lo, e->page_hi);
      }
    }
  }
  if (rc == 0) {
    e->pins++;
    e->stamp = ++c->clock;
    *dev = e->dev;
  }
  sc_unlock(c);
  return rc;
}

int sc_release(struct sc_cache *c, void *host, size_t bytes, enum sc_use use)
{
  if (!c) return -EINVAL;
  sc_lock(c);
  struct sc_entry *e = find_exact(c, (uintptr_t)host, bytes);
  int rc = 0;
  if (!e || e->pins == 0) {
    rc = -ENOENT;
  } else {
    e->pins--;
    if (use & SC_WRITE) {
      const enum sc_state was = e->state;
      e->state = SC_MODIFIED;
      if (c->protocol == SC_WRITE_THROUGH) rc = sc_write_back(c, e);
      else if (was != SC_MODIFIED) sc_protect_span(c, e->page_lo, e->page_hi);
      /* (already MODIFIED: its pages have no access already; every state
       * change re-protects its span, so unchanged states need no call) */
    }
  }
  sc_unlock(c);
  return rc;
}

void sc_forget(struct sc_cache *c, void *addr, size_t len)
{
  const uintptr_t a = (uintptr_t)addr;
  if (!c || len == 0) return;
  sc_lock(c);
  for (struct sc_entry *e = c->head, *nx; e; e = nx) {
    nx = e->next;
    if (e->host >= a + len || a >= e->host + e->bytes) continue;
    c->st.invalidations++;
    e->state = SC_INVALID; /* the bytes are the program's no more: no write-back */
    e->pins = 0;
    drop(c, e);
  }
  sc_unlock(c);
}

int sc_flush(struct sc_cache *c)
{
  int rc = 0;
  sc_lock(c);
  for (struct sc_entry *e = c->head; e; e = e->next) {
    int r = sc_write_back(c, e);
    rc = rc ? rc : r;
  }
  sc_unlock(c);
  return rc;
}

int sc_state_of(struct sc_cache *c, const void *host, size_t bytes)
{
  sc_lock(c);
  struct sc_entry *e = find_exact(c, (uintptr_t)host, bytes);
  int s = e ? (int)e->state : -1;
  sc_unlock(c);
  return s;
}

void sc_get_stats(struct sc_cache *c, struct sc_stats *st)
{
  sc_lock(c);
  *st = c->st;
  sc_unlock(c);
}

int sc_dev_alloc(struct sc_cache *c, size_t bytes, void **dev)
{
  if (bytes == 0) return -EINVAL;
  sc_lock(c);
  int rc = c->capacity && c->used + bytes > c->capacity ? -ENOSPC
                                                        : c->be.alloc(c->be.ctx, bytes, dev);
  if (rc == -ENOMEM) rc = -ENOSPC;
  if (rc == 0) c->used += bytes;
  else if (rc == -ENOSPC) c->st.refused++;
  sc_unlock(c);
  return rc;
}

void sc_dev_free(struct sc_cache *c, void *dev, size_t bytes)
{
  sc_lock(c);
  c->be.free(c->be.ctx, dev, bytes);
  c->used -= bytes;
  sc_unlock(c);
}

int sc_copy_to_dev(struct sc_cache *c, void *dev, const void *host, size_t bytes)
{
  sc_lock(c);
  int rc = copy(c, SC_TO_DEV, dev, host, bytes);
  sc_unlock(c);
  return rc;
}

int sc_copy_to_host(struct sc_cache *c, void *host, const void *dev, size_t bytes)
{
  sc_lock(c);
  int rc = copy(c, SC_TO_HOST_OPEN, host, dev, bytes);
  sc_unlock(c);
  return rc;
}

int sc_cache_init(struct sc_cache *c, const struct sc_backend *be, enum sc_protocol p,
                  size_t capacity)
{
  if (!c || !be || !be->alloc || !be->free || !be->to_dev || !be->to_host ||
      (p != SC_WRITE_THROUGH && p != SC_WRITE_BACK))
    return -EINVAL;
  memset(c, 0, sizeof(*c));
  pthread_mutex_init(&c->lock, NULL);
  c->be = *be;
  c->protocol = p;
  c->capacity = capacity;
  return sc_register(c);
}

int sc_cache_destroy(struct sc_cache *c)
{
  int rc = sc_flush(c);
  sc_unregister(c);
  sc_lock(c);
  while (c->head) {
    struct sc_entry *e = c->head;
    e->state = SC_INVALID;
    e->pins = 0;
    drop(c, e);
  }
  sc_unlock(c);
  pthread_mutex_destroy(&c->lock);
  return rc;
}

/* ---- the CPU backend: host memory stands for the device ---- */

/* "Device" buffers of their own pages: a malloc'ed one could share a
 * page with a protected range of the program. */
static int cpu_alloc(void *ctx, size_t bytes, void **dev)
{
  (void)ctx;
  *dev = sc_pages_alloc(bytes);
  return *dev ? 0 : -ENOMEM;
}

static void cpu_free(void *ctx, void *dev, size_t bytes)
{
  (void)ctx;
  (void)bytes;
  sc_pages_free(dev);
}

static int cpu_to_dev(void *ctx, void *dev, const void *host, size_t bytes)
{
  (void)ctx;
  memcpy(dev, host, bytes);
  return 0;
}

static int cpu_to_host(void *ctx, void *host, const void *dev, size_t bytes, enum sc_store how)
{
  (void)ctx;
  return sc_host_store(how, host, dev, bytes);
}

const struct sc_backend sc_cpu_backend = {NULL, cpu_alloc, cpu_free, cpu_to_dev, cpu_to_host};
