/*
 * host_read.c - gpufs_pread: host code reads a file through the GPU caches.
 *
 * A page some instance holds VALID at the file's current version is copied
 * from that instance's cache (dirty pages included: they are newer than the
 * file); the rest comes from the file.  In pieces of at most PIECE bytes:
 *
 *   for each instance, while pages are missing: its kernel copies the
 *     pages it holds into the piece's pinned memory (the caller's buffer
 *     itself when it is pinned, else a bounce buffer) and marks them
 *   the host preads each run of missing pages into the caller's buffer
 *   (bounce: the cached pages are copied over, by several threads)
 *
 * The size is the larger of the host file's and what the instances' open
 * descriptors of it say (their writes past the end are the file's).  A
 * file no instance ever opened is read with plain preads.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "libgpufs/common/devcalls.h"
#include "libgpufs/host/detail.h"
#include "libgpufs/host/hostfiles.h"
#include "libgpufs/host/instance.h"

#define PIECE (64ull << 20) /* bytes per round of kernels */

/* pread all of [off, off+n) into buf, zeros past the end of the file.
 * 0 or -errno. */
static int pread_full(int fd, uint8_t *buf, uint64_t n, uint64_t off)
{
  while (n > 0) {
    ssize_t r = pread(fd, buf, n, (off_t)off);
    if (r < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    if (r == 0) {
      memset(buf, 0, n); /* past the host's end: bytes a GPU sized but does not hold */
      return 0;
    }
    buf += r;
    off += (uint64_t)r;
    n -= (uint64_t)r;
  }
  return 0;
}

/* A copy out of the bounce buffer into pageable memory: with one thread
 * gpufs_pread into pageable memory ran at 4.8 GB/s (H100 host, against
 * 49.9 into pinned memory); a few threads share the work. */
#define COPY_THREADS 8
#define COPY_MIN (4ull << 20) /* bytes each thread gets at least */

struct copy_part {
  uint8_t *dst;
  const uint8_t *src;
  uint64_t n;
};

static void *copy_part_main(void *arg)
{
  struct copy_part *c = arg;
  memcpy(c->dst, c->src, c->n);
  return NULL;
}

/* memcpy with up to COPY_THREADS threads (the caller's among them). */
static void copy_parallel(uint8_t *dst, const uint8_t *src, uint64_t n)
{
  uint64_t k = n / COPY_MIN;
  if (k > COPY_THREADS) k = COPY_THREADS;
  if (k < 2) {
    memcpy(dst, src, n);
    return;
  }
  struct copy_part part[COPY_THREADS];
  pthread_t th[COPY_THREADS];
  int started[COPY_THREADS] = {0};
  const uint64_t each = (n + k - 1) / k;
  for (uint64_t i = 0; i < k; i++) {
    const uint64_t lo = i * each, hi = lo + each < n ? lo + each : n;
    part[i] = (struct copy_part){dst + lo, src + lo, hi - lo};
    /* a thread that cannot start leaves its part to the caller */
    if (i > 0) started[i] = pthread_create(&th[i], NULL, copy_part_main, &part[i]) == 0;
  }
  for (uint64_t i = 0; i < k; i++)
    if (!started[i]) copy_part_main(&part[i]);
  for (uint64_t i = 1; i < k; i++)
    if (started[i]) pthread_join(th[i], NULL);
}

/* Device scratch of one instance for a piece: have[] and the size word. */
struct piece_scratch {
  uint8_t *have;
  unsigned long long *gpu_size;
};

/* Run instance in's kernel over [off, off+n) into dst (device-accessible),
 * for pages not yet in have_all; merge its have[] and size.  0 or -errno. */
static int read_instance(struct gpufs_instance *in, const struct gpufs_hostfile_id *id,
                         uint64_t off, uint64_t n, uint8_t *dst, uint8_t *have_all,
                         uint64_t npages, uint64_t *gpu_size)
{
  int rc = 0;
  int old = gpufs_instance_enter(in);
  struct piece_scratch s = {NULL, NULL};
  uint8_t *have = malloc(npages);
  unsigned long long gs = 0;
  cudaStream_t st = in->stats_stream;
  if (!have) {
    rc = -ENOMEM;
    goto out;
  }
  if (cudaMalloc((void **)&s.have, npages) != cudaSuccess ||
      cudaMalloc((void **)&s.gpu_size, sizeof(*s.gpu_size)) != cudaSuccess) {
    rc = -ENOMEM;
    goto out;
  }
  cudaError_t e = cudaMemsetAsync(s.have, 0, npages, st);
  if (e == cudaSuccess) e = cudaMemsetAsync(s.gpu_size, 0, sizeof(*s.gpu_size), st);
  if (e != cudaSuccess) {
    rc = gpufs_cuda_fail(e, "gpufs_pread scratch");
    goto out;
  }
  if ((rc = gpufs_dev_host_read_launch(in->index, id->cid, id->version, off, n, dst, s.have,
                                       s.gpu_size, st)) != 0)
    goto out;
  e = cudaMemcpyAsync(have, s.have, npages, cudaMemcpyDeviceToHost, st);
  if (e == cudaSuccess) e = cudaMemcpyAsync(&gs, s.gpu_size, sizeof(gs), cudaMemcpyDeviceToHost, st);
  if (e == cudaSuccess) e = cudaStreamSynchronize(st);
  if (e != cudaSuccess) {
    rc = gpufs_cuda_fail(e, "gpufs_pread kernel");
    goto out;
  }
  for (uint64_t p = 0; p < npages; p++) have_all[p] |= have[p];
  if (gs > *gpu_size) *gpu_size = gs;
out:
  cudaFree(s.have);
  cudaFree(s.gpu_size);
  free(have);
  gpufs_instance_leave(old);
  return rc;
}

/* Raise *gpu_size to the largest size an open descriptor of file id has
 * on any instance (their writes past the host's end are the file's).
 * 0 or -errno. */
static int gpu_size_of(struct gpufs_instances *all, const struct gpufs_hostfile_id *id,
                       uint64_t *gpu_size)
{
  int rc = 0;
  for (uint32_t i = 0; i < all->n && rc == 0; i++) {
    struct gpufs_instance *in = all->in[i];
    int old = gpufs_instance_enter(in);
    unsigned long long *d = NULL, gs = 0;
    cudaError_t e = cudaMalloc((void **)&d, sizeof(*d));
    if (e == cudaSuccess) e = cudaMemsetAsync(d, 0, sizeof(*d), in->stats_stream);
    if (e == cudaSuccess &&
        gpufs_dev_host_read_launch(in->index, id->cid, id->version, 0, 0, NULL, NULL, d,
                                   in->stats_stream) != 0)
      e = cudaErrorLaunchFailure;
    if (e == cudaSuccess) e = cudaMemcpyAsync(&gs, d, sizeof(gs), cudaMemcpyDeviceToHost, in->stats_stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(in->stats_stream);
    if (e != cudaSuccess) rc = gpufs_cuda_fail(e, "gpufs_pread size");
    else if (gs > *gpu_size) *gpu_size = gs;
    cudaFree(d);
    gpufs_instance_leave(old);
  }
  return rc;
}

/* The device pointer kernels write buf through, if buf is pinned host
 * memory (cudaHostAlloc, or cudaHostRegister'ed), else NULL. */
static uint8_t *pinned_view(void *buf)
{
  struct cudaPointerAttributes a;
  if (cudaPointerGetAttributes(&a, buf) != cudaSuccess) return NULL; /* pageable memory */
  if (a.type != cudaMemoryTypeHost || a.devicePointer == NULL) return NULL;
  return (uint8_t *)a.devicePointer;
}

/* One piece [off, off+n) into out (the caller's buffer).  direct: out's
 * device view (pinned), or NULL (bounce through `bounce`). */
static int read_piece(struct gpufs_instances *all, const struct gpufs_hostfile_id *id, int fd,
                      uint64_t off, uint64_t n, uint8_t *out, uint8_t *direct, uint8_t *bounce,
                      uint8_t *bounce_dev, uint64_t *gpu_size)
{
  const uint32_t S = all->in[0]->dev.cache.page_size;
  const uint64_t p0 = off / S, npages = (off + n - 1) / S - p0 + 1;
  uint8_t *have = calloc(npages, 1);
  int rc = 0;
  if (!have) return -ENOMEM;
  uint8_t *dst = direct ? direct : bounce_dev;
  for (uint32_t i = 0; i < all->n && rc == 0; i++) {
    uint64_t missing = 0;
    for (uint64_t p = 0; p < npages; p++) missing += !have[p];
    if (missing == 0) break;
    rc = read_instance(all->in[i], id, off, n, dst, have, npages, gpu_size);
  }
  /* the host's part: runs of missing pages straight into out; cached
   * pages from the bounce buffer */
  for (uint64_t p = 0; p < npages && rc == 0;) {
    uint64_t q = p;
    while (q < npages && have[q] == have[p]) q++;
    const uint64_t lo = (p0 + p) * S > off ? (p0 + p) * S : off;
    const uint64_t hi = (p0 + q) * S < off + n ? (p0 + q) * S : off + n;
    if (!have[p]) rc = pread_full(fd, out + (lo - off), hi - lo, lo);
    else if (!direct) copy_parallel(out + (lo - off), bounce + (lo - off), hi - lo);
    p = q;
  }
  free(have);
  return rc;
}

ssize_t gpufs_runtime_pread(struct gpufs_instances *all, struct gpufs_daemon *daemon,
                            const char *path, void *buf, size_t size, int64_t offset)
{
  if (!path) return -EFAULT;
  if (offset < 0) return -EINVAL;
  if (size == 0) return 0;
  if (!buf) return -EFAULT;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  struct stat sb;
  if (fstat(fd, &sb) != 0) {
    int e = -errno;
    close(fd);
    return e;
  }
  if (S_ISDIR(sb.st_mode)) {
    close(fd);
    return -EISDIR;
  }
  struct gpufs_hostfile_id id;
  const int known = gpufs_daemon_file_ident(daemon, &sb, &id) == 0;
  /* the size first: nothing past what the call returns is written */
  uint64_t gpu_size = 0;
  int rc = known ? gpu_size_of(all, &id, &gpu_size) : 0;
  const uint64_t fsize = (uint64_t)sb.st_size > gpu_size ? (uint64_t)sb.st_size : gpu_size;
  const uint64_t want = rc < 0 || (uint64_t)offset >= fsize ? 0
                        : fsize - (uint64_t)offset < size ? fsize - (uint64_t)offset
                                                          : (uint64_t)size;
  uint8_t *direct = want ? pinned_view(buf) : NULL;
  uint8_t *bounce = NULL, *bounce_dev = NULL;
  if (known && want && !direct) {
    const uint64_t b = want < PIECE ? want : PIECE;
    if (cudaHostAlloc((void **)&bounce, b, cudaHostAllocMapped | cudaHostAllocPortable) !=
            cudaSuccess ||
        cudaHostGetDevicePointer((void **)&bounce_dev, bounce, 0) != cudaSuccess) {
      rc = -ENOMEM;
    }
  }
  for (uint64_t done = 0; done < want && rc == 0;) {
    const uint64_t n = want - done < PIECE ? want - done : PIECE;
    const uint64_t off = (uint64_t)offset + done;
    if (known)
      rc = read_piece(all, &id, fd, off, n, (uint8_t *)buf + done, direct ? direct + done : NULL,
                      bounce, bounce_dev, &gpu_size);
    else
      rc = pread_full(fd, (uint8_t *)buf + done, n, off);
    done += n;
  }
  if (bounce) cudaFreeHost(bounce);
  close(fd);
  return rc < 0 ? rc : (ssize_t)want;
}
