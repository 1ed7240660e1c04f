/*
 * rio_ctx.h - the harness's side of the loaders (loaders.cu): the buffers
 * each version needs, made before its timed runs and freed after them.
 * Benchmarks don't call these; the driver (main.cu) and the tests do.
 */
#ifndef RIO_CTX_H
#define RIO_CTX_H

#include "rodinia-io/harness/rio.h"

/* For version v of run: cpu-io's pageable buffer (the largest input,
 * touched), expert's pinned buffers, streams and events (a set per input),
 * gpufs's device copies of the paths; the error word of rio_errors.
 * 0 or -errno (run->why); call rio_ctx_release in either case. */
int rio_ctx_prepare(struct rio_run *run, enum rio_version v);
void rio_ctx_release(struct rio_run *run);

#endif /* RIO_CTX_H */
