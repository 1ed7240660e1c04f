/*
 * host_copy_probe.cu - how fast host threads copy page-cached file data into
 * pinned staging, by how they copy: the daemon's half of a first-pass read
 * (docs/config.md, "How bytes reach the GPU").  A worker copies each READ
 * run from a read-only shared mapping of the file into the run's staging
 * slots; the questions are what the copy's page faults cost (a fresh
 * mapping faults once per fault-around window, 64 KiB) and what its stores
 * cost (ordinary stores read each destination line before writing it).
 *
 * T threads copy the whole file in runs of R bytes, thread t taking runs t,
 * t + T, ... into its own ring of pinned staging (cudaHostAlloc, mapped, as
 * the daemon's).  Ways (`enum hcp_way`):
 *   pread      pread(2) into the staging;
 *   map        memcpy from a fresh mapping (faults as it goes);
 *   map/popr   the same, each run first populated with
 *              madvise(MADV_POPULATE_READ) (one call a run instead of a
 *              fault per 64 KiB);
 *   map/warm   memcpy from a mapping populated before the clock;
 *   map/nt     a fresh mapping, non-temporal 16-byte stores (no read of the
 *              destination lines), one sfence a run;
 *   map/warm/nt  both.
 * Then random 4 KiB pages (a quarter of the file's pages in all, as the
 * rand row's first pass misses): pread, map and map/warm.
 * With --gpu a kernel pulls every thread's staging over PCIe the whole
 * time (as the waiting groups do), so the copies share host memory with the
 * link's reads.  Every staging byte of the last run of each thread is
 * checked against the file's pattern.
 *
 * Usage: host_copy_probe [--size SIZE] [--threads N] [--gpu] [--out FILE]
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <emmintrin.h>
#include <cuda_runtime.h>

#include "benchlib/cuda_check.h"
#include "benchlib/opts.h"
#include "benchlib/util.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

#define HCP_RING (32ull << 20) /* staging bytes per thread */
#define HCP_PATH "/tmp/gpufs_host_copy_probe.dat"

enum hcp_way { HCP_PREAD, HCP_MAP, HCP_MAP_POPR, HCP_MAP_WARM, HCP_MAP_NT, HCP_MAP_WARM_NT, HCP_NWAYS };
static const char *const hcp_way_names[HCP_NWAYS] = {"pread", "map", "map/popr", "map/warm", "map/nt",
                                                     "map/warm/nt"};

struct hcp_run {
  enum hcp_way way;
  int fd;
  const uint8_t *map;
  uint64_t size, run;
  uint32_t threads;
  uint64_t random; /* runs a thread copies from random run-aligned
                      offsets; 0: the whole file in order */
  uint8_t *staging; /* threads x HCP_RING */
};

struct hcp_thread {
  const struct hcp_run *r;
  uint32_t id;
  int err;
};

/* The file's 8-byte word at byte b: its offset, mixed. */
static uint64_t hcp_word(uint64_t b) { return (b / 8) * 0x9E3779B97F4A7C15ull ^ 0x5bd1e995ull; }

/* Copy n bytes (a multiple of 64, both 16-byte aligned) with non-temporal
 * stores; the caller fences (sfence) before it publishes them. */
static void hcp_copy_nt(uint8_t *dst, const uint8_t *src, uint64_t n)
{
  __m128i *d = (__m128i *)dst;
  const __m128i *s = (const __m128i *)src;
  for (uint64_t i = 0; i < n / 16; i += 4) {
    __m128i a = _mm_load_si128(s + i), b = _mm_load_si128(s + i + 1);
    __m128i c = _mm_load_si128(s + i + 2), e = _mm_load_si128(s + i + 3);
    _mm_stream_si128(d + i, a);
    _mm_stream_si128(d + i + 1, b);
    _mm_stream_si128(d + i + 2, c);
    _mm_stream_si128(d + i + 3, e);
  }
}

