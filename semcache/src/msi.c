/*
 * msi.c - SemCache's directory of ranges and its MSI protocol
 * (msi.h).  The page protection and the fault handler are protect.c.
 */
#include "msi.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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
 * are stored (msi.h, enum sc_store). */
enum sc_dir { SC_TO_DEV, SC_TO_HOST_OPEN, SC_TO_HOST_CLOSED };

/* A backend copy, timed apart from the bookkeeping and counted.  Locked. */
static int copy(struct sc_cache *c, enum sc_dir dir, void *dst, const void *src, size_t bytes)
{
  const uint64_t t0 = now_ns();
  int rc = dir == SC_TO_DEV ? c->be.to_dev(c->be.ctx, dst, src, bytes)
                            : c->be.to_host(c->be.ctx, dst, src, bytes,
                                            dir == SC_TO_HOST_CLOSED ? SC_STORE_CLOSED : SC_STORE_OPEN);
  const uint64_t dt = now_ns() - t0;
  c->held_copy_ns += dt;
  c->st.copy_ns += dt;
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

/* A cached range.  Its interior, the host pages wholly inside it, is
 * protected as its state says; its edges, the bytes on pages it shares
 * with whatever lies beside it (a malloc chunk header, a neighbour), are
 * never protected: the C library's allocator, or a thread inside the CUDA
 * driver, writing beside a matrix must never fault (a fault there, with
 * the driver's lock held while the cache's lock holder waits for a copy
 * that needs it, was the four-thread GPU hang).  Instead the edges are
 * kept equal on both sides by copying: `edge` holds them as the device
 * has them; a call that reads the range compares them with the host's and
 * sends them when the CPU changed them, and a call that writes it brings
 * them back at its release, so the host's edges are never stale.
 * Interiors are exclusive: two ranges that share bytes are never both
 * cached (sc_acquire), so no page is protected for two ranges. */
struct sc_entry {
  uintptr_t host;             /* the range [host, host + bytes) */
  size_t bytes;
  void *dev;                  /* its device copy (bytes long) */
  enum sc_state state;
  uint32_t pins;              /* calls between sc_acquire and sc_release */
  uint64_t stamp;             /* last acquire, for LRU */
  uintptr_t in_lo, in_hi;     /* interior pages [in_lo, in_hi), page numbers; may be empty */
  size_t head, tail;          /* edge bytes: [host, host + head), [host + bytes - tail, ..) */
  unsigned char *edge;        /* head then tail bytes, as on the device */
  struct sc_entry *next;
};

static int prot_of(enum sc_state s)
{
  return s == SC_MODIFIED ? PROT_NONE : s == SC_SHARED ? PROT_READ : PROT_READ | PROT_WRITE;
}

/* Give e's interior the protection its state needs.  (Fails only for
 * pages no longer mapped: a range sc_forget dropped just before its
 * munmap; nothing to protect there.) */
static void protect(const struct sc_entry *e, int prot)
{
  const uintptr_t ps = sc_page_size();
  if (e->in_lo < e->in_hi) mprotect((void *)(e->in_lo * ps), (e->in_hi - e->in_lo) * ps, prot);
}

static void protect_state(const struct sc_entry *e)
{
  protect(e, prot_of(e->state));
}

/* The edges of e: host and device addresses, and where `edge` keeps them. */
static void snap_edges(struct sc_entry *e)
{
  memcpy(e->edge, (const void *)e->host, e->head);
  memcpy(e->edge + e->head, (const void *)(e->host + e->bytes - e->tail), e->tail);
}

static int edges_changed(const struct sc_entry *e)
{
  return memcmp(e->edge, (const void *)e->host, e->head) != 0 ||
         memcmp(e->edge + e->head, (const void *)(e->host + e->bytes - e->tail), e->tail) != 0;
}

/* An edge copy: counted as a copy, and as an edge one. */
static int edge_copy(struct sc_cache *c, int to_dev, void *dst, const void *src, size_t bytes)
{
  if (bytes == 0) return 0;
  int rc = copy(c, to_dev ? SC_TO_DEV : SC_TO_HOST_OPEN, dst, src, bytes);
  if (rc == 0) {
    c->st.edge_copies++;
    c->st.edge_bytes += bytes;
  }
  return rc;
}

/* The CPU changed e's edges: the device gets them (as `edge` now holds
 * them: what the device has is exactly what `edge` says). */
static int send_edges(struct sc_cache *c, struct sc_entry *e)
{
  snap_edges(e);
  int rc = edge_copy(c, 1, e->dev, e->edge, e->head);
  if (rc == 0) rc = edge_copy(c, 1, (char *)e->dev + e->bytes - e->tail, e->edge + e->head, e->tail);
  return rc;
}

/* A call wrote e: its edges come back to the host at once (they are
 * never protected, so never stale). */
static int fetch_edges(struct sc_cache *c, struct sc_entry *e)
{
  int rc = edge_copy(c, 0, e->edge, e->dev, e->head);
  if (rc == 0) rc = edge_copy(c, 0, e->edge + e->head, (char *)e->dev + e->bytes - e->tail, e->tail);
  if (rc == 0) {
    memcpy((void *)e->host, e->edge, e->head);
    memcpy((void *)(e->host + e->bytes - e->tail), e->edge + e->head, e->tail);
  }
  return rc;
}

static struct sc_entry *find_exact(struct sc_cache *c, uintptr_t host, size_t bytes)
{
  for (struct sc_entry *e = c->head; e; e = e->next)
    if (e->host == host && e->bytes == bytes) return e;
  return NULL;
}

/* Copy a MODIFIED range's interior back (its edges are on the host
 * already, and may be newer there); it is SHARED after, or INVALID on a
 * backend error (the host keeps its old bytes).  Past the interior's
 * protection where this process can (sc_store_closed_ok): it keeps no
 * access during the copy, so a thread touching it waits in the fault
 * handler for this lock and then finds the copy done.  Else (no closed
 * stores in this process, or none into these pages: shared mappings) the
 * interior is opened for the copy and its old bytes are readable until
 * the copy ends ("Known limits").  The caller sets the interior's protection after
 * (protect_state).  Locked. */
static int write_back(struct sc_cache *c, struct sc_entry *e)
{
  if (e->state != SC_MODIFIED) return 0;
  int rc = 0;
  if (e->in_lo < e->in_hi) {
    const uintptr_t ps = sc_page_size(), lo = e->in_lo * ps;
    void *const src = (char *)e->dev + (lo - e->host);
    const size_t len = (e->in_hi - e->in_lo) * ps;
    rc = sc_store_closed_ok() ? copy(c, SC_TO_HOST_CLOSED, (void *)lo, src, len) : -EACCES;
    if (rc) {
      /* no closed stores here, or not into these pages (a MAP_SHARED
       * mapping: the kernel forces writes only into private ones): open
       * them for the copy */
      protect(e, PROT_READ | PROT_WRITE);
      rc = copy(c, SC_TO_HOST_OPEN, (void *)lo, src, len);
    }
  }
  e->state = rc == 0 ? SC_SHARED : SC_INVALID;
  return rc;
}

/* Take e out of the directory and free its device copy; its interior is
 * readable and writable again.  Locked; e unpinned. */
static void drop(struct sc_cache *c, struct sc_entry *e)
{
  for (struct sc_entry **p = &c->head; *p; p = &(*p)->next)
    if (*p == e) {
      *p = e->next;
      break;
    }
  c->used -= e->bytes;
  c->be.free(c->be.ctx, e->dev, e->bytes);
  protect(e, PROT_READ | PROT_WRITE);
  if (e->in_lo < e->in_hi) sc_note_dropped(e->in_lo, e->in_hi);
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
  int rc = write_back(c, v);
  if (rc) {
    protect_state(v);
    return rc;
  }
  c->st.evictions++;
  drop(c, v);
  return 0;
}

/* A new INVALID entry with device memory, making room as needed.  The
 * entry and its edge copy on pages of their own (2 pages hold any edges:
 * a range with no interior spans less than 2 pages). */
static int make_entry(struct sc_cache *c, uintptr_t host, size_t bytes, struct sc_entry **out)
{
  const uintptr_t ps = sc_page_size();
  struct sc_entry *e = sc_pages_alloc(sizeof(*e) + 2 * ps);
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
  e->in_lo = (host + ps - 1) / ps;
  e->in_hi = (host + bytes) / ps;
  if (e->in_lo < e->in_hi) {
    e->head = e->in_lo * ps - host;
    e->tail = host + bytes - e->in_hi * ps;
  } else {
    e->in_lo = e->in_hi = 0;
    e->head = bytes;
    e->tail = 0;
  }
  e->edge = (unsigned char *)(e + 1);
  /* relaxed: read by sc_host_access's quick test, which a range made
   * concurrently with the system call it prepares may miss (the program's
   * own race between the call and the BLAS call on the same bytes) */
  if (!c->hi_bound || host < c->lo_bound) __atomic_store_n(&c->lo_bound, host, __ATOMIC_RELAXED);
  if (host + bytes > c->hi_bound) __atomic_store_n(&c->hi_bound, host + bytes, __ATOMIC_RELAXED);
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
    if ((rc = write_back(c, o)) == 0) drop(c, o);
    else protect_state(o);
  }
  if (rc == 0 && !e) {
    c->st.misses++;
    rc = make_entry(c, h, bytes, &e);
  } else if (rc == 0) {
    if (e->state == SC_INVALID && (use & SC_READ)) c->st.misses++;
    else c->st.hits++;
  }
  if (rc == 0 && (use & SC_READ)) {
    if (e->state == SC_INVALID) {
      /* the interior read-only before the copy: a CPU write during it
       * faults, waits for this lock, and then finds the range SHARED to
       * invalidate; the edges as they were before it (a CPU change to
       * them during the copy differs from `edge` at the next call) */
      snap_edges(e);
      e->state = SC_SHARED;
      protect_state(e);
      rc = copy(c, SC_TO_DEV, e->dev, host, bytes);
      if (rc) {
        e->state = SC_INVALID;
        protect_state(e);
      }
    } else if (edges_changed(e)) {
      rc = send_edges(c, e);
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
      if (c->protocol == SC_WRITE_THROUGH) {
        /* the whole range back now (a CPU access during the copy races the
         * call that wrote it: the program's own race) */
        protect(e, PROT_READ | PROT_WRITE);
        rc = copy(c, SC_TO_HOST_OPEN, host, e->dev, bytes);
        snap_edges(e);
        e->state = rc == 0 ? SC_SHARED : SC_INVALID;
        protect_state(e);
      } else {
        rc = fetch_edges(c, e);
        e->state = rc == 0 ? SC_MODIFIED : SC_INVALID;
        /* already MODIFIED: its interior has no access already */
        if (e->state != was) protect_state(e);
      }
    }
  }
  sc_unlock(c);
  return rc;
}

