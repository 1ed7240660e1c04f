/*
 * index.c - the LSH index of the collage (collage.h): the build (each bit's
 * threshold the median of its projection over a sample of the dataset,
 * each table the best of IX_DRAWS draws by its largest sample bucket,
 * buckets by a counting sort, capped to the tiles of lowest hash), the
 * bucket-size report, the index file (write, read, check), the keys and
 * shortlist of a block.  Dots run on 16-bit reduced histograms (a record
 * whose sums do not fit takes collage_key's path): keys equal collage_key's.
 */
#include "samples/collage/collage.h"
#include "benchlib/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define IX_DRAWS 8u                  /* draws tried for each table */
#define IX_SAMPLE 65536u             /* tiles the thresholds and the tuning see */
#define IX_CAP_STREAM 0x5eedull      /* hash stream of the cap's choice */

/* Everything a parallel step of the build or the report needs (about 52
 * KB: on the caller's stack). */
struct ix_job {
  const struct collage_dataset *ds;
  struct collage_index *ix;
  uint32_t L, K, cap;
  uint64_t n, nb;          /* tiles; off entries a table (2^K + 1) */
  int16_t *sample;         /* [S][48] reduced histograms of S sample tiles */
  uint64_t S;
  int8_t *draw_w;          /* [L*D][K*48] every draw's projections */
  int32_t draw_thr[COLLAGE_MAX_L * IX_DRAWS * COLLAGE_MAX_K]; /* [L*D][K] */
  uint32_t draw_max[COLLAGE_MAX_L * IX_DRAWS];               /* [L*D] largest sample bucket */
  uint32_t *keys;          /* [L][n] every tile's key (build) */
  uint32_t *counts;        /* [L][cstride] bucket sizes (relaxed adds) */
  uint64_t cstride, base[COLLAGE_MAX_L]; /* counts' row; base[t]: table t's first entry in ids */
};

/* ---------------- keys ---------------- */

/* The reduced histogram in 16 bits.  Returns 1 when every sum fits [0,
 * 32767] (always for a real histogram), 0 otherwise (r16 is then clamped,
 * and exact keys must come from collage_key over r32). */
static int ix_reduce16(const uint32_t *hist, int16_t *r16, int32_t *r32)
{
  int ok = 1;
  collage_reduce(hist, r32);
  for (unsigned d = 0; d < COLLAGE_DIMS; d++) {
    const int32_t v = r32[d] < 0 ? 0 : r32[d] > 32767 ? 32767 : r32[d];
    ok &= v == r32[d];
    r16[d] = (int16_t)v;
  }
  return ok;
}

/* dot(w, r) of 48 dimensions: exact in 32 bits (|w| <= 128, r < 2^15).
 * Pure arithmetic on data no thread writes meanwhile: left out of
 * ThreadSanitizer's instrumentation, which would make the host tests'
 * builds ten times slower. */
__attribute__((no_sanitize("thread"))) static int32_t ix_dot(const int8_t *w, const int16_t *r)
{
  int32_t s = 0;
  for (unsigned d = 0; d < COLLAGE_DIMS; d++)
    s += (int32_t)w[d] * r[d];
  return s;
}

/* The L keys of one histogram (cpu.c, cpugpu.cu, the driver, the build,
 * the tests): equal to collage_key table by table. */
void collage_index_keys(const struct collage_index *ix, const uint32_t *hist, uint32_t *keys)
{
  const uint32_t L = ix->hdr.L, K = ix->hdr.K;
  int16_t r16[COLLAGE_DIMS];
  int32_t r32[COLLAGE_DIMS];
  if (!ix_reduce16(hist, r16, r32)) {
    for (uint32_t t = 0; t < L; t++)
      keys[t] = collage_key(ix->w + (size_t)t * K * COLLAGE_DIMS, ix->thr + (size_t)t * K, K, r32);
    return;
  }
  for (uint32_t t = 0; t < L; t++) {
    uint32_t key = 0;
    for (uint32_t b = 0; b < K; b++) {
      const size_t row = ((size_t)t * K + b) * COLLAGE_DIMS;
      key |= (uint32_t)(ix_dot(ix->w + row, r16) > ix->thr[(size_t)t * K + b]) << b;
    }
    keys[t] = key;
  }
}

