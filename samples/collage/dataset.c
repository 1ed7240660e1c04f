/*
 * dataset.c - the tiles and the dataset file of the collage (collage.h):
 * tile parameters from the hash stream, tile rendering (crop, scale,
 * flip, colour jitter), histograms, records and their checks, the
 * multi-threaded build of the file (preallocated, written to path.tmp,
 * header last, renamed), opening and checking it, input pictures, and the
 * rendering of the output collage.
 */
#include "samples/collage/collage.h"
#include "benchlib/opts.h"
#include "benchlib/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define DS_CHUNK 256u                       /* records a build step makes: one 1 MiB pwrite */
#define DS_STREAM_PICK 0x7111e0ull          /* seed index, crop size */
#define DS_STREAM_PLACE 0x7111e1ull         /* crop origin */
#define DS_STREAM_LOOK 0x7111e2ull          /* flip, gain, offset */
#define DS_PROGRESS_MS 250u                 /* progress lines at most every 250 ms */

/* The pixel and hash loops touch only their caller's buffers and seed
 * pictures that no thread writes while a build runs (they are complete
 * before the threads start), so ThreadSanitizer has nothing to find there:
 * they are left uninstrumented, which keeps the TSan-built tests fast. */
#if defined(__SANITIZE_THREAD__)
#define DS_PLAIN __attribute__((no_sanitize_thread))
#else
#define DS_PLAIN
#endif

_Static_assert(sizeof(struct collage_record) == COLLAGE_RECORD, "a record is 4 KiB");
_Static_assert(sizeof(struct collage_dataset_header) <= COLLAGE_RECORD, "the header fits 4 KiB");
_Static_assert(offsetof(struct collage_record, check) % 8 == 0, "records hash in 8-byte words");
_Static_assert(offsetof(struct collage_dataset_header, id) % 8 == 0, "headers hash in 8-byte words");

/* ---------------- hashing ---------------- */

/* Hash of n 8-byte words of p (n a multiple of 4 or not): four lanes so
 * the multiplies overlap, folded with collage_hash2.  Callers: record and
 * header checks. */
DS_PLAIN static uint64_t ds_hash_words(uint64_t h, const uint8_t *p, size_t n)
{
  uint64_t lane[4] = {h, h ^ 0x1111, h ^ 0x2222, h ^ 0x3333};
  size_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (int k = 0; k < 4; k++) {
      uint64_t v;
      memcpy(&v, p + (i + (size_t)k) * 8, 8);
      lane[k] = collage_hash64(lane[k] ^ v);
    }
  for (int k = 0; i < n; i++, k++) {
    uint64_t v;
    memcpy(&v, p + i * 8, 8);
    lane[k] = collage_hash64(lane[k] ^ v);
  }
  return collage_hash2(collage_hash2(lane[0], lane[1]), collage_hash2(lane[2], lane[3]) ^ n);
}

/* The check of a record: the hash of every byte before `check` (histogram,
 * tile, index).  Callers: collage_record_make, the open's sample, tests. */
uint64_t collage_record_check(const struct collage_record *r)
{
  return ds_hash_words(0xc011a6e5ec0dull, (const uint8_t *)r, offsetof(struct collage_record, check) / 8);
}

/* ---------------- tiles ---------------- */

/* log2(x / 65536) in 16.16 for x >= 65536, piecewise linear between
 * powers of two (collage_tile_params expands it back the same way). */
static uint32_t ds_log2(uint64_t x)
{
  uint32_t k = 0;
  while ((x >> k) >= 131072)
    k++;
  return (k << 16) + (uint32_t)((x >> k) - 65536);
}

/* The parameters of tile i of stream `seed`: the seed picture uniform, the
 * crop side log-uniform (piecewise-linear log) in [32, max(32, min(w, h)
 * / 2)] (smaller only for a seed under 32 pixels), the origin uniform, two
 * flip bits, gain 192..320 and offset -32..32 per channel.  Callers: the
 * build, tests. */
