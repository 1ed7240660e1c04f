/*
 * rodinia_harness_test.cpp - the rodinia-io harness without a GPU: the
 * command line (every refusal), input files (generated, reused, and each
 * kind of bad file refused with a clear reason), checks and random numbers.
 */
#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "rodinia-io/harness/options.h"
#include "rodinia-io/harness/rio.h"

/* ---------------- options ---------------- */

static const char *const kNames[] = {"hotspot", "lud", "bfs"};

static int parse(std::vector<const char *> args, struct rio_options *o, std::string *err = nullptr)
{
  char e[256] = "";
  args.insert(args.begin(), "rodinia");
  int rc = rio_parse_options((int)args.size(), (char **)args.data(), kNames, 3, o, e, sizeof(e));
  if (err)
    *err = e;
  return rc;
}

TEST(RodiniaOptions, Defaults)
{
  struct rio_options o;
  ASSERT_EQ(0, parse({}, &o));
  EXPECT_EQ(0, o.nbenches);
  EXPECT_EQ(RIO_NVERSIONS, o.nversions);
  EXPECT_DOUBLE_EQ(1.0, o.scale);
  EXPECT_EQ(3, o.reps);
  EXPECT_EQ(0u, o.cache);
  EXPECT_EQ(8, o.expert_threads);
  EXPECT_EQ(RIO_GEN_MISSING, o.gen);
  EXPECT_STREQ("/tmp/gpufs_rodinia", o.dir);
}

TEST(RodiniaOptions, EveryOption)
{
  struct rio_options o;
  ASSERT_EQ(0, parse({"bfs", "--versions", "gpufs-64k,cpu-io", "--scale", "0.5", "--reps", "5", "--cache",
                      "500M", "--small-cache", "256M", "--dir", "/x", "--out", "r.jsonl", "--threads", "4", "--device", "1",
                      "--regen", "lud"},
                     &o));
  ASSERT_EQ(2, o.nbenches);
  EXPECT_STREQ("bfs", o.benches[0]);
  EXPECT_STREQ("lud", o.benches[1]);
  ASSERT_EQ(2, o.nversions);
  EXPECT_EQ(RIO_CPU_IO, o.versions[0]); /* table order */
  EXPECT_EQ(RIO_GPUFS_64K, o.versions[1]);
  EXPECT_DOUBLE_EQ(0.5, o.scale);
  EXPECT_EQ(5, o.reps);
  EXPECT_EQ(500ull << 20, o.cache);
  EXPECT_EQ(256ull << 20, o.small_cache);
  EXPECT_STREQ("/x", o.dir);
  EXPECT_STREQ("r.jsonl", o.out);
  EXPECT_EQ(4, o.expert_threads);
  EXPECT_EQ(1, o.device);
  EXPECT_EQ(RIO_GEN_ALWAYS, o.gen);
}

TEST(RodiniaOptions, QuickIsSmallUnlessScaleGiven)
{
  struct rio_options o;
  ASSERT_EQ(0, parse({"--quick"}, &o));
  EXPECT_DOUBLE_EQ(1.0 / 64, o.scale);
  EXPECT_EQ(1, o.reps);
  ASSERT_EQ(0, parse({"--quick", "--scale", "0.25", "--reps", "2"}, &o));
  EXPECT_DOUBLE_EQ(0.25, o.scale);
  EXPECT_EQ(2, o.reps);
}

TEST(RodiniaOptions, ValuesAfterAnEqualsSign)
{
  struct rio_options o;
  std::string err;
  ASSERT_EQ(0, parse({"--scale=0.5", "lud", "--cache=1G", "--versions=expert", "--out=r.jsonl"}, &o, &err)) << err;
  EXPECT_DOUBLE_EQ(0.5, o.scale);
  EXPECT_EQ(1ull << 30, o.cache);
  ASSERT_EQ(1, o.nversions);
  EXPECT_EQ(RIO_EXPERT, o.versions[0]);
  EXPECT_STREQ("r.jsonl", o.out);
  ASSERT_EQ(1, o.nbenches);
  EXPECT_STREQ("lud", o.benches[0]);
}

