/*
 * run.cu - one run of the exerciser: set-up (files under four names, the
 * device memory, libgpufs with a small cache, the watchdog), the loop of
 * epochs until enough calls were made, the random kernels and their plans,
 * the comparison of host files with the shadow, and the report.
 *
 * Order of host and device: every kernel is waited for (cudaDeviceSynchronize
 * under the watchdog) before the host reads its counters, failure record,
 * shadow or sizes, and the shadow is copied up before every kernel that
 * reads it, so the host shadow is the model between kernels and the
 * device shadow during one.
 */
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include <algorithm>

#include "include/gpufs.cuh"
#include "tests/fsx/hostfile.h"
#include "tests/fsx/run.h"

static const char *const fsx_kind_names[FSX_NKINDS] = {
    "gopen", "gclose", "gread", "gwrite", "gmmap", "gmunmap", "gmsync", "gfsync", "gftruncate", "gfstat"};

const char *fsx_kind_name(int kind)
{
  return kind >= 0 && kind < FSX_NKINDS ? fsx_kind_names[kind] : "?";
}

void fsx_opts_default(struct fsx_opts *o)
{
  memset(o, 0, sizeof *o);
  o->ops = 10000000;
  o->seed = 14;
  o->files = 4;
  o->blocks = 12;
  o->ops_per_group = 300;
  o->file_size = 2u << 20;
  o->page_size = 4096;
  o->cache_size = 4u << 20;
  o->kernel_timeout_s = 120;
}

/* Frames a group may pin at once: its kept mappings and one round. */
#define FSX_FRAMES_PER_SLOT (FSX_MAXMAP + 4)

/* The cache every group slot needs at once. */
static uint64_t fsx_cache_needed(const struct fsx_opts *o)
{
  return (uint64_t)FSX_FRAMES_PER_SLOT * o->blocks * FSX_WARPS * o->page_size;
}

int fsx_opts_check(const struct fsx_opts *o, char *err, size_t len)
{
  if (o->files < 1 || o->files > FSX_MAX_FILES)
    snprintf(err, len, "--files %u: 1 to %d", o->files, FSX_MAX_FILES);
  else if (o->blocks < 1 || o->ops_per_group < 1)
    snprintf(err, len, "--blocks and --ops-per-group: at least 1");
  else if (o->page_size < 4096)
    snprintf(err, len, "--page %u: at least 4K", o->page_size);
  else if (o->file_size < 4ull * o->page_size)
    snprintf(err, len, "--file-size %llu: at least 4 pages of %u bytes", (unsigned long long)o->file_size,
             o->page_size);
  else if (o->cache_size < fsx_cache_needed(o))
    snprintf(err, len, "--cache %llu: at least %llu bytes for %u blocks (%u pages a group slot)",
             (unsigned long long)o->cache_size, (unsigned long long)fsx_cache_needed(o), o->blocks,
             (unsigned)FSX_FRAMES_PER_SLOT);
  else
    return 0;
  return -EINVAL;
}

int fsx_failf(struct fsx_state *st, const char *fmt, ...)
{
  if (st->r->failed) return 1;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(st->r->what, sizeof st->r->what, fmt, ap);
  va_end(ap);
  st->r->failed = 1;
  return 1;
}

static const char *fsx_mode_name(int mode)
{
  return mode == FSX_MODE_SHARED ? "shared" : mode == FSX_MODE_SERIAL ? "serial" : "held";
}

/* The watchdog's report: what every group of the hung kernel was doing. */
static void fsx_dump(void *arg)
{
  struct fsx_state *st = (struct fsx_state *)arg;
  for (uint32_t s = 0; s < st->slots; s++) {
    struct fsx_progress *p = &st->d.progress[s];
    if (!__atomic_load_n(&p->active, __ATOMIC_RELAXED)) continue;
    fprintf(stderr, "  group slot %u (block %u, warp %u): kernel %u, op #%u, last call %s\n", s,
            s / FSX_WARPS, s % FSX_WARPS, __atomic_load_n(&p->kernel, __ATOMIC_RELAXED),
            __atomic_load_n(&p->op, __ATOMIC_RELAXED),
            fsx_kind_name((int)__atomic_load_n(&p->kind, __ATOMIC_RELAXED)));
  }
}

