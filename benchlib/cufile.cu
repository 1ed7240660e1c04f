/*
 * cufile.cu - the cuFile (GPUDirect Storage) baseline in compatibility mode.
 *
 * libcufile is loaded at run time (dlopen), so the benchmarks build and run
 * where it is absent; cufile.h is not needed either: the few types used are
 * declared below as the documented ABI has them (cufile.h, CUDA 11.4+):
 *   CUfileError_t  { CUfileOpError err; CUresult cu_err; }   two ints
 *   CUfileDescr_t  { enum type; union { int fd; void *handle; } handle;
 *                    const CUfileFSOps_t *fs_ops; }
 * In compatibility mode cuFile preads into its own pinned bounce buffers
 * and copies them to the GPU, so a file opened without O_DIRECT is served
 * from the host page cache, like every other baseline.
 */
#include "benchlib/baselines.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#include <cuda_runtime.h>

#include "benchlib/cuda_check.h"
#include "benchlib/util.h"

#define BENCH_CUFILE_PIECE (64 * BENCH_MIB)
#define BENCH_CUFILE_LOG "/tmp/gpufs_bench_cufile.log"

struct bench_cufile_error {
  int err;    /* CUfileOpError; 0 is CU_FILE_SUCCESS */
  int cu_err; /* CUresult, when err is a CUDA driver error */
};

enum { BENCH_CU_FILE_HANDLE_TYPE_OPAQUE_FD = 1 };

struct bench_cufile_descr {
  int type; /* enum CUfileFileHandleType */
  union {
    int fd;
    void *handle;
  } handle;
  const void *fs_ops; /* NULL: the kernel's file system */
};

typedef void *bench_cufile_handle;

static struct {
  int tried;
  void *lib;
  char why[160]; /* why it did not load */
  struct bench_cufile_error (*driver_open)(void);
  struct bench_cufile_error (*driver_close)(void);
  struct bench_cufile_error (*handle_register)(bench_cufile_handle *, struct bench_cufile_descr *);
  void (*handle_deregister)(bench_cufile_handle);
  struct bench_cufile_error (*buf_register)(const void *, size_t, int);
  struct bench_cufile_error (*buf_deregister)(const void *);
  ssize_t (*read)(bench_cufile_handle, void *, size_t, off_t, off_t);
} g_cufile;

/* The names of the CUfileOpError values a failed setup is likely to give. */
static const char *bench_cufile_errname(int err)
{
  switch (err) {
  case 5001: return "CU_FILE_DRIVER_NOT_INITIALIZED";
  case 5007: return "CU_FILE_PLATFORM_NOT_SUPPORTED";
  case 5008: return "CU_FILE_IO_NOT_SUPPORTED";
  case 5009: return "CU_FILE_DEVICE_NOT_SUPPORTED";
  case 5010: return "CU_FILE_NVFS_DRIVER_ERROR";
  case 5011: return "CU_FILE_CUDA_DRIVER_ERROR";
  case 5018: return "CU_FILE_INVALID_FILE_TYPE";
  case 5019: return "CU_FILE_INVALID_FILE_OPEN_FLAG";
  case 5020: return "CU_FILE_DIO_NOT_SET";
  case 5025: return "CU_FILE_PERMISSION_DENIED";
  case 5027: return "CU_FILE_HANDLE_NOT_REGISTERED";
  case 5030: return "CU_FILE_INTERNAL_ERROR";
  default: return "CUfileOpError";
  }
}

/* dlsym name into *slot; 0, or -ENOTSUP with g_cufile.why set. */
static int bench_cufile_sym(void *slot, const char *name)
{
  void *p = dlsym(g_cufile.lib, name);
  if (!p) {
    snprintf(g_cufile.why, sizeof(g_cufile.why), "libcufile has no %s", name);
    return -ENOTSUP;
  }
  memcpy(slot, &p, sizeof(p));
  return 0;
}

/* Load libcufile once.  0, or -ENOTSUP with g_cufile.why set. */
static int bench_cufile_load(void)
{
  static const char *names[] = {"libcufile.so", "libcufile.so.1",
                                "/usr/local/cuda/lib64/libcufile.so"};
  unsigned i;

  if (g_cufile.tried)
    return g_cufile.lib && !g_cufile.why[0] ? 0 : -ENOTSUP;
  g_cufile.tried = 1;
  /* read by libcufile when it initializes: set them before the first load.
   * FORCE keeps cuFile on its POSIX path even where GDS would work, so this
   * stays the baseline it claims to be.  Its log goes to /tmp, not into
   * the working directory (unless the user chose a place). */
  setenv("CUFILE_ALLOW_COMPAT_MODE", "true", 1);
  setenv("CUFILE_FORCE_COMPAT_MODE", "true", 1);
  setenv("CUFILE_LOGFILE_PATH", BENCH_CUFILE_LOG, 0);
  for (i = 0; i < sizeof(names) / sizeof(names[0]) && !g_cufile.lib; i++)
    g_cufile.lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
  if (!g_cufile.lib) {
    snprintf(g_cufile.why, sizeof(g_cufile.why), "libcufile not found (%s)", dlerror());
    return -ENOTSUP;
  }
  /* newer headers map cuFileDriverClose to cuFileDriverClose_v2 */
  if (bench_cufile_sym(&g_cufile.driver_close, "cuFileDriverClose_v2") != 0 &&
      bench_cufile_sym(&g_cufile.driver_close, "cuFileDriverClose") != 0)
    return -ENOTSUP;
  g_cufile.why[0] = '\0';
  if (bench_cufile_sym(&g_cufile.driver_open, "cuFileDriverOpen") ||
      bench_cufile_sym(&g_cufile.handle_register, "cuFileHandleRegister") ||
      bench_cufile_sym(&g_cufile.handle_deregister, "cuFileHandleDeregister") ||
      bench_cufile_sym(&g_cufile.buf_register, "cuFileBufRegister") ||
      bench_cufile_sym(&g_cufile.buf_deregister, "cuFileBufDeregister") ||
      bench_cufile_sym(&g_cufile.read, "cuFileRead"))
    return -ENOTSUP;
  return 0;
}

