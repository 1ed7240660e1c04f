/*
 * semcache_test.cu - SemCache's GPU backend (semcache/src/gpu.c)
 * through the drop-in, as programs meet it: libsemcache.so under
 * LD_PRELOAD on semcache/tests/routines.c (every routine in both
 * precisions against plain loops within a tolerance, gesv's memo) and on
 * semcache/tests/chain.c (operands sent once per change), both protocols,
 * the no-cache mode, a cache cap small enough to evict, and four threads
 * at once (a cuBLAS handle and stream each).  The counters
 * come from the semcache-stats line.  Skipped without a GPU.  The
 * programs are built beside gpu_tests (make: SEMCACHE_SO, SEMCACHE_CHAIN,
 * SEMCACHE_ROUTINES); SEMCACHE_TEST_BUILD names another build folder.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "gpu_util.h"

namespace {

struct ProgRun {
  int status = -1;
  std::string out, err;
  /* a number of the semcache-stats line, or -1 */
  double stat(const char *name) const
  {
    const size_t line = err.rfind("semcache-stats {");
    if (line == std::string::npos) return -1;
    const std::string key = std::string("\"") + name + "\":";
    const size_t at = err.find(key, line);
    return at == std::string::npos ? -1 : atof(err.c_str() + at + key.size());
  }
};

static std::string build_dir()
{
  const char *b = getenv("SEMCACHE_TEST_BUILD");
  return b && *b ? b : "build";
}