int fsx_wait(struct fsx_state *st, cudaError_t launch, const char *what)
{
  if (launch != cudaSuccess) return fsx_failf(st, "%s: launch: %s", what, cudaGetErrorString(launch));
  fsx_watch_arm(st->o.kernel_timeout_s, what);
  cudaError_t e = cudaDeviceSynchronize();
  fsx_watch_disarm();
  st->r->kernels++;
  if (e != cudaSuccess) return fsx_failf(st, "%s: %s", what, cudaGetErrorString(e));
  return 0;
}

int fsx_upload(struct fsx_state *st)
{
  const size_t n = st->shadow.size();
  cudaError_t e = cudaMemcpy(st->d.shadow, st->shadow.data(), n, cudaMemcpyHostToDevice);
  if (e == cudaSuccess)
    e = cudaMemcpy(st->d.size0, st->size, st->o.files * sizeof(int64_t), cudaMemcpyHostToDevice);
  return e == cudaSuccess ? 0 : fsx_failf(st, "shadow upload: %s", cudaGetErrorString(e));
}

int fsx_download_shadow(struct fsx_state *st)
{
  cudaError_t e = cudaMemcpy(st->shadow.data(), st->d.shadow, st->shadow.size(), cudaMemcpyDeviceToHost);
  return e == cudaSuccess ? 0 : fsx_failf(st, "shadow download: %s", cudaGetErrorString(e));
}

/* Cut [0, arena) of every file into 2 pieces per active slot (random
 * boundaries, a quarter of them on grain boundaries) and give each active
 * slot two of them, in random places. */
static void fsx_plan_pieces(struct fsx_state *st, const std::vector<uint32_t> &active)
{
  const uint64_t arena = st->o.file_size, G = GPUFS_DIRTY_GRAIN;
  st->pieces.clear();
  for (uint32_t f = 0; f < st->o.files; f++) {
    const size_t np = 2 * active.size();
    std::vector<uint64_t> cut;
    for (size_t i = 1; i < np; i++) {
      uint64_t x = 1 + fsx_below(&st->rng, arena - 1);
      if (fsx_chance(&st->rng, 1, 4) && x / G * G > 0) x = x / G * G;
      cut.push_back(x);
    }
    cut.push_back(0);
    cut.push_back(arena);
    std::sort(cut.begin(), cut.end());
    cut.erase(std::unique(cut.begin(), cut.end()), cut.end());
    std::vector<uint32_t> owners;
    for (uint32_t s : active) owners.insert(owners.end(), 2, s);
    for (size_t i = owners.size(); i > 1; i--) std::swap(owners[i - 1], owners[fsx_below(&st->rng, i)]);
    for (size_t i = 0; i + 1 < cut.size(); i++)
      st->pieces.push_back(fsx_piece{cut[i], cut[i + 1], f, owners[i % owners.size()]});
  }
}

