/*
 * ops.cu - the model's helpers and the data operations of a group: gread,
 * gwrite, gmmap (with stores through writable mappings), gmsync, gmunmap,
 * and gfstat (the size and identity every name must report).
 *
 * Sizes.  A group knows a size each file has for certain (fsx_ctx.lo: the
 * size at launch, raised by its own writes and reads and by every write
 * another group finished before it looked: fsx_kargs.committed), and a size
 * the file cannot exceed (the size at launch or the largest end any group
 * announced before writing: fsx_kargs.intent).  Two orderings make the
 * bounds hold without any lock:
 *
 *   writer: intent max= end ; fence ; gwrite (the library grows the size) ;
 *           fence ; committed max= end (release)
 *   reader: committed (acquire) ; gread (the library reads the size) ;
 *           fence ; intent
 *
 * A reader that saw a size grown by a gwrite sees that writer's intent
 * (the fences pair: fence-fence message passing through the library's
 * size), and a gwrite whose committed end the reader loaded happened
 * before the gread (release / acquire).  In FSX_MODE_SERIAL one group owns
 * the files and lo is the exact size.
 */
#include <cuda/atomic>

#include "tests/fsx/ops.cuh"

typedef cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> fsx_dev_u64;
typedef cuda::atomic_ref<unsigned int, cuda::thread_scope_device> fsx_dev_u32;
typedef cuda::atomic_ref<uint32_t, cuda::thread_scope_system> fsx_sys_u32;

__device__ bool fsx_fail(fsx_ctx *c, const fsx_call *k, int why, int64_t ret, int64_t want_lo,
                         int64_t want_hi, int64_t at, int want_byte, int got_byte)
{
  if (c->g.rank == 0) {
    unsigned int zero = 0;
    /* relaxed: the host reads the record after the kernel ends; the flag
     * only elects one writer and tells the others to stop */
    if (fsx_dev_u32(*c->a->failed).compare_exchange_strong(zero, 1u, cuda::memory_order_relaxed)) {
      struct fsx_fail *f = c->a->fail;
      f->kernel = c->a->kernel;
      f->slot = c->g.slot;
      f->op = c->op;
      f->kind = (uint32_t)k->kind;
      f->file = (uint32_t)k->file;
      f->name = (uint32_t)k->name;
      f->why = (uint32_t)why;
      f->flags = k->flags;
      f->fd = k->fd;
      f->off = k->off;
      f->len = k->len;
      f->ret = ret;
      f->want_lo = want_lo;
      f->want_hi = want_hi;
      f->at = at;
      f->want_byte = (uint32_t)want_byte;
      f->got_byte = (uint32_t)got_byte;
    }
  }
  fsx_sync(&c->g);
  return false;
}

__device__ void fsx_count(fsx_ctx *c, int kind)
{
  if (c->g.rank == 0) {
    c->counts[kind]++; /* the slot's own counters */
    struct fsx_progress *p = &c->a->progress[c->g.slot];
    /* relaxed, system scope: only the watchdog reads it, to say where a
     * hung kernel stands */
    fsx_sys_u32(p->op).store(c->op, cuda::memory_order_relaxed);
    fsx_sys_u32(p->kind).store((uint32_t)kind, cuda::memory_order_relaxed);
  }
}

__device__ bool fsx_stopped(fsx_ctx *c)
{
  unsigned int v = 0;
  /* relaxed: a hint to stop early; the failure record is read by the host */
  if (c->g.rank == 0) v = fsx_dev_u32(*c->a->failed).load(cuda::memory_order_relaxed);
  return fsx_bcast(&c->g, v) != 0;
}

__device__ int fsx_nents(const fsx_ctx *c)
{
  return c->nfds + (c->a->mode == FSX_MODE_HELD ? (int)c->a->nfiles * FSX_HELD : 0);
}

