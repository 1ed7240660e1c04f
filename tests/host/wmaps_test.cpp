/*
 * wmaps_test.cpp - libgpufs/common/wmaps.h, the table of live writable
 * mappings, on host threads (ThreadSanitizer).
 *
 * The table is built in host memory as wmaps_init (instance.c) builds
 * it on the GPU: cap zeroed records, lock and live words 0.  A record is
 * one (off, size, entry) with a count; a find of (off, size) answers the
 * entry of any record of it.  Checked:
 *   - a long random sequence of adds, finds and takes agrees with a model
 *     (count per record; some (off, size) held through two entries) after
 *     every step, in tables small enough that probe runs wrap past the
 *     last slot and deletions shift records, and an add of a new record
 *     past cap / 2 records is -ENOMEM and changes nothing;
 *   - keys that share a home slot, or have neighbouring ones around the
 *     wrap, are all found whatever the order of their adds and takes (the
 *     backward shift moves exactly the records whose home the hole does
 *     not separate from them);
 *   - threads that add and take mappings of their own keys and of shared
 *     keys never see a mapping they hold go missing, and the counts at the
 *     end are what they did; a checker that takes the lock sees a
 *     well-formed table.
 * The structure is checked directly (table_fault): every record is
 * reachable from its home slot without crossing an empty one, no record is
 * twice, every count > 0, and live is the number of records.
 */
#include <gtest/gtest.h>

#include <errno.h>
#include <string.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "libgpufs/common/wmaps.h"
#include "tests/host/stress_util.h"

