/*
 * registry.cu - the benchmarks of the suite, in the order of the table:
 * the Rodinia seven, Parboil's stencil, the PolyBench-GPU six.
 */
#include <string.h>

#include "rodinia-io/harness/rio.h"

extern "C" const struct rio_bench rio_bench_hotspot, rio_bench_lud, rio_bench_backprop, rio_bench_bfs,
    rio_bench_dwt2d, rio_bench_nw, rio_bench_pathfinder, rio_bench_stencil, rio_bench_conv2d, rio_bench_conv3d,
    rio_bench_gesummv, rio_bench_mvt, rio_bench_bicg, rio_bench_atax;

const struct rio_bench *const rio_benches[] = {
    &rio_bench_hotspot, &rio_bench_lud,     &rio_bench_backprop, &rio_bench_bfs,     &rio_bench_dwt2d,
    &rio_bench_nw,      &rio_bench_pathfinder, &rio_bench_stencil, &rio_bench_conv2d, &rio_bench_conv3d,
    &rio_bench_gesummv, &rio_bench_mvt,     &rio_bench_bicg,     &rio_bench_atax};
const int rio_nbenches = (int)(sizeof(rio_benches) / sizeof(rio_benches[0]));

const struct rio_bench *rio_find_bench(const char *name)
{
  for (int i = 0; i < rio_nbenches; i++)
    if (!strcmp(rio_benches[i]->name, name))
      return rio_benches[i];
  return NULL;
}
