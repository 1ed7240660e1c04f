/*
 * opts_test.cpp - the command-line convention every program shares
 * (benchlib/opts.h): both value forms, --help, named unknown options,
 * strict numbers and sizes whose refusal names the option and its rule,
 * operands, and the checks of inputs and outputs.
 */
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdio>
#include <string>
#include <unistd.h>
#include <vector>

#include "benchlib/opts.h"

namespace {

enum { OPT_REPS = BENCH_OPTS_FIRST, OPT_CACHE, OPT_TILES, OPT_SCALE, OPT_SEED, OPT_DIR, OPT_QUICK, OPT_V };

const struct bench_opt kTable[] = {
    {"reps", BENCH_OPT_VALUE, OPT_REPS},   {"cache", BENCH_OPT_VALUE, OPT_CACHE},
    {"tiles", BENCH_OPT_VALUE, OPT_TILES}, {"scale", BENCH_OPT_VALUE, OPT_SCALE},
    {"seed", BENCH_OPT_VALUE, OPT_SEED},   {"dir", BENCH_OPT_VALUE, OPT_DIR},
    {"quick", BENCH_OPT_FLAG, OPT_QUICK},  {"v", BENCH_OPT_FLAG, OPT_V},
};

struct Parsed {
  int rc = 0;          /* 0, 1 (--help) or -errno */
  int reps = 3, quick = 0, verbose = 0;
  uint64_t cache = 0, tiles = 0, seed = 0;
  double scale = 1;
  char dir[32] = "";
  std::vector<std::string> operands;
  std::string err;
};

/* A small program's parser, as every program writes it. */
Parsed Parse(std::vector<std::string> args)
{
  Parsed r;
  std::vector<char *> argv;
  static char name[] = "prog";
  argv.push_back(name);
  for (auto &a : args)
    argv.push_back(&a[0]);
  char err[256];
  struct bench_opts p;
  bench_opts_init(&p, (int)argv.size(), argv.data(), kTable, sizeof(kTable) / sizeof(kTable[0]), err, sizeof(err));
  int id;
  while (r.rc == 0 && (id = bench_opts_next(&p)) != BENCH_OPTS_END) {
    switch (id) {
    case BENCH_OPTS_HELP: r.rc = 1; break;
    case OPT_REPS: r.rc = bench_opts_int(&p, 1, 100, &r.reps); break;
    case OPT_CACHE: r.rc = bench_opts_size(&p, 1 << 20, 1ull << 40, &r.cache); break;
    case OPT_TILES: r.rc = bench_opts_count(&p, 16, 4000000000ull, &r.tiles); break;
    case OPT_SCALE: r.rc = bench_opts_double(&p, 0, 16, &r.scale); break;
    case OPT_SEED: r.rc = bench_opts_u64(&p, 0, UINT64_MAX, &r.seed); break;
    case OPT_DIR: r.rc = bench_opts_string(&p, r.dir, sizeof(r.dir)); break;
    case OPT_QUICK: r.quick = 1; break;
    case OPT_V: r.verbose = 1; break;
    default: r.rc = id; break;
    }
  }
  if (r.rc == 0)
    for (int i = p.optind; i < (int)argv.size(); i++)
      r.operands.push_back(argv[i]);
  r.err = r.rc < 0 ? err : "";
  return r;
}

TEST(Opts, BothValueFormsAndFlags)
{
  Parsed p = Parse({"--reps", "7", "--cache=1.5G", "--tiles=20k", "--scale", "0.25", "--quick", "-v",
                    "--seed=0x10", "--dir", "/tmp/x"});
  ASSERT_EQ(p.rc, 0) << p.err;
  EXPECT_EQ(p.reps, 7);
  EXPECT_EQ(p.cache, 3ull << 29);
  EXPECT_EQ(p.tiles, 20000u);
  EXPECT_DOUBLE_EQ(p.scale, 0.25);
  EXPECT_EQ(p.seed, 16u);
  EXPECT_STREQ(p.dir, "/tmp/x");
  EXPECT_EQ(p.quick, 1);
  EXPECT_EQ(p.verbose, 1);
}

TEST(Opts, OperandsComeAfterTheOptionsInOrder)
{
  Parsed p = Parse({"in.png", "--reps", "2", "out.png", "--", "--quick"});
  ASSERT_EQ(p.rc, 0) << p.err;
  ASSERT_EQ(p.operands.size(), 3u);
  EXPECT_EQ(p.operands[0], "in.png");
  EXPECT_EQ(p.operands[1], "out.png");
  EXPECT_EQ(p.operands[2], "--quick");
  EXPECT_EQ(p.quick, 0);
}

TEST(Opts, OperandsBeyondTheLimitAreNamed)
{
  char err[128];
  std::string a0 = "prog", a1 = "--quick", a2 = "one", a3 = "two";
  char *argv[] = {&a0[0], &a1[0], &a2[0], &a3[0]};
  struct bench_opts p;
  bench_opts_init(&p, 4, argv, kTable, sizeof(kTable) / sizeof(kTable[0]), err, sizeof(err));
  while (bench_opts_next(&p) > BENCH_OPTS_END) {
  }
  EXPECT_EQ(0, bench_opts_operands(&p, 2));
  EXPECT_EQ(-EINVAL, bench_opts_operands(&p, 1));
  EXPECT_STREQ("'two': an operand too many (at most 1)", err);
}

TEST(Opts, HelpInBothSpellingsWinsOverLaterErrors)
{
  EXPECT_EQ(Parse({"--help"}).rc, 1);
  EXPECT_EQ(Parse({"-h", "--bogus"}).rc, 1);
  EXPECT_EQ(Parse({"--reps", "2", "--help"}).rc, 1);
}

TEST(Opts, UnknownOptionsAreNamed)
{
  Parsed p = Parse({"--bogus=3"});
  EXPECT_EQ(p.rc, -EINVAL);
  EXPECT_NE(p.err.find("unknown option '--bogus'"), std::string::npos) << p.err;
  p = Parse({"-x"});
  EXPECT_EQ(p.rc, -EINVAL);
  EXPECT_NE(p.err.find("'-x'"), std::string::npos) << p.err;
}

TEST(Opts, OneLetterOptionsAreNamedAsWritten)
{
  Parsed p = Parse({"-v", "--v"});
  ASSERT_EQ(0, p.rc) << p.err;
  EXPECT_EQ(1, p.verbose);
  EXPECT_EQ(-EINVAL, Parse({"-v=1"}).rc) << "a cluster of -v, -=, -1";
}

TEST(Opts, MissingAndUnwantedValuesAreNamed)
{
  Parsed p = Parse({"--reps"});
  EXPECT_EQ(p.rc, -EINVAL);
  EXPECT_EQ(p.err, "--reps needs a value");
  p = Parse({"--quick=1"});
  EXPECT_EQ(p.rc, -EINVAL);
  EXPECT_EQ(p.err, "--quick takes no value");
}

TEST(Opts, BadNumbersNameTheOptionAndItsRule)
{
  Parsed p = Parse({"--reps", "abc"});
  EXPECT_EQ(p.rc, -EINVAL);
  EXPECT_EQ(p.err, "--reps abc: an integer from 1 to 100");
  for (const char *bad : {"0", "101", "3x", "", " 3", "1e2", "99999999999999999999"})
    EXPECT_EQ(Parse({"--reps", bad}).rc, -EINVAL) << bad;
  for (const char *bad : {"-1", "abc", "1.5", "0x", "18446744073709551616"})
    EXPECT_EQ(Parse({"--seed", bad}).rc, -EINVAL) << bad;
  for (const char *bad : {"0", "-1", "nan", "inf", "17", "1/4"})
    EXPECT_EQ(Parse({"--scale", bad}).rc, -EINVAL) << bad;
  p = Parse({"--scale=0"});
  EXPECT_EQ(p.err, "--scale 0: a number above 0 and at most 16");
}

TEST(Opts, SizesAndCountsAreStrict)
{
  Parsed p = Parse({"--cache", "abc"});
  EXPECT_EQ(p.rc, -EINVAL);
  EXPECT_EQ(p.err, "--cache abc: a size from 1M to 1T (bytes, or with K, M, G, T: 500M, 8G)");
  for (const char *bad : {"4Q", "-1G", "512K", "2T", "1GB", "G", "inf"})
    EXPECT_EQ(Parse({"--cache", bad}).rc, -EINVAL) << bad;
  EXPECT_EQ(Parse({"--cache", "4096K"}).cache, 4ull << 20);
  EXPECT_EQ(Parse({"--cache", "1t"}).cache, 1ull << 40);
  p = Parse({"--tiles", "1.5"});
  EXPECT_EQ(p.rc, -EINVAL);
  EXPECT_EQ(p.err.rfind("--tiles 1.5: a whole count from 16", 0), 0u) << p.err;
  EXPECT_EQ(Parse({"--tiles", "10M"}).tiles, 10000000u);
  EXPECT_EQ(Parse({"--tiles", "15"}).rc, -EINVAL);
}

TEST(Opts, ListsOfNames)
{
  static const char *const names[] = {"cpu", "gpufs-4k", "gpufs-64k"};
  const struct bench_names choices = {names, 3, "version"};
  char err[256];
  int idx[3], n = -1;
  auto parse = [&](const char *val) {
    struct bench_opts p = {};
    p.name = "--versions";
    p.val = val;
    p.err = err;
    p.errlen = sizeof(err);
    return bench_opts_names(&p, &choices, idx, &n);
  };
  ASSERT_EQ(0, parse("gpufs-64k,,cpu,"));
  ASSERT_EQ(2, n);
  EXPECT_EQ(2, idx[0]);
  EXPECT_EQ(0, idx[1]);
  EXPECT_EQ(-EINVAL, parse("cpu,gpufs-8k"));
  EXPECT_STREQ("--versions cpu,gpufs-8k: unknown version 'gpufs-8k' (cpu, gpufs-4k, gpufs-64k)", err);
  EXPECT_EQ(-EINVAL, parse("cpu,cpu"));
  EXPECT_STREQ("--versions cpu,cpu: 'cpu' given twice", err);
  EXPECT_EQ(-EINVAL, parse(","));
  EXPECT_STREQ("--versions ,: no version", err);
  EXPECT_EQ(-EINVAL, parse("gpufs"));
}

TEST(Opts, StringsMustFit)
{
  EXPECT_EQ(Parse({"--dir", ""}).rc, -EINVAL);
  Parsed p = Parse({"--dir", std::string(40, 'a')});
  EXPECT_EQ(p.rc, -EINVAL);
  EXPECT_NE(p.err.find("longer than 31 characters"), std::string::npos) << p.err;
}

TEST(Opts, ExitStatusAndMessages)
{
  EXPECT_EQ(bench_opts_exit("prog", 0, "", "usage\n"), -1);
  testing::internal::CaptureStdout();
  EXPECT_EQ(bench_opts_exit("prog", 1, "", "usage: prog\n"), 0);
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "usage: prog\n");
  testing::internal::CaptureStderr();
  EXPECT_EQ(bench_opts_exit("prog", -EINVAL, "--reps abc: an integer from 1 to 100", "usage\n"), 2);
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "prog: --reps abc: an integer from 1 to 100\nprog --help lists the options.\n");
}

