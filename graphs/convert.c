/*
 * convert.c - the text edge list and MatrixMarket readers (convert.h).
 */
#include "graphs/convert.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Split line into at most max fields (blanks and commas); returns how many,
 * max + 1 when there are more. */
static int graph_fields(char *line, char **f, int max)
{
  int n = 0;
  for (char *save = NULL, *t = strtok_r(line, " \t\r\n,", &save); t; t = strtok_r(NULL, " \t\r\n,", &save)) {
    if (n == max)
      return max + 1;
    f[n++] = t;
  }
  return n;
}

/* A decimal integer in [lo, hi], the whole field. */
static int graph_number(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
  char *end;
  if (!isdigit((unsigned char)s[0]))
    return -EINVAL;
  errno = 0;
  const unsigned long long v = strtoull(s, &end, 10);
  if (errno || *end || v < lo || v > hi)
    return -EINVAL;
  *out = v;
  return 0;
}

/* An MM real weight: finite, >= 0, rounded; at most UINT32_MAX. */
static int graph_real_weight(const char *s, uint64_t *out)
{
  char *end;
  errno = 0;
  const double x = strtod(s, &end);
  if (errno || *end || !isfinite(x) || x < 0 || x > 4294967295.0)
    return -EINVAL;
  *out = (uint64_t)llround(x);
  return 0;
}

static int graph_add(struct graph_edges *e, uint64_t u, uint64_t v, uint64_t w)
{
  if (u + 1 > e->n)
    e->n = u + 1;
  if (v + 1 > e->n)
    e->n = v + 1;
  return graph_edges_push(e, (uint32_t)u, (uint32_t)v, (uint32_t)w);
}

int graph_read_text(FILE *f, const struct graph_read_opts *opts, struct graph_edges *e,
                    struct graph_read_info *info, struct graph_err *err)
{
  char *line = NULL, *fl[4];
  size_t cap = 0;
  int nf = 0, rc = 0;
  uint64_t lineno = 0;
  const uint64_t base = opts && opts->one_based ? 1 : 0;
  memset(info, 0, sizeof(*info));
  if (graph_edges_alloc(e, 0, 1024, 1) != 0)
    return graph_errf(err, -ENOMEM, "no memory");
  while (getline(&line, &cap, f) > 0) {
    lineno++;
    if (line[0] == '#' || line[0] == '%')
      continue;
    const int k = graph_fields(line, fl, 3);
    if (k == 0)
      continue;
    if (nf == 0)
      nf = k;
    uint64_t u, v, w = 0;
    if (k != nf || k < 2 || k > 3) {
      rc = graph_errf(err, -EINVAL, "line %" PRIu64 ": %d fields, want %s", lineno, k,
                      nf == 2 || nf == 3 ? (nf == 2 ? "2 (u v), as the first edge" : "3 (u v w), as the first edge")
                                         : "2 (u v) or 3 (u v w)");
      break;
    }
    if (graph_number(fl[0], base, GRAPH_MAX_VERTICES - 1 + base, &u) ||
        graph_number(fl[1], base, GRAPH_MAX_VERTICES - 1 + base, &v) ||
        (k == 3 && graph_number(fl[2], 0, UINT32_MAX, &w))) {
      rc = graph_errf(err, -EINVAL, "line %" PRIu64 ": not %s ids%s", lineno,
                      base ? "1-based" : "0-based", k == 3 ? " and a weight 0..2^32-1" : "");
      break;
    }
    if ((rc = graph_add(e, u - base, v - base, w)) != 0) {
      rc = graph_errf(err, rc, "line %" PRIu64 ": no memory", lineno);
      break;
    }
  }
  free(line);
  info->weighted = nf == 3;
  if (!rc && !info->weighted) {
    free(e->w);
    e->w = NULL;
  }
  if (rc)
    graph_edges_free(e);
  return rc;
}

/* A MatrixMarket file being read: the line, its number, and what the
 * banner and the size line said. */
struct graph_mtx {
  FILE *f;
  char *line;
  size_t cap;
  uint64_t lineno;
  int field;         /* 0 pattern, 1 integer, 2 real */
  uint64_t dims[3];  /* rows, cols, entries */
};

/* The next line that is neither a comment nor empty, split into fields
 * (at most max): how many, or -1 at the end of the file. */
static int graph_mtx_next(struct graph_mtx *m, char **fl, int max)
{
  while (getline(&m->line, &m->cap, m->f) > 0) {
    m->lineno++;
    if (m->line[0] == '%')
      continue;
    const int k = graph_fields(m->line, fl, max);
    if (k)
      return k;
  }
  return -1;
}

