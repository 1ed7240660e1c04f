/*
 * cpugpu.cu - the cpu-gpu version of the collage: the classic split of the
 * GPUfs paper, without libgpufs.
 *
 *   kernel 1   one threadblock per image block: its histogram (kept in
 *              device memory) and its L keys (copied to the host);
 *   the CPU    (threads threads) each block's shortlist (collage_shortlist)
 *              and a pread of each candidate's 3 KiB histogram from the
 *              dataset file into pinned staging;
 *   kernel 2   one threadblock per image block: the distances to the staged
 *              candidates (a warp per candidate) and the smallest pack.
 *
 * The blocks go in windows (shortlists of up to CG_WINDOW blocks at once)
 * cut into batches whose candidates fit one staging buffer (at most
 * CG_STAGING bytes).  Two buffers, each with its own stream: the CPU fills
 * batch k + 1 while batch k is copied and computed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "benchlib/util.h"
#include "samples/collage/collage.h"

#define CG_THREADS 256
#define CG_WARPS (CG_THREADS / 32)
#define CG_VEC (COLLAGE_HIST / 4)               /* a histogram as uint4 */
#define CG_REC_BYTES (COLLAGE_HIST * 4)          /* what is read of a record */
#define CG_WINDOW 1024u                         /* blocks whose shortlists are made at once */
#define CG_STAGING (256ull << 20)               /* bytes of one staging buffer at most */

/* gpu.cu: histogram, reduced histogram and keys of image block b into shared
 * memory.  Every thread of the block calls it; it synchronizes the block. */
__device__ void collage_dev_block_keys(const uint8_t *rgb, int w, uint64_t b, struct collage_gpu_index g,
                                       uint32_t *hist, int32_t *r, uint32_t *keys);

/* ---------------- kernels ---------------- */

/* Kernel 1: block blockIdx.x's histogram into hist[b][768] and its keys
 * into keys[b][L].  CG_THREADS threads a block, one block per image block. */
__global__ void __launch_bounds__(CG_THREADS) cgk_keys(const uint8_t *rgb, int w, struct collage_gpu_index g,
                                                      uint32_t *hist, uint32_t *keys)
{
  __shared__ __align__(16) uint32_t h[COLLAGE_HIST];
  __shared__ int32_t r[COLLAGE_DIMS];
  __shared__ uint32_t k[COLLAGE_MAX_L];
  const uint64_t b = blockIdx.x;
  collage_dev_block_keys(rgb, w, b, g, h, r, k);
  for (unsigned i = threadIdx.x; i < COLLAGE_HIST; i += blockDim.x)
    hist[b * COLLAGE_HIST + i] = h[i];
  for (unsigned t = threadIdx.x; t < g.L; t += blockDim.x)
    keys[b * g.L + t] = k[t];
}

/* Kernel 2: image block b0 + blockIdx.x against its staged candidates
 * rec[start[i] .. start[i + 1]) (tile ids in ids[]): warp w takes
 * candidates w, w + 8, ...; the smallest collage_pack into choice[b].
 * CG_THREADS threads a block, one block per image block of the batch. */