/* Sort a[0, n) of values below 2^bits ascending (the tuning's sample keys,
 * the shortlist): LSD radix of at most 11-bit digits, tmp: room for n. */
static void ix_radix(uint32_t *a, uint32_t *tmp, uint32_t n, unsigned bits)
{
  const unsigned passes = (bits + 10) / 11, width = passes ? (bits + passes - 1) / passes : 0;
  const uint32_t dm = (1u << width) - 1;
  uint32_t cnt[3][2048], *src = a, *dst = tmp;
  memset(cnt, 0, passes * sizeof(cnt[0]));
  for (uint32_t i = 0; i < n; i++)
    for (unsigned p = 0; p < passes; p++)
      cnt[p][(a[i] >> (p * width)) & dm]++;
  for (unsigned p = 0; p < passes; p++) {
    uint32_t at = 0, *s = src;
    for (uint32_t d = 0; d <= dm; d++) {
      const uint32_t c = cnt[p][d];
      cnt[p][d] = at;
      at += c;
    }
    for (uint32_t i = 0; i < n; i++)
      dst[cnt[p][(src[i] >> (p * width)) & dm]++] = src[i];
    src = dst;
    dst = s;
  }
  if (src != a)
    memcpy(a, src, n * sizeof(*a));
}

/* A tile and its hash: the cap keeps the cap lowest (hash, tile). */
struct ix_pair { uint64_t h; uint32_t id; };
static int ix_cmp_pair(const void *a, const void *b)
{
  const struct ix_pair *x = (const struct ix_pair *)a, *y = (const struct ix_pair *)b;
  return x->h != y->h ? (x->h < y->h ? -1 : 1) : (x->id > y->id) - (x->id < y->id);
}

/* Hash of len bytes: four lanes of 8-byte words, each word mixed into its
 * lane by collage_hash64, the last block zero-padded, the lanes and the
 * length folded (about 4 GB/s on one core). */
static uint64_t ix_hash(const uint8_t *p, uint64_t len, uint64_t salt)
{
  uint64_t a[4] = {salt, salt + 1, salt + 2, salt + 3};
  for (uint64_t i = 0; i < len; i += 32) {
    uint64_t w[4] = {0, 0, 0, 0};
    memcpy(w, p + i, len - i < 32 ? len - i : 32);
    for (int k = 0; k < 4; k++)
      a[k] = collage_hash64(a[k] ^ w[k]);
  }
  return collage_hash2(collage_hash2(a[0], a[1]) ^ len, collage_hash2(a[2], a[3]));
}

/* Bytes of the four arrays of an index with header h, in file order. */
static void ix_sizes(const struct collage_index_header *h, uint64_t sz[4])
{
  sz[0] = (uint64_t)h->L * h->K * COLLAGE_DIMS;
  sz[1] = (uint64_t)h->L * h->K * sizeof(int32_t);
  sz[2] = (uint64_t)h->L * ((1ull << h->K) + 1) * sizeof(uint32_t);
  sz[3] = h->nids * sizeof(uint32_t);
}

/* hdr.check of ix: the header bytes before `check`, then each array. */
static uint64_t ix_check(const struct collage_index *ix)
{
  const void *arr[4] = {ix->w, ix->thr, ix->off, ix->ids};
  uint64_t sz[4], h = ix_hash((const uint8_t *)&ix->hdr, offsetof(struct collage_index_header, check), 0);
  ix_sizes(&ix->hdr, sz);
  for (int a = 0; a < 4; a++)
    h = collage_hash2(h, ix_hash((const uint8_t *)arr[a], sz[a], (uint64_t)a + 1));
  return h;
}

/* ---------------- the build ---------------- */

/* Draw a of table t: K x 48 coefficients, each the sum of two uniforms in
 * [-63, 63] (centred, in [-126, 126]). */
