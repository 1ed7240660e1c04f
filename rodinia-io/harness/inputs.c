/*
 * inputs.c - the input files of the rodinia-io benchmarks: written once
 * from the generators, then reused while they are valid.
 *
 * Each file <dir>/<bench>-<input>-<size>.bin has a sidecar <file>.sum, one
 * text line naming what made it:
 *
 *   rio-input 1 bench=hotspot input=temp size=1073741824 seed=0x... sum=0x...
 *
 * A file is reused only when the sidecar names this benchmark, input, size,
 * seed and generator version (RIO_GEN_VERSION), the file has that size, and
 * its bytes have that checksum.  The checksum is computed while the file is
 * read into host memory for the CPU reference, so checking costs nothing
 * extra.
 */
#include "rodinia-io/harness/rio.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "benchlib/util.h"

/* Bump when any generator changes what it writes: old files are refused. */
#define RIO_GEN_VERSION 1
#define RIO_IO_SLICE (64ull << 20)

static uint64_t rio_mix(uint64_t w, uint64_t i)
{
  uint64_t z = w ^ (i * 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

struct rio_sum_job {
  const uint64_t *w;
  uint64_t nwords;
  int nthreads;
  uint64_t part[16];
};

static int rio_sum_slice(void *p, int t)
{
  struct rio_sum_job *j = (struct rio_sum_job *)p;
  const uint64_t lo = j->nwords * (uint64_t)t / (uint64_t)j->nthreads;
  const uint64_t hi = j->nwords * (uint64_t)(t + 1) / (uint64_t)j->nthreads;
  uint64_t s = 0;
  for (uint64_t i = lo; i < hi; i++)
    s += rio_mix(j->w[i], i);
  j->part[t] = s;
  return 0;
}

uint64_t rio_checksum(const void *buf, uint64_t size)
{
  struct rio_sum_job j;
  memset(&j, 0, sizeof(j));
  j.w = (const uint64_t *)buf;
  j.nwords = size / 8;
  j.nthreads = bench_host_threads();
  if (j.nthreads > 16)
    j.nthreads = 16;
  if ((uint64_t)j.nthreads > j.nwords / 4096 + 1)
    j.nthreads = (int)(j.nwords / 4096 + 1);
  if (j.nthreads <= 1 || bench_parallel(j.nthreads, rio_sum_slice, &j) != 0) {
    j.nthreads = 1;
    rio_sum_slice(&j, 0);
  }
  uint64_t s = 0;
  for (int t = 0; t < j.nthreads; t++)
    s += j.part[t];
  return s ^ size;
}

/* pread or pwrite all of [0, size) of fd, in 64 MiB slices on several threads. */
struct rio_io_job {
  int fd;
  uint8_t *buf;
  uint64_t size;
  int is_write;
  int nthreads;
};

static int rio_io_slice(void *p, int t)
{
  const struct rio_io_job *j = (const struct rio_io_job *)p;
  const uint64_t nslices = (j->size + RIO_IO_SLICE - 1) / RIO_IO_SLICE;
  for (uint64_t s = (uint64_t)t; s < nslices; s += (uint64_t)j->nthreads) {
    const uint64_t off = s * RIO_IO_SLICE;
    const uint64_t len = j->size - off < RIO_IO_SLICE ? j->size - off : RIO_IO_SLICE;
    int rc = bench_pio_full(j->fd, j->buf + off, len, off, j->is_write);
    if (rc)
      return rc;
  }
  return 0;
}

static int rio_io_all(int fd, void *buf, uint64_t size, int is_write)
{
  struct rio_io_job j = {fd, (uint8_t *)buf, size, is_write, bench_host_threads()};
  const uint64_t nslices = (size + RIO_IO_SLICE - 1) / RIO_IO_SLICE;
  if (nslices == 0)
    return 0;
  if ((uint64_t)j.nthreads > nslices)
    j.nthreads = (int)nslices;
  return bench_parallel(j.nthreads, rio_io_slice, &j);
}

static void rio_sidecar_line(const struct rio_run *run, int i, uint64_t sum, char *buf, size_t len)
{
  snprintf(buf, len, "rio-input %d bench=%s input=%s size=%" PRIu64 " seed=0x%" PRIx64
           " sum=0x%016" PRIx64 "\n",
           RIO_GEN_VERSION, run->bench->name, run->in[i].name, run->in[i].size, run->seed, sum);
}

int rio_input_check(const struct rio_run *run, int i, uint64_t *sum, char *why, size_t whylen)
{
  const struct rio_input *in = &run->in[i];
  struct stat st;
  char side[RIO_PATH_MAX + 8], line[512], expect[512];

  if (stat(in->path, &st) != 0) {
    if (errno == ENOENT) {
      snprintf(why, whylen, "%s: no such file", in->path);
      return RIO_INPUT_MISSING;
    }
    snprintf(why, whylen, "%s: %s", in->path, strerror(errno));
    return -errno;
  }
  if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size != in->size) {
    snprintf(why, whylen, "%s: %" PRIu64 " bytes, expected %" PRIu64 " (truncated, or made for another size)",
             in->path, (uint64_t)st.st_size, in->size);
    return RIO_INPUT_BAD_SIZE;
  }
  snprintf(side, sizeof(side), "%s.sum", in->path);
  FILE *f = fopen(side, "r");
  if (!f || !fgets(line, sizeof(line), f)) {
    if (f)
      fclose(f);
    snprintf(why, whylen, "%s: no checksum file %s (not made by this suite, or its writing was cut short)",
             in->path, side);
    return RIO_INPUT_BAD_SIDECAR;
  }
  fclose(f);
  /* the sidecar must name this benchmark, input, size, seed and generator;
   * compare everything before " sum=" */
  rio_sidecar_line(run, i, 0, expect, sizeof(expect));
  char *cut = strstr(expect, " sum=");
  size_t head = cut ? (size_t)(cut - expect) : strlen(expect);
  const char *s = strstr(line, " sum=0x");
  if (strncmp(line, expect, head) != 0 || !s || sscanf(s, " sum=0x%" SCNx64, sum) != 1) {
    line[strcspn(line, "\n")] = 0;
    snprintf(why, whylen, "%s: made for another benchmark, seed or generator (%s)", in->path, line);
    return RIO_INPUT_BAD_SIDECAR;
  }
  return RIO_INPUT_VALID;
}

int rio_input_load(const struct rio_run *run, int i, void *buf, char *why, size_t whylen)
{
  const struct rio_input *in = &run->in[i];
  uint64_t sum = 0;
  const int state = rio_input_check(run, i, &sum, why, whylen);
  if (state != RIO_INPUT_VALID)
    return state;
  int fd = open(in->path, O_RDONLY);
  if (fd < 0) {
    snprintf(why, whylen, "%s: %s", in->path, strerror(errno));
    return -errno;
  }
  int rc = rio_io_all(fd, buf, in->size, 0);
  close(fd);
  if (rc) {
    snprintf(why, whylen, "%s: read: %s", in->path, strerror(-rc));
    return rc;
  }
  const uint64_t got = rio_checksum(buf, in->size);
  if (got != sum) {
    snprintf(why, whylen, "%s: checksum 0x%016" PRIx64 ", its sidecar says 0x%016" PRIx64
             " (the bytes changed, or come from another seed)", in->path, got, sum);
    return RIO_INPUT_BAD_SUM;
  }
  return RIO_INPUT_VALID;
}

int rio_input_store(const struct rio_run *run, int i, const void *buf)
{
  const struct rio_input *in = &run->in[i];
  char tmp[RIO_PATH_MAX + 8], side[RIO_PATH_MAX + 8], line[512];
  int rc = 0;

  snprintf(tmp, sizeof(tmp), "%s.tmp", in->path);
  snprintf(side, sizeof(side), "%s.sum", in->path);
  unlink(side); /* a file without its sidecar is never taken for valid */
  int fd = open(tmp, O_CREAT | O_TRUNC | O_WRONLY, 0644);
  if (fd < 0)
    return -errno;
  rc = rio_io_all(fd, (void *)buf, in->size, 1);
  if (close(fd) != 0 && rc == 0)
    rc = -errno;
  if (rc == 0 && rename(tmp, in->path) != 0)
    rc = -errno;
  if (rc) {
    unlink(tmp);
    return rc;
  }
  rio_sidecar_line(run, i, rio_checksum(buf, in->size), line, sizeof(line));
  FILE *f = fopen(side, "w");
  if (!f)
    return -errno;
  if (fputs(line, f) < 0)
    rc = -EIO;
  if (fclose(f) != 0 && rc == 0)
    rc = -errno;
  return rc;
}

int rio_inputs_name(struct rio_run *run, const char *dir)
{
  for (int i = 0; i < run->ninputs; i++) {
    struct rio_input *in = &run->in[i];
    char name[sizeof(in->name)];
    memcpy(name, in->name, sizeof(name));
    name[sizeof(name) - 1] = 0;
    int n = snprintf(in->path, sizeof(in->path), "%s/%s-%s-%" PRIu64 ".bin", dir, run->bench->name,
                     name, in->size);
    if (n < 0 || (size_t)n >= sizeof(in->path))
      return rio_fail(run, -ENAMETOOLONG, "%s: the data folder's name is too long", dir);
    if (in->size == 0 || in->size % 8)
      return rio_fail(run, -EINVAL, "%s: input %s has %" PRIu64 " bytes (not a positive multiple of 8)",
                      run->bench->name, in->name, in->size);
  }
  return 0;
}

int rio_inputs_prepare(struct rio_run *run, const char *dir, enum rio_gen_mode mode, int verbose)
{
  char why[RIO_PATH_MAX + 256];
  int rc = bench_mkdirs(dir);
  if (rc)
    return rio_fail(run, rc, "%s: cannot create the data folder: %s", dir, strerror(-rc));
  if ((rc = rio_inputs_name(run, dir)) != 0)
    return rc;
  for (int i = 0; i < run->ninputs; i++) {
    struct rio_input *in = &run->in[i];
    run->host_in[i] = malloc(in->size);
    if (!run->host_in[i])
      return rio_fail(run, -ENOMEM, "%s: no host memory for input %s (%" PRIu64 " bytes)",
                      run->bench->name, in->name, in->size);
    int st = mode == RIO_GEN_ALWAYS ? RIO_INPUT_MISSING
                                    : rio_input_load(run, i, run->host_in[i], why, sizeof(why));
    if (st < 0)
      return rio_fail(run, st, "%s", why);
    if (st == RIO_INPUT_VALID)
      continue;
    if (st != RIO_INPUT_MISSING)
      return rio_fail(run, -EBADMSG, "%s; remove it or run with --regen", why);
    if (mode == RIO_GEN_NEVER)
      return rio_fail(run, -ENOENT, "%s (run without --no-generate to make it)", why);
    if (verbose)
      fprintf(stderr, "  generating %s (%.2f GiB) ...\n", in->path, in->size / 1073741824.0);
    double t0 = bench_now();
    rc = run->bench->generate(run, i, run->host_in[i]);
    if (rc)
      return rc;
    rc = rio_input_store(run, i, run->host_in[i]);
    if (rc)
      return rio_fail(run, rc, "%s: cannot write: %s", in->path, strerror(-rc));
    if (verbose)
      fprintf(stderr, "  generated %s in %.1f s\n", in->path, bench_now() - t0);
  }
  return 0;
}

void rio_inputs_free(struct rio_run *run)
{
  for (int i = 0; i < RIO_MAX_INPUTS; i++) {
    free(run->host_in[i]);
    run->host_in[i] = NULL;
  }
}
