/*
 * scratch.cu - the block-level calls' shared scratch (group.cuh): defined
 * once for the library, so that every kernel that makes block-level calls
 * holds one copy per block, whatever calls it makes.
 */
#include "libgpufs/device/group.cuh"

__shared__ struct gpufs_block_scratch gpufs_block_sh;