static void ix_draw(uint64_t seed, uint32_t t, uint32_t a, uint32_t K, int8_t *w)
{
  const uint64_t stream = collage_hash2(seed, (uint64_t)t * IX_DRAWS + a);
  for (uint32_t i = 0; i < K * COLLAGE_DIMS; i++) {
    const uint64_t h = collage_hash2(stream, i);
    const int32_t u = (int32_t)(((h & 0xffffffffu) * 127) >> 32), v = (int32_t)(((h >> 32) * 127) >> 32);
    w[i] = (int8_t)(u + v - 126);
  }
}

/* bench_parallel_for body: reduced histograms of sample tiles [lo, hi)
 * (sample j is tile j * n / S: spread evenly). */
static int ix_sample_part(void *arg, uint64_t lo, uint64_t hi)
{
  struct ix_job *j = (struct ix_job *)arg;
  int32_t r32[COLLAGE_DIMS];
  for (uint64_t s = lo; s < hi; s++)
    ix_reduce16(collage_dataset_record(j->ds, s * j->n / j->S)->hist, j->sample + s * COLLAGE_DIMS, r32);
  return 0;
}

/* bench_parallel_for body: draws [lo, hi) (draw = t * D + a): projections,
 * thresholds (each bit's median over the sample), largest sample bucket. */
static int ix_tune_part(void *arg, uint64_t lo, uint64_t hi)
{
  struct ix_job *j = (struct ix_job *)arg;
  const uint32_t S = (uint32_t)j->S;
  const size_t kw = (size_t)j->K * COLLAGE_DIMS;
  int32_t *dot = malloc(S * sizeof(int32_t));
  uint32_t *key = malloc(S * 3 * sizeof(uint32_t)), *buf = key + S; /* buf: 2 S of sort room */
  int rc = dot && key ? 0 : -ENOMEM;
  for (uint64_t d = lo; d < hi && !rc; d++) {
    int8_t *w = j->draw_w + d * kw;
    ix_draw(j->ix->hdr.seed, (uint32_t)(d / IX_DRAWS), (uint32_t)(d % IX_DRAWS), j->K, w);
    memset(key, 0, S * sizeof(uint32_t));
    for (uint32_t b = 0; b < j->K; b++) {
      int32_t lo = INT32_MAX, hi = INT32_MIN;
      for (uint32_t s = 0; s < S; s++) {
        dot[s] = ix_dot(w + (size_t)b * COLLAGE_DIMS, j->sample + (size_t)s * COLLAGE_DIMS);
        lo = dot[s] < lo ? dot[s] : lo;
        hi = dot[s] > hi ? dot[s] : hi;
      }
      for (uint32_t s = 0; s < S; s++) /* the dots above the least, sorted */
        buf[s] = (uint32_t)(dot[s] - lo);
      ix_radix(buf, buf + S, S, hi > lo ? 32 - (unsigned)__builtin_clz((uint32_t)(hi - lo)) : 0);
      const int32_t thr = (int32_t)buf[(S - 1) / 2] + lo; /* the (lower) median */
      j->draw_thr[d * j->K + b] = thr;
      for (uint32_t s = 0; s < S; s++)
        key[s] |= (uint32_t)(dot[s] > thr) << b;
    }
    ix_radix(key, buf, S, j->K);
    uint32_t best = 0, run = 0;
    for (uint32_t s = 0; s < S; s++) {
      run = s && key[s] == key[s - 1] ? run + 1 : 1;
      best = run > best ? run : best;
    }
    j->draw_max[d] = best;
  }
  free(dot);
  free(key);
  return rc;
}

/* bench_parallel_for body: the keys of tiles [lo, hi), into keys[t][i]
 * when keys is there, and counted into counts[t * cstride + key] (relaxed
 * adds: plain counters, read after the join). */
