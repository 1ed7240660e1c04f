/* cuda_glue.h - what the C host API calls in the CUDA parts of the library. */
#ifndef GPUFS_HOST_CUDA_GLUE_H
#define GPUFS_HOST_CUDA_GLUE_H

#include "libgpufs/common/devstate.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Copy *d into the device global that every device call reads. 0 / -EIO. */
int gpufs_dev_publish(const struct gpufs_dev *d);

/* Launch gpufs_sync's kernel on stream: one block per file-table entry,
 * each leaving 0 or its file's first error in results[fd] (device memory).
 * 0, or -EIO when the launch fails. */
int gpufs_dev_sync_launch(uint32_t nfiles, int *results, void *stream);

struct gpufs_io_ops;
/* Tests only: file operations the daemon of the NEXT gpufs_start uses
 * (fault injection); NULL restores the C library's. */
void gpufs_test_set_io_ops(const struct gpufs_io_ops *io);

#ifdef __cplusplus
}
#endif
#endif