int fsx_random_kernel(struct fsx_state *st, int mode)
{
  const struct fsx_opts *o = &st->o;
  unsigned blocks = o->blocks, threads = FSX_THREADS;
  std::vector<uint8_t> bw(blocks);
  std::vector<uint32_t> active;
  if (mode == FSX_MODE_SERIAL) {
    /* one group: a warp, or a block of 64, 128 or 256 threads */
    blocks = 1;
    bw.assign(1, fsx_chance(&st->rng, 1, 2));
    threads = bw[0] ? 32 : 64u << fsx_below(&st->rng, 3);
    active.push_back(0);
    st->pieces.clear();
    for (uint32_t f = 0; f < o->files; f++) st->pieces.push_back(fsx_piece{0, o->file_size, f, 0});
  } else {
    for (unsigned b = 0; b < blocks; b++) {
      bw[b] = fsx_chance(&st->rng, 1, 2);
      for (uint32_t w = 0; w < (bw[b] ? FSX_WARPS : 1u); w++) active.push_back(fsx_slot(b, w));
    }
    fsx_plan_pieces(st, active);
  }
  /* pieces by owner: own[own_start[s] .. own_start[s+1]) */
  std::vector<uint32_t> start(st->slots + 1, 0), own(st->pieces.size());
  for (const fsx_piece &p : st->pieces) start[p.slot + 1]++;
  for (uint32_t s = 0; s < st->slots; s++) start[s + 1] += start[s];
  std::vector<uint32_t> fill(start.begin(), start.end() - 1);
  for (uint32_t i = 0; i < st->pieces.size(); i++) own[fill[st->pieces[i].slot]++] = i;
  st->plan_kernel = st->kernel;

  const size_t nk = (size_t)st->slots * FSX_NKINDS;
  cudaError_t e = cudaMemcpy(st->d.block_warp, bw.data(), bw.size(), cudaMemcpyHostToDevice);
  if (e == cudaSuccess)
    e = cudaMemcpy(st->d.own_start, start.data(), start.size() * sizeof(uint32_t), cudaMemcpyHostToDevice);
  if (e == cudaSuccess)
    e = cudaMemcpy(st->d.own, own.data(), own.size() * sizeof(uint32_t), cudaMemcpyHostToDevice);
  if (e == cudaSuccess)
    e = cudaMemcpy(st->d.pieces, st->pieces.data(), st->pieces.size() * sizeof(fsx_piece),
                   cudaMemcpyHostToDevice);
  if (e == cudaSuccess) e = cudaMemset(st->d.intent, 0, o->files * sizeof(unsigned long long));
  if (e == cudaSuccess) e = cudaMemset(st->d.committed, 0, o->files * sizeof(unsigned long long));
  if (e == cudaSuccess) e = cudaMemset(st->d.counts, 0, nk * sizeof(unsigned long long));
  if (e != cudaSuccess) return fsx_failf(st, "plan upload: %s", cudaGetErrorString(e));
  if (fsx_upload(st)) return 1;

  struct fsx_kargs a;
  memset(&a, 0, sizeof a);
  a.seed = o->seed;
  a.kernel = st->kernel++;
  a.mode = (uint32_t)mode;
  a.nfiles = o->files;
  a.page = o->page_size;
  a.arena = o->file_size;
  a.ops = mode == FSX_MODE_SERIAL ? 4 * o->ops_per_group : o->ops_per_group; /* one group: more calls */
  a.paths = st->d.paths;
  a.ino = st->d.ino;
  a.block_warp = st->d.block_warp;
  a.own_start = st->d.own_start;
  a.own = st->d.own;
  a.pieces = st->d.pieces;
  a.shadow = st->d.shadow;
  a.size0 = st->d.size0;
  a.size_out = st->d.size_out;
  a.intent = st->d.intent;
  a.committed = st->d.committed;
  a.held = st->d.held;
  a.bufs = st->d.bufs;
  a.counts = st->d.counts;
  a.fail = st->d.fail;
  a.failed = st->d.failed;
  a.progress = st->d.progress;
  char what[96];
  snprintf(what, sizeof what, "kernel %u (%s, %u blocks of %u threads)", a.kernel, fsx_mode_name(mode), blocks,
           threads);
  if (fsx_wait(st, fsx_launch(&a, blocks, threads), what)) return 1;

  std::vector<unsigned long long> cnt(nk);
  unsigned int failed = 0;
  e = cudaMemcpy(cnt.data(), st->d.counts, nk * sizeof(unsigned long long), cudaMemcpyDeviceToHost);
  if (e == cudaSuccess) e = cudaMemcpy(&failed, st->d.failed, sizeof failed, cudaMemcpyDeviceToHost);
  if (e != cudaSuccess) return fsx_failf(st, "counters: %s", cudaGetErrorString(e));
  for (size_t i = 0; i < nk; i++) {
    st->r->by_kind[i % FSX_NKINDS] += cnt[i];
    st->r->ops += cnt[i];
  }
  if (failed) {
    struct fsx_fail f;
    if (cudaMemcpy(&f, st->d.fail, sizeof f, cudaMemcpyDeviceToHost) != cudaSuccess)
      return fsx_failf(st, "%s: a group failed; its record could not be read", what);
    static const char *const why[] = {"returned other than the model says", "byte count out of range",
                                      "a byte differs from the shadow", "gfstat size out of range",
                                      "gfstat inode is not the file's"};
    const bool warp = bw[f.slot / FSX_WARPS] != 0;
    char tail[160] = "";
    if (f.why == FSX_WHY_BYTE)
      snprintf(tail, sizeof tail, "; the first differing byte at file offset %lld: want 0x%02x, got 0x%02x",
               (long long)f.at, f.want_byte, f.got_byte);
    return fsx_failf(st,
                     "MISMATCH in kernel %u (%s), group slot %u (block %u, %s), op #%u: %s(fd %d = \"%s\", "
                     "flags 0%o) offset %lld size %lld: %s: returned %lld, want [%lld, %lld]%s",
                     f.kernel, fsx_mode_name(mode), f.slot, f.slot / FSX_WARPS,
                     warp ? "warp-level calls" : "block-level calls", f.op, fsx_kind_name((int)f.kind), f.fd,
                     st->paths[f.file % FSX_MAX_FILES][f.name % FSX_NAMES], (unsigned)f.flags, (long long)f.off,
                     (long long)f.len, why[f.why % 5], (long long)f.ret, (long long)f.want_lo,
                     (long long)f.want_hi, tail);
  }
  if (fsx_download_shadow(st)) return 1;
  if (mode == FSX_MODE_SERIAL) {
    e = cudaMemcpy(st->size, st->d.size_out, o->files * sizeof(int64_t), cudaMemcpyDeviceToHost);
  } else {
    unsigned long long c[FSX_MAX_FILES];
    e = cudaMemcpy(c, st->d.committed, o->files * sizeof(unsigned long long), cudaMemcpyDeviceToHost);
    for (uint32_t f = 0; e == cudaSuccess && f < o->files; f++) st->size[f] = std::max(st->size[f], (int64_t)c[f]);
  }
  return e == cudaSuccess ? 0 : fsx_failf(st, "sizes: %s", cudaGetErrorString(e));
}