static int hcp_one(const struct hcp_run *r, uint8_t *dst, uint64_t off, uint64_t len)
{
  const uint8_t *src = r->map + off;
  switch (r->way) {
  case HCP_PREAD:
    return pread(r->fd, dst, len, (off_t)off) == (ssize_t)len ? 0 : -EIO;
  case HCP_MAP_POPR:
    if (madvise((void *)src, len, MADV_POPULATE_READ)) return -errno;
    memcpy(dst, src, len);
    return 0;
  case HCP_MAP_NT:
  case HCP_MAP_WARM_NT:
    hcp_copy_nt(dst, src, len);
    _mm_sfence();
    return 0;
  default:
    memcpy(dst, src, len);
    return 0;
  }
}

static void *hcp_thread_main(void *arg)
{
  struct hcp_thread *t = (struct hcp_thread *)arg;
  const struct hcp_run *r = t->r;
  uint8_t *ring = r->staging + (uint64_t)t->id * HCP_RING;
  uint64_t pos = 0, last_off = UINT64_MAX, last_pos = 0;
  uint64_t x = 0x9E3779B97F4A7C15ull * (t->id + 1), k = 0;
  for (uint64_t off = (uint64_t)t->id * r->run; r->random ? k < r->random : off < r->size;
       off += (uint64_t)r->threads * r->run, k++) {
    if (r->random) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
      off = x % (r->size / r->run) * r->run;
    }
    const uint64_t len = r->run < r->size - off ? r->run : r->size - off;
    if (pos + len > HCP_RING) pos = 0;
    t->err = hcp_one(r, ring + pos, off, len);
    if (t->err) return NULL;
    last_off = off, last_pos = pos;
    pos += len;
  }
  /* every byte of the thread's last run */
  for (uint64_t b = 0; last_off != UINT64_MAX && b + 8 <= r->run && last_off + b < r->size; b += 8) {
    uint64_t w;
    memcpy(&w, ring + last_pos + b, 8);
    if (w != hcp_word(last_off + b)) {
      t->err = -EBADMSG;
      break;
    }
  }
  return NULL;
}

/* A kernel that pulls the staging over PCIe until *stop (host-mapped) is
 * set; each block's first thread reads the word every 16th trip (many
 * readers of one host line slow the link: docs/design.md 5). */
__global__ void hcp_pull(const uint4 *src, uint64_t words, const int *stop, unsigned long long *pulled)
{
  __shared__ int done;
  uint4 acc = make_uint4(0, 0, 0, 0);
  unsigned long long n = 0;
  const uint64_t step = (uint64_t)gridDim.x * blockDim.x * 8;
  uint64_t i0 = (uint64_t)blockIdx.x * blockDim.x * 8;
  for (uint32_t trip = 0;; trip++, i0 += step) {
    if ((trip & 15) == 0) {
      if (threadIdx.x == 0) done = __ldcv(stop);
      __syncthreads();
      if (done) break;
    }
#pragma unroll
    for (int u = 0; u < 8; u++) {
      const uint4 v = __ldcv(src + (i0 + u * blockDim.x + threadIdx.x) % words);
      acc.x ^= v.x, acc.y ^= v.y;
    }
    n += 8 * 16;
  }
  if (acc.x == 0x12345678u && acc.y == 0x9abcdefu) n++; /* keeps the loads */
  atomicAdd(pulled, n);
}

static int hcp_make_file(uint64_t size)
{
  struct stat st;
  if (stat(HCP_PATH, &st) == 0 && (uint64_t)st.st_size == size) return 0;
  FILE *f = fopen(HCP_PATH, "wb");
  if (!f) return -errno;
  static uint64_t buf[1 << 17];
  for (uint64_t off = 0; off < size; off += sizeof(buf)) {
    for (uint64_t i = 0; i < sizeof(buf) / 8; i++) buf[i] = hcp_word(off + i * 8);
    if (fwrite(buf, 1, sizeof(buf), f) != sizeof(buf)) { fclose(f); return -EIO; }
  }
  return fclose(f) ? -EIO : 0;
}

struct hcp_opts {
  uint64_t size;
  int threads, gpu;
  char out[512];
};

