/*
 * refs.h - reference counts of reusable table entries (the GPU file table).
 *
 *   word = generation << 40 | pending << 20 | count
 *
 * count is the entry's references; pending the joins without the lock in
 * flight (gpufs_refs_join_add: each marks itself there first, then turns
 * its mark into a reference or takes it back); the generation changes when
 * the last reference is dropped and when the entry is created again.
 *
 * Under the table's lock an entry is created (a new generation with count
 * 1, published with release), joined when found by a scan under the lock,
 * and its last reference is dropped (count 1 -> 0 and a new generation, in
 * one step, with the entry's state change; while joins are pending the
 * drop waits for them to decide).  Without the lock a sharer joins an entry
 * it found: by CAS (one more reference while the word keeps the generation
 * it read and a count of at least 1), or by adding a mark to pending and
 * keeping it as a reference when the word it added to still had that
 * generation.  And a sharer drops a reference that is not the last (a CAS
 * while the count is at least 2).  So the count reaches 0 only under the
 * lock, and a joiner that checked one incarnation can never take a
 * reference on the next: both joins compare the generation, and every
 * incarnation has its own.
 *
 * Why two joins: a grid whose every group opens one file joins one word
 * from every group at once.  By CAS one joiner wins per round trip to the
 * word and the others try again (264 blocks on an H100: 144 us of a 163 us
 * gopen; docs/design.md 6); adds do not fail, so the
 * joins take two round trips each however many there are.  A join by add
 * that failed leaves nothing behind: its mark was never a reference.
 *
 * Compiles for the device and the host (tests/host/refs_test.cpp stresses
 * it under TSan).
 */
#ifndef GPUFS_COMMON_REFS_H
#define GPUFS_COMMON_REFS_H

#include <stdint.h>
#include "libgpufs/common/atomics.h"

#define GPUFS_REFS_COUNT_MASK ((1ull << 20) - 1)
#define GPUFS_REFS_PENDING_ONE (1ull << 20)
#define GPUFS_REFS_GEN_ONE (1ull << 40)

GPUFS_HD uint32_t gpufs_refs_count(uint64_t w) { return (uint32_t)(w & GPUFS_REFS_COUNT_MASK); }
GPUFS_HD uint32_t gpufs_refs_pending(uint64_t w)
{
  return (uint32_t)((w >> 20) & GPUFS_REFS_COUNT_MASK);
}
GPUFS_HD uint32_t gpufs_refs_gen(uint64_t w) { return (uint32_t)(w >> 40); }

/* The word to check an entry by, before reading what identifies it. */
GPUFS_HD uint64_t gpufs_refs_read(uint64_t *word)
{
  /* acquire: pairs with the release in gpufs_refs_renew: what the creator
   * wrote into the entry before it is visible */
  return gpufs_ld_acquire_u64_dev(word);
}

/* Without the lock: one more reference on the incarnation w was read from,
 * if it still has one.  A CAS lost to another sharer is tried again at once
 * with the new count.  True when taken.  For an entry few join at once (a
 * caller's own descriptor); gpufs_refs_join_add for many. */
GPUFS_HD int gpufs_refs_join(uint64_t *word, uint64_t w)
{
  const uint32_t gen = gpufs_refs_gen(w);
  /* acq_rel: the acquire orders our uses of the entry after the join; a
   * failed CAS reloads w */
  while (gpufs_refs_gen(w) == gen && gpufs_refs_count(w) >= 1)
    if (gpufs_cas_acqrel_u64_dev(word, &w, w + 1)) return 1;
  return 0;
}

/* Without the lock: as gpufs_refs_join, by adds that never fail and so
 * never retry (many joiners at once): a pending mark, kept as a reference
 * when the word had w's generation and a reference, else taken back.  True
 * when taken. */
GPUFS_HD int gpufs_refs_join_add(uint64_t *word, uint64_t w)
{
  /* acq_rel: the acquire orders our uses of the entry after the join (as a
   * CAS's); the release is the word's as every change of it */
  const uint64_t old = gpufs_add_acqrel_u64_dev(word, GPUFS_REFS_PENDING_ONE);
  const int ok = gpufs_refs_gen(old) == gpufs_refs_gen(w) && gpufs_refs_count(old) >= 1;
  /* acq_rel: as every change of the word; a last drop under the lock waits
   * for this (pending back to 0) and then sees the reference, or none.
   * Unsigned arithmetic: 1 - PENDING_ONE adds 1 and takes one mark. */
  gpufs_add_acqrel_u64_dev(word, ok ? 1ull - GPUFS_REFS_PENDING_ONE : 0ull - GPUFS_REFS_PENDING_ONE);
  return ok;
}

/* Without the lock: drop a reference that is not the last.  False when the
 * count is below 2: then drop it with gpufs_refs_drop_locked. */
GPUFS_HD int gpufs_refs_drop(uint64_t *word)
{
  /* acquire: as in gpufs_refs_read */
  uint64_t w = gpufs_ld_acquire_u64_dev(word);
  /* acq_rel: our uses of the entry happen before a later last drop */
  while (gpufs_refs_count(w) >= 2)
    if (gpufs_cas_acqrel_u64_dev(word, &w, w - 1)) return 1;
  return 0;
}

/* Under the lock: drop a reference.  The count before (1: it was the last,
 * and the entry has a new generation, so that no join of the old one
 * succeeds after), or 0 when there was none (nothing changed).  A last
 * reference with joins pending waits for them: each becomes a reference
 * (then ours is not the last) or goes; they take a few instructions, and
 * need no lock. */
GPUFS_HD uint32_t gpufs_refs_drop_locked(uint64_t *word)
{
  uint64_t w = gpufs_ld_acquire_u64_dev(word);
  uint32_t ns = 32;
  for (;;) {
    const uint32_t n = gpufs_refs_count(w);
    if (n == 0) return 0;
    if (n == 1 && gpufs_refs_pending(w) != 0) {
      gpufs_pause(&ns, 1024u);
      /* acquire: as in gpufs_refs_read */
      w = gpufs_ld_acquire_u64_dev(word);
      continue;
    }
    const uint64_t next = n == 1 ? (w & ~GPUFS_REFS_COUNT_MASK) + GPUFS_REFS_GEN_ONE : w - 1;
    /* acq_rel: as in gpufs_refs_drop; joiners change the word meanwhile */
    if (gpufs_cas_acqrel_u64_dev(word, &w, next)) return n;
  }
}

/* Under the lock: one more reference on an entry that has one. */
GPUFS_HD void gpufs_refs_add(uint64_t *word)
{
  /* acq_rel: as every change of the word (joiners change it meanwhile) */
  gpufs_add_acqrel_u64_dev(word, 1ull);
}

/* Under the lock: a new incarnation of an entry that has no reference,
 * with one.  An add, not a store: pending marks of joiners that read an
 * earlier word stay theirs to take back. */
GPUFS_HD void gpufs_refs_renew(uint64_t *word)
{
  /* acq_rel (for its release): publishes what the caller wrote into the
   * entry to joiners (gpufs_refs_read); a word read before has another
   * generation, and their joins fail */
  gpufs_add_acqrel_u64_dev(word, GPUFS_REFS_GEN_ONE + 1ull);
}

#endif /* GPUFS_COMMON_REFS_H */
