/*
 * debug.cuh - the debug build's check of the group contract (make DEBUG=1,
 * which defines GPUFS_DEBUG; docs/api.md, "The debug build").
 *
 * Every thread of the group (the block for gread, the warp for gread_warp)
 * must pass equal arguments.  A group that breaks it may hang (the meta
 * warp waits for pages no other thread asked for) or read the wrong bytes.
 * In the debug build each device call's first line compares its arguments
 * across the group before anything else:
 *
 *   warp call    __match_all_sync over the active mask, per argument
 *   block call   thread 0 puts its values in the block's scratch; each
 *                thread compares its own with them; __syncthreads_or says
 *                whether any differed, and a shared atomicMin picks the
 *                first argument and lowest thread that did
 *
 * Integers and pointers are compared as 64 bits, paths by a hash of their
 * bytes (threads may pass their own copies of one path).  gfstat's st may
 * differ (every thread gets the fields), gmmap's addr is ignored.  On a
 * mismatch one thread of the group prints the call's name, the argument,
 * its block and thread, its value and the group leader's, and every thread
 * of the group gets GPUFS_DEBUG_NONUNIFORM (-EINVAL) from the call, which
 * does nothing else.
 * In the normal build GPUFS_DEBUG_UNIFORM compiles to nothing.
 * Cache and queue invariants: libgpufs/common/debug.h.
 */
#ifndef GPUFS_DEVICE_DEBUG_CUH
#define GPUFS_DEVICE_DEBUG_CUH

#include <gpufs/errors.h>
#include "libgpufs/common/debug.h"

/* What a call returns to every thread of a group whose arguments differ. */
#define GPUFS_DEBUG_NONUNIFORM (-GPUFS_EINVAL)

#if defined(GPUFS_DEBUG)
#include <stdint.h>
#include <stdio.h>
#include "libgpufs/device/group.cuh"

/* One argument as the check compares it. */
struct gpufs_dbg_arg {
  const char *name;
  uint64_t v;
};

/* The most arguments of one call (gmmap's five), within the scratch. */
#define GPUFS_DBG_ARGS_MAX 6
static_assert(GPUFS_DBG_ARGS_MAX <= GPUFS_CHUNK, "the block check's values fit v64[0]");

#define GPUFS_DBG_INT(x) gpufs_dbg_arg{#x, (uint64_t)(x)}
#define GPUFS_DBG_PTR(x) gpufs_dbg_arg{#x, (uint64_t)(uintptr_t)(x)}
#define GPUFS_DBG_PATH(x) gpufs_dbg_arg{#x " (a hash of its bytes)", gpufs_dbg_path_hash(x)}

/* FNV-1a of the path's bytes up to its NUL (at most GPUFS_PATH_MAX); 0 for
 * NULL.  Any thread. */
__device__ __forceinline__ uint64_t gpufs_dbg_path_hash(const char *p)
{
  if (p == NULL) return 0;
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint32_t i = 0; i < GPUFS_PATH_MAX && p[i] != '\0'; i++)
    h = (h ^ (uint8_t)p[i]) * 0x100000001b3ull;
  return h;
}

/* The report of the thread that found argument a differing from the
 * leader's value `lead`. */
__device__ __forceinline__ void gpufs_dbg_report(const char *call, const char *group,
                                                 const struct gpufs_dbg_arg *a, uint64_t lead)
{
  printf("gpufs debug: %s: argument %s differs within the %s: block (%u,%u,%u) thread "
         "(%u,%u,%u) passed 0x%llx, the %s's first thread 0x%llx\n",
         call, a->name, group, blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x, threadIdx.y,
         threadIdx.z, (unsigned long long)a->v, group, (unsigned long long)lead);
}

/* Whether the calling warp's active threads passed equal a[0..n).  Every
 * active thread of the warp calls it with the same n; synchronizes them. */
static __device__ __noinline__ bool gpufs_dbg_uniform_warp(const char *call,
                                                           const struct gpufs_dbg_arg *a, uint32_t n)
{
  const uint32_t mask = __activemask();
  uint32_t i = 0;
  int same = 1;
  for (; i < n; i++) {
    (void)__match_all_sync(mask, a[i].v, &same);
    if (!same) break;
  }
  if (i == n) return true;
  const uint64_t lead = __shfl_sync(mask, a[i].v, __ffs((int)mask) - 1);
  const uint32_t differ = __ballot_sync(mask, a[i].v != lead);
  if (gpufs_lane() == (uint32_t)__ffs((int)differ) - 1) gpufs_dbg_report(call, "warp", &a[i], lead);
  __syncwarp(mask);
  return false;
}

/* Whether every thread of the block passed equal a[0..n).  Every thread of
 * the block calls it with the same n; synchronizes the block.  Uses the
 * block scratch's v64[0] and v32[0][0], free at a call's entry (group.cuh:
 * the previous call ended with a barrier). */
static __device__ __noinline__ bool gpufs_dbg_uniform_block(const char *call,
                                                            const struct gpufs_dbg_arg *a, uint32_t n)
{
  struct gpufs_block_scratch *sh = &gpufs_block_sh;
  const uint32_t rank = gpufs_block_rank();
  if (rank == 0) {
    for (uint32_t k = 0; k < n; k++) sh->v64[0][k] = a[k].v;
    sh->v32[0][0] = UINT32_MAX;
  }
  __syncthreads();
  uint32_t i = 0;
  while (i < n && a[i].v == sh->v64[0][i]) i++;
  /* relaxed (shared memory): the barrier below orders it before the read */
  if (i < n) atomicMin(&sh->v32[0][0], i << 24 | rank);
  if (!__syncthreads_or(i < n)) return true;
  if (rank == (sh->v32[0][0] & 0xffffffu)) gpufs_dbg_report(call, "block", &a[i], sh->v64[0][i]);
  __syncthreads(); /* every read of the scratch is done before the next call writes it */
  return false;
}

__device__ __forceinline__ bool gpufs_dbg_uniform(gpufs_warp_group, const char *call,
                                                  const struct gpufs_dbg_arg *a, uint32_t n)
{
  return gpufs_dbg_uniform_warp(call, a, n);
}

__device__ __forceinline__ bool gpufs_dbg_uniform(gpufs_block_group, const char *call,
                                                  const struct gpufs_dbg_arg *a, uint32_t n)
{
  return gpufs_dbg_uniform_block(call, a, n);
}

/* The first line of a device call: group g (a gpufs_block_group or
 * gpufs_warp_group), the call's name, what it returns on a mismatch, then
 * its arguments as GPUFS_DBG_INT/PTR/PATH. */
#define GPUFS_DEBUG_UNIFORM(g, call, err, ...)                                    \
  do {                                                                             \
    const struct gpufs_dbg_arg gpufs_dbg_args_[] = {__VA_ARGS__};                  \
    const uint32_t gpufs_dbg_n_ = sizeof gpufs_dbg_args_ / sizeof gpufs_dbg_args_[0]; \
    static_assert(sizeof gpufs_dbg_args_ / sizeof gpufs_dbg_args_[0] <= GPUFS_DBG_ARGS_MAX, \
                  "at most GPUFS_DBG_ARGS_MAX arguments");                         \
    if (!gpufs_dbg_uniform(g, call, gpufs_dbg_args_, gpufs_dbg_n_)) return err;   \
  } while (0)
#else
#define GPUFS_DEBUG_UNIFORM(g, call, err, ...) \
  do {                                         \
  } while (0)
#endif

#endif /* GPUFS_DEVICE_DEBUG_CUH */