int fsx_script_run(struct fsx_state *st, const struct fsx_step *steps, int n, int64_t *res, int64_t *bad,
                   const char *what)
{
  if (n > FSX_STEPS_MAX) return fsx_failf(st, "%s: %d steps", what, n);
  cudaError_t e = cudaMemcpy(st->d.steps, steps, n * sizeof(fsx_step), cudaMemcpyHostToDevice);
  if (e == cudaSuccess) e = cudaMemset(st->d.bad, 0xff, n * sizeof(int64_t));
  if (e != cudaSuccess) return fsx_failf(st, "%s: %s", what, cudaGetErrorString(e));
  struct fsx_script s;
  s.steps = st->d.steps;
  s.n = n;
  s.res = st->d.res;
  s.bad = st->d.bad;
  s.fds = st->d.fds;
  s.ptrs = st->d.ptrs;
  s.paths = st->d.paths;
  s.shadow = st->d.shadow;
  s.arena = st->o.file_size;
  char w[128];
  snprintf(w, sizeof w, "kernel %u (script: %s)", st->kernel++, what);
  if (fsx_wait(st, fsx_launch_script(&s, (int)fsx_chance(&st->rng, 1, 2)), w)) return 1;
  e = cudaMemcpy(res, st->d.res, n * sizeof(int64_t), cudaMemcpyDeviceToHost);
  if (e == cudaSuccess) e = cudaMemcpy(bad, st->d.bad, n * sizeof(int64_t), cudaMemcpyDeviceToHost);
  if (e != cudaSuccess) return fsx_failf(st, "%s: %s", what, cudaGetErrorString(e));
  static const int kind[] = {FSX_OPEN, FSX_CLOSE, FSX_FSYNC, FSX_MMAP, -1, FSX_MSYNC, FSX_MUNMAP};
  for (int i = 0; i < n; i++)
    if (kind[steps[i].op] >= 0) {
      st->r->by_kind[kind[steps[i].op]]++;
      st->r->ops++;
    }
  return 0;
}

