/*
 * gesummv_host.c - gesummv's sizes, inputs, CPU reference and check (plain
 * C; the GPU side is gesummv.cu and the matvec engine).
 */
#include "rodinia-io/gesummv/gesummv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int gesummv_setup(struct rio_run *run)
{
  const int rc = matvec_setup(run, "gesummv", GESUMMV_FULL_N, 1);
  if (rc)
    return rc;
  const uint64_t n = ((const struct matvec_state *)run->state)->n;
  matvec_input(run, "A", n * n);
  matvec_input(run, "B", n * n);
  matvec_input(run, "x", n);
  return 0;
}

int gesummv_cpu_rows(const float *a, const float *b, const float *x, uint64_t n, uint64_t rows, float *y)
{
  double *d = (double *)malloc(2 * rows * sizeof(double));
  int rc;
  if (!d)
    return -ENOMEM;
  if ((rc = matvec_ref_rows(a, rows, n, x, d)) == 0 && (rc = matvec_ref_rows(b, rows, n, x, d + rows)) == 0)
    for (uint64_t i = 0; i < rows; i++)
      y[i] = (float)((double)GESUMMV_ALPHA * d[i] + (double)GESUMMV_BETA * d[rows + i]);
  free(d);
  return rc;
}

/* y_i = alpha (A x)_i + beta (B x)_i, the products in double. */
int gesummv_reference(struct rio_run *run)
{
  struct matvec_state *st = (struct matvec_state *)run->state;
  const int rc = gesummv_cpu_rows((const float *)run->host_in[GESUMMV_IN_A], (const float *)run->host_in[GESUMMV_IN_B],
                                  (const float *)run->host_in[GESUMMV_IN_X], st->n, st->n, st->want);
  if (rc == -ENOMEM)
    return rio_fail(run, rc, "gesummv: no host memory");
  return rc ? rio_fail(run, rc, "gesummv: reference threads: %s", strerror(-rc)) : 0;
}

int gesummv_verify(struct rio_run *run)
{
  return matvec_check(run, "y", 0, ((const struct matvec_state *)run->state)->n);
}
