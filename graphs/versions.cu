/*
 * versions.cu - the versions (versions.h): the rounds every GPU version
 * shares (gr_compute), and what each does before them.
 */
#include "graphs/versions.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cuda_runtime.h>

#include "benchlib/util.h"
#include "graphs/kernels.cuh"
#include "graphs/loader.h"

static int gr_fail(struct graph_run_result *r, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int gr_fail(struct graph_run_result *r, int rc, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->why, sizeof(r->why), fmt, ap);
  va_end(ap);
  return rc;
}

static int gr_cuda(struct graph_run_result *r, cudaError_t e, const char *call)
{
  return e == cudaSuccess ? 0 : gr_fail(r, -EIO, "%s: %s", call, cudaGetErrorString(e));
}
#define GR_CUDA(r, call) gr_cuda((r), (call), #call)

/* ---------------- the rounds ---------------- */

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

/* Arrays of the rounds, made before the clock starts. */
struct gr_dev {
  uint64_t n;
  unsigned long long *val;
  uint8_t *cur, *next;
  int *flags; /* [0] changed, [1] the lowest error */
  float *rank, *contrib;
  uint32_t *deg;
  uint64_t *scratch;
  unsigned blocks; /* of the round kernels */
  double t0, cap_s; /* the run's start, and its time cap (0: none) */
};

static void gr_dev_free(struct gr_dev *d)
{
  cudaFree(d->val);
  cudaFree(d->cur);
  cudaFree(d->next);
  cudaFree(d->flags);
  cudaFree(d->rank);
  cudaFree(d->contrib);
  cudaFree(d->deg);
  cudaFree(d->scratch);
  memset(d, 0, sizeof(*d));
}

static int gr_dev_alloc(struct gr_dev *d, uint64_t n, enum graph_algo a, unsigned blocks,
                        struct graph_run_result *r)
{
  const uint64_t k = n ? n : 1;
  int rc;
  memset(d, 0, sizeof(*d));
  d->n = n;
  d->blocks = blocks;
  if ((rc = GR_CUDA(r, cudaMalloc((void **)&d->flags, 2 * sizeof(int)))) ||
      (rc = GR_CUDA(r, cudaMalloc((void **)&d->scratch, (uint64_t)blocks * GR_WARPS * GR_SCRATCH * 8))))
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
  return GR_CUDA(r, cudaMemset(d->flags, 0, 2 * sizeof(int)));
}

/* After a kernel: launch errors, and the error a warp recorded. */
static int gr_after(struct gr_dev *d, struct graph_run_result *r, int *changed)
{
  int h[2];
  int rc = GR_CUDA(r, cudaGetLastError());
  if (!rc)
    rc = GR_CUDA(r, cudaMemcpy(h, d->flags, sizeof(h), cudaMemcpyDeviceToHost));
  if (!rc && h[1] < 0)
    rc = gr_fail(r, h[1], "a kernel's read of the graph: %s", gpufs_strerror(h[1]));
  if (changed)
    *changed = h[0];
  return rc;
}

/* Between rounds: -ETIMEDOUT (r->capped) once the run is past its cap. */
static int gr_capped(const struct gr_dev *d, struct graph_run_result *r)
{
  if (!(d->cap_s > 0) || bench_now() - d->t0 <= d->cap_s)
    return 0;
  r->capped = 1;
  return gr_fail(r, -ETIMEDOUT, "stopped at the %.0f s cap after %u rounds", d->cap_s, r->rounds);
}

/* A round's arguments over d's arrays, the algorithm's own left to fill. */
static gr_round gr_round_make(struct gr_dev *d, enum graph_algo a)
{
  gr_round rd;
  memset(&rd, 0, sizeof(rd));
  rd.a = a;
  rd.n = d->n;
  rd.changed = d->flags;
  rd.err = d->flags + 1;
  return rd;
}

