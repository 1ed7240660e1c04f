/*
 * refs.h - reference counts of reusable table entries (the GPU file table).
 *
 *   word = generation << 32 | count
 *
 * Under the table's lock an entry is created (a new generation with count
 * 1, published with release), joined when found by a scan under the lock,
 * and its last reference is dropped (count 1 -> 0, with the entry's state
 * change).  Without the lock a sharer joins an entry it found (a CAS that
 * adds one while the word keeps the generation it read and a count of at
 * least 1) and drops a reference that is not the last (a CAS while the
 * count is at least 2).  So the count reaches 0 only under the lock, and a
 * joiner that checked one incarnation can never take a reference on the
 * next: its CAS compares the generation too.
 *
 * Compiles for the device and the host (tests/host/refs_test.cpp stresses
 * it under TSan).
 */
#ifndef GPUFS_COMMON_REFS_H
#define GPUFS_COMMON_REFS_H

#include <stdint.h>
#include "atomics.h"

GPUFS_HD uint32_t gpufs_refs_count(uint64_t w) { return (uint32_t)w; }

/* The word to check an entry by, before reading what identifies it. */
GPUFS_HD uint64_t gpufs_refs_read(uint64_t *word)
{
  /* acquire: pairs with the release in gpufs_refs_renew: what the creator
   * wrote into the entry before it is visible */
  return gpufs_ld_acquire_u64_dev(word);
}

/* Without the lock: one more reference on the incarnation w was read from,
 * if it still has one.  A CAS lost to another sharer is tried again at once
 * with the new count.  True when taken. */
GPUFS_HD int gpufs_refs_join(uint64_t *word, uint64_t w)
{
  const uint64_t gen = w >> 32;
  /* acq_rel: the acquire orders our uses of the entry after the join; a
   * failed CAS reloads w */
  while ((w >> 32) == gen && gpufs_refs_count(w) >= 1)
    if (gpufs_cas_acqrel_u64_dev(word, &w, w + 1)) return 1;
  return 0;
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

/* Under the lock: drop a reference.  The count before (1: it was the last),
 * or 0 when there was none (nothing changed). */
GPUFS_HD uint32_t gpufs_refs_drop_locked(uint64_t *word)
{
  uint64_t w = gpufs_ld_acquire_u64_dev(word);
  /* acq_rel: as in gpufs_refs_drop; joiners CAS the word meanwhile */
  while (gpufs_refs_count(w) >= 1)
    if (gpufs_cas_acqrel_u64_dev(word, &w, w - 1)) return gpufs_refs_count(w);
  return 0;
}

/* Under the lock: one more reference on an entry that has one. */
GPUFS_HD void gpufs_refs_add(uint64_t *word)
{
  /* acq_rel: as every change of the word (joiners CAS it meanwhile) */
  gpufs_add_acqrel_u64_dev(word, 1ull);
}

/* Under the lock: a new incarnation of the entry with one reference. */
GPUFS_HD void gpufs_refs_renew(uint64_t *word)
{
  uint64_t gen = (gpufs_ld_relaxed_u64_dev(word) >> 32) + 1ull;
  /* release: publishes what the caller wrote into the entry to joiners
   * (gpufs_refs_read); a word read before fails their CAS */
  gpufs_st_release_u64_dev(word, gen << 32 | 1u);
}

#endif /* GPUFS_COMMON_REFS_H */
