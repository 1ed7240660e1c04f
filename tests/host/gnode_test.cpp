/*
 * gnode_test.cpp - libgpufs/common/gnode.h, the nodes of the GPU file
 * table, on host threads (ThreadSanitizer).
 *
 * The file table is built in host memory as ftab_init (instance.c)
 * builds it on the GPU: entries zeroed with no node, nodes zeroed (cid 0:
 * free).  Checked:
 *   - links and unlinks in random order agree with a model of which cid
 *     each entry opened: an entry joins the node of its cid when another
 *     entry of that cid is linked (and leaves its size and version alone),
 *     else takes a free node and sets it up whole; a node's links are its
 *     entries, its cid is 0 exactly when it has none, no two nodes share a
 *     cid, and there is a free node for every unlinked entry;
 *   - the same from threads that take the table's spin lock as the device
 *     does; outside the lock, the node of a linked entry keeps its cid;
 *   - gpufs_gnode_drop_dirty while writers mark grains and push frames:
 *     once all stop, the lists hold exactly the DIRTY frames, and no frame
 *     has bits without DIRTY (no mark lost); a last drop leaves everything
 *     clean, and a write after it is on a list with its bits.
 */
#include <gtest/gtest.h>

#include <string.h>

#include <atomic>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "libgpufs/common/gnode.h"
#include "tests/host/host_cache.h"
#include "tests/host/stress_util.h"

