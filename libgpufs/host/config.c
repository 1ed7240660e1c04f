/*
 * config.c - defaults, GPUFS_* environment overrides and validation of
 * struct gpufs_config.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gpufs/config.h>

uint64_t gpufs_config_staging(const struct gpufs_config *cfg)
{
  if (cfg->staging_size) return cfg->staging_size;
  uint64_t b = 16384ull * cfg->page_size;
  if (b < (256ull << 20)) b = 256ull << 20;
  if (b > (1ull << 30)) b = 1ull << 30;
  /* a small cache cannot have more page loads in flight than frames:
   * two slots a frame (opens, closes, write-backs beside the loads) */
  const uint64_t frames = cfg->page_size ? cfg->cache_size / cfg->page_size : 0;
  const uint64_t used = (2 * frames > GPUFS_MIN_SLOTS ? 2 * frames : GPUFS_MIN_SLOTS) * cfg->page_size;
  return used < b ? used : b;
}

uint32_t gpufs_config_rings(const struct gpufs_config *cfg)
{
  if (cfg->nrings) return cfg->nrings;
  const uint64_t most = cfg->page_size ? cfg->cache_size / cfg->page_size / 4 : 0;
  return most >= GPUFS_RINGS_AUTO_MAX ? GPUFS_RINGS_AUTO_MAX : most ? (uint32_t)most : 1;
}

uint32_t gpufs_config_daemon_threads(const struct gpufs_config *cfg)
{
  if (cfg->daemon_threads) return cfg->daemon_threads;
  const uint64_t n = cfg->ndevices ? cfg->ndevices : 1;
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  uint64_t w = GPUFS_WORKERS_PER_INSTANCE * n;
  if (cpus > 0 && (uint64_t)cpus < w) w = (uint64_t)cpus;
  return w < 1 ? 1 : w > 256 ? 256 : (uint32_t)w;
}

void gpufs_config_default(struct gpufs_config *cfg)
{
  memset(cfg, 0, sizeof(*cfg));
  cfg->device = 0;
  cfg->page_size = 64u << 10;
  cfg->cache_size = 2ull << 30;
  cfg->nrings = 0; /* gpufs_config_rings: 64, fewer for a small cache */
  cfg->daemon_threads = 0; /* gpufs_config_daemon_threads: 16 an instance */
  cfg->staging_size = 0; /* gpufs_config_staging chooses by page size */
  cfg->max_open_files = 128;
  cfg->max_batch = 16;
  cfg->alloc_timeout_ms = 2000;
  cfg->poll_max_ns = 32768;
  cfg->readahead_max = 128u << 10;
  cfg->write_behind = 32ull << 20; /* write + gfsync (docs/config.md) */
  cfg->pull_warps = 4;             /* warps' host pulls (docs/config.md) */
  cfg->readahead_async = 0;        /* posted windows (docs/config.md) */
  cfg->auto_pin = 1;               /* files opened again are pinned */
  cfg->ndevices = 0; /* one instance, on `device` */
}

/* "123", "64K", "2M", "1G" -> bytes.  0 on success. */
static int parse_size(const char *s, uint64_t *out)
{
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 0);
  if (errno != 0 || end == s || s[0] == '-') return -EINVAL;
  uint64_t mul = 1;
  switch (*end) {
  case '\0': break;
  case 'k': case 'K': mul = 1ull << 10; end++; break;
  case 'm': case 'M': mul = 1ull << 20; end++; break;
  case 'g': case 'G': mul = 1ull << 30; end++; break;
  default: return -EINVAL;
  }
  if (*end == 'i' || *end == 'B') end++; /* accept KiB, MB ... */
  if (*end == 'B') end++;
  if (*end != '\0') return -EINVAL;
  if (v > UINT64_MAX / mul) return -EINVAL;
  *out = v * mul;
  return 0;
}

static int env_u64(const char *name, uint64_t *field, const char **bad)
{
  const char *s = getenv(name);
  uint64_t v;
  if (s == NULL) return 0;
  if (parse_size(s, &v) != 0) {
    *bad = name;
    return -EINVAL;
  }
  *field = v;
  return 0;
}

