/*
 * cuda_register.c - registered files (gpufs_register / gpufs_unregister): a file
 * mapped read-only and shared, its mapping pinned and mapped for every GPU,
 * so that a miss copies the page from the host page cache into its frame
 * with no request and no host copy (libgpufs/device/round.cu).
 *
 * The host file table keeps each registration in its inode record
 * (hostfiles.h): an OPEN of a registered file returns the mapping's
 * address and readable length in out[3] (gpufs_reg_word, queue.h), and
 * the GPU node of the file keeps it while the file is open there.  A
 * registration is removed only while no hfid of the inode is open, so no
 * GPU descriptor can hold the address of a mapping that is gone.
 *
 * Pinning waits for running kernels (CUDA), so it is never done by a
 * daemon worker (a kernel may be waiting for that worker): only by the
 * host threads that call gpufs_register, with the runtime locked
 * (cuda_start.c calls these with rt_lock held).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "libgpufs/common/queue.h"
#include "libgpufs/host/detail.h"
#include "libgpufs/host/hostfiles.h"
#include "libgpufs/host/instance.h"
#include "libgpufs/host/register.h"

#define HOST_PAGE 4096ull

/* The registered bytes allowed, all files together: max, or for 0 half of
 * the host's physical memory. */
static uint64_t reg_limit(uint64_t max)
{
  if (max) return max;
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  return pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size / 2 : 0;
}

/* Pin the mapping [addr, addr+len) for every GPU, read-only where the
 * device supports it (a PROT_READ mapping cannot be pinned for writing).
 * 0 or -ENOMEM with the detail set. */
static int reg_pin(void *addr, uint64_t len)
{
  const unsigned base = cudaHostRegisterMapped | cudaHostRegisterPortable;
  cudaError_t e = cudaHostRegister(addr, len, base | cudaHostRegisterReadOnly);
  if (e != cudaSuccess) e = cudaHostRegister(addr, len, base); /* not sticky: try without ReadOnly */
  if (e != cudaSuccess) {
    gpufs_set_detail("cudaHostRegister of %llu bytes: %s", (unsigned long long)len,
                     cudaGetErrorString(e));
    return -ENOMEM;
  }
  /* every GPU must see the mapping at its host address (UVA): the GPU node
   * keeps one address for every instance */
  void *dev = NULL;
  e = cudaHostGetDevicePointer(&dev, addr, 0);
  if (e != cudaSuccess || dev != addr) {
    cudaHostUnregister(addr);
    gpufs_set_detail("the pinned mapping has another address on the GPU (no unified addressing)");
    return -ENOMEM;
  }
  return 0;
}

static void reg_release(const struct gpufs_hostfile_reg *r)
{
  cudaHostUnregister(r->addr);
  munmap(r->addr, r->map_len);
}

