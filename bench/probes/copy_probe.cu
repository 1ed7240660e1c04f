/*
 * copy_probe.cu - how fast a grid of the hit row's shape copies cached
 * pages out, by how it copies: the question behind the "hit" row
 * (docs/design-read.md 7, "The copy out"), whose reads ran at
 * 0.745x of the device-to-device copy while the copy itself was the bound.
 *
 * A pool of 4 KiB frames (the page cache) holds a 4 GiB "file" in an order
 * given by a permutation (frames allocated by many groups at once); group
 * g of the grid copies file bytes [g * stride, (g + 1) * stride) in 1 MiB
 * calls into a destination of the file's size, as gread's hit path does:
 * per call its threads look up one page's frame each (a table read), the
 * block shares them (a barrier), copies the call's words with `loads`
 * 16-byte loads in flight per thread, then waits (a barrier).  Variants:
 *   shape   blocks per SM x threads (2 x 256 is the bench's);
 *   loads   words in flight per thread (libgpufs: 8);
 *   flavor  plain loads and stores; ld.global.nc with an L2 256-byte
 *           prefetch hint; streaming (evict-first) stores; both;
 *   flat    the frames in file order (no permutation);
 *   ld.cg   loads cached in L2 only (libgpufs's copy-out since 2026-11-27
 *           eighth);
 *   reload  the pool's address and page size read from device memory in
 *           every trip, through generic pointers (libgpufs's copy-out
 *           before).
 * Every row's destination is checked against the file once.  The first
 * row is the bench's d2d baseline (bench_d2d: cudaMemcpy of the same bytes,
 * bytes copied / time, the median of 5).
 *
 * Usage: copy_probe [--size SIZE]   (default 4G)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime.h>

#include "benchlib/baselines.h"
#include "benchlib/cuda_check.h"
#include "benchlib/opts.h"
#include "benchlib/report.h"

#define PROBE_PAGE 4096u
#define PROBE_CALL (1u << 20)
#define PROBE_PAGES_PER_CALL (PROBE_CALL / PROBE_PAGE)
#define PROBE_RUNS 5
/* a failed CUDA call ends the probe */
#define PROBE_CHECK(call) \
  do {                     \
    if (BENCH_CUDA(call))   \
      exit(1);             \
  } while (0)

enum probe_flavor { PROBE_PLAIN, PROBE_NC_L2, PROBE_CS, PROBE_NC_CS, PROBE_CG, PROBE_RELOAD, PROBE_NFLAVORS };
static const char *probe_flavor_name[] = {"plain", "nc+L2::256B", "st.cs", "nc+st.cs", "ld.cg", "reload"};

/* The pool's address as libgpufs's cache holds it: in device memory,
 * read through a pointer (PROBE_RELOAD reads it in every trip, as a copy
 * loop whose stores may alias it must). */
struct probe_cache {
  uint8_t *data;
  uint32_t page_size;
};

template <int F>
static __device__ __forceinline__ uint4 probe_load(const uint4 *p)
{
  if (F == PROBE_CG) return __ldcg(p);
  if (F == PROBE_NC_L2 || F == PROBE_NC_CS) {
    uint4 v;
    asm volatile("ld.global.nc.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
    return v;
  }
  return *p;
}

template <int F>
static __device__ __forceinline__ void probe_store(uint4 *p, uint4 v)
{
  if (F == PROBE_CS || F == PROBE_NC_CS)
    __stcs(p, v);
  else
    *p = v;
}

/* Block b copies calls b, b + gridDim.x, ... of the file: a page table read
 * per thread, a barrier, the copy, a barrier. */
template <int F, int L>
__global__ void probe_copy_kernel(const uint8_t *pool, const uint32_t *frame_of_page, uint8_t *dst,
                                  uint64_t ncalls, const struct probe_cache *c)
{
  __shared__ uint32_t frames[PROBE_PAGES_PER_CALL];
  const uint32_t T = blockDim.x, t = threadIdx.x;
  const uint64_t words = PROBE_CALL / 16;
  for (uint64_t call = blockIdx.x; call < ncalls; call += gridDim.x) {
    const uint64_t p0 = call * PROBE_PAGES_PER_CALL;
    for (uint32_t i = t; i < PROBE_PAGES_PER_CALL; i += T) frames[i] = frame_of_page[p0 + i];
    __syncthreads();
    uint4 *out = (uint4 *)(dst + call * PROBE_CALL);
    for (uint64_t base = 0; base < words; base += (uint64_t)L * T) {
      uint4 v[L];
#pragma unroll
      for (int u = 0; u < L; u++) {
        const uint64_t k = base + (uint64_t)u * T + t;
        const uint32_t j = (uint32_t)(k / (PROBE_PAGE / 16));
        const uint8_t *base = F == PROBE_RELOAD ? c->data : pool;
        const uint64_t psz = F == PROBE_RELOAD ? c->page_size : PROBE_PAGE;
        const uint4 *src = (const uint4 *)(base + (uint64_t)frames[j] * psz) + k % (PROBE_PAGE / 16);
        v[u] = probe_load<F>(src);
      }
#pragma unroll
      for (int u = 0; u < L; u++) probe_store<F>(out + base + (uint64_t)u * T + t, v[u]);
    }
    __syncthreads();
  }
}

/* The file word at byte offset o (8-byte words): a pattern no shift hides. */
static __host__ __device__ uint64_t probe_word(uint64_t o) { return o * 0x9E3779B97F4A7C15ull ^ (o >> 7); }

__global__ void probe_fill_kernel(uint8_t *pool, const uint32_t *frame_of_page, uint64_t npages)
{
  for (uint64_t p = blockIdx.x; p < npages; p += gridDim.x) {
    uint64_t *f = (uint64_t *)(pool + (uint64_t)frame_of_page[p] * PROBE_PAGE);
    for (uint32_t i = threadIdx.x; i < PROBE_PAGE / 8; i += blockDim.x) f[i] = probe_word(p * PROBE_PAGE + i * 8ull);
  }
}

__global__ void probe_check_kernel(const uint64_t *dst, uint64_t nwords, unsigned long long *bad)
{
  unsigned long long n = 0;
  for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < nwords; i += (uint64_t)gridDim.x * blockDim.x)
    n += dst[i] != probe_word(i * 8);
  if (n) atomicAdd(bad, n);
}