void collage_tile_params(const struct collage_seeds *s, uint64_t seed, uint64_t i, struct collage_tile *t)
{
  memset(t, 0, sizeof(*t));
  if (s->n <= 0)
    return;
  const uint64_t a = collage_hash2(seed ^ DS_STREAM_PICK, i);
  const uint64_t b = collage_hash2(seed ^ DS_STREAM_PLACE, i);
  const uint64_t c = collage_hash2(seed ^ DS_STREAM_LOOK, i);
  t->seed = (uint32_t)(((a >> 32) * (uint64_t)s->n) >> 32);
  const struct collage_image *im = &s->img[t->seed];
  const uint32_t side = (uint32_t)(im->w < im->h ? im->w : im->h);
  const uint32_t lo = side < 32 ? side : 32;
  uint32_t hi = side / 2 < 32 ? 32 : side / 2;
  hi = hi > side ? side : hi;
  hi = hi > 65535 ? 65535 : hi;
  const uint32_t span = ds_log2(((uint64_t)hi << 16) / (lo ? lo : 1));
  const uint32_t u = (uint32_t)(((a & 0xffff) * (uint64_t)span) >> 16); /* 0 .. span */
  uint64_t size = ((uint64_t)lo << (u >> 16)) * (65536 + (u & 0xffff)) >> 16;
  size = size < lo ? lo : size > hi ? hi : size;
  t->size = (uint16_t)size;
  t->x = (uint16_t)((b & 0xffffffff) % ((uint64_t)im->w - size + 1));
  t->y = (uint16_t)((b >> 32) % ((uint64_t)im->h - size + 1));
  t->flip = (uint8_t)(c & 3);
  for (int k = 0; k < 3; k++) {
    t->gain[k] = (int16_t)(192 + ((c >> (8 + 8 * k)) & 0xff) % 129);
    t->offset[k] = (int16_t)((int)((c >> (32 + 8 * k)) & 0xff) % 65 - 32);
  }
}

/* The sample points of a tile along one axis: byte offsets (times `scale`
 * bytes a step) of 1 or 2 samples for each of the 32 output positions. */
DS_PLAIN static unsigned ds_taps(const struct collage_tile *t, unsigned origin, size_t scale, size_t pos[][2])
{
  const unsigned T = COLLAGE_TILE, taps = t->size > T ? 2 : 1;
  for (unsigned o = 0; o < T; o++)
    for (unsigned j = 0; j < taps; j++) {
      /* position (o + (2j + 1) / (2 taps)) * size / 32, floored */
      const uint32_t q = (uint32_t)(((2 * taps * o + 2 * j + 1) * (uint32_t)t->size) / (2 * taps * T));
      pos[o][j] = (origin + q) * scale;
    }
  return taps;
}

/* The pixel at p as R | G << 8 | B << 16 (one 4-byte load where the
 * picture has a byte after it). */
DS_PLAIN static inline uint32_t ds_pixel(const uint8_t *p, const uint8_t *end)
{
  if (p + 4 > end)
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16;
  uint32_t v;
  memcpy(&v, p, 4);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap32(v);
#endif
  return v;
}

/* The pixels of a checked tile into rgb (when not NULL) and their
 * histogram into hist (when not NULL, zeroed first).  Uninstrumented
 * (DS_PLAIN): it reads the seeds, which no thread writes, and writes only
 * its caller's buffers. */
