/*
 * datafile.c - writing, recognizing and warming benchmark data files.
 *
 * Work is split in fixed chunks that thread t of n takes as t, t+n, t+2n...:
 * page-cache writes and reads scale with threads up to ~16 (HARDWARE.md).
 */
#include "benchlib/datafile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "benchlib/pattern.h"
#include "benchlib/util.h"

#define BENCH_WRITE_CHUNK (4 * BENCH_MIB)
#define BENCH_WARM_CHUNK (1 * BENCH_MIB)
#define BENCH_CHECK_CHUNK (4 * BENCH_MIB)

static void bench_gen_words(uint64_t *dst, uint64_t first_word, uint64_t nwords, uint64_t seed)
{
  uint64_t i;
  for (i = 0; i < nwords; i++)
    dst[i] = bench_word(seed, first_word + i);
}

struct bench_file_job {
  int fd;
  uint64_t size;
  uint64_t seed;
  uint64_t chunk;
  int nthreads;
  char *dst;           /* bench_fill_pattern: the buffer */
  uint64_t first_word; /* bench_fill_pattern: file word at dst[0] */
};

static int bench_write_worker(void *arg, int t)
{
  struct bench_file_job *job = (struct bench_file_job *)arg;
  uint64_t nchunks = (job->size + job->chunk - 1) / job->chunk;
  uint64_t c;
  int rc = 0;
  uint64_t *buf = (uint64_t *)malloc(job->chunk);

  if (!buf)
    return -ENOMEM;
  for (c = (uint64_t)t; c < nchunks && rc == 0; c += (uint64_t)job->nthreads) {
    uint64_t off = c * job->chunk;
    uint64_t len = job->size - off < job->chunk ? job->size - off : job->chunk;
    bench_gen_words(buf, off / 8, len / 8, job->seed);
    rc = bench_pio_full(job->fd, buf, len, off, 1);
  }
  free(buf);
  return rc;
}

static int bench_warm_worker(void *arg, int t)
{
  struct bench_file_job *job = (struct bench_file_job *)arg;
  uint64_t nchunks = (job->size + job->chunk - 1) / job->chunk;
  uint64_t c;
  int rc = 0;
  char *buf = (char *)malloc(job->chunk);

  if (!buf)
    return -ENOMEM;
  for (c = (uint64_t)t; c < nchunks && rc == 0; c += (uint64_t)job->nthreads) {
    uint64_t off = c * job->chunk;
    uint64_t len = job->size - off < job->chunk ? job->size - off : job->chunk;
    rc = bench_pio_full(job->fd, buf, len, off, 0);
  }
  free(buf);
  return rc;
}

static int bench_fill_worker(void *arg, int t)
{
  struct bench_file_job *job = (struct bench_file_job *)arg;
  uint64_t nchunks = (job->size + job->chunk - 1) / job->chunk;
  uint64_t c;

  for (c = (uint64_t)t; c < nchunks; c += (uint64_t)job->nthreads) {
    uint64_t off = c * job->chunk;
    uint64_t len = job->size - off < job->chunk ? job->size - off : job->chunk;
    bench_gen_words((uint64_t *)(job->dst + off), job->first_word + off / 8, len / 8, job->seed);
  }
  return 0;
}

/* Does the open file fd of size bytes hold pattern seed at its start,
 * middle and end words?  1 yes, 0 no, -errno. */
static int bench_file_matches(int fd, uint64_t size, uint64_t seed)
{
  uint64_t idx[3] = {0, (size / 8) / 2, size / 8 - 1};
  int i;
  for (i = 0; i < 3; i++) {
    uint64_t w;
    int rc = bench_pio_full(fd, &w, 8, idx[i] * 8, 0);
    if (rc)
      return rc;
    if (w != bench_word(seed, idx[i]))
      return 0;
  }
  return 1;
}

int bench_make_file(const char *path, uint64_t size, uint64_t seed)
{
  struct bench_file_job job;
  struct stat st;
  char tmp[4096];
  int fd, rc;

  if (size == 0 || size % 8 != 0)
    return -EINVAL;
  if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size == size) {
    fd = open(path, O_RDONLY);
    if (fd < 0)
      return -errno;
    rc = bench_file_matches(fd, size, seed);
    close(fd);
    if (rc < 0)
      return rc;
    if (rc == 1)
      return 0; /* kept */
  }

  if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
    return -ENAMETOOLONG;
  fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0)
    return -errno;
  memset(&job, 0, sizeof(job));
  job.fd = fd;
  job.size = size;
  job.seed = seed;
  job.chunk = BENCH_WRITE_CHUNK;
  job.nthreads = bench_host_threads();
  rc = bench_parallel(job.nthreads, bench_write_worker, &job);
  if (close(fd) != 0 && rc == 0)
    rc = -errno;
  if (rc == 0 && rename(tmp, path) != 0)
    rc = -errno;
  if (rc != 0)
    unlink(tmp);
  return rc;
}