__device__ fsx_fdent fsx_ent(const fsx_ctx *c, int i)
{
  if (i < c->nfds) return c->fds[i];
  int j = i - c->nfds;
  struct fsx_held h = c->a->held[j];
  fsx_fdent e;
  e.fd = h.fd;
  e.file = j / FSX_HELD;
  e.name = h.name;
  e.acc = h.flags & 3;
  e.flags = h.flags;
  e.borrowed = true;
  return e;
}

static __device__ bool fsx_suits(int acc, int need)
{
  if (need == FSX_NEED_READ) return acc != FSX_WO;
  if (need == FSX_NEED_WRITE) return acc != FSX_RO;
  return true;
}

__device__ int fsx_pick_fd(fsx_ctx *c, int need)
{
  int n = fsx_nents(c);
  if (n == 0) return -1;
  if (fsx_chance(&c->rng, 1, 40)) return (int)fsx_below(&c->rng, (uint64_t)n);
  int ok = 0;
  for (int i = 0; i < n; i++) ok += fsx_suits(fsx_ent(c, i).acc, need);
  if (ok == 0) return -1;
  int k = (int)fsx_below(&c->rng, (uint64_t)ok);
  for (int i = 0; i < n; i++)
    if (fsx_suits(fsx_ent(c, i).acc, need) && k-- == 0) return i;
  return -1;
}

__device__ bool fsx_pick_range(fsx_ctx *c, int f, uint64_t maxlen, bool inpage, uint64_t *off,
                               uint64_t *len)
{
  const struct fsx_kargs *a = c->a;
  uint32_t s0 = a->own_start[c->g.slot], s1 = a->own_start[c->g.slot + 1];
  int mine = 0;
  for (uint32_t i = s0; i < s1; i++) mine += a->pieces[a->own[i]].file == (uint32_t)f;
  if (mine == 0) return false;
  int k = (int)fsx_below(&c->rng, (uint64_t)mine);
  struct fsx_piece p = {0, 0, 0, 0};
  for (uint32_t i = s0; i < s1; i++)
    if (a->pieces[a->own[i]].file == (uint32_t)f && k-- == 0) p = a->pieces[a->own[i]];
  const uint64_t page = a->page, G = GPUFS_DIRTY_GRAIN;
  uint64_t o = p.lo + fsx_below(&c->rng, p.hi - p.lo);
  uint32_t how = (uint32_t)fsx_below(&c->rng, 16);
  uint64_t end = (uint64_t)c->lo[f];
  if (how < 3 && end + page > p.lo && end < p.hi + page) {
    /* around the end of the file as the group knows it */
    uint64_t back = fsx_below(&c->rng, 2 * page);
    o = end + page > back ? end + page - back : 0;
    if (o < p.lo) o = p.lo;
    if (o >= p.hi) o = p.hi - 1;
  } else if (how < 6 && o / G * G >= p.lo) {
    o = o / G * G;
  } else if (how < 8 && o / page * page >= p.lo) {
    o = o / page * page;
  }
  uint64_t m = p.hi - o;
  if (m > maxlen) m = maxlen;
  if (inpage && m > page - o % page) m = page - o % page;
  uint32_t sz = (uint32_t)fsx_below(&c->rng, 10);
  uint64_t cap = sz < 4 ? 128 : sz < 7 ? page : m;
  if (cap > m) cap = m;
  *off = o;
  *len = 1 + fsx_below(&c->rng, cap);
  return true;
}

__device__ void fsx_zero_shadow(fsx_ctx *c, int f, uint64_t lo, uint64_t hi)
{
  uint8_t *s = c->a->shadow + (uint64_t)f * c->a->arena;
  for (uint64_t i = lo + c->g.rank; i < hi; i += c->g.size) s[i] = 0;
  fsx_sync(&c->g);
}

__device__ bool fsx_mapped(const fsx_ctx *c, int f)
{
  for (int i = 0; i < c->nmaps; i++)
    if (c->maps[i].file == f) return true;
  return false;
}