template <class Src>
static int gr_pagerank(const Src &src, struct gr_dev *d, struct graph_run_result *r)
{
  const uint64_t n = d->n;
  gr_round rd = gr_round_make(d, GRAPH_PR);
  rd.contrib = d->contrib;
  rd.rank = d->rank;
  rd.base = (float)((1.0 - GRAPH_PR_DAMPING) / (double)n);
  gr_degree_kernel<<<d->blocks, GR_THREADS>>>(src, n, d->deg, rd.err);
  int rc = gr_after(d, r, NULL);
  for (int it = 0; !rc && it < GRAPH_PR_ITERS; it++) {
    gr_contrib<<<d->blocks, GR_THREADS>>>(d->rank, d->deg, d->contrib, n, it == 0);
    gr_round_kernel<<<d->blocks, GR_THREADS>>>(src, rd);
    rc = gr_after(d, r, NULL);
    r->rounds = (uint32_t)it + 1;
    if (!rc && it + 1 < GRAPH_PR_ITERS)
      rc = gr_capped(d, r);
  }
  return rc;
}

template <class Src>
static int gr_min_rounds(const Src &src, struct gr_dev *d, const struct graph_run_opts *o, struct graph_run_result *r)
{
  const uint64_t n = d->n;
  gr_round rd = gr_round_make(d, o->algo);
  rd.val = d->val;
  gr_init_min<<<d->blocks, GR_THREADS>>>(d->val, d->cur, n, o->algo, o->source);
  int rc = GR_CUDA(r, cudaMemset(d->next, 0, n));
  for (int changed = n > 0; !rc && changed;) {
    rd.cur = d->cur;
    rd.next = d->next;
    if ((rc = GR_CUDA(r, cudaMemset(d->flags, 0, sizeof(int)))) != 0)
      break;
    gr_round_kernel<<<d->blocks, GR_THREADS>>>(src, rd);
    rc = gr_after(d, r, &changed);
    r->rounds++;
    uint8_t *t = d->cur;
    d->cur = d->next;
    d->next = t;
    if (!rc && changed && (rc = gr_capped(d, r)) == 0)
      rc = GR_CUDA(r, cudaMemset(d->next, 0, n));
  }
  return rc;
}

/* Every round of o->algo over src, then the result into out (pinned). */
template <class Src>
static int gr_compute(const Src &src, struct gr_dev *d, const struct graph_run_opts *o, void *out,
                      struct graph_run_result *r)
{
  int rc = o->algo == GRAPH_PR ? gr_pagerank(src, d, r) : gr_min_rounds(src, d, o, r);
  if (!rc)
    rc = GR_CUDA(r, cudaMemcpy(out, o->algo == GRAPH_PR ? (void *)d->rank : (void *)d->val,
                               graph_out_bytes(o->algo) * d->n, cudaMemcpyDeviceToHost));
  return rc;
}

/* The pointer source over a copy of the whole file at base (device-readable). */
static gr_mem_src gr_mem(const uint8_t *base, const struct graph_run_opts *o)
{
  gr_mem_src s;
  s.off = (const uint64_t *)(base + o->h->offsets_off);
  s.nb = (const uint32_t *)(base + o->h->neigh_off);
  s.wt = o->algo == GRAPH_SSSP && o->h->weights_off ? (const uint32_t *)(base + o->h->weights_off) : NULL;
  return s;
}


/* ---------------- the versions ---------------- */

/* Everything a run holds, released by gr_release whatever happened. */
struct gr_hold {
  struct gr_dev d;
  void *dev_copy;      /* resident: the file in GPU memory */
  void *managed;       /* uvm */
  void *reserve;       /* uvm with a limit: the GPU memory it may not use */
  int registered;      /* zero-copy: the mapping pinned */
  int out_pinned;
  int gpufs_started;
  char *dpath;         /* gpufs: the path in device memory */
  struct graph_loader *loader;
};

static void gr_release(struct gr_hold *x, const struct graph_run_opts *o, void *out)
{
  gr_dev_free(&x->d);
  cudaFree(x->dev_copy);
  cudaFree(x->managed);
  cudaFree(x->reserve);
  cudaFree(x->dpath);
  if (x->registered)
    cudaHostUnregister(o->g->map);
  if (x->out_pinned)
    cudaHostUnregister(out);
  if (x->gpufs_started)
    gpufs_stop();
  graph_loader_free(x->loader);
}