static int ix_keys_part(void *arg, uint64_t lo, uint64_t hi)
{
  struct ix_job *j = (struct ix_job *)arg;
  uint32_t k[COLLAGE_MAX_L];
  for (uint64_t i = lo; i < hi; i++) {
    collage_index_keys(j->ix, collage_dataset_record(j->ds, i)->hist, k);
    for (uint32_t t = 0; t < j->L; t++) {
      if (j->keys)
        j->keys[t * j->n + i] = k[t];
      __atomic_fetch_add(j->counts + t * j->cstride + k[t], 1, __ATOMIC_RELAXED);
    }
  }
  return 0;
}

/* bench_parallel_for body: tables [lo, hi): the tiles of each bucket
 * (ascending: a counting sort in tile order), capped to the cap tiles of
 * lowest collage_hash2(seed ^ IX_CAP_STREAM, tile), into ids from the
 * table's base; the off row becomes global offsets. */
static int ix_fill_part(void *arg, uint64_t lo, uint64_t hi)
{
  struct ix_job *j = (struct ix_job *)arg;
  const uint64_t nk = j->nb - 1, stream = j->ix->hdr.seed ^ IX_CAP_STREAM;
  uint32_t *pos = malloc(nk * sizeof(uint32_t)), *sorted = malloc(j->n * sizeof(uint32_t));
  struct ix_pair *pair = NULL; /* room for npair: the largest capped bucket so far */
  uint64_t npair = 0;
  int rc = pos && sorted ? 0 : -ENOMEM;
  for (uint64_t t = lo; t < hi && !rc; t++) {
    uint32_t *off = j->ix->off + t * j->nb, at = 0;
    const uint32_t *key = j->keys + t * j->n;
    for (uint64_t b = 0; b < nk; b++) {
      pos[b] = at;
      at += off[b];
    }
    for (uint64_t i = 0; i < j->n; i++)
      sorted[pos[key[i]]++] = (uint32_t)i;
    uint64_t out = j->base[t], from = 0;
    for (uint64_t b = 0; b < nk; b++) {
      const uint32_t c = off[b];
      off[b] = (uint32_t)out;
      if (c <= j->cap) {
        memcpy(j->ix->ids + out, sorted + from, c * sizeof(uint32_t));
        out += c;
      } else {
        if (c > npair) {
          struct ix_pair *p = realloc(pair, (size_t)c * sizeof(*pair));
          if (!p) {
            rc = -ENOMEM;
            break;
          }
          pair = p, npair = c;
        }
        for (uint32_t m = 0; m < c; m++) /* (hash, tile): unique */
          pair[m].h = collage_hash2(stream, sorted[from + m]), pair[m].id = sorted[from + m];
        qsort(pair, c, sizeof(*pair), ix_cmp_pair);
        for (uint32_t m = 0; m < j->cap; m++)
          j->ix->ids[out + m] = pair[m].id;
        ix_radix(j->ix->ids + out, sorted + from, j->cap, 32); /* ascending; sorted[from..] is spent */
        out += j->cap;
      }
      from += c;
    }
    off[nk] = (uint32_t)out;
  }
  free(pos);
  free(sorted);
  free(pair);
  return rc;
}

/* K for n tiles (options.c, the tests): round(log2(n / 16)) in [8, MAX_K],
 * in integers: the largest k with 2^(2k + 7) <= n^2. */
uint32_t collage_default_k(uint64_t n)
{
  const unsigned __int128 sq = (unsigned __int128)n * n;
  const uint64_t top = (uint64_t)(sq >> 64), low = (uint64_t)sq;
  const unsigned m = top ? 127 - (unsigned)__builtin_clzll(top) : low ? 63 - (unsigned)__builtin_clzll(low) : 0;
  const unsigned k = m >= 7 ? (m - 7) / 2 : 0;
  return k < 8 ? 8u : k > COLLAGE_MAX_K ? COLLAGE_MAX_K : k;
}

/* The build (the driver when no index file is there, the tests).  0;
 * -EINVAL for L, K or cap out of range or an empty dataset; -ENOMEM;
 * -EOVERFLOW when the entries pass 2^32.  One line of tuning on log. */
