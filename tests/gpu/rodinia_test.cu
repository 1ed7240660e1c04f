/*
 * rodinia_test.cu - every rodinia-io benchmark at a tiny scale, all four
 * versions, each result verified against its CPU reference by the
 * benchmark's own check; the gpufs versions with a page cache smaller
 * than the inputs; and the parts of 2dconv, gesummv and pathfinder that
 * rodinia_mpi's ranks run, against the whole run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <string>
#include <vector>

#include "rodinia-io/conv2d/conv2d.h"
#include "rodinia-io/gesummv/gesummv.h"
#include "rodinia-io/harness/driver.h"
#include "rodinia-io/harness/options.h"
#include "rodinia-io/harness/rio.h"
#include "rodinia-io/harness/rio_ctx.h"
#include "rodinia-io/pathfinder/pathfinder.h"
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

/* ---------------- parts of a run (rodinia_mpi's ranks) ---------------- */

/* fn inside a fresh libgpufs instance with the harness's buffers for
 * gpufs version v (as the driver and rodinia_mpi make them). */
template <typename F> static int rio_in_instance(struct rio_run *run, enum rio_version v, F fn)
{
  struct gpufs_config cfg;
  gpufs_config_default(&cfg);
  cfg.page_size = v == RIO_GPUFS_4K ? 4096u : 65536u;
  cfg.cache_size = (run->input_bytes + (64ull << 20)) / cfg.page_size * cfg.page_size;
  EXPECT_EQ(0, gpufs_start(&cfg)) << gpufs_error_detail();
  EXPECT_EQ(0, rio_ctx_prepare(run, v)) << run->why;
  const int rc = fn();
  rio_ctx_release(run);
  EXPECT_EQ(0, gpufs_stop());
  return rc;
}

/* The gpufs versions of 2dconv, gesummv and pathfinder over three uneven
 * parts of their work, each part in its own instance as a rank runs it:
 * put together, the bytes of the whole run (and, for 2dconv and
 * pathfinder, of the CPU reference).  The memory versions refuse a part. */
TEST(RodiniaParts, GpufsPartsAreTheWholeRunBitForBit)
{
  REQUIRE_GPU();
  rio_dir d;
  for (const char *name : {"2dconv", "gesummv", "pathfinder"}) {
    struct rio_run run;
    memset(&run, 0, sizeof(run));
    run.bench = rio_find_bench(name);
    run.scale = 1.0 / 1024;
    run.seed = RIO_DEFAULT_SEED;
    run.expert_threads = 8;
    ASSERT_EQ(0, run.bench->setup(&run)) << run.why;
    for (int i = 0; i < run.ninputs; i++)
      run.input_bytes += run.in[i].size;
    ASSERT_EQ(0, rio_inputs_prepare(&run, d.path.c_str(), RIO_GEN_MISSING, 0)) << run.why;
    ASSERT_EQ(0, run.bench->reference(&run)) << run.why;
    /* the result, its units (2dconv: 16-row bands) and the bytes of one */
    void *got;
    const void *ref;
    uint64_t units, unit;
    if (!strcmp(name, "2dconv")) {
      const struct conv2d_state *s = (const struct conv2d_state *)run.state;
      got = s->out, ref = s->ref, units = s->n / CONV2D_BAND, unit = CONV2D_BAND * s->n * sizeof(float);
    } else if (!strcmp(name, "gesummv")) {
      const struct matvec_state *s = (const struct matvec_state *)run.state;
      got = s->got, ref = NULL, units = s->n, unit = sizeof(float);
    } else {
      const struct pathfinder_state *s = (const struct pathfinder_state *)run.state;
      got = s->got, ref = s->want, units = s->cols, unit = sizeof(int32_t);
    }
    const uint64_t cut[4] = {0, units / 5, units / 5 + units / 2, units};
    for (enum rio_version v : {RIO_GPUFS_4K, RIO_GPUFS_64K}) {
      EXPECT_EQ(0, rio_in_instance(&run, v, [&] { return run.bench->run(&run, v); })) << name << ": " << run.why;
      std::vector<uint8_t> whole((const uint8_t *)got, (const uint8_t *)got + units * unit), parts(units * unit);
      for (int k = 0; k < 3; k++) {
        const uint64_t u0 = cut[k], u1 = cut[k + 1];
        uint8_t *dst = parts.data() + u0 * unit;
        const int rc = rio_in_instance(&run, v, [&] {
          if (!strcmp(name, "2dconv"))
            return conv2d_run_rows(&run, v, u0 * CONV2D_BAND, u1 * CONV2D_BAND, (float *)dst);
          if (!strcmp(name, "pathfinder"))
            return pathfinder_run_columns(&run, v, u0, u1, (int32_t *)dst);
          const int r = gesummv_run_rows(&run, v, u0, u1);
          memcpy(dst, (const float *)got + u0, (u1 - u0) * unit);
          return r;
        });
        EXPECT_EQ(0, rc) << name << " " << rio_version_name(v) << " part " << k << ": " << run.why;
      }
      EXPECT_EQ(0, memcmp(whole.data(), parts.data(), whole.size())) << name << " " << rio_version_name(v);
      if (ref)
        EXPECT_EQ(0, memcmp(whole.data(), ref, whole.size())) << name << " " << rio_version_name(v);
    }
    std::vector<float> buf(units * unit / sizeof(float) + 1);
    if (!strcmp(name, "2dconv")) {
      EXPECT_EQ(-EINVAL, conv2d_run_rows(&run, RIO_CPU_IO, 0, CONV2D_BAND, buf.data()));
      EXPECT_NE(nullptr, strstr(run.why, "a part only in the gpufs versions")) << run.why;
    }
    if (!strcmp(name, "pathfinder")) {
      EXPECT_EQ(-EINVAL, pathfinder_run_columns(&run, RIO_EXPERT, 0, 10, (int32_t *)buf.data()));
      EXPECT_NE(nullptr, strstr(run.why, "a part of the columns only in the gpufs")) << run.why;
    }
    run.bench->teardown(&run);
    rio_inputs_free(&run);
  }
}
