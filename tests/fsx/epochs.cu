/*
 * epochs.cu - what each epoch of a run launches and when it compares the
 * host files with the shadow (run.h lists them).  An epoch starts and ends
 * with no descriptor open on the GPU, so the CPU may write between epochs
 * (fsx_cpu_round) and the next gopen must see it (close-to-open).
 *
 *   shared   one kernel of many groups            -> check files
 *   serial   one kernel of one group, truncations -> check files
 *   held     script: open 4 names of each file (3 for the groups, 1 for sync)
 *            kernel of many groups on the 3 names (FSX_MODE_HELD)
 *            script: gfsync through the 4th name  -> check files
 *            script: gclose all                   -> check files
 *            (the last epoch of a run: gpufs_stop instead of the scripts)
 *   mapping  read-only: script opens a writable name and maps through
 *            another read-only; the CPU writes under the mapping; script
 *            gmsync + gmunmap + gclose            -> check files (the CPU's
 *            bytes survive)
 *            writable: script maps, stores, gcloses its descriptor; script
 *            gmunmap                              -> check files (the stored
 *            bytes arrived)
 */
#include <errno.h>
#include <string.h>

#include <algorithm>

#include "include/gpufs.cuh"
#include "tests/fsx/hostfile.h"
#include "tests/fsx/run.h"

/* The contract's rule for CPU writes between kernels: 20 ms after the last
 * GPU gclose (the file system's timestamps then tell them apart). */
#define FSX_CPU_QUIET_MS 20

static const char *const fsx_name_label[FSX_NAMES] = {"DIR/f", "DIR//f", "DIR/./f", "DIR/f.link"};

static const char *fsx_acc_label(int flags)
{
  return (flags & 3) == GPUFS_O_RDONLY ? "O_RDONLY" : (flags & 3) == GPUFS_O_WRONLY ? "O_WRONLY" : "O_RDWR";
}

int fsx_epoch_shared(struct fsx_state *st)
{
  if (fsx_random_kernel(st, FSX_MODE_SHARED)) return 1;
  return fsx_check_files(st, "after a kernel of many groups closed every descriptor");
}

int fsx_epoch_serial(struct fsx_state *st)
{
  if (fsx_random_kernel(st, FSX_MODE_SERIAL)) return 1;
  return fsx_check_files(st, "after a one-group kernel (with truncations) closed every descriptor");
}

static struct fsx_step fsx_step_of(int op)
{
  struct fsx_step t;
  memset(&t, 0, sizeof t);
  t.op = op;
  return t;
}

/* Every res[i] of steps [0, n) as the model says: gopen >= 0, the rest 0,
 * gmmap's bytes the shadow's. */
static int fsx_script_ok(struct fsx_state *st, const struct fsx_step *s, int n, const int64_t *res,
                         const int64_t *bad, const char *what)
{
  static const char *const call[] = {"gopen", "gclose", "gfsync", "gmmap", "store", "gmsync", "gmunmap"};
  for (int i = 0; i < n; i++) {
    bool ok = s[i].op == FSX_S_OPEN ? res[i] >= 0 : res[i] == 0;
    if (!ok)
      return fsx_failf(st, "MISMATCH in %s: step %d, %s (file %s, flags 0%o, offset %lld, size %lld) returned %lld (%s)",
                       what, i, call[s[i].op], st->paths[s[i].file][s[i].name], (unsigned)s[i].flags,
                       (long long)s[i].off, (long long)s[i].len, (long long)res[i],
                       res[i] < 0 ? gpufs_strerror((int)res[i]) : "want 0");
    if (s[i].op == FSX_S_MMAP && bad[i] >= 0) {
      const int64_t at = s[i].off + bad[i];
      return fsx_failf(st, "MISMATCH in %s: step %d, gmmap of %s at %lld size %lld: the byte at file offset %lld "
                       "differs from the shadow (want 0x%02x)",
                       what, i, st->paths[s[i].file][s[i].name], (long long)s[i].off, (long long)s[i].len,
                       (long long)at, st->shadow[(size_t)s[i].file * st->o.file_size + (size_t)at]);
    }
  }
  return 0;
}

