/*
 * program.cu - a group's random program and the kernel that runs one per
 * group: gopen / gclose / gfsync / gftruncate here, the data operations in
 * ops.cu.
 *
 * A group makes fsx_kargs.ops random operations, then unmaps what it keeps
 * mapped and closes what it opened (in a random order of the two: a
 * writable mapping may outlive its descriptor's gclose).  A block is one
 * group (block-level calls) or eight (each warp with *_warp calls), as
 * fsx_kargs.block_warp says; the host chose and knows the slots.
 */
#include <cuda/atomic>

#include "tests/fsx/ops.cuh"

static __device__ const char *fsx_path(const struct fsx_kargs *a, int f, int name)
{
  return a->paths + ((size_t)f * FSX_NAMES + (size_t)name) * FSX_PATH;
}

/* gclose the group's descriptor i (not a borrowed one). */
static __device__ bool fsx_close_ent(fsx_ctx *c, int i)
{
  fsx_fdent d = c->fds[i];
  c->fds[i] = c->fds[--c->nfds];
  fsx_call k = {FSX_CLOSE, d.file, d.name, d.flags, d.fd, 0, 0};
  fsx_count(c, FSX_CLOSE);
  int r = fsx_gclose(&c->g, d.fd);
  return r == 0 || fsx_fail(c, &k, FSX_WHY_RET, r, 0, 0, -1, 0, 0);
}

/* Open a random name of a random file with random flags, or again the
 * path and flags of the group's newest descriptor, which must join it
 * (FSX_MODE_HELD: one of the held names with its flags, which must join
 * the held descriptor).  FSX_MODE_SERIAL also opens with O_TRUNC (the file becomes
 * empty for every descriptor, its dirty bytes dropped), and now and then
 * O_RDONLY|O_TRUNC (-EINVAL).  The group holds fewer than FSX_MAXFD. */
static __device__ bool fsx_op_open(fsx_ctx *c)
{
  const struct fsx_kargs *a = c->a;
  int f, name, flags, want_fd = -1;
  bool trunc = false, bad = false;
  if (a->mode == FSX_MODE_HELD) {
    int j = (int)fsx_below(&c->rng, (uint64_t)a->nfiles * FSX_HELD);
    struct fsx_held h = a->held[j];
    f = j / FSX_HELD;
    name = h.name;
    flags = h.flags;
    want_fd = h.fd;
  } else if (c->nfds > 0 && fsx_chance(&c->rng, 1, 4) &&
             (!(c->fds[c->nfds - 1].flags & GPUFS_O_TRUNC) || !fsx_mapped(c, c->fds[c->nfds - 1].file))) {
    /* the path and flags of one the group holds: the open joins it (and
     * with O_TRUNC truncates again, as open(2)) */
    const fsx_fdent &h = c->fds[c->nfds - 1];
    f = h.file;
    name = h.name;
    flags = h.flags;
    want_fd = h.fd;
    trunc = (flags & GPUFS_O_TRUNC) != 0;
  } else {
    f = (int)fsx_below(&c->rng, a->nfiles);
    name = (int)fsx_below(&c->rng, FSX_NAMES);
    uint32_t r = (uint32_t)fsx_below(&c->rng, 10);
    int acc = r < 5 ? FSX_RW : r < 8 ? FSX_RO : FSX_WO;
    flags = acc | (fsx_chance(&c->rng, 1, 4) ? GPUFS_O_CREAT : 0);
    if (a->mode == FSX_MODE_SERIAL && !fsx_mapped(c, f)) {
      if (acc != FSX_RO && fsx_chance(&c->rng, 1, 6)) trunc = true;
      else if (acc == FSX_RO && fsx_chance(&c->rng, 1, 16)) bad = true;
      if (trunc || bad) flags |= GPUFS_O_TRUNC;
    }
  }
  fsx_call k = {FSX_OPEN, f, name, flags, -1, 0, 0};
  fsx_count(c, FSX_OPEN);
  int fd = fsx_gopen(&c->g, fsx_path(a, f, name), flags);
  if (bad) {
    if (fd == -GPUFS_EINVAL) return true;
    return fsx_fail(c, &k, FSX_WHY_RET, fd, -GPUFS_EINVAL, -GPUFS_EINVAL, -1, 0, 0);
  }
  if (fd < 0 || (want_fd >= 0 && fd != want_fd))
    return fsx_fail(c, &k, FSX_WHY_RET, fd, want_fd >= 0 ? want_fd : 0, want_fd >= 0 ? want_fd : 1 << 30, -1,
                    0, 0);
  if (trunc) {
    fsx_zero_shadow(c, f, 0, (uint64_t)c->lo[f]);
    c->lo[f] = 0;
  }
  fsx_fdent e = {fd, f, name, flags & 3, flags, false};
  c->fds[c->nfds++] = e;
  return true;
}