int collage_index_build(const struct collage_dataset *ds, uint32_t L, uint32_t K, uint32_t cap, uint64_t seed,
                        int threads, struct collage_index *ix, FILE *log)
{
  struct ix_job j = {0};
  int rc = -ENOMEM;
  if (!ix)
    return -EINVAL;
  memset(ix, 0, sizeof(*ix));
  if (!ds || !ds->map || ds->n < 1 || ds->n >= COLLAGE_NONE || L < 1 || L > COLLAGE_MAX_L || K < 1 ||
      K > COLLAGE_MAX_K || cap < 1 || cap > COLLAGE_MAX_CAP) {
    if (log)
      fprintf(log, "collage: index: L = %u (1..%u), K = %u (1..%u), cap = %u (1..%u) over %llu tiles: out of range\n",
              L, COLLAGE_MAX_L, K, COLLAGE_MAX_K, cap, COLLAGE_MAX_CAP, ds ? (unsigned long long)ds->n : 0ull);
    return -EINVAL;
  }
  const double t0 = bench_now();
  j.ds = ds, j.ix = ix;
  j.L = L, j.K = K, j.cap = cap, j.n = ds->n, j.nb = (1ull << K) + 1;
  j.S = ds->n < IX_SAMPLE ? ds->n : IX_SAMPLE;
  memcpy(ix->hdr.magic, COLLAGE_INDEX_MAGIC, sizeof(ix->hdr.magic));
  ix->hdr.version = COLLAGE_INDEX_VERSION;
  ix->hdr.L = L, ix->hdr.K = K, ix->hdr.cap = cap;
  ix->hdr.n = ds->n, ix->hdr.dataset_id = ds->hdr.id, ix->hdr.seed = seed;
  const size_t kw = (size_t)K * COLLAGE_DIMS;
  ix->w = malloc(L * kw);
  ix->thr = malloc((size_t)L * K * sizeof(int32_t));
  ix->off = malloc((size_t)L * j.nb * sizeof(uint32_t));
  j.sample = malloc(j.S * COLLAGE_DIMS * sizeof(int16_t));
  j.draw_w = malloc((size_t)L * IX_DRAWS * kw);
  j.keys = malloc((size_t)j.n * L * sizeof(uint32_t));
  if (!ix->w || !ix->thr || !ix->off || !j.sample || !j.draw_w || !j.keys)
    goto out;
  /* the sample, then every draw of every table; keep each table's best */
  if ((rc = bench_parallel_for(j.S, 1024, threads, ix_sample_part, &j)) != 0 ||
      (rc = bench_parallel_for((uint64_t)L * IX_DRAWS, 1, threads, ix_tune_part, &j)) != 0)
    goto out;
  uint64_t sum_best = 0, sum_first = 0;
  uint32_t lo = UINT32_MAX, hi = 0;
  for (uint32_t t = 0; t < L; t++) {
    uint32_t a = 0;
    for (uint32_t d = 1; d < IX_DRAWS; d++)
      if (j.draw_max[t * IX_DRAWS + d] < j.draw_max[t * IX_DRAWS + a])
        a = d;
    const uint64_t d = (uint64_t)t * IX_DRAWS + a;
    memcpy(ix->w + t * kw, j.draw_w + d * kw, kw);
    memcpy(ix->thr + (size_t)t * K, j.draw_thr + d * K, K * sizeof(int32_t));
    sum_best += j.draw_max[d];
    sum_first += j.draw_max[(uint64_t)t * IX_DRAWS];
    lo = j.draw_max[d] < lo ? j.draw_max[d] : lo;
    hi = j.draw_max[d] > hi ? j.draw_max[d] : hi;
  }
  const double t1 = bench_now();
  /* every tile's keys, the bucket sizes into the off rows, each table's
   * first entry after the cap, the buckets */
  j.counts = ix->off, j.cstride = j.nb;
  memset(ix->off, 0, (size_t)L * j.nb * sizeof(uint32_t));
  if ((rc = bench_parallel_for(j.n, 4096, threads, ix_keys_part, &j)) != 0)
    goto out;
  uint64_t nids = 0;
  for (uint64_t t = 0; t < L; t++) {
    j.base[t] = nids;
    for (uint64_t b = 0; b + 1 < j.nb; b++)
      nids += ix->off[t * j.nb + b] < cap ? ix->off[t * j.nb + b] : cap;
  }
  if (nids > UINT32_MAX) {
    if (log)
      fprintf(log, "collage: index: %llu entries: more than 32-bit offsets hold (lower L or cap)\n",
              (unsigned long long)nids);
    rc = -EOVERFLOW;
    goto out;
  }
  ix->hdr.nids = nids;
  rc = -ENOMEM;
  if (!(ix->ids = malloc(nids ? nids * sizeof(uint32_t) : 4)))
    goto out;
  const double t2 = bench_now();
  if ((rc = bench_parallel_for(L, 1, threads, ix_fill_part, &j)) != 0)
    goto out;
  ix->hdr.check = ix_check(ix);
  if (log)
    fprintf(log, "collage: index: %u tables of %u bits, each the best of %u draws by its largest bucket over a "
            "%llu-tile sample: largest %u..%u, mean %.1f (first draws: %.1f); tuned in %.2f s, keys %.2f s, "
            "buckets %.2f s\n", L, K, IX_DRAWS, (unsigned long long)j.S, lo, hi, (double)sum_best / L,
            (double)sum_first / L, t1 - t0, t2 - t1, bench_now() - t2);
out:
  free(j.sample);
  free(j.draw_w);
  free(j.keys);
  if (rc)
    collage_index_free(ix);
  return rc;
}