int gpufs_runtime_register(struct gpufs_daemon *daemon, uint64_t register_max, const char *path)
{
  if (!path) {
    gpufs_set_detail("path is NULL");
    return -EFAULT;
  }
  /* O_NONBLOCK: a FIFO (refused below) must not block the open; it means
   * nothing for a regular file */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    int rc = -errno;
    gpufs_set_detail("open(%s) failed", path);
    return rc;
  }
  struct stat st;
  int rc = fstat(fd, &st) == 0 ? 0 : -errno;
  struct gpufs_hostfiles *hf = gpufs_daemon_files(daemon);
  struct gpufs_hostfile_regstats now;
  gpufs_hostfiles_reg_stats(hf, &now);
  const uint64_t limit = reg_limit(register_max);
  uint64_t map_len = 0;
  if (rc) {
    gpufs_set_detail("fstat(%s) failed", path);
  } else if (gpufs_hostfiles_reg_has(hf, (uint64_t)st.st_dev, (uint64_t)st.st_ino)) {
    /* before anything is pinned; checked again under the table's lock */
    gpufs_set_detail("%s is registered already (by this or another name)", path);
    rc = -EEXIST;
  } else if (!S_ISREG(st.st_mode)) {
    gpufs_set_detail("%s is not a regular file", path);
    rc = -EINVAL;
  } else if ((uint64_t)st.st_size < HOST_PAGE) {
    gpufs_set_detail("%s is shorter than 4 KiB: nothing to read from a mapping", path);
    rc = -EINVAL;
  } else if ((uint64_t)st.st_size > GPUFS_REG_MAX_BYTES) {
    gpufs_set_detail("%s is larger than 1 TiB", path);
    rc = -EFBIG;
  } else if (now.bytes + (map_len = ((uint64_t)st.st_size + HOST_PAGE - 1) & ~(HOST_PAGE - 1)) >
             limit) {
    gpufs_set_detail("registering %s would pin %llu bytes, more than register_max (%llu)", path,
                     (unsigned long long)(now.bytes + map_len), (unsigned long long)limit);
    rc = -EFBIG;
  }
  void *addr = MAP_FAILED;
  if (rc == 0) {
    addr = mmap(NULL, map_len, PROT_READ, MAP_SHARED, fd, 0);
    if (addr == MAP_FAILED) {
      gpufs_set_detail("mmap of %s failed", path);
      rc = -ENOMEM;
    } else if ((uint64_t)(uintptr_t)addr + map_len > (1ull << 48)) {
      /* gpufs_reg_word keeps 36 bits of the address (queue.h) */
      gpufs_set_detail("the mapping of %s lies above 2^48", path);
      munmap(addr, map_len);
      addr = MAP_FAILED;
      rc = -ENOMEM;
    }
  }
  close(fd); /* the mapping keeps the file */
  if (rc == 0) rc = reg_pin(addr, map_len);
  if (rc == 0) {
    const struct gpufs_hostfile_reg r = {(uint64_t)st.st_dev, (uint64_t)st.st_ino, addr, map_len,
                                         (uint64_t)st.st_size & ~(HOST_PAGE - 1)};
    rc = gpufs_hostfiles_reg_add(hf, &st, &r, limit);
    if (rc) {
      reg_release(&r);
      addr = MAP_FAILED;
      if (rc == -EEXIST) gpufs_set_detail("%s is registered already (by this or another name)", path);
      else if (rc == -EFBIG) gpufs_set_detail("registering %s would exceed register_max", path);
      else gpufs_set_detail("the host file table has no room for %s", path);
    }
  } else if (addr != MAP_FAILED) {
    munmap(addr, map_len);
  }
  return rc;
}

int gpufs_runtime_unregister(struct gpufs_daemon *daemon, const char *path)
{
  if (!path) {
    gpufs_set_detail("path is NULL");
    return -EFAULT;
  }
  struct stat st;
  if (stat(path, &st) != 0) {
    int rc = -errno;
    gpufs_set_detail("stat(%s) failed", path);
    return rc;
  }
  struct gpufs_hostfile_reg r;
  int rc = gpufs_hostfiles_reg_remove(gpufs_daemon_files(daemon), (uint64_t)st.st_dev,
                                      (uint64_t)st.st_ino, &r);
  if (rc == -EINVAL) gpufs_set_detail("%s is not registered", path);
  else if (rc == -EBUSY) gpufs_set_detail("%s is open on a GPU: gclose it first", path);
  if (rc == 0) reg_release(&r);
  return rc;
}

void gpufs_runtime_reg_take_all(struct gpufs_daemon *daemon, struct gpufs_hostfile_reg **out,
                                uint32_t *n)
{
  struct gpufs_hostfiles *hf = gpufs_daemon_files(daemon);
  struct gpufs_hostfile_regstats s;
  gpufs_hostfiles_reg_stats(hf, &s);
  *out = NULL;
  *n = 0;
  if (s.files == 0 || !(*out = calloc(s.files, sizeof(**out)))) return;
  /* registrations come and go under rt_lock only, which the caller holds */
  while (*n < s.files && gpufs_hostfiles_reg_pop(hf, &(*out)[*n]) == 0) (*n)++;
}

void gpufs_runtime_reg_release_all(struct gpufs_hostfile_reg *regs, uint32_t n)
{
  for (uint32_t i = 0; i < n; i++) reg_release(&regs[i]);
  free(regs);
}

void gpufs_runtime_reg_stats(struct gpufs_daemon *daemon, uint64_t refused, struct gpufs_stats *st)
{
  struct gpufs_hostfile_regstats s;
  gpufs_hostfiles_reg_stats(gpufs_daemon_files(daemon), &s);
  st->reg_files = s.files;
  st->reg_bytes = s.bytes;
  st->reg_retired = s.retired;
  st->reg_refused = refused;
}
