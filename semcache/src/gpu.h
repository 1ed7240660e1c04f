/*
 * gpu.h - SemCache's GPU device: the cache's backend (device memory and
 * copies) and the device routines (blas.h) on the CUDA runtime, cuBLAS and
 * cuSOLVER, loaded at run time (dlopen), so that libsemcache.so loads and
 * runs where no CUDA library or no GPU exists (then the caller falls back
 * to the host BLAS).  gpu.c's opening comment gives the design: streams,
 * handles, and what runs under the cache's lock.
 */
#ifndef SEMCACHE_GPU_H
#define SEMCACHE_GPU_H

#include <stddef.h>

#include "blas.h"
#include "msi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Nonzero while the calling thread is inside a CUDA, cuBLAS or cuSOLVER
 * call of this backend's routines: a free() or munmap() made then is the
 * CUDA libraries' own memory, never a program's matrix, and the drop-in's
 * free() lets it go without the cache's lock (a library holding its own
 * lock in there must not wait for the cache's, whose holder may be
 * waiting for that library's lock in a copy). */
extern __thread int sc_gpu_busy __attribute__((tls_model("initial-exec")));

enum sc_gpu_result {
  SC_GPU_READY = 0,      /* be and dev filled: use them */
  SC_GPU_NO_LIBRARY = 1, /* libcudart or libcublas not found, or lacking a routine */
  SC_GPU_NO_DEVICE = 2,  /* the runtime loaded but sees no GPU */
  SC_GPU_FAILED = 3      /* a GPU, but its memory or streams could not be had */
};

/* Open the first GPU (the runtime's current device) once per process.
 * capacity: the device bytes the cache may use (0: three quarters of the
 * free device memory), reserved now in one allocation, in 2 MiB steps:
 * *pool_bytes says how much was had (less where cudaMalloc gave less; the
 * cache's capacity must not pass it).  Without cuSOLVER, dev->getrf
 * and getrs are NULL (gesv runs on the host).  why: a line for the
 * warning when not READY.  Context: no cache lock held (it loads
 * libraries and allocates).  Not thread-safe: call once (pthread_once). */
enum sc_gpu_result sc_gpu_open(size_t capacity, struct sc_backend *be,
                               struct sc_device_blas *dev, size_t *pool_bytes, char *why,
                               size_t whylen);

#ifdef __cplusplus
}
#endif
#endif /* SEMCACHE_GPU_H */
