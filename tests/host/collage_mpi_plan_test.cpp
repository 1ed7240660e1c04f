/*
 * collage_mpi_plan_test.cpp - collage_mpi's placement rules and command line
 * (samples/collage/mpi/plan.c: no MPI, no CUDA), checked on the host: the
 * block rows of every rank cover the picture once and in order; the cache
 * share and the thread count follow their documented rules; bad command
 * lines are refused with a message.
 */
#include <gtest/gtest.h>

#include <cerrno>
#include <string>
#include <vector>

#include "samples/collage/mpi/collage_mpi.h"

namespace {

TEST(CollageMpiPlan, RowsCoverThePictureOnceInRankOrder)
{
  for (int bh : {0, 1, 5, 13, 64, 191}) {
    for (int n : {1, 2, 3, 4, 7, 16, 20}) {
      int next = 0, most = 0, least = 1 << 30;
      for (int r = 0; r < n; r++) {
        int first = -1, count = -1;
        collage_mpi_rows(bh, r, n, &first, &count);
        ASSERT_GE(count, 0);
        if (count > 0) {
          ASSERT_EQ(next, first) << "bh " << bh << " n " << n << " rank " << r;
        }
        next += count;
        most = count > most ? count : most;
        least = count < least ? count : least;
      }
      EXPECT_EQ(bh, next) << "every row once, bh " << bh << " n " << n;
      EXPECT_LE(most - least, 1) << "as even as possible, bh " << bh << " n " << n;
    }
  }
  int first = 7, count = 7;
  collage_mpi_rows(10, 3, 3, &first, &count);
  EXPECT_EQ(0, count) << "a rank outside [0, n)";
  collage_mpi_rows(10, 0, 0, &first, &count);
  EXPECT_EQ(0, count) << "no ranks";
}

TEST(CollageMpiPlan, CacheShareAndThreads)
{
  const uint64_t page = 65536;
  EXPECT_EQ(256ull << 20, collage_mpi_cache_share(1ull << 30, 4, page));
  EXPECT_EQ(0u, collage_mpi_cache_share(1ull << 30, 0, page));
  EXPECT_EQ(0u, collage_mpi_cache_share(3ull << 20, 4, page)) << "under 1 MiB a rank: refused";
  const uint64_t s = collage_mpi_cache_share((1ull << 30) + 12345, 3, page);
  EXPECT_EQ(0u, s % page);
  EXPECT_LE(3 * s, (1ull << 30) + 12345);
  EXPECT_GT(3 * (s + page), (1ull << 30) + 12345) << "rounded down by less than a page";

  /* without --cache: the dataset + 64 MiB a rank, while the sharers fit in
   * 3/4 of the GPU; then their share of it */
  const uint64_t ds = 800ull << 20, gpu = 80ull << 30;
  EXPECT_EQ(ds + (64ull << 20), collage_mpi_cache_default(ds, 1, gpu, page));
  EXPECT_EQ(ds + (64ull << 20), collage_mpi_cache_default(ds, 4, gpu, page)) << "each rank the whole dataset";
  EXPECT_EQ(ds + (64ull << 20), collage_mpi_cache_default(ds, 4, 0, page)) << "memory unknown: no limit";
  EXPECT_EQ(collage_mpi_cache_share(gpu / 4 * 3, 80, page), collage_mpi_cache_default(ds, 80, gpu, page))
      << "80 ranks on one GPU: their share of 3/4 of it";
  EXPECT_EQ(0u, collage_mpi_cache_default(ds, 4, 1ull << 20, page)) << "under 1 MiB a rank: refused";
  EXPECT_EQ(0u, collage_mpi_cache_default(ds, 0, gpu, page));
  EXPECT_EQ(0u, collage_mpi_cache_default(ds + 1, 1, 0, page) % page);

  EXPECT_EQ(4, collage_mpi_threads(4, 64, 2));
  EXPECT_EQ(8, collage_mpi_threads(32, 16, 2)) << "the node's CPUs divided by its ranks";
  EXPECT_EQ(16, collage_mpi_threads(64, 128, 1)) << "at most 16";
  EXPECT_EQ(1, collage_mpi_threads(0, 2, 4)) << "at least 1";
  EXPECT_GE(collage_mpi_cpus_allowed(), 1);
  EXPECT_GE(collage_mpi_cpus_online(), collage_mpi_cpus_allowed());
}

int parse(std::vector<std::string> args, collage_mpi_options *m, std::string *err)
{
  std::vector<char *> argv;
  args.insert(args.begin(), "collage_mpi");
  for (auto &a : args) argv.push_back(&a[0]);
  char buf[512] = "";
  int rc = collage_mpi_parse_options((int)argv.size(), argv.data(), m, buf, sizeof(buf));
  *err = buf;
  return rc;
}

TEST(CollageMpiPlan, CommandLines)
{
  collage_mpi_options m;
  std::string err;
  ASSERT_EQ(0, parse({"in.png", "out.png"}, &m, &err)) << err;
  EXPECT_EQ("in.png", std::string(m.in));
  EXPECT_EQ("out.png", std::string(m.out));
  EXPECT_EQ(0, m.have_size);
  ASSERT_EQ(0, parse({"--size", "640x480", "out.png"}, &m, &err)) << err;
  EXPECT_EQ(1, m.have_size);
  EXPECT_EQ(640, m.w);
  EXPECT_EQ(480, m.h);
  ASSERT_EQ(0, parse({"--size=320x256", "--version=cpu", "--tiles=20k", "out.png"}, &m, &err)) << err;
  EXPECT_EQ(320, m.w);
  EXPECT_EQ(COLLAGE_CPU, m.version);
  EXPECT_EQ(20000u, m.o.tiles);
  const std::vector<std::vector<std::string>> bad = {
      {"--device=0", "in.png", "out.png"},
      {"--tiles=lots", "in.png", "out.png"},
      {"--bogus=1", "in.png", "out.png"},
      {},                                   /* no picture */
      {"in.png"},                           /* no output */
      {"--size", "640x480", "a.png", "b.png"},
      {"--device", "0", "in.png", "out.png"}, /* the driver picks the GPU */
      {"--versions", "cpu", "in.png", "out.png"},
  };
  for (const auto &b : bad) {
    EXPECT_EQ(-EINVAL, parse(b, &m, &err)) << (b.empty() ? std::string("(none)") : b[0]);
    EXPECT_FALSE(err.empty());
  }
}

} // namespace
