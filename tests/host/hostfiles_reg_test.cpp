/*
 * hostfiles_reg_test.cpp - registrations in the daemon's host file table
 * (gpufs_register's bookkeeping, libgpufs/host/hostfiles.h): add, remove,
 * pop and their counters; -EEXIST by any name of the inode; -EFBIG against
 * max_bytes; -EBUSY while an hfid of the inode is open; the registered word
 * an open returns (gpufs_reg_word, queue.h) and the daemon's OPEN passes
 * on in out[3]; retirement by a truncation (renew) and by an open that
 * finds the file shorter than registered; and opens racing registrations.
 * The table neither maps nor pins: the addresses here are made up.
 */
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <fcntl.h>
#include <random>
#include <set>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "daemon_fixture.h"
#include "libgpufs/common/queue.h"
#include "libgpufs/host/daemon.h"
#include "libgpufs/host/fileops.h"
#include "libgpufs/host/hostfiles.h"

using namespace gpufs_test;

namespace {

constexpr uint64_t kPage = 4096;

/* A registration of the file at path as gpufs_register would make it (a
 * made-up, 4 KiB aligned address): the size rounded up and down to 4 KiB. */
gpufs_hostfile_reg reg_of(const std::string &path, uint64_t addr, struct stat *st)
{
  EXPECT_EQ(0, stat(path.c_str(), st)) << path;
  const uint64_t size = (uint64_t)st->st_size;
  const uint64_t map_len = (size + kPage - 1) & ~(kPage - 1);
  gpufs_hostfile_reg r{};
  r.dev = (uint64_t)st->st_dev;
  r.ino = (uint64_t)st->st_ino;
  r.addr = (void *)(uintptr_t)addr;
  r.map_len = map_len;
  r.len = size & ~(kPage - 1);
  r.pinned = map_len; /* one registration of the whole mapping (window 0) */
  return r;
}

uint64_t word_of(const gpufs_hostfile_reg &r)
{
  return gpufs_reg_word((uint64_t)(uintptr_t)r.addr, r.len);
}

gpufs_hostfile_regstats regstats(gpufs_hostfiles *hf)
{
  gpufs_hostfile_regstats s{~0ull, ~0ull, ~0ull, ~0ull, ~0ull, ~0ull};
  gpufs_hostfiles_reg_stats(hf, &s);
  return s;
}

void expect_same_reg(const gpufs_hostfile_reg &want, const gpufs_hostfile_reg &got)
{
  EXPECT_EQ(want.dev, got.dev);
  EXPECT_EQ(want.ino, got.ino);
  EXPECT_EQ(want.addr, got.addr);
  EXPECT_EQ(want.map_len, got.map_len);
  EXPECT_EQ(want.len, got.len);
}

struct HostFilesReg : ::testing::Test {
  TempDir dir;
  gpufs_io_ops io{};
  gpufs_hostfiles *hf = nullptr;
  void SetUp() override
  {
    gpufs_io_defaults(&io);
    ASSERT_EQ(0, gpufs_hostfiles_create(16, &io, &hf));
  }
  void TearDown() override { gpufs_hostfiles_destroy(hf); }
  std::string make(const std::string &name, uint64_t size, uint64_t seed)
  {
    std::string p = dir.file(name);
    EXPECT_EQ(0, write_pattern_file(p, size, seed));
    return p;
  }
  /* An open's hfid (asserted >= 0 by the caller) and its id. */
  int open_id(const std::string &p, gpufs_hostfile_id *id, int flags = O_RDONLY, uint32_t q = 0)
  {
    *id = gpufs_hostfile_id{~0ull, ~0u, ~0u, ~0ull, ~0u, ~0ull};
    return gpufs_hostfiles_open(hf, p.c_str(), flags, 0, q, id);
  }
};

/* The word packs address and length losslessly for user addresses below
 * 2^48 and lengths below 1 TiB, in 4 KiB units; 0 means none. */
TEST(RegWord, PacksAddressAndLength)
{
  const uint64_t addrs[] = {4096, 0x7f1234567000ull, 0xfffffffff000ull};
  const uint64_t lens[] = {4096, 5ull << 20, GPUFS_REG_MAX_BYTES};
  for (uint64_t a : addrs)
    for (uint64_t l : lens) {
      const uint64_t w = gpufs_reg_word(a, l);
      EXPECT_NE(0ull, w);
      EXPECT_EQ(a, gpufs_reg_addr(w)) << std::hex << a << " " << l;
      EXPECT_EQ(l, gpufs_reg_len(w)) << std::hex << a << " " << l;
    }
  EXPECT_EQ((1ull << 40) - 4096, GPUFS_REG_MAX_BYTES);
}

TEST_F(HostFilesReg, AddRemoveAndCounters)
{
  std::string a = make("a", 3 * kPage + 100, 1), other = make("other", 2 * kPage, 2);
  std::string link = dir.file("a-link");
  ASSERT_EQ(0, ::link(a.c_str(), link.c_str()));
  struct stat st, lst, ost;
  const gpufs_hostfile_reg r = reg_of(a, 0x7f0000000000ull, &st);
  EXPECT_EQ(4 * kPage, r.map_len);
  EXPECT_EQ(3 * kPage, r.len);
  const gpufs_hostfile_regstats s0 = regstats(hf);
  EXPECT_EQ(0u, s0.files);
  EXPECT_EQ(0u, s0.bytes);
  EXPECT_EQ(0u, s0.retired);

  ASSERT_EQ(0, gpufs_hostfiles_reg_add(hf, &st, &r, 1ull << 30));
  gpufs_hostfile_regstats s = regstats(hf);
  EXPECT_EQ(1u, s.files);
  EXPECT_EQ(4 * kPage, s.bytes) << "the mapping's length is what is pinned";

  EXPECT_EQ(-EEXIST, gpufs_hostfiles_reg_add(hf, &st, &r, 1ull << 30)) << "twice";
  const gpufs_hostfile_reg rl = reg_of(link, 0x7f0000100000ull, &lst);
  EXPECT_EQ(-EEXIST, gpufs_hostfiles_reg_add(hf, &lst, &rl, 1ull << 30)) << "a hard link: one inode";
  s = regstats(hf);
  EXPECT_EQ(1u, s.files) << "refusals change nothing";
  EXPECT_EQ(4 * kPage, s.bytes);

  gpufs_hostfile_reg out{};
  const gpufs_hostfile_reg ro = reg_of(other, 0x7f0000200000ull, &ost);
  EXPECT_EQ(-EINVAL, gpufs_hostfiles_reg_remove(hf, ro.dev, ro.ino, &out)) << "never registered";
  EXPECT_EQ(-EINVAL, gpufs_hostfiles_reg_remove(hf, r.dev, r.ino + 1000003, &out)) << "unknown inode";
  ASSERT_EQ(0, gpufs_hostfiles_reg_remove(hf, r.dev, r.ino, &out));
  expect_same_reg(r, out);
  s = regstats(hf);
  EXPECT_EQ(0u, s.files);
  EXPECT_EQ(0u, s.bytes);
  EXPECT_EQ(0u, s.retired);
  EXPECT_EQ(-EINVAL, gpufs_hostfiles_reg_remove(hf, r.dev, r.ino, &out)) << "removed already";

  /* by the other name now: the same inode, so removable by either */
  ASSERT_EQ(0, gpufs_hostfiles_reg_add(hf, &lst, &rl, 1ull << 30));
  ASSERT_EQ(0, gpufs_hostfiles_reg_remove(hf, r.dev, r.ino, &out));
  expect_same_reg(rl, out);
}

TEST_F(HostFilesReg, MaxBytesBoundsTheTotal)
{
  std::string a = make("a", 4 * kPage, 1), b = make("b", 5 * kPage - 7, 2), c = make("c", 4 * kPage, 3);
  struct stat sa, sb, sc;
  const gpufs_hostfile_reg ra = reg_of(a, 0x100000000ull, &sa);
  const gpufs_hostfile_reg rb = reg_of(b, 0x200000000ull, &sb);
  const gpufs_hostfile_reg rc = reg_of(c, 0x300000000ull, &sc);
  EXPECT_EQ(5 * kPage, rb.map_len);
  const uint64_t max = 8 * kPage;
  EXPECT_EQ(-EFBIG, gpufs_hostfiles_reg_add(hf, &sa, &ra, 3 * kPage)) << "one file over the limit";
  ASSERT_EQ(0, gpufs_hostfiles_reg_add(hf, &sa, &ra, max));
  EXPECT_EQ(-EFBIG, gpufs_hostfiles_reg_add(hf, &sb, &rb, max)) << "4 + 5 pages > 8";
  ASSERT_EQ(0, gpufs_hostfiles_reg_add(hf, &sc, &rc, max)) << "4 + 4 pages: exactly the limit";
  EXPECT_EQ(max, regstats(hf).bytes);
  EXPECT_EQ(2u, regstats(hf).files);

  gpufs_hostfile_reg out{};
  ASSERT_EQ(0, gpufs_hostfiles_reg_remove(hf, ra.dev, ra.ino, &out));
  EXPECT_EQ(-EFBIG, gpufs_hostfiles_reg_add(hf, &sb, &rb, max)) << "4 + 5 pages still > 8";
  ASSERT_EQ(0, gpufs_hostfiles_reg_add(hf, &sb, &rb, 9 * kPage)) << "a larger limit lets it in";
  EXPECT_EQ(9 * kPage, regstats(hf).bytes);

  /* a length that would wrap the total around is refused, not counted */
  gpufs_hostfile_reg huge = ra;
  huge.map_len = ~0ull - kPage + 1;
  EXPECT_EQ(-EFBIG, gpufs_hostfiles_reg_add(hf, &sa, &huge, ~0ull));
  EXPECT_EQ(9 * kPage, regstats(hf).bytes);
  EXPECT_EQ(2u, regstats(hf).files);
}

/* Opens get the word while the registration lives, opens before it got 0;
 * any hfid of the inode (by either name, opened before or after) makes a
 * removal -EBUSY; after the last close it succeeds and opens get 0. */
TEST_F(HostFilesReg, OpensGetTheWordAndKeepItFromRemoval)
{
  std::string a = make("a", 6 * kPage + 1, 7), other = make("other", 3 * kPage, 8);
  std::string link = dir.file("a-link");
  ASSERT_EQ(0, ::link(a.c_str(), link.c_str()));
  gpufs_hostfile_id id;
  const int before = open_id(a, &id);
  ASSERT_GE(before, 0);
  EXPECT_EQ(0ull, id.reg) << "opened before the registration";
  const uint32_t cid = id.cid, version = id.version;

  struct stat st;
  const gpufs_hostfile_reg r = reg_of(a, 0x7fab12340000ull, &st);
  ASSERT_EQ(0, gpufs_hostfiles_reg_add(hf, &st, &r, 1ull << 30));
  const int after = open_id(a, &id);
  ASSERT_GE(after, 0);
  EXPECT_EQ(word_of(r), id.reg);
  EXPECT_EQ(r.addr, (void *)(uintptr_t)gpufs_reg_addr(id.reg));
  EXPECT_EQ(6 * kPage, gpufs_reg_len(id.reg)) << "the size rounded down to 4 KiB";
  EXPECT_EQ(cid, id.cid);
  EXPECT_EQ(version, id.version) << "registering is no change of the file";
  const int by_link = open_id(link, &id, O_RDWR, 3);
  ASSERT_GE(by_link, 0);
  EXPECT_EQ(word_of(r), id.reg) << "any name, any queue";
  const int oth = open_id(other, &id);
  ASSERT_GE(oth, 0);
  EXPECT_EQ(0ull, id.reg) << "another file";

  gpufs_hostfile_reg out{};
  EXPECT_EQ(-EBUSY, gpufs_hostfiles_reg_remove(hf, r.dev, r.ino, &out));
  EXPECT_EQ(0, gpufs_hostfiles_close(hf, after));
  EXPECT_EQ(-EBUSY, gpufs_hostfiles_reg_remove(hf, r.dev, r.ino, &out)) << "the link is open";
  EXPECT_EQ(0, gpufs_hostfiles_close(hf, by_link));
  EXPECT_EQ(-EBUSY, gpufs_hostfiles_reg_remove(hf, r.dev, r.ino, &out))
      << "the hfid opened before the registration counts too";
  /* a pinned entry (a worker in a pread) closed by the GPU holds nothing */
  const int pinned = open_id(a, &id);
  ASSERT_GE(pinned, 0);
  ASSERT_GE(gpufs_hostfiles_pin(hf, pinned), 0);
  EXPECT_EQ(0, gpufs_hostfiles_close(hf, pinned));
  EXPECT_EQ(0, gpufs_hostfiles_close(hf, before));
  EXPECT_EQ(1u, regstats(hf).files) << "-EBUSY removed nothing";
  ASSERT_EQ(0, gpufs_hostfiles_reg_remove(hf, r.dev, r.ino, &out)) << "nothing of it open";
  gpufs_hostfiles_unpin(hf, pinned);
  expect_same_reg(r, out);
  const int later = open_id(a, &id);
  ASSERT_GE(later, 0);
  EXPECT_EQ(0ull, id.reg) << "removed: opens get none";
  EXPECT_EQ(0, gpufs_hostfiles_close(hf, later));
  EXPECT_EQ(0, gpufs_hostfiles_close(hf, oth));
  EXPECT_EQ(0u, regstats(hf).retired);
}

/* A registration made before any open creates the inode record: the first
 * open of the unchanged file keeps version 1 and gets the word; ident (the
 * gpufs_pread question) never hands out the word. */
TEST_F(HostFilesReg, RegistrationBeforeAnyOpen)
{
  std::string a = make("a", 2 * kPage, 9);
  struct stat st;
  const gpufs_hostfile_reg r = reg_of(a, 0x600000000000ull, &st);
  ASSERT_EQ(0, gpufs_hostfiles_reg_add(hf, &st, &r, 1ull << 30));
  gpufs_hostfile_id id, got{};
  const int h = open_id(a, &id);
  ASSERT_GE(h, 0);
  EXPECT_EQ(1u, id.version);
  EXPECT_EQ(word_of(r), id.reg);
  got.reg = 12345;
  ASSERT_EQ(0, gpufs_hostfiles_ident(hf, &st, &got));
  EXPECT_EQ(id.cid, got.cid);
  EXPECT_EQ(0ull, got.reg);
  EXPECT_EQ(0, gpufs_hostfiles_close(hf, h));
}

/* A truncation through the daemon (renew) retires the registration, once:
 * opens get 0 from then on, whatever the size; a retired registration is
 * still counted until removed, is removed while nothing is open, and blocks
 * a new one until then. */
TEST_F(HostFilesReg, RenewRetires)
{
  std::string a = make("a", 8 * kPage + 9, 11), b = make("b", 4 * kPage, 12);
  struct stat st, sb;
  const gpufs_hostfile_reg r = reg_of(a, 0x500000000000ull, &st);
  ASSERT_EQ(0, gpufs_hostfiles_reg_add(hf, &st, &r, 1ull << 30));
  gpufs_hostfile_id id;
  const int h = open_id(a, &id, O_RDWR);
  ASSERT_GE(h, 0);
  EXPECT_EQ(word_of(r), id.reg);
  const uint32_t v = id.version;

  /* renew of another, unregistered file retires nothing */
  const int hb = open_id(b, &id, O_RDWR);
  ASSERT_GE(hb, 0);
  int fd = gpufs_hostfiles_pin(hf, hb);
  ASSERT_GE(fd, 0);
  EXPECT_NE(0u, gpufs_hostfiles_renew(hf, fd));
  gpufs_hostfiles_unpin(hf, hb);
  EXPECT_EQ(0u, regstats(hf).retired);

  fd = gpufs_hostfiles_pin(hf, h);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(0, ftruncate(fd, 20 * kPage)); /* even a growing truncation */
  EXPECT_EQ(v + 1, gpufs_hostfiles_renew(hf, fd));
  gpufs_hostfile_regstats s = regstats(hf);
  EXPECT_EQ(1u, s.retired);
  EXPECT_EQ(1u, s.files) << "retired, still pinned: counted until removed";
  EXPECT_EQ(r.map_len, s.bytes);
  EXPECT_EQ(v + 2, gpufs_hostfiles_renew(hf, fd));
  EXPECT_EQ(1u, regstats(hf).retired) << "retired once";
  gpufs_hostfiles_unpin(hf, h);

  const int h2 = open_id(a, &id);
  ASSERT_GE(h2, 0);
  EXPECT_EQ(0ull, id.reg) << "retired: no open gets it, though the file is longer than r.len";
  EXPECT_EQ(v + 2, id.version);
  EXPECT_EQ(-EEXIST, gpufs_hostfiles_reg_add(hf, &st, &r, 1ull << 30)) << "remove it first";
  gpufs_hostfile_reg out{};
  EXPECT_EQ(-EBUSY, gpufs_hostfiles_reg_remove(hf, r.dev, r.ino, &out));
  EXPECT_EQ(0, gpufs_hostfiles_close(hf, h));
  EXPECT_EQ(0, gpufs_hostfiles_close(hf, h2));
  ASSERT_EQ(0, gpufs_hostfiles_reg_remove(hf, r.dev, r.ino, &out));
  expect_same_reg(r, out);
  s = regstats(hf);
  EXPECT_EQ(0u, s.files);
  EXPECT_EQ(0u, s.bytes);
  EXPECT_EQ(1u, s.retired) << "a count since the start";

  /* registered again at the new size: live again */
  const gpufs_hostfile_reg r2 = reg_of(a, 0x500000100000ull, &st);
  EXPECT_EQ(20 * kPage, r2.len);
  ASSERT_EQ(0, gpufs_hostfiles_reg_add(hf, &st, &r2, 1ull << 30));
  const int h3 = open_id(a, &id);
  ASSERT_GE(h3, 0);
  EXPECT_EQ(word_of(r2), id.reg);
  EXPECT_EQ(0, gpufs_hostfiles_close(hf, h3));
  EXPECT_EQ(0, gpufs_hostfiles_close(hf, hb));
  (void)sb;
}

/* Changed behind the table's back (the CPU): an open that finds the file
 * shorter than the registered length retires it; as long or longer keeps
 * it; growing back does not revive it. */
TEST_F(HostFilesReg, OpenOfAShorterFileRetires)
{
  std::string a = make("a", 3 * kPage + 100, 13);
  struct stat st;
  const gpufs_hostfile_reg r = reg_of(a, 0x400000000000ull, &st);
  ASSERT_EQ(0, gpufs_hostfiles_reg_add(hf, &st, &r, 1ull << 30));
  gpufs_hostfile_id id;
  ASSERT_EQ(0, truncate(a.c_str(), 3 * kPage)); /* the tail goes: r.len stays readable */
  int h = open_id(a, &id);
  ASSERT_GE(h, 0);
  EXPECT_EQ(word_of(r), id.reg) << "exactly the registered length";
  EXPECT_EQ(0, gpufs_hostfiles_close(hf, h));
  EXPECT_EQ(0u, regstats(hf).retired);

  ASSERT_EQ(0, truncate(a.c_str(), 3 * kPage - 1));
  h = open_id(a, &id);
  ASSERT_GE(h, 0);
  EXPECT_EQ(0ull, id.reg) << "one byte short";
  EXPECT_EQ(3 * kPage - 1, id.size);
  EXPECT_EQ(0, gpufs_hostfiles_close(hf, h));
  EXPECT_EQ(1u, regstats(hf).retired);

  ASSERT_EQ(0, truncate(a.c_str(), 10 * kPage));
  h = open_id(a, &id);
  ASSERT_GE(h, 0);
  EXPECT_EQ(0ull, id.reg) << "grown back: still retired";
  EXPECT_EQ(0, gpufs_hostfiles_close(hf, h));
  EXPECT_EQ(1u, regstats(hf).retired);
  gpufs_hostfile_reg out{};
  ASSERT_EQ(0, gpufs_hostfiles_reg_remove(hf, r.dev, r.ino, &out));
  expect_same_reg(r, out);
}

/* A change of the file's size, mtime or ctime found at an open retires an
 * automatic pin (a host truncation and rewrite leaves its pinned pages
 * stale), not an explicit registration (docs/api.md). */
TEST_F(HostFilesReg, AnyChangeRetiresAnAutomaticPin)
{
  for (int automatic = 0; automatic < 2; automatic++) {
    std::string a = make(automatic ? "auto" : "explicit", 3 * kPage, 14);
    struct stat st;
    gpufs_hostfile_reg r = reg_of(a, 0x400000000000ull + automatic * 0x100000ull, &st);
    r.automatic = (uint32_t)automatic;
    ASSERT_EQ(0, gpufs_hostfiles_reg_add(hf, &st, &r, 1ull << 30));
    gpufs_hostfile_id id;
    int h = open_id(a, &id);
    ASSERT_GE(h, 0);
    EXPECT_EQ(word_of(r), id.reg) << "unchanged";
    EXPECT_EQ(0, gpufs_hostfiles_close(hf, h));
    make(automatic ? "auto" : "explicit", 3 * kPage, 15); /* same size, new bytes */
    const struct timespec later[2] = {{0, UTIME_OMIT}, {st.st_mtim.tv_sec + 5, 0}};
    ASSERT_EQ(0, utimensat(AT_FDCWD, a.c_str(), later, 0));
    h = open_id(a, &id);
    ASSERT_GE(h, 0);
    EXPECT_EQ(automatic ? 0ull : word_of(r), id.reg) << "automatic " << automatic;
    EXPECT_EQ(0, gpufs_hostfiles_close(hf, h));
    EXPECT_EQ((uint64_t)automatic, regstats(hf).retired);
    gpufs_hostfile_reg out{};
    ASSERT_EQ(0, gpufs_hostfiles_reg_remove(hf, r.dev, r.ino, &out));
  }
}

/* gpufs_stop's sweep: pop hands out every registration once (live,
 * retired, open or not), then -ENOENT. */
TEST_F(HostFilesReg, PopReturnsEachOnce)
{
  const int n = 5;
  std::vector<gpufs_hostfile_reg> regs;
  for (int i = 0; i < n; i++) {
    std::string p = make("p" + std::to_string(i), (uint64_t)(i + 1) * kPage + 3, 20 + i);
    struct stat st;
    regs.push_back(reg_of(p, 0x300000000000ull + (uint64_t)i * (1ull << 24), &st));
    ASSERT_EQ(0, gpufs_hostfiles_reg_add(hf, &st, &regs.back(), 1ull << 30));
  }
  gpufs_hostfile_id id;
  const int open_one = open_id(dir.file("p1"), &id, O_RDWR); /* stays open */
  ASSERT_GE(open_one, 0);
  EXPECT_EQ(word_of(regs[1]), id.reg);
  const int retire = open_id(dir.file("p3"), &id, O_RDWR);
  ASSERT_GE(retire, 0);
  int fd = gpufs_hostfiles_pin(hf, retire);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(0, ftruncate(fd, 0));
  gpufs_hostfiles_renew(hf, fd);
  gpufs_hostfiles_unpin(hf, retire);
  EXPECT_EQ(1u, regstats(hf).retired);

  std::set<uint64_t> seen;
  gpufs_hostfile_reg out{};
  for (int i = 0; i < n; i++) {
    ASSERT_EQ(0, gpufs_hostfiles_reg_pop(hf, &out)) << i;
    bool found = false;
    for (auto &r : regs)
      if (r.ino == out.ino) {
        expect_same_reg(r, out);
        found = true;
      }
    EXPECT_TRUE(found);
    EXPECT_TRUE(seen.insert(out.ino).second) << "popped twice: ino " << out.ino;
  }
  EXPECT_EQ(-ENOENT, gpufs_hostfiles_reg_pop(hf, &out));
  gpufs_hostfile_regstats s = regstats(hf);
  EXPECT_EQ(0u, s.files);
  EXPECT_EQ(0u, s.bytes);
  EXPECT_EQ(1u, s.retired);
  EXPECT_EQ(0, gpufs_hostfiles_close(hf, open_one));
  EXPECT_EQ(0, gpufs_hostfiles_close(hf, retire));
  EXPECT_EQ(-ENOENT, gpufs_hostfiles_reg_pop(hf, &out));
}

/* Opens and closes (by two names) race a registrar that adds and removes
 * registrations at changing made-up addresses: every open gets 0 or the
 * word of the registration living while it is open; a removal succeeds
 * only when no open holds the word; after the last close, removal works. */
TEST_F(HostFilesReg, OpensRaceRegistrations)
{
  std::string a = make("a", 8 * kPage + 5, 31), link = dir.file("a-link");
  ASSERT_EQ(0, ::link(a.c_str(), link.c_str()));
  struct stat st;
  gpufs_hostfile_reg r = reg_of(a, 0x200000000000ull, &st);
  std::atomic<uint64_t> cur_word{0};      /* the live registration's word */
  std::atomic<int64_t> holding{0};        /* opens that hold the word now */
  std::atomic<uint64_t> with_word{0}, without{0}, bad{0}, adds{0}, removes{0}, busy{0};
  std::atomic<bool> stop{false};

  auto opener = [&](int seed) {
    std::mt19937 rng(seed);
    while (!stop.load()) {
      gpufs_hostfile_id id{};
      const std::string &p = rng() % 2 ? a : link;
      int h = gpufs_hostfiles_open(hf, p.c_str(), O_RDONLY, 0, (uint32_t)(rng() % 4), &id);
      if (h < 0) {
        bad++;
        continue;
      }
      if (id.reg != 0) {
        holding++;
        /* the registration cannot go while h is open: cur_word is its word */
        if (id.reg != cur_word.load()) bad++;
        with_word++;
        std::this_thread::yield();
        holding--;
      } else {
        without++;
      }
      if (gpufs_hostfiles_close(hf, h) != 0) bad++;
    }
  };
  auto registrar = [&]() {
    uint64_t round = 0;
    bool live = false;
    while (!stop.load() || live) {
      if (!live) {
        if (stop.load()) break;
        r.addr = (void *)(uintptr_t)(0x200000000000ull + (++round) * (1ull << 24));
        cur_word.store(word_of(r));
        int rc = gpufs_hostfiles_reg_add(hf, &st, &r, 1ull << 30);
        if (rc != 0) bad++;
        live = rc == 0;
        adds++;
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      } else {
        gpufs_hostfile_reg out{};
        int rc = gpufs_hostfiles_reg_remove(hf, r.dev, r.ino, &out);
        if (rc == 0) {
          if (holding.load() != 0) bad++; /* removed under an open that holds it */
          if (out.addr != r.addr) bad++;
          removes++;
          live = false;
          cur_word.store(0);
        } else if (rc == -EBUSY) {
          busy++;
          if (stop.load()) break; /* the openers may still hold it: after the join */
        } else {
          bad++;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
    }
    return live;
  };
  std::vector<std::thread> th;
  for (int i = 0; i < 4; i++) th.emplace_back(opener, 100 + i);
  bool live = false;
  std::thread reg([&] { live = registrar(); });
  /* at least 1.5 s, and on until both sides have seen each other's turns
   * (a loaded machine can starve the registrar's removals for long: the
   * openers hold the registration nearly all the time), 60 s at most */
  const auto t0 = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(1500) ||
         ((removes.load() == 0 || adds.load() < 2 || with_word.load() == 0 || without.load() == 0) &&
          std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60)))
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  stop = true;
  for (auto &t : th) t.join();
  reg.join();
  EXPECT_EQ(0u, bad.load());
  EXPECT_GT(with_word.load(), 0u) << "some opens saw the registration";
  EXPECT_GT(without.load(), 0u) << "some opens came between registrations";
  EXPECT_GT(removes.load(), 0u);
  EXPECT_GT(adds.load(), 1u);
  RecordProperty("with_word", (int)with_word.load());
  RecordProperty("busy", (int)busy.load());
  if (!live) {
    ASSERT_EQ(0, gpufs_hostfiles_reg_add(hf, &st, &r, 1ull << 30));
  }
  gpufs_hostfile_reg out{};
  EXPECT_EQ(0, gpufs_hostfiles_reg_remove(hf, r.dev, r.ino, &out)) << "no -EBUSY after all closes";
  EXPECT_EQ(r.addr, out.addr);
  EXPECT_EQ(0u, regstats(hf).files);
  EXPECT_EQ(0u, regstats(hf).bytes);
  EXPECT_EQ(0u, regstats(hf).retired);
}

/* Through the daemon's queue: OPEN's out[3] carries the word; TRUNCATE
 * retires it, so the next OPEN's out[3] is 0. */
class DaemonReg : public DaemonFixture, public ::testing::Test {};

TEST_F(DaemonReg, OpenRepliesCarryTheWordUntilATruncation)
{
  start();
  TestFile f = make_file("r", 5 * kPage + 17, 41, false);
  gpufs_hostfiles *hf = gpufs_daemon_files(d);
  ASSERT_NE(nullptr, hf);
  struct stat st;
  const gpufs_hostfile_reg r = reg_of(f.path, 0x7e0000000000ull, &st);
  ASSERT_EQ(0, gpufs_hostfiles_reg_add(hf, &st, &r, 1ull << 30));
  uint64_t out[4] = {0, 0, 0, 0};
  int64_t h = client_open(*q, f.path, O_RDWR, out);
  ASSERT_GE(h, 0);
  EXPECT_EQ(f.size, out[0]);
  EXPECT_EQ(word_of(r), out[3]);
  std::vector<uint8_t> data;
  ASSERT_EQ((int64_t)kPage, client_read(*q, (int32_t)h, kPage, kPage, &data)) << "reads still work";
  EXPECT_EQ(-1, first_mismatch(data.data(), kPage, 41, kPage));

  Request t;
  t.op = GPUFS_OP_TRUNCATE;
  t.hfid = (int32_t)h;
  t.offset = 2 * kPage;
  ASSERT_EQ(0, client_run(*q, &t, 1));
  ASSERT_EQ(0, t.result);
  EXPECT_EQ(1u, regstats(hf).retired);
  uint64_t out2[4] = {0, 0, 0, 7};
  int64_t h2 = client_open(*q, f.path, O_RDONLY, out2);
  ASSERT_GE(h2, 0);
  EXPECT_EQ(0ull, out2[3]) << "retired by the truncation";
  EXPECT_EQ(2 * kPage, out2[0]);
  gpufs_hostfile_reg got{};
  EXPECT_EQ(-EBUSY, gpufs_hostfiles_reg_remove(hf, r.dev, r.ino, &got));
  EXPECT_EQ(0, client_close(*q, (int32_t)h));
  EXPECT_EQ(0, client_close(*q, (int32_t)h2));
  ASSERT_EQ(0, gpufs_hostfiles_reg_remove(hf, r.dev, r.ino, &got));
  expect_same_reg(r, got);
}

} // namespace
