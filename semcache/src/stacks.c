/*
 * stacks.c - threads' stacks in SemCache's calls (stacks.h): the stacks
 * operands may lie on, and an alternate signal stack per calling thread.
 *
 * A thread's stack is known from pthread_getattr_np, at its first call;
 * the main thread's from /proc/self/maps ("[stack]", with the room its
 * rlimit lets it grow into), so that another thread passing an array on
 * main's stack is caught even before main makes a call.  Threads that
 * made calls are noted in a fixed table, cleared at their exit (a
 * thread-specific key's destructor), for calls from other threads.
 */
#include "stacks.h"

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

/* Threads noted at once; past it a thread goes unnoted (its own calls
 * still see its stack, through its thread-local bounds). */
#define SC_STACKS 256
/* The alternate signal stack: the handler's frame and the cache's fault
 * path (its lock, mprotect, the closed store's system calls, a hand-over
 * to the GPU backend's copier), with room for a sanitizer's runtime.  A
 * guard page below it. */
#define SC_ALT_BYTES ((size_t)64 << 10)
/* The growth room assumed for a main stack whose rlimit is unlimited. */
#define SC_MAIN_ROOM ((uintptr_t)1 << 30)

/* The table: a slot is claimed through taken[], then its bounds are
 * stored (hi last, release); a reader loads hi (acquire), then lo.  Slots
 * [0, top) have been used. */
static int taken[SC_STACKS];
static uintptr_t stack_lo[SC_STACKS], stack_hi[SC_STACKS];
static unsigned top;

/* The calling thread's stack [lo, hi), its slot (-1: none) and its
 * alternate stack's mapping (NULL: none of ours). */
struct thread_stacks {
  int ready;
  int slot;
  uintptr_t lo, hi;
  char *alt;
  size_t alt_len;
};
static __thread struct thread_stacks me __attribute__((tls_model("initial-exec")));

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_key_t exit_key;
static int have_key;
static uintptr_t main_lo, main_hi; /* written once, under `once` */

static int overlaps(uintptr_t a, uintptr_t b, uintptr_t lo, uintptr_t hi)
{
  return a < hi && lo < b;
}

/* The main thread's stack mapping, widened down by the room it may grow
 * into (its pages below the mapping are not mapped yet, but will be). */
static void find_main_stack(void)
{
  FILE *f = fopen("/proc/self/maps", "re");
  char line[4096];
  unsigned long lo = 0, hi = 0;
  while (f && fgets(line, sizeof(line), f))
    if (strstr(line, " [stack]") && sscanf(line, "%lx-%lx", &lo, &hi) == 2) break;
  if (f) fclose(f);
  if (!hi) return;
  struct rlimit rl;
  uintptr_t room = SC_MAIN_ROOM;
  if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < room)
    room = (uintptr_t)rl.rlim_cur;
  main_lo = hi - lo > room || hi < room ? lo : hi - room;
  main_hi = hi;
}

static void thread_gone(void *unused);

static void start(void)
{
  find_main_stack();
  have_key = pthread_key_create(&exit_key, thread_gone) == 0;
}

static void note_stack(void)
{
  me.slot = -1;
  for (int i = 0; i < SC_STACKS && me.slot < 0; i++)
    if (!__atomic_exchange_n(&taken[i], 1, __ATOMIC_ACQUIRE)) me.slot = i;
  if (me.slot < 0) return;
  __atomic_store_n(&stack_lo[me.slot], me.lo, __ATOMIC_RELAXED);
  __atomic_store_n(&stack_hi[me.slot], me.hi, __ATOMIC_RELEASE);
  unsigned t = __atomic_load_n(&top, __ATOMIC_RELAXED);
  while (t < (unsigned)me.slot + 1 &&
         !__atomic_compare_exchange_n(&top, &t, (unsigned)me.slot + 1, 0, __ATOMIC_RELAXED,
                                      __ATOMIC_RELAXED))
    ;
}

/* An alternate signal stack of ours, where the thread has none (one the
 * program set up stays: its handlers may count on it). */
static void alt_stack_on(void)
{
  stack_t old;
  if (sigaltstack(NULL, &old) != 0 || !(old.ss_flags & SS_DISABLE)) return;
  const size_t ps = (size_t)sysconf(_SC_PAGESIZE), len = SC_ALT_BYTES + ps;
  char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (m == MAP_FAILED) return;
  mprotect(m, ps, PROT_NONE); /* an overflow faults instead of writing below */
  stack_t ss;
  memset(&ss, 0, sizeof(ss));
  ss.ss_sp = m + ps;
  ss.ss_size = SC_ALT_BYTES;
  if (sigaltstack(&ss, NULL) != 0) {
    munmap(m, len);
    return;
  }
  me.alt = m;
  me.alt_len = len;
}

/* At a noted thread's exit: its slot freed (hi 0: a reader skips it; lo
 * is written anew before hi by the next owner), its alternate stack off,
 * unless the program set another since, and unmapped (the thread runs on
 * its own stack here). */
static void thread_gone(void *unused)
{
  (void)unused;
  if (me.slot >= 0) {
    __atomic_store_n(&stack_hi[me.slot], 0, __ATOMIC_RELAXED);
    __atomic_store_n(&taken[me.slot], 0, __ATOMIC_RELEASE);
    me.slot = -1;
  }
  stack_t now;
  if (me.alt && sigaltstack(NULL, &now) == 0) {
    if (now.ss_sp == me.alt + me.alt_len - SC_ALT_BYTES) {
      stack_t off;
      memset(&off, 0, sizeof(off));
      off.ss_flags = SS_DISABLE;
      sigaltstack(&off, NULL);
    }
    if (!(now.ss_flags & SS_ONSTACK)) munmap(me.alt, me.alt_len);
    me.alt = NULL;
  }
}

void sc_thread_ready(void)
{
  if (me.ready) return;
  me.ready = 1;
  me.slot = -1;
  pthread_once(&once, start);
  pthread_attr_t attr;
  void *addr = NULL;
  size_t size = 0;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
      me.lo = (uintptr_t)addr;
      me.hi = me.lo + size;
    }
    pthread_attr_destroy(&attr);
  }
  if (me.hi) note_stack();
  alt_stack_on();
  /* any non-NULL value: the destructor runs at the thread's exit */
  if (have_key && (me.slot >= 0 || me.alt)) pthread_setspecific(exit_key, &me);
}

int sc_on_stack(const void *p, size_t bytes)
{
  const uintptr_t a = (uintptr_t)p, b = a + (bytes ? bytes : 1);
  sc_thread_ready();
  if (overlaps(a, b, me.lo, me.hi)) return 1;
  if (overlaps(a, b, main_lo, main_hi)) return 1;
  const unsigned n = __atomic_load_n(&top, __ATOMIC_RELAXED);
  for (unsigned i = 0; i < n; i++) {
    const uintptr_t hi = __atomic_load_n(&stack_hi[i], __ATOMIC_ACQUIRE);
    if (hi && overlaps(a, b, __atomic_load_n(&stack_lo[i], __ATOMIC_RELAXED), hi)) return 1;
  }
  return 0;
}