static std::string slurp(const std::string &path)
{
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

/* prog (under build/tests) with the drop-in and env (VAR=value ...) */
static ProgRun run(const std::string &env, const std::string &prog, const std::string &args = "")
{
  const std::string dir = build_dir();
  char tmpl[] = "/tmp/semcache_gpu_XXXXXX";
  ProgRun r;
  if (!mkdtemp(tmpl)) return r;
  const std::string t = tmpl;
  /* a watchdog: a hang (a deadlock on the cache's lock) fails as status
   * 124 in bounded time, with what the program printed, instead of
   * hanging the suite */
  const std::string cmd = "timeout -k 10 60 env LD_PRELOAD=" + dir + "/lib/libsemcache.so SEMCACHE_STATS=1 " + env + " " +
                          dir + "/tests/" + prog + " " + args + " >" + t + "/out 2>" + t + "/err";
  const int st = system(cmd.c_str());
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.out = slurp(t + "/out");
  r.err = slurp(t + "/err");
  if (r.status == 124 || r.status == 137) r.err += "\n[watchdog: killed after 60 s: a hang]\n";
  unlink((t + "/out").c_str());
  unlink((t + "/err").c_str());
  rmdir(tmpl);
  return r;
}

class SemCacheGpuTest : public ::testing::TestWithParam<const char *> {
protected:
  void SetUp() override
  {
    REQUIRE_GPU();
    for (const char *f : {"/lib/libsemcache.so", "/tests/semcache_routines", "/tests/semcache_chain", "/tests/semcache_io"})
      ASSERT_EQ(0, access((build_dir() + f).c_str(), X_OK))
          << build_dir() + f
          << " missing: make semcache build/tests/semcache_routines build/tests/semcache_chain build/tests/semcache_io";
  }
};

TEST_P(SemCacheGpuTest, EveryRoutineInBothPrecisionsAndTheGesvMemo)
{
  const ProgRun r = run(std::string("SEMCACHE_DEVICE=gpu SEMCACHE_PROTOCOL=") + GetParam(), "semcache_routines");
  ASSERT_EQ(0, r.status) << r.out << r.err;
  EXPECT_NE(std::string::npos, r.out.find("checks ok")) << r.out;
  EXPECT_NE(std::string::npos, r.err.find("\"device\":\"gpu\"")) << r.err;
  EXPECT_EQ(0, r.stat("host_calls")) << "every call ran on the GPU: " << r.err;
  EXPECT_GE(r.stat("calls"), 40) << r.err;
  EXPECT_EQ(7, r.stat("gesv_calls")) << r.err;
  EXPECT_EQ(3, r.stat("gesv_memo_hits")) << "dgesv_ twice, LAPACKE_dgesv, sgesv_: " << r.err;
  EXPECT_GT(r.stat("hits"), 0) << r.err;
  EXPECT_GE(r.stat("bookkeeping_s"), 0) << r.err;
}

TEST_P(SemCacheGpuTest, AChainSendsEachOperandOncePerChange)
{
  const ProgRun r = run(std::string("SEMCACHE_DEVICE=gpu SEMCACHE_PROTOCOL=") + GetParam(), "semcache_chain");
  ASSERT_EQ(0, r.status) << r.err;
  EXPECT_GE(r.stat("calls"), 16) << r.err;
  EXPECT_LE(r.stat("transfers_h2d"), 12) << r.err;
  EXPECT_GE(r.stat("transfers_h2d"), 3) << r.err;
  if (std::string(GetParam()) == "write-through")
    EXPECT_GE(r.stat("transfers_d2h"), 16) << "every output at once: " << r.err;
}

TEST_P(SemCacheGpuTest, EvictionUnderASmallCapacityKeepsResultsRight)
{
  const ProgRun r = run(std::string("SEMCACHE_DEVICE=gpu SEMCACHE_CAPACITY=262144 SEMCACHE_PROTOCOL=") + GetParam(),
                    "semcache_routines");
  ASSERT_EQ(0, r.status) << r.out << r.err;
  EXPECT_NE(std::string::npos, r.out.find("checks ok")) << r.out;
  EXPECT_GT(r.stat("evictions"), 0) << r.err;
  EXPECT_GT(r.stat("refused"), 0) << "the 200 x 200 solves do not fit: on the CPU, counted: " << r.err;
}

TEST_P(SemCacheGpuTest, SystemCallsReadAndWriteCachedMatrices)
{
  /* io.c: results written (write, pwrite, writev, fwrite, send) and
   * inputs read (read, pread, readv, fread, recv) between BLAS calls, every
   * byte checked; through the drop-in the kernel's access to a protected
   * page would fail those calls with EFAULT (dropin_io.c) */
  const ProgRun r = run(std::string("SEMCACHE_DEVICE=gpu SEMCACHE_PROTOCOL=") + GetParam(), "semcache_io");
  ASSERT_EQ(0, r.status) << r.out << r.err;
  EXPECT_NE(std::string::npos, r.out.find("checks ok")) << r.out;
  EXPECT_EQ(0, r.stat("host_calls")) << r.err;
}

TEST_P(SemCacheGpuTest, FourThreadsAtOnceWithAndWithoutEviction)
{
  /* Four threads' first CUDA calls (cuSOLVER's handle, workspaces) malloc
   * beside their protected matrices while holding the driver's lock: this
   * hung while the cache protected pages it shared with the allocator
   * (docs/semcache.md, "Protection"); the host model of that hang is
   * SemCacheCopierTest's MallocUnderTheDriversLock. */
  for (const char *cap : {"0", "262144"}) {
    const ProgRun r = run(std::string("SEMCACHE_DEVICE=gpu SEMCACHE_CAPACITY=") + cap + " SEMCACHE_PROTOCOL=" + GetParam(),
                      "semcache_routines", "threads");
    ASSERT_EQ(0, r.status) << "capacity " << cap << ": " << r.out << r.err;
    EXPECT_NE(std::string::npos, r.out.find("checks ok")) << r.out;
    EXPECT_EQ(28, r.stat("gesv_calls")) << r.err;
  }
}

INSTANTIATE_TEST_SUITE_P(SemCache, SemCacheGpuTest, ::testing::Values("write-back", "write-through"),
                         [](const ::testing::TestParamInfo<const char *> &i) {
                           return std::string(i.param[6] == 'b' ? "WriteBack" : "WriteThrough");
                         });

TEST(SemCacheGpuNoCacheTest, EveryCallSendsItsOperands)
{
  REQUIRE_GPU();
  ProgRun r = run("SEMCACHE_DEVICE=gpu SEMCACHE_CACHE=off", "semcache_chain");
  ASSERT_EQ(0, r.status) << r.err;
  EXPECT_EQ(41, r.stat("transfers_h2d")) << "chain.c's 17 calls' operands: " << r.err;
  EXPECT_EQ(16, r.stat("transfers_d2h")) << r.err;
  EXPECT_EQ(0, r.stat("hits")) << r.err;
  r = run("SEMCACHE_DEVICE=gpu SEMCACHE_CACHE=off", "semcache_routines");
  ASSERT_EQ(0, r.status) << r.out << r.err;
  EXPECT_EQ(0, r.stat("gesv_memo_hits")) << r.err;
  EXPECT_EQ(0, r.stat("host_calls")) << r.err;
}

} // namespace