static __device__ bool fsx_op_fsync(fsx_ctx *c, int e)
{
  fsx_fdent d = fsx_ent(c, e);
  fsx_call k = {FSX_FSYNC, d.file, d.name, d.flags, d.fd, 0, 0};
  fsx_count(c, FSX_FSYNC);
  int r = fsx_gfsync(&c->g, d.fd);
  return r == 0 || fsx_fail(c, &k, FSX_WHY_RET, r, 0, 0, -1, 0, 0);
}

/* FSX_MODE_SERIAL only (gftruncate must not race gwrite of the file):
 * shrink, grow or keep the size through any writable name; a read-only
 * one is -EINVAL.  A file the group keeps mapped is unmapped first. */
static __device__ bool fsx_op_ftruncate(fsx_ctx *c, int e)
{
  fsx_fdent d = fsx_ent(c, e);
  for (int i = 0; i < c->nmaps; i++)
    if (c->maps[i].file == d.file) return fsx_op_munmap(c, i);
  const uint64_t arena = c->a->arena, page = c->a->page, cur = (uint64_t)c->lo[d.file];
  uint64_t len;
  switch (fsx_below(&c->rng, 8)) {
  case 0: len = 0; break;
  case 1:
  case 2: len = fsx_below(&c->rng, cur + 1); break;
  case 3:
  case 4: len = cur + fsx_below(&c->rng, arena - cur + 1); break;
  case 5: len = fsx_below(&c->rng, arena / page + 1) * page; break;
  case 6: len = cur; break;
  default: len = cur + fsx_below(&c->rng, page); break;
  }
  if (len > arena) len = arena;
  fsx_call k = {FSX_FTRUNCATE, d.file, d.name, d.flags, d.fd, (int64_t)len, 0};
  fsx_count(c, FSX_FTRUNCATE);
  int r = fsx_gftruncate(&c->g, d.fd, (int64_t)len);
  if (d.acc == FSX_RO)
    return r == -GPUFS_EINVAL || fsx_fail(c, &k, FSX_WHY_RET, r, -GPUFS_EINVAL, -GPUFS_EINVAL, -1, 0, 0);
  if (r != 0) return fsx_fail(c, &k, FSX_WHY_RET, r, 0, 0, -1, 0, 0);
  if (len < cur) fsx_zero_shadow(c, d.file, len, cur);
  c->lo[d.file] = (int64_t)len;
  return true;
}

/* One random operation.  An operation that needs a descriptor the group
 * does not have opens one instead; one that needs a kept mapping makes
 * one; an open with every slot taken closes, a close with none opens. */
