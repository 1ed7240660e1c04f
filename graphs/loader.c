/*
 * loader.c - the resident and uvm versions' file loaders (loader.h).
 */
#include "graphs/loader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "benchlib/opts.h"
#include "benchlib/report.h"
#include "benchlib/util.h"
#include "graphs/format.h"

struct graph_loader {
  int nthreads;
  int device; /* each thread's CUDA device */
  void *pinned[GRAPH_LOAD_MAX_THREADS][2];
  cudaStream_t stream[GRAPH_LOAD_MAX_THREADS];
  cudaEvent_t copied[GRAPH_LOAD_MAX_THREADS][2]; /* that buffer's last copy is done */
  /* one load */
  int fd;
  uint64_t size;
  uint8_t *dev;
  int rc[GRAPH_LOAD_MAX_THREADS];
};

void graph_loader_free(struct graph_loader *l)
{
  if (!l)
    return;
  for (int t = 0; t < l->nthreads; t++) {
    for (int b = 0; b < 2; b++) {
      if (l->pinned[t][b])
        cudaFreeHost(l->pinned[t][b]);
      if (l->copied[t][b])
        cudaEventDestroy(l->copied[t][b]);
    }
    if (l->stream[t])
      cudaStreamDestroy(l->stream[t]);
  }
  free(l);
}

int graph_loader_make(int threads, int device, struct graph_loader **out)
{
  struct graph_loader *l = (struct graph_loader *)calloc(1, sizeof(*l));
  *out = NULL;
  if (!l)
    return -ENOMEM;
  l->device = device;
  l->nthreads = threads > 0 ? threads : bench_host_threads();
  if (l->nthreads > GRAPH_LOAD_MAX_THREADS)
    l->nthreads = GRAPH_LOAD_MAX_THREADS;
  for (int t = 0; t < l->nthreads; t++) {
    int bad = cudaStreamCreateWithFlags(&l->stream[t], cudaStreamNonBlocking) != cudaSuccess;
    for (int b = 0; b < 2 && !bad; b++)
      bad = cudaMallocHost(&l->pinned[t][b], GRAPH_LOAD_PIECE) != cudaSuccess ||
            cudaEventCreateWithFlags(&l->copied[t][b], cudaEventDisableTiming) != cudaSuccess;
    if (bad) {
      l->nthreads = t + 1;
      graph_loader_free(l);
      return -ENOMEM;
    }
  }
  *out = l;
  return 0;
}

/* Thread t: pieces t, t + T, ...; a buffer is refilled once its copy is done. */
static int graph_loader_thread(void *arg, int t)
{
  struct graph_loader *l = (struct graph_loader *)arg;
  const uint64_t npieces = (l->size + GRAPH_LOAD_PIECE - 1) / GRAPH_LOAD_PIECE;
  int k = 0, rc = cudaSetDevice(l->device) == cudaSuccess ? 0 : -EIO;
  for (uint64_t p = (uint64_t)t; p < npieces && !rc; p += (uint64_t)l->nthreads, k ^= 1) {
    const uint64_t off = p * GRAPH_LOAD_PIECE;
    const uint64_t len = l->size - off < GRAPH_LOAD_PIECE ? l->size - off : GRAPH_LOAD_PIECE;
    if (cudaEventSynchronize(l->copied[t][k]) != cudaSuccess)
      rc = -EIO;
    else if ((rc = bench_pio_full(l->fd, l->pinned[t][k], len, off, 0)) == 0 &&
             (cudaMemcpyAsync(l->dev + off, l->pinned[t][k], len, cudaMemcpyHostToDevice, l->stream[t]) != cudaSuccess ||
              cudaEventRecord(l->copied[t][k], l->stream[t]) != cudaSuccess))
      rc = -EIO;
  }
  if (cudaStreamSynchronize(l->stream[t]) != cudaSuccess && !rc)
    rc = -EIO;
  l->rc[t] = rc;
  return 0;
}

int graph_loader_to_device(struct graph_loader *l, const char *path, uint64_t size, void *dev, struct graph_err *why)
{
  l->fd = open(path, O_RDONLY);
  if (l->fd < 0)
    return graph_errf(why, -errno, "open %s: %s", path, strerror(errno));
  l->size = size;
  l->dev = (uint8_t *)dev;
  int rc = bench_parallel(l->nthreads, graph_loader_thread, l);
  for (int t = 0; t < l->nthreads && !rc; t++)
    rc = l->rc[t];
  close(l->fd);
  return rc ? graph_errf(why, rc, "loading %s into GPU memory failed (%d)", path, rc) : 0;
}

struct graph_host_job {
  int fd;
  uint8_t *dst;
  uint64_t size;
};

static int graph_host_pieces(void *arg, uint64_t lo, uint64_t hi)
{
  const struct graph_host_job *j = (const struct graph_host_job *)arg;
  for (uint64_t p = lo; p < hi; p++) {
    const uint64_t off = p * GRAPH_LOAD_PIECE;
    const uint64_t len = j->size - off < GRAPH_LOAD_PIECE ? j->size - off : GRAPH_LOAD_PIECE;
    const int rc = bench_pio_full(j->fd, j->dst + off, len, off, 0);
    if (rc)
      return rc;
  }
  return 0;
}

int graph_load_to_host(const char *path, uint64_t size, void *dst, int threads, struct graph_err *why)
{
  struct graph_host_job j = {open(path, O_RDONLY), (uint8_t *)dst, size};
  if (j.fd < 0)
    return graph_errf(why, -errno, "open %s: %s", path, strerror(errno));
  const int rc = bench_parallel_for((size + GRAPH_LOAD_PIECE - 1) / GRAPH_LOAD_PIECE, 1, threads, graph_host_pieces, &j);
  close(j.fd);
  return rc ? graph_errf(why, rc, "reading %s: %s", path, strerror(-rc)) : 0;
}

int graph_check_paths(const char *prog, const char *input, const char *dir, const char *out)
{
  char err[512] = "";
  if (input[0] && bench_check_input("--input", input, 0, err, sizeof(err)) != 0) {
    fprintf(stderr, "%s: %s\n", prog, err);
    return 2;
  }
  if (!input[0] && bench_mkdirs(dir) != 0) {
    fprintf(stderr, "%s: cannot make --dir %s\n", prog, dir);
    return 2;
  }
  if (out[0] && (bench_check_output("--out", out, err, sizeof(err)) != 0 || bench_report_open(out) != 0)) {
    fprintf(stderr, "%s: %s\n", prog, err[0] ? err : "cannot open --out");
    return 2;
  }
  return 0;
}

void graph_report_context(int device, const char *commit, const char *suite, char *name, size_t len)
{
  struct cudaDeviceProp prop;
  snprintf(prop.name, sizeof(prop.name), "cpu only");
  if (device >= 0)
    cudaGetDeviceProperties(&prop, device);
  bench_report_run_context(prop.name, commit);
  bench_report_context("suite", suite);
  snprintf(name, len, "%s", prop.name);
}
