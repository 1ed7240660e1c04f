/*
 * stacks.h - threads' stacks in SemCache's calls (stacks.c): operands on a
 * stack, which the cache must never protect, and the fault handler's own
 * signal stack.
 *
 * A stack's owner reuses its pages without a call the drop-in sees (a
 * deeper call, alloca, a thread's exit), so an operand there is copied to
 * the device for its call and never cached: a protected stack page would
 * fault on the next push, with no stack to run the handler on.  The
 * handler runs on an alternate signal stack where the thread has one
 * (SA_ONSTACK, protect.c): each thread that makes a call gets one then,
 * unless it has its own; a thread without one runs the handler on its own
 * stack, as a handler without SA_ONSTACK would.
 */
#ifndef SEMCACHE_STACKS_H
#define SEMCACHE_STACKS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* For the calling thread, at each call (a test of a thread-local flag
 * after the first): note its stack's bounds (sc_on_stack, from any
 * thread) and give it an alternate signal stack where it has none; both
 * are undone at the thread's exit.  Never fails: without room for either,
 * the thread goes on without (its own calls still see its stack). */
void sc_thread_ready(void);

/* Whether any byte of [p, p + bytes) lies on a thread's stack: the calling
 * thread's (with the room it may grow into), the main thread's, or that
 * of any thread that has made a call (sc_thread_ready) and not ended. */
int sc_on_stack(const void *p, size_t bytes);

#ifdef __cplusplus
}
#endif
#endif /* SEMCACHE_STACKS_H */