/* The first i < n where got[i] differs from the shadow of file f at off + i,
 * or ~0.  Synchronizes the group (before and after). */
static __device__ uint64_t fsx_diff(fsx_ctx *c, const uint8_t *got, int f, uint64_t off, uint64_t n)
{
  const uint8_t *s = c->a->shadow + (uint64_t)f * c->a->arena + off;
  /* got may be a frame of the cache that other groups (the page's load, a
   * gwrite of the neighbouring bytes) wrote: the fence orders the loads
   * below after what the call that returned it observed */
  __threadfence();
  fsx_sync(&c->g);
  uint64_t first = ~0ull;
  for (uint64_t i = c->g.rank; i < n; i += c->g.size)
    if (got[i] != s[i]) {
      first = i;
      break;
    }
  return fsx_min(&c->g, first);
}

static __device__ bool fsx_fail_byte(fsx_ctx *c, const fsx_call *k, int64_t ret, const uint8_t *got,
                                     uint64_t i)
{
  const uint8_t *s = c->a->shadow + (uint64_t)k->file * c->a->arena + (uint64_t)k->off;
  return fsx_fail(c, k, FSX_WHY_BYTE, ret, k->len, k->len, k->off + (int64_t)i, s[i], got[i]);
}

/* A size file f has for certain; every thread; synchronizes. */
static __device__ int64_t fsx_size_lo(fsx_ctx *c, int f)
{
  if (c->a->mode == FSX_MODE_SERIAL) return c->lo[f];
  unsigned long long v = 0;
  /* acquire: pairs with the release in fsx_commit, so a gwrite another
   * group finished before this load happened before the call that follows
   * (bcast orders the call after it in every thread) */
  if (c->g.rank == 0) v = fsx_dev_u64(c->a->committed[f]).load(cuda::memory_order_acquire);
  int64_t w = fsx_bcast(&c->g, (int64_t)v);
  if (w > c->lo[f]) c->lo[f] = w;
  return c->lo[f];
}

/* A size file f cannot exceed after the call just made; every thread;
 * synchronizes. */
static __device__ int64_t fsx_size_hi(fsx_ctx *c, int f)
{
  if (c->a->mode == FSX_MODE_SERIAL) return c->lo[f];
  /* pairs with the fence in fsx_announce: a size the call saw grown by a
   * gwrite implies that writer's intent is seen by the load below */
  __threadfence();
  fsx_sync(&c->g);
  unsigned long long v = 0;
  if (c->g.rank == 0) v = fsx_dev_u64(c->a->intent[f]).load(cuda::memory_order_relaxed);
  int64_t w = fsx_bcast(&c->g, (int64_t)v);
  int64_t s0 = c->a->size0[f];
  return w > s0 ? w : s0;
}

/* Before a gwrite that may grow file f to `end`.  Synchronizes. */
static __device__ void fsx_announce(fsx_ctx *c, int f, uint64_t end)
{
  if (c->a->mode == FSX_MODE_SERIAL) return;
  /* relaxed: ordered before the gwrite by the fence below, which every
   * thread (the library's meta lanes among them) executes after the
   * barrier; pairs with the fence in fsx_size_hi */
  if (c->g.rank == 0) fsx_dev_u64(c->a->intent[f]).fetch_max(end, cuda::memory_order_relaxed);
  fsx_sync(&c->g);
  __threadfence();
}

/* After a gwrite that returned, file f being at least `end` long.
 * Synchronizes. */
static __device__ void fsx_commit(fsx_ctx *c, int f, uint64_t end)
{
  if ((int64_t)end > c->lo[f]) c->lo[f] = (int64_t)end;
  if (c->a->mode == FSX_MODE_SERIAL) {
    fsx_sync(&c->g);
    return;
  }
  /* the library's size update (by any thread of the group) is ordered
   * before the release below by this fence and the barrier */
  __threadfence();
  fsx_sync(&c->g);
  /* release: pairs with the acquire in fsx_size_lo */
  if (c->g.rank == 0) fsx_dev_u64(c->a->committed[f]).fetch_max(end, cuda::memory_order_release);
  fsx_sync(&c->g);
}

