/*
 * mvt_host.c - mvt's sizes, inputs, CPU reference and check (plain C; the
 * GPU side is mvt.cu and the matvec engine).
 */
#include "rodinia-io/mvt/mvt.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int mvt_setup(struct rio_run *run)
{
  const int rc = matvec_setup(run, "mvt", MVT_FULL_N, 2);
  if (rc)
    return rc;
  const uint64_t n = ((const struct matvec_state *)run->state)->n;
  matvec_input(run, "A", n * n);
  matvec_input(run, "y", 2 * n);
  matvec_input(run, "x", 2 * n);
  return 0;
}

/* x1 + A y1 and x2 + A^T y2, the products in double. */
int mvt_reference(struct rio_run *run)
{
  struct matvec_state *st = (struct matvec_state *)run->state;
  const uint64_t n = st->n;
  const float *a = (const float *)run->host_in[MVT_IN_A];
  const float *y = (const float *)run->host_in[MVT_IN_Y];
  const float *x = (const float *)run->host_in[MVT_IN_X];
  double *d = (double *)malloc(3 * n * sizeof(double)); /* A y1 | y2 | A^T y2 */
  int rc;
  if (!d)
    return rio_fail(run, -ENOMEM, "mvt: no host memory");
  for (uint64_t i = 0; i < n; i++)
    d[n + i] = y[n + i];
  if ((rc = matvec_ref_rows(a, n, n, y, d)) == 0 && (rc = matvec_ref_cols(a, n, n, d + n, d + 2 * n)) == 0)
    for (uint64_t i = 0; i < n; i++) {
      st->want[i] = (float)((double)x[i] + d[i]);
      st->want[n + i] = (float)((double)x[n + i] + d[2 * n + i]);
    }
  free(d);
  return rc ? rio_fail(run, rc, "mvt: reference threads: %s", strerror(-rc)) : 0;
}

int mvt_verify(struct rio_run *run)
{
  const uint64_t n = ((const struct matvec_state *)run->state)->n;
  int rc = matvec_check(run, "x1", 0, n);
  return rc ? rc : matvec_check(run, "x2", n, n);
}