int fsx_check_files(struct fsx_state *st, const char *when)
{
  for (uint32_t f = 0; f < st->o.files; f++) {
    struct fsx_diff d;
    const uint8_t *want = st->shadow.data() + (size_t)f * st->o.file_size;
    int rc = fsx_file_compare(st->paths[f][0], want, (uint64_t)st->size[f], &d);
    st->r->file_checks++;
    if (rc < 0) return fsx_failf(st, "%s: %s: %s", when, st->paths[f][0], strerror(-rc));
    if (rc == 0) continue;
    char owner[160] = "";
    for (const fsx_piece &p : st->pieces)
      if (d.at >= 0 && p.file == f && (uint64_t)d.at >= p.lo && (uint64_t)d.at < p.hi)
        snprintf(owner, sizeof owner, "; in kernel %u that offset was group slot %u's piece [%llu, %llu)",
                 st->plan_kernel, p.slot, (unsigned long long)p.lo, (unsigned long long)p.hi);
    return fsx_failf(st,
                     "MISMATCH of the host file %s %s: size %lld (want %lld); first differing byte at "
                     "offset %lld: want 0x%02x, got %d%s",
                     st->paths[f][0], when, (long long)d.size, (long long)st->size[f], (long long)d.at, d.want,
                     d.got, owner);
  }
  return 0;
}

/* ---- set-up ---- */

static int fsx_make_files(struct fsx_state *st)
{
  const struct fsx_opts *o = &st->o;
  int rc = fsx_dir_make(o->dir, st->dir, sizeof st->dir);
  if (rc) return fsx_failf(st, "mkdtemp under %s: %s", o->dir ? o->dir : "/tmp", strerror(-rc));
  st->shadow.assign((size_t)o->files * o->file_size, 0);
  for (uint32_t f = 0; f < o->files; f++) {
    snprintf(st->paths[f][0], FSX_PATH, "%s/f%u", st->dir, f);
    snprintf(st->paths[f][1], FSX_PATH, "%s//f%u", st->dir, f);
    snprintf(st->paths[f][2], FSX_PATH, "%s/./f%u", st->dir, f);
    snprintf(st->paths[f][3], FSX_PATH, "%s/f%u.link", st->dir, f);
    st->size[f] = (int64_t)(o->file_size / 2 + fsx_below(&st->rng, o->file_size / 2 + 1));
    uint8_t *s = st->shadow.data() + (size_t)f * o->file_size;
    const uint64_t gen = fsx_seed3(o->seed, 0xf11e, f, 0);
    for (int64_t i = 0; i < st->size[f]; i++) s[i] = fsx_byte(gen, (uint64_t)i);
    rc = fsx_file_write(st->paths[f][0], s, 0, (uint64_t)st->size[f]);
    if (rc == 0) rc = fsx_file_link(st->paths[f][0], st->paths[f][3]);
    if (rc) return fsx_failf(st, "%s: %s", st->paths[f][0], strerror(-rc));
    for (int n = 0; n < FSX_NAMES; n++) {
      uint64_t ino = 0;
      rc = fsx_file_ino(st->paths[f][n], &ino);
      if (rc) return fsx_failf(st, "%s: %s", st->paths[f][n], strerror(-rc));
      if (n == 0) st->ino[f] = ino;
      else if (ino != st->ino[f]) return fsx_failf(st, "%s is not the file %s", st->paths[f][n], st->paths[f][0]);
    }
  }
  return 0;
}