__global__ void __launch_bounds__(CG_THREADS) cgk_dist(const uint32_t *hist, uint64_t b0, const uint4 *rec,
                                                      const uint32_t *ids, const uint32_t *start,
                                                      uint32_t *choice)
{
  __shared__ uint4 h[CG_VEC];
  __shared__ unsigned long long best;
  const unsigned tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const uint64_t b = b0 + blockIdx.x;
  const uint4 *src = (const uint4 *)(hist + b * COLLAGE_HIST);
  for (unsigned j = tid; j < CG_VEC; j += CG_THREADS)
    h[j] = src[j];
  if (tid == 0)
    best = COLLAGE_NO_BEST;
  __syncthreads();
  unsigned long long mine = COLLAGE_NO_BEST;
  const uint32_t hi = start[blockIdx.x + 1];
  for (uint32_t c = start[blockIdx.x] + warp; c < hi; c += CG_WARPS) {
    const uint4 *q = rec + (uint64_t)c * CG_VEC;
    uint32_t d = 0;
    for (unsigned j = lane; j < CG_VEC; j += 32) {
      const uint4 x = h[j], y = q[j];
      const int32_t a0 = (int32_t)x.x - (int32_t)y.x, a1 = (int32_t)x.y - (int32_t)y.y;
      const int32_t a2 = (int32_t)x.z - (int32_t)y.z, a3 = (int32_t)x.w - (int32_t)y.w;
      d += (uint32_t)(a0 * a0) + (uint32_t)(a1 * a1) + (uint32_t)(a2 * a2) + (uint32_t)(a3 * a3);
    }
    for (int o = 16; o > 0; o /= 2)
      d += __shfl_xor_sync(0xffffffffu, d, o);
    const unsigned long long pk = collage_pack(d, ids[c]);
    mine = pk < mine ? pk : mine;
  }
  if (lane == 0 && mine != COLLAGE_NO_BEST)
    atomicMin(&best, mine);
  __syncthreads();
  if (tid == 0)
    choice[b] = collage_unpack_tile(best);
}

/* ---------------- host side ---------------- */

/* One staging buffer: host (pinned) and device halves, its stream, and the
 * events around its copies and its kernel. */
struct cg_buf {
  uint8_t *h_rec, *d_rec;       /* cap records of CG_REC_BYTES */
  uint32_t *h_ids, *d_ids;      /* cap tile ids */
  uint32_t *h_start, *d_start;  /* CG_WINDOW + 1 offsets */
  cudaStream_t s;
  cudaEvent_t c0, c1, k1;       /* copies begin, copies end = kernel begins, kernel ends */
  int made, busy;
};

/* What the CPU threads share. */
struct cg_job {
  const struct collage_dataset *ds;
  const struct collage_index *ix;
  const uint32_t *keys;   /* [blocks][L], from kernel 1 */
  uint32_t lcap;          /* L * cap: room for one shortlist */
  uint64_t w0;            /* the window's first block */
  uint32_t *lists;        /* [CG_WINDOW][lcap]: the window's shortlists */
  uint32_t *counts;       /* [CG_WINDOW] */
  uint64_t i0;            /* the batch's first block in the window */
  struct cg_buf *buf;     /* the batch's buffer: start filled, ids and records to fill */
  uint64_t shortlist_ns, io_ns; /* summed over threads (relaxed adds, read after the join) */
};

static int cg_cuda(cudaError_t e, const char *what)
{
  if (e == cudaSuccess)
    return 0;
  fprintf(stderr, "collage: cpu-gpu: %s: %s\n", what, cudaGetErrorString(e));
  return e == cudaErrorMemoryAllocation ? -ENOMEM : -EIO;
}

/* bench_parallel_for body: shortlists of window blocks [lo, hi). */
static int cg_shortlists(void *arg, uint64_t lo, uint64_t hi)
{
  struct cg_job *j = (struct cg_job *)arg;
  const double t0 = bench_now();
  const uint32_t L = j->ix->hdr.L;
  for (uint64_t i = lo; i < hi; i++)
    j->counts[i] = collage_shortlist(j->ix, j->keys + (j->w0 + i) * L, j->lists + i * j->lcap);
  __atomic_fetch_add(&j->shortlist_ns, (uint64_t)((bench_now() - t0) * 1e9), __ATOMIC_RELAXED);
  return 0;
}

/* bench_parallel_for body: blocks [lo, hi) of the batch (window block i0 +
 * i): their candidates' ids and histograms into the batch's staging. */
