/*
 * collage.h - the LSH image collage: the contract every part of the sample
 * shares (file formats, the tile, histogram, key and distance rules, and the
 * functions of each module).
 *
 * For every 32x32 block of an input picture: its RGB histogram (3 x 256
 * counts), its reduced histogram (3 x 16 sums), one K-bit key in each of L
 * LSH tables, the union of those buckets (the shortlist: unique tile
 * indices), each candidate's histogram read from the dataset file, and the
 * candidate nearest by squared L2 distance.  Every quantity is an integer,
 * so the CPU and every GPU version compute the same distances and choose
 * the same tile: the lowest (distance, tile index) pair (collage_pack).
 *
 * Modules (one concern each):
 *   image.c    PNG/JPEG read, PNG write, resize, crop to whole blocks
 *   seeds.c    seed photographs: fetch from Debian packages, decode, or a
 *              procedural set when no archive is reachable
 *   dataset.c  tile synthesis, the dataset file (build, open, check), input
 *              pictures, rendering the output collage
 *   index.c    the LSH tables: build, tune, report, file, shortlists
 *   cpu.c      the cpu version (every core, dataset through mmap)
 *   gpu.cu     gpufs-block, gpufs-warp, gpufs-gread; the index on the GPU
 *   cpugpu.cu  the cpu-gpu split
 *   main.cu    the driver (options, runs, checks, table, rows)
 *
 * Plain C (the .c files build with gcc, and with ThreadSanitizer for the host
 * tests); the inline rules below also compile for the device under nvcc.
 */
#ifndef COLLAGE_H
#define COLLAGE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __CUDACC__
#define COLLAGE_HD __host__ __device__ __forceinline__
#else
#define COLLAGE_HD static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------- sizes and limits ---------------- */
#define COLLAGE_TILE 32u                          /* tile and block side, pixels */
#define COLLAGE_PIXELS (COLLAGE_TILE * COLLAGE_TILE)
#define COLLAGE_BINS 256u                         /* histogram bins per channel */
#define COLLAGE_HIST (3u * COLLAGE_BINS)          /* 768 counts: R[256] G[256] B[256] */
#define COLLAGE_RBINS 16u                         /* reduced bins per channel */
#define COLLAGE_DIMS (3u * COLLAGE_RBINS)         /* 48: the LSH input */
#define COLLAGE_RECORD 4096u                      /* bytes per record, 4 KiB aligned */
#define COLLAGE_MAX_L 64u                         /* LSH tables at most */
#define COLLAGE_MAX_K 24u                         /* key bits at most */
#define COLLAGE_MAX_CAP 256u                      /* bucket cap at most */
#define COLLAGE_DEFAULT_L 32u
#define COLLAGE_DEFAULT_CAP 64u
#define COLLAGE_NONE 0xffffffffu                  /* choice of a block with no candidate */
#define COLLAGE_SEED_MAX_SIDE 1024                /* seeds are scaled down to fit 1024x1024 */
#define COLLAGE_MAX_SEEDS 64
#define COLLAGE_GPU_MAX_SHORTLIST 4096u           /* L * cap at most on the GPU (shared memory) */
#define COLLAGE_DATASET_SEED 0xc011a6eull         /* the dataset's hash stream (collage, collage_mpi) */
#define COLLAGE_INDEX_SEED 0x15aull               /* the projections' hash stream (collage, collage_mpi) */

/* ---------------- the shared rules (host and device) ---------------- */

/* A counter-based 64-bit hash (splitmix64 finalizer of x): the only source of
 * randomness of the sample, so every value can be regenerated anywhere. */