int sc_cache_fault(struct sc_cache *c, uintptr_t p, int is_write)
{
  sc_lock(c);
  struct sc_entry *e = c->head;
  while (e && !(e->in_lo <= p && p < e->in_hi)) e = e->next;
  if (e) {
    c->st.faults++;
    /* MODIFIED: its newest bytes back (a backend error leaves it INVALID:
     * the host keeps its bytes).  A write (told on x86-64) then also
     * invalidates at once: one fault instead of two. */
    const enum sc_state was = e->state;
    if (was == SC_MODIFIED) write_back(c, e);
    /* (a fault on a SHARED interior is a write: reads do not fault there) */
    if (e->state == SC_SHARED && (is_write == 1 || was == SC_SHARED)) {
      e->state = SC_INVALID;
      c->st.invalidations++;
    }
    protect_state(e);
  }
  /* no range there now: one dropped while this handler waited for the
   * lock leaves the page open, and the access runs again */
  const int mine = e || sc_was_dropped(p);
  sc_unlock(c);
  return mine;
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

void sc_host_access(struct sc_cache *c, const void *addr, size_t len, enum sc_use use)
{
  const uintptr_t a = (uintptr_t)addr;
  if (!c || len == 0 || a + len <= __atomic_load_n(&c->lo_bound, __ATOMIC_RELAXED) ||
      a >= __atomic_load_n(&c->hi_bound, __ATOMIC_RELAXED))
    return;
  sc_lock(c);
  for (struct sc_entry *e = c->head; e; e = e->next) {
    if (e->host >= a + len || a >= e->host + e->bytes) continue;
    const enum sc_state was = e->state;
    if (was == SC_MODIFIED) write_back(c, e); /* an error: INVALID, the host's bytes */
    if ((use & SC_WRITE) && e->state == SC_SHARED) {
      e->state = SC_INVALID;
      c->st.invalidations++;
    }
    if (e->state != was) protect_state(e);
  }
  sc_unlock(c);
}

int sc_flush(struct sc_cache *c)
{
  int rc = 0;
  sc_lock(c);
  for (struct sc_entry *e = c->head; e; e = e->next) {
    if (e->state != SC_MODIFIED) continue;
    int r = write_back(c, e);
    protect_state(e);
    rc = rc ? rc : r;
  }
  sc_unlock(c);
  return rc;
}

int sc_state_of(struct sc_cache *c, const void *host, size_t bytes)
{
  const uintptr_t a = (uintptr_t)host;
  /* relaxed: sc_host_access's quick test (a range never cached: no lock) */
  if (a + bytes <= __atomic_load_n(&c->lo_bound, __ATOMIC_RELAXED) ||
      a >= __atomic_load_n(&c->hi_bound, __ATOMIC_RELAXED))
    return -1;
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
