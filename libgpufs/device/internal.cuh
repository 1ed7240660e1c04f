/*
 * internal.cuh - what the device calls share: the instances' state, how a
 * descriptor names its instance, and the single-request path to the host
 * daemon.
 *
 * Instances.  Each GPU's copy of gpufs_devs[] holds the state of the
 * instances that live on that GPU (their slots; the others' are zero, with
 * ftab.nfiles 0).  A descriptor carries its instance in its high bits:
 *
 *   fd = instance << GPUFS_FD_SHIFT | entry     (entry < max_open_files)
 *
 * so every call on a descriptor finds its instance without a lookup, and
 * the internal functions take (d, entry): `fd` inside the library is the
 * entry of d's file table.  gopen without a ref opens on the GPU's default
 * instance (the first one started on it).
 */
#ifndef GPUFS_DEVICE_INTERNAL_CUH
#define GPUFS_DEVICE_INTERNAL_CUH

#include <stdint.h>
#include "libgpufs/common/devstate.h"

/* Set by gpufs_start through gpufs_dev_publish (state.cu). */
extern __device__ struct gpufs_dev gpufs_devs[GPUFS_MAX_INSTANCES];
/* The instance a gopen without a ref opens on; GPUFS_NO_INSTANCE if this
 * GPU has none. */
extern __device__ uint32_t gpufs_dev_default;
#define GPUFS_NO_INSTANCE 0xffffffffu
#define GPUFS_FD_SHIFT 16 /* max_open_files <= 4096 < 2^16 */
#define GPUFS_FD_ENTRY(fd) ((uint32_t)(fd) & ((1u << GPUFS_FD_SHIFT) - 1))

/* The instance i if it lives on this GPU, else NULL.  Any thread. */
__device__ __forceinline__ const struct gpufs_dev *gpufs_instance(uint32_t i)
{
  if (i >= GPUFS_MAX_INSTANCES || gpufs_devs[i].ftab.nfiles == 0) return NULL;
  return &gpufs_devs[i];
}

/* The instance of descriptor fd, or NULL for a descriptor no instance of
 * this GPU could have given; *entry its file-table entry. */
__device__ __forceinline__ const struct gpufs_dev *gpufs_fd_instance(int fd, uint32_t *entry)
{
  if (fd < 0) return NULL;
  const struct gpufs_dev *d = gpufs_instance((uint32_t)fd >> GPUFS_FD_SHIFT);
  *entry = GPUFS_FD_ENTRY(fd);
  return d && *entry < d->ftab.nfiles ? d : NULL;
}

/* The descriptor a kernel sees for entry `entry` of instance d. */
__device__ __forceinline__ int gpufs_fd_make(const struct gpufs_dev *d, uint32_t entry)
{
  return (int)(d->instance << GPUFS_FD_SHIFT | entry);
}

/* One request to the host, made by one thread: a struct gpufs_req's
 * fields (queue.h) and its payload. */
struct gpufs_call {
  uint32_t op;          /* enum gpufs_op */
  int32_t hfid;
  uint64_t offset;
  uint32_t len;
  uint32_t arg;
  const char *payload;  /* copied into the slot's staging (OPEN: the path) */
  uint32_t payload_len;
};

/* gpufs_q_call of c on d's queue; out[] the reply's (zeros at a stop).
 * Returns the request's result (>= 0 or -errno), or -ESHUTDOWN.  One
 * thread. */
__device__ int64_t gpufs_host_call(const struct gpufs_dev *d, const struct gpufs_call *c,
                                   uint64_t out[4]);

/* What a device call needs of an open descriptor. */
struct gpufs_fdinfo {
  const struct gpufs_dev *d; /* its instance */
  int32_t hfid;
  uint32_t cid;
  uint32_t version;
  uint32_t flags;  /* as given to gopen */
  uint32_t advice; /* GPUFS_FADV_NORMAL/RANDOM/SEQUENTIAL (gfadvise) */
  uint32_t fd;     /* its entry in d's file table (its node: gpufs_node_of) */
  uint64_t size;   /* the file's size now, as this instance sees it */
};

/* The node of open entry `entry` (OPEN or CLOSING, or held). */
__device__ __forceinline__ struct gpufs_gnode *gpufs_node_of(const struct gpufs_dev *d, uint32_t entry)
{
  return &d->ftab.nodes[d->ftab.files[entry].node];
}

/* The file table's lock (files.cu, gnode.cu): entry creation, state
 * changes, node links.  Held only for short scans, never across a host
 * call.  Any one thread. */
__device__ void gpufs_ftab_lock(const struct gpufs_ftab *t);
__device__ bool gpufs_ftab_trylock(const struct gpufs_ftab *t);
__device__ void gpufs_ftab_unlock(const struct gpufs_ftab *t);

/* 0 and *fi filled if fd (a kernel's descriptor) is open, else -EBADF.
 * Any thread may call it.  Inline: every device call starts with it, and
 * as a call its *fi would live in local memory. */
__device__ __forceinline__ int gpufs_fd_get(int fd, struct gpufs_fdinfo *fi)
{
  uint32_t entry = 0;
  const struct gpufs_dev *d = gpufs_fd_instance(fd, &entry);
  if (d == NULL) return -GPUFS_EBADF;
  struct gpufs_gfile *e = &d->ftab.files[entry];
  /* acquire: pairs with the opener's release of OPEN */
  if (gpufs_ld_acquire_u32_dev(&e->state) != GPUFS_GF_OPEN) return -GPUFS_EBADF;
  fi->hfid = e->hfid;
  fi->cid = e->cid;
  const uint32_t node = e->node;
  if (node >= d->ftab.nfiles) return -GPUFS_EBADF; /* closed meanwhile */
  struct gpufs_gnode *nd = &d->ftab.nodes[node];
  /* relaxed: version and size change (gftruncate, gwrite) while the file
   * is open; callers racing with those get either value */
  fi->version = gpufs_ld_relaxed_u32_dev(&nd->version);
  fi->flags = e->flags;
  /* relaxed: a hint that gfadvise may change at any time */
  fi->advice = gpufs_ld_relaxed_u32_dev(&e->advice);
  fi->d = d;
  fi->fd = entry;
  fi->size = gpufs_ld_relaxed_u64_dev(&nd->size);
  return 0;
}

__device__ __forceinline__ bool gpufs_fd_writable(const struct gpufs_fdinfo *fi)
{
  return (fi->flags & 3) != 0; /* O_WRONLY or O_RDWR */
}

__device__ __forceinline__ bool gpufs_fd_readable(const struct gpufs_fdinfo *fi)
{
  return (fi->flags & 3) != 1; /* not O_WRONLY */
}

#endif /* GPUFS_DEVICE_INTERNAL_CUH */