static __device__ uint64_t fsx_gen(const fsx_ctx *c)
{
  return fsx_seed3(c->a->seed, c->a->kernel, c->g.slot, c->op);
}

__device__ bool fsx_op_read(fsx_ctx *c, int e)
{
  fsx_fdent d = fsx_ent(c, e);
  uint64_t off, len;
  if (!fsx_pick_range(c, d.file, FSX_MAX_IO, false, &off, &len)) return true;
  fsx_call k = {FSX_READ, d.file, d.name, d.flags, d.fd, (int64_t)off, (int64_t)len};
  const int64_t lo = fsx_size_lo(c, d.file);
  fsx_count(c, FSX_READ);
  ssize_t n = fsx_gread(&c->g, d.fd, (int64_t)off, len, c->buf);
  if (d.acc == FSX_WO)
    return n == -GPUFS_EBADF || fsx_fail(c, &k, FSX_WHY_RET, n, -GPUFS_EBADF, -GPUFS_EBADF, -1, 0, 0);
  if (n < 0) return fsx_fail(c, &k, FSX_WHY_RET, n, 0, (int64_t)len, -1, 0, 0);
  const int64_t hi = fsx_size_hi(c, d.file);
  int64_t want_lo = lo - (int64_t)off, want_hi = hi - (int64_t)off;
  want_lo = want_lo < 0 ? 0 : want_lo > (int64_t)len ? (int64_t)len : want_lo;
  want_hi = want_hi < 0 ? 0 : want_hi > (int64_t)len ? (int64_t)len : want_hi;
  if (n < want_lo || n > want_hi) return fsx_fail(c, &k, FSX_WHY_COUNT, n, want_lo, want_hi, -1, 0, 0);
  uint64_t i = fsx_diff(c, c->buf, d.file, off, (uint64_t)n);
  if (i != ~0ull) return fsx_fail_byte(c, &k, n, c->buf, i);
  /* bytes returned are the file's: it is at least that long (n 0 says nothing) */
  if (n > 0 && (int64_t)off + n > c->lo[d.file]) c->lo[d.file] = (int64_t)off + n;
  return true;
}

__device__ bool fsx_op_write(fsx_ctx *c, int e)
{
  fsx_fdent d = fsx_ent(c, e);
  uint64_t off, len;
  if (!fsx_pick_range(c, d.file, FSX_MAX_IO, false, &off, &len)) return true;
  fsx_call k = {FSX_WRITE, d.file, d.name, d.flags, d.fd, (int64_t)off, (int64_t)len};
  const uint64_t gen = fsx_gen(c);
  for (uint64_t i = c->g.rank; i < len; i += c->g.size) c->buf[i] = fsx_byte(gen, off + i);
  const bool ok = d.acc != FSX_RO;
  if (ok) fsx_announce(c, d.file, off + len);
  fsx_sync(&c->g); /* the buffer is filled before any thread enters gwrite */
  fsx_count(c, FSX_WRITE);
  ssize_t n = fsx_gwrite(&c->g, d.fd, (int64_t)off, len, c->buf);
  if (!ok)
    return n == -GPUFS_EBADF || fsx_fail(c, &k, FSX_WHY_RET, n, -GPUFS_EBADF, -GPUFS_EBADF, -1, 0, 0);
  if (n != (ssize_t)len) return fsx_fail(c, &k, FSX_WHY_RET, n, (int64_t)len, (int64_t)len, -1, 0, 0);
  uint8_t *s = c->a->shadow + (uint64_t)d.file * c->a->arena + off;
  for (uint64_t i = c->g.rank; i < len; i += c->g.size) s[i] = c->buf[i];
  fsx_commit(c, d.file, off + len);
  return true;
}