int fsx_epoch_held(struct fsx_state *st, bool final)
{
  const uint32_t nf = st->o.files;
  struct fsx_step s[FSX_STEPS_MAX];
  int64_t res[FSX_STEPS_MAX], bad[FSX_STEPS_MAX];
  struct fsx_held held[FSX_MAX_FILES * FSX_HELD];
  char when[512];
  int w = snprintf(when, sizeof when, "after gfsync through one name while the others stay open (");
  /* names a, b (written through), c (read-only), and the sync name: a
   * random order of the four; register 4f + j */
  for (uint32_t f = 0; f < nf; f++) {
    int perm[FSX_NAMES] = {0, 1, 2, 3};
    for (int i = FSX_NAMES; i > 1; i--) std::swap(perm[i - 1], perm[fsx_below(&st->rng, (uint64_t)i)]);
    static const int sync_acc[] = {GPUFS_O_RDWR, GPUFS_O_RDONLY, GPUFS_O_WRONLY};
    const int flags[FSX_NAMES] = {GPUFS_O_RDWR | (fsx_chance(&st->rng, 1, 2) ? GPUFS_O_CREAT : 0),
                                  fsx_chance(&st->rng, 1, 3) ? GPUFS_O_WRONLY : GPUFS_O_RDWR, GPUFS_O_RDONLY,
                                  sync_acc[fsx_below(&st->rng, 3)]};
    for (int j = 0; j < FSX_NAMES; j++) {
      struct fsx_step t = fsx_step_of(FSX_S_OPEN);
      t.file = (int)f;
      t.name = perm[j];
      t.flags = flags[j];
      t.dst = (int)f * 4 + j;
      s[f * 4 + j] = t;
      if (j < FSX_HELD) held[f * FSX_HELD + j] = fsx_held{-1, perm[j], flags[j]};
    }
    if (w > 0 && (size_t)w < sizeof when)
      w += snprintf(when + w, sizeof when - (size_t)w, "%sf%u: %s%u %s", f ? "; " : "", f,
                    fsx_name_label[perm[3]], f, fsx_acc_label(flags[3]));
  }
  if (w > 0 && (size_t)w < sizeof when) snprintf(when + w, sizeof when - (size_t)w, ")");
  const int n = (int)nf * 4;
  if (fsx_upload(st) || fsx_script_run(st, s, n, res, bad, "held: open four names of each file") ||
      fsx_script_ok(st, s, n, res, bad, "held: open"))
    return 1;
  for (uint32_t f = 0; f < nf; f++)
    for (int j = 0; j < FSX_HELD; j++) held[f * FSX_HELD + j].fd = (int)res[f * 4 + j];
  cudaError_t e = cudaMemcpy(st->d.held, held, nf * FSX_HELD * sizeof(fsx_held), cudaMemcpyHostToDevice);
  if (e != cudaSuccess) return fsx_failf(st, "held: %s", cudaGetErrorString(e));
  if (fsx_random_kernel(st, FSX_MODE_HELD)) return 1;
  if (final) {
    /* the files stay open and dirty: gpufs_stop writes them back */
    fsx_watch_arm(st->o.kernel_timeout_s, "gpufs_stop with descriptors open");
    int rc = gpufs_stop();
    fsx_watch_disarm();
    st->gpufs_up = false;
    if (rc) return fsx_failf(st, "gpufs_stop with descriptors open: %s (%s)", gpufs_strerror(rc), gpufs_error_detail());
    return fsx_check_files(st, "after gpufs_stop with the held descriptors open");
  }
  struct fsx_step opened[FSX_MAX_FILES * 4];
  memcpy(opened, s, n * sizeof(fsx_step));
  for (uint32_t f = 0; f < nf; f++) {
    s[f] = fsx_step_of(FSX_S_FSYNC);
    s[f].file = (int)f;
    s[f].name = opened[f * 4 + 3].name;
    s[f].flags = opened[f * 4 + 3].flags;
    s[f].src = (int)f * 4 + 3;
  }
  if (fsx_script_run(st, s, (int)nf, res, bad, "held: gfsync through the fourth name") ||
      fsx_script_ok(st, s, (int)nf, res, bad, "held: gfsync") || fsx_check_files(st, when))
    return 1;
  for (int i = 0; i < n; i++) {
    s[i] = fsx_step_of(FSX_S_CLOSE);
    s[i].file = i / 4;
    s[i].name = opened[i].name;
    s[i].flags = opened[i].flags;
    s[i].src = i;
  }
  if (fsx_script_run(st, s, n, res, bad, "held: gclose") || fsx_script_ok(st, s, n, res, bad, "held: gclose"))
    return 1;
  return fsx_check_files(st, "after the held descriptors' last gclose");
}

