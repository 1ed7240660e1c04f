/*
 * cpu.c - the cpu version of the collage (collage_cpu_run): every block of
 * the picture on every core (bench_parallel_for, CPU_CHUNK blocks a piece
 * so uneven shortlists balance); for each block its histogram, its L keys,
 * its shortlist, and the squared L2 distance to each candidate's histogram
 * read through the dataset's mmap; the lowest collage_pack(dist, tile)
 * wins.  The distance is written for the vectorizer (32-bit lanes) and
 * built twice: for the baseline x86-64 target and for AVX2, picked at run
 * time; both return exactly collage_dist's value.
 */
#include "samples/collage/collage.h"
#include "benchlib/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define CPU_CHUNK 8u        /* blocks a piece of the parallel loop */
#define CPU_PREFETCH 4u     /* cache lines of the next candidate fetched ahead */

typedef uint32_t (*cpu_dist_fn)(const uint32_t *a, const uint32_t *b);

/* The squared L2 distance of two histograms in wrapping 32-bit arithmetic:
 * (a - b)^2 mod 2^32 summed mod 2^32 is collage_dist's value exactly, and
 * the loop vectorizes into 32-bit lanes (declared in collage.h; the tests
 * compare it with collage_dist).  Pure reads of data no
 * thread writes during a run (the mmap'd dataset, the block's histogram):
 * left out of ThreadSanitizer's instrumentation, which slows it 20x. */
__attribute__((no_sanitize("thread"))) uint32_t collage_cpu_dist_base(const uint32_t *a, const uint32_t *b)
{
  uint32_t s = 0;
  for (unsigned i = 0; i < COLLAGE_HIST; i++) {
    const uint32_t d = a[i] - b[i];
    s += d * d;
  }
  return s;
}

#if defined(__x86_64__) || defined(__i386__)
#define CPU_HAVE_AVX2 1
/* The same loop compiled for AVX2 (8 lanes); called only where the CPU has
 * it (collage_cpu_dist_pick). */
__attribute__((target("avx2"), no_sanitize("thread"))) uint32_t collage_cpu_dist_avx2(const uint32_t *a, const uint32_t *b)
{
  uint32_t s = 0;
  for (unsigned i = 0; i < COLLAGE_HIST; i++) {
    const uint32_t d = a[i] - b[i];
    s += d * d;
  }
  return s;
}
#endif

/* The distance this CPU runs best: 1 when it is the AVX2 one.  Exported
 * in collage.h, like the two above. */
int collage_cpu_dist_pick(cpu_dist_fn *fn)
{
#ifdef CPU_HAVE_AVX2
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2")) {
    *fn = collage_cpu_dist_avx2;
    return 1;
  }
#endif
  *fn = collage_cpu_dist_base;
  return 0;
}

/* What the threads share.  The counters are summed with relaxed adds at
 * the end of each piece and read after bench_parallel_for's join. */
struct cpu_job {
  const struct collage_dataset *ds;
  const struct collage_index *ix;
  const struct collage_image *in;
  uint32_t *choice;
  cpu_dist_fn dist;
  uint64_t bw;                        /* blocks a row */
  uint64_t keys_ns, shortlist_ns, dist_ns, candidates, empty;
};

/* The nearest candidate of one block's histogram: the lowest
 * collage_pack(dist, tile) over list[0, n), the next candidate's first
 * lines fetched while this one's distance runs. */
static uint64_t cpu_nearest(const struct cpu_job *j, const uint32_t *hist, const uint32_t *list, uint32_t n)
{
  uint64_t best = COLLAGE_NO_BEST;
  for (uint32_t k = 0; k < n; k++) {
    if (k + 1 < n) {
      const char *next = (const char *)collage_dataset_record(j->ds, list[k + 1])->hist;
      for (unsigned l = 0; l < CPU_PREFETCH; l++)
        __builtin_prefetch(next + 64 * l);
    }
    const uint64_t p = collage_pack(j->dist(hist, collage_dataset_record(j->ds, list[k])->hist), list[k]);
    best = p < best ? p : best;
  }
  return best;
}

