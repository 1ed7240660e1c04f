/*
 * fortran.h - the Fortran BLAS and LAPACK routines SemCache serves, as
 * every BLAS and LAPACK library exports them (trailing underscore, every
 * argument by reference, a character's length as a hidden size_t at the
 * end where a routine takes one and is called from C).  The host routines
 * (hostblas.c) call the program's; the drop-in (dropin_blas.c) defines
 * its own over them.
 */
#ifndef SEMCACHE_FORTRAN_H
#define SEMCACHE_FORTRAN_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

void dgemm_(const char *, const char *, const int *, const int *, const int *, const double *,
            const double *, const int *, const double *, const int *, const double *, double *,
            const int *);
void sgemm_(const char *, const char *, const int *, const int *, const int *, const float *,
            const float *, const int *, const float *, const int *, const float *, float *,
            const int *);
void dgemv_(const char *, const int *, const int *, const double *, const double *, const int *,
            const double *, const int *, const double *, double *, const int *);
void sgemv_(const char *, const int *, const int *, const float *, const float *, const int *,
            const float *, const int *, const float *, float *, const int *);
void daxpy_(const int *, const double *, const double *, const int *, double *, const int *);
void saxpy_(const int *, const float *, const float *, const int *, float *, const int *);
void dscal_(const int *, const double *, double *, const int *);
void sscal_(const int *, const float *, float *, const int *);
double ddot_(const int *, const double *, const int *, const double *, const int *);
float sdot_(const int *, const float *, const int *, const float *, const int *);
void dgetrf_(const int *, const int *, double *, const int *, int *, int *);
void sgetrf_(const int *, const int *, float *, const int *, int *, int *);
void dgetrs_(const char *, const int *, const int *, const double *, const int *, const int *,
             double *, const int *, int *, size_t);
void sgetrs_(const char *, const int *, const int *, const float *, const int *, const int *,
             float *, const int *, int *, size_t);
void dgesv_(const int *, const int *, double *, const int *, int *, double *, const int *, int *);
void sgesv_(const int *, const int *, float *, const int *, int *, float *, const int *, int *);

#ifdef __cplusplus
}
#endif
#endif /* SEMCACHE_FORTRAN_H */