static int gr_resident(const struct graph_run_opts *o, struct gr_hold *x, void *out, struct graph_run_result *r)
{
  const uint64_t size = o->h->file_size;
  struct graph_err why;
  int rc;
  if ((rc = GR_CUDA(r, cudaMalloc(&x->dev_copy, size))) != 0 ||
      (rc = graph_loader_make(o->threads, o->device, &x->loader)) != 0)
    return rc ? rc : gr_fail(r, rc, "no pinned buffers for the loader");
  const double t0 = x->d.t0 = bench_now();
  if ((rc = graph_loader_to_device(x->loader, o->path, size, x->dev_copy, &why)) != 0)
    return gr_fail(r, rc, "%s", why.msg);
  r->load_s = bench_now() - t0;
  r->pcie_bytes = size;
  r->pcie_known = 1;
  rc = gr_compute(gr_mem((const uint8_t *)x->dev_copy, o), &x->d, o, out, r);
  r->e2e_s = bench_now() - t0;
  return rc;
}

static int gr_zero_copy(const struct graph_run_opts *o, struct gr_hold *x, void *out, struct graph_run_result *r)
{
  void *dp;
  const double t0 = x->d.t0 = bench_now();
  int rc = GR_CUDA(r, cudaHostRegister(o->g->map, o->g->map_size,
                                       cudaHostRegisterMapped | cudaHostRegisterReadOnly));
  if (rc)
    return rc;
  x->registered = 1;
  if ((rc = GR_CUDA(r, cudaHostGetDevicePointer(&dp, o->g->map, 0))) != 0)
    return rc;
  r->load_s = bench_now() - t0;
  rc = gr_compute(gr_mem((const uint8_t *)dp, o), &x->d, o, out, r);
  r->e2e_s = bench_now() - t0;
  return rc;
}

/* With a limit, hold every free byte of the GPU but limit (untimed). */
static int gr_reserve(const struct graph_run_opts *o, struct gr_hold *x, struct graph_run_result *r)
{
  size_t free_b = 0, total = 0;
  int rc = GR_CUDA(r, cudaMemGetInfo(&free_b, &total));
  if (rc || !o->limit || free_b <= o->limit)
    return rc;
  return GR_CUDA(r, cudaMalloc(&x->reserve, free_b - o->limit));
}

static int gr_uvm(const struct graph_run_opts *o, int read_mostly, struct gr_hold *x, void *out,
                  struct graph_run_result *r)
{
  const uint64_t size = o->h->file_size;
  struct graph_err why;
  int rc = GR_CUDA(r, cudaMallocManaged(&x->managed, size, cudaMemAttachGlobal));
  if (rc || (rc = gr_reserve(o, x, r)) != 0)
    return rc;
  const double t0 = x->d.t0 = bench_now();
  if ((rc = graph_load_to_host(o->path, size, x->managed, o->threads, &why)) != 0)
    return gr_fail(r, rc, "%s", why.msg);
  if (read_mostly) {
    cudaMemLocation loc;
    loc.type = cudaMemLocationTypeDevice;
    loc.id = o->device;
    if ((rc = GR_CUDA(r, cudaMemAdvise(x->managed, size, cudaMemAdviseSetReadMostly, loc))) != 0)
      return rc;
  }
  r->load_s = bench_now() - t0;
  rc = gr_compute(gr_mem((const uint8_t *)x->managed, o), &x->d, o, out, r);
  r->e2e_s = bench_now() - t0;
  return rc;
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

static int gr_gpufs_start(const struct graph_run_opts *o, struct gr_hold *x, struct graph_run_result *r)
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
  x->gpufs_started = 1;
  const size_t len = strlen(o->path) + 1;
  if ((rc = GR_CUDA(r, cudaMalloc((void **)&x->dpath, len))) != 0)
    return rc;
  return GR_CUDA(r, cudaMemcpy(x->dpath, o->path, len, cudaMemcpyHostToDevice));
}

