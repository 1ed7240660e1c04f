/*
 * service.cu - the service's versions (service.h) over the rounds every
 * GPU version shares (rounds.cuh).
 */
#include "graphs/service.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "benchlib/util.h"
#include "graphs/loader.h"
#include "graphs/rounds.cuh"

struct graph_svc {
  enum graph_svc_version v;
  struct graph_run_opts o;
  struct gr_dev d;
  uint64_t *out;               /* pinned: the last round's distances */
  void *dev_copy;              /* copy: the file in GPU memory */
  struct graph_loader *loader; /* copy */
  void *managed;               /* uvm */
  int started;                 /* gpufs versions: libgpufs runs */
  char *dpath;                 /* gpufs: the path in device memory */
  int fd;                      /* acquire versions: the descriptor kept open */
  uint64_t misses, evictions;  /* gpufs: the counters after the last round */
};

static int svc_is_fs(enum graph_svc_version v) { return v >= GRAPH_SVC_REOPEN; }

void graph_svc_close(struct graph_svc *s)
{
  if (!s)
    return;
  struct graph_run_result r;
  if (s->fd >= 0 && s->started)
    gr_fs_close(s->fd, &s->d, &r);
  gr_dev_free(&s->d);
  cudaFreeHost(s->out);
  cudaFree(s->dev_copy);
  cudaFree(s->managed);
  cudaFree(s->dpath);
  graph_loader_free(s->loader);
  if (s->started)
    gpufs_stop();
  free(s);
}

/* The version's own set-up (untimed). */
static int svc_setup(struct graph_svc *s, struct graph_run_result *r)
{
  const struct graph_run_opts *o = &s->o;
  const uint64_t size = o->h->file_size;
  int rc;
  switch (s->v) {
  case GRAPH_SVC_COPY:
    if ((rc = GR_CUDA(r, cudaMalloc(&s->dev_copy, size))) != 0)
      return rc;
    return graph_loader_make(o->threads, o->device, &s->loader) ? gr_fail(r, -ENOMEM, "no pinned buffers for the loader")
                                                                : 0;
  case GRAPH_SVC_UVM:
    return GR_CUDA(r, cudaMallocManaged(&s->managed, size, cudaMemAttachGlobal));
  case GRAPH_SVC_REOPEN:
    return gr_fs_start(o, &s->dpath, &s->started, r);
  case GRAPH_SVC_ACQUIRE:
  case GRAPH_SVC_ACQUIRE_FILE: {
    if ((rc = gr_fs_start(o, &s->dpath, &s->started, r)) != 0)
      return rc;
    /* the file's first acquire records every page's hash: later ones
     * (the range's or the file's) compare with it */
    const int64_t a = gpufs_acquire(o->path);
    if (a < 0)
      return gr_fail(r, (int)a, "gpufs_acquire %s: %s (%s)", o->path, gpufs_strerror((int)a), gpufs_error_detail());
    return gr_fs_open(s->dpath, &s->d, &s->fd, r);
  }
  default:
    return gr_fail(r, -EINVAL, "no service version %d", (int)s->v);
  }
}

int graph_svc_open(enum graph_svc_version v, const struct graph_run_opts *o, struct graph_svc **out,
                   struct graph_run_result *r)
{
  struct graph_svc *s = (struct graph_svc *)calloc(1, sizeof(*s));
  int rc;
  memset(r, 0, sizeof(*r));
  *out = NULL;
  if (!s)
    return gr_fail(r, -ENOMEM, "no memory");
  s->v = v;
  s->o = *o;
  s->o.cap_s = 0;
  s->fd = -1;
  const uint64_t n = o->g->n ? o->g->n : 1;
  if ((rc = o->algo == GRAPH_SSSP ? 0 : gr_fail(r, -EINVAL, "the service runs sssp")) != 0 ||
      (rc = GR_CUDA(r, cudaSetDevice(o->device))) != 0 ||
      (rc = gr_dev_alloc(&s->d, o->g->n, GRAPH_SSSP, gr_blocks(&s->o, svc_is_fs(v)), r)) != 0 ||
      (rc = GR_CUDA(r, cudaMallocHost((void **)&s->out, n * 8))) != 0 || (rc = svc_setup(s, r)) != 0 ||
      (rc = GR_CUDA(r, cudaDeviceSynchronize())) != 0) {
    graph_svc_close(s);
    return rc;
  }
  *out = s;
  return 0;
}

/* Bring the GPU's view up to date: the part of a round before the kernels. */
static int svc_fetch(struct graph_svc *s, const struct graph_svc_change *c, struct graph_run_result *r,
                     int64_t *dropped)
{
  const struct graph_run_opts *o = &s->o;
  struct graph_err why;
  int64_t a = 0;
  int rc = 0;
  switch (s->v) {
  case GRAPH_SVC_COPY:
    rc = graph_loader_to_device(s->loader, o->path, o->h->file_size, s->dev_copy, &why);
    r->pcie_bytes = o->h->file_size;
    r->pcie_known = 1;
    return rc ? gr_fail(r, rc, "%s", why.msg) : 0;
  case GRAPH_SVC_UVM:
    rc = graph_load_to_host(o->path, o->h->file_size, s->managed, o->threads, &why);
    return rc ? gr_fail(r, rc, "%s", why.msg) : 0;
  case GRAPH_SVC_REOPEN:
    return gr_fs_open(s->dpath, &s->d, &s->fd, r);
  case GRAPH_SVC_ACQUIRE:
    if (c)
      a = gpufs_acquire_range(o->path, (int64_t)c->off, c->len);
    break;
  case GRAPH_SVC_ACQUIRE_FILE:
    if (c)
      a = gpufs_acquire(o->path);
    break;
  default:
    return gr_fail(r, -EINVAL, "no service version %d", (int)s->v);
  }
  if (a < 0)
    return gr_fail(r, (int)a, "gpufs_acquire %s: %s (%s)", o->path, gpufs_strerror((int)a), gpufs_error_detail());
  *dropped = a;
  return 0;
}

int graph_svc_round(struct graph_svc *s, const struct graph_svc_change *c, struct graph_run_result *r,
                    int64_t *dropped)
{
  memset(r, 0, sizeof(*r));
  *dropped = 0;
  const double t0 = s->d.t0 = bench_now();
  int rc = svc_fetch(s, c, r, dropped);
  r->load_s = bench_now() - t0;
  if (!rc && svc_is_fs(s->v))
    rc = gr_compute(gr_fs(&s->o, s->fd), &s->d, &s->o, s->out, r);
  else if (!rc)
    rc = gr_compute(gr_mem((const uint8_t *)(s->dev_copy ? s->dev_copy : s->managed), &s->o), &s->d, &s->o, s->out,
                    r);
  if (s->v == GRAPH_SVC_REOPEN && s->fd >= 0) {
    const int rc2 = gr_fs_close(s->fd, &s->d, r);
    s->fd = -1;
    rc = rc ? rc : rc2;
  }
  r->e2e_s = bench_now() - t0;
  if (!rc && svc_is_fs(s->v) && gpufs_get_stats(&r->st) == 0) {
    r->has_stats = 1;
    const struct gpufs_stats total = r->st;
    r->st.misses -= s->misses;
    r->st.evictions -= s->evictions;
    s->misses = total.misses;
    s->evictions = total.evictions;
    r->pcie_bytes = r->st.misses * (uint64_t)s->o.page_size;
    r->pcie_known = 1;
  }
  r->ok = rc == 0;
  return rc;
}

const uint64_t *graph_svc_result(const struct graph_svc *s) { return s->out; }