namespace {

using gpufs_test::failure;
using gpufs_test::mix64;
using gpufs_test::watchdog;

/* A struct gpufs_ftab in host memory (see the top); no paths, no stats. */
struct host_ftab {
  std::vector<struct gpufs_gfile> files;
  std::vector<struct gpufs_gnode> nodes;
  uint32_t lock;
  uint32_t writers;
  struct gpufs_ftab t;
};

void ftab_init(struct host_ftab *h, uint32_t nfiles)
{
  h->files.assign(nfiles, gpufs_gfile{});
  for (struct gpufs_gfile &e : h->files) e.node = GPUFS_NIL; /* as gopen makes an entry */
  h->nodes.assign(nfiles, gpufs_gnode{});
  h->lock = 0;
  h->writers = 0;
  h->t.stats = NULL;
  h->t.files = h->files.data();
  h->t.nodes = h->nodes.data();
  h->t.paths = NULL;
  h->t.lock = &h->lock;
  h->t.writers = &h->writers;
  h->t.nfiles = nfiles;
}

uint32_t node_cid(struct host_ftab *h, uint32_t n) { return gpufs_ld_relaxed_u32_dev(&h->nodes[n].cid); }
uint32_t node_links(struct host_ftab *h, uint32_t n) { return gpufs_ld_relaxed_u32_dev(&h->nodes[n].links); }

/* The table against the model (cid_of[e]: the cid entry e is linked to, 0
 * when unlinked), or "".  Single thread or under the table lock. */
std::string ftab_fault(struct host_ftab *h, const std::vector<uint32_t> &cid_of)
{
  const uint32_t nfiles = h->t.nfiles;
  std::vector<uint32_t> links(nfiles, 0);
  uint32_t unlinked = 0;
  for (uint32_t e = 0; e < nfiles; e++) {
    const uint32_t n = h->files[e].node;
    const std::string who = "entry " + std::to_string(e) + ": ";
    if (cid_of[e] == 0) {
      if (n != GPUFS_NIL) return who + "unlinked but has node " + std::to_string(n);
      unlinked++;
      continue;
    }
    if (n >= nfiles) return who + "linked but has no node";
    links[n]++;
    if (node_cid(h, n) != cid_of[e])
      return who + "opened cid " + std::to_string(cid_of[e]) + ", its node has " +
             std::to_string(node_cid(h, n));
  }
  std::set<uint32_t> cids;
  uint32_t free_nodes = 0;
  for (uint32_t n = 0; n < nfiles; n++) {
    const uint32_t cid = node_cid(h, n), l = node_links(h, n);
    const std::string who = "node " + std::to_string(n) + ": ";
    if (l != links[n]) return who + std::to_string(l) + " links, " + std::to_string(links[n]) + " entries";
    if ((cid != 0) != (l != 0))
      return who + "cid " + std::to_string(cid) + " with " + std::to_string(l) + " links";
    if (cid == 0) {
      free_nodes++;
    } else if (!cids.insert(cid).second) {
      return who + "a second node of cid " + std::to_string(cid);
    }
  }
  if (free_nodes < unlinked) return "fewer free nodes than unlinked entries";
  return "";
}

/* Link entry e (unlinked) to cid with the open's size and version, and
 * check what the link did against the model; "" when right.  Under the
 * table lock. */
std::string link_checked(struct host_ftab *h, std::vector<uint32_t> &cid_of, uint32_t e, uint32_t cid,
                         uint64_t size, uint32_t version, bool *joined)
{
  const uint32_t nfiles = h->t.nfiles;
  uint32_t want = GPUFS_NIL;
  for (uint32_t o = 0; o < nfiles && want == GPUFS_NIL; o++)
    if (cid_of[o] == cid) want = h->files[o].node;
  const std::vector<struct gpufs_gnode> before = h->nodes;
  gpufs_node_link_locked(&h->t, &h->files[e], cid, size, version, 0);
  cid_of[e] = cid;
  const uint32_t n = h->files[e].node;
  const std::string who = "link of entry " + std::to_string(e) + " to cid " + std::to_string(cid) + ": ";
  if (n >= nfiles) return who + "no node";
  const struct gpufs_gnode *nd = &h->nodes[n];
  *joined = want != GPUFS_NIL;
  if (want != GPUFS_NIL) {
    if (n != want) return who + "node " + std::to_string(n) + ", not its cid's " + std::to_string(want);
    if (nd->size != before[n].size || nd->version != before[n].version)
      return who + "a joiner changed the node's size or version";
    if (nd->links != before[n].links + 1) return who + "links not counted";
    return "";
  }
  if (before[n].cid != 0)
    return who + "took node " + std::to_string(n) + " of cid " + std::to_string(before[n].cid);
  if (nd->cid != cid || nd->links != 1 || nd->size != size || nd->version != version || nd->flushing != 0)
    return who + "a new node not set up";
  for (uint32_t k = 0; k < GPUFS_DLISTS; k++)
    if (nd->dheads[k] != GPUFS_NIL) return who + "a new node with a dirty list";
  return "";
}

/* Unlink entry e and check; "" when right.  Under the table lock. */
std::string unlink_checked(struct host_ftab *h, std::vector<uint32_t> &cid_of, uint32_t e, bool *freed)
{
  const uint32_t n = h->files[e].node;
  const uint32_t links = n < h->t.nfiles ? node_links(h, n) : 0;
  gpufs_node_unlink_locked(&h->t, &h->files[e]);
  cid_of[e] = 0;
  if (h->files[e].node != GPUFS_NIL) return "entry " + std::to_string(e) + " keeps a node";
  if (n >= h->t.nfiles) return "";
  *freed = links == 1;
  if (node_links(h, n) != links - 1) return "node " + std::to_string(n) + ": links not counted down";
  if ((node_cid(h, n) == 0) != (links == 1)) return "node " + std::to_string(n) + ": freed at the wrong link";
  return "";
}

/* (a) Random links and unlinks against the model, after a start that uses
 * every node (every entry on its own cid).  A freed node is scribbled on
 * (size, version, flushing, lists), so a link that did not set up a node
 * it takes whole would show; an unlink of an unlinked entry changes
 * nothing. */
TEST(Gnode, LinkUnlinkMatchesAModel)
{
  constexpr uint32_t kFiles = 12;
  struct host_ftab h;
  ftab_init(&h, kFiles);
  std::vector<uint32_t> cid_of(kFiles, 0);
  bool joined = false, freed = false;
  for (uint32_t e = 0; e < kFiles; e++) {
    ASSERT_EQ("", link_checked(&h, cid_of, e, 100 + e, 4096 * e, e, &joined));
    ASSERT_FALSE(joined);
  }
  ASSERT_EQ("", ftab_fault(&h, cid_of));
  for (uint32_t e = 0; e < kFiles; e++) ASSERT_EQ("", unlink_checked(&h, cid_of, e, &freed));
  ASSERT_EQ("", ftab_fault(&h, cid_of));

  uint64_t joins = 0, news = 0, frees = 0, x = 3;
  for (uint32_t step = 0; step < 60000; step++) {
    x = mix64(x + step);
    const uint32_t e = x % kFiles;
    if (cid_of[e] == 0 && (x >> 60) == 0) {
      const std::vector<struct gpufs_gnode> before = h.nodes;
      gpufs_node_unlink_locked(&h.t, &h.files[e]);
      ASSERT_EQ(0, memcmp(before.data(), h.nodes.data(), kFiles * sizeof(struct gpufs_gnode)))
          << "unlink of an unlinked entry changed a node";
    } else if (cid_of[e] == 0) {
      /* half the opens on 3 busy cids, half on 20 (all nodes may be used) */
      const uint32_t cid = (x >> 8) % 2 ? 1 + (uint32_t)(x >> 16) % 3 : 10 + (uint32_t)(x >> 16) % 20;
      ASSERT_EQ("", link_checked(&h, cid_of, e, cid, x >> 24, (uint32_t)(x >> 40), &joined))
          << "step " << step;
      joins += joined;
      news += !joined;
    } else {
      freed = false;
      const uint32_t n = h.files[e].node;
      ASSERT_EQ("", unlink_checked(&h, cid_of, e, &freed)) << "step " << step;
      if (freed) {
        struct gpufs_gnode *nd = &h.nodes[n];
        nd->size = 0xdeadbeefull;
        nd->version = 0xdead;
        nd->flushing = 7;
        for (uint32_t k = 0; k < GPUFS_DLISTS; k++) nd->dheads[k] = k;
        frees++;
      }
    }
    ASSERT_EQ("", ftab_fault(&h, cid_of)) << "step " << step;
  }
  EXPECT_GT(joins, 1000u);
  EXPECT_GT(news, 1000u);
  EXPECT_GT(frees, 1000u);
}

/* (b) Threads link and unlink their own entries to shared and own cids,
 * each under the table's spin lock (gpufs_spin_lock, as files.cu), and
 * check the whole table against the model while they hold it.  Outside
 * the lock a thread reads the cid of its linked entries' nodes, as device
 * calls read a node without the lock: it must stay the cid opened. */
TEST(Gnode, LinkUnderTheSpinLockFromThreads)
{
  watchdog dog("Gnode.LinkUnderTheSpinLockFromThreads");
  constexpr uint32_t kThreads = 8, kOwn = 4, kFiles = kThreads * kOwn, kIters = 4000;
  struct host_ftab h;
  ftab_init(&h, kFiles);
  std::vector<uint32_t> cid_of(kFiles, 0); /* under the lock */
  failure fl;
  std::atomic<uint64_t> joins{0};
  std::vector<std::thread> th;
  for (uint32_t t = 0; t < kThreads; t++) {
    th.emplace_back([&, t] {
      uint32_t mine[kOwn] = {0}; /* the cid each own entry opened (this thread's copy) */
      uint64_t x = mix64(t + 11);
      for (uint32_t it = 0; it < kIters && !fl.any; it++) {
        x = mix64(x + it);
        const uint32_t j = x % kOwn, e = t * kOwn + j;
        const uint32_t cid = (x >> 8) % 4 ? 1 + (uint32_t)(x >> 16) % 5 : 1000 + t * kOwn + j;
        bool joined = false, freed = false;
        gpufs_spin_lock(h.t.lock, GPUFS_PAUSE_MAX_NS);
        std::string f = mine[j] == 0 ? link_checked(&h, cid_of, e, cid, x >> 24, t, &joined)
                                     : unlink_checked(&h, cid_of, e, &freed);
        if (f.empty()) f = ftab_fault(&h, cid_of);
        gpufs_spin_unlock(h.t.lock);
        if (!f.empty()) fl.report(f);
        mine[j] = mine[j] == 0 ? cid : 0;
        joins += joined;
        for (uint32_t k = 0; k < kOwn; k++) {
          const uint32_t n = h.files[t * kOwn + k].node; /* only this thread changes it */
          if (mine[k] != 0 && node_cid(&h, n) != mine[k]) fl.report("a linked entry's node changed its cid");
        }
        if ((x >> 40) % 4 == 0) std::this_thread::yield();
      }
    });
  }
  for (auto &t : th) t.join();
  ASSERT_FALSE(fl.any) << fl.first;
  EXPECT_GT(joins.load(), 1000u);
  ASSERT_EQ("", ftab_fault(&h, cid_of));
  bool freed = false;
  for (uint32_t e = 0; e < kFiles; e++) ASSERT_EQ("", unlink_checked(&h, cid_of, e, &freed));
  for (uint32_t n = 0; n < kFiles; n++) {
    EXPECT_EQ(0u, h.nodes[n].cid) << n;
    EXPECT_EQ(0u, h.nodes[n].links) << n;
  }
  EXPECT_EQ(0u, h.lock);
}

constexpr uint32_t kFrames = 32;
constexpr uint32_t kPage = 4096; /* 64 grains: 2 bitmap words a frame */

/* What a writer does (dirty.h): pin, mark bytes [lo, hi), set DIRTY and
 * push the frame on list k of node n if DIRTY was clear, unpin. */
void write_mark(host_cache *hc, struct gpufs_gnode *nd, uint32_t n, uint32_t f, uint32_t lo, uint32_t hi,
                uint32_t k)
{
  gpufs_add_acqrel_u32_dev(&hc->frames[f].state, 1u); /* pin */
  gpufs_dirty_bits(&hc->c, f, lo, hi);
  if (gpufs_dirty_flag(&hc->c, f)) gpufs_dlist_push(&hc->c, &nd->dheads[k], f, n);
  gpufs_frame_unpin(&hc->c, f);
}

bool has_bits(host_cache *hc, uint32_t f)
{
  for (uint32_t w = 0; w < hc->c.dwords; w++)
    if (gpufs_ld_relaxed_u32_dev(&gpufs_frame_dirty(&hc->c, f)[w]) != 0) return true;
  return false;
}

/* With no writer and no dropper running: the lists of node n hold each
 * DIRTY frame once and no other; no frame has bits without DIRTY, nor WB
 * or a pin.  "" when so. */
std::string dirty_fault(host_cache *hc, struct gpufs_gnode *nd, uint32_t n)
{
  std::vector<uint32_t> listed(kFrames, 0);
  for (uint32_t k = 0; k < GPUFS_DLISTS; k++) {
    uint32_t steps = 0;
    for (uint32_t f = nd->dheads[k]; f != GPUFS_NIL; f = hc->frames[f].dnext) {
      if (f >= kFrames || ++steps > kFrames) return "list " + std::to_string(k) + " is broken";
      if (listed[f]++) return "frame " + std::to_string(f) + " twice on the lists";
      if (hc->frames[f].wfile != n) return "frame " + std::to_string(f) + " names another node";
    }
  }
  for (uint32_t f = 0; f < kFrames; f++) {
    const uint32_t w = hc->word(f);
    const bool dirty = (w & GPUFS_PG_DIRTY) != 0;
    const std::string who = "frame " + std::to_string(f) + ": ";
    if (w & (GPUFS_PG_WB | GPUFS_PG_PINS)) return who + "WB or pinned";
    if (dirty && !listed[f]) return who + "DIRTY on no list";
    if (!dirty && listed[f]) return who + "listed, not DIRTY";
    if (!dirty && has_bits(hc, f)) return who + "bits with DIRTY clear: a mark was lost";
  }
  return "";
}

/* Writers that stop between writes when asked, so that the dropper can
 * look at a still world: a mark lost by a drop shows before a later write
 * to its frame hides it (that write sets DIRTY and pushes the frame
 * again). */
struct stop_world {
  std::atomic<uint32_t> stop{0};
  std::atomic<uint32_t> parked{0};
  std::atomic<uint32_t> running{0};
};

/* A writer, between two writes. */
void stop_point(struct stop_world *w)
{
  if (w->stop.load() == 0) return;
  w->parked++;
  while (w->stop.load() != 0) std::this_thread::yield();
  w->parked--;
}

/* The dropper: true when every running writer is parked (until it clears
 * stop), false once none runs.  It first waits for the writers of the
 * last stop to leave, so that none is between its wait and its parked--
 * when it counts them. */
bool stop_all(struct stop_world *w)
{
  while (w->parked.load() != 0) std::this_thread::yield();
  w->stop = 1;
  for (;;) {
    const uint32_t running = w->running.load();
    if (running == 0) {
      w->stop = 0;
      return false;
    }
    if (w->parked.load() == running) return true;
    std::this_thread::yield();
  }
}

/* (c) Writers mark grains of frames and push them on the node's lists
 * while one thread drops the node's dirty bytes again and again (as
 * gftruncate does); after every few drops it stops the writers and checks
 * the lists and frames (dirty_fault).  Each round ends with one more drop:
 * everything clean.  Then one write after the last drop: its frame is
 * DIRTY, on a list, with its bits (a drop loses no mark that comes after
 * it); and a drop cleans it. */
TEST(Gnode, DropDirtyVersusWriters)
{
  watchdog dog("Gnode.DropDirtyVersusWriters");
  constexpr uint32_t kWriters = 6, kIters = 50000, kDropsPerCheck = 8;
  host_cache hc(kFrames, kPage, 1);
  for (auto &f : hc.frames) f.state = (uint32_t)GPUFS_PG_VALID << GPUFS_PG_SHIFT;
  struct host_ftab ft;
  ftab_init(&ft, 4);
  std::vector<uint32_t> cid_of(4, 0);
  bool joined = false;
  ASSERT_EQ("", link_checked(&ft, cid_of, 2, 5, 1 << 20, 1, &joined));
  const uint32_t n = ft.files[2].node;
  struct gpufs_gnode *nd = &ft.nodes[n];
  for (int round = 0; round < 3; round++) {
    struct stop_world sw;
    sw.running = kWriters;
    failure fl;
    uint64_t checks = 0;
    std::vector<std::thread> th;
    for (uint32_t t = 0; t < kWriters; t++) {
      th.emplace_back([&, t] {
        uint64_t x = mix64(round * 100 + t + 1);
        for (uint32_t i = 0; i < kIters && !fl.any; i++) {
          x = mix64(x + i);
          const uint32_t lo = (uint32_t)(x >> 8) % kPage, len = 1 + (uint32_t)(x >> 24) % 512;
          write_mark(&hc, nd, n, x % kFrames, lo, lo + len < kPage ? lo + len : kPage,
                     (t * 3 + i) % GPUFS_DLISTS);
          stop_point(&sw);
        }
        sw.running--;
      });
    }
    th.emplace_back([&] {
      for (;;) {
        for (uint32_t i = 0; i < kDropsPerCheck; i++) gpufs_gnode_drop_dirty(&hc.c, nd);
        if (!stop_all(&sw)) break;
        const std::string f = dirty_fault(&hc, nd, n);
        sw.stop = 0;
        checks++;
        if (!f.empty()) fl.report("check " + std::to_string(checks) + ": " + f);
      }
    });
    for (auto &t : th) t.join();
    ASSERT_FALSE(fl.any) << "round " << round << ", " << fl.first;
    EXPECT_GT(checks, 0u);
    ASSERT_EQ("", dirty_fault(&hc, nd, n)) << "round " << round << ", after the race";
    gpufs_gnode_drop_dirty(&hc.c, nd);
    ASSERT_EQ("", dirty_fault(&hc, nd, n)) << "round " << round << ", after the last drop";
    for (uint32_t k = 0; k < GPUFS_DLISTS; k++) ASSERT_EQ(GPUFS_NIL, nd->dheads[k]) << "list " << k;
    for (uint32_t f = 0; f < kFrames; f++) {
      ASSERT_EQ(0u, hc.word(f) & (GPUFS_PG_DIRTY | GPUFS_PG_WB | GPUFS_PG_PINS)) << "frame " << f;
      ASSERT_FALSE(has_bits(&hc, f)) << "frame " << f;
    }
  }
  /* grains 1..4 of frame 9 (bytes 100..300), pushed on list 3 */
  write_mark(&hc, nd, n, 9, 100, 300, 3);
  ASSERT_EQ("", dirty_fault(&hc, nd, n));
  EXPECT_EQ(9u, nd->dheads[3]);
  EXPECT_EQ(GPUFS_NIL, hc.frames[9].dnext);
  EXPECT_NE(0u, hc.word(9) & GPUFS_PG_DIRTY);
  EXPECT_EQ(0x1eu, hc.dirty[9 * hc.c.dwords]);
  EXPECT_EQ(0u, hc.dirty[9 * hc.c.dwords + 1]);
  gpufs_gnode_drop_dirty(&hc.c, nd);
  EXPECT_EQ(GPUFS_NIL, nd->dheads[3]);
  EXPECT_EQ(0u, hc.word(9) & (GPUFS_PG_DIRTY | GPUFS_PG_WB | GPUFS_PG_PINS));
  EXPECT_FALSE(has_bits(&hc, 9));
}

} // namespace