int bench_warm_file(const char *path)
{
  struct bench_file_job job;
  struct stat st;
  int rc;

  memset(&job, 0, sizeof(job));
  job.fd = open(path, O_RDONLY);
  if (job.fd < 0)
    return -errno;
  if (fstat(job.fd, &st) != 0) {
    rc = -errno;
    close(job.fd);
    return rc;
  }
  job.size = (uint64_t)st.st_size;
  job.chunk = BENCH_WARM_CHUNK;
  job.nthreads = bench_host_threads();
  rc = job.size ? bench_parallel(job.nthreads, bench_warm_worker, &job) : 0;
  close(job.fd);
  return rc;
}

int bench_fill_pattern(void *buf, uint64_t offset, uint64_t bytes, uint64_t seed)
{
  struct bench_file_job job;

  if (offset % 8 != 0 || bytes % 8 != 0)
    return -EINVAL;
  if (bytes == 0)
    return 0;
  memset(&job, 0, sizeof(job));
  job.dst = (char *)buf;
  job.size = bytes;
  job.seed = seed;
  job.chunk = BENCH_WRITE_CHUNK;
  job.nthreads = bench_host_threads();
  job.first_word = offset / 8;
  return bench_parallel(job.nthreads, bench_fill_worker, &job);
}

uint64_t bench_check_host(const void *buf, uint64_t offset, uint64_t bytes, uint64_t seed)
{
  const uint64_t *w = (const uint64_t *)buf;
  uint64_t bad = 0, i;
  for (i = 0; i < bytes / 8; i++)
    bad += w[i] != bench_word(seed, offset / 8 + i);
  return bad;
}

struct bench_check_job {
  int fd;
  uint64_t offset; /* file offset of the range */
  uint64_t bytes;
  uint64_t seed;
  int nthreads;
  uint64_t *bad;       /* per thread: wrong words */
  uint64_t *first_bad; /* per thread: lowest wrong word index, UINT64_MAX if none */
};

static int bench_check_worker(void *arg, int t)
{
  struct bench_check_job *job = (struct bench_check_job *)arg;
  const uint64_t nchunks = (job->bytes + BENCH_CHECK_CHUNK - 1) / BENCH_CHECK_CHUNK;
  uint64_t c, i, bad = 0, first = UINT64_MAX;
  int rc = 0;
  uint64_t *buf = (uint64_t *)malloc(BENCH_CHECK_CHUNK);

  if (!buf)
    return -ENOMEM;
  for (c = (uint64_t)t; c < nchunks && rc == 0; c += (uint64_t)job->nthreads) {
    const uint64_t rel = c * BENCH_CHECK_CHUNK;
    const uint64_t len =
        job->bytes - rel < BENCH_CHECK_CHUNK ? job->bytes - rel : BENCH_CHECK_CHUNK;
    const uint64_t word = (job->offset + rel) / 8;
    if ((rc = bench_pio_full(job->fd, buf, len, job->offset + rel, 0)))
      break;
    for (i = 0; i < len / 8; i++) {
      if (buf[i] != bench_word(job->seed, word + i)) {
        if (bad == 0 && word + i < first)
          first = word + i;
        bad++;
      }
    }
  }
  free(buf);
  job->bad[t] = bad;
  job->first_bad[t] = first;
  return rc;
}

int bench_check_file(const char *path, uint64_t offset, uint64_t bytes, uint64_t seed,
                     uint64_t *mismatches, uint64_t *first_bad)
{
  struct bench_check_job job;
  uint64_t first = UINT64_MAX;
  int rc, t;

  *mismatches = 0;
  *first_bad = UINT64_MAX;
  if (offset % 8 != 0 || bytes % 8 != 0)
    return -EINVAL;
  if (bytes == 0)
    return 0;
  memset(&job, 0, sizeof(job));
  job.offset = offset;
  job.bytes = bytes;
  job.seed = seed;
  job.nthreads = bench_host_threads();
  job.bad = (uint64_t *)calloc((size_t)job.nthreads, sizeof(uint64_t));
  job.first_bad = (uint64_t *)calloc((size_t)job.nthreads, sizeof(uint64_t));
  job.fd = open(path, O_RDONLY);
  if (!job.bad || !job.first_bad)
    rc = -ENOMEM;
  else if (job.fd < 0)
    rc = -errno;
  else
    rc = bench_parallel(job.nthreads, bench_check_worker, &job);
  if (rc == 0) {
    for (t = 0; t < job.nthreads; t++) {
      *mismatches += job.bad[t];
      first = job.first_bad[t] < first ? job.first_bad[t] : first;
    }
    *first_bad = first == UINT64_MAX ? UINT64_MAX : first * 8;
  }
  if (job.fd >= 0)
    close(job.fd);
  free(job.bad);
  free(job.first_bad);
  return rc;
}