static int fsx_alloc(struct fsx_state *st)
{
  const struct fsx_opts *o = &st->o;
  struct fsx_dev *d = &st->d;
  const size_t np = 2 * (size_t)st->slots * o->files + o->files;
  cudaError_t e = cudaSuccess;
#define FSX_ALLOC(p, bytes) \
  if (e == cudaSuccess) e = cudaMalloc((void **)&(p), (bytes))
  FSX_ALLOC(d->paths, sizeof st->paths);
  FSX_ALLOC(d->ino, sizeof st->ino);
  FSX_ALLOC(d->block_warp, o->blocks);
  FSX_ALLOC(d->own_start, (st->slots + 1) * sizeof(uint32_t));
  FSX_ALLOC(d->own, np * sizeof(uint32_t));
  FSX_ALLOC(d->pieces, np * sizeof(fsx_piece));
  FSX_ALLOC(d->shadow, st->shadow.size());
  FSX_ALLOC(d->size0, FSX_MAX_FILES * sizeof(int64_t));
  FSX_ALLOC(d->size_out, FSX_MAX_FILES * sizeof(int64_t));
  FSX_ALLOC(d->intent, FSX_MAX_FILES * sizeof(unsigned long long));
  FSX_ALLOC(d->committed, FSX_MAX_FILES * sizeof(unsigned long long));
  FSX_ALLOC(d->held, FSX_MAX_FILES * FSX_HELD * sizeof(fsx_held));
  FSX_ALLOC(d->bufs, (size_t)st->slots * FSX_MAX_IO);
  FSX_ALLOC(d->counts, (size_t)st->slots * FSX_NKINDS * sizeof(unsigned long long));
  FSX_ALLOC(d->fail, sizeof(fsx_fail));
  FSX_ALLOC(d->failed, sizeof(unsigned int));
  FSX_ALLOC(d->steps, FSX_STEPS_MAX * sizeof(fsx_step));
  FSX_ALLOC(d->res, FSX_STEPS_MAX * sizeof(int64_t));
  FSX_ALLOC(d->bad, FSX_STEPS_MAX * sizeof(int64_t));
  FSX_ALLOC(d->fds, FSX_REGS * sizeof(int64_t));
  FSX_ALLOC(d->ptrs, FSX_REGS * sizeof(uint8_t *));
#undef FSX_ALLOC
  if (e == cudaSuccess)
    e = cudaHostAlloc((void **)&d->progress, st->slots * sizeof(fsx_progress), cudaHostAllocMapped);
  if (e == cudaSuccess) memset(d->progress, 0, st->slots * sizeof(fsx_progress));
  if (e == cudaSuccess) e = cudaMemcpy(d->paths, st->paths, sizeof st->paths, cudaMemcpyHostToDevice);
  if (e == cudaSuccess) e = cudaMemcpy(d->ino, st->ino, sizeof st->ino, cudaMemcpyHostToDevice);
  if (e == cudaSuccess) e = cudaMemset(d->failed, 0, sizeof(unsigned int));
  return e == cudaSuccess ? 0 : fsx_failf(st, "device memory: %s", cudaGetErrorString(e));
}

static void fsx_free(struct fsx_state *st)
{
  struct fsx_dev *d = &st->d;
  void *ps[] = {d->paths, d->ino,     d->block_warp, d->own_start, d->own,    d->pieces, d->shadow,
                d->size0, d->size_out, d->intent,    d->committed, d->held,   d->bufs,   d->counts,
                d->fail,  d->failed,  d->steps,      d->res,       d->bad,    d->fds,    d->ptrs};
  for (void *p : ps)
    if (p) cudaFree(p);
  if (d->progress) cudaFreeHost(d->progress);
  memset(d, 0, sizeof *d);
}


static int fsx_start(struct fsx_state *st)
{
  struct gpufs_config c;
  gpufs_config_default(&c);
  c.page_size = st->o.page_size;
  c.cache_size = st->o.cache_size;
  /* a group holds at most FSX_MAXMAP pinned mappings and a round of 4
   * pages (FSX_MAX_IO, readahead_max): with 6 frames of its ring per group
   * nobody waits alloc_timeout_ms for a frame */
  c.nrings = st->o.cache_size / st->o.page_size >= 2ull * FSX_FRAMES_PER_SLOT * st->slots ? 2 : 1;
  c.daemon_threads = 4;
  c.staging_size = 1024ull * st->o.page_size;
  c.max_open_files = 256;
  c.alloc_timeout_ms = 10000;
  c.readahead_max = 4 * st->o.page_size;
  fsx_watch_arm(st->o.kernel_timeout_s, "gpufs_start");
  int rc = gpufs_start(&c);
  fsx_watch_disarm();
  if (rc) return fsx_failf(st, "gpufs_start: %s (%s)", gpufs_strerror(rc), gpufs_error_detail());
  st->gpufs_up = true;
  return 0;
}