/* Free what a build or a read allocated (the driver, the tests). */
void collage_index_free(struct collage_index *ix)
{
  if (ix) {
    free(ix->w), free(ix->thr), free(ix->off), free(ix->ids);
    memset(ix, 0, sizeof(*ix));
  }
}

/* ---------------- the report ---------------- */

/* The bucket sizes before the cap, from every tile's keys recomputed on
 * every core (the driver, after a build or a read).  A zero report when
 * ix does not belong to ds or memory runs out. */
void collage_index_stats(const struct collage_index *ix, const struct collage_dataset *ds,
                         struct collage_index_report *rep)
{
  struct ix_job j = {0};
  if (!rep)
    return;
  memset(rep, 0, sizeof(*rep));
  if (!ix || !ix->w || !ix->thr || !ds || !ds->map || ds->n != ix->hdr.n || ds->n == 0)
    return;
  j.ds = ds, j.ix = (struct collage_index *)ix;
  j.L = ix->hdr.L, j.n = ds->n, j.nb = (1ull << ix->hdr.K) + 1, j.cstride = j.nb - 1;
  const uint64_t total = (uint64_t)j.L * j.cstride;
  j.counts = calloc(total, sizeof(uint32_t));
  if (j.counts) {
    bench_parallel_for(j.n, 4096, 0, ix_keys_part, &j);
    uint64_t used = 0, dropped = 0;
    for (uint64_t e = 0; e < total; e++) {
      const uint32_t c = j.counts[e];
      if (!c)
        continue;
      j.counts[used++] = c; /* the non-empty sizes, packed to the front */
      dropped += c > ix->hdr.cap ? c - ix->hdr.cap : 0;
      rep->max = c > rep->max ? c : rep->max;
    }
    rep->mean = (double)(j.n * j.L) / (double)used;
    rep->empty = (double)(total - used) / (double)total;
    rep->capped = (double)dropped / (double)(j.n * j.L);
    rep->worst_share = (double)rep->max / (double)j.n;
    /* the 99th percentile: the size where the count of smaller-or-equal
     * non-empty buckets reaches ceil(0.99 used) */
    uint64_t *of = calloc((size_t)rep->max + 1, sizeof(uint64_t)), seen = 0;
    for (uint64_t e = 0; of && e < used; e++)
      of[j.counts[e]]++;
    for (uint32_t c = 1; of && c <= rep->max && seen * 100 < used * 99; c++)
      seen += of[rep->p99 = c];
    free(of);
  }
  free(j.counts);
}

