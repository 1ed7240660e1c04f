/*
 * format.h - the CSR graph file (docs/graphs.md, "The file"): one file,
 * a 4 KiB header, then three sections, each at a multiple of 4 KiB:
 *
 *   [0, 4096)        struct graph_header (little-endian, fixed-width)
 *   offsets_off      offsets[nvertices + 1], uint64: the neighbours of v are
 *                    neighbours[offsets[v] .. offsets[v + 1])
 *   neigh_off        neighbours[nedges], uint32, sorted within each vertex
 *   weights_off      weights[nedges], uint32 (0 when the graph has none)
 *
 * The header carries its own checksum and one of the data after it, and
 * what made the file (generator and parameters), so that a generated input
 * is reused only when it is the one asked for.  Plain C; callable from .c,
 * .cpp and .cu files.  Errors are negative errno, with a sentence in err.
 */
#ifndef GRAPHS_FORMAT_H
#define GRAPHS_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GRAPH_MAGIC "GPUFSCSR"
#define GRAPH_VERSION 1u
#define GRAPH_ALIGN 4096ull
#define GRAPH_MAX_VERTICES 0xFFFFFFFEull /* vertex ids are uint32; UINT32_MAX is "none" */

enum graph_flags {
  GRAPH_WEIGHTED = 1u,  /* the weights section is present */
  GRAPH_SYMMETRIC = 2u, /* every edge u->v has v->u with the same weight */
};

/* What made a file: a generator and its parameters, or a conversion. */
enum graph_gen_kind {
  GRAPH_GEN_NONE = 0,      /* built in memory (tests) */
  GRAPH_GEN_KRONECKER = 1, /* Graph500: 2^scale vertices, edge_factor * 2^scale edges */
  GRAPH_GEN_UNIFORM = 2,   /* nvertices, edge_factor * nvertices edges, endpoints uniform */
  GRAPH_GEN_CONVERTED = 3, /* graph_convert from a text edge list or MatrixMarket */
};

struct graph_gen {
  uint32_t kind;        /* enum graph_gen_kind */
  uint32_t weighted;    /* 1: weights 1..255 */
  uint64_t size;        /* KRONECKER: the scale; UNIFORM: the vertices */
  uint64_t edge_factor; /* generated (undirected) edges per vertex */
  uint64_t seed;
};

struct graph_header {
  char magic[8];           /* GRAPH_MAGIC, no NUL */
  uint32_t version;        /* GRAPH_VERSION */
  uint32_t flags;          /* enum graph_flags */
  uint64_t nvertices;
  uint64_t nedges;         /* entries of neighbours[] (an undirected edge counts twice) */
  uint64_t offsets_off;    /* byte offsets of the sections in the file */
  uint64_t neigh_off;
  uint64_t weights_off;    /* 0 without GRAPH_WEIGHTED */
  uint64_t file_size;
  uint64_t data_sum;       /* graph_data_sum of [GRAPH_ALIGN, file_size) */
  struct graph_gen gen;    /* what made the file */
  uint64_t header_sum;     /* XXH3-64 of the bytes of the header before this field */
};

/* Where a call that fails writes its sentence ("g.csr: truncated: ..."). */
struct graph_err {
  char msg[512];
};

/* A CSR graph in host memory: built (graph_build, the generators) or a
 * file's read-only mapping (graph_open).  Release with graph_free. */
struct graph {
  uint64_t n, m;           /* vertices, entries of neigh[] */
  uint32_t flags;          /* enum graph_flags */
  const uint64_t *offsets; /* n + 1 */
  const uint32_t *neigh;   /* m */
  const uint32_t *weights; /* m, or NULL */
  void *map;               /* the file's mapping (graph_open), else NULL */
  uint64_t map_size;
  void *own[3];            /* arrays this struct owns (built graphs) */
};

/* The layout of a graph of n vertices and m edges: fills the section
 * offsets, file_size, counts and flags of *h (nothing else). */
void graph_layout(uint64_t n, uint64_t m, uint32_t flags, struct graph_header *h);

/* Checksum of a file's data: XXH3-64 over 1 MiB pieces (several threads),
 * then over the pieces' sums.  bytes may be any length. */
uint64_t graph_data_sum(const void *data, uint64_t bytes);

/* Write g to path (into path.tmp, then renamed), with gen as its origin
 * (NULL: GRAPH_GEN_NONE).  0 or -errno with err. */
int graph_write(const struct graph *g, const struct graph_gen *gen, const char *path, struct graph_err *err);

/* Check a header read from a file of file_bytes bytes: magic, version,
 * header checksum, counts and layout, and the size (a shorter file is
 * truncated).  0, or -EINVAL (not a graph file, another version, a bad
 * layout), -EBADMSG (checksum), -EIO (truncated), with err. */
int graph_check_header(const struct graph_header *h, uint64_t file_bytes, struct graph_err *err);

/* Map the graph file at path read-only and check it (graph_check_header;
 * verify_data 1: the data checksum too).  *h (may be NULL) gets the
 * header.  0 or -errno with err; on error g holds nothing. */
int graph_open(const char *path, int verify_data, struct graph *g, struct graph_header *h, struct graph_err *err);

/* Read and check only the header of the file at path (no mapping). */
int graph_read_header(const char *path, struct graph_header *h, struct graph_err *err);

void graph_free(struct graph *g);

/* Write a printf-style sentence into err (may be NULL) and return rc: how
 * the graph code reports an error. */
int graph_errf(struct graph_err *err, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The vertex of the largest degree (the lowest id among equals): the
 * source of BFS and SSSP. */
uint32_t graph_source(const struct graph *g);

#ifdef __cplusplus
}
#endif
#endif /* GRAPHS_FORMAT_H */