static int cg_preads(void *arg, uint64_t lo, uint64_t hi)
{
  struct cg_job *j = (struct cg_job *)arg;
  const double t0 = bench_now();
  int rc = 0;
  for (uint64_t i = lo; i < hi && !rc; i++) {
    const uint32_t *list = j->lists + (j->i0 + i) * j->lcap;
    const uint32_t n = j->counts[j->i0 + i];
    const uint32_t at = j->buf->h_start[i];
    for (uint32_t k = 0; k < n && !rc; k++) {
      j->buf->h_ids[at + k] = list[k];
      rc = bench_pio_full(j->ds->fd, j->buf->h_rec + (uint64_t)(at + k) * CG_REC_BYTES, CG_REC_BYTES,
                          (uint64_t)collage_record_offset(list[k]), 0);
      if (rc)
        fprintf(stderr, "collage: cpu-gpu: pread of record %u of %s: %s\n", list[k], j->ds->path, strerror(-rc));
    }
  }
  __atomic_fetch_add(&j->io_ns, (uint64_t)((bench_now() - t0) * 1e9), __ATOMIC_RELAXED);
  return rc;
}

/* Allocate buffer b for cap records.  0 or -ENOMEM / -EIO. */
static int cg_buf_make(struct cg_buf *b, uint64_t cap)
{
  const size_t rec = cap * CG_REC_BYTES, ids = cap * 4, start = (CG_WINDOW + 1) * 4;
  b->made = 1;
  int rc = cg_cuda(cudaHostAlloc((void **)&b->h_rec, rec, cudaHostAllocDefault), "pinned staging");
  if (!rc) rc = cg_cuda(cudaHostAlloc((void **)&b->h_ids, ids, cudaHostAllocDefault), "pinned staging");
  if (!rc) rc = cg_cuda(cudaHostAlloc((void **)&b->h_start, start, cudaHostAllocDefault), "pinned staging");
  if (!rc) rc = cg_cuda(cudaMalloc((void **)&b->d_rec, rec), "device staging");
  if (!rc) rc = cg_cuda(cudaMalloc((void **)&b->d_ids, ids), "device staging");
  if (!rc) rc = cg_cuda(cudaMalloc((void **)&b->d_start, start), "device staging");
  if (!rc) rc = cg_cuda(cudaStreamCreate(&b->s), "stream");
  if (!rc) rc = cg_cuda(cudaEventCreate(&b->c0), "event");
  if (!rc) rc = cg_cuda(cudaEventCreate(&b->c1), "event");
  if (!rc) rc = cg_cuda(cudaEventCreate(&b->k1), "event");
  return rc;
}

/* Wait until buffer b's batch is copied and computed; its copy and kernel
 * times go into st.  0 or -EIO. */
static int cg_buf_wait(struct cg_buf *b, struct collage_stats *st)
{
  float copy_ms = 0, kernel_ms = 0;
  if (!b->busy)
    return 0;
  b->busy = 0;
  int rc = cg_cuda(cudaEventSynchronize(b->k1), "kernel 2");
  if (!rc) rc = cg_cuda(cudaEventElapsedTime(&copy_ms, b->c0, b->c1), "copy time");
  if (!rc) rc = cg_cuda(cudaEventElapsedTime(&kernel_ms, b->c1, b->k1), "kernel time");
  st->io_s += copy_ms * 1e-3;
  st->dist_s += kernel_ms * 1e-3;
  return rc;
}

static void cg_buf_free(struct cg_buf *b)
{
  if (!b->made)
    return;
  if (b->s)
    cudaStreamSynchronize(b->s); /* nothing may still read the staging */
  cudaFreeHost(b->h_rec);
  cudaFreeHost(b->h_ids);
  cudaFreeHost(b->h_start);
  cudaFree(b->d_rec);
  cudaFree(b->d_ids);
  cudaFree(b->d_start);
  if (b->s) cudaStreamDestroy(b->s);
  if (b->c0) cudaEventDestroy(b->c0);
  if (b->c1) cudaEventDestroy(b->c1);
  if (b->k1) cudaEventDestroy(b->k1);
  memset(b, 0, sizeof(*b));
}

/* Batch [i0, i1) of the window (n candidates) through buffer b: preads on
 * `threads` threads, then its copies and kernel 2 queued on b's stream.
 * 0 or -errno. */