/* bench_parallel_for body: blocks [lo, hi).  0 or -ENOMEM. */
static int cpu_blocks(void *arg, uint64_t lo, uint64_t hi)
{
  struct cpu_job *j = (struct cpu_job *)arg;
  const struct collage_image *in = j->in;
  uint32_t hist[COLLAGE_HIST], keys[COLLAGE_MAX_L];
  uint32_t *list = malloc((size_t)j->ix->hdr.L * j->ix->hdr.cap * sizeof(uint32_t));
  uint64_t cand = 0, empty = 0;
  double tk = 0, ts = 0, td = 0;
  if (!list)
    return -ENOMEM;
  for (uint64_t b = lo; b < hi; b++) {
    const uint64_t bx = b % j->bw, by = b / j->bw;
    const double t0 = bench_now();
    collage_histogram(in->rgb + (by * COLLAGE_TILE * (uint64_t)in->w + bx * COLLAGE_TILE) * 3, COLLAGE_TILE,
                      COLLAGE_TILE, (size_t)in->w * 3, hist);
    collage_index_keys(j->ix, hist, keys);
    const double t1 = bench_now();
    const uint32_t n = collage_shortlist(j->ix, keys, list);
    const double t2 = bench_now();
    j->choice[b] = collage_unpack_tile(cpu_nearest(j, hist, list, n));
    const double t3 = bench_now();
    tk += t1 - t0, ts += t2 - t1, td += t3 - t2;
    cand += n;
    empty += n == 0;
  }
  free(list);
  /* relaxed: plain sums, read by collage_cpu_run after the join */
  __atomic_fetch_add(&j->keys_ns, (uint64_t)(tk * 1e9), __ATOMIC_RELAXED);
  __atomic_fetch_add(&j->shortlist_ns, (uint64_t)(ts * 1e9), __ATOMIC_RELAXED);
  __atomic_fetch_add(&j->dist_ns, (uint64_t)(td * 1e9), __ATOMIC_RELAXED);
  __atomic_fetch_add(&j->candidates, cand, __ATOMIC_RELAXED);
  __atomic_fetch_add(&j->empty, empty, __ATOMIC_RELAXED);
  return 0;
}

/* The cpu version (the driver, the tests; the reference every other
 * version is checked against).  threads <= 0: bench_host_threads().
 * 0; -EINVAL for a missing argument, a picture smaller than one block or
 * an index of another dataset; -ENOMEM.  st (may be NULL) gets the wall
 * time, the phases summed over threads, blocks, candidates, empty blocks. */
int collage_cpu_run(const struct collage_dataset *ds, const struct collage_index *ix,
                    const struct collage_image *in, int threads, uint32_t *choice, struct collage_stats *st)
{
  struct cpu_job j;
  if (!ds || !ds->map || !ix || !ix->off || !ix->ids || !ix->w || !ix->thr || !in || !in->rgb || !choice ||
      in->w < (int)COLLAGE_TILE || in->h < (int)COLLAGE_TILE || ix->hdr.n != ds->n ||
      ix->hdr.dataset_id != ds->hdr.id)
    return -EINVAL;
  const double t0 = bench_now();
  memset(&j, 0, sizeof(j));
  j.ds = ds;
  j.ix = ix;
  j.in = in;
  j.choice = choice;
  j.bw = (uint64_t)in->w / COLLAGE_TILE;
  collage_cpu_dist_pick(&j.dist);
  const uint64_t blocks = collage_blocks(in);
  const int rc = bench_parallel_for(blocks, CPU_CHUNK, threads > 0 ? threads : bench_host_threads(), cpu_blocks, &j);
  if (st) {
    memset(st, 0, sizeof(*st));
    st->seconds = bench_now() - t0;
    st->keys_s = (double)j.keys_ns * 1e-9;
    st->shortlist_s = (double)j.shortlist_ns * 1e-9;
    st->dist_s = (double)j.dist_ns * 1e-9;
    st->blocks = blocks;
    st->candidates = j.candidates;
    st->empty = j.empty;
  }
  return rc;
}
