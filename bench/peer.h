/*
 * peer.h - gpufs_bench's "peer" workload (bench/peer.cu): two instances on
 * one GPU, and host reads through the GPU caches (gpufs_pread).
 */
#ifndef BENCH_PEER_H
#define BENCH_PEER_H

#ifdef __cplusplus
extern "C" {
#endif

/* Add the peer_seq, pread_cold, gpufs_pread, gpufs_pread_pageable and d2h
 * rows (g_bench's data file must exist; it is page-cached again after). */
void bench_peer(void);

#ifdef __cplusplus
}
#endif
#endif /* BENCH_PEER_H */
