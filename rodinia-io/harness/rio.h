/*
 * rio.h - the rodinia-io harness: what a benchmark provides, and what the
 * harness gives it (input files, the ways of loading them, checks).
 *
 * A benchmark is a struct rio_bench of six functions.  The harness drives it:
 *
 *   setup(run)          sizes for run->scale; declares the input files
 *   [inputs]            each input is generated once (generate() fills a
 *                       host buffer, the harness writes it with a .sum
 *                       sidecar), or loaded from the file and checked
 *                       (size + checksum); run->host_in[i] then holds it
 *   reference(run)      the expected output, on the CPU, from host_in
 *   for each version and repetition:
 *     [gpufs versions]  a fresh libgpufs instance (4 KiB or 64 KiB pages)
 *     run(run, v)       end to end: the files -> the GPU -> the result in
 *                       host memory; fills run->t
 *     verify(run)       the result against the reference
 *   teardown(run)
 *
 * Timing (docs/rodinia-io.md): e2e_s runs from the first open of an input
 * file to the result in host memory; device and pinned buffers, libgpufs's
 * start and the CUDA context are set up before it, untimed, in every version
 * alike.  The inputs sit in the host page cache (the harness just read or
 * wrote them).
 *
 * Plain C: the generators, references and checks build for the host alone
 * (tests/host); the versions are CUDA (rio_cuda.h, rio_device.cuh).
 */
#ifndef RIO_H
#define RIO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The four versions every benchmark runs (docs/rodinia-io.md). */
enum rio_version {
  RIO_CPU_IO = 0,   /* one thread read()s each file, cudaMemcpy, kernels */
  RIO_EXPERT = 1,   /* threads pread into pinned buffers, cudaMemcpyAsync pipelined */
  RIO_GPUFS_4K = 2, /* kernels gread, 4 KiB pages + readahead */
  RIO_GPUFS_64K = 3,/* kernels gread, 64 KiB pages */
  RIO_NVERSIONS = 4
};

const char *rio_version_name(enum rio_version v);
/* 1 for the versions that read through libgpufs (gpufs-4k, gpufs-64k). */
int rio_is_gpufs(enum rio_version v);

#define RIO_MAX_INPUTS 4
#define RIO_DEFAULT_SEED 0x726f64696e6961ull /* "rodinia" */
#define RIO_PATH_MAX 512

struct rio_input {
  char name[32];          /* set by setup: "temp", "power", ... */
  uint64_t size;          /* set by setup: bytes */
  char path[RIO_PATH_MAX];/* set by the harness: <dir>/<bench>-<name>-<size>.bin */
};

/* What one run of one version measured (the benchmark's run() fills it). */
struct rio_times {
  double e2e_s;      /* open of the first input to the result in host memory */
  double io_s;       /* the I/O phase (files -> GPU memory); 0 when the
                        version overlaps I/O with compute (then the harness
                        times an I/O-only pass of the same loader) */
  int overlapped;    /* 1: I/O and compute overlap in this version */
};

struct rio_bench;
struct rio_ctx;

struct rio_run {
  const struct rio_bench *bench;
  double scale;                    /* 1: the paper's sizes; tests ~1/1024 */
  uint64_t seed;                   /* the benchmark's fixed seed (setup may keep the default) */
  int ninputs;                     /* set by setup */
  uint64_t input_bytes;            /* their total (harness, after setup) */
  struct rio_input in[RIO_MAX_INPUTS];
  void *host_in[RIO_MAX_INPUTS];   /* the inputs' bytes in host memory (harness) */
  void *state;                     /* the benchmark's own (setup allocates, teardown frees) */
  int device;                      /* CUDA device of the run */
  int expert_threads;              /* host threads of the expert version (default 8) */
  struct rio_times t;              /* the last run() */
  char why[256];                   /* why the last call failed (rio_fail) */
  struct rio_ctx *ctx;             /* the loaders' buffers (harness, loaders.cu) */
};

/*
 * A benchmark.  Every function returns 0 or a negative errno and, on
 * failure, says why in run->why (rio_fail).  The functions of one run are
 * called from one host thread, in the order of the comment at the top.
 */
struct rio_bench {
  const char *name;     /* "hotspot" */
  const char *summary;  /* one line: the computation and the default sizes */
  /* run->scale and run->seed are set: fill run->ninputs, run->in[i].name
   * and .size (multiples of 8 bytes) and run->state.  -EINVAL when the
   * scale is too small for the algorithm. */
  int (*setup)(struct rio_run *run);
  /* Fill buf (run->in[i].size bytes) with input i, deterministically from
   * run->seed and the sizes; may use several threads (bench_parallel). */
  int (*generate)(struct rio_run *run, int i, void *buf);
  /* Compute what verify compares against, from run->host_in (CPU). */
  int (*reference)(struct rio_run *run);
  /* One version end to end (see the timing rule above); the result ends in
   * host memory of run->state; run->t filled.  gpufs versions run inside a
   * libgpufs instance the harness started (page size by version). */
  int (*run)(struct rio_run *run, enum rio_version v);
  /* The last run()'s result against the reference: 0, or -EBADMSG with
   * run->why naming the first wrong element, its value and the expected. */
  int (*verify)(struct rio_run *run);
  /* Free run->state (also after a failed setup). */
  void (*teardown)(struct rio_run *run);
  /* The page cache of the run with a cache smaller than the inputs
   * (--small-cache), where the paper used another than the suite's; 0:
   * the suite's. */
  uint64_t small_cache;
};

