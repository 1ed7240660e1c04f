/*
 * version.c - gpufs_version: the version of the library a program linked.
 */
#include <gpufs/version.h>

const char *gpufs_version(int *major, int *minor, int *patch)
{
  if (major)
    *major = GPUFS_VERSION_MAJOR;
  if (minor)
    *minor = GPUFS_VERSION_MINOR;
  if (patch)
    *patch = GPUFS_VERSION_PATCH;
  return GPUFS_VERSION_STRING;
}