static __device__ bool fsx_step_random(fsx_ctx *c)
{
  enum { R, W, MAP, MSYNC, MUNMAP, FSYNC, FSTAT, OPEN, CLOSE, TRUNC, NOPS };
  const uint32_t w[NOPS] = {26, 26, 10, 4, 5, 3, 3, 12, 10, c->a->mode == FSX_MODE_SERIAL ? 6u : 0u};
  uint32_t total = 0;
  for (int i = 0; i < NOPS; i++) total += w[i];
  uint32_t r = (uint32_t)fsx_below(&c->rng, total), op = 0;
  while (r >= w[op]) r -= w[op++];
  if ((op == MSYNC || op == MUNMAP) && c->nmaps == 0) op = MAP;
  if (op == CLOSE && c->nfds == 0) op = OPEN;
  if (op == OPEN && c->nfds == FSX_MAXFD) op = CLOSE;
  int e = -1;
  if (op == R || op == MAP) e = fsx_pick_fd(c, FSX_NEED_READ);
  else if (op == W || op == TRUNC) e = fsx_pick_fd(c, FSX_NEED_WRITE);
  else if (op == FSYNC || op == FSTAT) e = fsx_pick_fd(c, FSX_NEED_ANY);
  if (e < 0 && op != MSYNC && op != MUNMAP && op != OPEN && op != CLOSE)
    op = c->nfds == FSX_MAXFD ? CLOSE : OPEN;
  switch (op) {
  case R: return fsx_op_read(c, e);
  case W: return fsx_op_write(c, e);
  case MAP: return fsx_op_mmap(c, e);
  case MSYNC: return fsx_op_msync(c, (int)fsx_below(&c->rng, c->nmaps));
  case MUNMAP: return fsx_op_munmap(c, (int)fsx_below(&c->rng, c->nmaps));
  case FSYNC: return fsx_op_fsync(c, e);
  case FSTAT: return fsx_op_fstat(c, e);
  case OPEN: return fsx_op_open(c);
  case CLOSE: return fsx_close_ent(c, (int)fsx_below(&c->rng, (uint64_t)c->nfds));
  default: return fsx_op_ftruncate(c, e);
  }
}

/* Unmap what the group keeps and close what it opened, in a random order
 * of the two. */
static __device__ bool fsx_cleanup(fsx_ctx *c)
{
  const bool unmap_first = fsx_chance(&c->rng, 1, 2);
  for (int pass = 0; pass < 2; pass++) {
    if ((pass == 0) == unmap_first) {
      while (c->nmaps > 0) {
        if (!fsx_op_munmap(c, c->nmaps - 1)) return false;
        c->op++;
      }
    } else {
      while (c->nfds > 0) {
        if (!fsx_close_ent(c, c->nfds - 1)) return false;
        c->op++;
      }
    }
  }
  return true;
}

__global__ void __launch_bounds__(FSX_THREADS, 2) fsx_kernel(struct fsx_kargs a)
{
  __shared__ unsigned long long sh[FSX_WARPS];
  fsx_ctx c;
  const uint32_t w = threadIdx.x / 32;
  c.a = &a;
  c.g.warp = a.block_warp[blockIdx.x] != 0;
  c.g.rank = c.g.warp ? threadIdx.x % 32 : threadIdx.x;
  c.g.size = c.g.warp ? 32 : blockDim.x;
  c.g.slot = fsx_slot(blockIdx.x, c.g.warp ? w : 0);
  c.g.sh = &sh[c.g.warp ? w : 0];
  c.rng = fsx_seed3(a.seed, a.kernel, c.g.slot, 0xf5);
  c.op = 0;
  c.nfds = 0;
  c.nmaps = 0;
  for (uint32_t f = 0; f < a.nfiles; f++) c.lo[f] = a.size0[f];
  c.buf = a.bufs + (size_t)c.g.slot * FSX_MAX_IO;
  c.counts = a.counts + (size_t)c.g.slot * FSX_NKINDS;
  typedef cuda::atomic_ref<uint32_t, cuda::thread_scope_system> sys_u32;
  if (c.g.rank == 0) {
    /* relaxed: read by the watchdog only */
    sys_u32(a.progress[c.g.slot].kernel).store(a.kernel, cuda::memory_order_relaxed);
    sys_u32(a.progress[c.g.slot].active).store(1u, cuda::memory_order_relaxed);
  }
  bool ok = true;
  for (uint32_t i = 0; ok && i < a.ops; i++, c.op++) ok = !fsx_stopped(&c) && fsx_step_random(&c);
  if (ok) ok = fsx_cleanup(&c);
  if (ok && a.mode == FSX_MODE_SERIAL && c.g.rank == 0)
    for (uint32_t f = 0; f < a.nfiles; f++) a.size_out[f] = c.lo[f];
  if (c.g.rank == 0) sys_u32(a.progress[c.g.slot].active).store(0u, cuda::memory_order_relaxed);
}

cudaError_t fsx_launch(const struct fsx_kargs *a, unsigned blocks, unsigned threads)
{
  fsx_kernel<<<blocks, threads>>>(*a);
  return cudaGetLastError();
}