DS_PLAIN static void ds_render(const struct collage_seeds *s, const struct collage_tile *t, uint8_t *rgb,
                               uint32_t *hist)
{
  const struct collage_image *im = &s->img[t->seed];
  const uint8_t *end = im->rgb + (size_t)im->w * (size_t)im->h * 3;
  const unsigned T = COLLAGE_TILE;
  size_t col[COLLAGE_TILE][2], row[COLLAGE_TILE][2];
  const unsigned taps = ds_taps(t, t->x, 3, col);
  ds_taps(t, t->y, (size_t)im->w * 3, row);
  const unsigned shift = taps == 2 ? 2 : 0, round = taps == 2 ? 2 : 0;
  if (hist)
    memset(hist, 0, COLLAGE_HIST * sizeof(uint32_t));
  for (unsigned oy = 0; oy < T; oy++) {
    const unsigned dy = (t->flip & 2) ? T - 1 - oy : oy;
    for (unsigned ox = 0; ox < T; ox++) {
      uint32_t r = 0, g = 0, b = 0;
      for (unsigned jy = 0; jy < taps; jy++)
        for (unsigned jx = 0; jx < taps; jx++) {
          const uint32_t v = ds_pixel(im->rgb + row[oy][jy] + col[ox][jx], end);
          r += v & 0xff;
          g += (v >> 8) & 0xff;
          b += (v >> 16) & 0xff;
        }
      const uint32_t in[3] = {(r + round) >> shift, (g + round) >> shift, (b + round) >> shift};
      uint8_t out[3];
      for (unsigned c = 0; c < 3; c++) {
        const int v = (((int)in[c] * t->gain[c]) >> 8) + t->offset[c];
        out[c] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
      }
      if (rgb) {
        const unsigned dx = (t->flip & 1) ? T - 1 - ox : ox;
        memcpy(rgb + (dy * T + dx) * 3, out, 3);
      }
      if (hist) {
        hist[out[0]]++;
        hist[COLLAGE_BINS + out[1]]++;
        hist[2 * COLLAGE_BINS + out[2]]++;
      }
    }
  }
}

/* 1 when t names a seed and its crop lies inside it. */
static int ds_tile_fits(const struct collage_seeds *s, const struct collage_tile *t)
{
  if ((int64_t)t->seed >= (int64_t)s->n || t->size == 0)
    return 0;
  const struct collage_image *im = &s->img[t->seed];
  return im->rgb && t->x + t->size <= im->w && t->y + t->size <= im->h;
}

/* Renders tile t into rgb (32 x 32 x 3): each output pixel the mean of 2 x 2
 * samples at the quarter points of its footprint in the crop (one sample,
 * at its centre, when the crop is 32 or less), mirrored as t->flip says,
 * then out = clamp((v * gain >> 8) + offset).  Callers: the collage
 * render, tests.  0, or -EINVAL when t does not fit its seed. */
int collage_tile_render(const struct collage_seeds *s, const struct collage_tile *t, uint8_t *rgb)
{
  if (!ds_tile_fits(s, t))
    return -EINVAL;
  ds_render(s, t, rgb, NULL);
  return 0;
}

/* Raw counts of a w x h region: hist[c * 256 + v] for channel c.  Callers:
 * the versions' references, tests. */
void collage_histogram(const uint8_t *rgb, int w, int h, size_t stride, uint32_t *hist)
{
  memset(hist, 0, COLLAGE_HIST * sizeof(uint32_t));
  for (int y = 0; y < h; y++) {
    const uint8_t *p = rgb + (size_t)y * stride;
    for (int x = 0; x < w; x++, p += 3) {
      hist[p[0]]++;
      hist[COLLAGE_BINS + p[1]]++;
      hist[2 * COLLAGE_BINS + p[2]]++;
    }
  }
}

/* Record i complete: the histogram of the rendered tile (rendered and
 * counted in one pass), tile, index, check, zero pad.  Callers: the build,
 * tests.  0 or -EINVAL (no seeds, or a seed too small for a tile). */
int collage_record_make(const struct collage_seeds *s, uint64_t seed, uint64_t i, struct collage_record *r)
{
  memset(r, 0, sizeof(*r));
  collage_tile_params(s, seed, i, &r->tile);
  if (!ds_tile_fits(s, &r->tile))
    return -EINVAL;
  ds_render(s, &r->tile, NULL, r->hist);
  r->index = i;
  r->check = collage_record_check(r);
  return 0;
}

/* ---------------- the build ---------------- */

/* The shared state of a build's steps. */
struct ds_build {
  const struct collage_seeds *s;
  uint64_t n, seed;
  int fd;
  FILE *progress;
  double t0;
  _Atomic uint64_t sum;      /* sum of the checks: relaxed adds, read after the join */
  _Atomic uint64_t done;     /* records written: relaxed, only for the progress line */
  _Atomic uint64_t next_ms;  /* when the next progress line is due (ms since t0) */
};