static int env_u32(const char *name, uint32_t *field, const char **bad)
{
  uint64_t v = *field;
  int rc = env_u64(name, &v, bad);
  if (rc != 0) return rc;
  if (v > UINT32_MAX) {
    *bad = name;
    return -EINVAL;
  }
  *field = (uint32_t)v;
  return 0;
}

/* "0,1" or "0, 0" -> devices[], ndevices.  0, or -EINVAL (an entry that is
 * not a number, more than GPUFS_MAX_INSTANCES, or none); *cfg unchanged then. */
static int parse_devices(const char *s, struct gpufs_config *cfg)
{
  int dev[GPUFS_MAX_INSTANCES];
  uint32_t n = 0;
  for (const char *p = s;;) {
    while (*p == ' ') p++;
    char *end = NULL;
    errno = 0;
    long v = strtol(p, &end, 10);
    if (end == p || errno != 0 || v < 0 || v > INT32_MAX || n == GPUFS_MAX_INSTANCES)
      return -EINVAL;
    dev[n++] = (int)v;
    p = end;
    while (*p == ' ') p++;
    if (*p == '\0') break;
    if (*p++ != ',') return -EINVAL;
  }
  memcpy(cfg->devices, dev, n * sizeof(int));
  cfg->ndevices = n;
  return 0;
}

int gpufs_config_from_env(struct gpufs_config *cfg, const char **bad_field)
{
  const char *bad = NULL;
  uint32_t dev = (uint32_t)cfg->device;
  int rc = 0;
  rc = rc ? rc : env_u32("GPUFS_DEVICE", &dev, &bad);
  rc = rc ? rc : env_u32("GPUFS_PAGE_SIZE", &cfg->page_size, &bad);
  rc = rc ? rc : env_u64("GPUFS_CACHE_SIZE", &cfg->cache_size, &bad);
  rc = rc ? rc : env_u32("GPUFS_RINGS", &cfg->nrings, &bad);
  rc = rc ? rc : env_u32("GPUFS_DAEMON_THREADS", &cfg->daemon_threads, &bad);
  rc = rc ? rc : env_u64("GPUFS_STAGING_SIZE", &cfg->staging_size, &bad);
  rc = rc ? rc : env_u32("GPUFS_MAX_OPEN_FILES", &cfg->max_open_files, &bad);
  rc = rc ? rc : env_u32("GPUFS_MAX_BATCH", &cfg->max_batch, &bad);
  rc = rc ? rc : env_u32("GPUFS_ALLOC_TIMEOUT_MS", &cfg->alloc_timeout_ms, &bad);
  rc = rc ? rc : env_u32("GPUFS_POLL_MAX_NS", &cfg->poll_max_ns, &bad);
  rc = rc ? rc : env_u32("GPUFS_READAHEAD_MAX", &cfg->readahead_max, &bad);
  rc = rc ? rc : env_u32("GPUFS_STOP_TIMEOUT_MS", &cfg->stop_timeout_ms, &bad);
  rc = rc ? rc : env_u32("GPUFS_DIRTY_GRAIN", &cfg->dirty_grain, &bad);
  rc = rc ? rc : env_u64("GPUFS_REGISTER_MAX", &cfg->register_max, &bad);
  rc = rc ? rc : env_u64("GPUFS_WRITE_BEHIND", &cfg->write_behind, &bad);
  rc = rc ? rc : env_u32("GPUFS_PULL_WARPS", &cfg->pull_warps, &bad);
  rc = rc ? rc : env_u32("GPUFS_READAHEAD_ASYNC", &cfg->readahead_async, &bad);
  rc = rc ? rc : env_u32("GPUFS_AUTO_PIN", &cfg->auto_pin, &bad);
  if (rc == 0 && getenv("GPUFS_DEVICES") != NULL &&
      parse_devices(getenv("GPUFS_DEVICES"), cfg) != 0) {
    bad = "GPUFS_DEVICES";
    rc = -EINVAL;
  }
  if (rc == 0 && dev > INT32_MAX) { bad = "GPUFS_DEVICE"; rc = -EINVAL; }
  if (rc == 0) cfg->device = (int)dev;
  if (bad_field) *bad_field = bad;
  return rc;
}

