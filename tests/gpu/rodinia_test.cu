/*
 * rodinia_test.cu - every rodinia-io benchmark at a tiny scale, all four
 * versions, each result verified against its CPU reference by the
 * benchmark's own check; and the gpufs versions with a page cache smaller
 * than the inputs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <string>

#include "rodinia-io/harness/driver.h"
#include "rodinia-io/harness/options.h"
#include "rodinia-io/harness/rio.h"
#include "tests/gpu/gpu_util.h"

/* A test folder that also removes the input files and sidecars a run
 * wrote into it (tdir removes only the files it made itself). */
struct rio_dir : tdir {
  ~rio_dir()
  {
    if (!path.empty() && system(("rm -f " + path + "/*").c_str()) != 0)
      fprintf(stderr, "could not clear %s\n", path.c_str());
  }
};

static struct rio_options tiny_options(const char *dir, double scale)
{
  struct rio_options o;
  char err[256];
  char *argv[] = {(char *)"rodinia", nullptr};
  EXPECT_EQ(0, rio_parse_options(1, argv, nullptr, 0, &o, err, sizeof(err))) << err;
  o.scale = scale;
  o.reps = 1;
  snprintf(o.dir, sizeof(o.dir), "%s", dir);
  return o;
}

static void expect_all_verified(const struct rio_bench_result &r, const struct rio_options &o)
{
  ASSERT_FALSE(r.setup_failed) << r.why;
  for (int k = 0; k < o.nversions; k++) {
    const struct rio_result &v = r.r[o.versions[k]];
    EXPECT_TRUE(v.ran);
    EXPECT_TRUE(v.ok) << rio_version_name(v.v) << ": " << v.why;
    if (v.ok) {
      EXPECT_GT(v.e2e_s, 0.0) << rio_version_name(v.v);
      EXPECT_GT(v.io_s, 0.0) << rio_version_name(v.v);
    }
  }
}

class RodiniaTest : public ::testing::TestWithParam<int> {};

TEST_P(RodiniaTest, EveryVersionVerified)
{
  REQUIRE_GPU();
  const struct rio_bench *b = rio_benches[GetParam()];
  rio_dir d;
  struct rio_options o = tiny_options(d.path.c_str(), 1.0 / 1024);
  struct rio_bench_result r;
  int rc = rio_run_bench(b, &o, &r, 0);
  EXPECT_EQ(0, rc) << b->name;
  expect_all_verified(r, o);
  /* the gpufs versions read through the cache: every input page missed once */
  for (int v = RIO_GPUFS_4K; v <= RIO_GPUFS_64K; v++)
    if (r.r[v].ok) {
      EXPECT_TRUE(r.r[v].has_stats);
      EXPECT_GE(r.r[v].st.misses * (v == RIO_GPUFS_4K ? 4096ull : 65536ull), r.input_bytes / 2)
          << rio_version_name((enum rio_version)v);
    }
  /* the same inputs are reused the second time, and still verify */
  o.gen = RIO_GEN_NEVER;
  o.nversions = 1;
  o.versions[0] = RIO_GPUFS_4K;
  EXPECT_EQ(0, rio_run_bench(b, &o, &r, 0)) << r.why << r.r[RIO_GPUFS_4K].why;
}

static std::string bench_name(const ::testing::TestParamInfo<int> &info)
{
  return rio_benches[info.param]->name;
}

INSTANTIATE_TEST_SUITE_P(Rodinia, RodiniaTest, ::testing::Range(0, 14), bench_name);

TEST(RodiniaSuite, FourteenBenchmarks)
{
  ASSERT_EQ(14, rio_nbenches);
  for (const char *n : {"hotspot", "lud", "backprop", "bfs", "dwt2d", "nw", "pathfinder", "stencil", "2dconv",
                        "3dconv", "gesummv", "mvt", "bicg", "atax"})
    EXPECT_NE(nullptr, rio_find_bench(n)) << n;
  EXPECT_EQ(nullptr, rio_find_bench("srad"));
}

/* The paper's 500 MB case in small (--small-cache): after the full-cache
 * runs, the gpufs versions again with a cache of 16 MiB under about 65 MB
 * of hotspot inputs; pages are evicted and the results still verify. */
TEST(RodiniaCache, SmallerThanTheInputs)
{
  REQUIRE_GPU();
  rio_dir d;
  struct rio_options o = tiny_options(d.path.c_str(), 1.0 / 32);
  o.small_cache = 16u << 20;
  o.nversions = 2;
  o.versions[0] = RIO_GPUFS_4K;
  o.versions[1] = RIO_GPUFS_64K;
  struct rio_bench_result r;
  EXPECT_EQ(0, rio_run_bench(rio_find_bench("hotspot"), &o, &r, 0));
  expect_all_verified(r, o);
  ASSERT_GT(r.input_bytes, 3 * o.small_cache);
  for (int v = RIO_GPUFS_4K; v <= RIO_GPUFS_64K; v++) {
    const struct rio_result &s = r.small[v];
    EXPECT_TRUE(s.ran);
    EXPECT_TRUE(s.ok) << rio_version_name((enum rio_version)v) << ": " << s.why;
    EXPECT_EQ(o.small_cache, s.cache);
    EXPECT_GT(s.st.evictions, 0u) << rio_version_name((enum rio_version)v);
    EXPECT_EQ(0u, r.r[v].st.evictions) << "the full cache holds every input";
  }
}

/* A file that went bad between runs is refused before any version runs. */
TEST(RodiniaInputsOnGpu, TruncatedInputRefused)
{
  REQUIRE_GPU();
  rio_dir d;
  struct rio_options o = tiny_options(d.path.c_str(), 1.0 / 1024);
  o.nversions = 1;
  o.versions[0] = RIO_GPUFS_4K;
  struct rio_bench_result r;
  const struct rio_bench *b = rio_find_bench("pathfinder");
  ASSERT_EQ(0, rio_run_bench(b, &o, &r, 0)) << r.why;
  std::string cmd = "for f in " + d.path + "/pathfinder-wall-*.bin; do truncate -s 4096 $f; done";
  ASSERT_EQ(0, system(cmd.c_str()));
  EXPECT_EQ(-EBADMSG, rio_run_bench(b, &o, &r, 0));
  EXPECT_TRUE(r.setup_failed);
  EXPECT_NE(nullptr, strstr(r.why, "4096 bytes")) << r.why;
  EXPECT_FALSE(r.r[RIO_GPUFS_4K].ran);
}