/* One step: records [lo, hi) into a 1 MiB buffer, one pwrite, the checks
 * added to the sum, maybe a progress line.  Called by bench_parallel_for. */
static int ds_build_step(void *arg, uint64_t lo, uint64_t hi)
{
  struct ds_build *b = arg;
  struct collage_record *buf = malloc((size_t)(hi - lo) * sizeof(*buf));
  if (!buf)
    return -ENOMEM;
  uint64_t sum = 0;
  int rc = 0;
  for (uint64_t i = lo; i < hi && rc == 0; i++) {
    rc = collage_record_make(b->s, b->seed, i, &buf[i - lo]);
    sum += buf[i - lo].check;
  }
  if (rc == 0)
    rc = bench_pio_full(b->fd, buf, (hi - lo) * sizeof(*buf), (uint64_t)collage_record_offset(lo), 1);
  free(buf);
  if (rc != 0)
    return rc;
  /* relaxed: the sum and count are read by the caller after
   * bench_parallel_for joins every thread (the join orders them) */
  atomic_fetch_add_explicit(&b->sum, sum, memory_order_relaxed);
  const uint64_t done = atomic_fetch_add_explicit(&b->done, hi - lo, memory_order_relaxed) + (hi - lo);
  if (b->progress) {
    const double el = bench_now() - b->t0;
    const uint64_t now_ms = (uint64_t)(el * 1000.0);
    uint64_t due = atomic_load_explicit(&b->next_ms, memory_order_relaxed);
    /* relaxed: the exchange only elects the one thread that prints */
    if (now_ms >= due && atomic_compare_exchange_strong_explicit(&b->next_ms, &due, now_ms + DS_PROGRESS_MS,
                                                                 memory_order_relaxed, memory_order_relaxed))
      fprintf(b->progress, "%s  dataset: %llu / %llu tiles (%llu%%), %.0fk tiles/s%s",
              bench_progress_begin(b->progress), (unsigned long long)done, (unsigned long long)b->n,
              (unsigned long long)(done * 100 / b->n), (double)done / el / 1e3, bench_progress_end(b->progress));
  }
  return 0;
}

/* The header of a dataset, its id and check set. */
static void ds_header_make(struct collage_dataset_header *h, const struct collage_seeds *s, uint64_t n,
                           uint64_t seed, uint64_t sum)
{
  memset(h, 0, sizeof(*h));
  memcpy(h->magic, COLLAGE_DATASET_MAGIC, sizeof(h->magic));
  h->version = COLLAGE_DATASET_VERSION;
  h->record = COLLAGE_RECORD;
  h->n = n;
  h->seed = seed;
  h->seeds_id = s->id;
  h->nseeds = (uint32_t)s->n;
  memcpy(h->seeds_source, s->source, sizeof(h->seeds_source));
  h->records_sum = sum;
  h->id = ds_hash_words(0xda7a5e7ull, (const uint8_t *)h, offsetof(struct collage_dataset_header, id) / 8);
  h->check = ds_hash_words(0xc4ecull, (const uint8_t *)h, offsetof(struct collage_dataset_header, check) / 8);
}

/* Builds the dataset file: n records of stream `seed` from seeds s, on
 * `threads` threads (0: every core), into path.tmp preallocated whole (a
 * full disk fails at once), the header last, then renamed to path.
 * Callers: the driver, tests.  0 or -errno with a message on progress (or
 * stderr when progress is NULL); nothing is left at path.tmp on failure. */