static int is_pow2(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

int gpufs_config_check(const struct gpufs_config *cfg, const char **bad_field, const char **why)
{
  const char *f = NULL, *w = NULL;
  uint32_t neg = 0;
  for (uint32_t i = 0; i < cfg->ndevices && i < GPUFS_MAX_INSTANCES; i++)
    neg += cfg->devices[i] < 0;
  if (cfg->device < 0) {
    f = "device"; w = "must be >= 0";
  } else if (cfg->ndevices > GPUFS_MAX_INSTANCES) {
    f = "ndevices"; w = "must be at most 8 (GPUFS_MAX_INSTANCES)";
  } else if (neg) {
    f = "devices"; w = "every entry must be >= 0";
  } else if (!is_pow2(cfg->page_size) || cfg->page_size < GPUFS_PAGE_MIN ||
             cfg->page_size > GPUFS_PAGE_MAX) {
    f = "page_size"; w = "must be a power of two between 4 KiB and 2 MiB";
  } else if (cfg->cache_size < 4ull * cfg->page_size ||
             cfg->cache_size / cfg->page_size > 0xfffffff0ull) {
    f = "cache_size"; w = "must hold at least 4 pages and fewer than 2^32 pages";
  } else if (cfg->nrings > cfg->cache_size / cfg->page_size / 4) {
    f = "nrings"; w = "must be 0 (chosen by cache size) or leave every ring 4 frames or more";
  } else if (cfg->daemon_threads > 256) {
    f = "daemon_threads"; w = "must be between 1 and 256 (0: 16 for each instance, at most the CPUs)";
  } else if (gpufs_config_staging(cfg) / cfg->page_size < GPUFS_MIN_SLOTS ||
             gpufs_config_staging(cfg) / cfg->page_size > (1u << 24)) {
    f = "staging_size"; w = "must be 0 (chosen by page size) or hold between 128 and 2^24 pages";
  } else if (cfg->max_open_files == 0 || cfg->max_open_files > GPUFS_MAX_FILES_LIMIT) {
    f = "max_open_files"; w = "must be between 1 and 4096";
  } else if (cfg->max_batch == 0 || cfg->max_batch > gpufs_config_staging(cfg) / cfg->page_size) {
    f = "max_batch"; w = "must be between 1 and the number of staging pages";
  } else if (cfg->alloc_timeout_ms == 0 || cfg->alloc_timeout_ms > 3600u * 1000u) {
    f = "alloc_timeout_ms"; w = "must be between 1 ms and one hour";
  } else if (cfg->poll_max_ns < 128 || cfg->poll_max_ns > 1000000u) {
    f = "poll_max_ns"; w = "must be between 128 ns and 1 ms";
  } else if (cfg->stop_timeout_ms > 3600u * 1000u) {
    f = "stop_timeout_ms"; w = "must be at most one hour (0: 10 s)";
  } else if (cfg->dirty_grain != 0 &&
             (!is_pow2(cfg->dirty_grain) || cfg->dirty_grain > GPUFS_DIRTY_GRAIN)) {
    f = "dirty_grain"; w = "must be 0 (64) or a power of two between 1 and 64";
  } else if (cfg->readahead_max > GPUFS_READAHEAD_LIMIT) {
    f = "readahead_max"; w = "must be at most 64 MiB (0 turns readahead off)";
  } else if (cfg->pull_warps > 64) {
    f = "pull_warps"; w = "must be at most 64 (0: no limit)";
  } else if (cfg->readahead_async > 1) {
    f = "readahead_async"; w = "must be 0 (the window loaded in the call) or 1 (posted)";
  } else if (cfg->auto_pin > 1) {
    f = "auto_pin"; w = "must be 0 (only gpufs_register pins) or 1 (files read are pinned)";
  }
  if (bad_field) *bad_field = f;
  if (why) *why = w;
  return f ? -EINVAL : 0;
}