static int cg_batch(struct cg_job *j, struct cg_buf *b, uint64_t i0, uint64_t i1, int threads,
                    const uint32_t *d_hist, uint32_t *d_choice)
{
  const uint64_t nb = i1 - i0;
  b->h_start[0] = 0;
  for (uint64_t i = 0; i < nb; i++)
    b->h_start[i + 1] = b->h_start[i] + j->counts[i0 + i];
  const uint64_t n = b->h_start[nb];
  j->i0 = i0;
  j->buf = b;
  int rc = bench_parallel_for(nb, 1, threads, cg_preads, j);
  if (rc)
    return rc;
  cudaStream_t s = b->s;
  const cudaMemcpyKind up = cudaMemcpyHostToDevice;
  if (!rc) rc = cg_cuda(cudaEventRecord(b->c0, s), "event");
  if (!rc && n) rc = cg_cuda(cudaMemcpyAsync(b->d_rec, b->h_rec, n * CG_REC_BYTES, up, s), "staging copy");
  if (!rc && n) rc = cg_cuda(cudaMemcpyAsync(b->d_ids, b->h_ids, n * 4, up, s), "staging copy");
  if (!rc) rc = cg_cuda(cudaMemcpyAsync(b->d_start, b->h_start, (nb + 1) * 4, up, s), "staging copy");
  if (!rc) rc = cg_cuda(cudaEventRecord(b->c1, s), "event");
  if (!rc) {
    cgk_dist<<<(unsigned)nb, CG_THREADS, 0, s>>>(d_hist, j->w0 + i0, (const uint4 *)b->d_rec, b->d_ids, b->d_start,
                                                 d_choice);
    rc = cg_cuda(cudaGetLastError(), "kernel 2 launch");
  }
  if (!rc) rc = cg_cuda(cudaEventRecord(b->k1, s), "event");
  b->busy = !rc;
  return rc;
}

/* Windows of CG_WINDOW blocks: their shortlists, then batches that fit a
 * buffer, alternating between the two.  0 or -errno. */
static int cg_pipeline(struct cg_job *j, uint64_t blocks, int threads, struct cg_buf *bufs, const uint32_t *d_hist,
                       uint32_t *d_choice, struct collage_stats *st)
{
  uint64_t cap = 0, k = 0;
  int rc = 0;
  for (uint64_t w0 = 0; w0 < blocks && !rc; w0 += CG_WINDOW) {
    const uint64_t nw = blocks - w0 < CG_WINDOW ? blocks - w0 : CG_WINDOW;
    j->w0 = w0;
    rc = bench_parallel_for(nw, 8, threads, cg_shortlists, j);
    uint64_t total = 0;
    for (uint64_t i = 0; i < nw; i++) {
      total += j->counts[i];
      st->empty += j->counts[i] == 0;
    }
    st->candidates += total;
    if (!rc && cap == 0) { /* sized by the first window: a small picture takes no more than it needs */
      cap = total < j->lcap ? j->lcap : total;
      cap = cap < CG_STAGING / CG_REC_BYTES ? cap : CG_STAGING / CG_REC_BYTES;
    }
    for (uint64_t i = 0; i < nw && !rc; k++) {
      uint64_t e = i, n = 0;
      while (e < nw && n + j->counts[e] <= cap) /* one block always fits: cap >= L * cap */
        n += j->counts[e++];
      struct cg_buf *b = &bufs[k % 2];
      if (!b->made)
        rc = cg_buf_make(b, cap);
      if (!rc)
        rc = cg_buf_wait(b, st); /* its last batch is copied and computed: the staging is free */
      if (!rc)
        rc = cg_batch(j, b, i, e, threads, d_hist, d_choice);
      i = e;
    }
    /* the next window overwrites the lists: only the host reads them, and
     * every batch of this one is staged already */
  }
  for (int i = 0; i < 2; i++) {
    int r = cg_buf_wait(&bufs[i], st);
    rc = rc ? rc : r;
  }
  return rc;
}