static double hcp_measure(struct hcp_run *r, long *minflt)
{
  pthread_t tid[256];
  struct hcp_thread t[256];
  struct rusage a, b;
  getrusage(RUSAGE_SELF, &a);
  const double t0 = bench_now();
  for (uint32_t i = 0; i < r->threads; i++) {
    t[i] = (struct hcp_thread){r, i, 0};
    pthread_create(&tid[i], NULL, hcp_thread_main, &t[i]);
  }
  int err = 0;
  for (uint32_t i = 0; i < r->threads; i++) {
    pthread_join(tid[i], NULL);
    if (t[i].err) err = t[i].err;
  }
  const double s = bench_now() - t0;
  getrusage(RUSAGE_SELF, &b);
  *minflt = b.ru_minflt - a.ru_minflt;
  if (err) fprintf(stderr, "host_copy_probe: %s: %s\n", hcp_way_names[r->way], strerror(-err));
  const uint64_t bytes = r->random ? r->random * r->threads * r->run : r->size;
  return err ? -1.0 : bytes / s / 1e9;
}

/* One way at one run size; the mapping made fresh for it. */
static void hcp_row(struct hcp_run *r, const struct hcp_opts *o, FILE *out, uint8_t *dstage, int *stop,
                    unsigned long long *pulled)
{
  void *m = mmap(NULL, r->size, PROT_READ, MAP_SHARED, r->fd, 0);
  if (m == MAP_FAILED) { perror("mmap"); return; }
  r->map = (const uint8_t *)m;
  double warm_s = 0;
  if (r->way == HCP_MAP_WARM || r->way == HCP_MAP_WARM_NT) {
    const double t0 = bench_now();
    if (madvise(m, r->size, MADV_POPULATE_READ)) perror("madvise");
    warm_s = bench_now() - t0;
  }
  double pull_gbs = 0;
  cudaEvent_t e0, e1;
  if (o->gpu) {
    *stop = 0;
    BENCH_CUDA(cudaMemset(pulled, 0, sizeof(*pulled)));
    BENCH_CUDA(cudaEventCreate(&e0));
    BENCH_CUDA(cudaEventCreate(&e1));
    BENCH_CUDA(cudaEventRecord(e0));
    hcp_pull<<<264, 256>>>((const uint4 *)dstage, (uint64_t)r->threads * HCP_RING / 16, stop, pulled);
    BENCH_CUDA(cudaEventRecord(e1));
    usleep(20000); /* the pull under way before the copies start */
  }
  long minflt = 0;
  const double gbs = hcp_measure(r, &minflt);
  if (o->gpu) {
    __atomic_store_n(stop, 1, __ATOMIC_RELEASE); /* the kernel's next look ends it */
    BENCH_CUDA(cudaEventSynchronize(e1));
    float ms = 0;
    BENCH_CUDA(cudaEventElapsedTime(&ms, e0, e1));
    unsigned long long bytes = 0;
    BENCH_CUDA(cudaMemcpy(&bytes, pulled, sizeof(bytes), cudaMemcpyDeviceToHost));
    pull_gbs = bytes / (ms * 1e-3) / 1e9;
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
  }
  munmap(m, r->size);
  const char *order = r->random ? "rand" : "seq";
  printf("%-12s %-4s run %5llu KiB  %6.2f GB/s (%5.2f M runs/s)  %8ld faults  warm %.3f s  pull %.1f GB/s\n",
         hcp_way_names[r->way], order, (unsigned long long)(r->run >> 10), gbs, gbs * 1e3 / r->run,
         minflt, warm_s, pull_gbs);
  if (out)
    fprintf(out,
            "{\"workload\": \"host_copy\", \"config\": \"%s %s run=%lluK threads=%u gpu=%d\", \"value\": %.3f, "
            "\"unit\": \"GB/s\", \"minflt\": %ld, \"warm_s\": %.4f, \"pull_gbs\": %.2f, \"file_size\": %llu}\n",
            hcp_way_names[r->way], order, (unsigned long long)(r->run >> 10), r->threads, o->gpu, gbs, minflt,
            warm_s, pull_gbs, (unsigned long long)r->size);
}

enum { HO_SIZE = BENCH_OPTS_FIRST, HO_THREADS, HO_GPU, HO_OUT };
static const struct bench_opt hcp_table[] = {
    {"size", BENCH_OPT_VALUE, HO_SIZE}, {"threads", BENCH_OPT_VALUE, HO_THREADS},
    {"gpu", BENCH_OPT_FLAG, HO_GPU},    {"out", BENCH_OPT_VALUE, HO_OUT}};
