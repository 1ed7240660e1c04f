/*
 * collage_options_test.cpp - the `collage` command line: defaults, the two
 * modes, and a clear refusal of every bad option a user could give.
 */
#include <gtest/gtest.h>

#include <cerrno>
#include <string>
#include <vector>

#include "samples/collage/options.h"

namespace {

struct Parsed {
  int rc;
  collage_options o;
  std::string err;
};

Parsed Parse(std::vector<std::string> args)
{
  Parsed p;
  std::vector<char *> argv;
  static char name[] = "collage";
  argv.push_back(name);
  for (auto &a : args)
    argv.push_back(&a[0]);
  char err[512] = "";
  p.rc = collage_parse_options((int)argv.size(), argv.data(), &p.o, err, sizeof(err));
  p.err = err;
  return p;
}

TEST(CollageOptions, DefaultsAreTheBenchmarkAtThePapersScale)
{
  Parsed p = Parse({});
  ASSERT_EQ(p.rc, 0) << p.err;
  EXPECT_EQ(p.o.mode, COLLAGE_MODE_BENCH);
  EXPECT_EQ(p.o.tiles, 1000000u);
  EXPECT_EQ(p.o.L, 32u);
  EXPECT_EQ(p.o.cap, 64u);
  EXPECT_EQ(p.o.K, collage_default_k(1000000));
  EXPECT_EQ(p.o.nversions, COLLAGE_NVERSIONS);
  ASSERT_EQ(p.o.nsizes, 5);
  EXPECT_EQ(p.o.w[0], 512);
  EXPECT_EQ(p.o.h[0], 384);
  EXPECT_EQ(p.o.w[4], 8192);
  EXPECT_EQ(p.o.h[4], 6144);
  EXPECT_EQ(p.o.fetch, 1);
  EXPECT_EQ(p.o.reg, 1);
  EXPECT_EQ(p.o.reps, 3);
}

TEST(CollageOptions, PictureModeRunsTheWarpVersion)
{
  Parsed p = Parse({"in.png", "out.png", "--tiles", "20k"});
  ASSERT_EQ(p.rc, 0) << p.err;
  EXPECT_EQ(p.o.mode, COLLAGE_MODE_PICTURE);
  EXPECT_STREQ(p.o.in, "in.png");
  EXPECT_STREQ(p.o.out, "out.png");
  EXPECT_EQ(p.o.tiles, 20000u);
  ASSERT_EQ(p.o.nversions, 1);
  EXPECT_EQ(p.o.versions[0], COLLAGE_GPUFS_WARP);
}

TEST(CollageOptions, ValuesAreParsed)
{
  Parsed p = Parse({"--tiles", "10M", "--L", "16", "--K", "12", "--cap", "128", "--versions", "gpufs-warp,cpu",
                    "--sizes", "1024x768,64x32", "--reps", "2", "--cache", "2G", "--small-cache", "10x",
                    "--threads", "4", "--device", "1", "--no-fetch", "--rebuild", "--no-register", "--dir", "/tmp/x", "--seeds",
                    "/tmp/s", "--out", "rows.jsonl", "--collage-out", "c.png"});
  ASSERT_EQ(p.rc, 0) << p.err;
  EXPECT_EQ(p.o.tiles, 10000000u);
  EXPECT_EQ(p.o.L, 16u);
  EXPECT_EQ(p.o.K, 12u);
  EXPECT_EQ(p.o.cap, 128u);
  ASSERT_EQ(p.o.nversions, 2);
  EXPECT_EQ(p.o.versions[0], COLLAGE_GPUFS_WARP);
  EXPECT_EQ(p.o.versions[1], COLLAGE_CPU);
  ASSERT_EQ(p.o.nsizes, 2);
  EXPECT_EQ(p.o.w[1], 64);
  EXPECT_EQ(p.o.h[1], 32);
  EXPECT_EQ(p.o.reps, 2);
  EXPECT_EQ(p.o.cache, 2ull << 30);
  EXPECT_DOUBLE_EQ(p.o.small_factor, 10.0);
  EXPECT_EQ(p.o.small_cache, 0u);
  EXPECT_EQ(p.o.threads, 4);
  EXPECT_EQ(p.o.device, 1);
  EXPECT_EQ(p.o.fetch, 0);
  EXPECT_EQ(p.o.rebuild, 1);
  EXPECT_EQ(p.o.reg, 0);
  EXPECT_STREQ(p.o.dir, "/tmp/x");
  EXPECT_STREQ(p.o.seeds, "/tmp/s");
  EXPECT_STREQ(p.o.rows, "rows.jsonl");
  EXPECT_STREQ(p.o.collage_out, "c.png");
  Parsed q = Parse({"--small-cache", "400M", "--quick"});
  ASSERT_EQ(q.rc, 0) << q.err;
  EXPECT_EQ(q.o.small_cache, 400ull << 20);
  EXPECT_EQ(q.o.tiles, 20000u);
  EXPECT_EQ(q.o.nsizes, 2);
  EXPECT_EQ(q.o.reps, 1);
}

TEST(CollageOptions, HelpIsNotAnError)
{
  EXPECT_EQ(Parse({"--help"}).rc, 1);
  EXPECT_EQ(Parse({"-h"}).rc, 1);
}

/* Each bad command line: -EINVAL and a message naming what is wrong. */
TEST(CollageOptions, BadInputIsRefusedWithAMessage)
{
  const struct {
    std::vector<std::string> args;
    const char *says;
  } cases[] = {
      {{"--frobnicate"}, "unknown option"},
      {{"--tiles"}, "needs a value"},
      {{"--tiles", "lots"}, "--tiles"},
      {{"--tiles", "8"}, "--tiles"},
      {{"--tiles", "1.5"}, "--tiles"},
      {{"--L", "0"}, "--L"},
      {{"--L", "65"}, "--L"},
      {{"--K", "25"}, "--K"},
      {{"--cap", "0"}, "--cap"},
      {{"--L", "64", "--cap", "128"}, "candidates"},
      {{"--versions", "gpufs-fast"}, "unknown version"},
      {{"--versions", "cpu,cpu"}, "twice"},
      {{"--versions", ","}, "no version"},
      {{"--sizes", "100"}, "WxH"},
      {{"--sizes", "16x16"}, "WxH"},
      {{"--sizes", "100000x100"}, "WxH"},
      {{"--sizes", "64x64,64x64,64x64,64x64,64x64,64x64,64x64,64x64,64x64"}, "at most 8"},
      {{"--reps", "0"}, "--reps"},
      {{"--cache", "12"}, "--cache"},
      {{"--small-cache", "0.5x"}, "--small-cache"},
      {{"--small-cache", "x"}, "--small-cache"},
      {{"--threads", "-1"}, "--threads"},
      {{"--device", "x"}, "--device"},
      {{"--dir", ""}, "--dir"},
      {{"in.png"}, "output picture"},
      {{"a.png", "b.png", "c.png"}, "at most two"},
  };
  for (const auto &c : cases) {
    Parsed p = Parse(c.args);
    EXPECT_EQ(p.rc, -EINVAL) << c.args[0];
    EXPECT_NE(p.err.find(c.says), std::string::npos) << c.args[0] << ": " << p.err;
  }
}

TEST(CollageOptions, ValuesAfterAnEqualsSign)
{
  Parsed p = Parse({"--tiles=2.5M", "--cache=2G", "--versions=cpu", "in.png", "--small-cache=4x", "out.png"});
  ASSERT_EQ(p.rc, 0) << p.err;
  EXPECT_EQ(p.o.tiles, 2500000u);
  EXPECT_EQ(p.o.cache, 2ull << 30);
  EXPECT_EQ(p.o.small_factor, 4.0);
  EXPECT_EQ(p.o.mode, COLLAGE_MODE_PICTURE);
  ASSERT_EQ(p.o.nversions, 1);
  EXPECT_EQ(p.o.versions[0], COLLAGE_CPU);
  p = Parse({"--tiles=1G"});
  EXPECT_EQ(p.rc, -EINVAL);
  EXPECT_EQ(p.err.rfind("--tiles 1G: a whole count", 0), 0u) << p.err;
  p = Parse({"--no-fetch=1"});
  EXPECT_EQ(p.err, "--no-fetch takes no value");
}

/* A missing picture is refused before the dataset is fetched or built. */
TEST(CollageOptions, FilesAreCheckedFirst)
{
  char err[512];
  Parsed p = Parse({"/missing.png", "/tmp/collage_out.png"});
  ASSERT_EQ(p.rc, 0) << p.err;
  EXPECT_EQ(collage_check_files(&p.o, err, sizeof(err)), -ENOENT);
  EXPECT_STREQ(err, "IN /missing.png: No such file or directory");
  p = Parse({"--out", "/no/such/folder/rows.jsonl"});
  ASSERT_EQ(p.rc, 0) << p.err;
  EXPECT_EQ(collage_check_files(&p.o, err, sizeof(err)), -ENOENT);
  EXPECT_NE(std::string(err).find("--out /no/such/folder/rows.jsonl"), std::string::npos) << err;
  p = Parse({});
  EXPECT_EQ(collage_check_files(&p.o, err, sizeof(err)), 0) << err;
}

TEST(CollageOptions, VersionNames)
{
  EXPECT_STREQ(collage_version_name(COLLAGE_CPU), "cpu");
  EXPECT_STREQ(collage_version_name(COLLAGE_CPU_GPU), "cpu-gpu");
  EXPECT_STREQ(collage_version_name(COLLAGE_GPUFS_BLOCK), "gpufs-block");
  EXPECT_STREQ(collage_version_name(COLLAGE_GPUFS_WARP), "gpufs-warp");
  EXPECT_STREQ(collage_version_name(COLLAGE_GPUFS_GREAD), "gpufs-gread");
  EXPECT_STREQ(collage_version_name((enum collage_version)9), "?");
}

} // namespace