int collage_dataset_build(const char *path, const struct collage_seeds *s, uint64_t n, uint64_t seed,
                          int threads, FILE *progress)
{
  FILE *log = progress ? progress : stderr;
  if (n == 0 || n >= COLLAGE_NONE || s->n <= 0) {
    fprintf(log, "collage: dataset %s: %llu tiles from %d seed pictures: invalid\n", path,
            (unsigned long long)n, s->n);
    return -EINVAL;
  }
  char tmp[4200], size[32];
  snprintf(tmp, sizeof(tmp), "%s.tmp", path);
  const uint64_t bytes = (uint64_t)collage_record_offset(n);
  if (bytes >= BENCH_GIB)
    snprintf(size, sizeof(size), "%.2f GiB", (double)bytes / (double)BENCH_GIB);
  else
    snprintf(size, sizeof(size), "%.1f MiB", (double)bytes / (double)BENCH_MIB);
  struct ds_build b = {.s = s, .n = n, .seed = seed, .progress = progress, .t0 = bench_now()};
  atomic_init(&b.sum, 0);
  atomic_init(&b.done, 0);
  atomic_init(&b.next_ms, DS_PROGRESS_MS);
  b.fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (b.fd < 0) {
    const int e = errno;
    fprintf(log, "collage: cannot create %s: %s\n", tmp, strerror(e));
    return -e;
  }
  int rc = -posix_fallocate(b.fd, 0, (off_t)bytes);
  if (rc != 0) {
    fprintf(log, "collage: dataset %s needs %s (%llu tiles of 4 KiB): %s\n", path, size,
            (unsigned long long)n, strerror(-rc));
  } else if ((rc = bench_parallel_for(n, DS_CHUNK, threads, ds_build_step, &b)) != 0) {
    if (progress)
      fputc('\n', progress);
    fprintf(log, "collage: writing %s: %s\n", tmp, strerror(rc < 0 ? -rc : rc));
  } else {
    uint8_t page[COLLAGE_RECORD] = {0};
    ds_header_make((struct collage_dataset_header *)page, s, n, seed,
                   atomic_load_explicit(&b.sum, memory_order_relaxed));
    rc = bench_pio_full(b.fd, page, sizeof(page), 0, 1);
    if (rc != 0)
      fprintf(log, "collage: writing the header of %s: %s\n", tmp, strerror(-rc));
  }
  if (close(b.fd) != 0 && rc == 0) {
    rc = -errno;
    fprintf(log, "collage: closing %s: %s\n", tmp, strerror(-rc));
  }
  if (rc == 0 && rename(tmp, path) != 0) {
    rc = -errno;
    fprintf(log, "collage: renaming %s to %s: %s\n", tmp, path, strerror(-rc));
  }
  if (rc != 0) {
    unlink(tmp);
    return rc < 0 ? rc : -EIO;
  }
  if (progress) {
    const double el = bench_now() - b.t0;
    fprintf(progress, "%s  dataset: %llu / %llu tiles (100%%), %.0fk tiles/s, %s in %.1f s\n",
            bench_progress_begin(progress), (unsigned long long)n, (unsigned long long)n, (double)n / el / 1e3, size, el);
  }
  return 0;
}

/* ---------------- open and check ---------------- */

/* Record i checked: its index field and its check.  0 or -EIO with a
 * message. */
static int ds_check_record(const struct collage_dataset *ds, uint64_t i, char *err, size_t errlen)
{
  const struct collage_record *r = collage_dataset_record(ds, i);
  if (r->index != i) {
    snprintf(err, errlen, "%s: record %llu is corrupt (its index field says %llu)", ds->path,
             (unsigned long long)i, (unsigned long long)r->index);
    return -EIO;
  }
  if (collage_record_check(r) != r->check) {
    snprintf(err, errlen, "%s: record %llu is corrupt (its check does not match its bytes)", ds->path,
             (unsigned long long)i);
    return -EIO;
  }
  return 0;
}

/* The header's own checks: magic, version, record size, check and id,
 * tile count.  0, -EINVAL or -EIO (a file shorter than its header) with a
 * message. */