COLLAGE_HD uint64_t collage_hash64(uint64_t x)
{
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* hash of (a, b): streams of independent values (a: stream, b: index). */
COLLAGE_HD uint64_t collage_hash2(uint64_t a, uint64_t b)
{
  return collage_hash64(collage_hash64(a) ^ (b * 0xd1b54a32d192ed03ull));
}

/* The reduced histogram: r[c*16 + j] = sum of hist[c*256 + 16*j .. +15]. */
COLLAGE_HD void collage_reduce(const uint32_t *hist, int32_t *r)
{
  for (unsigned d = 0; d < COLLAGE_DIMS; d++) {
    int32_t s = 0;
    for (unsigned k = 0; k < 16; k++)
      s += (int32_t)hist[d * 16 + k];
    r[d] = s;
  }
}

/* One table's key: bit b is set when dot(w[b], r) > thr[b].
 * w: K x 48 coefficients of the table, thr: K thresholds. */
COLLAGE_HD uint32_t collage_key(const int8_t *w, const int32_t *thr, unsigned K, const int32_t *r)
{
  uint32_t key = 0;
  for (unsigned b = 0; b < K; b++) {
    int32_t dot = 0;
    for (unsigned d = 0; d < COLLAGE_DIMS; d++)
      dot += (int32_t)w[b * COLLAGE_DIMS + d] * r[d];
    key |= (uint32_t)(dot > thr[b]) << b;
  }
  return key;
}

/* Squared L2 distance of two histograms (at most 6 * 1024^2: fits 32 bits).
 * The reference; versions may vectorize or split it, the sum is exact. */
COLLAGE_HD uint32_t collage_dist(const uint32_t *a, const uint32_t *b)
{
  uint32_t s = 0;
  for (unsigned i = 0; i < COLLAGE_HIST; i++) {
    int32_t d = (int32_t)a[i] - (int32_t)b[i];
    s += (uint32_t)(d * d);
  }
  return s;
}

/* The tie-break rule: a candidate as one 64-bit number, the smallest wins
 * (distance first, then the lower tile index).  COLLAGE_NO_BEST: none yet. */
#define COLLAGE_NO_BEST 0xffffffffffffffffull
COLLAGE_HD uint64_t collage_pack(uint32_t dist, uint32_t tile)
{
  return ((uint64_t)dist << 32) | tile;
}
COLLAGE_HD uint32_t collage_unpack_tile(uint64_t best)
{
  return best == COLLAGE_NO_BEST ? COLLAGE_NONE : (uint32_t)best;
}

/* ---------------- pictures (image.c) ---------------- */

/* RGB, 8 bits a channel, rows of w*3 bytes, no padding. */
struct collage_image {
  int w, h;
  uint8_t *rgb;
};

/* Read a PNG or JPEG (told apart by their magic bytes; any bit depth, grey
 * or palette or alpha, converted to RGB8).  0, or -errno (-ENOENT ...,
 * -EINVAL for an empty, truncated or undecodable file) with a message in
 * err. */
int collage_image_read(const char *path, struct collage_image *out, char *err, size_t errlen);
/* Write img as an 8-bit RGB PNG.  0 or -errno. */
int collage_image_write_png(const char *path, const struct collage_image *img);
/* Allocate a w x h picture (zeroed).  0 or -ENOMEM / -EINVAL. */
int collage_image_alloc(struct collage_image *img, int w, int h);
void collage_image_free(struct collage_image *img);
/* Bilinear resize into a new picture (fixed-point: the same bytes
 * everywhere).  0 or -ENOMEM / -EINVAL. */
int collage_image_resize(const struct collage_image *in, int w, int h, struct collage_image *out);
/* Crop to whole 32x32 blocks (keeping the top-left).  Returns 1 when it
 * cropped, 0 when the size was already whole, -EINVAL for a picture smaller
 * than one block. */
int collage_image_crop_blocks(struct collage_image *img);

/* ---------------- seed photographs (seeds.c) ---------------- */

struct collage_seeds {
  int n;
  struct collage_image img[COLLAGE_MAX_SEEDS]; /* each at most 1024 x 1024 */
  uint64_t id;          /* hash of every seed's size and pixels, in order */
  char source[32];      /* "debian" or "procedural" */
};

/* Fetch seed photographs into dir: `apt-get download` of the packages in
 * COLLAGE_SEED_PACKAGES, `dpkg -x` each, the pictures copied to
 * dir/<package>-<name>, the rest removed.  Messages go to log.  0; -ENOENT
 * when apt-get or dpkg is missing or no archive is reachable (the message
 * says so); nothing is fetched when dir already holds pictures. */
#define COLLAGE_SEED_PACKAGES "python3-skimage mate-backgrounds"
int collage_seeds_fetch(const char *dir, FILE *log);
/* Decode every .png/.jpg/.jpeg of dir (sorted by name, at most
 * COLLAGE_MAX_SEEDS, each scaled down to fit 1024 x 1024); when dir holds
 * none (or is NULL), the procedural set with a clear message on log.  0 or
 * -errno (an undecodable file is skipped with a message). */
int collage_seeds_load(const char *dir, struct collage_seeds *out, FILE *log);
/* The procedural set: n deterministic pictures (gradients, shapes, noise). */
int collage_seeds_procedural(int n, struct collage_seeds *out);
void collage_seeds_free(struct collage_seeds *s);

/* ---------------- the dataset (dataset.c) ---------------- */

/* How tile i is regenerated from the seeds: a crop of a seed, scaled to
 * 32 x 32, flipped, colour-jittered. */
struct collage_tile {
  uint32_t seed;       /* index into the seed set */
  uint16_t x, y;       /* crop origin in the seed */
  uint16_t size;       /* crop side, 32 .. min(seed w, h) / 2 (the whole side of a small seed) */
  uint8_t flip;        /* bit 0: mirror left-right, bit 1: top-bottom */
  uint8_t pad;
  int16_t gain[3];     /* out = clamp((v * gain >> 8) + offset), 256 = 1.0 */
  int16_t offset[3];
};

/* One 4 KiB record per tile: its histogram first (what the search reads). */
struct collage_record {
  uint32_t hist[COLLAGE_HIST]; /* 3072 bytes */
  struct collage_tile tile;
  uint64_t index;              /* i: a record knows its place */
  uint64_t check;              /* collage_record_check of the bytes above */
  uint8_t pad[COLLAGE_RECORD - COLLAGE_HIST * 4 - sizeof(struct collage_tile) - 16];
};

#define COLLAGE_DATASET_MAGIC "GPUFS-COLLAGE-DS"
#define COLLAGE_DATASET_VERSION 1u
/* The file's first 4 KiB; record i is at COLLAGE_RECORD * (i + 1). */
struct collage_dataset_header {
  char magic[16];      /* COLLAGE_DATASET_MAGIC, not NUL-terminated */
  uint32_t version;    /* COLLAGE_DATASET_VERSION */
  uint32_t record;     /* COLLAGE_RECORD */
  uint64_t n;          /* tiles */
  uint64_t seed;       /* the dataset's hash stream */
  uint64_t seeds_id;   /* collage_seeds.id of the seeds it was made from */
  uint32_t nseeds;
  char seeds_source[32];
  uint32_t pad0;
  uint64_t records_sum; /* sum of every record's check (mod 2^64) */
  uint64_t id;          /* the dataset's identity: hash of the fields above */
  uint64_t check;       /* hash of the header bytes before this field */
};

/* Offset of record i in the dataset file. */
static inline int64_t collage_record_offset(uint64_t i)
{
  return (int64_t)((i + 1) * COLLAGE_RECORD);
}

/* The parameters of tile i of a dataset with hash stream `seed`. */
void collage_tile_params(const struct collage_seeds *s, uint64_t seed, uint64_t i, struct collage_tile *t);
/* Render a tile: 32 x 32 x 3 bytes. 0, or -EINVAL when t names no seed. */
int collage_tile_render(const struct collage_seeds *s, const struct collage_tile *t, uint8_t *rgb);
/* Histogram of a w x h region of RGB pixels with rows `stride` bytes apart. */
void collage_histogram(const uint8_t *rgb, int w, int h, size_t stride, uint32_t *hist);
/* The check of a record (hash of its histogram, tile and index). */
uint64_t collage_record_check(const struct collage_record *r);
/* Fill record i completely (hist, tile, index, check, zero pad). */
int collage_record_make(const struct collage_seeds *s, uint64_t seed, uint64_t i, struct collage_record *r);

/* Write the dataset file (to path.tmp, renamed when complete) with
 * `threads` threads, a progress line on progress (may be NULL).  0 or
 * -errno (-ENOSPC ...); a failed build leaves no file at path. */
int collage_dataset_build(const char *path, const struct collage_seeds *s, uint64_t n, uint64_t seed,
                          int threads, FILE *progress);

struct collage_dataset {
  int fd;
  uint64_t n;
  uint64_t bytes;                  /* file size */
  const uint8_t *map;              /* the whole file, mmap'd read-only */
  struct collage_dataset_header hdr;
  char path[4096];
};
/* Open and check a dataset: magic, version, record size, header check,
 * size = (n + 1) * 4 KiB, and `sample` records spread over the file (their
 * check and index; all of them when sample >= n, which also checks
 * records_sum).  0, or -ENOENT, -EINVAL (foreign or bad header), -EIO
 * (truncated, or a record that fails its check) with a message in err. */
int collage_dataset_open(const char *path, uint64_t sample, struct collage_dataset *ds, char *err,
                         size_t errlen);
void collage_dataset_close(struct collage_dataset *ds);
static inline const struct collage_record *collage_dataset_record(const struct collage_dataset *ds,
                                                                  uint64_t i)
{
  return (const struct collage_record *)(ds->map + collage_record_offset(i));
}

/* Input picture k (0, 1, ...): seed k % n scaled to w x h. */
int collage_input_picture(const struct collage_seeds *s, int k, int w, int h, struct collage_image *out);
/* The collage: each block of `in` replaced by its chosen tile, re-rendered
 * from the record (a block with COLLAGE_NONE keeps its pixels).  The seeds
 * must be the dataset's (seeds_id): -EINVAL with a message otherwise. */
int collage_render(const struct collage_dataset *ds, const struct collage_seeds *s,
                   const struct collage_image *in, const uint32_t *choice, struct collage_image *out,
                   char *err, size_t errlen);

/* ---------------- the LSH index (index.c) ---------------- */

#define COLLAGE_INDEX_MAGIC "GPUFS-COLLAGE-IX"
#define COLLAGE_INDEX_VERSION 1u
struct collage_index_header {
  char magic[16];        /* COLLAGE_INDEX_MAGIC */
  uint32_t version;
  uint32_t L, K, cap;    /* tables, key bits, bucket cap */
  uint64_t n;            /* tiles of the dataset */
  uint64_t dataset_id;   /* collage_dataset_header.id it was built from */
  uint64_t seed;         /* the projections' hash stream */
  uint64_t nids;         /* entries over all tables (after capping) */
  uint64_t check;        /* hash of the header before this field and of the body */
};

/* In memory (and in the file after the header, in this order):
 *   w[L][K][48] int8 projections, thr[L][K] int32 thresholds,
 *   off[L][2^K + 1] uint32: table t's bucket b holds
 *   ids[off[t][b] .. off[t][b+1]) (offsets into the one ids array),
 *   ids[nids] uint32 tile indices, ascending within a bucket. */
struct collage_index {
  struct collage_index_header hdr;
  int8_t *w;
  int32_t *thr;
  uint32_t *off;
  uint32_t *ids;
};

/* Bucket-size distribution of the tables (before the cap). */
struct collage_index_report {
  double mean;            /* tiles per non-empty bucket */
  uint32_t max;           /* the largest bucket of any table */
  uint32_t p99;           /* 99th percentile of non-empty buckets */
  double empty;           /* fraction of empty buckets */
  double capped;          /* fraction of entries dropped by the cap */
  double worst_share;     /* the largest bucket's share of its table */
};

/* K for n tiles: buckets of about 16 tiles on average (at least 8 bits). */
uint32_t collage_default_k(uint64_t n);
/* Build the tables from the dataset (threads threads): projections drawn
 * from `seed`, thresholds the medians over the dataset, each table tuned
 * (the best of several draws by its largest bucket), buckets capped at cap
 * (a deterministic subset: the tiles of lowest hash).  0 or -errno. */
int collage_index_build(const struct collage_dataset *ds, uint32_t L, uint32_t K, uint32_t cap,
                        uint64_t seed, int threads, struct collage_index *ix, FILE *log);
void collage_index_stats(const struct collage_index *ix, const struct collage_dataset *ds,
                         struct collage_index_report *rep);
int collage_index_write(const char *path, const struct collage_index *ix);
/* Read and check an index file against the dataset it must belong to.
 * 0, or -ENOENT, -EINVAL (foreign or bad file, or built for another
 * dataset), -EIO (truncated or failing its check) with a message in err. */
int collage_index_read(const char *path, const struct collage_dataset *ds, struct collage_index *ix,
                       char *err, size_t errlen);
void collage_index_free(struct collage_index *ix);
/* The L keys of a histogram. */
void collage_index_keys(const struct collage_index *ix, const uint32_t *hist, uint32_t *keys);
/* The shortlist of the keys: the union of their buckets, ascending, unique,
 * into out (room for L * cap).  Returns the count. */
uint32_t collage_shortlist(const struct collage_index *ix, const uint32_t *keys, uint32_t *out);

/* ---------------- the versions ---------------- */

enum collage_version {
  COLLAGE_CPU = 0,
  COLLAGE_CPU_GPU = 1,
  COLLAGE_GPUFS_BLOCK = 2,
  COLLAGE_GPUFS_WARP = 3,
  COLLAGE_GPUFS_GREAD = 4,
  COLLAGE_NVERSIONS = 5
};

/* What one run measured (seconds; phases summed over threads where noted). */
struct collage_stats {
  double seconds;         /* the whole run: picture in host memory to choices in host memory */
  double keys_s;          /* histograms + keys (cpu: summed over threads) */
  double shortlist_s;     /* shortlists (cpu, cpu-gpu, gpufs) */
  double io_s;            /* candidate reads (cpu-gpu: preads + copies; gpufs: the
                             map or read call and the unmap) */
  double dist_s;          /* distances (cpu: summed over threads; cpu-gpu: kernel 2) */
  /* gpufs versions: SM cycles at the peak clock, summed over each block's
   * thread 0 (keys, shortlists) and each warp's lane 0 (reads, distances;
   * gpufs-block: thread 0); io_s / candidates is the mean time of one
   * candidate's read */
  double register_s;      /* gpufs versions with --register: gpufs_register's time
                             (before the run, not part of seconds) */
  uint64_t blocks;
  uint64_t candidates;    /* shortlist entries over all blocks */
  uint64_t empty;         /* blocks with no candidate */
};

/* Blocks of a picture: (w / 32) x (h / 32), block b = by * (w / 32) + bx. */
static inline uint64_t collage_blocks(const struct collage_image *in)
{
  return (uint64_t)(in->w / COLLAGE_TILE) * (uint64_t)(in->h / COLLAGE_TILE);
}

/* The cpu version: every block on `threads` threads, distances vectorized,
 * the dataset through its mmap.  choice[blocks] gets each block's tile.
 * 0 or -errno. */
int collage_cpu_run(const struct collage_dataset *ds, const struct collage_index *ix,
                    const struct collage_image *in, int threads, uint32_t *choice,
                    struct collage_stats *st);

/* cpu.c's distance kernels (each exactly collage_dist): the baseline
 * build, the AVX2 build (x86 only; call it only where the CPU has AVX2),
 * and the choice for this CPU (*fn; returns 1 when it is the AVX2 one). */
uint32_t collage_cpu_dist_base(const uint32_t *a, const uint32_t *b);
uint32_t collage_cpu_dist_avx2(const uint32_t *a, const uint32_t *b);
int collage_cpu_dist_pick(uint32_t (**fn)(const uint32_t *a, const uint32_t *b));

/* The index on the GPU (gpu.cu): the projections, thresholds, offsets and
 * ids in device memory. */
struct collage_gpu_index {
  uint32_t L, K, cap;
  const int8_t *w;
  const int32_t *thr;
  const uint32_t *off;
  const uint32_t *ids;
};
int collage_gpu_index_upload(const struct collage_index *ix, struct collage_gpu_index *g);
void collage_gpu_index_free(struct collage_gpu_index *g);

/* The libgpufs versions (gpu.cu): libgpufs must be started (gpufs_start);
 * the kernels gopen dataset_path themselves.  v: COLLAGE_GPUFS_BLOCK,
 * _WARP or _GREAD.  0 or -errno (a device call's error, with a message on
 * stderr). */
int collage_gpufs_run(enum collage_version v, const char *dataset_path, const struct collage_gpu_index *g,
                      const struct collage_image *in, uint32_t *choice, struct collage_stats *st);

/* The cpu-gpu split (cpugpu.cu): kernel 1 histograms and keys, the CPU
 * shortlists and preads the candidates into pinned staging (threads
 * threads), kernel 2 distances; batches of blocks double-buffered. */
int collage_cpugpu_run(const struct collage_dataset *ds, const struct collage_index *ix,
                       const struct collage_gpu_index *g, const struct collage_image *in, int threads,
                       uint32_t *choice, struct collage_stats *st);

const char *collage_version_name(enum collage_version v);

#ifdef __cplusplus
}
#endif

#endif /* COLLAGE_H */