static const char hcp_usage[] = "usage: host_copy_probe [--size SIZE] [--threads N] [--gpu] [--out FILE]\n";

static int hcp_parse(int argc, char **argv, struct hcp_opts *o, char *err, size_t errlen)
{
  struct bench_opts p;
  bench_opts_init(&p, argc, argv, hcp_table, sizeof(hcp_table) / sizeof(hcp_table[0]), err, errlen);
  int rc = 0, id;
  while (rc == 0 && (id = bench_opts_next(&p)) != BENCH_OPTS_END) {
    if (id == BENCH_OPTS_HELP) return 1;
    if (id < 0) return id;
    if (id == HO_SIZE) rc = bench_opts_size(&p, 64ull << 20, 1ull << 40, &o->size);
    else if (id == HO_THREADS) rc = bench_opts_int(&p, 1, 256, &o->threads);
    else if (id == HO_GPU) o->gpu = 1;
    else rc = bench_opts_string(&p, o->out, sizeof(o->out));
  }
  return rc;
}

int main(int argc, char **argv)
{
  struct hcp_opts o = {4ull << 30, 16, 0, ""};
  char err[256] = "";
  const int prc = hcp_parse(argc, argv, &o, err, sizeof(err));
  if (prc) return bench_opts_exit("host_copy_probe", prc, err, hcp_usage);
  o.size &= ~((1ull << 20) - 1);
  if (hcp_make_file(o.size)) { fprintf(stderr, "host_copy_probe: cannot write %s\n", HCP_PATH); return 1; }
  struct hcp_run r = {HCP_PREAD, open(HCP_PATH, O_RDONLY), NULL, o.size, 0, (uint32_t)o.threads, 0, NULL};
  if (r.fd < 0) { perror(HCP_PATH); return 1; }
  int *stop = NULL;
  unsigned long long *pulled = NULL;
  uint8_t *dstage = NULL;
  const uint64_t stage_bytes = (uint64_t)o.threads * HCP_RING;
  if (cudaHostAlloc((void **)&r.staging, stage_bytes, cudaHostAllocMapped) != cudaSuccess) {
    /* no GPU: the host rows alone, into ordinary memory */
    cudaGetLastError();
    o.gpu = 0;
    r.staging = (uint8_t *)aligned_alloc(4096, stage_bytes);
    printf("host_copy_probe: no GPU; staging in ordinary memory\n");
  } else if (BENCH_CUDA(cudaHostGetDevicePointer((void **)&dstage, r.staging, 0)) ||
             BENCH_CUDA(cudaHostAlloc((void **)&stop, 64, cudaHostAllocMapped)) ||
             BENCH_CUDA(cudaMalloc((void **)&pulled, sizeof(*pulled)))) {
    return 1;
  }
  memset(r.staging, 0, stage_bytes);
  FILE *out = o.out[0] ? fopen(o.out, "a") : NULL;
  r.way = HCP_PREAD, r.run = 1 << 20;
  long f;
  hcp_measure(&r, &f); /* the file into the page cache */
  static const uint64_t runs[] = {128u << 10, 1u << 20};
  for (int ri = 0; ri < 2; ri++)
    for (int w = 0; w < HCP_NWAYS; w++) {
      r.way = (enum hcp_way)w, r.run = runs[ri];
      hcp_row(&r, &o, out, dstage, stop, pulled);
    }
  /* random 4 KiB pages, a quarter of the file's count in all (the rand
   * row's first pass): pread, and copies from a fresh and a populated
   * mapping */
  static const enum hcp_way rand_ways[] = {HCP_PREAD, HCP_MAP, HCP_MAP_WARM};
  r.run = 4096, r.random = o.size / 4096 / 4 / r.threads;
  for (int w = 0; w < 3; w++) {
    r.way = rand_ways[w];
    hcp_row(&r, &o, out, dstage, stop, pulled);
  }
  if (out) fclose(out);
  close(r.fd);
  return 0;
}
