/*
 * semcache_store_test.cpp - how SemCache's copies back reach the host
 * (cache.h, enum sc_store): a closed store writes pages the process cannot
 * access and nothing beside them, a child process's stores land in its own
 * memory (a /proc/self/mem opened before fork() names the parent's), a
 * write-back keeps a MODIFIED range's pages without access while its
 * bytes come back, and the open store (SEMCACHE_STORE=open, or where the
 * probe fails) still gives the newest bytes.
 */
#include <gtest/gtest.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <vector>

#include "semcache/src/msi.h"
#include "semcache/src/protect.h"

namespace {

const size_t kPage = 4096;

uint8_t *pages(size_t n, uint8_t fill)
{
  void *p = mmap(nullptr, n * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  memset(p, fill, n * kPage);
  return (uint8_t *)p;
}

TEST(SemCacheStoreTest, AClosedStoreWritesPagesWithoutAccessAndNothingBeside)
{
  ASSERT_TRUE(sc_store_closed_ok()) << "this host's /proc/self/mem takes no closed stores";
  uint8_t *p = pages(3, 0x11);
  ASSERT_NE(nullptr, p);
  std::vector<uint8_t> v(kPage + 100, 0x77);
  ASSERT_EQ(0, mprotect(p, 3 * kPage, PROT_NONE));
  ASSERT_EQ(0, sc_host_store(SC_STORE_CLOSED, p + kPage - 50, v.data(), v.size()));
  ASSERT_EQ(0, mprotect(p, 3 * kPage, PROT_READ));
  for (size_t i = 0; i < 3 * kPage; i++) {
    const bool in = i >= kPage - 50 && i < kPage - 50 + v.size();
    ASSERT_EQ(in ? 0x77 : 0x11, p[i]) << i;
  }
  munmap(p, 3 * kPage);
}

TEST(SemCacheStoreTest, AClosedStoreToPagesNoLongerMappedFails)
{
  uint8_t *p = pages(1, 0);
  ASSERT_NE(nullptr, p);
  munmap(p, kPage);
  const uint8_t v[8] = {1};
  EXPECT_LT(sc_host_store(SC_STORE_CLOSED, p, v, sizeof(v)), 0);
}

TEST(SemCacheStoreTest, AChildsStoresLandInItsOwnMemory)
{
  uint8_t *p = pages(1, 0x22);
  ASSERT_NE(nullptr, p);
  const uint8_t v[16] = {9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9};
  ASSERT_EQ(0, sc_host_store(SC_STORE_CLOSED, p + 64, v, sizeof(v))); /* opens the parent's file */
  ASSERT_EQ(9, p[64]);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    alarm(20);
    const uint8_t w[16] = {5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5};
    mprotect(p, kPage, PROT_NONE);
    if (sc_host_store(SC_STORE_CLOSED, p + 64, w, sizeof(w))) _exit(2);
    mprotect(p, kPage, PROT_READ);
    _exit(p[64] == 5 && p[79] == 5 && p[80] == 0x22 ? 0 : 3);
  }
  int st = 0;
  ASSERT_EQ(pid, waitpid(pid, &st, 0));
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(0, WEXITSTATUS(st)) << "2: the store failed; 3: the child's bytes are not its own";
  EXPECT_EQ(9, p[64]) << "the child wrote the parent's memory";
  EXPECT_EQ(9, p[79]);
  munmap(p, kPage);
}

/* A write-back output in a MAP_SHARED mapping (shared memory, a file): the
 * kernel writes no closed store there (it forces writes only into private
 * mappings), so its copy back opens the pages instead; the newest bytes
 * arrive all the same. */
TEST(SemCacheStoreTest, AModifiedRangeInASharedMappingComesBackAllTheSame)
{
  void *m = mmap(nullptr, 4 * kPage, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(MAP_FAILED, m);
  uint8_t *p = (uint8_t *)m;
  memset(p, 0x10, 4 * kPage);
  const uint8_t v[4] = {1, 2, 3, 4};
  mprotect(p, kPage, PROT_NONE);
  EXPECT_LT(sc_host_store(SC_STORE_CLOSED, p, v, sizeof(v)), 0) << "the kernel wrote a shared mapping";
  mprotect(p, kPage, PROT_READ | PROT_WRITE);
  sc_cache c;
  ASSERT_EQ(0, sc_cache_init(&c, &sc_cpu_backend, SC_WRITE_BACK, 0));
  void *d = nullptr;
  const size_t n = 4 * kPage - 8; /* interior pages 0-2 */
  ASSERT_EQ(0, sc_acquire(&c, p, n, SC_WRITE, &d));
  memset(d, 0x77, n);
  ASSERT_EQ(0, sc_release(&c, p, n, SC_WRITE));
  EXPECT_EQ(0x77, p[kPage + 3]) << "faults; the copy back opens the pages";
  for (size_t i = 0; i < 4 * kPage; i++) ASSERT_EQ(i < n ? 0x77 : 0x10, p[i]) << i;
  sc_stats st;
  sc_get_stats(&c, &st);
  EXPECT_EQ(0u, st.closed_stores);
  EXPECT_EQ(SC_SHARED, sc_state_of(&c, p, n));
  EXPECT_EQ(0, sc_cache_destroy(&c));
  munmap(m, 4 * kPage);
}

/* A system call's buffer (sc_host_access, which the drop-in's write, read
 * and the like call first): the kernel cannot fault a protected page in,
 * so a MODIFIED range comes back before a write(2) of it, and a range a
 * read(2) fills becomes INVALID and writable, its next call sending it. */
TEST(SemCacheHostAccessTest, SystemCallsReadAndWriteCachedRanges)
{
  sc_cache c;
  ASSERT_EQ(0, sc_cache_init(&c, &sc_cpu_backend, SC_WRITE_BACK, 0));
  uint8_t *p = pages(4, 0);
  ASSERT_NE(nullptr, p);
  const size_t n = 4 * kPage;
  void *d = nullptr;
  ASSERT_EQ(0, sc_acquire(&c, p, n, SC_WRITE, &d));
  memset(d, 0x5a, n);
  ASSERT_EQ(0, sc_release(&c, p, n, SC_WRITE));
  int fds[2];
  ASSERT_EQ(0, pipe(fds));
  EXPECT_EQ(-1, write(fds[1], p, 64)) << "MODIFIED: the kernel cannot read it";
  EXPECT_EQ(EFAULT, errno);
  sc_host_access(&c, p + kPage, 64, SC_READ); /* what the drop-in's write does first */
  EXPECT_EQ(SC_SHARED, sc_state_of(&c, p, n));
  ASSERT_EQ(64, write(fds[1], p + kPage, 64));
  uint8_t back[64];
  ASSERT_EQ(64, read(fds[0], back, 64));
  for (uint8_t v : back) ASSERT_EQ(0x5a, v);
  /* now read(2) into the SHARED (read-only) range (the failed read leaves
   * the pipe's bytes there) */
  memset(back, 0x21, sizeof(back));
  ASSERT_EQ(64, write(fds[1], back, 64));
  EXPECT_EQ(-1, read(fds[0], p + 2 * kPage, 64)) << "SHARED: the kernel cannot write it";
  EXPECT_EQ(EFAULT, errno);
  sc_host_access(&c, p + 2 * kPage, 64, SC_WRITE); /* what the drop-in's read does first */
  EXPECT_EQ(SC_INVALID, sc_state_of(&c, p, n));
  ASSERT_EQ(64, read(fds[0], p + 2 * kPage, 64));
  ASSERT_EQ(0, sc_acquire(&c, p, n, SC_READ, &d)); /* sent again, with the read's bytes */
  EXPECT_EQ(0x21, ((uint8_t *)d)[2 * kPage + 63]);
  EXPECT_EQ(0x5a, ((uint8_t *)d)[2 * kPage + 64]);
  EXPECT_EQ(0, memcmp(d, p, n));
  ASSERT_EQ(0, sc_release(&c, p, n, SC_READ));
  uint8_t far[8];
  sc_host_access(&c, far, sizeof(far), SC_WRITE); /* outside every range: nothing */
  EXPECT_EQ(SC_SHARED, sc_state_of(&c, p, n));
  close(fds[0]);
  close(fds[1]);
  EXPECT_EQ(0, sc_cache_destroy(&c));
  munmap(p, 4 * kPage);
}

/* The protection of the page holding addr, from /proc/self/maps ("---",
 * "r--", "rw-"); read with system calls only (called under the cache's
 * lock, beside protected pages). */
void prot_of(const void *addr, char out[4])
{
  strcpy(out, "?");
  static char buf[1 << 16];
  const int fd = open("/proc/self/maps", O_RDONLY);
  if (fd < 0) return;
  ssize_t n = 0, r;
  while (n < (ssize_t)sizeof(buf) - 1 && (r = read(fd, buf + n, sizeof(buf) - 1 - n)) > 0) n += r;
  close(fd);
  buf[n] = 0;
  for (char *line = buf; *line;) {
    unsigned long lo, hi;
    char perms[5];
    if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) == 3 && lo <= (uintptr_t)addr &&
        (uintptr_t)addr < hi) {
      memcpy(out, perms, 3);
      out[3] = 0;
      return;
    }
    char *nl = strchr(line, '\n');
    if (!nl) break;
    line = nl + 1;
  }
}

