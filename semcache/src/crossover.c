/*
 * crossover.c - the size below which a call stays on the host BLAS
 * (blas.h, struct sc_crossover): the drop-in's defaults and
 * SEMCACHE_CROSSOVER's parser.
 *
 * A call to the GPU costs tens of microseconds before its routine runs
 * (operands looked up, the stream drained, outputs' edges brought back),
 * and its operands cross PCIe when the device has no valid copy; the
 * program's BLAS runs a small call in less.  Real programs are full of
 * small calls (LAPACK's unblocked inner loops, vector updates), so a
 * drop-in that offloads them all is slower than the BLAS it replaces.
 */
#include "blas.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A crossover no size reaches: the routine stays on the host unless its
 * operands are on the device (SEMCACHE_CROSSOVER's "never"). */
#define SC_NEVER UINT32_MAX

static const char *const names[SC_NROUTINES] = {"gemm", "gemv", "axpy", "scal", "dot", "gesv"};

void sc_crossover_defaults(struct sc_crossover *x)
{
  /* {double, float}: semcache/bench/calls.py on an H200 against the
   * machine's OpenBLAS (16 cores), operands sent with each call: the
   * smallest n from which the GPU was faster up to the ladder's end
   * (docs/results/2026-11-29-semcache.md).  Level 1 and 2 never were:
   * their operands cross PCIe slower than the host's memory serves them */
  static const uint32_t def[SC_NROUTINES][2] = {
      {256, 384},            /* gemm: m n k against n^3 */
      {SC_NEVER, SC_NEVER},  /* gemv */
      {SC_NEVER, SC_NEVER},  /* axpy */
      {SC_NEVER, SC_NEVER},  /* scal */
      {SC_NEVER, SC_NEVER},  /* dot */
      {128, 256},            /* gesv: the order */
  };
  memcpy(x->n, def, sizeof(def));
}

/* The routine called name, or -1. */
static int routine_of(const char *name)
{
  for (int r = 0; r < SC_NROUTINES; r++)
    if (strcmp(name, names[r]) == 0) return r;
  return -1;
}

/* One name=n entry (or a bare n: every routine) of len bytes at e into x:
 * 0 or -EINVAL. */
static int parse_entry(struct sc_crossover *x, const char *e, size_t len)
{
  char buf[32];
  if (len == 0 || len >= sizeof(buf)) return -EINVAL;
  memcpy(buf, e, len);
  buf[len] = 0;
  char *eq = strchr(buf, '='), *end = NULL;
  const char *num = eq ? eq + 1 : buf;
  const int never = strcmp(num, "never") == 0;
  const unsigned long v = never ? SC_NEVER : strtoul(num, &end, 0);
  if (!never && (end == num || *end || num[0] == '-' || v >= SC_NEVER)) return -EINVAL;
  int r = -1, lo = SC_F64, hi = SC_F32; /* routines [r or all], precisions [lo, hi] */
  if (eq) {
    *eq = 0;
    if ((r = routine_of(buf)) < 0 && (buf[0] == 'd' || buf[0] == 's') &&
        (r = routine_of(buf + 1)) >= 0)
      lo = hi = buf[0] == 'd' ? SC_F64 : SC_F32;
    if (r < 0) return -EINVAL;
  }
  for (int i = 0; i < SC_NROUTINES; i++)
    for (int p = lo; p <= hi; p++)
      if (r < 0 || i == r) x->n[i][p] = (uint32_t)v;
  return 0;
}

int sc_crossover_parse(struct sc_crossover *x, const char *text, char *bad, size_t badlen)
{
  int rc = 0;
  size_t used = 0;
  if (badlen) bad[0] = 0;
  for (const char *e = text; e && *e;) {
    const char *comma = strchr(e, ',');
    const size_t len = comma ? (size_t)(comma - e) : strlen(e);
    if (parse_entry(x, e, len) != 0) {
      rc = -EINVAL;
      if (used < badlen)
        used += (size_t)snprintf(bad + used, badlen - used, "%s%.*s", used ? "," : "", (int)len, e);
    }
    e = comma ? comma + 1 : NULL;
  }
  return rc;
}

int sc_below_crossover(const struct sc_crossover *x, enum sc_routine r, enum sc_prec p,
                       uint64_t work)
{
  const uint64_t n = x->n[r][p];
  if (n == SC_NEVER) return 1;
  /* n^3 and n^2 saturate: past 2^21 every call is below */
  const uint64_t bound = r == SC_R_GEMM ? (n < (1u << 21) ? n * n * n : UINT64_MAX)
                         : r == SC_R_GEMV ? n * n
                                          : n;
  return work < bound;
}