/* The suite, in the order of the table. */
extern const struct rio_bench *const rio_benches[];
extern const int rio_nbenches;
const struct rio_bench *rio_find_bench(const char *name);

/* printf into run->why; returns rc (negative errno) for `return rio_fail(...)`. */
int rio_fail(struct rio_run *run, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A size scaled by run->scale, rounded down to a multiple of `multiple`
 * (at least `multiple`). */
uint64_t rio_scaled(const struct rio_run *run, uint64_t full, uint64_t multiple);

/* The side of a square input whose bytes scale with `scale`: the largest
 * multiple of `multiple` whose square is at most full^2 * scale, at least
 * `min`.  0 when scale is not a positive number, or the side would pass
 * `max` (0: no limit). */
uint64_t rio_scaled_side(double scale, uint64_t full, uint64_t multiple, uint64_t min, uint64_t max);

/* ---------------- deterministic content ---------------- */

/* splitmix64 of (seed, stream, index): the generators' random numbers, so
 * element i of an input is the same whatever thread writes it. */
uint64_t rio_rand(uint64_t seed, uint64_t stream, uint64_t index);
/* uniform in [0, 1) from the same bits */
double rio_rand01(uint64_t seed, uint64_t stream, uint64_t index);

/* buf[i] = (float)rio_rand01(seed, stream, i) for i < n, on the host's
 * threads: the inputs of uniform random floats in [0, 1).  0 or -errno. */
int rio_fill_uniform(float *buf, uint64_t n, uint64_t seed, uint64_t stream);

/* Runs fn(arg, lo, hi) over [0, n) split in equal slices on the host's
 * threads (bench_host_threads).  0 or the first error. */
int rio_parallel_for(uint64_t n, int (*fn)(void *arg, uint64_t lo, uint64_t hi), void *arg);

/* ---------------- input files (inputs.c) ---------------- */

/* The checksum of a file's bytes (size a multiple of 8): order-free sum of
 * a mix of every 8-byte word with its index, on several threads. */
uint64_t rio_checksum(const void *buf, uint64_t size);

/* How an input file was found. */
enum rio_input_state {
  RIO_INPUT_VALID = 0,     /* present, sidecar and checksum match */
  RIO_INPUT_MISSING = 1,   /* no file */
  RIO_INPUT_BAD_SIZE = 2,  /* the file's size is not the expected one (truncated?) */
  RIO_INPUT_BAD_SIDECAR = 3, /* no .sum, or made by another benchmark, seed or generator */
  RIO_INPUT_BAD_SUM = 4    /* the bytes do not match the checksum (another seed, damaged) */
};

/* Check input i's file and read it into buf (run->in[i].size bytes):
 * returns the state (>= 0) or -errno of a read; why gets the explanation. */
int rio_input_load(const struct rio_run *run, int i, void *buf, char *why, size_t whylen);

/* The part of rio_input_load that reads no bytes: the file's size and its
 * sidecar (benchmark, input, size, seed, generator); *sum gets the
 * checksum the sidecar records.  RIO_INPUT_VALID when those match (the
 * bytes are not checked), another state, or -errno; why explains.  What
 * the ranks of rodinia_mpi that do not load whole inputs check. */
int rio_input_check(const struct rio_run *run, int i, uint64_t *sum, char *why, size_t whylen);

/* Write buf (input i, generated) to its file through path.tmp + rename,
 * then its sidecar.  0 or -errno. */
int rio_input_store(const struct rio_run *run, int i, const void *buf);

/* When rio_inputs_prepare writes a file. */
enum rio_gen_mode {
  RIO_GEN_MISSING = 0, /* missing files are generated; invalid ones refused */
  RIO_GEN_NEVER = 1,   /* missing files are an error too (--no-generate) */
  RIO_GEN_ALWAYS = 2   /* every file is generated anew (--regen) */
};

/* Name every input's file under dir, and fill run->host_in[i] (malloc) with
 * its bytes: read from a valid file, or generated and written.  0, or
 * -errno with run->why naming the file and what is wrong with it (-ENOENT
 * missing under RIO_GEN_NEVER, -EBADMSG wrong size, sidecar or checksum). */
int rio_inputs_prepare(struct rio_run *run, const char *dir, enum rio_gen_mode mode, int verbose);
/* Only name every input's file under dir (run->in[i].path), as
 * rio_inputs_prepare does first.  0, or -errno with run->why. */
int rio_inputs_name(struct rio_run *run, const char *dir);
void rio_inputs_free(struct rio_run *run);

/* ---------------- checks (check.c) ---------------- */

/* Compare n elements; 0, or -EBADMSG with run->why naming the first wrong
 * index (and its row and column when cols > 0), value and expected value,
 * and how many differ.  Floats: |got - want| <= atol + rtol * |want|. */
int rio_check_i32(struct rio_run *run, const char *what, const int32_t *got, const int32_t *want,
                  uint64_t n, uint64_t cols);
int rio_check_i16(struct rio_run *run, const char *what, const int16_t *got, const int16_t *want,
                  uint64_t n, uint64_t cols);
int rio_check_i64(struct rio_run *run, const char *what, const int64_t *got, const int64_t *want,
                  uint64_t n, uint64_t cols);
int rio_check_f32(struct rio_run *run, const char *what, const float *got, const float *want,
                  uint64_t n, uint64_t cols, double rtol, double atol);

#ifdef __cplusplus
}
#endif
#endif /* RIO_H */
