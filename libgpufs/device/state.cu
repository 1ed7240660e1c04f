/*
 * state.cu - the device-side instance states, their publication, and the
 * one-request path to the host.
 */
#include <cuda_runtime.h>

#include "libgpufs/device/internal.cuh"
#include "libgpufs/device/post.cuh"
#include "libgpufs/device/round.cuh"
#include "libgpufs/common/devcalls.h"

__device__ struct gpufs_dev gpufs_devs[GPUFS_MAX_INSTANCES];
__device__ uint32_t gpufs_dev_default = GPUFS_NO_INSTANCE;
__device__ uint32_t gpufs_pull_gates[GPUFS_PULL_GATES]; /* round.cuh */

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
  const struct gpufs_req r = {c->op, c->hfid, c->offset, c->len, c->arg};
  struct gpufs_reply rep = {};
  /* gpufs_q_call, with the device's wait for the slot (post.cuh) */
  const uint64_t t = gpufs_q_reserve(&d->q, 1);
  int64_t res = gpufs_post_wait_free(d, t);
  if (res == 0) res = gpufs_q_call_owned(&d->q, t, &r, c->payload, c->payload_len, &rep);
  for (int i = 0; i < 4; i++) out[i] = rep.out[i];
  return res;
}
