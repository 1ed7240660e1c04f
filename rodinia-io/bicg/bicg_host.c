/*
 * bicg_host.c - bicg's sizes, inputs, CPU reference and check (plain C;
 * the GPU side is bicg.cu and the matvec engine).
 */
#include "rodinia-io/bicg/bicg.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int bicg_setup(struct rio_run *run)
{
  const int rc = matvec_setup(run, "bicg", BICG_FULL_N, 2);
  if (rc)
    return rc;
  const uint64_t n = ((const struct matvec_state *)run->state)->n;
  matvec_input(run, "A", n * n);
  matvec_input(run, "r", n);
  matvec_input(run, "p", n);
  return 0;
}

/* q = A p and s = A^T r in double. */
int bicg_reference(struct rio_run *run)
{
  struct matvec_state *st = (struct matvec_state *)run->state;
  const uint64_t n = st->n;
  const float *a = (const float *)run->host_in[BICG_IN_A];
  const float *r = (const float *)run->host_in[BICG_IN_R];
  double *d = (double *)malloc(3 * n * sizeof(double)); /* q | r | s */
  int rc;
  if (!d)
    return rio_fail(run, -ENOMEM, "bicg: no host memory");
  for (uint64_t i = 0; i < n; i++)
    d[n + i] = r[i];
  if ((rc = matvec_ref_rows(a, n, n, (const float *)run->host_in[BICG_IN_P], d)) == 0 &&
      (rc = matvec_ref_cols(a, n, n, d + n, d + 2 * n)) == 0)
    for (uint64_t i = 0; i < n; i++) {
      st->want[i] = (float)d[i];
      st->want[n + i] = (float)d[2 * n + i];
    }
  free(d);
  return rc ? rio_fail(run, rc, "bicg: reference threads: %s", strerror(-rc)) : 0;
}

int bicg_verify(struct rio_run *run)
{
  const uint64_t n = ((const struct matvec_state *)run->state)->n;
  int rc = matvec_check(run, "q", 0, n);
  return rc ? rc : matvec_check(run, "s", n, n);
}
