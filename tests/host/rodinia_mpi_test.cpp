/*
 * rodinia_mpi_test.cpp - rodinia_mpi's plan and cpu version
 * (rodinia-io/mpi/plan.c, cpu.c: no MPI, no CUDA), and the input checks its
 * ranks use (rio_input_check, rio_inputs_name), on the host: the units of
 * every rank cover a benchmark once and in order; a rank reads what its
 * units need; the cache share follows its rule; bad command lines and too
 * many ranks are refused with a message; and the cpu version of every
 * split of every benchmark, put together, is the CPU reference bit for bit.
 */
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "rodinia-io/conv2d/conv2d.h"
#include "rodinia-io/gesummv/gesummv.h"
#include "rodinia-io/mpi/rio_mpi.h"
#include "rodinia-io/pathfinder/pathfinder.h"

namespace {

constexpr double kScale = 1.0 / 1024; /* 2dconv n 512 (32 bands), gesummv n 320, pathfinder 2048 x 119 */

/* The host side of the three benchmarks (their run() is CUDA). */
const rio_bench kBenches[RIO_MPI_NBENCHES] = {
    {"2dconv", "", conv2d_setup, conv2d_generate, conv2d_reference, nullptr, conv2d_verify, conv2d_teardown, 0},
    {"gesummv", "", gesummv_setup, matvec_generate, gesummv_reference, nullptr, gesummv_verify, matvec_teardown, 0},
    {"pathfinder", "", pathfinder_setup, pathfinder_generate, pathfinder_reference, nullptr, pathfinder_verify,
     pathfinder_teardown, 0}};

struct TempDir {
  char path[64];
  TempDir()
  {
    snprintf(path, sizeof(path), "/tmp/rio_mpi_XXXXXX");
    if (!mkdtemp(path))
      path[0] = 0;
  }
  ~TempDir()
  {
    std::string cmd = std::string("rm -rf ") + path;
    if (system(cmd.c_str()) != 0)
      ADD_FAILURE() << cmd;
  }
};

/* A benchmark set up at kScale, its inputs in dir and its reference made
 * (what rank 0 has before the runs). */
struct BenchRun {
  rio_run run{};
  enum rio_mpi_bench b;
  BenchRun(enum rio_mpi_bench which, const char *dir, double scale = kScale) : b(which)
  {
    run.bench = &kBenches[which];
    run.scale = scale;
    run.seed = RIO_DEFAULT_SEED;
    EXPECT_EQ(0, run.bench->setup(&run)) << run.why;
    for (int i = 0; i < run.ninputs; i++)
      run.input_bytes += run.in[i].size;
    if (dir) {
      EXPECT_EQ(0, rio_inputs_prepare(&run, dir, RIO_GEN_MISSING, 0)) << run.why;
      EXPECT_EQ(0, run.bench->reference(&run)) << run.why;
    }
  }
  ~BenchRun()
  {
    run.bench->teardown(&run);
    rio_inputs_free(&run);
  }
};

TEST(RodiniaMpiPlan, UnitsCoverEveryUnitOnceInRankOrder)
{
  for (uint64_t units : {0ull, 1ull, 5ull, 13ull, 32ull, 320ull, 2048ull}) {
    for (int n : {1, 2, 3, 4, 7, 16}) {
      uint64_t next = 0, most = 0, least = ~0ull;
      for (int r = 0; r < n; r++) {
        uint64_t u0 = 99, u1 = 0;
        rio_mpi_units(units, r, n, &u0, &u1);
        ASSERT_EQ(next, u0) << "units " << units << " n " << n << " rank " << r;
        ASSERT_LE(u0, u1);
        next = u1;
        most = u1 - u0 > most ? u1 - u0 : most;
        least = u1 - u0 < least ? u1 - u0 : least;
      }
      EXPECT_EQ(units, next) << "every unit once, units " << units << " n " << n;
      EXPECT_LE(most - least, 1u) << "as even as possible, units " << units << " n " << n;
    }
  }
  uint64_t u0 = 7, u1 = 7;
  rio_mpi_units(10, 3, 3, &u0, &u1);
  EXPECT_EQ(u0, u1) << "a rank outside [0, n) gets nothing";
  rio_mpi_units(13, 0, 3, &u0, &u1);
  EXPECT_EQ(0u, u0);
  EXPECT_EQ(5u, u1) << "the first units % n ranks take one more";
}

TEST(RodiniaMpiPlan, SplitOfEachBenchmark)
{
  BenchRun c(RIO_MPI_2DCONV, nullptr), g(RIO_MPI_GESUMMV, nullptr), p(RIO_MPI_PATHFINDER, nullptr);
  const rio_mpi_split sc = rio_mpi_split_of(RIO_MPI_2DCONV, &c.run);
  EXPECT_EQ(512u / 16, sc.units) << "16-row bands of b";
  EXPECT_EQ(16u * 512 * 4, sc.unit_bytes);
  EXPECT_EQ(512u * 512 * 4, rio_mpi_result_bytes(RIO_MPI_2DCONV, &c.run));
  const rio_mpi_split sg = rio_mpi_split_of(RIO_MPI_GESUMMV, &g.run);
  EXPECT_EQ(320u, sg.units) << "rows of y";
  EXPECT_EQ(4u, sg.unit_bytes);
  const rio_mpi_split sp = rio_mpi_split_of(RIO_MPI_PATHFINDER, &p.run);
  EXPECT_EQ(2048u, sp.units) << "columns of the last row";
  EXPECT_EQ(4u, sp.unit_bytes);
  EXPECT_EQ(2048u * 4, rio_mpi_result_bytes(RIO_MPI_PATHFINDER, &p.run));
}

TEST(RodiniaMpiPlan, TooManyRanksAreRefusedWithAMessage)
{
  BenchRun c(RIO_MPI_2DCONV, nullptr, 1e-6); /* n 64: 4 bands */
  const rio_mpi_split sp = rio_mpi_split_of(RIO_MPI_2DCONV, &c.run);
  ASSERT_EQ(4u, sp.units);
  char err[256] = "";
  EXPECT_EQ(RIO_MPI_DONE, rio_mpi_check_ranks(RIO_MPI_2DCONV, &sp, 4, err, sizeof(err)));
  EXPECT_EQ(RIO_MPI_BAD_CONFIG, rio_mpi_check_ranks(RIO_MPI_2DCONV, &sp, 5, err, sizeof(err)));
  EXPECT_NE(nullptr, strstr(err, "5 ranks for 4 16-row bands")) << err;
  EXPECT_EQ(RIO_MPI_BAD_CONFIG, rio_mpi_check_ranks(RIO_MPI_2DCONV, &sp, 0, err, sizeof(err)));
}

TEST(RodiniaMpiPlan, PartBytesAreTheRowsAndWindowsARankReads)
{
  BenchRun c(RIO_MPI_2DCONV, nullptr), g(RIO_MPI_GESUMMV, nullptr), p(RIO_MPI_PATHFINDER, nullptr);
  const uint64_t row = 512 * 4;
  EXPECT_EQ(512 * row, rio_mpi_part_bytes(RIO_MPI_2DCONV, &c.run, 0, 32)) << "the whole image, no halo";
  EXPECT_EQ((16 + 1) * row, rio_mpi_part_bytes(RIO_MPI_2DCONV, &c.run, 0, 1)) << "the row below";
  EXPECT_EQ((32 + 2) * row, rio_mpi_part_bytes(RIO_MPI_2DCONV, &c.run, 5, 7)) << "a row above and below";
  EXPECT_EQ((16 + 1) * row, rio_mpi_part_bytes(RIO_MPI_2DCONV, &c.run, 31, 32)) << "the row above";
  EXPECT_EQ(0u, rio_mpi_part_bytes(RIO_MPI_2DCONV, &c.run, 3, 3));
  EXPECT_EQ(2 * 10 * 320 * 4 + 320 * 4u, rio_mpi_part_bytes(RIO_MPI_GESUMMV, &g.run, 100, 110)) << "rows of A, B; x";
  const pathfinder_state *st = (const pathfinder_state *)p.run.state;
  ASSERT_EQ(119u, st->rows);
  EXPECT_EQ(119u * 2048 * 4, rio_mpi_part_bytes(RIO_MPI_PATHFINDER, &p.run, 0, 2048));
  EXPECT_EQ(119u * (100 + 2 * 118) * 4, rio_mpi_part_bytes(RIO_MPI_PATHFINDER, &p.run, 1000, 1100))
      << "the columns widened by rows - 1 each side";
  EXPECT_EQ(119u * (100 + 118) * 4, rio_mpi_part_bytes(RIO_MPI_PATHFINDER, &p.run, 0, 100)) << "clipped at 0";
  uint64_t lo, hi;
  pathfinder_window(2048, 119, 2000, 2048, &lo, &hi);
  EXPECT_EQ(2000u - 118, lo);
  EXPECT_EQ(2048u, hi) << "clipped at the last column";
}

TEST(RodiniaMpiPlan, CacheShare)
{
  const uint64_t page = 65536, mib = 1ull << 20;
  EXPECT_EQ(256 * mib, rio_mpi_cache(1ull << 30, 4, 12345, page)) << "--cache divided among the GPU's ranks";
  EXPECT_EQ((64 * mib + 10 * page), rio_mpi_cache(0, 4, 10 * page + 17, page)) << "default: part + 64M, pages";
  EXPECT_EQ(0u, rio_mpi_cache(3 * mib, 4, 0, page)) << "under 1 MiB a rank: refused";
  EXPECT_EQ(0u, rio_mpi_cache(1ull << 30, 0, 0, page));
  const uint64_t s = rio_mpi_cache((1ull << 30) + 12345, 3, 0, 4096);
  EXPECT_EQ(0u, s % 4096);
  EXPECT_LE(3 * s, (1ull << 30) + 12345);
  EXPECT_GT(3 * (s + 4096), (1ull << 30) + 12345) << "rounded down by less than a page";
}

int parse(std::vector<std::string> args, rio_mpi_options *o, std::string *err)
{
  std::vector<char *> argv;
  args.insert(args.begin(), "rodinia_mpi");
  for (auto &a : args)
    argv.push_back(&a[0]);
  char buf[512] = "";
  const int rc = rio_mpi_parse_options((int)argv.size(), argv.data(), o, buf, sizeof(buf));
  *err = buf;
  return rc;
}

TEST(RodiniaMpiPlan, CommandLines)
{
  rio_mpi_options o;
  std::string err;
  ASSERT_EQ(0, parse({}, &o, &err)) << err;
  EXPECT_EQ(3, o.nbenches);
  EXPECT_EQ(RIO_MPI_PATHFINDER, o.benches[2]);
  EXPECT_EQ(3, o.nversions);
  EXPECT_EQ(1, o.single);
  EXPECT_EQ(3, o.reps);
  EXPECT_EQ(1.0, o.scale);
  EXPECT_EQ(0u, o.cache);
  EXPECT_STREQ("/tmp/gpufs_rodinia", o.dir);

  ASSERT_EQ(0, parse({"pathfinder", "2dconv", "--versions", "gpufs-64k,cpu", "--no-single", "--quick", "--cache",
                      "2G", "--dir", "/d", "--out", "rows.jsonl", "--regen"},
                     &o, &err))
      << err;
  ASSERT_EQ(2, o.nbenches);
  EXPECT_EQ(RIO_MPI_2DCONV, o.benches[0]) << "table order";
  EXPECT_EQ(RIO_MPI_PATHFINDER, o.benches[1]);
  ASSERT_EQ(2, o.nversions);
  EXPECT_EQ(RIO_MPI_CPU, o.versions[0]) << "table order";
  EXPECT_EQ(RIO_MPI_GPUFS_64K, o.versions[1]);
  EXPECT_EQ(RIO_GPUFS_64K, rio_mpi_harness_version(o.versions[1]));
  EXPECT_EQ(0, o.single);
  EXPECT_EQ(1.0 / 64, o.scale);
  EXPECT_EQ(1, o.reps);
  EXPECT_EQ(2ull << 30, o.cache);
  EXPECT_STREQ("/d", o.dir);
  EXPECT_STREQ("rows.jsonl", o.out);
  EXPECT_EQ(RIO_GEN_ALWAYS, o.gen);
  EXPECT_EQ(1, parse({"gesummv", "--help"}, &o, &err));
  ASSERT_EQ(0, parse({"--versions=cpu", "gesummv", "--reps=2"}, &o, &err)) << err;
  ASSERT_EQ(1, o.nversions);
  EXPECT_EQ(RIO_MPI_CPU, o.versions[0]);
  EXPECT_EQ(2, o.reps);

  const struct {
    std::vector<std::string> args;
    const char *says;
  } bad[] = {
      {{"--versions", "cpu-io"}, "unknown version 'cpu-io'"},
      {{"--versions", "cpu,cpu"}, "'cpu' given twice"},
      {{"--versions", ","}, "no version"},
      {{"--versions"}, "needs a value"},
      {{"--device", "0"}, "each rank picks its GPU"},
      {{"--device=0"}, "each rank picks its GPU"},
      {{"--small-cache", "500M"}, "single-process suite"},
      {{"--threads", "4"}, "single-process suite"},
      {{"--bogus"}, "unknown option '--bogus'"},
      {{"hotspot"}, "unknown benchmark 'hotspot'"},
      {{"gesummv", "gesummv"}, "given twice"},
      {{"--scale", "0"}, "--scale 0"},
      {{"--reps", "0"}, "--reps 0"},
      {{"--cache", "1K"}, "--cache 1K"},
      {{"--dir"}, "needs a value"},
  };
  for (const auto &b : bad) {
    err.clear();
    EXPECT_EQ(-EINVAL, parse(b.args, &o, &err)) << b.args[0];
    EXPECT_NE(std::string::npos, err.find(b.says)) << b.args[0] << ": " << err;
  }
}

/* What the ranks of the cpu version compute, put together as rank 0
 * gathers it, for several rank counts: the reference, bit for bit. */
TEST(RodiniaMpiCpu, EverySplitIsTheReferenceBitForBit)
{
  TempDir dir;
  ASSERT_TRUE(dir.path[0]);
  for (int b = 0; b < RIO_MPI_NBENCHES; b++) {
    BenchRun c((enum rio_mpi_bench)b, dir.path);
    const rio_mpi_split sp = rio_mpi_split_of(c.b, &c.run);
    const uint64_t bytes = rio_mpi_result_bytes(c.b, &c.run);
    for (int n : {1, 2, 3, 7}) {
      std::vector<uint8_t> all(bytes, 0xee);
      for (int r = 0; r < n; r++) {
        uint64_t u0, u1;
        rio_mpi_units(sp.units, r, n, &u0, &u1);
        std::vector<uint8_t> part((u1 - u0) * sp.unit_bytes);
        ASSERT_EQ(0, rio_mpi_cpu_part(c.b, &c.run, u0, u1, part.data())) << c.run.why;
        memcpy(all.data() + u0 * sp.unit_bytes, part.data(), part.size());
      }
      EXPECT_EQ(0, memcmp(all.data(), rio_mpi_reference(c.b, &c.run), bytes))
          << rio_mpi_bench_name(c.b) << " by " << n << " ranks";
      memcpy(rio_mpi_result(c.b, &c.run), all.data(), bytes);
      EXPECT_EQ(0, c.run.bench->verify(&c.run)) << c.run.why;
    }
  }
}

TEST(RodiniaMpiCpu, AMissingInputSaysWhich)
{
  TempDir dir;
  BenchRun c(RIO_MPI_GESUMMV, dir.path);
  ASSERT_EQ(0, unlink(c.run.in[GESUMMV_IN_B].path));
  std::vector<float> out(10);
  EXPECT_EQ(-ENOENT, rio_mpi_cpu_part(RIO_MPI_GESUMMV, &c.run, 0, 10, out.data()));
  EXPECT_NE(nullptr, strstr(c.run.why, "gesummv-B-")) << c.run.why;
}

TEST(RodiniaMpiCpu, ReadRowsWholeAndWindows)
{
  TempDir dir;
  const std::string path = std::string(dir.path) + "/rows.bin";
  std::vector<uint8_t> bytes(10 * 16);
  for (size_t k = 0; k < bytes.size(); k++)
    bytes[k] = (uint8_t)k;
  FILE *f = fopen(path.c_str(), "wb");
  ASSERT_NE(nullptr, f);
  ASSERT_EQ(bytes.size(), fwrite(bytes.data(), 1, bytes.size(), f));
  fclose(f);
  std::vector<uint8_t> got(64, 0);
  ASSERT_EQ(0, rio_mpi_read_rows(path.c_str(), 16, 2, 3, 0, 16, got.data())) << "rows 2..4, whole";
  EXPECT_EQ(0, memcmp(got.data(), bytes.data() + 32, 48));
  ASSERT_EQ(0, rio_mpi_read_rows(path.c_str(), 16, 7, 3, 4, 8, got.data())) << "rows 7..9, bytes 4..11";
  for (int r = 0; r < 3; r++)
    EXPECT_EQ(0, memcmp(got.data() + 8 * r, bytes.data() + (7 + r) * 16 + 4, 8)) << "row " << r;
  EXPECT_EQ(-EIO, rio_mpi_read_rows(path.c_str(), 16, 8, 3, 0, 16, got.data())) << "past the end";
  EXPECT_EQ(-ENOENT, rio_mpi_read_rows((path + ".no").c_str(), 16, 0, 1, 0, 16, got.data()));
}

/* The ranks other than 0 check their files without reading them. */
TEST(RodiniaMpiInputs, CheckWithoutReading)
{
  TempDir dir;
  BenchRun c(RIO_MPI_PATHFINDER, dir.path);
  rio_run other{};
  other.bench = c.run.bench;
  other.scale = kScale;
  other.seed = RIO_DEFAULT_SEED;
  ASSERT_EQ(0, pathfinder_setup(&other));
  ASSERT_EQ(0, rio_inputs_name(&other, dir.path)) << other.why;
  EXPECT_STREQ(c.run.in[PATHFINDER_IN_WALL].path, other.in[PATHFINDER_IN_WALL].path) << "named as rank 0 named it";
  char why[600] = "";
  uint64_t sum = 0;
  EXPECT_EQ(RIO_INPUT_VALID, rio_input_check(&other, PATHFINDER_IN_WALL, &sum, why, sizeof(why))) << why;
  EXPECT_EQ(rio_checksum(c.run.host_in[PATHFINDER_IN_WALL], c.run.in[PATHFINDER_IN_WALL].size), sum)
      << "the sidecar's checksum of the bytes";
  ASSERT_EQ(0, truncate(other.in[PATHFINDER_IN_FIRST].path, 4096));
  EXPECT_EQ(RIO_INPUT_BAD_SIZE, rio_input_check(&other, PATHFINDER_IN_FIRST, &sum, why, sizeof(why)));
  EXPECT_NE(nullptr, strstr(why, "expected 8192")) << why;
  const std::string side = std::string(other.in[PATHFINDER_IN_WALL].path) + ".sum";
  ASSERT_EQ(0, unlink(side.c_str()));
  EXPECT_EQ(RIO_INPUT_BAD_SIDECAR, rio_input_check(&other, PATHFINDER_IN_WALL, &sum, why, sizeof(why)));
  ASSERT_EQ(0, unlink(other.in[PATHFINDER_IN_WALL].path));
  EXPECT_EQ(RIO_INPUT_MISSING, rio_input_check(&other, PATHFINDER_IN_WALL, &sum, why, sizeof(why)));
  const std::string long_dir(RIO_PATH_MAX, 'd');
  EXPECT_EQ(-ENAMETOOLONG, rio_inputs_name(&other, long_dir.c_str()));
  EXPECT_EQ(0, strncmp(other.why, long_dir.c_str(), 64)) << "names the folder: " << other.why;
  pathfinder_teardown(&other);
}

} // namespace
