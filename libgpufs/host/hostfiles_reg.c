/*
 * hostfiles_reg.c - registrations in the host file table: the pinned,
 * read-only mappings a miss copies from (register.c pins and maps;
 * this file only records), made by gpufs_register or automatically.
 *
 * An inode's registration:
 *
 *   NONE --add--> LIVE --truncated / found shorter--> RETIRED
 *                      (automatic: any change found at an open)
 *     ^             |                                    |
 *     +--remove (no hfid open), evict (automatic), pop --+
 *
 * Opens of a LIVE registration's inode get its word in their id, and every
 * open entry of the inode keeps the word (hf_entry.reg) for READ replies,
 * so descriptors opened before the pin learn it too.  A registration
 * leaves the table only while no hfid of its inode is open (remove,
 * evict), or at gpufs_stop once the kernels are done (pop): no GPU
 * descriptor can hold the address of a mapping that is gone.
 *
 * Automatic pins (docs/pinning.md): the opens of a read-only regular file
 * after its first hint a pin (GPUFS_PIN_HINT_EARNED), once, until the pin
 * is released or declined.  The runtime's pinner makes it in the
 * background, in windows (reg_grow publishes each longer prefix), and
 * evicts the least recently used automatic pin of a file no hfid has open
 * when the budget is full.
 */
#include "libgpufs/host/hostfiles_priv.h"

#include <errno.h>
#include <fcntl.h>

#include "libgpufs/common/cache.h"
#include "libgpufs/common/queue.h"

#define HF_REG_MIN 4096 /* a file shorter than one host page has no page to map */

void gpufs_hf_reg_publish(struct gpufs_hostfiles *hf, const struct hf_inode *n, uint64_t w)
{
  for (uint32_t i = 0; i < hf->nfiles; i++) {
    struct hf_entry *e = &hf->files[i];
    /* relaxed: OPEN and dev/ino are stored under the lock we hold */
    const uint32_t st = hf_state(gpufs_ld_relaxed_u32_dev(&e->word));
    if ((st == HF_OPEN || st == HF_CLOSING) && e->dev == n->dev && e->ino == n->ino)
      gpufs_st_relaxed_u64_dev(&e->reg, w); /* relaxed: a hint for READ replies */
  }
}

static uint64_t hf_reg_word(const struct hf_inode *n)
{
  return gpufs_reg_word((uint64_t)(uintptr_t)n->r.addr, n->r.len);
}

void gpufs_hf_reg_retire(struct gpufs_hostfiles *hf, struct hf_inode *n)
{
  if (n->reg != REG_LIVE) return;
  n->reg = REG_RETIRED;
  hf->regs.retired++;
  gpufs_hf_reg_publish(hf, n, 0);
}

void gpufs_hf_reg_open(struct gpufs_hostfiles *hf, struct hf_inode *n, const struct stat *st,
                       int flags, struct gpufs_hostfile_id *id)
{
  id->reg = 0;
  id->pin_hint = GPUFS_PIN_HINT_NONE;
  id->reread_at = 0;
  if (n->opens < UINT32_MAX) n->opens++;
  if (n->reg == REG_LIVE && (uint64_t)st->st_size < n->r.len) gpufs_hf_reg_retire(hf, n);
  if (n->reg == REG_LIVE) {
    id->reg = hf_reg_word(n);
    n->last_use = ++hf->use_clock;
  }
  if (n->reg != REG_NONE || n->pin_asked != GPUFS_PIN_HINT_NONE || n->acquired_changed ||
      (flags & O_ACCMODE) != O_RDONLY ||
      (flags & O_TRUNC) || !S_ISREG(st->st_mode) || st->st_size < HF_REG_MIN)
    return;
  if (n->opens < 2) { /* a first open: earned once it reads more than the file */
    id->reread_at = (uint64_t)st->st_size + 1;
    return;
  }
  n->pin_asked = GPUFS_PIN_HINT_EARNED;
  id->pin_hint = GPUFS_PIN_HINT_EARNED;
}

int gpufs_hf_reg_reread(struct gpufs_hostfiles *hf, uint64_t dev, uint64_t ino)
{
  pthread_mutex_lock(&hf->lock);
  struct hf_inode *n = gpufs_hf_inode_find(hf->inodes, hf->icap, dev, ino);
  const int earned = n->cid != 0 && n->reg == REG_NONE && n->pin_asked == GPUFS_PIN_HINT_NONE &&
                     !n->acquired_changed;
  if (earned) n->pin_asked = GPUFS_PIN_HINT_EARNED;
  pthread_mutex_unlock(&hf->lock);
  return earned;
}