namespace {

using gpufs_test::failure;
using gpufs_test::mix64;
using gpufs_test::watchdog;

/* A struct gpufs_wmaps in host memory (see the top). */
struct host_wmaps {
  std::vector<struct gpufs_wmap> recs;
  uint32_t lock;
  uint32_t live;
  struct gpufs_wmaps m;
};

void wmaps_init(struct host_wmaps *h, uint32_t cap)
{
  h->recs.assign(cap, gpufs_wmap{});
  h->lock = 0;
  h->live = 0;
  h->m.recs = h->recs.data();
  h->m.lock = &h->lock;
  h->m.live = &h->live;
  h->m.cap = cap;
  h->m.pad = 0;
}

/* One record: a mapping's (off, size) and the entry it holds. */
struct wkey {
  uint64_t off;
  uint32_t size;
  uint32_t entry;
};

typedef std::tuple<uint64_t, uint32_t, uint32_t> rec_id;
typedef std::map<rec_id, uint32_t> count_model; /* live mappings per record */

rec_id id_of(const struct wkey *k) { return rec_id(k->off, k->size, k->entry); }

/* The home slot of k: records store off + 1 (0 is an empty record). */
uint32_t home_of(const struct gpufs_wmaps *m, const struct wkey *k)
{
  return gpufs_wmap_slot(m, k->off + 1, k->size);
}

/* The slot of record k, or GPUFS_NIL.  Single thread or under the lock. */
uint32_t slot_of(const struct gpufs_wmaps *m, const struct wkey *k)
{
  for (uint32_t i = 0; i < m->cap; i++) {
    const struct gpufs_wmap *r = &m->recs[i];
    if (r->off == k->off + 1 && r->size == k->size && r->entry == k->entry) return i;
  }
  return GPUFS_NIL;
}

uint32_t count_of(const struct gpufs_wmaps *m, const struct wkey *k)
{
  uint32_t i = slot_of(m, k);
  return i == GPUFS_NIL ? 0 : m->recs[i].count;
}

/* What is wrong with the table's structure, or "".  Single thread or under
 * the lock. */
std::string table_fault(const struct gpufs_wmaps *m)
{
  const uint32_t mask = m->cap - 1;
  std::set<rec_id> seen;
  uint32_t used = 0;
  for (uint32_t i = 0; i < m->cap; i++) {
    const struct gpufs_wmap *r = &m->recs[i];
    if (r->off == 0) continue;
    used++;
    if (r->count == 0) return "slot " + std::to_string(i) + ": a record with count 0";
    if (!seen.insert(rec_id(r->off, r->size, r->entry)).second)
      return "slot " + std::to_string(i) + ": a record twice";
    const uint32_t h = gpufs_wmap_slot(m, r->off, r->size);
    for (uint32_t j = h; j != i; j = (j + 1) & mask)
      if (m->recs[j].off == 0)
        return "slot " + std::to_string(i) + " (home " + std::to_string(h) + "): hole at " +
               std::to_string(j) + " hides it";
  }
  const uint32_t live = gpufs_ld_relaxed_u32_dev(m->live);
  if (used != live) return "live " + std::to_string(live) + ", records " + std::to_string(used);
  return "";
}

/* Whether a find of (off, size) may answer e: the entry of a live record
 * of (off, size), or GPUFS_NIL when there is none. */
bool find_ok(const count_model &model, uint64_t off, uint32_t size, uint32_t e)
{
  auto it = model.lower_bound(rec_id(off, size, 0));
  const bool any = it != model.end() && std::get<0>(it->first) == off && std::get<1>(it->first) == size;
  return e == GPUFS_NIL ? !any : model.count(rec_id(off, size, e)) != 0;
}

/* Every record of recs[] against the model: its count (0: absent), and
 * what a find of its (off, size) answers; the structure; live.  "" when
 * all agree. */
std::string model_fault(struct host_wmaps *h, const std::vector<struct wkey> &recs, const count_model &model)
{
  std::string f = table_fault(&h->m);
  if (!f.empty()) return f;
  if (h->live != model.size())
    return "live " + std::to_string(h->live) + ", model " + std::to_string(model.size());
  for (size_t i = 0; i < recs.size(); i++) {
    const struct wkey *k = &recs[i];
    const uint32_t got = gpufs_wmap_find(&h->m, k->off, k->size, 0);
    if (!find_ok(model, k->off, k->size, got))
      return "record " + std::to_string(i) + ": its (off, size) found entry " + std::to_string(got);
    auto it = model.find(id_of(k));
    const uint32_t n = it == model.end() ? 0 : it->second;
    if (count_of(&h->m, k) != n)
      return "record " + std::to_string(i) + ": count " + std::to_string(count_of(&h->m, k)) + ", want " +
             std::to_string(n);
  }
  return "";
}

/* Add one mapping of record k as the model says it must go: 0, or
 * -ENOMEM for a new record past cap / 2 records, which changes nothing.
 * "" when it went so. */
std::string add_checked(struct host_wmaps *h, count_model &model, const struct wkey *k)
{
  const bool fits = model.count(id_of(k)) != 0 || model.size() < h->m.cap / 2;
  const std::vector<struct gpufs_wmap> before = h->recs;
  const int rc = gpufs_wmap_add(&h->m, k->off, k->size, k->entry);
  if (fits) {
    model[id_of(k)]++;
    return rc == 0 ? "" : "add failed: " + std::to_string(rc);
  }
  if (rc != -ENOMEM) return "a new record past cap / 2: " + std::to_string(rc);
  if (memcmp(before.data(), h->recs.data(), h->m.cap * sizeof(struct gpufs_wmap)) != 0)
    return "a refused add changed the table";
  return "";
}

/* Find (take) a mapping of (off, size); the entry must be one the model
 * allows, and a take ends one mapping of that record.  "" when so. */
std::string find_checked(struct host_wmaps *h, count_model &model, uint64_t off, uint32_t size, int take)
{
  const uint32_t got = gpufs_wmap_find(&h->m, off, size, take);
  if (!find_ok(model, off, size, got)) return "found entry " + std::to_string(got);
  if (take && got != GPUFS_NIL && --model[rec_id(off, size, got)] == 0) model.erase(rec_id(off, size, got));
  return "";
}

/* nkeys distinct (off, size): cache offsets of mappings (some sharing an
 * offset with another size, two at offset 0), an entry each; every third
 * also through a second entry (another descriptor of the file). */
std::vector<struct wkey> make_recs(uint32_t nkeys, uint64_t seed)
{
  static const uint32_t sizes[] = {64, 100, 4096};
  std::vector<struct wkey> keys = {{0, 64, 1000}, {0, 4096, 1001}};
  std::set<std::pair<uint64_t, uint32_t>> seen = {{0, 64}, {0, 4096}};
  for (uint64_t x = seed; keys.size() < nkeys;) {
    x = mix64(x + 1);
    struct wkey k = {(x % 256) * 4096 + ((x >> 8) % 64) * 64, sizes[(x >> 16) % 3],
                     1000 + (uint32_t)keys.size()};
    if (seen.insert({k.off, k.size}).second) keys.push_back(k);
  }
  std::vector<struct wkey> recs = keys;
  for (size_t i = 0; i < keys.size(); i += 3)
    recs.push_back({keys[i].off, keys[i].size, keys[i].entry + 500});
  return recs;
}

/* Records of size 192 (no record of make_recs has it) whose home slots
 * are the ones asked for, in that order. */
std::vector<struct wkey> keys_at_homes(const struct gpufs_wmaps *m, const std::vector<uint32_t> &homes)
{
  std::vector<struct wkey> out(homes.size(), wkey{0, 0, 0});
  size_t found = 0;
  for (uint64_t i = 1; found < homes.size(); i++) {
    struct wkey k = {i * 64, 192, 0};
    for (size_t j = 0; j < homes.size(); j++) {
      if (out[j].size != 0 || home_of(m, &k) != homes[j]) continue;
      k.entry = 2000 + (uint32_t)j;
      out[j] = k;
      found++;
      break;
    }
  }
  return out;
}

/* (a) Random adds, finds and takes against a model; the table is filled to
 * cap / 2 records and drained again in phases, so it is often full (adds
 * of new records must fail and change nothing) and its runs often wrap. */
void random_ops(uint32_t cap, uint32_t steps, uint64_t seed)
{
  struct host_wmaps h;
  wmaps_init(&h, cap);
  /* cap / 2 keys, a third of them through two entries, and three keys
   * homed at the end and the start of the table so that runs cross the
   * wrap: more records than the table takes */
  std::vector<struct wkey> recs = make_recs(cap / 2, seed);
  for (const struct wkey &w : keys_at_homes(&h.m, {cap - 1, cap - 1, 0})) recs.push_back(w);
  count_model model;
  uint64_t nomem = 0, wrapped = 0, shifted = 0, x = seed;
  for (uint32_t step = 0; step < steps; step++) {
    x = mix64(x + step);
    const struct wkey *k = &recs[x % recs.size()];
    const uint32_t add_pct = (step / 300) % 2 ? 75 : 25;
    const uint32_t r = (uint32_t)((x >> 32) % 100);
    if (r < add_pct) {
      nomem += model.count(id_of(k)) == 0 && model.size() >= cap / 2;
      ASSERT_EQ("", add_checked(&h, model, k)) << "cap " << cap << " step " << step;
    } else {
      std::vector<uint32_t> at(recs.size());
      for (size_t i = 0; i < recs.size(); i++) at[i] = slot_of(&h.m, &recs[i]);
      const size_t live = model.size();
      ASSERT_EQ("", find_checked(&h, model, k->off, k->size, r < 90)) << "cap " << cap << " step " << step;
      if (model.size() < live)
        for (size_t i = 0; i < recs.size(); i++)
          if (at[i] != GPUFS_NIL && model.count(id_of(&recs[i])) != 0 &&
              at[i] != slot_of(&h.m, &recs[i]))
            shifted++;
    }
    for (const struct wkey &o : recs) {
      const uint32_t s = slot_of(&h.m, &o);
      if (s != GPUFS_NIL && s < home_of(&h.m, &o)) wrapped++;
    }
    ASSERT_EQ("", model_fault(&h, recs, model)) << "cap " << cap << " step " << step;
  }
  /* the sequence did what the test is for */
  EXPECT_GT(nomem, 0u) << "cap " << cap;
  EXPECT_GT(wrapped, 0u) << "cap " << cap;
  EXPECT_GT(shifted, 0u) << "cap " << cap;
}

TEST(Wmaps, RandomOpsMatchAModel)
{
  random_ops(16, 40000, 1);
  random_ops(64, 20000, 2);
}

TEST(Wmaps, EmptyTableSkipsTheLock)
{
  /* gmunmap of a read-only mapping while no writable one is live must not
   * wait for the lock: the test holds it */
  struct host_wmaps h;
  wmaps_init(&h, 16);
  h.lock = 1;
  EXPECT_EQ(GPUFS_NIL, gpufs_wmap_find(&h.m, 4096, 64, 0));
  EXPECT_EQ(GPUFS_NIL, gpufs_wmap_find(&h.m, 4096, 64, 1));
  h.lock = 0;
  EXPECT_EQ(0, gpufs_wmap_add(&h.m, 4096, 64, 7));
  EXPECT_EQ(GPUFS_NIL, gpufs_wmap_find(&h.m, 4096, 65, 0)) << "another size is another key";
  EXPECT_EQ(GPUFS_NIL, gpufs_wmap_find(&h.m, 4160, 64, 0)) << "another offset is another key";
  EXPECT_EQ(7u, gpufs_wmap_find(&h.m, 4096, 64, 1));
  EXPECT_EQ(0u, h.live);
  EXPECT_EQ(0u, h.lock);
}

/* (b) Collisions: records of one home slot, and runs that cross the end
 * of the table, under deletions in every order.  First two exact layouts
 * (a record that must move across the wrap, one that must stay), then
 * random orders of adds and takes of cap / 2 keys with homes at the wrap,
 * some through two entries. */
TEST(Wmaps, CollidingKeysShiftAcrossTheWrap)
{
  struct host_wmaps h;
  wmaps_init(&h, 16);
  const struct gpufs_wmaps *m = &h.m;

  /* A and B home at 15, C at 0: A@15 B@0 C@1.  Taking A moves B back to
   * 15 (its home) and C to 0 (its home). */
  std::vector<struct wkey> k = keys_at_homes(m, {15, 15, 0});
  for (const struct wkey &w : k) ASSERT_EQ(0, gpufs_wmap_add(m, w.off, w.size, w.entry));
  ASSERT_EQ(15u, slot_of(m, &k[0]));
  ASSERT_EQ(0u, slot_of(m, &k[1]));
  ASSERT_EQ(1u, slot_of(m, &k[2]));
  ASSERT_EQ(k[0].entry, gpufs_wmap_find(m, k[0].off, k[0].size, 1));
  EXPECT_EQ(15u, slot_of(m, &k[1])) << "B moves back across the wrap";
  EXPECT_EQ(0u, slot_of(m, &k[2])) << "C moves to its home";
  EXPECT_EQ("", table_fault(m));
  ASSERT_EQ(k[1].entry, gpufs_wmap_find(m, k[1].off, k[1].size, 1));
  ASSERT_EQ(k[2].entry, gpufs_wmap_find(m, k[2].off, k[2].size, 1));
  ASSERT_EQ(0u, h.live);

  /* X homes at 15, Y and Z at 0: X@15 Y@0 Z@1.  Taking X leaves Y and Z
   * where they are: the hole at 15 is before their home. */
  k = keys_at_homes(m, {15, 0, 0});
  for (const struct wkey &w : k) ASSERT_EQ(0, gpufs_wmap_add(m, w.off, w.size, w.entry));
  ASSERT_EQ(k[0].entry, gpufs_wmap_find(m, k[0].off, k[0].size, 1));
  EXPECT_EQ(0u, slot_of(m, &k[1])) << "Y stays at its home";
  EXPECT_EQ(1u, slot_of(m, &k[2])) << "Z stays";
  EXPECT_EQ(GPUFS_NIL, slot_of(m, &k[0]));
  EXPECT_EQ(0u, h.recs[15].off);
  EXPECT_EQ("", table_fault(m));
  ASSERT_EQ(k[2].entry, gpufs_wmap_find(m, k[2].off, k[2].size, 1));
  ASSERT_EQ(k[1].entry, gpufs_wmap_find(m, k[1].off, k[1].size, 1));
  ASSERT_EQ(0u, h.live);

  /* cap / 2 keys, all of one home at the end, or spread over the homes
   * 13..2: every order of adds (a key once, twice, or also through a
   * second entry: then the table fills and adds are refused) and of takes */
  const std::vector<std::vector<uint32_t>> clusters = {
      {15, 15, 15, 15, 15, 15, 15, 15}, {14, 14, 15, 15, 0, 0, 1, 13}, {13, 15, 0, 15, 1, 14, 0, 2}};
  const struct wkey extra = {1ull << 30, 64, 2999}; /* in no cluster */
  uint64_t x = 99;
  for (const std::vector<uint32_t> &homes : clusters) {
    const std::vector<struct wkey> ck = keys_at_homes(m, homes);
    std::vector<struct wkey> all = ck;
    for (const struct wkey &w : ck) all.push_back({w.off, w.size, w.entry + 500});
    all.push_back(extra);
    for (int round = 0; round < 400; round++) {
      count_model model;
      std::vector<struct wkey> order;
      for (const struct wkey &w : ck) {
        order.push_back(w);
        x = mix64(x);
        if (x % 4 == 0) order.push_back(w);
        if (x % 4 == 1) order.push_back({w.off, w.size, w.entry + 500});
      }
      for (size_t i = order.size(); i > 1; i--) std::swap(order[i - 1], order[(x = mix64(x)) % i]);
      std::vector<struct wkey> added;
      for (const struct wkey &w : order) {
        const bool fits = model.count(id_of(&w)) != 0 || model.size() < 8;
        ASSERT_EQ("", add_checked(&h, model, &w)) << "round " << round;
        if (fits) added.push_back(w);
        ASSERT_EQ("", model_fault(&h, all, model)) << "round " << round << " add " << w.off;
      }
      if (model.size() == 8) {
        ASSERT_EQ("", add_checked(&h, model, &extra)) << "cap / 2 records live";
      }
      for (size_t i = added.size(); i > 1; i--) std::swap(added[i - 1], added[(x = mix64(x)) % i]);
      for (const struct wkey &w : added) {
        ASSERT_EQ("", find_checked(&h, model, w.off, w.size, 1)) << "round " << round;
        ASSERT_EQ("", model_fault(&h, all, model)) << "round " << round << " take " << w.off;
      }
      ASSERT_EQ(0u, h.live);
    }
  }
}

/* (c) Threads: each adds and takes mappings of its own keys (through its
 * own entry) and of keys every thread shares (through one of two entries,
 * as two descriptors of one file), in random order, counting the mappings
 * of each key it holds, what it added per record, and which records its
 * takes ended.  A key it holds is always found, with an entry of that key;
 * an add of one of its own keys it holds never fails (only a new record
 * may find the table full); its own keys it does not hold are never
 * found.  A checker takes the lock and checks the structure.  At the end
 * every record's count is what the threads added less what they took, and
 * taking every mapping still held empties the table. */
void stress(uint32_t cap, const char *name)
{
  watchdog dog(name);
  constexpr uint32_t kThreads = 8, kOwn = 4, kShared = 8, kIters = 50000;
  struct host_wmaps h;
  wmaps_init(&h, cap);
  std::vector<struct wkey> keys = make_recs(kThreads * kOwn + kShared, cap);
  keys.resize(kThreads * kOwn + kShared); /* one record each; shared keys get a second entry below */
  const uint32_t kAlt = 500;
  failure fl;
  std::atomic<uint32_t> left{kThreads};
  std::atomic<uint64_t> nomem{0};
  /* per thread: mappings held per key; per record (key, alt): added - taken */
  std::vector<std::vector<uint32_t>> held(kThreads, std::vector<uint32_t>(keys.size(), 0));
  std::vector<std::vector<int64_t>> net(kThreads, std::vector<int64_t>(2 * keys.size(), 0));
  std::vector<std::thread> th;
  for (uint32_t t = 0; t < kThreads; t++) {
    th.emplace_back([&, t] {
      std::vector<uint32_t> &mine = held[t];
      std::vector<int64_t> &mynet = net[t];
      uint64_t x = mix64(t + 1);
      for (uint32_t it = 0; it < kIters && !fl.any; it++) {
        x = mix64(x + it);
        /* half the time one of its own keys, else a shared one */
        const uint32_t i = x % 2 ? t * kOwn + (uint32_t)(x >> 8) % kOwn
                                 : kThreads * kOwn + (uint32_t)(x >> 8) % kShared;
        const bool own = i < kThreads * kOwn;
        const struct wkey *k = &keys[i];
        const uint32_t alt = own ? 0 : t % 2; /* shared: the thread's descriptor of the file */
        const uint32_t r = (uint32_t)(x >> 32) % 100;
        if (r < 45 && mine[i] < 3) {
          const int rc = gpufs_wmap_add(&h.m, k->off, k->size, k->entry + alt * kAlt);
          if (rc == 0) {
            mine[i]++;
            mynet[2 * i + alt]++;
          } else if (rc != -ENOMEM || (own && mine[i] != 0)) {
            fl.report("add of a held record failed: " + std::to_string(rc));
          } else {
            nomem++;
          }
        } else if (r < 85 && mine[i] > 0) {
          const uint32_t e = gpufs_wmap_find(&h.m, k->off, k->size, 1);
          if (e != k->entry && (own || e != k->entry + kAlt)) {
            fl.report("a held mapping was lost: found " + std::to_string(e));
          } else {
            mine[i]--;
            mynet[2 * i + (e != k->entry)]--;
          }
        } else {
          const uint32_t e = gpufs_wmap_find(&h.m, k->off, k->size, 0);
          if (mine[i] > 0 && e == GPUFS_NIL) fl.report("a held mapping was not found");
          if (mine[i] == 0 && own && e != GPUFS_NIL) fl.report("found an own key that is not held");
          if (e != GPUFS_NIL && e != k->entry && (own || e != k->entry + kAlt))
            fl.report("found another key's entry");
        }
      }
      left--;
    });
  }
  th.emplace_back([&] {
    while (left > 0 && !fl.any) {
      gpufs_spin_lock(h.m.lock, GPUFS_PAUSE_MAX_NS);
      std::string f = table_fault(&h.m);
      gpufs_spin_unlock(h.m.lock);
      if (!f.empty()) fl.report(f);
      std::this_thread::yield();
    }
  });
  for (auto &t : th) t.join();
  ASSERT_FALSE(fl.any) << fl.first;
  ASSERT_EQ("", table_fault(&h.m));
  count_model model;
  for (size_t i = 0; i < keys.size(); i++) {
    for (uint32_t alt = 0; alt < 2; alt++) {
      int64_t sum = 0;
      for (uint32_t t = 0; t < kThreads; t++) sum += net[t][2 * i + alt];
      const struct wkey rec = {keys[i].off, keys[i].size, keys[i].entry + alt * kAlt};
      EXPECT_EQ(sum, (int64_t)count_of(&h.m, &rec)) << "key " << i << " entry " << rec.entry;
      if (sum > 0) model[id_of(&rec)] = (uint32_t)sum;
    }
  }
  EXPECT_EQ(model.size(), h.live);
  for (uint32_t t = 0; t < kThreads; t++)
    for (size_t i = 0; i < keys.size(); i++)
      for (; held[t][i] > 0; held[t][i]--)
        ASSERT_EQ("", find_checked(&h, model, keys[i].off, keys[i].size, 1)) << "key " << i;
  EXPECT_TRUE(model.empty());
  EXPECT_EQ(0u, h.live);
  for (uint32_t s = 0; s < cap; s++) EXPECT_EQ(0u, h.recs[s].off) << "slot " << s;
  EXPECT_EQ(0u, h.lock);
  if (keys.size() + kShared > cap / 2) {
    EXPECT_GT(nomem.load(), 0u) << "the table never filled";
  }
}

TEST(Wmaps, StressThreadsCountEveryMapping) { stress(128, "Wmaps.StressThreadsCountEveryMapping"); }

/* 48 records, room for 32: adds of new records race with takes for the
 * room. */
TEST(Wmaps, StressThreadsOnAFullTable) { stress(64, "Wmaps.StressThreadsOnAFullTable"); }

} // namespace