/* ---------------- the file ---------------- */

/* Write ix to path (path.tmp, renamed when complete; the driver after a
 * build).  0 or -errno; a failed write leaves no file. */
int collage_index_write(const char *path, const struct collage_index *ix)
{
  char tmp[4200];
  if (!path || !ix || !ix->w || !ix->thr || !ix->off || !ix->ids)
    return -EINVAL;
  if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
    return -ENAMETOOLONG;
  struct collage_index_header h = ix->hdr;
  const void *arr[4] = {ix->w, ix->thr, ix->off, ix->ids};
  uint64_t sz[4], at = sizeof(h);
  h.check = ix_check(ix);
  ix_sizes(&h, sz);
  const int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return -errno;
  int rc = bench_pio_full(fd, &h, sizeof(h), 0, 1);
  for (int a = 0; a < 4 && !rc; at += sz[a++])
    rc = bench_pio_full(fd, (void *)arr[a], sz[a], at, 1);
  if (close(fd) != 0 && !rc)
    rc = -errno;
  if (!rc && rename(tmp, path) != 0)
    rc = -errno;
  if (rc)
    unlink(tmp);
  return rc;
}

/* collage_index_read's way out: the message, the code. */
#define IX_FAIL(code, ...)                                                                                         \
  do {                                                                                                             \
    rc = (code), snprintf(err, errlen, __VA_ARGS__);                                                               \
    goto out;                                                                                                      \
  } while (0)

/* Read and check an index file against its dataset (the driver, the
 * tests).  0; -ENOENT; -EINVAL: not an index, another version, a bad
 * header or structure, or built for another dataset; -EIO: truncated, the
 * wrong size, a read error, or failing its check; -ENOMEM. */