static int gr_gpufs(const struct graph_run_opts *o, struct gr_hold *x, void *out, struct graph_run_result *r)
{
  int rc = gr_gpufs_start(o, x, r), fd = -1;
  if (rc)
    return rc;
  const double t0 = x->d.t0 = bench_now();
  gr_open_kernel<<<1, 32>>>(x->dpath, x->d.flags + 1);
  if ((rc = GR_CUDA(r, cudaGetLastError())) != 0 ||
      (rc = GR_CUDA(r, cudaMemcpy(&fd, x->d.flags + 1, sizeof(int), cudaMemcpyDeviceToHost))) != 0)
    return rc;
  if (fd < 0)
    return gr_fail(r, fd, "gopen %s: %s", o->path, gpufs_strerror(fd));
  if ((rc = GR_CUDA(r, cudaMemset(x->d.flags + 1, 0, sizeof(int)))) != 0)
    return rc;
  gr_fs_src src;
  src.fd = fd;
  src.page = o->page_size;
  src.off_off = o->h->offsets_off;
  src.nb_off = o->h->neigh_off;
  src.wt_off = o->algo == GRAPH_SSSP ? o->h->weights_off : 0;
  src.scratch = x->d.scratch;
  rc = gr_compute(src, &x->d, o, out, r);
  gr_close_kernel<<<1, 32>>>(fd, x->d.flags + 1);
  const int rc2 = gr_after(&x->d, r, NULL);
  r->e2e_s = bench_now() - t0;
  if (!rc && !rc2 && gpufs_get_stats(&r->st) == 0) {
    r->has_stats = 1;
    r->pcie_bytes = r->st.misses * (uint64_t)o->page_size;
    r->pcie_known = 1;
  }
  return rc ? rc : rc2;
}

static unsigned gr_blocks(enum graph_version v, const struct graph_run_opts *o)
{
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, o->device) != cudaSuccess)
    prop.multiProcessorCount = 132;
  if (v == GRAPH_V_GPUFS) {
    /* Two blocks an SM (the calls' register budget), but no more warps
     * than a quarter of the cache's frames: a warp holds up to two pages
     * mapped (neighbours and weights) while it maps the second, so the
     * warps together must not be able to pin every frame. */
    const uint64_t cache = o->limit ? o->limit : o->h->file_size;
    const uint64_t most = cache / o->page_size / (4 * GR_WARPS);
    const uint64_t want = 2ull * (uint64_t)prop.multiProcessorCount;
    return (unsigned)(most < 1 ? 1 : most < want ? most : want);
  }
  const uint64_t want = (o->g->n + 32 * GR_WARPS - 1) / (32 * GR_WARPS);
  const uint64_t most = 16ull * (uint64_t)prop.multiProcessorCount;
  return (unsigned)(want < 1 ? 1 : want < most ? want : most);
}

int graph_run_version(enum graph_version v, const struct graph_run_opts *o, void *out, struct graph_run_result *r)
{
  struct gr_hold x;
  int rc;
  memset(r, 0, sizeof(*r));
  memset(&x, 0, sizeof(x));
  struct graph_err why;
  if ((rc = graph_algo_check(o->algo, o->g, &why)) != 0) {
    r->na = 1;
    return gr_fail(r, rc, "%s", why.msg);
  }
  if (v == GRAPH_V_CPU) {
    const double t0 = bench_now();
    rc = graph_cpu_run(o->algo, o->g, o->source, o->threads, out);
    r->e2e_s = bench_now() - t0;
    r->ok = rc == 0;
    return rc ? gr_fail(r, rc, "cpu: no memory") : 0;
  }
  if ((rc = GR_CUDA(r, cudaSetDevice(o->device))) != 0 ||
      (rc = gr_dev_alloc(&x.d, o->g->n, o->algo, gr_blocks(v, o), r)) != 0 ||
      (rc = GR_CUDA(r, cudaHostRegister(out, graph_out_bytes(o->algo) * (o->g->n ? o->g->n : 1), 0))) != 0 ||
      (rc = GR_CUDA(r, cudaDeviceSynchronize())) != 0) {
    gr_release(&x, o, out);
    return rc;
  }
  x.out_pinned = 1;
  x.d.cap_s = o->cap_s;
  switch (v) {
  case GRAPH_V_RESIDENT: rc = gr_resident(o, &x, out, r); break;
  case GRAPH_V_ZERO_COPY: rc = gr_zero_copy(o, &x, out, r); break;
  case GRAPH_V_UVM: rc = gr_uvm(o, 0, &x, out, r); break;
  case GRAPH_V_UVM_RM: rc = gr_uvm(o, 1, &x, out, r); break;
  case GRAPH_V_GPUFS: rc = gr_gpufs(o, &x, out, r); break;
  default: rc = gr_fail(r, -EINVAL, "no version %d", (int)v); break;
  }
  gr_release(&x, o, out);
  r->ok = rc == 0;
  return rc;
}
