/*
 * rounds.cu - the rounds' arrays and the sources' set-up (rounds.cuh).
 */
#include "graphs/rounds.cuh"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "benchlib/util.h"

int gr_fail(struct graph_run_result *r, int rc, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->why, sizeof(r->why), fmt, ap);
  va_end(ap);
  return rc;
}

int gr_cuda(struct graph_run_result *r, cudaError_t e, const char *call)
{
  return e == cudaSuccess ? 0 : gr_fail(r, -EIO, "%s: %s", call, cudaGetErrorString(e));
}

__global__ void gr_init_min(unsigned long long *val, uint8_t *cur, uint64_t n, enum graph_algo a, uint64_t source)
{
  for (uint64_t v = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; v < n; v += (uint64_t)gridDim.x * blockDim.x) {
    val[v] = a == GRAPH_CC ? v : (v == source ? 0 : GRAPH_NONE);
    cur[v] = a == GRAPH_CC || v == source;
  }
}

__global__ void gr_contrib(const float *rank, const uint32_t *deg, float *contrib, uint64_t n, int first)
{
  for (uint64_t v = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; v < n; v += (uint64_t)gridDim.x * blockDim.x) {
    const float r = first ? 1.0f / (float)n : rank[v];
    contrib[v] = deg[v] ? r / (float)deg[v] : 0.0f;
  }
}

void gr_dev_free(struct gr_dev *d)
{
  cudaFree(d->val);
  cudaFree(d->cur);
  cudaFree(d->next);
  cudaFree(d->flags);
  cudaFree(d->rank);
  cudaFree(d->contrib);
  cudaFree(d->deg);
  memset(d, 0, sizeof(*d));
}

int gr_dev_alloc(struct gr_dev *d, uint64_t n, enum graph_algo a, unsigned blocks, struct graph_run_result *r)
{
  const uint64_t k = n ? n : 1;
  int rc;
  memset(d, 0, sizeof(*d));
  d->n = n;
  d->blocks = blocks;
  if ((rc = GR_CUDA(r, cudaMalloc((void **)&d->flags, sizeof(struct gr_flags)))) != 0)
    return rc;
  if (a == GRAPH_PR) {
    if ((rc = GR_CUDA(r, cudaMalloc((void **)&d->rank, k * 4))) ||
        (rc = GR_CUDA(r, cudaMalloc((void **)&d->contrib, k * 4))) ||
        (rc = GR_CUDA(r, cudaMalloc((void **)&d->deg, k * 4))))
      return rc;
  } else if ((rc = GR_CUDA(r, cudaMalloc((void **)&d->val, k * 8))) ||
             (rc = GR_CUDA(r, cudaMalloc((void **)&d->cur, k))) || (rc = GR_CUDA(r, cudaMalloc((void **)&d->next, k)))) {
    return rc;
  }
  return GR_CUDA(r, cudaMemset(d->flags, 0, sizeof(struct gr_flags)));
}

int gr_ready(struct gr_dev *d, struct graph_run_result *r)
{
  return GR_CUDA(r, cudaMemsetAsync(d->flags, 0, sizeof(struct gr_flags)));
}

int gr_after(struct gr_dev *d, struct graph_run_result *r, int *changed)
{
  struct gr_flags h;
  int rc = GR_CUDA(r, cudaGetLastError());
  if (!rc)
    rc = GR_CUDA(r, cudaMemcpy(&h, d->flags, sizeof(h), cudaMemcpyDeviceToHost));
  if (!rc && h.err < 0)
    rc = gr_fail(r, h.err, "a kernel's read of the graph: %s", gpufs_strerror(h.err));
  if (!rc && h.cut) {
    r->capped = 1;
    rc = gr_fail(r, -ETIMEDOUT, "stopped at the %.0f s cap inside round %u", d->cap_s, r->rounds + 1);
  }
  if (changed)
    *changed = h.changed;
  return rc;
}

int gr_capped(const struct gr_dev *d, struct graph_run_result *r)
{
  if (!(d->cap_s > 0) || bench_now() - d->t0 <= d->cap_s)
    return 0;
  r->capped = 1;
  return gr_fail(r, -ETIMEDOUT, "stopped at the %.0f s cap after %u rounds", d->cap_s, r->rounds);
}

__global__ void gr_clock_kernel(unsigned long long *clock) { *clock = cuda::ptx::get_sreg_globaltimer(); }

int gr_deadline(struct gr_dev *d, struct graph_run_result *r)
{
  unsigned long long now;
  d->deadline = 0;
  if (!(d->cap_s > 0))
    return 0;
  gr_clock_kernel<<<1, 1>>>(&d->flags->clock);
  int rc = GR_CUDA(r, cudaGetLastError());
  if (!rc)
    rc = GR_CUDA(r, cudaMemcpy(&now, &d->flags->clock, sizeof(now), cudaMemcpyDeviceToHost));
  const double left = d->cap_s - (bench_now() - d->t0);
  if (!rc)
    d->deadline = now + (unsigned long long)((left > 0 ? left : 0) * 1e9) + 1;
  return rc;
}

