/*
 * script.cu - a fixed list of calls made by one group (a block of 64
 * threads, or one warp with *_warp calls), for the points of an epoch the
 * model must know exactly: the descriptors a held epoch keeps open across
 * kernels, the gfsync through a name nobody wrote through, mappings kept
 * from one kernel to the next.  Descriptors and mapped pointers live in
 * registers in device memory (fsx_script.fds, .ptrs), so a later script
 * closes or unmaps what an earlier one opened or mapped.  Every result goes
 * to res[step]; the host checks them (run.cu).
 */
#include "tests/fsx/group.cuh"

static __device__ int64_t fsx_script_step(const fsx_grp *g, const struct fsx_script *s, int i)
{
  const struct fsx_step t = s->steps[i];
  const uint32_t rank = g->rank, size = g->size;
  switch (t.op) {
  case FSX_S_OPEN: {
    const char *p = s->paths + ((size_t)t.file * FSX_NAMES + (size_t)t.name) * FSX_PATH;
    int fd = fsx_gopen(g, p, t.flags);
    if (rank == 0) s->fds[t.dst] = fd;
    return fd;
  }
  case FSX_S_CLOSE: return fsx_gclose(g, (int)s->fds[t.src]);
  case FSX_S_FSYNC: return fsx_gfsync(g, (int)s->fds[t.src]);
  case FSX_S_MMAP: {
    void *p = fsx_gmmap(g, (size_t)t.len, t.prot, t.mflags, (int)s->fds[t.src], t.off);
    if (GPUFS_MAP_FAILED(p)) {
      if (rank == 0) s->ptrs[t.dst] = NULL;
      return GPUFS_MAP_ERRNO(p);
    }
    const uint8_t *m = (const uint8_t *)p;
    __threadfence(); /* the frame's bytes as the call observed them (ops.cu, fsx_diff) */
    const uint8_t *sh = s->shadow + (uint64_t)t.file * s->arena + (uint64_t)t.off;
    uint64_t first = ~0ull;
    for (uint64_t k = rank; k < (uint64_t)t.len; k += size)
      if (m[k] != sh[k]) {
        first = k;
        break;
      }
    first = fsx_min(g, first);
    if (rank == 0) {
      s->ptrs[t.dst] = (uint8_t *)p;
      s->bad[i] = first == ~0ull ? -1 : (int64_t)first;
    }
    return 0;
  }
  case FSX_S_STORE: {
    uint8_t *m = s->ptrs[t.src] + (t.off - t.map_off);
    uint8_t *sh = s->shadow + (uint64_t)t.file * s->arena + (uint64_t)t.off;
    for (uint64_t k = rank; k < (uint64_t)t.len; k += size) {
      uint8_t b = fsx_byte(t.gen, (uint64_t)t.off + k);
      m[k] = b;
      sh[k] = b;
    }
    /* the stores are visible GPU-wide before a later gmsync / gmunmap
     * (in this kernel or the next) marks them */
    __threadfence();
    fsx_sync(g);
    return 0;
  }
  case FSX_S_MSYNC: return fsx_gmsync(g, s->ptrs[t.src], (size_t)t.len, t.mflags);
  default: return fsx_gmunmap(g, s->ptrs[t.src], (size_t)t.len);
  }
}

__global__ void fsx_script_kernel(struct fsx_script s, int warp)
{
  __shared__ unsigned long long sh;
  fsx_grp g;
  g.warp = warp != 0;
  g.rank = g.warp ? threadIdx.x % 32 : threadIdx.x;
  g.size = g.warp ? 32 : blockDim.x;
  g.slot = 0;
  g.sh = &sh;
  for (int i = 0; i < s.n; i++) {
    int64_t r = fsx_script_step(&g, &s, i);
    if (g.rank == 0) s.res[i] = r;
    fsx_sync(&g);
  }
}

cudaError_t fsx_launch_script(const struct fsx_script *s, int warp)
{
  fsx_script_kernel<<<1, warp ? 32 : 64>>>(*s, warp);
  return cudaGetLastError();
}
