/*
 * check.c - comparing a version's result with the CPU reference: exact for
 * integers, within a tolerance for floats; the first difference is named.
 */
#include "rodinia-io/harness/rio.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

/* "[i]" or "[row r, col c]" for element i of a matrix with `cols` columns. */
static void rio_where(char *buf, size_t len, uint64_t i, uint64_t cols)
{
  if (cols)
    snprintf(buf, len, "[row %" PRIu64 ", col %" PRIu64 "]", i / cols, i % cols);
  else
    snprintf(buf, len, "[%" PRIu64 "]", i);
}

#define RIO_CHECK_EXACT(run, what, got, want, n, cols, fmt, cast)                                  \
  do {                                                                                             \
    uint64_t bad_ = 0, first_ = 0;                                                                 \
    for (uint64_t i_ = 0; i_ < (n); i_++) {                                                        \
      if ((got)[i_] != (want)[i_]) {                                                               \
        if (bad_++ == 0)                                                                           \
          first_ = i_;                                                                             \
      }                                                                                            \
    }                                                                                              \
    if (bad_) {                                                                                    \
      char w_[64];                                                                                 \
      rio_where(w_, sizeof(w_), first_, (cols));                                                   \
      return rio_fail((run), -EBADMSG, "%s%s = " fmt ", expected " fmt " (%" PRIu64 " of %" PRIu64 \
                      " differ)",                                                                  \
                      (what), w_, (cast)(got)[first_], (cast)(want)[first_], bad_, (uint64_t)(n)); \
    }                                                                                              \
    return 0;                                                                                      \
  } while (0)

int rio_check_i32(struct rio_run *run, const char *what, const int32_t *got, const int32_t *want,
                  uint64_t n, uint64_t cols)
{
  RIO_CHECK_EXACT(run, what, got, want, n, cols, "%d", int);
}

int rio_check_i16(struct rio_run *run, const char *what, const int16_t *got, const int16_t *want,
                  uint64_t n, uint64_t cols)
{
  RIO_CHECK_EXACT(run, what, got, want, n, cols, "%d", int);
}

int rio_check_i64(struct rio_run *run, const char *what, const int64_t *got, const int64_t *want,
                  uint64_t n, uint64_t cols)
{
  RIO_CHECK_EXACT(run, what, got, want, n, cols, "%lld", long long);
}

int rio_check_f32(struct rio_run *run, const char *what, const float *got, const float *want,
                  uint64_t n, uint64_t cols, double rtol, double atol)
{
  uint64_t bad = 0, first = 0;
  double worst = 0;
  for (uint64_t i = 0; i < n; i++) {
    const double g = got[i], w = want[i];
    const double err = fabs(g - w);
    /* NaN fails too: !(err <= tol) */
    if (!(err <= atol + rtol * fabs(w))) {
      if (bad++ == 0)
        first = i;
      if (err > worst || isnan(err))
        worst = err;
    }
  }
  if (bad) {
    char w[64];
    rio_where(w, sizeof(w), first, cols);
    return rio_fail(run, -EBADMSG,
                    "%s%s = %.9g, expected %.9g (tolerance %.3g + %.3g * |expected|; %" PRIu64
                    " of %" PRIu64 " differ, worst by %.3g)",
                    what, w, (double)got[first], (double)want[first], atol, rtol, bad, n, worst);
  }
  return 0;
}
