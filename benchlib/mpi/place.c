/*
 * benchlib/mpi/place.c - where a rank of an MPI program runs (place.h).
 */
#include "benchlib/mpi/place.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime_api.h>

void bench_mpi_place(int *rank, int *size, int *local, int *nlocal, int *nodes, MPI_Comm *node,
                     char host[MPI_MAX_PROCESSOR_NAME])
{
  int len = 0, first;
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, *rank, MPI_INFO_NULL, node);
  MPI_Comm_rank(*node, local);
  MPI_Comm_size(*node, nlocal);
  MPI_Get_processor_name(host, &len);
  first = *local == 0;
  MPI_Allreduce(&first, nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
}

int bench_mpi_gpu(MPI_Comm node, int local, int nlocal, struct bench_mpi_gpu *g, char *why, size_t len)
{
  unsigned char uuid[16], *all;
  struct cudaDeviceProp p;
  int rc = 0;
  memset(uuid, 0, sizeof(uuid));
  memset(g, 0, sizeof(*g));
  g->gpu = -1;
  cudaError_t e = cudaGetDeviceCount(&g->ngpus);
  if (e != cudaSuccess || g->ngpus < 1) {
    snprintf(why, len, "no CUDA GPU (%s)", e != cudaSuccess ? cudaGetErrorString(e) : "none visible");
    g->ngpus = 0;
    rc = -1;
  } else {
    g->gpu = local % g->ngpus;
    if ((e = cudaSetDevice(g->gpu)) == cudaSuccess)
      e = cudaGetDeviceProperties(&p, g->gpu);
    if (e != cudaSuccess) {
      snprintf(why, len, "GPU %d of %d: %s", g->gpu, g->ngpus, cudaGetErrorString(e));
      rc = -1;
    } else {
      memcpy(uuid, p.uuid.bytes, sizeof(uuid));
      uuid[0] ^= 0x80; /* never the all-zero UUID of a rank without a GPU */
      g->mem = (uint64_t)p.totalGlobalMem;
      snprintf(g->name, sizeof(g->name), "%s", p.name);
    }
  }
  if (!(all = (unsigned char *)malloc(sizeof(uuid) * (size_t)nlocal)))
    MPI_Abort(MPI_COMM_WORLD, 1);
  MPI_Allgather(uuid, (int)sizeof(uuid), MPI_UNSIGNED_CHAR, all, (int)sizeof(uuid), MPI_UNSIGNED_CHAR, node);
  g->sharers = 0;
  for (int i = 0; i < nlocal; i++)
    g->sharers += !memcmp(all + i * sizeof(uuid), uuid, sizeof(uuid));
  free(all);
  return rc;
}

int bench_mpi_agree(int rc)
{
  int all = rc;
  MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return all;
}