int fsx_epoch_map(struct fsx_state *st)
{
  const uint32_t nf = st->o.files;
  const uint64_t page = st->o.page_size;
  uint32_t f = (uint32_t)fsx_below(&st->rng, nf);
  if (st->size[f] == 0) return fsx_epoch_shared(st);
  const uint64_t size = (uint64_t)st->size[f];
  const uint64_t off = fsx_below(&st->rng, size);
  const uint64_t len = 1 + fsx_below(&st->rng, std::min(page - off % page, size - off));
  const int a = (int)fsx_below(&st->rng, FSX_NAMES);
  const int b = (a + 1 + (int)fsx_below(&st->rng, FSX_NAMES - 1)) % FSX_NAMES;
  const int c = (int)fsx_below(&st->rng, FSX_NAMES);
  const uint64_t gen = fsx_seed3(st->o.seed, 0x3a9, st->kernel, f);
  struct fsx_step s[8];
  int64_t res[8], bad[8];
  for (int i = 0; i < 8; i++) {
    s[i] = fsx_step_of(FSX_S_OPEN);
    s[i].file = (int)f;
    s[i].off = (int64_t)off;
    s[i].len = (int64_t)len;
    s[i].map_off = (int64_t)off;
    s[i].gen = gen;
  }
  if (fsx_upload(st)) return 1;
  char what[256];
  if (fsx_chance(&st->rng, 2, 3)) {
    /* read-only mapping: O_RDONLY, or O_RDWR without PROT_WRITE, or MAP_PRIVATE */
    const uint32_t v = (uint32_t)fsx_below(&st->rng, 3);
    const int bflags = v == 0 ? GPUFS_O_RDONLY : GPUFS_O_RDWR;
    snprintf(what, sizeof what, "mapping: %s mapped read-only (%s, %s) at %llu size %llu, %s open O_RDWR",
             st->paths[f][b], fsx_acc_label(bflags), v == 2 ? "MAP_PRIVATE" : "PROT_READ MAP_SHARED",
             (unsigned long long)off, (unsigned long long)len, st->paths[f][a]);
    s[0].name = a, s[0].flags = GPUFS_O_RDWR, s[0].dst = 0;
    s[1].name = b, s[1].flags = bflags, s[1].dst = 1;
    s[2].op = FSX_S_MMAP, s[2].name = b, s[2].src = 1, s[2].dst = 0, s[2].prot = GPUFS_PROT_READ;
    s[2].mflags = v == 2 ? GPUFS_MAP_PRIVATE : GPUFS_MAP_SHARED;
    if (fsx_script_run(st, s, 3, res, bad, "mapping: open and map read-only") ||
        fsx_script_ok(st, s, 3, res, bad, what))
      return 1;
    /* the CPU writes the mapped bytes while the descriptors stay open */
    fsx_sleep_ms(FSX_CPU_QUIET_MS);
    uint8_t *sh = st->shadow.data() + (size_t)f * st->o.file_size;
    for (uint64_t i = off; i < off + len; i++) sh[i] = fsx_byte(gen ^ 0xc9u, i);
    int rc = fsx_file_write(st->paths[f][c], sh + off, off, len);
    if (rc) return fsx_failf(st, "CPU write of %s: %s", st->paths[f][c], strerror(-rc));
    st->r->cpu_writes++;
    s[3].op = FSX_S_MSYNC, s[3].name = b, s[3].src = 0, s[3].mflags = GPUFS_MS_SYNC;
    s[4].op = FSX_S_MUNMAP, s[4].name = b, s[4].src = 0;
    s[5].op = FSX_S_CLOSE, s[5].name = b, s[5].src = 1;
    s[6].op = FSX_S_CLOSE, s[6].name = a, s[6].src = 0;
    if (fsx_script_run(st, s + 3, 4, res, bad, "mapping: gmsync, gmunmap, gclose") ||
        fsx_script_ok(st, s + 3, 4, res, bad, what))
      return 1;
    char when[400];
    snprintf(when, sizeof when, "after %s, a CPU write under the mapping, gmsync(MS_SYNC), gmunmap and gclose",
             what);
    return fsx_check_files(st, when);
  }
  /* writable mapping whose descriptor is closed before gmunmap */
  snprintf(what, sizeof what, "mapping: %s O_RDWR mapped PROT_WRITE MAP_SHARED at %llu size %llu, stored, gclosed",
           st->paths[f][a], (unsigned long long)off, (unsigned long long)len);
  s[0].name = a, s[0].flags = GPUFS_O_RDWR, s[0].dst = 0;
  s[1].op = FSX_S_MMAP, s[1].name = a, s[1].src = 0, s[1].dst = 0;
  s[1].prot = GPUFS_PROT_READ | GPUFS_PROT_WRITE, s[1].mflags = GPUFS_MAP_SHARED;
  s[2].op = FSX_S_STORE, s[2].name = a, s[2].src = 0;
  s[3].op = FSX_S_CLOSE, s[3].name = a, s[3].src = 0;
  s[4].op = FSX_S_MUNMAP, s[4].name = a, s[4].src = 0;
  if (fsx_script_run(st, s, 4, res, bad, "mapping: map, store, gclose") || fsx_script_ok(st, s, 4, res, bad, what) ||
      fsx_download_shadow(st) || fsx_script_run(st, s + 4, 1, res, bad, "mapping: gmunmap after gclose") ||
      fsx_script_ok(st, s + 4, 1, res, bad, what))
    return 1;
  char when[400];
  snprintf(when, sizeof when, "after %s, then gmunmap (the last reference)", what);
  return fsx_check_files(st, when);
}