static int fsx_loop(struct fsx_state *st)
{
  static const char *const names[] = {"shared", "serial", "held", "mapping"};
  for (uint64_t epoch = 0; st->r->ops < st->o.ops; epoch++) {
    /* one of each kind first (short runs see them all), then at random */
    uint32_t u = (uint32_t)fsx_below(&st->rng, 100);
    int kind = epoch < 4 ? (int)epoch : u < 62 ? 0 : u < 77 ? 1 : u < 89 ? 2 : 3;
    uint64_t before = st->r->ops;
    int rc = kind == 0 ? fsx_epoch_shared(st)
             : kind == 1 ? fsx_epoch_serial(st)
             : kind == 2 ? fsx_epoch_held(st, false)
                         : fsx_epoch_map(st);
    st->r->epochs[kind]++;
    if (st->o.verbose)
      printf("fsx: epoch %-7s kernels %llu, %llu calls (total %llu)\n", names[kind],
             (unsigned long long)st->r->kernels, (unsigned long long)(st->r->ops - before),
             (unsigned long long)st->r->ops);
    if (rc) return 1;
    if (fsx_chance(&st->rng, 2, 5) && fsx_cpu_round(st)) return 1;
  }
  st->r->epochs[2]++;
  return fsx_epoch_held(st, true);
}

int fsx_run(const struct fsx_opts *o, struct fsx_report *r)
{
  memset(r, 0, sizeof *r);
  struct fsx_state *st = new fsx_state();
  st->o = *o;
  st->r = r;
  st->rng = fsx_seed3(o->seed, 0x4057, 0, 0);
  st->slots = o->blocks * FSX_WARPS;
  const double t0 = fsx_now_s();
  int n = 0;
  int rc = 2;
  if (fsx_opts_check(o, st->r->what, sizeof st->r->what) != 0)
    st->r->failed = 1;
  else if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1)
    fsx_failf(st, "no CUDA device");
  else if (fsx_watch_start(fsx_dump, st) != 0)
    fsx_failf(st, "watchdog thread");
  else {
    if (fsx_make_files(st) == 0 && fsx_alloc(st) == 0 && fsx_start(st) == 0) rc = fsx_loop(st);
    if (st->gpufs_up) {
      fsx_watch_arm(o->kernel_timeout_s, "gpufs_stop");
      int s = gpufs_stop();
      fsx_watch_disarm();
      if (s && rc == 0) rc = fsx_failf(st, "gpufs_stop: %s (%s)", gpufs_strerror(s), gpufs_error_detail());
    }
    fsx_watch_stop();
    fsx_free(st);
    if (st->dir[0] && rc != 1) fsx_dir_remove(st->dir);
    else if (st->dir[0]) fprintf(stderr, "fsx: files left in %s\n", st->dir);
  }
  r->seconds = fsx_now_s() - t0;
  if (rc == 2) r->failed = 1;
  delete st;
  return rc;
}

void fsx_print_report(FILE *f, const struct fsx_report *r)
{
  fprintf(f, "fsx: %llu calls in %.1f s (%.0f/s), %llu kernels; epochs: %llu shared, %llu serial, %llu held, "
             "%llu mapping; %llu CPU writes, %llu CPU truncations, %llu host file checks\n",
          (unsigned long long)r->ops, r->seconds, r->seconds > 0 ? (double)r->ops / r->seconds : 0.0,
          (unsigned long long)r->kernels, (unsigned long long)r->epochs[0], (unsigned long long)r->epochs[1],
          (unsigned long long)r->epochs[2], (unsigned long long)r->epochs[3], (unsigned long long)r->cpu_writes,
          (unsigned long long)r->cpu_truncates, (unsigned long long)r->file_checks);
  fprintf(f, "fsx:");
  for (int k = 0; k < FSX_NKINDS; k++) fprintf(f, " %s %llu", fsx_kind_name(k), (unsigned long long)r->by_kind[k]);
  fprintf(f, "\n");
  if (r->failed) fprintf(f, "fsx: FAILED: %s\n", r->what);
  else fprintf(f, "fsx: 0 mismatches, 0 hangs\n");
}
