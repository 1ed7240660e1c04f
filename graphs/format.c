/*
 * format.c - the CSR graph file: layout, checksums, writing, opening
 * (format.h; docs/graphs.md, "The file").
 */
#include "graphs/format.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "benchlib/util.h"

/* xxHash (Debian libxxhash-dev), header-only: no library to link */
#define XXH_INLINE_ALL
#include <xxhash.h>

#define GRAPH_SUM_PIECE (1ull << 20)

/* the layout docs/graphs.md gives, field by field */
_Static_assert(sizeof(struct graph_header) == 112, "graph_header is 112 bytes");
_Static_assert(offsetof(struct graph_header, gen) == 72, "gen at byte 72");
_Static_assert(offsetof(struct graph_header, header_sum) == 104, "header_sum at byte 104");

int graph_errf(struct graph_err *err, int rc, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  if (err)
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
  va_end(ap);
  return rc;
}

static uint64_t graph_round(uint64_t x) { return (x + GRAPH_ALIGN - 1) / GRAPH_ALIGN * GRAPH_ALIGN; }

void graph_layout(uint64_t n, uint64_t m, uint32_t flags, struct graph_header *h)
{
  h->nvertices = n;
  h->nedges = m;
  h->flags = flags;
  h->offsets_off = GRAPH_ALIGN;
  h->neigh_off = graph_round(h->offsets_off + (n + 1) * 8);
  const uint64_t neigh_end = graph_round(h->neigh_off + m * 4);
  h->weights_off = (flags & GRAPH_WEIGHTED) ? neigh_end : 0;
  h->file_size = (flags & GRAPH_WEIGHTED) ? graph_round(h->weights_off + m * 4) : neigh_end;
}

/* ---------------- checksums ---------------- */

struct graph_sum_job {
  const uint8_t *data;
  uint64_t bytes;
  uint64_t *piece;
};

static int graph_sum_pieces(void *arg, uint64_t lo, uint64_t hi)
{
  struct graph_sum_job *j = (struct graph_sum_job *)arg;
  for (uint64_t p = lo; p < hi; p++) {
    const uint64_t off = p * GRAPH_SUM_PIECE;
    const uint64_t len = j->bytes - off < GRAPH_SUM_PIECE ? j->bytes - off : GRAPH_SUM_PIECE;
    j->piece[p] = XXH3_64bits(j->data + off, len);
  }
  return 0;
}

uint64_t graph_data_sum(const void *data, uint64_t bytes)
{
  const uint64_t npieces = (bytes + GRAPH_SUM_PIECE - 1) / GRAPH_SUM_PIECE;
  struct graph_sum_job j = {(const uint8_t *)data, bytes, NULL};
  if (npieces <= 1)
    return XXH3_64bits(data, bytes);
  j.piece = (uint64_t *)malloc(npieces * sizeof(uint64_t));
  if (!j.piece || bench_parallel_for(npieces, 16, 0, graph_sum_pieces, &j) != 0) {
    if (!j.piece)
      j.piece = (uint64_t *)malloc(npieces * sizeof(uint64_t));
    if (!j.piece)
      return 0; /* no memory for 8 bytes a MiB: no checksum matches, the file is rewritten */
    graph_sum_pieces(&j, 0, npieces);
  }
  const uint64_t sum = XXH3_64bits(j.piece, npieces * sizeof(uint64_t));
  free(j.piece);
  return sum;
}

static uint64_t graph_header_sum(const struct graph_header *h)
{
  return XXH3_64bits(h, offsetof(struct graph_header, header_sum));
}

/* ---------------- writing ---------------- */

