/*
 * register.c - registered files (gpufs_register / gpufs_unregister): a file
 * mapped read-only and shared, its mapping pinned and mapped for every GPU,
 * so that a miss copies the page from the host page cache into its frame
 * with no request and no host copy (libgpufs/device/round_copy.cuh).
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
 * (runtime.c calls these with rt_lock held), and by the automatic
 * pinner's own thread (pinner.c), with these hooks.
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
#include "libgpufs/host/pinner.h"
#include "libgpufs/host/register.h"

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
 * 0 or -ENOMEM with the detail set.  The pinner's hook too (ctx: the
 * device to make current, or NULL for the caller's). */
static int reg_pin(void *ctx, void *addr, uint64_t len)
{
  if (ctx) cudaSetDevice(*(const int *)ctx); /* the pinner's thread: the first instance's device */
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

static void reg_unpin(void *ctx, void *addr, uint64_t len)
{
  (void)ctx;
  (void)len;
  cudaHostUnregister(addr);
}

const struct gpufs_pin_ops gpufs_cuda_pin_ops = {reg_pin, reg_unpin, NULL};

uint64_t gpufs_runtime_pin_budget(uint64_t register_max) { return reg_limit(register_max); }

/* Why gpufs_reg_map refused the file at path, into the detail. */
static void map_detail(int rc, const char *path)
{
  if (rc == -EFBIG) gpufs_set_detail("%s is larger than 1 TiB", path);
  else if (rc == -ENOMEM) gpufs_set_detail("the mapping of %s cannot be made below 2^48", path);
  else gpufs_set_detail("%s is not a regular file of 4 KiB or more", path);
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
  struct gpufs_hostfile_reg r;
  struct gpufs_hostfiles *hf = gpufs_daemon_files(daemon);
  const uint64_t limit = reg_limit(register_max);
  int rc = fstat(fd, &st) == 0 ? 0 : -errno;
  if (rc) {
    gpufs_set_detail("fstat(%s) failed", path);
  } else if ((rc = gpufs_hostfiles_reg_keep(hf, (uint64_t)st.st_dev, (uint64_t)st.st_ino)) != -EINVAL) {
    /* pinned already: automatically (now the program's, 0), or by a
     * gpufs_register (-EEXIST) */
    if (rc) gpufs_set_detail("%s is registered already (by this or another name)", path);
    close(fd);
    return rc;
  } else if ((rc = gpufs_reg_map(fd, &st, &r)) != 0) {
    map_detail(rc, path);
  } else if (!gpufs_reg_make_room(hf, limit, &gpufs_cuda_pin_ops, r.map_len)) {
    gpufs_set_detail("registering %s would pin more than register_max (%llu bytes)", path,
                     (unsigned long long)limit);
    munmap(r.addr, r.map_len);
    rc = -EFBIG;
  } else if ((rc = reg_pin(NULL, r.addr, r.map_len)) != 0) {
    munmap(r.addr, r.map_len);
  }
  close(fd); /* the mapping keeps the file */
  if (rc == 0 && (rc = gpufs_hostfiles_reg_add(hf, &st, &r, limit)) != 0) {
    gpufs_reg_release(&gpufs_cuda_pin_ops, &r);
    /* the pinner placed it meanwhile: make that one the program's */
    if (rc == -EEXIST && gpufs_hostfiles_reg_keep(hf, r.dev, r.ino) == 0) return 0;
    if (rc == -EEXIST) gpufs_set_detail("%s is registered already (by this or another name)", path);
    else if (rc == -EFBIG) gpufs_set_detail("registering %s would exceed register_max", path);
    else gpufs_set_detail("the host file table has no room for %s", path);
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
  else if (rc == -EBUSY)
    gpufs_set_detail("%s is open on a GPU (gclose it first) or still being pinned", path);
  if (rc == 0) gpufs_reg_release(&gpufs_cuda_pin_ops, &r);
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
  for (uint32_t i = 0; i < n; i++) gpufs_reg_release(&gpufs_cuda_pin_ops, &regs[i]);
  free(regs);
}

void gpufs_runtime_reg_stats(struct gpufs_daemon *daemon, uint64_t refused, struct gpufs_stats *st)
{
  struct gpufs_hostfile_regstats s;
  gpufs_hostfiles_reg_stats(gpufs_daemon_files(daemon), &s);
  st->reg_files = s.files;
  st->reg_bytes = s.bytes;
  st->reg_retired = s.retired;
  st->pins_auto = s.auto_made;
  st->pins_released = s.auto_released;
  st->pins_bytes = s.auto_bytes;
  st->reg_refused = refused;
}