char seen_prot[4];
int watched_to_host(void *ctx, void *host, const void *dev, size_t bytes, sc_store how)
{
  prot_of(host, seen_prot);
  return sc_cpu_backend.to_host(ctx, host, dev, bytes, how);
}

class SemCacheStoreModes : public ::testing::TestWithParam<int> {
protected:
  void TearDown() override { sc_store_set_closed(was); }
  int was = sc_store_closed_ok();
};

TEST_P(SemCacheStoreModes, AWriteBackKeepsItsInteriorClosedOnlyWhereStoresCanBe)
{
  const int closed = GetParam();
  if (closed && !was) GTEST_SKIP() << "no closed stores on this host";
  sc_store_set_closed(closed);
  sc_backend be = sc_cpu_backend;
  be.to_host = watched_to_host;
  sc_cache c;
  ASSERT_EQ(0, sc_cache_init(&c, &be, SC_WRITE_BACK, 0));
  uint8_t *p = pages(4, 0);
  ASSERT_NE(nullptr, p);
  /* a MODIFIED range (interior pages 0-1, 100 bytes of edge on page 2) and
   * a MODIFIED neighbour on pages 2-3 with no page of its own (all edge:
   * never protected, its bytes back at its release) */
  const size_t n = 2 * kPage + 100, m = kPage;
  void *d = nullptr, *dn = nullptr;
  ASSERT_EQ(0, sc_acquire(&c, p, n, SC_WRITE, &d));
  memset(d, 0x61, n);
  ASSERT_EQ(0, sc_release(&c, p, n, SC_WRITE));
  ASSERT_EQ(0, sc_acquire(&c, p + n, m, SC_WRITE, &dn));
  memset(dn, 0x62, m);
  ASSERT_EQ(0, sc_release(&c, p + n, m, SC_WRITE));
  EXPECT_EQ(0x61, p[kPage + 5]); /* faults: the range comes back */
  EXPECT_STREQ(closed ? "---" : "rw-", seen_prot) << "the pages during the copy back";
  sc_stats st;
  sc_get_stats(&c, &st);
  EXPECT_EQ(3u, st.to_host) << "the interior, and the edges at the releases";
  EXPECT_EQ((uint64_t)2 * kPage + 100 + m, st.to_host_bytes);
  EXPECT_EQ(closed ? 1u : 0u, st.closed_stores);
  EXPECT_EQ(2u, st.edge_copies) << "the range's tail and the neighbour, at their releases";
  EXPECT_EQ(100u + m, st.edge_bytes);
  EXPECT_EQ(SC_SHARED, sc_state_of(&c, p, n));
  EXPECT_EQ(SC_MODIFIED, sc_state_of(&c, p + n, m)) << "untouched by its neighbour's fault";
  for (size_t i = 0; i < n + m; i++) ASSERT_EQ(i < n ? 0x61 : 0x62, p[i]) << i;
  EXPECT_EQ(0, sc_cache_destroy(&c));
  munmap(p, 4 * kPage);
}

INSTANTIATE_TEST_SUITE_P(Stores, SemCacheStoreModes, ::testing::Values(1, 0),
                         [](const ::testing::TestParamInfo<int> &i) {
                           return std::string(i.param ? "Closed" : "Open");
                         });

} // namespace
