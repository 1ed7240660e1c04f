/*
 * rounds.cuh - what every GPU version runs once the CSR is where its
 * kernels read it (versions.cu, service.cu): the rounds' arrays, the
 * rounds of each algorithm over a source (kernels.cuh), and the set-up of
 * the two kinds of source: a pointer to a copy of the whole file
 * (gr_mem), or the file through libgpufs (gr_fs_*).  CUDA C++; the
 * templates here, the rest in rounds.cu.
 */
#ifndef GRAPHS_ROUNDS_CUH
#define GRAPHS_ROUNDS_CUH

#include <stdint.h>

#include <cuda_runtime.h>

#include "graphs/kernels.cuh"
#include "graphs/versions.h"

/* Write a sentence into r->why and return rc. */
int gr_fail(struct graph_run_result *r, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* 0, or -EIO with the call and CUDA's message in r->why. */
int gr_cuda(struct graph_run_result *r, cudaError_t e, const char *call);
#define GR_CUDA(r, call) gr_cuda((r), (call), #call)

/* Arrays of the rounds, made before the clock starts. */
struct gr_dev {
  uint64_t n;
  unsigned long long *val;
  uint8_t *cur, *next;
  struct gr_flags *flags; /* also the word gr_fs_open's kernel returns the descriptor in (err) */
  float *rank, *contrib;
  uint32_t *deg;
  unsigned blocks; /* of the round kernels */
  double t0, cap_s; /* the run's start, and its time cap (0: none) */
  unsigned long long deadline; /* the cap on the device's clock (gr_deadline; 0: none) */
  unsigned sweeps;  /* kernels launched over the file: every other one goes backwards (kernels.cuh) */
};

int gr_dev_alloc(struct gr_dev *d, uint64_t n, enum graph_algo a, unsigned blocks, struct graph_run_result *r);
void gr_dev_free(struct gr_dev *d);

/* Before a round kernel: its flags zeroed (the changed flag, the error,
 * the warps' run counter), on the launch's stream. */
int gr_ready(struct gr_dev *d, struct graph_run_result *r);
/* After a kernel: launch errors, the error a warp recorded, and
 * -ETIMEDOUT (r->capped) when its warps stopped at the deadline. */
int gr_after(struct gr_dev *d, struct graph_run_result *r, int *changed);
/* Between rounds: -ETIMEDOUT (r->capped) once the run is past its cap. */
int gr_capped(const struct gr_dev *d, struct graph_run_result *r);
/* d->deadline: the device's clock when the run will be d->cap_s past
 * d->t0 (read by a one-thread kernel), so that a round that runs long
 * stops there too (a uvm round that migrates the graph again can take
 * minutes); 0 without a cap. */
int gr_deadline(struct gr_dev *d, struct graph_run_result *r);
/* A round's arguments over d's arrays, the algorithm's own left to fill. */
gr_round gr_round_make(struct gr_dev *d, enum graph_algo a);

__global__ void gr_init_min(unsigned long long *val, uint8_t *cur, uint64_t n, enum graph_algo a, uint64_t source);
__global__ void gr_contrib(const float *rank, const uint32_t *deg, float *contrib, uint64_t n, int first);

/* Blocks of the round kernels: fs, the libgpufs source (at most a warp
 * per four frames of its cache: a warp pins up to three); else enough
 * for the vertices. */
unsigned gr_blocks(const struct graph_run_opts *o, int fs);

/* The pointer source over a copy of the whole file at base (device-readable). */
gr_mem_src gr_mem(const uint8_t *base, const struct graph_run_opts *o);

/* libgpufs for o (its cache: o->limit, or the file and 64 MiB), and the
 * path copied into device memory (*dpath, cudaFree'd by the caller).
 * *started: libgpufs started (the caller calls gpufs_stop), set even when
 * a later step fails. */
int gr_fs_start(const struct graph_run_opts *o, char **dpath, int *started, struct graph_run_result *r);
/* One warp gopens dpath read-only (*fd) or gcloses fd; 0 or -errno. */
int gr_fs_open(const char *dpath, struct gr_dev *d, int *fd, struct graph_run_result *r);
int gr_fs_close(int fd, struct gr_dev *d, struct graph_run_result *r);
/* The libgpufs source over descriptor fd. */
gr_fs_src gr_fs(const struct graph_run_opts *o, int fd);

template <class Src>
static int gr_pagerank(const Src &src, struct gr_dev *d, struct graph_run_result *r)
{
  const uint64_t n = d->n;
  gr_round rd = gr_round_make(d, GRAPH_PR);
  rd.contrib = d->contrib;
  rd.rank = d->rank;
  rd.base = (float)((1.0 - GRAPH_PR_DAMPING) / (double)n);
  rd.deg = d->deg;
  int rc = gr_ready(d, r);
  if (!rc) {
    rd.reverse = d->sweeps++ & 1;
    gr_degree_kernel<<<d->blocks, GR_THREADS>>>(src, rd);
    rc = gr_after(d, r, NULL);
  }
  for (int it = 0; !rc && it < GRAPH_PR_ITERS; it++) {
    gr_contrib<<<d->blocks, GR_THREADS>>>(d->rank, d->deg, d->contrib, n, it == 0);
    if ((rc = gr_ready(d, r)) != 0)
      break;
    rd.reverse = d->sweeps++ & 1;
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
    if ((rc = gr_ready(d, r)) != 0)
      break;
    rd.reverse = d->sweeps++ & 1;
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
  int rc = gr_deadline(d, r);
  if (!rc)
    rc = o->algo == GRAPH_PR ? gr_pagerank(src, d, r) : gr_min_rounds(src, d, o, r);
  if (!rc)
    rc = GR_CUDA(r, cudaMemcpy(out, o->algo == GRAPH_PR ? (void *)d->rank : (void *)d->val,
                               graph_out_bytes(o->algo) * d->n, cudaMemcpyDeviceToHost));
  return rc;
}

#endif /* GRAPHS_ROUNDS_CUH */
