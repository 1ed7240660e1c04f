/*
 * pinner_test.cpp - automatic pins without a GPU (libgpufs/host/pinner.h,
 * hostfiles.h): which opens hint a pin (a read-only regular file's opens
 * after its first, once until released or declined), the pinner placing
 * pins within its budget (releasing the least recently used automatic pin
 * of a file no hfid has open, never one that is open or being pinned), a
 * first open that reads more than its file earning the pin,
 * many hints for one
 * file making one pin, windows published as a growing prefix, the mapping
 * given to opens and to descriptors opened before the pin, a host
 * truncation while pinned, and a file rewritten while being pinned.
 * The pin hooks here record calls instead of pinning; the mappings are
 * real (the test reads the file's bytes through them).
 */
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <ctime>
#include <fcntl.h>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "daemon_fixture.h"
#include "libgpufs/common/queue.h"
#include "libgpufs/host/fileops.h"
#include "libgpufs/host/hostfiles.h"
#include "libgpufs/host/pinner.h"

using namespace gpufs_test;

namespace {

constexpr uint64_t kPage = 4096;

/* Pin hooks that record what is pinned now. */
struct FakePins {
  std::mutex lock;
  std::set<void *> pinned;
  std::atomic<int> pins{0}, unpins{0}, fail{0};
  std::string rewrite; /* set: the pin rewrites this file (new bytes, same size) */
  std::function<void(int)> before; /* set: called with the pin's number (from 0) */
  static int pin(void *ctx, void *addr, uint64_t len)
  {
    auto *f = static_cast<FakePins *>(ctx);
    if (f->before) f->before(f->pins.load());
    if (f->fail.load()) return -ENOMEM;
    if (!f->rewrite.empty()) {
      EXPECT_EQ(0, write_pattern_file(f->rewrite, len, 99));
      const struct timespec later[2] = {{0, UTIME_OMIT}, {time(nullptr) + 5, 0}};
      EXPECT_EQ(0, utimensat(AT_FDCWD, f->rewrite.c_str(), later, 0));
    }
    std::lock_guard<std::mutex> g(f->lock);
    EXPECT_TRUE(f->pinned.insert(addr).second) << "pinned twice";
    f->pins++;
    return 0;
  }
  static void unpin(void *ctx, void *addr, uint64_t)
  {
    auto *f = static_cast<FakePins *>(ctx);
    std::lock_guard<std::mutex> g(f->lock);
    EXPECT_EQ(1u, f->pinned.erase(addr)) << "unpinned what was not pinned";
    f->unpins++;
  }
  gpufs_pin_ops ops() { return gpufs_pin_ops{pin, unpin, this}; }
};

struct Pinner : ::testing::Test {
  TempDir dir;
  gpufs_io_ops io{};
  gpufs_hostfiles *hf = nullptr;
  gpufs_pinner *pn = nullptr;
  FakePins fake;
  void SetUp() override
  {
    gpufs_io_defaults(&io);
    ASSERT_EQ(0, gpufs_hostfiles_create(16, &io, &hf));
  }
  void start(uint64_t budget)
  {
    const gpufs_pin_ops ops = fake.ops();
    ASSERT_EQ(0, gpufs_pinner_start(hf, budget, &ops, &pn));
  }
  void TearDown() override
  {
    gpufs_pinner_stop(pn);
    gpufs_hostfile_reg r;
    const gpufs_pin_ops ops = fake.ops();
    while (gpufs_hostfiles_reg_pop(hf, &r) == 0) gpufs_reg_release(&ops, &r);
    EXPECT_TRUE(fake.pinned.empty()) << "every pin released";
    gpufs_hostfiles_destroy(hf);
  }
  std::string make(const std::string &name, uint64_t size, uint64_t seed)
  {
    std::string p = dir.file(name);
    EXPECT_EQ(0, write_pattern_file(p, size, seed));
    return p;
  }
  int open_id(const std::string &p, gpufs_hostfile_id *id, int flags = O_RDONLY)
  {
    *id = gpufs_hostfile_id{};
    return gpufs_hostfiles_open(hf, p.c_str(), flags, 0, 0, id);
  }
  /* Open p, close it again; its id's pin_hint, or -1 on an error. */
  int open_close_hint(const std::string &p, int flags = O_RDONLY)
  {
    gpufs_hostfile_id id;
    const int h = open_id(p, &id, flags);
    if (h < 0) return -1;
    EXPECT_EQ(0, gpufs_hostfiles_close(hf, h));
    return (int)id.pin_hint;
  }
  /* What a worker does with a hint: a dup of the open's descriptor. */
  void hint(const std::string &p)
  {
    int fd = open(p.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    gpufs_pinner_hint(pn, fd);
  }
  gpufs_hostfile_regstats regstats()
  {
    gpufs_hostfile_regstats s{};
    gpufs_hostfiles_reg_stats(hf, &s);
    return s;
  }
};

TEST_F(Pinner, ReadOnlyOpensAfterTheFirstHintOnce)
{
  const std::string a = make("a", 3 * kPage, 1), w = make("w", 3 * kPage, 2), tiny = make("tiny", 100, 3);
  EXPECT_EQ(GPUFS_PIN_HINT_NONE, open_close_hint(a)) << "a file read once does not repay a pin";
  EXPECT_EQ(GPUFS_PIN_HINT_EARNED, open_close_hint(a)) << "opened again";
  EXPECT_EQ(0, open_close_hint(a)) << "hinted once";
  EXPECT_EQ(0, open_close_hint(w, O_RDWR));
  EXPECT_EQ(0, open_close_hint(w, O_RDWR)) << "a file opened for writing is not pinned";
  EXPECT_EQ(0, open_close_hint(tiny));
  EXPECT_EQ(0, open_close_hint(tiny)) << "nothing to map below 4 KiB";
  struct stat st;
  ASSERT_EQ(0, stat(a.c_str(), &st));
  gpufs_hostfiles_pin_declined(hf, (uint64_t)st.st_dev, (uint64_t)st.st_ino);
  EXPECT_EQ(GPUFS_PIN_HINT_EARNED, open_close_hint(a)) << "a declined pin may be hinted again";
}

/* A first open that reads more than its file (pages went to the GPU
 * before: read again) earns the file a pin, once, for the one READ that
 * crosses the size, however many workers read at once; an open for
 * writing or of a file already asked for never does. */
TEST_F(Pinner, ReadingMoreThanTheFileInOneOpenEarnsAPin)
{
  const uint64_t size = 64 * kPage;
  const std::string a = make("a", size, 91), w = make("w", size, 92);
  gpufs_hostfile_id id;
  const int h = open_id(a, &id);
  ASSERT_GE(h, 0);
  EXPECT_EQ(GPUFS_PIN_HINT_NONE, (int)id.pin_hint);
  EXPECT_EQ(size + 1, id.reread_at);
  std::atomic<int> earned{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < 8; t++)
    ts.emplace_back([&] {
      for (int i = 0; i < 8; i++) earned += gpufs_hostfiles_read_again(hf, h, kPage);
    });
  for (auto &t : ts) t.join();
  EXPECT_EQ(0, earned.load()) << "every page once: the file's size, not more";
  for (int t = 0; t < 8; t++)
    ts[t] = std::thread([&] {
      for (int i = 0; i < 8; i++) earned += gpufs_hostfiles_read_again(hf, h, kPage);
    });
  for (auto &t : ts) t.join();
  EXPECT_EQ(1, earned.load()) << "read again: one READ earns the pin";
  EXPECT_EQ(0, open_close_hint(a)) << "asked for already";
  EXPECT_EQ(0, gpufs_hostfiles_close(hf, h));
  const int hw = open_id(w, &id, O_RDWR);
  ASSERT_GE(hw, 0);
  EXPECT_EQ(0u, id.reread_at) << "an open for writing earns nothing";
  EXPECT_EQ(0, gpufs_hostfiles_read_again(hf, hw, 2 * size));
  EXPECT_EQ(0, gpufs_hostfiles_close(hf, hw));
}

/* A file that an acquire found changed is not pinned automatically: not
 * by a descriptor that reads the changed pages again (more than the file
 * in all), nor by a later open; an acquire that found nothing changed
 * keeps the rule as it was. */
TEST_F(Pinner, AFileChangedUnderAnAcquireEarnsNoPin)
{
  const uint64_t size = 16 * kPage;
  const std::string a = make("a", size, 93), b = make("b", size, 94);
  struct stat sa, sb;
  ASSERT_EQ(0, stat(a.c_str(), &sa));
  ASSERT_EQ(0, stat(b.c_str(), &sb));
  gpufs_hostfile_id id;
  const int ha = open_id(a, &id), hb = open_id(b, &id);
  ASSERT_GE(ha, 0);
  ASSERT_GE(hb, 0);
  EXPECT_EQ(0, gpufs_hostfiles_read_again(hf, ha, size)) << "read once";
  EXPECT_EQ(0, gpufs_hostfiles_read_again(hf, hb, size));
  gpufs_hostfiles_acquired(hf, &sa, 3); /* three pages of a changed */
  gpufs_hostfiles_acquired(hf, &sb, 0); /* b unchanged */
  EXPECT_EQ(0, gpufs_hostfiles_read_again(hf, ha, 3 * kPage)) << "the changed pages read again";
  EXPECT_EQ(0, open_close_hint(a)) << "nor a later open";
  EXPECT_EQ(1, gpufs_hostfiles_read_again(hf, hb, kPage)) << "an unchanged file: read again";
  EXPECT_EQ(0, gpufs_hostfiles_close(hf, ha));
  EXPECT_EQ(0, gpufs_hostfiles_close(hf, hb));
}

/* A pin reaches the opens after it, and descriptors opened before it
 * through their entry's word; the mapping holds the file's bytes. */
TEST_F(Pinner, PinsAFileAndBothNewAndOpenDescriptorsLearnIt)
{
  const uint64_t size = 5 * kPage + 123;
  const std::string a = make("a", size, 11);
  start(1ull << 30);
  gpufs_hostfile_id id;
  const int early = open_id(a, &id);
  ASSERT_GE(early, 0);
  EXPECT_EQ(0ull, id.reg);
  EXPECT_EQ(0ull, gpufs_hostfiles_reg_word(hf, early));
  hint(a);
  gpufs_pinner_drain(pn);
  gpufs_hostfile_regstats s = regstats();
  EXPECT_EQ(1u, s.files);
  EXPECT_EQ(1u, s.auto_made);
  EXPECT_EQ(6 * kPage, s.bytes);
  EXPECT_EQ(1, fake.pins.load());
  const uint64_t w = gpufs_hostfiles_reg_word(hf, early);
  ASSERT_NE(0ull, w) << "the descriptor opened before the pin learns it";
  EXPECT_EQ(5 * kPage, gpufs_reg_len(w)) << "whole 4 KiB pages only";
  const uint8_t *m = reinterpret_cast<const uint8_t *>(gpufs_reg_addr(w));
  EXPECT_EQ(-1, first_mismatch(m, size, 11, 0)) << "the mapping is the file";
  const int late = open_id(a, &id);
  ASSERT_GE(late, 0);
  EXPECT_EQ(w, id.reg) << "an open after the pin gets it";
  EXPECT_EQ(0u, id.pin_hint) << "a pinned file is not hinted";
  EXPECT_EQ(0, gpufs_hostfiles_close(hf, early));
  EXPECT_EQ(0, gpufs_hostfiles_close(hf, late));
}

/* Budget for two of three files: the third evicts the least recently
 * used pin; a pin whose file is open is never evicted. */
TEST_F(Pinner, ReleasesTheLeastRecentlyUsedPinOfAClosedFile)
{
  const std::string a = make("a", 4 * kPage, 21), b = make("b", 4 * kPage, 22), c = make("c", 4 * kPage, 23);
  start(8 * kPage);
  hint(a);
  gpufs_pinner_drain(pn);
  hint(b);
  gpufs_pinner_drain(pn);
  ASSERT_EQ(2u, regstats().files);
  gpufs_hostfile_id id;
  int h = open_id(a, &id); /* a used after b: b is the least recent */
  ASSERT_GE(h, 0);
  EXPECT_NE(0ull, id.reg);
  EXPECT_EQ(0, gpufs_hostfiles_close(hf, h));
  hint(c);
  gpufs_pinner_drain(pn);
  gpufs_hostfile_regstats s = regstats();
  EXPECT_EQ(2u, s.files);
  EXPECT_EQ(8 * kPage, s.bytes) << "never above the budget";
  EXPECT_EQ(3u, s.auto_made);
  EXPECT_EQ(1u, s.auto_released);
  EXPECT_EQ(1, fake.unpins.load());
  struct stat sa, sb, sc;
  ASSERT_EQ(0, stat(a.c_str(), &sa));
  ASSERT_EQ(0, stat(b.c_str(), &sb));
  ASSERT_EQ(0, stat(c.c_str(), &sc));
  EXPECT_TRUE(gpufs_hostfiles_reg_has(hf, sa.st_dev, sa.st_ino));
  EXPECT_FALSE(gpufs_hostfiles_reg_has(hf, sb.st_dev, sb.st_ino)) << "b was the least recently used";
  EXPECT_TRUE(gpufs_hostfiles_reg_has(hf, sc.st_dev, sc.st_ino));

  /* a and c open: nothing can be evicted, so b is declined, and its
   * opens may hint it again */
  const int ha = open_id(a, &id), hc = open_id(c, &id);
  ASSERT_GE(ha, 0);
  ASSERT_GE(hc, 0);
  hint(b);
  gpufs_pinner_drain(pn);
  EXPECT_FALSE(gpufs_hostfiles_reg_has(hf, sb.st_dev, sb.st_ino)) << "no room: open files keep their pins";
  EXPECT_EQ(2u, regstats().files);
  EXPECT_EQ(GPUFS_PIN_HINT_NONE, open_close_hint(b)) << "b's first open (the hints came from elsewhere)";
  EXPECT_EQ(GPUFS_PIN_HINT_EARNED, open_close_hint(b)) << "declined: hinted again";
  EXPECT_EQ(0, gpufs_hostfiles_close(hf, ha));
  EXPECT_EQ(0, gpufs_hostfiles_close(hf, hc));
}

/* Many workers hint one file at once: one pin, no descriptor leaked. */
TEST_F(Pinner, ManyHintsForOneFileMakeOnePin)
{
  const std::string a = make("a", 16 * kPage, 31);
  start(1ull << 30);
  std::vector<std::thread> ts;
  for (int t = 0; t < 8; t++)
    ts.emplace_back([&] {
      for (int i = 0; i < 8; i++) hint(a);
    });
  for (auto &t : ts) t.join();
  gpufs_pinner_drain(pn);
  EXPECT_EQ(1u, regstats().files);
  EXPECT_EQ(1u, regstats().auto_made);
  EXPECT_EQ(1, fake.pins.load());
}

/* A pin that fails (the hook refuses) is declined: nothing is recorded
 * and the file may be hinted again. */
TEST_F(Pinner, AFailedPinIsDeclined)
{
  const std::string a = make("a", 4 * kPage, 41);
  start(1ull << 30);
  fake.fail = 1;
  EXPECT_EQ(GPUFS_PIN_HINT_NONE, open_close_hint(a));
  EXPECT_EQ(GPUFS_PIN_HINT_EARNED, open_close_hint(a));
  hint(a);
  gpufs_pinner_drain(pn);
  EXPECT_EQ(0u, regstats().files);
  EXPECT_EQ(GPUFS_PIN_HINT_EARNED, open_close_hint(a)) << "declined: hinted again";
  fake.fail = 0;
  hint(a);
  gpufs_pinner_drain(pn);
  EXPECT_EQ(1u, regstats().files);
}

/* The host truncates a pinned file: the next open finds it shorter,
 * retires the pin (no open gets the mapping) and the entries' words are
 * cleared; the pinned pages stay mapped until the pin is released. */
TEST_F(Pinner, AHostTruncationRetiresThePin)
{
  const std::string a = make("a", 8 * kPage, 51);
  start(1ull << 30);
  gpufs_hostfile_id id;
  const int early = open_id(a, &id);
  ASSERT_GE(early, 0);
  hint(a);
  gpufs_pinner_drain(pn);
  ASSERT_NE(0ull, gpufs_hostfiles_reg_word(hf, early));
  ASSERT_EQ(0, truncate(a.c_str(), 3 * kPage));
  const int late = open_id(a, &id);
  ASSERT_GE(late, 0);
  EXPECT_EQ(0ull, id.reg) << "shorter than pinned: retired";
  EXPECT_EQ(0ull, gpufs_hostfiles_reg_word(hf, early)) << "open descriptors stop learning it";
  EXPECT_EQ(1u, regstats().retired);
  EXPECT_EQ(0, gpufs_hostfiles_close(hf, early));
  EXPECT_EQ(0, gpufs_hostfiles_close(hf, late));
}

/* The host rewrites the file while it is being pinned (a truncation and
 * new bytes): the pin is retired and, with no hfid open, released and
 * declined; no open gets it, and a later open may ask again. */
TEST_F(Pinner, AFileChangedDuringThePinIsDeclined)
{
  const std::string a = make("a", 4 * kPage, 52);
  start(1ull << 30);
  EXPECT_EQ(GPUFS_PIN_HINT_NONE, open_close_hint(a));
  EXPECT_EQ(GPUFS_PIN_HINT_EARNED, open_close_hint(a));
  fake.rewrite = a;
  hint(a);
  gpufs_pinner_drain(pn);
  fake.rewrite.clear();
  EXPECT_EQ(0u, regstats().files) << "declined";
  EXPECT_EQ(1, fake.unpins.load()) << "the pin made is released";
  gpufs_hostfile_id id;
  const int h = open_id(a, &id);
  ASSERT_GE(h, 0);
  EXPECT_EQ(0ull, id.reg);
  EXPECT_EQ((uint32_t)GPUFS_PIN_HINT_EARNED, id.pin_hint) << "asked for again";
  EXPECT_EQ(0, gpufs_hostfiles_close(hf, h));
}

/* Hints still waiting at the stop are declined and their descriptors
 * closed; a stop with pins live leaves them in the table. */
TEST_F(Pinner, StopWithHintsWaiting)
{
  std::vector<std::string> files;
  for (int i = 0; i < 6; i++) files.push_back(make("f" + std::to_string(i), 4 * kPage, 60 + i));
  start(1ull << 30);
  for (auto &f : files) hint(f);
  gpufs_pinner_stop(pn);
  pn = nullptr;
  const gpufs_hostfile_regstats s = regstats();
  EXPECT_LE(s.files, 6u);
  EXPECT_EQ(s.files, s.auto_made);
}

/* A file larger than a window is pinned window by window; while the
 * second window is pinned the first one's prefix is already given to
 * opens, and the pin being made (no hfid open) is neither evicted nor
 * removed.  The whole file's word comes last, every window is unpinned at
 * the release. */
TEST_F(Pinner, WindowsPublishAGrowingPrefix)
{
  const uint64_t window = 64ull << 20, size = 2 * window + 5 * kPage + 7;
  const std::string a = make("a", size, 71);
  start(1ull << 30);
  struct stat st;
  ASSERT_EQ(0, stat(a.c_str(), &st));
  uint64_t seen[3] = {1, 1, 1};
  int evict_rc = 0, remove_rc = 0;
  fake.before = [&](int n) {
    if (n > 2) return;
    gpufs_hostfile_id i;
    const int h = open_id(a, &i);
    EXPECT_GE(h, 0);
    seen[n] = gpufs_reg_len(i.reg);
    EXPECT_EQ(0, gpufs_hostfiles_close(hf, h));
    if (n == 1) {
      gpufs_hostfile_reg out;
      evict_rc = gpufs_hostfiles_reg_evict(hf, &out);
      remove_rc = gpufs_hostfiles_reg_remove(hf, (uint64_t)st.st_dev, (uint64_t)st.st_ino, &out);
    }
  };
  hint(a);
  gpufs_pinner_drain(pn);
  fake.before = nullptr;
  EXPECT_EQ(0u, seen[0]) << "nothing readable before the first window";
  EXPECT_EQ(window, seen[1]) << "the first window is readable while the second is pinned";
  EXPECT_EQ(2 * window, seen[2]);
  EXPECT_EQ(-ENOENT, evict_rc) << "a pin being made is not evicted";
  EXPECT_EQ(-EBUSY, remove_rc) << "nor removed";
  EXPECT_EQ(3, fake.pins.load());
  gpufs_hostfile_id id;
  const int h = open_id(a, &id);
  ASSERT_GE(h, 0);
  EXPECT_EQ(size & ~(kPage - 1), gpufs_reg_len(id.reg)) << "whole 4 KiB pages of the file at last";
  EXPECT_EQ(-1, first_mismatch(reinterpret_cast<const uint8_t *>(gpufs_reg_addr(id.reg)), size, 71, 0));
  EXPECT_EQ(0, gpufs_hostfiles_close(hf, h));
  gpufs_hostfile_reg out;
  ASSERT_EQ(0, gpufs_hostfiles_reg_remove(hf, (uint64_t)st.st_dev, (uint64_t)st.st_ino, &out));
  const gpufs_pin_ops ops = fake.ops();
  gpufs_reg_release(&ops, &out);
  EXPECT_EQ(3, fake.unpins.load()) << "each window unpinned";
}

} // namespace
