/*
 * cublas_calls.c - cuBLAS's own time for the calls semcache/bench/calls.c
 * times through the drop-in: dgemm (n x n x n) and dgemv (n x n) on
 * device memory, each call followed by cudaStreamSynchronize (as the
 * drop-in's routines end), one stream and handle made before.  The
 * baseline of "The cost of a call" (docs/semcache.md): a drop-in call with
 * cached operands against this, in the same run.
 *
 * Usage: cublas_calls ROUTINE N[,N...]   (ROUTINE dgemm or dgemv)
 * Per size, one untimed call, then calls until 0.05 s or 200 calls (at
 * least 3).  Prints one JSON line per size: routine, mode "cublas", n,
 * calls, us (per call).  Exit 1 without a GPU.
 */
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static int call(cublasHandle_t h, cudaStream_t s, int gemm, int n, const double *a,
                const double *x, double *y)
{
  const double one = 1.0, zero = 0.0;
  const cublasStatus_t st =
      gemm ? cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, x, n, &zero, y, n)
           : cublasDgemv(h, CUBLAS_OP_N, n, n, &one, a, n, x, 1, &zero, y, 1);
  return st != CUBLAS_STATUS_SUCCESS || cudaStreamSynchronize(s) != cudaSuccess;
}

int main(int argc, char **argv)
{
  if (argc != 3 || (strcmp(argv[1], "dgemm") && strcmp(argv[1], "dgemv"))) {
    fprintf(stderr, "usage: cublas_calls dgemm|dgemv N[,N...]\n");
    return 2;
  }
  const int gemm = !strcmp(argv[1], "dgemm");
  cudaStream_t s;
  cublasHandle_t h;
  if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess ||
      cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
    fprintf(stderr, "cublas_calls: no GPU\n");
    return 1;
  }
  cublasSetStream(h, s);
  for (char *p = argv[2], *end; *p; p = *end ? end + 1 : end) {
    const int n = (int)strtol(p, &end, 10);
    const size_t elems = (size_t)n * n;
    double *a = NULL, *x = NULL, *y = NULL;
    if (n <= 0 || cudaMalloc((void **)&a, elems * 8) || cudaMalloc((void **)&x, elems * 8) ||
        cudaMalloc((void **)&y, elems * 8) || cudaMemset(a, 0, elems * 8) ||
        cudaMemset(x, 0, elems * 8) || call(h, s, gemm, n, a, x, y)) {
      fprintf(stderr, "cublas_calls: size %d failed\n", n);
      return 1;
    }
    double spent = 0;
    int calls = 0;
    while (calls < 3 || (spent < 0.05 && calls < 200)) {
      const double t0 = bench_now();
      if (call(h, s, gemm, n, a, x, y)) return 1;
      spent += bench_now() - t0;
      calls++;
    }
    printf("{\"routine\":\"%s\",\"mode\":\"cublas\",\"n\":%d,\"calls\":%d,\"us\":%.2f}\n",
           argv[1], n, calls, spent / calls * 1e6);
    fflush(stdout);
    cudaFree(a);
    cudaFree(x);
    cudaFree(y);
  }
  cublasDestroy(h);
  cudaStreamDestroy(s);
  return 0;
}
