/*
 * version.h - the libgpufs version: the one place it is written.  The
 * Makefile reads it for the package files (CMake, pkg-config) and for
 * `make install`; gpufs_version() returns it at run time, so a program can
 * tell which library it linked.
 */
#ifndef GPUFS_VERSION_H
#define GPUFS_VERSION_H

#define GPUFS_VERSION_MAJOR 0
#define GPUFS_VERSION_MINOR 5
#define GPUFS_VERSION_PATCH 0

/* MAJOR * 10000 + MINOR * 100 + PATCH, for #if comparisons */
#define GPUFS_VERSION (GPUFS_VERSION_MAJOR * 10000 + GPUFS_VERSION_MINOR * 100 + GPUFS_VERSION_PATCH)

#define GPUFS_VERSION_STR_(x) #x
#define GPUFS_VERSION_STR(x) GPUFS_VERSION_STR_(x)
/* "MAJOR.MINOR.PATCH" */
#define GPUFS_VERSION_STRING                                                                  \
  GPUFS_VERSION_STR(GPUFS_VERSION_MAJOR) "." GPUFS_VERSION_STR(GPUFS_VERSION_MINOR) "."       \
      GPUFS_VERSION_STR(GPUFS_VERSION_PATCH)

#endif /* GPUFS_VERSION_H */
