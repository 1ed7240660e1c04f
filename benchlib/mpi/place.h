/*
 * benchlib/mpi/place.h - where a rank of an MPI program runs: its place in
 * the job and on its node, and its GPU.  Shared by collage_mpi
 * (samples/collage/mpi/) and rodinia_mpi (rodinia-io/mpi/); built only
 * where MPI is found (`make mpi`).  docs/mpi.md says how ranks pick GPUs.
 */
#ifndef BENCHLIB_MPI_PLACE_H
#define BENCHLIB_MPI_PLACE_H

#include <stddef.h>
#include <stdint.h>
#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The rank in MPI_COMM_WORLD and its size; the rank's node (the ranks of
 * MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)): its communicator, the rank
 * on it and its size; the number of nodes; the host's name.  Every rank
 * of MPI_COMM_WORLD calls it (collectives). */
void bench_mpi_place(int *rank, int *size, int *local, int *nlocal, int *nodes, MPI_Comm *node,
                     char host[MPI_MAX_PROCESSOR_NAME]);

/* What bench_mpi_gpu found. */
struct bench_mpi_gpu {
  int gpu;        /* CUDA device: (rank on the node) % ngpus; -1: none */
  int ngpus;      /* the GPUs the rank sees */
  int sharers;    /* ranks of the node on the same GPU (told by UUID) */
  uint64_t mem;   /* its memory, bytes */
  char name[256]; /* its name */
};

/* Pick the rank's GPU, make it current, and count the ranks of its node
 * that use the same one: by UUID, so the count is right also where the
 * launcher gives each rank its own CUDA_VISIBLE_DEVICES.  Every rank of
 * the node calls it (an MPI_Allgather), also one that finds no GPU.
 * 0; or -1 with why filled (no GPU visible, or the GPU refused). */
int bench_mpi_gpu(MPI_Comm node, int local, int nlocal, struct bench_mpi_gpu *g, char *why, size_t len);

/* Every rank's status in, the highest out, to every rank of
 * MPI_COMM_WORLD (also a barrier). */
int bench_mpi_agree(int rc);

#ifdef __cplusplus
}
#endif

#endif /* BENCHLIB_MPI_PLACE_H */
