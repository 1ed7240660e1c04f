/*
 * debug.h - invariant checks of the debug build (make DEBUG=1, which
 * defines GPUFS_DEBUG), for code that compiles on both sides: the frame
 * states (frame.h, chain.h, cache.h) and the request queue's slots
 * (queue.h).  The device calls' group-argument checks are device-only:
 * libgpufs/device/debug.cuh.
 *
 * GPUFS_DEBUG_ASSERT(cond, name): in the debug build, when cond is false,
 * reports the invariant's name as a failed assertion ("gpufs invariant:
 * name", with the file, line and function; on the GPU also the block and
 * thread) and stops: abort() on the host, a trap on the GPU (the kernel
 * fails, the context is lost: a broken invariant leaves the cache or the
 * queue in a state nothing can be trusted in).  It is the toolkit's own
 * assert path (__assert_fail, which nvcc provides for device code), kept
 * on by GPUFS_DEBUG whatever NDEBUG says.
 * In the normal build it compiles to nothing: cond is not evaluated (it
 * stays in an unevaluated sizeof, so that a value kept only for the check
 * is still "used" and the compiler drops it: a fetch-add whose old value
 * only the check reads stays a reduction).
 */
#ifndef GPUFS_COMMON_DEBUG_H
#define GPUFS_COMMON_DEBUG_H

#if defined(GPUFS_DEBUG)
#include <assert.h>
#define GPUFS_DEBUG_ASSERT(cond, name) \
  ((cond) ? (void)0 : __assert_fail("gpufs invariant: " name, __FILE__, __LINE__, __func__))
#else
#define GPUFS_DEBUG_ASSERT(cond, name) ((void)sizeof(cond))
#endif

#endif /* GPUFS_COMMON_DEBUG_H */
