/*
 * atomics.h - the only door to memory that two agents touch at once.
 *
 * Every field shared between GPU threads of different groups, or between the
 * GPU and the host daemon, is read and written through these helpers.  In C++
 * (nvcc for device and host, g++ for the host tests) they wrap
 * cuda::atomic_ref from libcu++; in plain C (the host daemon) they map to the
 * GCC __atomic builtins, which have the same C11 semantics and which
 * ThreadSanitizer understands.
 *
 * Two scopes:
 *   _dev  - agents on one GPU (frame states, bucket locks, the file table);
 *           on the host side it is simply an ordinary atomic.
 *   _sys  - GPU <-> host through pinned mapped memory (the request queue).
 *
 * Naming: gpufs_<op>_<order>_<width>_<scope>.  Only the orders the code needs
 * exist; every caller of a non-relaxed helper says in a comment what it
 * publishes or consumes and which access it pairs with.
 */
#ifndef GPUFS_COMMON_ATOMICS_H
#define GPUFS_COMMON_ATOMICS_H

#include <stdint.h>
#if !defined(__CUDA_ARCH__)
#include <sched.h>
#endif

#if defined(__CUDACC__)
#define GPUFS_HD __host__ __device__ __forceinline__
#else
#define GPUFS_HD static inline
#endif

#if defined(__cplusplus)
#include <cuda/atomic>

#define GPUFS_AREF(T, scope, p) cuda::atomic_ref<T, cuda::thread_scope_##scope>(*(p))
#define GPUFS_MO(o) cuda::memory_order_##o

#define GPUFS_DEFINE_ATOMICS(T, sfx, scopename, scope)                                  \
  GPUFS_HD T gpufs_ld_relaxed_##sfx##_##scopename(T *p)                                 \
  { return GPUFS_AREF(T, scope, p).load(GPUFS_MO(relaxed)); }                           \
  GPUFS_HD T gpufs_ld_acquire_##sfx##_##scopename(T *p)                                 \
  { return GPUFS_AREF(T, scope, p).load(GPUFS_MO(acquire)); }                           \
  GPUFS_HD void gpufs_st_relaxed_##sfx##_##scopename(T *p, T v)                         \
  { GPUFS_AREF(T, scope, p).store(v, GPUFS_MO(relaxed)); }                              \
  GPUFS_HD void gpufs_st_release_##sfx##_##scopename(T *p, T v)                         \
  { GPUFS_AREF(T, scope, p).store(v, GPUFS_MO(release)); }                              \
  GPUFS_HD T gpufs_add_relaxed_##sfx##_##scopename(T *p, T v)                           \
  { return GPUFS_AREF(T, scope, p).fetch_add(v, GPUFS_MO(relaxed)); }                   \
  GPUFS_HD T gpufs_add_acqrel_##sfx##_##scopename(T *p, T v)                            \
  { return GPUFS_AREF(T, scope, p).fetch_add(v, GPUFS_MO(acq_rel)); }                   \
  GPUFS_HD T gpufs_add_acquire_##sfx##_##scopename(T *p, T v)                           \
  { return GPUFS_AREF(T, scope, p).fetch_add(v, GPUFS_MO(acquire)); }                   \
  GPUFS_HD T gpufs_sub_release_##sfx##_##scopename(T *p, T v)                           \
  { return GPUFS_AREF(T, scope, p).fetch_sub(v, GPUFS_MO(release)); }                   \
  GPUFS_HD int gpufs_cas_acqrel_##sfx##_##scopename(T *p, T *expected, T desired)       \
  { return GPUFS_AREF(T, scope, p).compare_exchange_strong(*expected, desired,          \
                                                           GPUFS_MO(acq_rel),           \
                                                           GPUFS_MO(acquire)); }        \
  GPUFS_HD int gpufs_cas_acquire_##sfx##_##scopename(T *p, T *expected, T desired)      \
  { return GPUFS_AREF(T, scope, p).compare_exchange_strong(*expected, desired,          \
                                                           GPUFS_MO(acquire),           \
                                                           GPUFS_MO(relaxed)); }        \
  GPUFS_HD T gpufs_or_acqrel_##sfx##_##scopename(T *p, T v)                             \
  { return GPUFS_AREF(T, scope, p).fetch_or(v, GPUFS_MO(acq_rel)); }                    \
  GPUFS_HD T gpufs_and_acqrel_##sfx##_##scopename(T *p, T v)                            \
  { return GPUFS_AREF(T, scope, p).fetch_and(v, GPUFS_MO(acq_rel)); }                   \
  GPUFS_HD T gpufs_xchg_acqrel_##sfx##_##scopename(T *p, T v)                           \
  { return GPUFS_AREF(T, scope, p).exchange(v, GPUFS_MO(acq_rel)); }                    \
  GPUFS_HD T gpufs_xchg_relaxed_##sfx##_##scopename(T *p, T v)                          \
  { return GPUFS_AREF(T, scope, p).exchange(v, GPUFS_MO(relaxed)); }                    \
  GPUFS_HD T gpufs_max_relaxed_##sfx##_##scopename(T *p, T v)                           \
  { return GPUFS_AREF(T, scope, p).fetch_max(v, GPUFS_MO(relaxed)); }
