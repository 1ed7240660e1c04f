/*
 * dlopen.c - a program without a BLAS of its own that loads one later, as
 * Python does numpy's: under libsemcache.so (LD_PRELOAD) the drop-in must
 * find the routines wherever they were loaded (make test-semcache,
 * semcache/tests/loaders_test.sh).  Built without -lblas.
 *
 *   dlopen MODULE local | global [early]   dlopen MODULE (local_blas.c)
 *       with RTLD_LOCAL or RTLD_GLOBAL and run its calls; prints
 *       "dlopen: ok" and exits 0, or the failures and exits 1.  early:
 *       first start the drop-in with a cblas_ddot of no elements (where
 *       the cache serves calls: passed on to the program's BLAS, there is
 *       none yet to pass it to)
 *   dlopen MODULE missing   a ddot_ of three elements before any BLAS is
 *       loaded: the drop-in has no routine to run it on, and must end the
 *       program with a message naming it (never a jump to address 0)
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef double (*cblas_ddot_fn)(int, const double *, int, const double *, int);
typedef double (*ddot_fn)(const int *, const double *, const int *, const double *, const int *);

int main(int argc, char **argv)
{
  if (argc < 3 || argc > 4) {
    fprintf(stderr, "usage: %s MODULE local|global|missing [early]\n", argv[0]);
    return 2;
  }
  const double x[3] = {1, 2, 3};
  if (strcmp(argv[2], "missing") == 0) {
    ddot_fn ddot = (ddot_fn)dlsym(RTLD_DEFAULT, "ddot_");
    if (!ddot) {
      printf("dlopen: no ddot_ in the process (run it under libsemcache.so)\n");
      return 1;
    }
    const int n = 3, one = 1;
    printf("dlopen: ddot_ returned %g\n", ddot(&n, x, &one, x, &one));
    return 1; /* it must not return */
  }
  /* the drop-in starts before the BLAS is loaded */
  cblas_ddot_fn early = (cblas_ddot_fn)dlsym(RTLD_DEFAULT, "cblas_ddot");
  if (early && argc == 4 && strcmp(argv[3], "early") == 0) early(0, x, 1, x, 1);
  const int global = strcmp(argv[2], "global") == 0;
  void *h = dlopen(argv[1], RTLD_NOW | (global ? RTLD_GLOBAL : RTLD_LOCAL));
  if (!h) {
    printf("dlopen: %s\n", dlerror());
    return 1;
  }
  int (*run)(void) = (int (*)(void))dlsym(h, "local_blas_run");
  const int wrong = run ? run() : -1;
  if (wrong) {
    printf("dlopen: %s: %d wrong results\n", argv[2], wrong);
    return 1;
  }
  printf("dlopen: ok\n");
  return 0;
}
