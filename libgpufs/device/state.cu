/*
 * state.cu - the device-side instance states, their publication, and the
 * one-request path to the host.
 */
#include <cuda_runtime.h>

#include "libgpufs/device/internal.cuh"
#include "libgpufs/host/cuda_glue.h"

__device__ struct gpufs_dev gpufs_devs[GPUFS_MAX_INSTANCES];
__device__ uint32_t gpufs_dev_default = GPUFS_NO_INSTANCE;

extern "C" int gpufs_dev_clear(void)
{
  static const struct gpufs_dev zero[GPUFS_MAX_INSTANCES] = {};
  const uint32_t none = GPUFS_NO_INSTANCE;
  if (cudaMemcpyToSymbol(gpufs_devs, zero, sizeof(zero)) != cudaSuccess) return -GPUFS_EIO;
  return cudaMemcpyToSymbol(gpufs_dev_default, &none, sizeof(none)) == cudaSuccess ? 0
                                                                                   : -GPUFS_EIO;
}

extern "C" int gpufs_dev_publish(const struct gpufs_dev *d, int is_default)
{
  if (d->instance >= GPUFS_MAX_INSTANCES) return -GPUFS_EINVAL;
  cudaError_t e = cudaMemcpyToSymbol(gpufs_devs, d, sizeof(*d), d->instance * sizeof(*d));
  if (e == cudaSuccess && is_default)
    e = cudaMemcpyToSymbol(gpufs_dev_default, &d->instance, sizeof(d->instance));
  return e == cudaSuccess ? 0 : -GPUFS_EIO;
}

__device__ int64_t gpufs_host_call(const struct gpufs_dev *d, const struct gpufs_call *c,
                                   uint64_t out[4])
{
  const struct gpufs_queue_ref *q = &d->q;
  uint64_t t = gpufs_q_reserve(q, 1);
  int rc = gpufs_q_wait_free(q, t);
  if (rc) return rc;
  struct gpufs_slot *s = gpufs_q_slot(q, t);
  uint8_t *stage = q->staging_host + (uint64_t)gpufs_q_index(q, t) * q->stride;
  for (uint32_t i = 0; i < c->payload_len; i++) stage[i] = (uint8_t)c->payload[i];
  gpufs_st_relaxed_u32_sys(&s->op, c->op);
  gpufs_st_relaxed_u32_sys((uint32_t *)&s->hfid, (uint32_t)c->hfid);
  gpufs_st_relaxed_u64_sys(&s->offset, c->offset);
  gpufs_st_relaxed_u32_sys(&s->len, c->len);
  gpufs_st_relaxed_u32_sys(&s->arg, c->arg);
  gpufs_q_post(q, t);
  rc = gpufs_q_wait_done(q, t);
  if (rc) return rc;
  int64_t res = gpufs_ld_relaxed_i64_sys(&s->result);
  for (int i = 0; i < 4; i++) out[i] = gpufs_ld_relaxed_u64_sys(&s->out[i]);
  gpufs_q_release(q, t);
  return res;
}