/* cuFileRead [0, bytes) of the file into dev in pieces, in order.
 * 0, or -EIO with out->note set. */
static int bench_cufile_read_all(bench_cufile_handle fh, void *dev, uint64_t bytes,
                                 struct bench_rate *out)
{
  uint64_t off;
  for (off = 0; off < bytes; off += BENCH_CUFILE_PIECE) {
    uint64_t len = bytes - off < BENCH_CUFILE_PIECE ? bytes - off : BENCH_CUFILE_PIECE;
    ssize_t n = g_cufile.read(fh, dev, (size_t)len, (off_t)off, (off_t)off);
    if (n != (ssize_t)len) {
      snprintf(out->note, sizeof(out->note), "cuFileRead of %llu bytes at %llu returned %zd",
               (unsigned long long)len, (unsigned long long)off, n);
      return -EIO;
    }
  }
  return 0;
}

int bench_cufile(const char *path, void *dev, uint64_t bytes, uint64_t seed,
                 struct bench_rate *out)
{
  struct bench_cufile_descr descr;
  struct bench_cufile_error e;
  bench_cufile_handle fh = NULL;
  struct stat st;
  double t0, seconds;
  int fd = -1, rc, buf_registered = 0, driver_open = 0;

  memset(out, 0, sizeof(*out));
  out->bytes = bytes;
  if (bytes == 0 || bytes % 8 != 0) {
    snprintf(out->note, sizeof(out->note), "bytes must be a positive multiple of 8");
    return -EINVAL;
  }
  if ((rc = bench_cufile_load()) != 0) {
    snprintf(out->note, sizeof(out->note), "%s", g_cufile.why);
    return rc;
  }
  t0 = bench_now();
  e = g_cufile.driver_open();
  if (e.err != 0) {
    snprintf(out->note, sizeof(out->note), "cuFileDriverOpen: %s %d (CUresult %d); see %s",
             bench_cufile_errname(e.err), e.err, e.cu_err, getenv("CUFILE_LOGFILE_PATH"));
    return -ENOTSUP;
  }
  driver_open = 1;
  fd = open(path, O_RDONLY);
  if (fd < 0 || fstat(fd, &st) != 0 || (uint64_t)st.st_size < bytes) {
    rc = fd < 0 ? -errno : -EINVAL;
    snprintf(out->note, sizeof(out->note), "cannot read %llu bytes of %s",
             (unsigned long long)bytes, path);
    goto out;
  }
  memset(&descr, 0, sizeof(descr));
  descr.type = BENCH_CU_FILE_HANDLE_TYPE_OPAQUE_FD;
  descr.handle.fd = fd;
  e = g_cufile.handle_register(&fh, &descr);
  if (e.err != 0) {
    fh = NULL;
    snprintf(out->note, sizeof(out->note), "cuFileHandleRegister: %s %d (CUresult %d); see %s",
             bench_cufile_errname(e.err), e.err, e.cu_err, getenv("CUFILE_LOGFILE_PATH"));
    rc = -ENOTSUP;
    goto out;
  }
  /* optional: cuFileRead also takes unregistered memory */
  e = g_cufile.buf_register(dev, (size_t)bytes, 0);
  buf_registered = e.err == 0;
  out->setup_seconds = bench_now() - t0;

  if ((rc = bench_cufile_read_all(fh, dev, bytes < BENCH_CUFILE_PIECE ? bytes : BENCH_CUFILE_PIECE,
                                  out)))
    goto out; /* warm-up: one piece */
  if ((rc = BENCH_CUDA(cudaMemset(dev, 0, bytes))) || (rc = BENCH_CUDA(cudaDeviceSynchronize()))) {
    snprintf(out->note, sizeof(out->note), "CUDA error (see stderr)");
    goto out;
  }
  t0 = bench_now();
  if ((rc = bench_cufile_read_all(fh, dev, bytes, out)))
    goto out;
  seconds = bench_now() - t0;
  out->reps = 1;
  out->seconds = seconds;
  out->gbps = seconds > 0 ? (double)bytes / seconds / 1e9 : 0;
  if ((rc = bench_check_device(dev, bytes, seed, out, NULL)))
    goto out;
  snprintf(out->note, sizeof(out->note),
           "compat mode, 1 thread, cuFileRead 64M pieces, %s buffer, once",
           buf_registered ? "registered" : "unregistered");
out:
  if (buf_registered)
    g_cufile.buf_deregister(dev);
  if (fh)
    g_cufile.handle_deregister(fh);
  if (fd >= 0)
    close(fd);
  if (driver_open)
    g_cufile.driver_close();
  return rc;
}
