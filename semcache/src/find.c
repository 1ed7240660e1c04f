/*
 * find.c - the program's own BLAS and LAPACK routines, wherever they were
 * loaded (find.h).
 *
 * A module that loads its BLAS with dlopen(RTLD_LOCAL) (numpy's
 * extension modules do) binds its calls to the drop-in's entry points,
 * which come first in the global scope, while the BLAS itself stays in
 * the module's local scope, where dlsym(RTLD_NEXT) does not look.  A
 * handle of any loaded object searches that object and its dependencies,
 * local or global: so a name RTLD_NEXT misses is looked for through a
 * handle of each loaded object in turn (dlopen with RTLD_NOLOAD: nothing
 * new is loaded).  The handle that finds a routine is kept open, so its
 * library stays loaded while the pointer is used.
 */
#include "find.h"

#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The loaded objects' names, collected by the walk and looked in after it
 * (dlopen inside dl_iterate_phdr's callback would nest the loader's
 * locks). */
struct objs {
  char **names;
  size_t n, cap;
  int failed; /* out of memory: the names so far */
};

static int collect(struct dl_phdr_info *info, size_t size, void *arg)
{
  (void)size;
  struct objs *o = arg;
  /* "" is the program: its handle is the global scope, where the drop-in
   * itself comes first, and RTLD_NEXT has looked there already */
  if (!info->dlpi_name || !info->dlpi_name[0]) return 0;
  if (o->n == o->cap) {
    const size_t cap = o->cap ? 2 * o->cap : 64;
    char **more = realloc(o->names, cap * sizeof(*more));
    if (!more) {
      o->failed = 1;
      return 1;
    }
    o->names = more;
    o->cap = cap;
  }
  if (!(o->names[o->n] = strdup(info->dlpi_name))) {
    o->failed = 1;
    return 1;
  }
  o->n++;
  return 0;
}

/* Whether p lies in the object this code is in (a lookup that found the
 * drop-in's own entry point, not the program's routine). */
static int is_ours(void *p)
{
  Dl_info me, it;
  if (!dladdr((void *)sc_find, &me) || !dladdr(p, &it)) return 0;
  return me.dli_fbase == it.dli_fbase;
}

/* Look in each loaded object's handle, in load order. */
static void *walk(const char *name)
{
  struct objs o = {NULL, 0, 0, 0};
  dl_iterate_phdr(collect, &o);
  void *f = NULL;
  for (size_t i = 0; i < o.n; i++) {
    if (!f) {
      void *h = dlopen(o.names[i], RTLD_LAZY | RTLD_NOLOAD);
      void *g = h ? dlsym(h, name) : NULL;
      if (g && !is_ours(g)) f = g; /* h stays open: the routine's library stays loaded */
      else if (h) dlclose(h);
    }
    free(o.names[i]);
  }
  free(o.names);
  return f;
}

void *sc_find(const char *name)
{
  void *f = dlsym(RTLD_NEXT, name);
  if (!f || is_ours(f)) f = walk(name);
  (void)dlerror(); /* the failed lookups' messages are not the program's */
  return f;
}

void *sc_find_routine(const char *name)
{
  void *f = sc_find(name);
  if (f) return f;
  fprintf(stderr,
          "semcache: the BLAS/LAPACK routine %s is in no library this program has loaded "
          "(libsemcache.so runs the program's own BLAS and LAPACK; link or load one): "
          "aborting\n",
          name);
  abort();
}
