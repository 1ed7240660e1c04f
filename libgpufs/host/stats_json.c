/*
 * stats_json.c - GPUFS_STATS=FILE: every instance's counters (struct
 * gpufs_stats, every field) written as JSON when gpufs_stop ends the
 * instances (docs/api.md, "Statistics as JSON").  Plain C, no CUDA: the
 * runtime hands the counters in.
 *
 *   {"version": "X.Y.Z", "instances": [
 *   {"instance": 0, "hits": 12, "misses": 3, ...},
 *   {"instance": 1, ...}
 *   ]}
 */
#include "libgpufs/host/stats_json.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>

#include <gpufs/version.h>

#define F(name) {#name, offsetof(struct gpufs_stats, name)}

/* Every field of struct gpufs_stats, in its order. */
static const struct {
  const char *name;
  size_t off;
} stats_fields[] = {
    F(hits), F(misses), F(evictions), F(scanned), F(nofree), F(alloc_ns), F(rounds), F(fetch_ns), F(fill_ns),
    F(settle_ns), F(copy_ns), F(ra_pages), F(gopens), F(gopen_ns), F(gopen_lock_ns), F(gopen_host_ns),
    F(gopen_wait_ns), F(chains), F(chained), F(chain_max), F(requests), F(batches), F(preads), F(merged),
    F(bytes_read), F(opens), F(errors), F(daemon_io_ns), F(daemon_busy_ns), F(map_copies), F(map_faults),
    F(pwrites), F(bytes_written), F(write_starts), F(writebacks), F(cleanings), F(dirty), F(peer_hits),
    F(reg_pages), F(reg_files), F(reg_bytes), F(reg_refused), F(reg_retired), F(pins_auto), F(pins_released),
    F(pins_bytes),
};

#undef F

/* A field added to struct gpufs_stats must be added above too. */
_Static_assert(sizeof(stats_fields) / sizeof(stats_fields[0]) == sizeof(struct gpufs_stats) / sizeof(uint64_t),
               "stats_fields lists every counter of struct gpufs_stats");

static uint64_t stats_field(const struct gpufs_stats *st, size_t k)
{
  return *(const uint64_t *)((const char *)st + stats_fields[k].off);
}

int gpufs_stats_json_write(FILE *f, const struct gpufs_stats *st, uint32_t n)
{
  fprintf(f, "{\"version\": \"%d.%d.%d\", \"instances\": [\n", GPUFS_VERSION_MAJOR, GPUFS_VERSION_MINOR,
          GPUFS_VERSION_PATCH);
  for (uint32_t i = 0; i < n; i++) {
    fprintf(f, "{\"instance\": %" PRIu32, i);
    for (size_t k = 0; k < sizeof(stats_fields) / sizeof(stats_fields[0]); k++)
      fprintf(f, ", \"%s\": %" PRIu64, stats_fields[k].name, stats_field(&st[i], k));
    fputs(i + 1 < n ? "},\n" : "}\n", f);
  }
  fputs("]}\n", f);
  return ferror(f) ? -EIO : 0;
}

int gpufs_stats_json_file(const char *path, const struct gpufs_stats *st, uint32_t n)
{
  FILE *f = fopen(path, "w");
  if (!f)
    return -errno;
  int rc = gpufs_stats_json_write(f, st, n);
  if (fflush(f) != 0 && rc == 0)
    rc = -errno;
  if (fclose(f) != 0 && rc == 0)
    rc = -errno;
  return rc;
}