/* Store a new generation through writable mapping m into its bytes the
 * file has for certain (stores past the end of the file are never
 * written back), and into the shadow.  Synchronizes. */
static __device__ void fsx_store(fsx_ctx *c, const fsx_map *m)
{
  const int64_t lo = fsx_size_lo(c, m->file);
  uint64_t end = m->off + m->len;
  if ((int64_t)end > lo) end = lo > (int64_t)m->off ? (uint64_t)lo : m->off;
  const uint64_t gen = fsx_gen(c);
  uint8_t *s = c->a->shadow + (uint64_t)m->file * c->a->arena + m->off;
  for (uint64_t i = c->g.rank; i < end - m->off; i += c->g.size) {
    uint8_t b = fsx_byte(gen, m->off + i);
    m->p[i] = b;
    s[i] = b;
  }
  /* the stores are visible GPU-wide before gmsync / gmunmap marks them */
  __threadfence();
  fsx_sync(&c->g);
}

__device__ bool fsx_op_mmap(fsx_ctx *c, int e)
{
  fsx_fdent d = fsx_ent(c, e);
  uint64_t off, len;
  if (!fsx_pick_range(c, d.file, FSX_MAX_IO, true, &off, &len)) return true;
  const bool writable = d.acc == FSX_RW && fsx_chance(&c->rng, 1, 2);
  int prot = GPUFS_PROT_READ | (writable ? GPUFS_PROT_WRITE : 0);
  int flags = !writable && fsx_chance(&c->rng, 1, 3) ? GPUFS_MAP_PRIVATE : GPUFS_MAP_SHARED;
  if (d.acc == FSX_RO && fsx_chance(&c->rng, 1, 16)) prot |= GPUFS_PROT_WRITE; /* -EACCES */
  const bool refused = d.acc == FSX_WO || ((prot & GPUFS_PROT_WRITE) && d.acc != FSX_RW);
  /* mappings are told apart by (address, size): a read-only one with the
   * key of a kept writable one would end that one at its gmunmap */
  for (int i = 0; i < c->nmaps; i++)
    if (!refused && c->maps[i].file == d.file && c->maps[i].off == off && c->maps[i].len == len &&
        c->maps[i].writable != writable)
      return true;
  fsx_call k = {FSX_MMAP, d.file, d.name, d.flags, d.fd, (int64_t)off, (int64_t)len};
  const int64_t lo = fsx_size_lo(c, d.file);
  fsx_count(c, FSX_MMAP);
  void *p = fsx_gmmap(&c->g, len, prot, flags, d.fd, (int64_t)off);
  int err = GPUFS_MAP_FAILED(p) ? GPUFS_MAP_ERRNO(p) : 0;
  if (refused)
    return err == -GPUFS_EACCES || fsx_fail(c, &k, FSX_WHY_RET, err, -GPUFS_EACCES, -GPUFS_EACCES, -1, 0, 0);
  const int64_t hi = fsx_size_hi(c, d.file);
  /* -ENXIO: at or past the end, which other groups may not have grown yet */
  if (err == -GPUFS_ENXIO && (int64_t)off >= lo) return true;
  if (err) return fsx_fail(c, &k, FSX_WHY_RET, err, 0, 0, -1, 0, 0);
  if ((int64_t)off >= hi) return fsx_fail(c, &k, FSX_WHY_RET, 0, -GPUFS_ENXIO, -GPUFS_ENXIO, -1, 0, 0);
  fsx_map m = {(uint8_t *)p, off, (uint32_t)len, d.file, d.name, flags, d.fd, writable};
  uint64_t i = fsx_diff(c, m.p, d.file, off, len);
  if (i != ~0ull) return fsx_fail_byte(c, &k, (int64_t)len, m.p, i); /* "returned": the bytes mapped */
  if (writable) fsx_store(c, &m);
  if (c->nmaps < FSX_MAXMAP && fsx_chance(&c->rng, 1, 2)) {
    c->maps[c->nmaps++] = m;
    return true;
  }
  k.kind = FSX_MUNMAP;
  fsx_count(c, FSX_MUNMAP);
  int r = fsx_gmunmap(&c->g, m.p, m.len);
  return r == 0 || fsx_fail(c, &k, FSX_WHY_RET, r, 0, 0, -1, 0, 0);
}