#else /* plain C: the host daemon */
#define GPUFS_DEFINE_ATOMICS(T, sfx, scopename, scope)                                  \
  GPUFS_HD T gpufs_ld_relaxed_##sfx##_##scopename(T *p)                                 \
  { return __atomic_load_n(p, __ATOMIC_RELAXED); }                                      \
  GPUFS_HD T gpufs_ld_acquire_##sfx##_##scopename(T *p)                                 \
  { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }                                      \
  GPUFS_HD void gpufs_st_relaxed_##sfx##_##scopename(T *p, T v)                         \
  { __atomic_store_n(p, v, __ATOMIC_RELAXED); }                                         \
  GPUFS_HD void gpufs_st_release_##sfx##_##scopename(T *p, T v)                         \
  { __atomic_store_n(p, v, __ATOMIC_RELEASE); }                                         \
  GPUFS_HD T gpufs_add_relaxed_##sfx##_##scopename(T *p, T v)                           \
  { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }                                \
  GPUFS_HD T gpufs_add_acqrel_##sfx##_##scopename(T *p, T v)                            \
  { return __atomic_fetch_add(p, v, __ATOMIC_ACQ_REL); }                                \
  GPUFS_HD T gpufs_add_acquire_##sfx##_##scopename(T *p, T v)                           \
  { return __atomic_fetch_add(p, v, __ATOMIC_ACQUIRE); }                                \
  GPUFS_HD T gpufs_sub_release_##sfx##_##scopename(T *p, T v)                           \
  { return __atomic_fetch_sub(p, v, __ATOMIC_RELEASE); }                                \
  GPUFS_HD int gpufs_cas_acqrel_##sfx##_##scopename(T *p, T *expected, T desired)       \
  { return __atomic_compare_exchange_n(p, expected, desired, 0, __ATOMIC_ACQ_REL,       \
                                       __ATOMIC_ACQUIRE); }                             \
  GPUFS_HD int gpufs_cas_acquire_##sfx##_##scopename(T *p, T *expected, T desired)      \
  { return __atomic_compare_exchange_n(p, expected, desired, 0, __ATOMIC_ACQUIRE,       \
                                       __ATOMIC_RELAXED); }                             \
  GPUFS_HD T gpufs_or_acqrel_##sfx##_##scopename(T *p, T v)                             \
  { return __atomic_fetch_or(p, v, __ATOMIC_ACQ_REL); }                                 \
  GPUFS_HD T gpufs_and_acqrel_##sfx##_##scopename(T *p, T v)                            \
  { return __atomic_fetch_and(p, v, __ATOMIC_ACQ_REL); }                                \
  GPUFS_HD T gpufs_xchg_acqrel_##sfx##_##scopename(T *p, T v)                           \
  { return __atomic_exchange_n(p, v, __ATOMIC_ACQ_REL); }                               \
  GPUFS_HD T gpufs_xchg_relaxed_##sfx##_##scopename(T *p, T v)                          \
  { return __atomic_exchange_n(p, v, __ATOMIC_RELAXED); }                               \
  GPUFS_HD T gpufs_max_relaxed_##sfx##_##scopename(T *p, T v)                           \
  { T o = __atomic_load_n(p, __ATOMIC_RELAXED);                                         \
    while (o < v && !__atomic_compare_exchange_n(p, &o, v, 0, __ATOMIC_RELAXED,         \
                                                 __ATOMIC_RELAXED)) {}                  \
    return o; }
#endif

GPUFS_DEFINE_ATOMICS(uint32_t, u32, dev, device)
GPUFS_DEFINE_ATOMICS(uint64_t, u64, dev, device)
GPUFS_DEFINE_ATOMICS(uint32_t, u32, sys, system)
GPUFS_DEFINE_ATOMICS(uint64_t, u64, sys, system)
GPUFS_DEFINE_ATOMICS(int64_t, i64, sys, system)

/* The one pause of every spin loop, host and device: on the GPU sleep *ns
 * and double it up to max_ns (exponential backoff: waiters leave the SM's
 * issue slots and the memory system to the thread they wait for); on the
 * host yield the CPU (the host tests' many threads on few cores).  Any
 * thread; synchronizes nothing. */
GPUFS_HD void gpufs_pause(uint32_t *ns, uint32_t max_ns)
{
#if defined(__CUDA_ARCH__)
  __nanosleep(*ns);
  if (*ns < max_ns) *ns *= 2;
#else
  (void)ns;
  (void)max_ns;
  sched_yield();
#endif
}

/* Unroll the next loop in device code (its loads then issue back to back);
 * nothing for the host compiler. */
#if defined(__CUDA_ARCH__)
#define GPUFS_UNROLL _Pragma("unroll")
#else
#define GPUFS_UNROLL
#endif

/* gpufs_pause for the locks and state waits of the device calls. */
#define GPUFS_PAUSE_MAX_NS 4096u

/* A spin lock in one word of GPU memory (0 free, 1 held): test and
 * test-and-set, pausing up to max_ns.  The hash buckets, the file table and
 * the writable-mapping table use it.  Any one thread. */
GPUFS_HD void gpufs_spin_lock(uint32_t *l, uint32_t max_ns)
{
  uint32_t ns = 32, exp = 0;
  /* acquire: pairs with the release in gpufs_spin_unlock; what the last
   * holder wrote under the lock is visible.  While it is held, wait with
   * relaxed loads. */
  while (!gpufs_cas_acquire_u32_dev(l, &exp, 1u)) {
    while (gpufs_ld_relaxed_u32_dev(l) != 0) gpufs_pause(&ns, max_ns);
    exp = 0;
  }
}

/* One attempt: true when taken (acquire, as gpufs_spin_lock). */
GPUFS_HD int gpufs_spin_trylock(uint32_t *l)
{
  uint32_t exp = 0;
  return gpufs_ld_relaxed_u32_dev(l) == 0 && gpufs_cas_acquire_u32_dev(l, &exp, 1u);
}

GPUFS_HD void gpufs_spin_unlock(uint32_t *l)
{
  /* release: publishes the holder's writes; pairs with gpufs_spin_lock */
  gpufs_st_release_u32_dev(l, 0u);
}

#endif /* GPUFS_COMMON_ATOMICS_H */
