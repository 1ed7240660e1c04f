/*
 * daemon_stats.c - the daemon's counters: each worker adds a run's to its
 * own (per queue, own cache lines), readers sum every worker's; and the
 * daemon's small getters.
 */
#include <string.h>
#include <time.h>

#include "libgpufs/host/daemon_priv.h"

static void stat_add(uint64_t *counter, uint64_t v)
{
  /* relaxed: a counter of one writer; readers only want a recent value */
  if (v) gpufs_st_relaxed_u64_dev(counter, gpufs_ld_relaxed_u64_dev(counter) + v);
}

void gpufs_daemon_stats_flush(struct worker *w, uint32_t qi, const struct gpufs_daemon_stats *a)
{
  struct gpufs_daemon_stats *c = &w->stats[qi];
  stat_add(&c->requests, a->requests);
  stat_add(&c->batches, a->batches);
  stat_add(&c->preads, a->preads);
  stat_add(&c->merged, a->merged);
  stat_add(&c->bytes_read, a->bytes_read);
  stat_add(&c->opens, a->opens);
  stat_add(&c->pwrites, a->pwrites);
  stat_add(&c->bytes_written, a->bytes_written);
  stat_add(&c->errors, a->errors);
  stat_add(&c->io_ns, a->io_ns);
  stat_add(&c->busy_ns, a->busy_ns);
  stat_add(&c->map_copies, a->map_copies);
  stat_add(&c->map_faults, a->map_faults);
  stat_add(&c->write_starts, a->write_starts);
}

uint64_t gpufs_daemon_now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Add every started worker's counters of queue qi to *s.  Relaxed loads:
 * each counter is a recent value, not a snapshot of all of them. */
static void stats_sum(struct gpufs_daemon *d, uint32_t qi, struct gpufs_daemon_stats *s)
{
  for (uint32_t i = 0; i < d->nstarted; i++) {
    struct gpufs_daemon_stats *c = &d->workers[i].stats[qi];
    s->requests += gpufs_ld_relaxed_u64_dev(&c->requests);
    s->batches += gpufs_ld_relaxed_u64_dev(&c->batches);
    s->preads += gpufs_ld_relaxed_u64_dev(&c->preads);
    s->merged += gpufs_ld_relaxed_u64_dev(&c->merged);
    s->bytes_read += gpufs_ld_relaxed_u64_dev(&c->bytes_read);
    s->opens += gpufs_ld_relaxed_u64_dev(&c->opens);
    s->pwrites += gpufs_ld_relaxed_u64_dev(&c->pwrites);
    s->bytes_written += gpufs_ld_relaxed_u64_dev(&c->bytes_written);
    s->errors += gpufs_ld_relaxed_u64_dev(&c->errors);
    s->io_ns += gpufs_ld_relaxed_u64_dev(&c->io_ns);
    s->busy_ns += gpufs_ld_relaxed_u64_dev(&c->busy_ns);
    s->map_copies += gpufs_ld_relaxed_u64_dev(&c->map_copies);
    s->map_faults += gpufs_ld_relaxed_u64_dev(&c->map_faults);
    s->write_starts += gpufs_ld_relaxed_u64_dev(&c->write_starts);
  }
}

void gpufs_daemon_get_stats(struct gpufs_daemon *d, struct gpufs_daemon_stats *s)
{
  memset(s, 0, sizeof(*s));
  for (uint32_t qi = 0; qi < d->p.nqueues; qi++) stats_sum(d, qi, s);
}

int gpufs_daemon_file_ident(struct gpufs_daemon *d, const struct stat *st,
                            struct gpufs_hostfile_id *id)
{
  return gpufs_hostfiles_ident(d->files, st, id);
}

struct gpufs_hostfiles *gpufs_daemon_files(struct gpufs_daemon *d)
{
  return d->files;
}

int gpufs_daemon_get_queue_stats(struct gpufs_daemon *d, uint32_t q, struct gpufs_daemon_stats *s)
{
  if (q >= d->p.nqueues) return -GPUFS_EINVAL;
  memset(s, 0, sizeof(*s));
  stats_sum(d, q, s);
  return 0;
}