/* The data folder and the rows file before any input is generated. */
TEST(RodiniaOptions, FilesAreCheckedFirst)
{
  struct rio_options o;
  char err[256];
  ASSERT_EQ(0, parse({"--dir", "/proc/no_such_folder", "--out", "/tmp/rio_rows.jsonl"}, &o));
  EXPECT_NE(0, rio_check_files(&o, err, sizeof(err)));
  EXPECT_NE(std::string::npos, std::string(err).find("--dir /proc/no_such_folder")) << err;
  ASSERT_EQ(0, parse({"--dir", "/tmp", "--out", "/no/such/folder/r.jsonl"}, &o));
  EXPECT_EQ(-ENOENT, rio_check_files(&o, err, sizeof(err)));
  EXPECT_NE(std::string::npos, std::string(err).find("--out /no/such/folder/r.jsonl")) << err;
}

TEST(RodiniaOptions, HelpAndList)
{
  struct rio_options o;
  EXPECT_EQ(1, parse({"--help"}, &o));
  ASSERT_EQ(0, parse({"--list"}, &o));
  EXPECT_EQ(1, o.list);
  ASSERT_EQ(0, parse({"--no-generate"}, &o));
  EXPECT_EQ(RIO_GEN_NEVER, o.gen);
}

/* Every bad argument: -EINVAL and a message naming it. */
TEST(RodiniaOptions, BadArgumentsAreNamed)
{
  struct {
    std::vector<const char *> args;
    const char *named;
  } cases[] = {
      {{"srad"}, "unknown benchmark 'srad'"},
      {{"--frobnicate"}, "unknown option '--frobnicate'"},
      {{"lud", "lud"}, "given twice"},
      {{"--versions", "gpufs-8k"}, "unknown version 'gpufs-8k'"},
      {{"--versions", "expert,expert"}, "given twice"},
      {{"--versions", ","}, "no version"},
      {{"--scale", "0"}, "--scale 0"},
      {{"--scale", "-1"}, "--scale -1"},
      {{"--scale", "abc"}, "--scale abc"},
      {{"--scale", "100"}, "--scale 100"},
      {{"--reps", "0"}, "--reps 0"},
      {{"--reps", "3x"}, "--reps 3x"},
      {{"--cache", "0"}, "--cache 0"},
      {{"--cache", "12Q"}, "--cache 12Q"},
      {{"--cache", "100K"}, "--cache 100K"},
      {{"--small-cache", "x"}, "--small-cache x"},
      {{"--small-cache"}, "--small-cache needs a value"},
      {{"--threads", "0"}, "--threads 0"},
      {{"--threads", "99"}, "--threads 99"},
      {{"--device", "-2"}, "--device -2"},
      {{"--dir"}, "--dir needs a value"},
      {{"--dir", ""}, "--dir '': empty"},
      {{"--reps=x"}, "--reps x: an integer from 1 to 100"},
      {{"--list=1"}, "--list takes no value"},
  };
  for (auto &c : cases) {
    struct rio_options o;
    std::string err;
    EXPECT_EQ(-EINVAL, parse(c.args, &o, &err)) << c.named;
    EXPECT_NE(std::string::npos, err.find(c.named)) << "message: " << err;
  }
}

/* ---------------- input files ---------------- */

/* A benchmark of two inputs whose bytes are rio_rand words. */
static int fake_setup(struct rio_run *run)
{
  run->ninputs = 2;
  snprintf(run->in[0].name, sizeof(run->in[0].name), "a");
  run->in[0].size = 1 << 16;
  snprintf(run->in[1].name, sizeof(run->in[1].name), "b");
  run->in[1].size = 3 << 13;
  return 0;
}

static int fake_generate(struct rio_run *run, int i, void *buf)
{
  uint64_t *w = (uint64_t *)buf;
  for (uint64_t k = 0; k < run->in[i].size / 8; k++)
    w[k] = rio_rand(run->seed, (uint64_t)i, k);
  return 0;
}

static const struct rio_bench kFake = {"fake", "test", fake_setup, fake_generate, nullptr, nullptr,
                                       nullptr, nullptr, 0};