uint64_t gpufs_hostfiles_reg_word(struct gpufs_hostfiles *hf, int32_t hfid)
{
  if (hfid < 0 || (uint32_t)hfid >= hf->nfiles) return 0;
  /* relaxed: the word's mapping lives while the caller's pin keeps the
   * hfid open; a word stored a moment ago may be missed (the next READ
   * sees it) */
  return gpufs_ld_relaxed_u64_dev(&hf->files[hfid].reg);
}

/* Publish live registration n's word to the inode's open entries, unless
 * the file changed since n's record was made (st: the fstat the
 * registration was made from): the open that finds the change retires it
 * (gpufs_hf_reg_open, hf_identify).  With the lock held. */
static void hf_reg_publish_if_same(struct gpufs_hostfiles *hf, const struct hf_inode *n,
                                   const struct stat *st)
{
  if (n->size == (int64_t)st->st_size &&
      (!n->r.automatic || (n->mtime_ns == gpufs_timespec_ns(st->st_mtim) &&
                           n->ctime_ns == gpufs_timespec_ns(st->st_ctim))))
    gpufs_hf_reg_publish(hf, n, hf_reg_word(n));
}

int gpufs_hostfiles_reg_add(struct gpufs_hostfiles *hf, const struct stat *st,
                            const struct gpufs_hostfile_reg *r, uint64_t max_bytes)
{
  pthread_mutex_lock(&hf->lock);
  int rc = gpufs_hf_inodes_reserve(hf);
  struct hf_inode *n = gpufs_hf_inode_find(hf->inodes, hf->icap, (uint64_t)st->st_dev,
                                           (uint64_t)st->st_ino);
  if (rc == 0 && n->cid != 0 && n->reg != REG_NONE) rc = -EEXIST;
  if (rc == 0 && (hf->regs.bytes + r->map_len > max_bytes || hf->regs.bytes + r->map_len < r->map_len))
    rc = -EFBIG;
  if (rc == 0 && n->cid == 0) {
    if (hf->next_cid > GPUFS_CID_MAX) rc = -ENFILE;
    else {
      /* a new record, as an open would make it: the next open keeps
       * version 1 while the file stays as st says */
      n->dev = (uint64_t)st->st_dev;
      n->ino = (uint64_t)st->st_ino;
      n->cid = hf->next_cid++;
      n->version = 1;
      n->stale = 0;
      n->size = (int64_t)st->st_size;
      n->mtime_ns = gpufs_timespec_ns(st->st_mtim);
      n->ctime_ns = gpufs_timespec_ns(st->st_ctim);
      hf->icount++;
    }
  }
  if (rc == 0) {
    n->reg = REG_LIVE;
    n->r = *r;
    n->last_use = ++hf->use_clock;
    hf->regs.files++;
    hf->regs.bytes += r->map_len;
    /* an automatic pin counts as made at its first pinned byte, and its
     * bytes as they are pinned (reg_grow) */
    hf->regs.auto_made += r->automatic && r->pinned;
    hf->regs.auto_bytes += r->automatic ? r->pinned : 0;
    hf_reg_publish_if_same(hf, n, st);
  }
  pthread_mutex_unlock(&hf->lock);
  return rc;
}

int gpufs_hostfiles_reg_grow(struct gpufs_hostfiles *hf, const struct stat *st, const void *addr,
                             uint64_t pinned, enum gpufs_reg_grow how)
{
  pthread_mutex_lock(&hf->lock);
  struct hf_inode *n = gpufs_hf_inode_find(hf->inodes, hf->icap, (uint64_t)st->st_dev,
                                           (uint64_t)st->st_ino);
  int rc = n->cid == 0 || n->reg == REG_NONE || n->r.addr != addr ? -ENOENT
           : n->reg == REG_RETIRED                               ? -ESTALE
                                                                 : 0;
  if (rc != -ENOENT) {
    const uint64_t readable = (uint64_t)st->st_size & ~(uint64_t)(HF_REG_MIN - 1);
    if (n->r.automatic && pinned > n->r.pinned) {
      hf->regs.auto_made += n->r.pinned == 0;
      hf->regs.auto_bytes += pinned - n->r.pinned;
    }
    n->r.pinned = pinned;
    n->r.len = pinned < readable ? pinned : readable;
    if (how != GPUFS_REG_GROW_MORE) n->r.pinning = 0;
  }
  if (rc == 0 && how == GPUFS_REG_GROW_STALE) {
    gpufs_hf_reg_retire(hf, n);
    rc = -ESTALE;
  }
  if (rc == 0) hf_reg_publish_if_same(hf, n, st);
  pthread_mutex_unlock(&hf->lock);
  return rc;
}

int gpufs_hostfiles_reg_has(struct gpufs_hostfiles *hf, uint64_t dev, uint64_t ino)
{
  pthread_mutex_lock(&hf->lock);
  const struct hf_inode *n = gpufs_hf_inode_find(hf->inodes, hf->icap, dev, ino);
  const int has = n->cid != 0 && n->reg != REG_NONE;
  pthread_mutex_unlock(&hf->lock);
  return has;
}