int graph_write(const struct graph *g, const struct graph_gen *gen, const char *path, struct graph_err *err)
{
  struct graph_header h;
  char tmp[4200];
  memset(&h, 0, sizeof(h));
  memcpy(h.magic, GRAPH_MAGIC, 8);
  h.version = GRAPH_VERSION;
  graph_layout(g->n, g->m, g->flags, &h);
  if (gen)
    h.gen = *gen;
  if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
    return graph_errf(err, -ENAMETOOLONG, "%s: name too long", path);
  /* the whole file is laid out in a mapping of path.tmp, summed, then renamed */
  const int fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0)
    return graph_errf(err, -errno, "create %s: %s", tmp, strerror(errno));
  int rc = 0;
  uint8_t *p = NULL;
  if (ftruncate(fd, (off_t)h.file_size) != 0) {
    rc = graph_errf(err, -errno, "size %s: %s", tmp, strerror(errno));
    goto out;
  }
  p = (uint8_t *)mmap(NULL, h.file_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    p = NULL;
    rc = graph_errf(err, -errno, "map %s: %s", tmp, strerror(errno));
    goto out;
  }
  memcpy(p + h.offsets_off, g->offsets, (g->n + 1) * 8);
  memcpy(p + h.neigh_off, g->neigh, g->m * 4);
  if (g->flags & GRAPH_WEIGHTED)
    memcpy(p + h.weights_off, g->weights, g->m * 4);
  h.data_sum = graph_data_sum(p + GRAPH_ALIGN, h.file_size - GRAPH_ALIGN);
  h.header_sum = graph_header_sum(&h);
  memcpy(p, &h, sizeof(h));
  if (munmap(p, h.file_size) != 0)
    rc = graph_errf(err, -errno, "write %s: %s", tmp, strerror(errno));
  p = NULL;
  if (!rc && rename(tmp, path) != 0)
    rc = graph_errf(err, -errno, "rename %s: %s", tmp, strerror(errno));
out:
  if (p)
    munmap(p, h.file_size);
  close(fd);
  if (rc)
    unlink(tmp);
  return rc;
}

/* ---------------- reading ---------------- */

int graph_check_header(const struct graph_header *h, uint64_t file_bytes, struct graph_err *err)
{
  struct graph_header want;
  if (file_bytes < sizeof(*h))
    return graph_errf(err, -EIO, "truncated: %" PRIu64 " bytes, shorter than the header", file_bytes);
  if (memcmp(h->magic, GRAPH_MAGIC, 8) != 0)
    return graph_errf(err, -EINVAL, "not a graph file (no magic %s)", GRAPH_MAGIC);
  if (h->version != GRAPH_VERSION)
    return graph_errf(err, -EINVAL, "graph file version %u, this program reads %u", h->version,
                     GRAPH_VERSION);
  if (graph_header_sum(h) != h->header_sum)
    return graph_errf(err, -EBADMSG, "the header's checksum does not match: a damaged header");
  if (h->nvertices > GRAPH_MAX_VERTICES || h->nedges > (1ull << 40) ||
      (h->flags & ~(uint32_t)(GRAPH_WEIGHTED | GRAPH_SYMMETRIC)))
    return graph_errf(err, -EINVAL, "bad counts or flags: %" PRIu64 " vertices, %" PRIu64
                     " edges, flags 0x%x", h->nvertices, h->nedges, h->flags);
  graph_layout(h->nvertices, h->nedges, h->flags, &want);
  if (want.offsets_off != h->offsets_off || want.neigh_off != h->neigh_off ||
      want.weights_off != h->weights_off || want.file_size != h->file_size)
    return graph_errf(err, -EINVAL, "the sections' offsets do not match the counts");
  if (file_bytes < h->file_size)
    return graph_errf(err, -EIO, "truncated: %" PRIu64 " bytes of %" PRIu64, file_bytes, h->file_size);
  if (file_bytes > h->file_size)
    return graph_errf(err, -EINVAL, "%" PRIu64 " bytes, the header says %" PRIu64, file_bytes,
                     h->file_size);
  return 0;
}

/* The offsets must rise from 0 to m and every neighbour name a vertex:
 * what a kernel relies on to stay in bounds. */
