/* detail.h - the host API's per-thread "why did it fail" message. */
#ifndef GPUFS_HOST_DETAIL_H
#define GPUFS_HOST_DETAIL_H

#ifdef __cplusplus
extern "C" {
#endif

void gpufs_set_detail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void gpufs_clear_detail(void);
const char *gpufs_strerror(int err);
const char *gpufs_error_detail(void);

#ifdef __cplusplus
}
#endif
#endif
