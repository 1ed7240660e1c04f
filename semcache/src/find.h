/*
 * find.h - the program's own BLAS and LAPACK routines, however they were
 * loaded (find.c): the routines the drop-in passes calls to and runs its
 * host "device" and host fallback on.
 *
 * dlsym(RTLD_NEXT) alone finds only libraries in the global scope after
 * the drop-in: a BLAS that a module brought in with dlopen(RTLD_LOCAL)
 * (numpy's, Python's extension modules) is not there, although the
 * module's own calls bind to the drop-in's entry points first.  So a name
 * RTLD_NEXT does not find is looked for in every loaded object, and a
 * name found nowhere is retried at the next call (a BLAS loaded later).
 */
#ifndef SEMCACHE_FIND_H
#define SEMCACHE_FIND_H

#ifdef __cplusplus
extern "C" {
#endif

/* The routine `name` of a library other than the one this code is in:
 * dlsym(RTLD_NEXT), else the first loaded object, in load order, whose
 * handle finds it (the object or its dependencies, loaded with
 * RTLD_LOCAL or RTLD_GLOBAL).  NULL when none has it.  Not from a signal
 * handler (the walk allocates and takes the loader's locks). */
void *sc_find(const char *name);

/* sc_find, or, when no library has the routine, a message naming it on
 * stderr and abort(): never a call to address 0. */
void *sc_find_routine(const char *name);

/* The routine fn (a declared function: its type is the pointer's) as
 * sc_find_routine finds it, looked up at a call site's first use and kept
 * (a relaxed pointer: a racing second lookup finds the same address). */
#define SC_ROUTINE(fn)                                                                     \
  ({                                                                                       \
    static void *p_;                                                                       \
    void *q_ = __atomic_load_n(&p_, __ATOMIC_RELAXED);                                     \
    if (!q_) __atomic_store_n(&p_, q_ = sc_find_routine(#fn), __ATOMIC_RELAXED);           \
    (__typeof__(&fn))q_;                                                                   \
  })

#ifdef __cplusplus
}
#endif
#endif /* SEMCACHE_FIND_H */