static int graph_check_arrays(const struct graph *g, struct graph_err *err)
{
  if (g->offsets[0] != 0 || g->offsets[g->n] != g->m)
    return graph_errf(err, -EINVAL, "offsets run from %" PRIu64 " to %" PRIu64 ", not 0 to %" PRIu64,
                     g->offsets[0], g->offsets[g->n], g->m);
  for (uint64_t v = 0; v < g->n; v++)
    if (g->offsets[v + 1] < g->offsets[v])
      return graph_errf(err, -EINVAL, "offsets fall at vertex %" PRIu64, v);
  for (uint64_t e = 0; e < g->m; e++)
    if (g->neigh[e] >= g->n)
      return graph_errf(err, -EINVAL, "neighbour %" PRIu64 " is %u, past the last vertex", e,
                       g->neigh[e]);
  return 0;
}

static int graph_fd_header(int fd, const char *path, struct graph_header *h, uint64_t *bytes, struct graph_err *err)
{
  struct stat st;
  if (fstat(fd, &st) != 0)
    return graph_errf(err, -errno, "%s: %s", path, strerror(errno));
  if (!S_ISREG(st.st_mode))
    return graph_errf(err, -EINVAL, "%s: not a regular file", path);
  *bytes = (uint64_t)st.st_size;
  memset(h, 0, sizeof(*h));
  if (*bytes >= sizeof(*h) && bench_pio_full(fd, h, sizeof(*h), 0, 0) != 0)
    return graph_errf(err, -EIO, "%s: cannot read the header", path);
  struct graph_err why;
  const int rc = graph_check_header(h, *bytes, &why);
  if (rc)
    return graph_errf(err, rc, "%s: %s", path, why.msg);
  return 0;
}

int graph_read_header(const char *path, struct graph_header *h, struct graph_err *err)
{
  uint64_t bytes;
  const int fd = open(path, O_RDONLY);
  if (fd < 0)
    return graph_errf(err, -errno, "%s: %s", path, strerror(errno));
  const int rc = graph_fd_header(fd, path, h, &bytes, err);
  close(fd);
  return rc;
}

int graph_open(const char *path, int verify_data, struct graph *g, struct graph_header *hout, struct graph_err *err)
{
  struct graph_header h;
  uint64_t bytes;
  memset(g, 0, sizeof(*g));
  const int fd = open(path, O_RDONLY);
  if (fd < 0)
    return graph_errf(err, -errno, "%s: %s", path, strerror(errno));
  int rc = graph_fd_header(fd, path, &h, &bytes, err);
  void *p = MAP_FAILED;
  if (!rc && (p = mmap(NULL, h.file_size, PROT_READ, MAP_SHARED, fd, 0)) == MAP_FAILED)
    rc = graph_errf(err, -errno, "map %s: %s", path, strerror(errno));
  close(fd);
  if (rc)
    return rc;
  const uint8_t *b = (const uint8_t *)p;
  if (verify_data && graph_data_sum(b + GRAPH_ALIGN, h.file_size - GRAPH_ALIGN) != h.data_sum) {
    munmap(p, h.file_size);
    return graph_errf(err, -EBADMSG, "%s: the data's checksum does not match the header's", path);
  }
  g->n = h.nvertices;
  g->m = h.nedges;
  g->flags = h.flags;
  g->offsets = (const uint64_t *)(b + h.offsets_off);
  g->neigh = (const uint32_t *)(b + h.neigh_off);
  g->weights = (h.flags & GRAPH_WEIGHTED) ? (const uint32_t *)(b + h.weights_off) : NULL;
  g->map = p;
  g->map_size = h.file_size;
  if (verify_data && (rc = graph_check_arrays(g, err)) != 0) {
    graph_free(g);
    return rc;
  }
  if (hout)
    *hout = h;
  return 0;
}

void graph_free(struct graph *g)
{
  if (g->map)
    munmap(g->map, g->map_size);
  for (int i = 0; i < 3; i++)
    free(g->own[i]);
  memset(g, 0, sizeof(*g));
}

uint32_t graph_source(const struct graph *g)
{
  uint64_t best = 0, deg = 0;
  for (uint64_t v = 0; v < g->n; v++)
    if (g->offsets[v + 1] - g->offsets[v] > deg) {
      deg = g->offsets[v + 1] - g->offsets[v];
      best = v;
    }
  return (uint32_t)best;
}
