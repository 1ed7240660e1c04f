/*
 * gpuindex.cu - the LSH index in device memory for the collage's GPU
 * versions (gpu.cu, cpugpu.cu): checked, then uploaded once before any GPU
 * run (collage_gpu_index_upload), freed at the end.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <cuda_runtime.h>

#include "samples/collage/collage.h"
#include "samples/collage/gpu_util.h"

/* Every bucket's offsets ascend within ids[0, nids) and hold at most cap
 * ids (the GPU's shortlist has room for L * cap).  0 or -EINVAL. */
static int cg_index_check(const struct collage_index *ix)
{
  const struct collage_index_header *h = &ix->hdr;
  const uint64_t nb = (1ull << h->K) + 1;
  for (uint64_t t = 0; t < h->L; t++) {
    const uint32_t *off = ix->off + t * nb;
    if (off[0] > h->nids)
      goto bad;
    for (uint64_t b = 1; b < nb; b++)
      if (off[b] < off[b - 1] || off[b] > h->nids || off[b] - off[b - 1] > h->cap)
        goto bad;
  }
  return 0;
bad:
  fprintf(stderr, "collage: gpu index: a bucket leaves the ids or holds more than cap = %u tiles\n", h->cap);
  return -EINVAL;
}

/* Upload the index (main, the tests: once, before any GPU run).  0; -EINVAL
 * for a bad index or L * cap > COLLAGE_GPU_MAX_SHORTLIST (the shortlist
 * lives in shared memory); -ENOMEM / -EIO for a CUDA failure (g is left
 * empty).  A message on stderr. */
int collage_gpu_index_upload(const struct collage_index *ix, struct collage_gpu_index *g)
{
  if (!g)
    return -EINVAL;
  memset(g, 0, sizeof(*g));
  if (!ix || !ix->w || !ix->thr || !ix->off || !ix->ids || ix->hdr.L < 1 || ix->hdr.L > COLLAGE_MAX_L ||
      ix->hdr.K < 1 || ix->hdr.K > COLLAGE_MAX_K || ix->hdr.cap < 1) {
    fprintf(stderr, "collage: gpu index: not a built index\n");
    return -EINVAL;
  }
  const struct collage_index_header *h = &ix->hdr;
  if ((uint64_t)h->L * h->cap > COLLAGE_GPU_MAX_SHORTLIST) {
    fprintf(stderr, "collage: gpu index: L * cap = %u * %u: the GPU versions hold at most %u candidates a block\n",
            h->L, h->cap, COLLAGE_GPU_MAX_SHORTLIST);
    return -EINVAL;
  }
  int rc = cg_index_check(ix);
  if (rc)
    return rc;
  const size_t nw = (size_t)h->L * h->K * COLLAGE_DIMS, nthr = (size_t)h->L * h->K;
  const size_t noff = (size_t)h->L * ((1ull << h->K) + 1);
  void *w = NULL, *thr = NULL, *off = NULL, *ids = NULL;
  rc = cg_upload(&w, ix->w, nw, "gpu index: projections");
  if (!rc)
    rc = cg_upload(&thr, ix->thr, nthr * sizeof(int32_t), "gpu index: thresholds");
  if (!rc)
    rc = cg_upload(&off, ix->off, noff * sizeof(uint32_t), "gpu index: offsets");
  if (!rc)
    rc = cg_upload(&ids, ix->ids, (size_t)h->nids * sizeof(uint32_t), "gpu index: ids");
  g->w = (const int8_t *)w;
  g->thr = (const int32_t *)thr;
  g->off = (const uint32_t *)off;
  g->ids = (const uint32_t *)ids;
  if (rc) {
    collage_gpu_index_free(g);
    return rc;
  }
  g->L = h->L;
  g->K = h->K;
  g->cap = h->cap;
  return 0;
}

void collage_gpu_index_free(struct collage_gpu_index *g)
{
  if (!g)
    return;
  cudaFree((void *)g->w);
  cudaFree((void *)g->thr);
  cudaFree((void *)g->off);
  cudaFree((void *)g->ids);
  memset(g, 0, sizeof(*g));
}
