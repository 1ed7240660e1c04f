/*
 * versions.cu - the versions (versions.h): the rounds every GPU version
 * shares (gr_compute), and what each does before them.
 */
#include "graphs/versions.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cuda_runtime.h>

#include "benchlib/util.h"
#include "graphs/rounds.cuh"
#include "graphs/loader.h"

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

static int gr_gpufs(const struct graph_run_opts *o, struct gr_hold *x, void *out, struct graph_run_result *r)
{
  int rc = gr_fs_start(o, &x->dpath, &x->gpufs_started, r), fd = -1;
  if (rc)
    return rc;
  const double t0 = x->d.t0 = bench_now();
  if ((rc = gr_fs_open(x->dpath, &x->d, &fd, r)) != 0)
    return rc;
  rc = gr_compute(gr_fs(o, fd), &x->d, o, out, r);
  const int rc2 = gr_fs_close(fd, &x->d, r);
  r->e2e_s = bench_now() - t0;
  if (!rc && !rc2 && gpufs_get_stats(&r->st) == 0) {
    r->has_stats = 1;
    r->pcie_bytes = r->st.misses * (uint64_t)o->page_size;
    r->pcie_known = 1;
  }
  return rc ? rc : rc2;
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
      (rc = gr_dev_alloc(&x.d, o->g->n, o->algo, gr_blocks(o, v == GRAPH_V_GPUFS), r)) != 0 ||
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
