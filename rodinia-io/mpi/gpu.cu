/*
 * gpu.cu - rodinia_mpi's GPU side (rio_mpi_gpu.h): a rank's libgpufs
 * instance and the gpufs versions of its part, with the benchmarks' own
 * kernels (conv2d_run_rows, gesummv_run_rows, pathfinder_run_columns) and
 * the harness's loaders.  No MPI here.
 */
#include "rodinia-io/mpi/rio_mpi_gpu.h"

#include <errno.h>
#include <string.h>

#include "rodinia-io/conv2d/conv2d.h"
#include "rodinia-io/gesummv/gesummv.h"
#include "rodinia-io/harness/rio_ctx.h"
#include "rodinia-io/pathfinder/pathfinder.h"

const struct rio_bench *rio_mpi_bench_of(enum rio_mpi_bench b)
{
  switch (b) {
  case RIO_MPI_2DCONV:
    return &rio_bench_conv2d;
  case RIO_MPI_GESUMMV:
    return &rio_bench_gesummv;
  default:
    return &rio_bench_pathfinder;
  }
}

int rio_mpi_gpu_begin(struct rio_run *run, enum rio_version v, const struct gpufs_config *cfg)
{
  int rc = gpufs_start(cfg);
  if (rc)
    return rio_fail(run, rc, "gpufs_start on GPU %d with a %llu MiB cache: %s (%s)", cfg->device,
                    (unsigned long long)(cfg->cache_size >> 20), gpufs_strerror(rc), gpufs_error_detail());
  if ((rc = rio_ctx_prepare(run, v)) != 0) {
    rio_ctx_release(run);
    gpufs_stop();
  }
  return rc;
}

int rio_mpi_gpu_end(struct rio_run *run)
{
  rio_ctx_release(run);
  const int rc = gpufs_stop();
  return rc ? rio_fail(run, rc, "gpufs_stop: %s (%s)", gpufs_strerror(rc), gpufs_error_detail()) : 0;
}

int rio_mpi_gpufs_part(enum rio_mpi_bench b, struct rio_run *run, enum rio_version v, uint64_t u0, uint64_t u1,
                       void *out)
{
  if (u0 >= u1)
    return 0;
  switch (b) {
  case RIO_MPI_2DCONV:
    return conv2d_run_rows(run, v, u0 * CONV2D_BAND, u1 * CONV2D_BAND, (float *)out);
  case RIO_MPI_GESUMMV: {
    const float *got = ((const struct matvec_state *)run->state)->got + u0;
    const int rc = gesummv_run_rows(run, v, u0, u1);
    if (rc == 0 && out != got) /* rank 0's part is already where it gathers */
      memcpy(out, got, (u1 - u0) * sizeof(float));
    return rc;
  }
  default:
    return pathfinder_run_columns(run, v, u0, u1, (int32_t *)out);
  }
}
