/*
 * timed.cu - one version's run as the benchmarks write it (contract:
 * rio_cuda.h, struct rio_timed): the untimed set-up, the clock, the copy
 * of the result back, and the clean-up after success or error alike, so
 * that a benchmark's run() holds only its own buffers and launches.
 */
#include <errno.h>
#include <string.h>

#include "rodinia-io/harness/rio_cuda.h"

int rio_timed_init(struct rio_timed *t, struct rio_run *run, enum rio_version v, enum rio_gpufs_reads reads)
{
  memset(t, 0, sizeof(*t));
  memset(&run->t, 0, sizeof(run->t));
  t->run = run;
  t->v = v;
  t->reads = reads;
  if (v != RIO_CPU_IO && v != RIO_EXPERT && !rio_is_gpufs(v))
    return rio_fail(run, -EINVAL, "%s: no version %d", run->bench->name, (int)v);
  return 0;
}

int rio_timed_alloc(struct rio_timed *t, void **ptr, uint64_t bytes)
{
  *ptr = NULL;
  if (t->ndev == RIO_TIMED_BUFS)
    return rio_fail(t->run, -EINVAL, "%s: more than %d device buffers", t->run->bench->name, RIO_TIMED_BUFS);
  const int rc = RIO_CUDA(t->run, cudaMalloc(ptr, bytes));
  if (!rc)
    t->dev[t->ndev++] = *ptr;
  return rc;
}

int rio_timed_begin(struct rio_timed *t, void *host, uint64_t bytes)
{
  struct rio_run *run = t->run;
  int rc = RIO_CUDA(run, cudaStreamCreateWithFlags(&t->stream, cudaStreamNonBlocking));
  if (rc) {
    t->stream = NULL;
    return rc;
  }
  if ((rc = RIO_CUDA(run, cudaHostRegister(host, bytes, cudaHostRegisterDefault))) != 0)
    return rc;
  t->host = host;
  t->bytes = bytes;
  if (rio_is_gpufs(t->v) && t->reads == RIO_READS_FUSED) {
    run->t.overlapped = 1;
    if (!(t->err = rio_errors(run)))
      return -EIO;
  }
  /* the error word's memset runs on the legacy stream, which t->stream
   * does not wait for: everything done before the clock starts */
  if ((rc = RIO_CUDA(run, cudaDeviceSynchronize())) != 0)
    return rc;
  t->t0 = rio_now();
  return 0;
}

int rio_timed_load(struct rio_timed *t, int i, void *dev)
{
  const int rc = rio_load(t->run, t->v, i, dev);
  t->run->t.io_s = rio_now() - t->t0;
  return rc;
}

int rio_timed_expert(struct rio_timed *t, int i, void *dev, struct rio_expert **job)
{
  t->run->t.overlapped = 1;
  const int rc = rio_expert_start(t->run, i, dev, &t->job[i]);
  *job = t->job[i];
  return rc;
}

/* Joins every expert job: 0 or the first one's error. */
static int rio_timed_join(struct rio_timed *t)
{
  int rc = 0;
  for (int i = 0; i < RIO_MAX_INPUTS; i++) {
    if (!t->job[i])
      continue;
    const int rc2 = rio_expert_finish(t->job[i]);
    t->job[i] = NULL;
    rc = rc ? rc : rc2;
  }
  return rc;
}

int rio_timed_result(struct rio_timed *t, const void *dev, const char *what)
{
  struct rio_run *run = t->run;
  int rc;
  if ((rc = RIO_CUDA(run, cudaGetLastError())) != 0 ||
      (rc = RIO_CUDA(run, cudaMemcpyAsync(t->host, dev, t->bytes, cudaMemcpyDeviceToHost, t->stream))) != 0 ||
      (rc = RIO_CUDA(run, cudaStreamSynchronize(t->stream))) != 0 ||
      (t->err && (rc = rio_errors_read(run, what)) != 0) || (rc = rio_timed_join(t)) != 0)
    return rc;
  run->t.e2e_s = rio_now() - t->t0;
  return 0;
}

int rio_timed_end(struct rio_timed *t, int rc)
{
  /* the loader threads still copy into the buffers until joined */
  rio_timed_join(t);
  if (t->stream) {
    cudaStreamSynchronize(t->stream);
    cudaStreamDestroy(t->stream);
  }
  if (t->host) {
    const int rc2 = RIO_CUDA(t->run, cudaHostUnregister(t->host));
    rc = rc ? rc : rc2;
  }
  for (int k = 0; k < t->ndev; k++)
    cudaFree(t->dev[k]);
  return rc;
}
