/*
 * blas_ops.h - inside SemCache's calls (blas.c, gesv.c): a call's operands
 * and taking and giving back their device copies.
 */
#ifndef SEMCACHE_BLAS_OPS_H
#define SEMCACHE_BLAS_OPS_H

#include "blas.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One operand: its host range, how the call uses it, its device copy, and
 * whether that is a copy for this call only (sc_take sets it: SC_NO_CACHE,
 * or an operand on a thread's stack, which is never cached). */
struct sc_op {
  const void *host;
  size_t bytes;
  enum sc_use use;
  void *dev;
  int copied;
};

size_t sc_esize(enum sc_prec p);

/* Bytes from a column-major matrix's first element to its last. */
size_t sc_mat_bytes(enum sc_prec p, int rows, int cols, int ld);

/* Whether the device runs: 1, or 0 when s's start hook could not start
 * it (blas.h; the call runs on the host).  Any thread. */
int sc_device_up(struct sc_blas *s);

/* Whether a call of routine r, size `work` (blas.h's sc_below_crossover),
 * operands ops[0..n), runs on the host BLAS: below its crossover, and no
 * operand it reads held valid on the device.  When it does (1), the
 * operands' host bytes are made current (sc_host_access) and the call is
 * counted in small_calls; the caller runs the host routine on them. */
int sc_small(struct sc_blas *s, enum sc_routine r, enum sc_prec p, uint64_t work,
             const struct sc_op *ops, int n);

/* Take the device copies of ops[0..n) (operands on a stack copied for the
 * call, never cached; stacks.h): 1 when the call must run on the
 * host instead (an output overlaps another operand, no room, or the
 * device did not start: sc_device_up), 0 when
 * every one is held, or a backend error (nothing held). */
int sc_take(struct sc_blas *s, struct sc_op *ops, int n);

/* Give them back after the routine ran (rc its result): outputs by the
 * protocol (SC_NO_CACHE: copied back, every buffer freed); after a failed
 * routine the outputs' device copies are dropped (the host keeps its
 * bytes).  rc, or the first error giving back; a success is counted. */
int sc_give(struct sc_blas *s, struct sc_op *ops, int n, int rc);

/* Count a call run on the host BLAS. */
void sc_count_host(struct sc_blas *s);

#ifdef __cplusplus
}
#endif
#endif /* SEMCACHE_BLAS_OPS_H */