int collage_cpugpu_run(const struct collage_dataset *ds, const struct collage_index *ix,
                       const struct collage_gpu_index *g, const struct collage_image *in, int threads,
                       uint32_t *choice, struct collage_stats *st)
{
  if (!ds || ds->fd < 0 || !ix || !ix->ids || !g || !g->ids || g->L != ix->hdr.L || g->K != ix->hdr.K ||
      g->cap != ix->hdr.cap ||
      !in || !in->rgb || collage_blocks(in) == 0 || !choice || !st) {
    fprintf(stderr, "collage: cpu-gpu: no dataset, index (on both sides, the same), picture of whole blocks "
                    "or output\n");
    return -EINVAL;
  }
  memset(st, 0, sizeof(*st));
  if (threads <= 0)
    threads = bench_host_threads();
  const uint64_t blocks = collage_blocks(in);
  const size_t px = (size_t)in->w * (size_t)in->h * 3;
  const uint32_t L = g->L;
  struct cg_buf bufs[2];
  struct cg_job job;
  memset(bufs, 0, sizeof(bufs));
  memset(&job, 0, sizeof(job));
  job.ds = ds;
  job.ix = ix;
  job.lcap = ix->hdr.L * ix->hdr.cap;
  uint32_t *keys = (uint32_t *)malloc(blocks * L * 4);
  job.lists = (uint32_t *)malloc((size_t)CG_WINDOW * job.lcap * 4);
  job.counts = (uint32_t *)malloc(CG_WINDOW * 4);
  void *d_rgb = NULL, *d_hist = NULL, *d_keys = NULL, *d_choice = NULL;
  int rc = 0;
  if (!keys || !job.lists || !job.counts) {
    fprintf(stderr, "collage: cpu-gpu: no host memory for %llu blocks\n", (unsigned long long)blocks);
    rc = -ENOMEM;
  }
  const double t0 = bench_now();
  /* kernel 1: histograms stay on the device, keys come to the host */
  if (!rc) rc = cg_cuda(cudaMalloc(&d_rgb, px), "picture");
  if (!rc) rc = cg_cuda(cudaMalloc(&d_hist, blocks * COLLAGE_HIST * 4), "histograms");
  if (!rc) rc = cg_cuda(cudaMalloc(&d_keys, blocks * L * 4), "keys");
  if (!rc) rc = cg_cuda(cudaMalloc(&d_choice, blocks * 4), "choices");
  if (!rc) rc = cg_cuda(cudaMemcpy(d_rgb, in->rgb, px, cudaMemcpyHostToDevice), "picture upload");
  if (!rc) {
    cgk_keys<<<(unsigned)blocks, CG_THREADS>>>((const uint8_t *)d_rgb, in->w, *g, (uint32_t *)d_hist,
                                               (uint32_t *)d_keys);
    rc = cg_cuda(cudaGetLastError(), "kernel 1 launch");
  }
  if (!rc) rc = cg_cuda(cudaMemcpy(keys, d_keys, blocks * L * 4, cudaMemcpyDeviceToHost), "kernel 1");
  st->keys_s = bench_now() - t0;
  job.keys = keys;
  if (!rc)
    rc = cg_pipeline(&job, blocks, threads, bufs, (const uint32_t *)d_hist, (uint32_t *)d_choice, st);
  if (!rc) rc = cg_cuda(cudaMemcpy(choice, d_choice, blocks * 4, cudaMemcpyDeviceToHost), "choices download");
  st->seconds = bench_now() - t0;
  st->shortlist_s = job.shortlist_ns * 1e-9;
  st->io_s += job.io_ns * 1e-9;
  st->blocks = blocks;
  for (int i = 0; i < 2; i++)
    cg_buf_free(&bufs[i]);
  cudaFree(d_rgb);
  cudaFree(d_hist);
  cudaFree(d_keys);
  cudaFree(d_choice);
  free(keys);
  free(job.lists);
  free(job.counts);
  return rc;
}