static int ds_check_header(const char *path, const struct collage_dataset_header *h, uint64_t got, char *err,
                           size_t errlen)
{
  struct collage_dataset_header want;
  if (got == 0) {
    snprintf(err, errlen, "%s: empty file, not a collage dataset", path);
    return -EINVAL;
  }
  if (got < sizeof(h->magic) || memcmp(h->magic, COLLAGE_DATASET_MAGIC, sizeof(h->magic)) != 0) {
    snprintf(err, errlen, "%s: not a collage dataset (no %s magic)", path, COLLAGE_DATASET_MAGIC);
    return -EINVAL;
  }
  if (got < COLLAGE_RECORD) {
    snprintf(err, errlen, "%s: truncated: %llu bytes, shorter than its %u-byte header", path,
             (unsigned long long)got, COLLAGE_RECORD);
    return -EIO;
  }
  if (h->version != COLLAGE_DATASET_VERSION) {
    snprintf(err, errlen, "%s: dataset version %u, this program reads version %u (rebuild it)", path,
             h->version, COLLAGE_DATASET_VERSION);
    return -EINVAL;
  }
  if (h->record != COLLAGE_RECORD) {
    snprintf(err, errlen, "%s: records of %u bytes, this program reads %u", path, h->record, COLLAGE_RECORD);
    return -EINVAL;
  }
  if (ds_hash_words(0xc4ecull, (const uint8_t *)h, offsetof(struct collage_dataset_header, check) / 8) !=
      h->check) {
    snprintf(err, errlen, "%s: bad header check (the header is corrupt)", path);
    return -EINVAL;
  }
  memcpy(&want, h, sizeof(want));
  if (ds_hash_words(0xda7a5e7ull, (const uint8_t *)&want, offsetof(struct collage_dataset_header, id) / 8) !=
          h->id ||
      h->n == 0 || h->n >= COLLAGE_NONE) {
    snprintf(err, errlen, "%s: bad header (id or tile count %llu do not hold)", path, (unsigned long long)h->n);
    return -EINVAL;
  }
  return 0;
}

/* Opens and checks a dataset: the header, the size (n + 1) * 4 KiB, the
 * mapping, then `sample` records spread evenly from the first to the last
 * (every record and records_sum when sample >= n).  Callers: the driver,
 * tests.  0, or -ENOENT, -EINVAL, -EIO (see collage.h) with a message in
 * err; on failure ds holds nothing to close. */
int collage_dataset_open(const char *path, uint64_t sample, struct collage_dataset *ds, char *err,
                         size_t errlen)
{
  memset(ds, 0, sizeof(*ds));
  ds->fd = -1;
  snprintf(ds->path, sizeof(ds->path), "%s", path);
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    snprintf(err, errlen, "%s: %s", path, strerror(e));
    return -e;
  }
  uint8_t page[COLLAGE_RECORD] = {0};
  struct stat st;
  int rc = 0;
  ssize_t got = 0;
  if (fstat(fd, &st) != 0 || (got = pread(fd, page, sizeof(page), 0)) < 0) {
    rc = -errno;
    snprintf(err, errlen, "%s: %s", path, strerror(-rc));
  }
  struct collage_dataset_header *h = (struct collage_dataset_header *)page;
  if (rc == 0)
    rc = ds_check_header(path, h, (uint64_t)got, err, errlen);
  const uint64_t want = rc == 0 ? (uint64_t)collage_record_offset(h->n) : 0;
  if (rc == 0 && (uint64_t)st.st_size != want) {
    snprintf(err, errlen, "%s: %s: %llu bytes, expected %llu (%llu tiles)", path,
             (uint64_t)st.st_size < want ? "truncated" : "wrong size", (unsigned long long)st.st_size,
             (unsigned long long)want, (unsigned long long)h->n);
    rc = -EIO;
  }
  void *map = MAP_FAILED;
  if (rc == 0 && (map = mmap(NULL, want, PROT_READ, MAP_SHARED, fd, 0)) == MAP_FAILED) {
    rc = -errno;
    snprintf(err, errlen, "%s: mmap of %llu bytes: %s", path, (unsigned long long)want, strerror(-rc));
  }
  if (rc != 0) {
    close(fd);
    return rc;
  }
  ds->fd = fd;
  ds->n = h->n;
  ds->bytes = want;
  ds->map = map;
  memcpy(&ds->hdr, h, sizeof(ds->hdr));
  if (sample >= ds->n) {
    uint64_t sum = 0;
    for (uint64_t i = 0; i < ds->n && rc == 0; i++) {
      rc = ds_check_record(ds, i, err, errlen);
      sum += collage_dataset_record(ds, i)->check;
    }
    if (rc == 0 && sum != ds->hdr.records_sum) {
      snprintf(err, errlen, "%s: the records do not add up to the header's records_sum (corrupt)", path);
      rc = -EIO;
    }
  } else {
    for (uint64_t k = 0; k < sample && rc == 0; k++)
      rc = ds_check_record(ds, sample == 1 ? 0 : k * (ds->n - 1) / (sample - 1), err, errlen);
  }
  if (rc != 0)
    collage_dataset_close(ds);
  return rc;
}