struct RodiniaInputs : ::testing::Test {
  char dir[64];
  struct rio_run run;
  void SetUp() override
  {
    snprintf(dir, sizeof(dir), "/tmp/rio_inputs_XXXXXX");
    ASSERT_NE(nullptr, mkdtemp(dir));
    fresh(RIO_DEFAULT_SEED);
  }
  void fresh(uint64_t seed)
  {
    memset(&run, 0, sizeof(run));
    run.bench = &kFake;
    run.scale = 1;
    run.seed = seed;
    fake_setup(&run);
  }
  void TearDown() override
  {
    rio_inputs_free(&run);
    std::string cmd = std::string("rm -rf ") + dir;
    ASSERT_EQ(0, system(cmd.c_str()));
  }
  int prepare(enum rio_gen_mode mode)
  {
    rio_inputs_free(&run);
    run.why[0] = 0;
    return rio_inputs_prepare(&run, dir, mode, 0);
  }
  void expect_content(uint64_t seed)
  {
    for (int i = 0; i < run.ninputs; i++) {
      const uint64_t *w = (const uint64_t *)run.host_in[i];
      for (uint64_t k = 0; k < run.in[i].size / 8; k++)
        ASSERT_EQ(rio_rand(seed, (uint64_t)i, k), w[k]) << "input " << i << " word " << k;
    }
  }
};

TEST_F(RodiniaInputs, GeneratedThenReused)
{
  ASSERT_EQ(0, prepare(RIO_GEN_MISSING)) << run.why;
  expect_content(run.seed);
  struct stat st;
  ASSERT_EQ(0, stat(run.in[0].path, &st));
  EXPECT_EQ((off_t)run.in[0].size, st.st_size);
  EXPECT_NE(nullptr, strstr(run.in[0].path, "/fake-a-65536.bin"));
  /* the second time the file is read, not written: its mtime stays */
  const time_t mtime = st.st_mtime;
  sleep(1);
  ASSERT_EQ(0, prepare(RIO_GEN_NEVER)) << run.why;
  expect_content(run.seed);
  ASSERT_EQ(0, stat(run.in[0].path, &st));
  EXPECT_EQ(mtime, st.st_mtime);
}

TEST_F(RodiniaInputs, MissingUnderNoGenerate)
{
  EXPECT_EQ(-ENOENT, prepare(RIO_GEN_NEVER));
  EXPECT_NE(nullptr, strstr(run.why, "no such file")) << run.why;
  EXPECT_NE(nullptr, strstr(run.why, "--no-generate")) << run.why;
}

TEST_F(RodiniaInputs, TruncatedFileRefused)
{
  ASSERT_EQ(0, prepare(RIO_GEN_MISSING)) << run.why;
  ASSERT_EQ(0, truncate(run.in[1].path, 4096));
  EXPECT_EQ(-EBADMSG, prepare(RIO_GEN_MISSING));
  EXPECT_NE(nullptr, strstr(run.why, "4096 bytes, expected 24576")) << run.why;
  EXPECT_NE(nullptr, strstr(run.why, "--regen")) << run.why;
  /* --regen writes it anew */
  ASSERT_EQ(0, prepare(RIO_GEN_ALWAYS)) << run.why;
  expect_content(run.seed);
  ASSERT_EQ(0, prepare(RIO_GEN_NEVER)) << run.why;
}