int gpufs_hostfiles_reg_keep(struct gpufs_hostfiles *hf, uint64_t dev, uint64_t ino)
{
  pthread_mutex_lock(&hf->lock);
  struct hf_inode *n = gpufs_hf_inode_find(hf->inodes, hf->icap, dev, ino);
  int rc = n->cid == 0 || n->reg == REG_NONE ? -EINVAL : n->r.automatic ? 0 : -EEXIST;
  if (rc == 0) n->r.automatic = 0;
  pthread_mutex_unlock(&hf->lock);
  return rc;
}

/* 1 when an entry of inode (dev, ino) is open.  With the lock held: an
 * OPEN entry got its id (and the mapping's address) under it; one OPENING
 * now gets its id after the caller's change. */
static int hf_inode_open(struct gpufs_hostfiles *hf, uint64_t dev, uint64_t ino)
{
  for (uint32_t i = 0; i < hf->nfiles; i++) {
    struct hf_entry *e = &hf->files[i];
    /* relaxed: OPEN and dev/ino are stored under the lock we hold; a close
     * racing with us only makes the answer conservative */
    if (hf_state(gpufs_ld_relaxed_u32_dev(&e->word)) == HF_OPEN && e->dev == dev && e->ino == ino)
      return 1;
  }
  return 0;
}

/* Give registration n back to the caller.  With the lock held. */
static void hf_reg_take(struct gpufs_hostfiles *hf, struct hf_inode *n, struct gpufs_hostfile_reg *out)
{
  *out = n->r;
  n->reg = REG_NONE;
  hf->regs.files--;
  hf->regs.bytes -= n->r.map_len;
  gpufs_hf_reg_publish(hf, n, 0);
}

int gpufs_hostfiles_reg_remove(struct gpufs_hostfiles *hf, uint64_t dev, uint64_t ino,
                               struct gpufs_hostfile_reg *out)
{
  int rc = 0;
  pthread_mutex_lock(&hf->lock);
  struct hf_inode *n = gpufs_hf_inode_find(hf->inodes, hf->icap, dev, ino);
  if (n->cid == 0 || n->reg == REG_NONE) rc = -EINVAL;
  else if (n->r.pinning || hf_inode_open(hf, dev, ino)) rc = -EBUSY;
  if (rc == 0) {
    hf_reg_take(hf, n, out);
    n->pin_asked = 0;
  }
  pthread_mutex_unlock(&hf->lock);
  return rc;
}

int gpufs_hostfiles_reg_evict(struct gpufs_hostfiles *hf, struct gpufs_hostfile_reg *out)
{
  pthread_mutex_lock(&hf->lock);
  struct hf_inode *lru = NULL;
  for (uint32_t i = 0; i < hf->icap; i++) {
    struct hf_inode *n = &hf->inodes[i];
    if (n->cid == 0 || n->reg == REG_NONE || !n->r.automatic || n->r.pinning) continue;
    if ((lru == NULL || n->last_use < lru->last_use) && !hf_inode_open(hf, n->dev, n->ino)) lru = n;
  }
  if (lru) {
    hf_reg_take(hf, lru, out);
    lru->pin_asked = 0;
    hf->regs.auto_released++;
  }
  pthread_mutex_unlock(&hf->lock);
  return lru ? 0 : -ENOENT;
}

void gpufs_hostfiles_pin_declined(struct gpufs_hostfiles *hf, uint64_t dev, uint64_t ino)
{
  pthread_mutex_lock(&hf->lock);
  struct hf_inode *n = gpufs_hf_inode_find(hf->inodes, hf->icap, dev, ino);
  if (n->cid != 0) n->pin_asked = 0;
  pthread_mutex_unlock(&hf->lock);
}

int gpufs_hostfiles_reg_pop(struct gpufs_hostfiles *hf, struct gpufs_hostfile_reg *out)
{
  int rc = -ENOENT;
  pthread_mutex_lock(&hf->lock);
  for (uint32_t i = 0; i < hf->icap && rc != 0; i++) {
    struct hf_inode *n = &hf->inodes[i];
    if (n->cid != 0 && n->reg != REG_NONE) {
      hf_reg_take(hf, n, out);
      rc = 0;
    }
  }
  pthread_mutex_unlock(&hf->lock);
  return rc;
}

void gpufs_hostfiles_reg_stats(struct gpufs_hostfiles *hf, struct gpufs_hostfile_regstats *s)
{
  pthread_mutex_lock(&hf->lock);
  *s = hf->regs;
  pthread_mutex_unlock(&hf->lock);
}
