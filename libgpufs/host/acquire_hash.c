/*
 * acquire_hash.c - the hashes behind gpufs_acquire (acquire_hash.h): pages hashed by
 * several threads over a read-only mapping of the file, compared with the
 * file's previous acquire.
 */
#include "libgpufs/host/acquire_hash.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* xxHash (Debian libxxhash-dev), header-only: no library to link */
#define XXH_INLINE_ALL
#include <xxhash.h>

#define ACQ_MAX_THREADS 64u

struct acq_file {
  uint64_t dev, ino, size;
  int64_t mtime_ns, ctime_ns; /* the file's at the acquire that recorded it */
  uint32_t page;
  uint64_t npages;
  uint64_t *hash;
  struct acq_file *next;
};

struct gpufs_acq_table {
  struct acq_file *head;
};

int gpufs_acq_table_create(struct gpufs_acq_table **out)
{
  *out = calloc(1, sizeof(**out));
  return *out ? 0 : -ENOMEM;
}

void gpufs_acq_table_destroy(struct gpufs_acq_table *t)
{
  if (!t) return;
  for (struct acq_file *f = t->head, *n; f; f = n) {
    n = f->next;
    free(f->hash);
    free(f);
  }
  free(t);
}

static int64_t acq_ns(struct timespec t) { return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec; }

/* One thread's share of gpufs_acq_hash: pages [p0, p1), into out[p - first]. */
struct acq_part {
  const uint8_t *base;
  uint64_t size, first, p0, p1;
  uint32_t page;
  uint64_t *out;
};

static void *acq_hash_part(void *arg)
{
  const struct acq_part *a = arg;
  for (uint64_t p = a->p0; p < a->p1; p++) {
    const uint64_t off = p * a->page;
    const uint64_t len = a->size - off < a->page ? a->size - off : a->page;
    a->out[p - a->first] = XXH3_64bits(a->base + off, (size_t)len);
  }
  return NULL;
}

int gpufs_acq_hash(int fd, const struct gpufs_acq_pages *pg, uint32_t nthreads, uint64_t *out)
{
  const uint64_t npages = (pg->size + pg->page - 1) / pg->page;
  const uint64_t p1 = pg->p1 < npages ? pg->p1 : npages, n = p1 > pg->p0 ? p1 - pg->p0 : 0;
  if (n == 0) return 0;
  void *base = mmap(NULL, pg->size, PROT_READ, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) return -errno;
  madvise(base, pg->size, MADV_SEQUENTIAL);
  uint64_t k = nthreads < 1 ? 1 : nthreads > ACQ_MAX_THREADS ? ACQ_MAX_THREADS : nthreads;
  if (k > n) k = n;
  struct acq_part part[ACQ_MAX_THREADS];
  pthread_t th[ACQ_MAX_THREADS];
  int started[ACQ_MAX_THREADS] = {0};
  for (uint64_t i = 0; i < k; i++) {
    part[i] = (struct acq_part){.base = base, .size = pg->size, .first = pg->p0,
                                .p0 = pg->p0 + n * i / k, .p1 = pg->p0 + n * (i + 1) / k,
                                .page = pg->page, .out = out};
    /* a thread that cannot start leaves its share to the caller */
    if (i > 0) started[i] = pthread_create(&th[i], NULL, acq_hash_part, &part[i]) == 0;
  }
  for (uint64_t i = 0; i < k; i++)
    if (!started[i]) acq_hash_part(&part[i]);
  for (uint64_t i = 1; i < k; i++)
    if (started[i]) pthread_join(th[i], NULL);
  munmap(base, pg->size);
  return 0;
}

static struct acq_file **acq_find(struct gpufs_acq_table *t, const struct stat *st)
{
  struct acq_file **link = &t->head;
  while (*link && ((*link)->dev != (uint64_t)st->st_dev || (*link)->ino != (uint64_t)st->st_ino))
    link = &(*link)->next;
  return link;
}

/* The pages where old and new differ (all of them when there is no old
 * record of this shape).  0 or -ENOMEM. */
static int acq_diff(const struct acq_file *old, uint64_t size, uint32_t page,
                    const uint64_t *hash, uint64_t npages, uint64_t **changed, uint64_t *n)
{
  const int same = old && old->size == size && old->page == page;
  uint64_t count = 0;
  for (uint64_t p = 0; p < npages; p++) count += !same || old->hash[p] != hash[p];
  *changed = NULL;
  *n = 0;
  if (count == 0) return 0;
  if (!(*changed = malloc(count * sizeof(uint64_t)))) return -ENOMEM;
  for (uint64_t p = 0; p < npages; p++)
    if (!same || old->hash[p] != hash[p]) (*changed)[(*n)++] = p;
  return 0;
}

int gpufs_acq_update(struct gpufs_acq_table *t, const struct stat *st, uint32_t page,
                     uint64_t *hash, uint64_t **changed, uint64_t *nchanged)
{
  const uint64_t size = (uint64_t)st->st_size;
  const uint64_t npages = (size + page - 1) / page;
  struct acq_file **link = acq_find(t, st);
  struct acq_file *f = *link;
  int rc = acq_diff(f, size, page, hash, npages, changed, nchanged);
  if (rc == 0 && !f) {
    if (!(f = calloc(1, sizeof(*f)))) {
      free(*changed);
      *changed = NULL;
      rc = -ENOMEM;
    } else {
      f->dev = (uint64_t)st->st_dev;
      f->ino = (uint64_t)st->st_ino;
      f->next = t->head;
      t->head = f;
    }
  }
  if (rc != 0) {
    free(hash);
    return rc;
  }
  free(f->hash);
  f->hash = hash;
  f->size = size;
  f->page = page;
  f->npages = npages;
  f->mtime_ns = acq_ns(st->st_mtim);
  f->ctime_ns = acq_ns(st->st_ctim);
  return 0;
}

int gpufs_acq_unchanged(struct gpufs_acq_table *t, const struct stat *st, uint32_t page)
{
  const struct acq_file *f = *acq_find(t, st);
  return f && f->size == (uint64_t)st->st_size && f->page == page &&
         f->mtime_ns == acq_ns(st->st_mtim) && f->ctime_ns == acq_ns(st->st_ctim);
}

int gpufs_acq_update_range(struct gpufs_acq_table *t, const struct stat *st,
                           const struct gpufs_acq_pages *pg, const uint64_t *hash,
                           uint64_t **changed, uint64_t *nchanged)
{
  struct acq_file *f = *acq_find(t, st);
  if (!f || f->size != (uint64_t)st->st_size || f->page != pg->page) return -ENOENT;
  const uint64_t p1 = pg->p1 < f->npages ? pg->p1 : f->npages;
  uint64_t count = 0;
  *changed = NULL;
  *nchanged = 0;
  for (uint64_t p = pg->p0; p < p1; p++) count += f->hash[p] != hash[p - pg->p0];
  if (count && !(*changed = malloc(count * sizeof(uint64_t)))) return -ENOMEM;
  for (uint64_t p = pg->p0; p < p1; p++)
    if (f->hash[p] != hash[p - pg->p0]) {
      (*changed)[(*nchanged)++] = p;
      f->hash[p] = hash[p - pg->p0];
    }
  f->mtime_ns = acq_ns(st->st_mtim);
  f->ctime_ns = acq_ns(st->st_ctim);
  return 0;
}

void gpufs_acq_forget(struct gpufs_acq_table *t, const struct stat *st)
{
  struct acq_file **link = acq_find(t, st);
  struct acq_file *f = *link;
  if (!f) return;
  *link = f->next;
  free(f->hash);
  free(f);
}