/* The banner and the size line. */
static int graph_mtx_head(struct graph_mtx *m, struct graph_read_info *info, struct graph_err *err)
{
  char *fl[6];
  if (getline(&m->line, &m->cap, m->f) <= 0 || strncmp(m->line, "%%MatrixMarket", 14) != 0)
    return graph_errf(err, -EINVAL, "line 1: no %%%%MatrixMarket banner");
  m->lineno = 1;
  if (graph_fields(m->line, fl, 5) != 5 || strcasecmp(fl[1], "matrix") || strcasecmp(fl[2], "coordinate"))
    return graph_errf(err, -EINVAL, "line 1: not \"%%%%MatrixMarket matrix coordinate FIELD SYMMETRY\"");
  m->field = !strcasecmp(fl[3], "pattern") ? 0 : !strcasecmp(fl[3], "integer") ? 1 : !strcasecmp(fl[3], "real") ? 2 : -1;
  if (m->field < 0)
    return graph_errf(err, -EINVAL, "line 1: field '%s': pattern, integer or real", fl[3]);
  if (strcasecmp(fl[4], "general") && strcasecmp(fl[4], "symmetric"))
    return graph_errf(err, -EINVAL, "line 1: symmetry '%s': general or symmetric", fl[4]);
  info->weighted = m->field != 0;
  info->symmetric = !strcasecmp(fl[4], "symmetric");
  const int k = graph_mtx_next(m, fl, 3);
  if (k < 0)
    return graph_errf(err, -EINVAL, "line %" PRIu64 ": the file ends before \"rows cols entries\"", m->lineno);
  if (k != 3 || graph_number(fl[0], 0, GRAPH_MAX_VERTICES, &m->dims[0]) ||
      graph_number(fl[1], 0, GRAPH_MAX_VERTICES, &m->dims[1]) || graph_number(fl[2], 0, 1ull << 40, &m->dims[2]))
    return graph_errf(err, -EINVAL, "line %" PRIu64 ": not \"rows cols entries\"", m->lineno);
  return 0;
}

/* One entry line (k fields in fl) into e. */
static int graph_mtx_entry(const struct graph_mtx *m, char **fl, int k, struct graph_edges *e, struct graph_err *err)
{
  uint64_t i, j, w = 0;
  if (k != (m->field ? 3 : 2) || graph_number(fl[0], 1, m->dims[0], &i) || graph_number(fl[1], 1, m->dims[1], &j) ||
      (m->field == 1 && graph_number(fl[2], 0, UINT32_MAX, &w)) || (m->field == 2 && graph_real_weight(fl[2], &w)))
    return graph_errf(err, -EINVAL, "line %" PRIu64 ": not \"i j%s\" within %" PRIu64 " x %" PRIu64, m->lineno,
                      m->field ? " value (>= 0)" : "", m->dims[0], m->dims[1]);
  if (e->m == m->dims[2])
    return graph_errf(err, -EINVAL, "line %" PRIu64 ": more than the %" PRIu64 " entries announced", m->lineno,
                      m->dims[2]);
  if (graph_edges_push(e, (uint32_t)(i - 1), (uint32_t)(j - 1), (uint32_t)w) != 0)
    return graph_errf(err, -ENOMEM, "line %" PRIu64 ": no memory", m->lineno);
  return 0;
}

int graph_read_mtx(FILE *f, struct graph_edges *e, struct graph_read_info *info, struct graph_err *err)
{
  struct graph_mtx m;
  char *fl[4];
  memset(&m, 0, sizeof(m));
  m.f = f;
  memset(info, 0, sizeof(*info));
  memset(e, 0, sizeof(*e));
  int rc = graph_mtx_head(&m, info, err), k;
  const uint64_t n = m.dims[0] > m.dims[1] ? m.dims[0] : m.dims[1];
  if (!rc && graph_edges_alloc(e, n, m.dims[2] ? m.dims[2] : 1, m.field != 0))
    rc = graph_errf(err, -ENOMEM, "no memory for %" PRIu64 " entries", m.dims[2]);
  while (!rc && (k = graph_mtx_next(&m, fl, 3)) > 0)
    rc = graph_mtx_entry(&m, fl, k, e, err);
  if (!rc && e->m < m.dims[2])
    rc = graph_errf(err, -EINVAL, "%" PRIu64 " entries of the %" PRIu64 " announced: truncated", e->m, m.dims[2]);
  free(m.line);
  if (rc)
    graph_edges_free(e);
  return rc;
}