typedef void (*probe_kernel_fn)(const uint8_t *, const uint32_t *, uint8_t *, uint64_t,
                                const struct probe_cache *);

template <int L>
static probe_kernel_fn probe_pick(int flavor)
{
  switch (flavor) {
  case PROBE_NC_L2: return probe_copy_kernel<PROBE_NC_L2, L>;
  case PROBE_CS: return probe_copy_kernel<PROBE_CS, L>;
  case PROBE_NC_CS: return probe_copy_kernel<PROBE_NC_CS, L>;
  case PROBE_CG: return probe_copy_kernel<PROBE_CG, L>;
  case PROBE_RELOAD: return probe_copy_kernel<PROBE_RELOAD, L>;
  default: return probe_copy_kernel<PROBE_PLAIN, L>;
  }
}

static int cmp_double(const void *a, const void *b)
{
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static const char probe_usage[] =
    "usage: copy_probe [--size SIZE]\n"
    "  --size SIZE  the file the copies stand for, whole GiB (1G to 64G, default 4G); three buffers of\n"
    "               that size are allocated on the GPU\n";

/* The command line: 0, 1 for --help, or -EINVAL with err. */
static int probe_options(int argc, char **argv, uint64_t *size, char *err, size_t len)
{
  static const struct bench_opt table[] = {{"size", BENCH_OPT_VALUE, BENCH_OPTS_FIRST}};
  struct bench_opts p;
  int id, rc = 0;
  bench_opts_init(&p, argc, argv, table, 1, err, len);
  while (rc == 0 && (id = bench_opts_next(&p)) != BENCH_OPTS_END) {
    if (id != BENCH_OPTS_FIRST)
      rc = id == BENCH_OPTS_HELP ? 1 : id;
    else if ((rc = bench_opts_size(&p, 1ull << 30, 64ull << 30, size)) == 0 && *size % (1ull << 30))
      rc = bench_opts_fail(&p, "whole GiB (1G, 4G, ...)");
  }
  return rc ? rc : bench_opts_operands(&p, 0);
}

int main(int argc, char **argv)
{
  uint64_t size = 4ull << 30;
  char err[256];
  int rc = probe_options(argc, argv, &size, err, sizeof(err));
  if ((rc = bench_opts_exit("copy_probe", rc, err, probe_usage)) >= 0)
    return rc;
  if (bench_need_gpu("copy_probe", 0) != 0)
    return 2;
  const uint64_t gib = size >> 30, npages = size / PROBE_PAGE, ncalls = size / PROBE_CALL;
  cudaDeviceProp prop;
  PROBE_CHECK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  uint8_t *pool, *flat, *dst;
  uint32_t *perm, *ident;
  unsigned long long *bad;
  struct probe_cache *caches; /* [0]: the permuted pool, [1]: the flat one */
  PROBE_CHECK(cudaMalloc(&pool, size));
  PROBE_CHECK(cudaMalloc(&flat, size));
  PROBE_CHECK(cudaMalloc(&dst, size));
  PROBE_CHECK(cudaMalloc(&perm, npages * 4));
  PROBE_CHECK(cudaMalloc(&ident, npages * 4));
  PROBE_CHECK(cudaMalloc(&bad, sizeof(*bad)));
  PROBE_CHECK(cudaMalloc(&caches, 2 * sizeof(*caches)));
  const struct probe_cache hc[2] = {{pool, PROBE_PAGE}, {flat, PROBE_PAGE}};
  PROBE_CHECK(cudaMemcpy(caches, hc, sizeof(hc), cudaMemcpyHostToDevice));
  uint32_t *h = (uint32_t *)malloc(npages * 4);
  for (uint64_t i = 0; i < npages; i++) h[i] = (uint32_t)i;
  PROBE_CHECK(cudaMemcpy(ident, h, npages * 4, cudaMemcpyHostToDevice));
  srand(7);
  for (uint64_t i = npages - 1; i > 0; i--) { /* Fisher-Yates */
    const uint64_t j = (((uint64_t)rand() << 31) ^ (uint64_t)rand()) % (i + 1);
    const uint32_t x = h[i];
    h[i] = h[j];
    h[j] = x;
  }
  PROBE_CHECK(cudaMemcpy(perm, h, npages * 4, cudaMemcpyHostToDevice));
  free(h);
  probe_fill_kernel<<<4 * sms, 256>>>(pool, perm, npages);
  probe_fill_kernel<<<4 * sms, 256>>>(flat, ident, npages);
  PROBE_CHECK(cudaDeviceSynchronize());

  cudaEvent_t e0, e1;
  PROBE_CHECK(cudaEventCreate(&e0));
  PROBE_CHECK(cudaEventCreate(&e1));
  /* the bench's own d2d baseline (benchlib), on the same bytes */
  struct bench_rate rate;
  if (bench_d2d(dst, flat, size, &rate) != 0) {
    fprintf(stderr, "copy_probe: d2d: %s\n", rate.note);
    return 1;
  }
  const double d2d = rate.gbps;
  double runs[PROBE_RUNS];
  printf("{\"probe\": \"copy\", \"row\": \"d2d\", \"gbps\": %.1f, \"gib\": %llu}\n", d2d,
         (unsigned long long)gib);

  static const int shapes[][2] = {{2, 256}, {4, 256}, {8, 256}, {1, 1024}, {2, 1024}};
  static const int loads[] = {4, 8, 16};
  char table[8192];
  int tl = snprintf(table, sizeof(table), "%-6s %-9s %-5s %-12s %9s %7s\n", "frames", "shape", "loads",
                    "flavor", "GB/s", "x d2d");
  for (int flat_frames = 0; flat_frames < 2; flat_frames++)
    for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++)
      for (size_t l = 0; l < sizeof(loads) / sizeof(loads[0]); l++)
        for (int fl = 0; fl < PROBE_NFLAVORS; fl++) {
          /* the full grid of variants only at the bench's shape and loads */
          const int bench_shape = s == 0, bench_loads = loads[l] == 8;
          if (!bench_shape && !bench_loads) continue;
          if (flat_frames && !(bench_shape && bench_loads)) continue;
          const int L = loads[l];
          probe_kernel_fn fn = L == 4 ? probe_pick<4>(fl) : L == 8 ? probe_pick<8>(fl) : probe_pick<16>(fl);
          const int blocks = shapes[s][0] * sms, threads = shapes[s][1];
          PROBE_CHECK(cudaMemset(dst, 0, size));
          for (int r = 0; r < PROBE_RUNS; r++) {
            float ms;
            PROBE_CHECK(cudaEventRecord(e0));
            fn<<<blocks, threads>>>(flat_frames ? flat : pool, flat_frames ? ident : perm, dst, ncalls,
                                    caches + flat_frames);
            PROBE_CHECK(cudaEventRecord(e1));
            PROBE_CHECK(cudaEventSynchronize(e1));
            PROBE_CHECK(cudaGetLastError());
            PROBE_CHECK(cudaEventElapsedTime(&ms, e0, e1));
            runs[r] = (double)size / (ms * 1e-3) / 1e9;
          }
          qsort(runs, PROBE_RUNS, sizeof(double), cmp_double);
          unsigned long long nbad = 0;
          PROBE_CHECK(cudaMemset(bad, 0, sizeof(*bad)));
          probe_check_kernel<<<4 * sms, 256>>>((const uint64_t *)dst, size / 8, bad);
          PROBE_CHECK(cudaMemcpy(&nbad, bad, sizeof(nbad), cudaMemcpyDeviceToHost));
          const double g = runs[PROBE_RUNS / 2];
          printf("{\"probe\": \"copy\", \"frames\": \"%s\", \"blocks_per_sm\": %d, \"threads\": %d, "
                 "\"loads\": %d, \"flavor\": \"%s\", \"gbps\": %.1f, \"ratio_d2d\": %.3f, \"bad_words\": %llu}\n",
                 flat_frames ? "flat" : "permuted", shapes[s][0], threads, L, probe_flavor_name[fl], g,
                 g / d2d, nbad);
          fflush(stdout);
          char shape[16];
          snprintf(shape, sizeof(shape), "%dx%d", shapes[s][0], threads);
          tl += snprintf(table + tl, sizeof(table) - (size_t)tl, "%-6s %-9s %-5d %-12s %9.1f %7.3f%s\n",
                         flat_frames ? "flat" : "perm", shape, L, probe_flavor_name[fl], g, g / d2d,
                         nbad ? "  BAD" : "");
        }
  printf("\nd2d (cudaMemcpy) %.1f GB/s, %llu GiB\n%s", d2d, (unsigned long long)gib, table);
  return 0;
}
