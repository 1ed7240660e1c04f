/*
 * register.h - gpufs_register's work (register.c), called by the public
 * calls in runtime.c with the runtime locked.
 */
#ifndef GPUFS_HOST_REGISTER_H
#define GPUFS_HOST_REGISTER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct gpufs_daemon;
struct gpufs_stats;

/* gpufs_register / gpufs_unregister of path (include/gpufs.cuh), the
 * detail set on an error.  A CUDA device must be current. */
int gpufs_runtime_register(struct gpufs_daemon *daemon, uint64_t register_max, const char *path);
int gpufs_runtime_unregister(struct gpufs_daemon *daemon, const char *path);

/* gpufs_stop: take every registration out of the host file table (while
 * the daemon lives) into a list *out of *n (NULL, 0 when none, or when the
 * list cannot be allocated: then the mappings stay for good), then, once
 * no kernel runs, unpin and unmap them and free the list. */
struct gpufs_hostfile_reg;
void gpufs_runtime_reg_take_all(struct gpufs_daemon *daemon, struct gpufs_hostfile_reg **out,
                                uint32_t *n);
void gpufs_runtime_reg_release_all(struct gpufs_hostfile_reg *regs, uint32_t n);

/* The CUDA pin hooks of registrations, automatic or not (pinner.h), and
 * the bytes they may pin together: register_max, or for 0 half of the
 * host's physical memory. */
struct gpufs_pin_ops;
extern const struct gpufs_pin_ops gpufs_cuda_pin_ops;
uint64_t gpufs_runtime_pin_budget(uint64_t register_max);

/* The runtime-wide reg_* and pins_* counters of *st; refused: failed gpufs_register
 * calls since the start. */
void gpufs_runtime_reg_stats(struct gpufs_daemon *daemon, uint64_t refused, struct gpufs_stats *st);

#ifdef __cplusplus
}
#endif
#endif /* GPUFS_HOST_REGISTER_H */