int fsx_cpu_round(struct fsx_state *st)
{
  const uint64_t arena = st->o.file_size, page = st->o.page_size;
  fsx_sleep_ms(FSX_CPU_QUIET_MS);
  std::vector<uint8_t> buf;
  for (uint32_t f = 0; f < st->o.files; f++) {
    uint8_t *sh = st->shadow.data() + (size_t)f * arena;
    if (fsx_chance(&st->rng, 1, 3)) {
      const int nw = 1 + (int)fsx_below(&st->rng, 4);
      for (int k = 0; k < nw; k++) {
        uint64_t len = fsx_chance(&st->rng, 1, 2) ? 1 + fsx_below(&st->rng, 256) : 1 + fsx_below(&st->rng, 3 * page);
        uint64_t off = fsx_below(&st->rng, arena - len + 1);
        if (fsx_chance(&st->rng, 1, 3)) {
          /* around the end of the file */
          uint64_t back = fsx_below(&st->rng, 2 * page);
          off = (uint64_t)st->size[f] + page > back ? (uint64_t)st->size[f] + page - back : 0;
          if (off + len > arena) off = arena - len;
        }
        const uint64_t gen = fsx_seed3(st->o.seed, 0xc7u, st->kernel, f * 8 + (uint32_t)k);
        for (uint64_t i = off; i < off + len; i++) sh[i] = fsx_byte(gen, i);
        int rc = fsx_file_write(st->paths[f][fsx_below(&st->rng, FSX_NAMES)], sh + off, off, len);
        if (rc) return fsx_failf(st, "CPU write of %s: %s", st->paths[f][0], strerror(-rc));
        st->size[f] = std::max(st->size[f], (int64_t)(off + len));
        st->r->cpu_writes++;
      }
    }
    if (fsx_chance(&st->rng, 1, 8)) {
      uint64_t len = fsx_chance(&st->rng, 1, 2) ? fsx_below(&st->rng, arena + 1)
                                                  : (uint64_t)st->size[f] - std::min<uint64_t>(st->size[f], fsx_below(&st->rng, page));
      int rc = fsx_file_truncate(st->paths[f][fsx_below(&st->rng, FSX_NAMES)], len);
      if (rc) return fsx_failf(st, "CPU truncate of %s: %s", st->paths[f][0], strerror(-rc));
      if ((int64_t)len < st->size[f]) memset(sh + len, 0, (size_t)(st->size[f] - (int64_t)len));
      st->size[f] = (int64_t)len;
      st->r->cpu_truncates++;
    }
  }
  return 0;
}