gr_round gr_round_make(struct gr_dev *d, enum graph_algo a)
{
  gr_round rd;
  memset(&rd, 0, sizeof(rd));
  rd.a = a;
  rd.n = d->n;
  rd.flags = d->flags;
  rd.deadline = d->deadline;
  return rd;
}

unsigned gr_blocks(const struct graph_run_opts *o, int fs)
{
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, o->device) != cudaSuccess)
    prop.multiProcessorCount = 132;
  if (fs) {
    /* Two blocks an SM (the calls' register budget), but no more warps
     * than a quarter of the cache's frames: a warp holds up to three
     * pages mapped (offsets, neighbours, weights; kernels.cuh), so the
     * warps together can pin at most three quarters of the frames. */
    const uint64_t cache = o->limit ? o->limit : o->h->file_size;
    const uint64_t most = cache / o->page_size / (4 * GR_WARPS);
    const uint64_t want = 2ull * (uint64_t)prop.multiProcessorCount;
    return (unsigned)(most < 1 ? 1 : most < want ? most : want);
  }
  const uint64_t want = (o->g->n + 32 * GR_WARPS - 1) / (32 * GR_WARPS);
  const uint64_t most = 16ull * (uint64_t)prop.multiProcessorCount;
  return (unsigned)(want < 1 ? 1 : want < most ? want : most);
}

gr_mem_src gr_mem(const uint8_t *base, const struct graph_run_opts *o)
{
  gr_mem_src s;
  s.off = (const uint64_t *)(base + o->h->offsets_off);
  s.nb = (const uint32_t *)(base + o->h->neigh_off);
  s.wt = o->algo == GRAPH_SSSP && o->h->weights_off ? (const uint32_t *)(base + o->h->weights_off) : NULL;
  return s;
}

int gr_fs_start(const struct graph_run_opts *o, char **dpath, int *started, struct graph_run_result *r)
{
  struct gpufs_config cfg;
  gpufs_config_default(&cfg);
  cfg.device = o->device;
  cfg.page_size = o->page_size;
  const uint64_t p = o->page_size;
  cfg.cache_size = o->limit ? o->limit : (o->h->file_size + (64ull << 20) + p - 1) / p * p;
  int rc = gpufs_start(&cfg);
  if (rc)
    return gr_fail(r, rc, "gpufs_start: %s (%s)", gpufs_strerror(rc), gpufs_error_detail());
  *started = 1;
  const size_t len = strlen(o->path) + 1;
  if ((rc = GR_CUDA(r, cudaMalloc((void **)dpath, len))) != 0)
    return rc;
  return GR_CUDA(r, cudaMemcpy(*dpath, o->path, len, cudaMemcpyHostToDevice));
}

/* One warp opens or closes the file for the rounds (a warp-level call). */
__global__ void gr_open_kernel(const char *path, int *fd)
{
  const int rc = gopen_warp(path, GPUFS_O_RDONLY);
  if (threadIdx.x == 0)
    *fd = rc;
}

__global__ void gr_close_kernel(int fd, int *err)
{
  const int rc = gclose_warp(fd);
  if (threadIdx.x == 0 && rc < 0)
    atomicMin(err, rc);
}

int gr_fs_open(const char *dpath, struct gr_dev *d, int *fd, struct graph_run_result *r)
{
  int rc;
  gr_open_kernel<<<1, 32>>>(dpath, &d->flags->err);
  if ((rc = GR_CUDA(r, cudaGetLastError())) != 0 ||
      (rc = GR_CUDA(r, cudaMemcpy(fd, &d->flags->err, sizeof(int), cudaMemcpyDeviceToHost))) != 0)
    return rc;
  if (*fd < 0)
    return gr_fail(r, *fd, "gopen: %s", gpufs_strerror(*fd));
  return GR_CUDA(r, cudaMemset(&d->flags->err, 0, sizeof(int)));
}

int gr_fs_close(int fd, struct gr_dev *d, struct graph_run_result *r)
{
  /* the flags zeroed first: a round cut at the cap left cut set, which is
   * the rounds' outcome, not the close's */
  const int rc = gr_ready(d, r);
  if (rc)
    return rc;
  gr_close_kernel<<<1, 32>>>(fd, &d->flags->err);
  return gr_after(d, r, NULL);
}

gr_fs_src gr_fs(const struct graph_run_opts *o, int fd)
{
  gr_fs_src src;
  src.fd = fd;
  src.page = o->page_size;
  src.off_off = o->h->offsets_off;
  src.nb_off = o->h->neigh_off;
  src.wt_off = o->algo == GRAPH_SSSP ? o->h->weights_off : 0;
  return src;
}
