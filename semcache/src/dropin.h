/*
 * dropin.h - inside libsemcache.so: the process's cache and calls
 * (dropin.c) as the entry points (dropin_blas.c) use them.
 */
#ifndef SEMCACHE_DROPIN_H
#define SEMCACHE_DROPIN_H

#include "blas.h"
#include "find.h"

extern struct sc_blas sc_g_blas;

/* Whether the cache serves the calls (started at the first call; when it
 * could not start, every call goes to the program's BLAS). */
int sc_on(void);

/* The process's cache once it runs, else NULL; starts nothing (safe from
 * the I/O interposers, which the start itself may call). */
struct sc_cache *sc_live_cache(void);

/* Set while a host routine runs (hostblas.c): the BLAS calls it makes
 * itself pass through.  initial-exec: no allocation on first use. */
extern __thread int sc_in_host __attribute__((tls_model("initial-exec")));

/* Whether an entry point passes the call to the program's routine: inside
 * a host routine, or when the cache is off. */
#define SC_PASS() (sc_in_host || !sc_on())

/* An entry point's alpha or beta (float or double) as the double the
 * calls take (blas.h's sc_widen for a float). */
static inline double sc_widen_d(double d)
{
  return d;
}
#define SC_WIDEN(x) _Generic((x), float: sc_widen, default: sc_widen_d)(x)

/* The program's symbol `name` (its BLAS or LAPACK, however loaded:
 * find.h), or NULL where no library has it. */
void *sc_next(const char *name);

/* The program's routine of the same type as ours, looked up once per call
 * site; one that no library has ends the program with a message naming
 * it (find.h's SC_ROUTINE), never a call to address 0. */
#define SC_NEXT(fn) SC_ROUTINE(fn)

/* Bad arguments: the reference BLAS's report, through the next library's
 * xerbla_ (Fortran name such as "DGEMM ", parameter number) or
 * cblas_xerbla; for a program whose BLAS lacks the routine itself. */
void sc_fortran_error(const char *name, int info);
void sc_cblas_error(int pos, const char *rout);

/* A call with a bad argument: the program's own routine fn with the call's
 * arguments, which reports it as the program's BLAS does (the reference
 * prints and ends the program; OpenBLAS prints and returns); `report`
 * where the next library has no fn. */
#define SC_BAD_ARGS(fn, report, ...)                                                        \
  do {                                                                                     \
    __typeof__(&fn) next_ = (__typeof__(&fn))sc_next(#fn);                                 \
    if (next_) next_(__VA_ARGS__);                                                         \
    else report;                                                                           \
  } while (0)

#endif /* SEMCACHE_DROPIN_H */