/* Unmaps and closes (safe on a zeroed struct, and twice). */
void collage_dataset_close(struct collage_dataset *ds)
{
  if (ds->map) {
    munmap((void *)ds->map, ds->bytes);
    close(ds->fd);
  }
  ds->map = NULL;
  ds->fd = -1;
  ds->n = ds->bytes = 0;
}

/* ---------------- pictures ---------------- */

/* Input picture k: seed k % n scaled to w x h.  Callers: the driver, tests.
 * 0 or -EINVAL / -ENOMEM. */
int collage_input_picture(const struct collage_seeds *s, int k, int w, int h, struct collage_image *out)
{
  out->w = out->h = 0;
  out->rgb = NULL;
  if (s->n <= 0 || k < 0)
    return -EINVAL;
  return collage_image_resize(&s->img[k % s->n], w, h, out);
}

/* The collage: a copy of in with each block b replaced by tile choice[b]
 * re-rendered from its record (COLLAGE_NONE keeps the block).  Callers:
 * the driver.  0, or -EINVAL (other seeds, a choice past the dataset, a
 * tile that does not fit) / -ENOMEM with a message in err. */
int collage_render(const struct collage_dataset *ds, const struct collage_seeds *s,
                   const struct collage_image *in, const uint32_t *choice, struct collage_image *out,
                   char *err, size_t errlen)
{
  out->w = out->h = 0;
  out->rgb = NULL;
  if (ds->hdr.seeds_id != s->id) {
    snprintf(err, errlen,
             "%s was made from other seed pictures (%u %.32s, id %016llx) than these (%d %s, id %016llx)",
             ds->path, ds->hdr.nseeds, ds->hdr.seeds_source, (unsigned long long)ds->hdr.seeds_id, s->n,
             s->source, (unsigned long long)s->id);
    return -EINVAL;
  }
  int rc = collage_image_alloc(out, in->w, in->h);
  if (rc != 0) {
    snprintf(err, errlen, "a %dx%d collage: %s", in->w, in->h, strerror(-rc));
    return rc;
  }
  memcpy(out->rgb, in->rgb, (size_t)in->w * (size_t)in->h * 3);
  const int bw = in->w / (int)COLLAGE_TILE, bh = in->h / (int)COLLAGE_TILE;
  uint8_t px[COLLAGE_PIXELS * 3];
  for (int b = 0; b < bw * bh; b++) {
    if (choice[b] == COLLAGE_NONE)
      continue;
    if (choice[b] >= ds->n ||
        collage_tile_render(s, &collage_dataset_record(ds, choice[b])->tile, px) != 0) {
      snprintf(err, errlen, "block %d: tile %u is not a tile of %s", b, choice[b], ds->path);
      collage_image_free(out);
      return -EINVAL;
    }
    const size_t x0 = (size_t)(b % bw) * COLLAGE_TILE, y0 = (size_t)(b / bw) * COLLAGE_TILE;
    for (unsigned y = 0; y < COLLAGE_TILE; y++)
      memcpy(out->rgb + ((y0 + y) * (size_t)in->w + x0) * 3, px + y * COLLAGE_TILE * 3, COLLAGE_TILE * 3);
  }
  return 0;
}