/* A kept writable mapping still shows the shadow (its descriptor is held
 * open by it, so nothing can make its page stale).  Read-only kept
 * mappings are checked when made only: with no descriptor of the file left
 * open, a reopen may give the file new pages while the mapping keeps the
 * old frame. */
static __device__ bool fsx_recheck(fsx_ctx *c, const fsx_map *m, fsx_call *k)
{
  if (!m->writable) return true;
  uint64_t i = fsx_diff(c, m->p, m->file, m->off, m->len);
  return i == ~0ull || fsx_fail_byte(c, k, (int64_t)m->len, m->p, i);
}

__device__ bool fsx_op_msync(fsx_ctx *c, int mi)
{
  fsx_map m = c->maps[mi];
  fsx_call k = {FSX_MSYNC, m.file, m.name, m.flags, m.fd, (int64_t)m.off, (int64_t)m.len};
  if (!fsx_recheck(c, &m, &k)) return false;
  if (m.writable && fsx_chance(&c->rng, 1, 2)) fsx_store(c, &m);
  int fl = fsx_chance(&c->rng, 1, 2) ? GPUFS_MS_SYNC : GPUFS_MS_ASYNC;
  if (fsx_chance(&c->rng, 1, 4)) fl |= GPUFS_MS_INVALIDATE;
  fsx_count(c, FSX_MSYNC);
  int r = fsx_gmsync(&c->g, m.p, m.len, fl);
  return r == 0 || fsx_fail(c, &k, FSX_WHY_RET, r, 0, 0, -1, 0, 0);
}

__device__ bool fsx_op_munmap(fsx_ctx *c, int mi)
{
  fsx_map m = c->maps[mi];
  fsx_call k = {FSX_MUNMAP, m.file, m.name, m.flags, m.fd, (int64_t)m.off, (int64_t)m.len};
  if (!fsx_recheck(c, &m, &k)) return false;
  if (m.writable && fsx_chance(&c->rng, 1, 3)) fsx_store(c, &m);
  c->maps[mi] = c->maps[--c->nmaps];
  fsx_count(c, FSX_MUNMAP);
  int r = fsx_gmunmap(&c->g, m.p, m.len);
  return r == 0 || fsx_fail(c, &k, FSX_WHY_RET, r, 0, 0, -1, 0, 0);
}

__device__ bool fsx_op_fstat(fsx_ctx *c, int e)
{
  fsx_fdent d = fsx_ent(c, e);
  fsx_call k = {FSX_FSTAT, d.file, d.name, d.flags, d.fd, 0, 0};
  const int64_t lo = fsx_size_lo(c, d.file);
  fsx_count(c, FSX_FSTAT);
  struct gstat st; /* every thread gets the fields in its own */
  int r = fsx_gfstat(&c->g, d.fd, &st);
  if (r != 0) return fsx_fail(c, &k, FSX_WHY_RET, r, 0, 0, -1, 0, 0);
  const int64_t hi = fsx_size_hi(c, d.file);
  if (st.st_size < lo || st.st_size > hi) return fsx_fail(c, &k, FSX_WHY_SIZE, st.st_size, lo, hi, -1, 0, 0);
  if (st.st_ino != c->a->ino[d.file])
    return fsx_fail(c, &k, FSX_WHY_INO, (int64_t)st.st_ino, (int64_t)c->a->ino[d.file],
                    (int64_t)c->a->ino[d.file], -1, 0, 0);
  return true;
}