TEST(Opts, InputsMustExistAndBeReadable)
{
  char err[256];
  EXPECT_EQ(bench_check_input("IN", "/missing.png", 0, err, sizeof(err)), -ENOENT);
  EXPECT_STREQ(err, "IN /missing.png: No such file or directory");
  EXPECT_EQ(bench_check_input("IN", "/tmp", 0, err, sizeof(err)), -EISDIR);
  EXPECT_EQ(bench_check_input("--dir", "/tmp", 1, err, sizeof(err)), 0);
  char path[] = "/tmp/opts_test_XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  EXPECT_EQ(bench_check_input("IN", path, 0, err, sizeof(err)), 0) << err;
  EXPECT_EQ(bench_check_input("--seeds", path, 1, err, sizeof(err)), -ENOTDIR);
  unlink(path);
}

TEST(Opts, OutputsNeedAWritableFolder)
{
  char err[256];
  EXPECT_EQ(bench_check_output("OUT", "/tmp/opts_test_out.png", err, sizeof(err)), 0) << err;
  EXPECT_EQ(bench_check_output("OUT", "out.png", err, sizeof(err)), 0) << err;
  EXPECT_EQ(bench_check_output("OUT", "/no/such/folder/out.png", err, sizeof(err)), -ENOENT);
  EXPECT_STREQ(err, "OUT /no/such/folder/out.png: cannot write there (/no/such/folder: No such file or directory)");
  EXPECT_EQ(bench_check_output("--out", "/tmp", err, sizeof(err)), -EISDIR);
  EXPECT_EQ(bench_check_output("--out", "", err, sizeof(err)), -EINVAL);
}

TEST(Opts, ProgressEndsLinesOffATerminal)
{
  FILE *f = tmpfile();
  ASSERT_NE(f, nullptr);
  EXPECT_STREQ(bench_progress_begin(f), "");
  EXPECT_STREQ(bench_progress_end(f), "\n");
  fclose(f);
}

}  // namespace