int collage_index_read(const char *path, const struct collage_dataset *ds, struct collage_index *ix, char *err,
                       size_t errlen)
{
  struct collage_index_header h;
  struct stat st;
  uint64_t sz[4], at = sizeof(h);
  int rc = 0, fd = -1;
  char none[1];
  if (!err || !errlen)
    err = none, errlen = sizeof(none);
  if (!ix)
    return -EINVAL;
  memset(ix, 0, sizeof(*ix));
  memset(&h, 0, sizeof(h));
  if (!path || !ds)
    IX_FAIL(-EINVAL, "collage index: no file or no dataset given");
  if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0 || fstat(fd, &st) != 0)
    IX_FAIL(-errno, "%s: %s", path, rc == -ENOENT ? "no such index file" : strerror(-rc));
  const uint64_t size = (uint64_t)st.st_size, got = size < sizeof(h) ? size : sizeof(h);
  if ((rc = bench_pio_full(fd, &h, got, 0, 0)) != 0)
    IX_FAIL(rc, "%s: cannot read the header: %s", path, strerror(-rc));
  if (memcmp(h.magic, COLLAGE_INDEX_MAGIC, got < 16 ? got : 16) != 0)
    IX_FAIL(-EINVAL, "%s: not a collage index (no %s magic)", path, COLLAGE_INDEX_MAGIC);
  if (got < sizeof(h))
    IX_FAIL(-EIO, "%s: truncated (%llu bytes, not even a header)", path, (unsigned long long)size);
  if (h.version != COLLAGE_INDEX_VERSION)
    IX_FAIL(-EINVAL, "%s: an index of version %u, this program reads version %u: rebuild it", path, h.version,
            COLLAGE_INDEX_VERSION);
  if (h.L < 1 || h.L > COLLAGE_MAX_L || h.K < 1 || h.K > COLLAGE_MAX_K || h.cap < 1 || h.cap > COLLAGE_MAX_CAP ||
      h.nids > h.n * h.L || h.nids > UINT32_MAX)
    IX_FAIL(-EINVAL, "%s: a bad header (L = %u, K = %u, cap = %u, %llu entries for %llu tiles)", path, h.L, h.K,
            h.cap, (unsigned long long)h.nids, (unsigned long long)h.n);
  if (h.n != ds->n || h.dataset_id != ds->hdr.id)
    IX_FAIL(-EINVAL,
            "%s: built for another dataset (%llu tiles, id %016llx; %s has %llu tiles, id %016llx): rebuild it or "
            "pass the dataset it was made from",
            path, (unsigned long long)h.n, (unsigned long long)h.dataset_id, ds->path, (unsigned long long)ds->n,
            (unsigned long long)ds->hdr.id);
  ix_sizes(&h, sz);
  if (size != sizeof(h) + sz[0] + sz[1] + sz[2] + sz[3])
    IX_FAIL(-EIO, "%s: %llu bytes where its header makes %llu: truncated or damaged, rebuild it", path,
            (unsigned long long)size, (unsigned long long)(sizeof(h) + sz[0] + sz[1] + sz[2] + sz[3]));
  ix->hdr = h;
  ix->w = malloc(sz[0]);
  ix->thr = malloc(sz[1]);
  ix->off = malloc(sz[2]);
  ix->ids = malloc(sz[3] ? sz[3] : 4);
  if (!ix->w || !ix->thr || !ix->off || !ix->ids)
    IX_FAIL(-ENOMEM, "%s: no memory for the index (%llu bytes)", path, (unsigned long long)size);
  void *arr[4] = {ix->w, ix->thr, ix->off, ix->ids};
  for (int a = 0; a < 4 && !rc; at += sz[a++])
    rc = bench_pio_full(fd, arr[a], sz[a], at, 0);
  if (rc)
    IX_FAIL(rc, "%s: read failed: %s", path, strerror(-rc));
  if (ix_check(ix) != h.check)
    IX_FAIL(-EIO, "%s: fails its check (a damaged file): rebuild it", path);
  /* the structure: offsets ascending within the ids, a table starting where
   * the one before ends, buckets at most cap, ids ascending and below n */
  const uint64_t nb = (1ull << h.K) + 1;
  int bad = ix->off[0] != 0 || ix->off[h.L * nb - 1] != h.nids;
  for (uint64_t e = 0; e + 1 < h.L * nb && !bad; e++) {
    const uint32_t lo = ix->off[e], hi = ix->off[e + 1];
    bad = e % nb == nb - 1 ? hi != lo : hi < lo || hi > h.nids || hi - lo > h.cap;
    for (uint32_t i = lo; e % nb != nb - 1 && i < hi && !bad; i++)
      bad = ix->ids[i] >= h.n || (i > lo && ix->ids[i] <= ix->ids[i - 1]);
  }
  if (bad)
    IX_FAIL(-EINVAL, "%s: a bucket out of order, out of range or over the cap: rebuild it", path);
out:
  if (fd >= 0)
    close(fd);
  if (rc)
    collage_index_free(ix);
  return rc;
}

/* ---------------- the shortlist ---------------- */

/* The union of the keys' buckets (cpu.c, cpugpu.cu: many threads at once):
 * the buckets gathered into out, sorted (ix_radix with a stack buffer: 90
 * KB of stack in all), each tile once.  Returns the count. */
uint32_t collage_shortlist(const struct collage_index *ix, const uint32_t *keys, uint32_t *out)
{
  uint32_t tmp[COLLAGE_MAX_L * COLLAGE_MAX_CAP], n = 0, k = 0;
  const uint64_t nb = (1ull << ix->hdr.K) + 1, top = ix->hdr.n > 1 ? ix->hdr.n - 1 : 1;
  for (uint32_t t = 0; t < ix->hdr.L; t++) {
    const uint32_t *o = ix->off + t * nb + (keys[t] & (uint32_t)(nb - 2)), c = o[1] - o[0];
    memcpy(out + n, ix->ids + o[0], c * sizeof(*out));
    n += c;
  }
  ix_radix(out, tmp, n, 64 - (unsigned)__builtin_clzll(top));
  for (uint32_t i = 0; i < n; i++) /* in place: k <= i */
    if (!k || out[i] != out[k - 1])
      out[k++] = out[i];
  return k;
}
