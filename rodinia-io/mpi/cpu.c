/*
 * cpu.c - rodinia_mpi's cpu version of a rank's part (rio_mpi.h): pread
 * the part of the input files the units need, then the benchmark's own CPU
 * code (the reference's functions) on those rows or columns.  No MPI and
 * no CUDA: CI runs it under mpirun on machines without a GPU, and the host
 * tests run it part by part against the whole reference.
 *
 * Why the floats are the reference's bit for bit: every output element is
 * computed by the same function from the same inputs in the same order,
 * whichever part holds it (a 2dconv point from its 3x3 window, a gesummv
 * y_i from rows i of A and B summed in double in column order, a
 * pathfinder column from its window, in integers).
 */
#include "rodinia-io/mpi/rio_mpi.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "benchlib/util.h"
#include "rodinia-io/conv2d/conv2d.h"
#include "rodinia-io/gesummv/gesummv.h"
#include "rodinia-io/pathfinder/pathfinder.h"

int rio_mpi_read_rows(const char *path, uint64_t row_bytes, uint64_t first_row, uint64_t nrows, uint64_t skip,
                      uint64_t width, void *dst)
{
  const int fd = open(path, O_RDONLY);
  int rc = 0;
  if (fd < 0)
    return -errno;
  if (width == row_bytes) /* whole rows follow each other in the file: one read */
    rc = bench_pio_full(fd, dst, nrows * width, first_row * row_bytes, 0);
  for (uint64_t r = 0; width != row_bytes && r < nrows && !rc; r++)
    rc = bench_pio_full(fd, (uint8_t *)dst + r * width, width, (first_row + r) * row_bytes + skip, 0);
  close(fd);
  return rc;
}

/* Input i's rows (or row windows) into a new buffer *buf.  0 or -errno
 * with run->why naming the file. */
static int rio_mpi_load(struct rio_run *run, int i, uint64_t row_bytes, uint64_t first_row, uint64_t nrows,
                        uint64_t skip, uint64_t width, void **buf)
{
  *buf = malloc(nrows * width);
  if (!*buf)
    return rio_fail(run, -ENOMEM, "%s: no host memory for %llu bytes of %s", run->bench->name,
                    (unsigned long long)(nrows * width), run->in[i].name);
  const int rc = rio_mpi_read_rows(run->in[i].path, row_bytes, first_row, nrows, skip, width, *buf);
  return rc ? rio_fail(run, rc, "%s: reading %s: %s", run->bench->name, run->in[i].path, strerror(-rc)) : 0;
}

/* 2dconv: bands [u0, u1) are rows [y0, y1) of b; they need rows y0 - 1 ..
 * y1 of a where those exist. */
static int rio_mpi_cpu_conv2d(struct rio_run *run, uint64_t u0, uint64_t u1, float *out)
{
  const uint64_t n = ((const struct conv2d_state *)run->state)->n, row = n * sizeof(float);
  const uint64_t y0 = u0 * CONV2D_BAND, y1 = u1 * CONV2D_BAND;
  const uint64_t a0 = y0 ? y0 - 1 : 0, a1 = y1 < n ? y1 + 1 : n;
  void *a = NULL;
  int rc = rio_mpi_load(run, 0, row, a0, a1 - a0, 0, row, &a);
  if (!rc && (rc = conv2d_cpu_rows((const float *)a, a0, out, y0, y1, n)) != 0)
    rio_fail(run, rc, "2dconv: host threads: %s", strerror(-rc));
  free(a);
  return rc;
}

/* gesummv: rows [u0, u1) of A and B, and x. */
static int rio_mpi_cpu_gesummv(struct rio_run *run, uint64_t u0, uint64_t u1, float *out)
{
  const uint64_t n = ((const struct matvec_state *)run->state)->n, row = n * sizeof(float);
  void *a = NULL, *b = NULL, *x = NULL;
  int rc;
  if ((rc = rio_mpi_load(run, GESUMMV_IN_A, row, u0, u1 - u0, 0, row, &a)) == 0 &&
      (rc = rio_mpi_load(run, GESUMMV_IN_B, row, u0, u1 - u0, 0, row, &b)) == 0 &&
      (rc = rio_mpi_load(run, GESUMMV_IN_X, row, 0, 1, 0, row, &x)) == 0 &&
      (rc = gesummv_cpu_rows((const float *)a, (const float *)b, (const float *)x, n, u1 - u0, out)) != 0)
    rio_fail(run, rc, "gesummv: host threads: %s", strerror(-rc));
  free(a);
  free(b);
  free(x);
  return rc;
}

/* pathfinder: each host thread takes a slice of the rank's columns and
 * computes it from the slice's own window, inside the rank's. */
struct rio_mpi_pf {
  const struct pathfinder_state *st;
  const int32_t *first, *wall; /* the rank's window, from column b_lo */
  uint64_t b_lo, width, lo;
  int32_t *out;
};

static int rio_mpi_pf_slice(void *arg, uint64_t lo, uint64_t hi)
{
  const struct rio_mpi_pf *p = (const struct rio_mpi_pf *)arg;
  uint64_t s_lo, s_hi;
  pathfinder_window(p->st->cols, p->st->rows, p->lo + lo, p->lo + hi, &s_lo, &s_hi);
  const uint64_t x = s_lo - p->b_lo;
  return pathfinder_last_columns(p->first + x, p->wall + x, p->width, p->st->cols, p->st->rows, p->lo + lo,
                                 p->lo + hi, p->out + lo);
}

static int rio_mpi_cpu_pathfinder(struct rio_run *run, uint64_t u0, uint64_t u1, int32_t *out)
{
  const struct pathfinder_state *st = (const struct pathfinder_state *)run->state;
  const uint64_t row = st->cols * sizeof(int32_t);
  uint64_t b_lo, b_hi;
  void *first = NULL, *wall = NULL;
  pathfinder_window(st->cols, st->rows, u0, u1, &b_lo, &b_hi);
  const uint64_t width = b_hi - b_lo, skip = b_lo * sizeof(int32_t), wb = width * sizeof(int32_t);
  int rc;
  if ((rc = rio_mpi_load(run, PATHFINDER_IN_FIRST, row, 0, 1, skip, wb, &first)) == 0 &&
      (rc = rio_mpi_load(run, PATHFINDER_IN_WALL, row, 0, st->rows - 1, skip, wb, &wall)) == 0) {
    struct rio_mpi_pf p = {st, (const int32_t *)first, (const int32_t *)wall, b_lo, width, u0, out};
    if ((rc = rio_parallel_for(u1 - u0, rio_mpi_pf_slice, &p)) != 0)
      rio_fail(run, rc, "pathfinder: host threads: %s", strerror(-rc));
  }
  free(first);
  free(wall);
  return rc;
}

int rio_mpi_cpu_part(enum rio_mpi_bench b, struct rio_run *run, uint64_t u0, uint64_t u1, void *out)
{
  if (u0 >= u1)
    return 0;
  switch (b) {
  case RIO_MPI_2DCONV:
    return rio_mpi_cpu_conv2d(run, u0, u1, (float *)out);
  case RIO_MPI_GESUMMV:
    return rio_mpi_cpu_gesummv(run, u0, u1, (float *)out);
  default:
    return rio_mpi_cpu_pathfinder(run, u0, u1, (int32_t *)out);
  }
}
