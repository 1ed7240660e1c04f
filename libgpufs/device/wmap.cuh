/*
 * wmap.cuh - the live writable mappings of an instance (wmap.cu): what
 * gmmap with PROT_WRITE records and gmunmap and gmsync look up.
 */
#ifndef GPUFS_DEVICE_WMAP_CUH
#define GPUFS_DEVICE_WMAP_CUH

#include "libgpufs/device/writeback.cuh"

/* Record one more writable mapping of `size` bytes at byte `off` of d's
 * cache, holding a reference on entry `entry`.  0, or -ENOMEM when the
 * table is full.  One thread. */
__device__ int gpufs_wmap_add(const struct gpufs_dev *d, uint64_t off, uint32_t size, uint32_t entry);

/* The entry a writable mapping (off, size) holds, or GPUFS_NIL when there
 * is none (a read-only mapping); with take, one mapping of the key ends.
 * One thread. */
__device__ uint32_t gpufs_wmap_find(const struct gpufs_dev *d, uint64_t off, uint32_t size, bool take);

#endif /* GPUFS_DEVICE_WMAP_CUH */
