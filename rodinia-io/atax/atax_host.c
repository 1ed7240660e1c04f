/*
 * atax_host.c - atax's sizes, inputs, CPU reference and check (plain C;
 * the GPU side is atax.cu and the matvec engine).
 */
#include "rodinia-io/atax/atax.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int atax_setup(struct rio_run *run)
{
  const int rc = matvec_setup(run, "atax", ATAX_FULL_N, 2);
  if (rc)
    return rc;
  const uint64_t n = ((const struct matvec_state *)run->state)->n;
  matvec_input(run, "A", n * n);
  matvec_input(run, "x", n);
  return 0;
}

/* tmp = A x, then y = A^T tmp with tmp kept in double. */
int atax_reference(struct rio_run *run)
{
  struct matvec_state *st = (struct matvec_state *)run->state;
  const uint64_t n = st->n;
  const float *a = (const float *)run->host_in[ATAX_IN_A];
  double *d = (double *)malloc(2 * n * sizeof(double)); /* tmp | y */
  int rc;
  if (!d)
    return rio_fail(run, -ENOMEM, "atax: no host memory");
  if ((rc = matvec_ref_rows(a, n, n, (const float *)run->host_in[ATAX_IN_X], d)) == 0 &&
      (rc = matvec_ref_cols(a, n, n, d, d + n)) == 0)
    for (uint64_t i = 0; i < 2 * n; i++)
      st->want[i] = (float)d[i];
  free(d);
  return rc ? rio_fail(run, rc, "atax: reference threads: %s", strerror(-rc)) : 0;
}

int atax_verify(struct rio_run *run)
{
  const uint64_t n = ((const struct matvec_state *)run->state)->n;
  int rc = matvec_check(run, "tmp", 0, n);
  return rc ? rc : matvec_check(run, "y", n, n);
}
