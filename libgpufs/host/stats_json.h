/*
 * stats_json.h - the counters of every instance as JSON (stats_json.c):
 * what GPUFS_STATS=FILE writes at gpufs_stop.
 */
#ifndef GPUFS_HOST_STATS_JSON_H
#define GPUFS_HOST_STATS_JSON_H

#include <stdint.h>
#include <stdio.h>

#include <gpufs.cuh>

#ifdef __cplusplus
extern "C" {
#endif

/* Write st[0 .. n) to f: one object with "version" and "instances", an
 * array of one object per instance ("instance": its index, then every
 * field of struct gpufs_stats by its name, in the struct's order), one
 * instance a line.  0, or -EIO when f reports an error. */
int gpufs_stats_json_write(FILE *f, const struct gpufs_stats *st, uint32_t n);

/* The same into the file path (created or truncated).  0 or -errno. */
int gpufs_stats_json_file(const char *path, const struct gpufs_stats *st, uint32_t n);

#ifdef __cplusplus
}
#endif
#endif /* GPUFS_HOST_STATS_JSON_H */