TEST_F(RodiniaInputs, ChangedByteRefused)
{
  ASSERT_EQ(0, prepare(RIO_GEN_MISSING)) << run.why;
  int fd = open(run.in[0].path, O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(1, pwrite(fd, "x", 1, 12345));
  close(fd);
  EXPECT_EQ(-EBADMSG, prepare(RIO_GEN_MISSING));
  EXPECT_NE(nullptr, strstr(run.why, "checksum")) << run.why;
}

TEST_F(RodiniaInputs, OtherSeedRefused)
{
  ASSERT_EQ(0, prepare(RIO_GEN_MISSING)) << run.why;
  fresh(RIO_DEFAULT_SEED + 1);
  EXPECT_EQ(-EBADMSG, prepare(RIO_GEN_MISSING));
  EXPECT_NE(nullptr, strstr(run.why, "another benchmark, seed or generator")) << run.why;
}

/* A file of another seed put under the name, with its own sidecar swapped
 * for this one's: the checksum catches it. */
TEST_F(RodiniaInputs, OtherSeedsBytesRefused)
{
  ASSERT_EQ(0, prepare(RIO_GEN_MISSING)) << run.why;
  std::vector<uint64_t> other(run.in[0].size / 8);
  for (uint64_t k = 0; k < other.size(); k++)
    other[k] = rio_rand(run.seed + 1, 0, k);
  int fd = open(run.in[0].path, O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ((ssize_t)run.in[0].size, pwrite(fd, other.data(), run.in[0].size, 0));
  close(fd);
  EXPECT_EQ(-EBADMSG, prepare(RIO_GEN_MISSING));
  EXPECT_NE(nullptr, strstr(run.why, "checksum")) << run.why;
}

TEST_F(RodiniaInputs, MissingSidecarRefused)
{
  ASSERT_EQ(0, prepare(RIO_GEN_MISSING)) << run.why;
  std::string side = std::string(run.in[0].path) + ".sum";
  ASSERT_EQ(0, unlink(side.c_str()));
  EXPECT_EQ(-EBADMSG, prepare(RIO_GEN_MISSING));
  EXPECT_NE(nullptr, strstr(run.why, "no checksum file")) << run.why;
}

TEST_F(RodiniaInputs, UnwritableFolderIsAnError)
{
  strcpy(dir + strlen(dir), "/f");
  ASSERT_EQ(0, mkdir(dir, 0755) == 0 ? 0 : -1);
  int fd = open((std::string(dir) + "/file").c_str(), O_CREAT | O_WRONLY, 0644);
  ASSERT_GE(fd, 0);
  close(fd);
  char bad[96];
  snprintf(bad, sizeof(bad), "%s/file/sub", dir);
  run.why[0] = 0;
  EXPECT_NE(0, rio_inputs_prepare(&run, bad, RIO_GEN_MISSING, 0));
  EXPECT_NE(nullptr, strstr(run.why, "cannot create the data folder")) << run.why;
  dir[strlen(dir) - 2] = 0; /* TearDown removes the parent */
}

TEST(RodiniaChecksum, SeesEveryWordAndItsPlace)
{
  std::vector<uint64_t> a(4096);
  for (size_t k = 0; k < a.size(); k++)
    a[k] = rio_rand(7, 0, k);
  const uint64_t s = rio_checksum(a.data(), a.size() * 8);
  EXPECT_EQ(s, rio_checksum(a.data(), a.size() * 8));
  std::swap(a[10], a[11]); /* same words, other places */
  EXPECT_NE(s, rio_checksum(a.data(), a.size() * 8));
  std::swap(a[10], a[11]);
  a[4095] ^= 1;
  EXPECT_NE(s, rio_checksum(a.data(), a.size() * 8));
}

/* ---------------- checks, scaled sizes, random numbers ---------------- */

TEST(RodiniaCheck, ExactNamesTheFirstDifference)
{
  struct rio_run run;
  memset(&run, 0, sizeof(run));
  int32_t want[12], got[12];
  for (int i = 0; i < 12; i++)
    want[i] = got[i] = i * 3;
  EXPECT_EQ(0, rio_check_i32(&run, "cost", got, want, 12, 4));
  got[6] = 99;
  got[9] = -1;
  EXPECT_EQ(-EBADMSG, rio_check_i32(&run, "cost", got, want, 12, 4));
  EXPECT_STREQ("cost[row 1, col 2] = 99, expected 18 (2 of 12 differ)", run.why);
  int64_t w64[3] = {1, 2, 3}, g64[3] = {1, 2, 4};
  EXPECT_EQ(-EBADMSG, rio_check_i64(&run, "x", g64, w64, 3, 0));
  EXPECT_STREQ("x[2] = 4, expected 3 (1 of 3 differ)", run.why);
}

TEST(RodiniaCheck, FloatsWithinTolerance)
{
  struct rio_run run;
  memset(&run, 0, sizeof(run));
  float want[4] = {1.0f, 100.0f, -5.0f, 0.0f};
  float got[4] = {1.0f + 1e-6f, 100.001f, -5.0f, 1e-7f};
  EXPECT_EQ(0, rio_check_f32(&run, "t", got, want, 4, 0, 1e-5, 1e-6));
  got[1] = 100.1f;
  EXPECT_EQ(-EBADMSG, rio_check_f32(&run, "t", got, want, 4, 0, 1e-5, 1e-6));
  EXPECT_NE(nullptr, strstr(run.why, "t[1] = 100.0999")) << run.why;
  got[1] = want[1];
  got[2] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(-EBADMSG, rio_check_f32(&run, "t", got, want, 4, 0, 1e-5, 1e-6)) << "NaN must fail";
}

TEST(RodiniaScaled, RoundsDownToTheMultipleButNeverBelowIt)
{
  struct rio_run run;
  memset(&run, 0, sizeof(run));
  run.scale = 1;
  EXPECT_EQ(16384u, rio_scaled(&run, 16384, 16));
  run.scale = 1.0 / 1024;
  EXPECT_EQ(16u, rio_scaled(&run, 16384, 16));
  EXPECT_EQ(64u, rio_scaled(&run, 16384, 64));
  run.scale = 0.3;
  EXPECT_EQ(4912u, rio_scaled(&run, 16384, 16));
}

TEST(RodiniaScaled, SideOfASquareInput)
{
  EXPECT_EQ(16384u, rio_scaled_side(1.0, 16384, 16, 64, 0));
  EXPECT_EQ(512u, rio_scaled_side(1.0 / 1024, 16384, 16, 64, 0)); /* 16384 / 32 */
  EXPECT_EQ(8192u, rio_scaled_side(0.25, 16384, 64, 64, 0));
  /* the largest multiple whose square fits: 16384 / sqrt(3) = 9459.4 -> 9456 */
  EXPECT_EQ(9456u, rio_scaled_side(1.0 / 3, 16384, 16, 64, 0));
  EXPECT_EQ(64u, rio_scaled_side(1e-9, 16384, 16, 64, 0)); /* the minimum */
  EXPECT_EQ(0u, rio_scaled_side(0.0, 16384, 16, 64, 0));
  EXPECT_EQ(0u, rio_scaled_side(-1.0, 16384, 16, 64, 0));
  EXPECT_EQ(0u, rio_scaled_side(NAN, 16384, 16, 64, 0));
  EXPECT_EQ(0u, rio_scaled_side(INFINITY, 16384, 16, 64, 0));
  EXPECT_EQ(0u, rio_scaled_side(4.0, 16384, 16, 64, 16384)); /* past max */
}

TEST(RodiniaRand, DeterministicAndIndependentStreams)
{
  EXPECT_EQ(rio_rand(1, 2, 3), rio_rand(1, 2, 3));
  EXPECT_NE(rio_rand(1, 2, 3), rio_rand(1, 2, 4));
  EXPECT_NE(rio_rand(1, 2, 3), rio_rand(1, 3, 3));
  EXPECT_NE(rio_rand(1, 2, 3), rio_rand(2, 2, 3));
  double lo = 1, hi = 0, sum = 0;
  for (uint64_t i = 0; i < 100000; i++) {
    const double u = rio_rand01(5, 0, i);
    lo = u < lo ? u : lo;
    hi = u > hi ? u : hi;
    sum += u;
  }
  EXPECT_GE(lo, 0.0);
  EXPECT_LT(hi, 1.0);
  EXPECT_NEAR(0.5, sum / 100000, 0.01);
}

static int count_slice(void *arg, uint64_t lo, uint64_t hi)
{
  uint8_t *seen = (uint8_t *)arg;
  for (uint64_t i = lo; i < hi; i++)
    seen[i]++;
  return 0;
}

TEST(RodiniaParallelFor, CoversEveryIndexOnce)
{
  for (uint64_t n : {0ull, 1ull, 7ull, 1000003ull}) {
    std::vector<uint8_t> seen(n + 1);
    ASSERT_EQ(0, rio_parallel_for(n, count_slice, seen.data()));
    for (uint64_t i = 0; i < n; i++)
      ASSERT_EQ(1, seen[i]) << i;
    EXPECT_EQ(0, seen[n]);
  }
}
