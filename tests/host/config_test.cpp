/*
 * config_test.cpp - struct gpufs_config on the host: defaults, GPUFS_*
 * environment overrides and the checks that name a bad field (here for the
 * readahead window, the device list and the dirty grain;
 * tests/gpu/errors_test.cu covers the others through gpufs_start).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gtest/gtest.h>
#include <unistd.h>

#include "gpufs/config.h"
#include "include/gpufs.cuh"

TEST(ConfigHostTest, ReadaheadDefaultEnvironmentAndLimit)
{
  struct gpufs_config c;
  const char *bad = NULL, *why = NULL;
  gpufs_config_default(&c);
  EXPECT_EQ(128u << 10, c.readahead_max);
  EXPECT_EQ(0, gpufs_config_check(&c, &bad, &why));

  setenv("GPUFS_READAHEAD_MAX", "128K", 1);
  EXPECT_EQ(0, gpufs_config_from_env(&c, &bad));
  EXPECT_EQ(128u << 10, c.readahead_max);
  setenv("GPUFS_READAHEAD_MAX", "0", 1);
  EXPECT_EQ(0, gpufs_config_from_env(&c, &bad));
  EXPECT_EQ(0u, c.readahead_max);
  EXPECT_EQ(0, gpufs_config_check(&c, &bad, &why)) << "0 turns readahead off";
  setenv("GPUFS_READAHEAD_MAX", "lots", 1);
  EXPECT_EQ(-EINVAL, gpufs_config_from_env(&c, &bad));
  ASSERT_NE(nullptr, bad);
  EXPECT_STREQ("GPUFS_READAHEAD_MAX", bad);
  unsetenv("GPUFS_READAHEAD_MAX");

  c.readahead_max = (64u << 20) + 1;
  EXPECT_EQ(-EINVAL, gpufs_config_check(&c, &bad, &why));
  ASSERT_NE(nullptr, bad);
  EXPECT_STREQ("readahead_max", bad);
  EXPECT_NE(nullptr, strstr(why, "64 MiB"));
  c.readahead_max = 64u << 20;
  EXPECT_EQ(0, gpufs_config_check(&c, &bad, &why));
}

/* daemon_threads 0 (the default): 16 workers for each instance, no more
 * than the online CPUs; a value set is kept; more than 256 is refused. */
TEST(ConfigHostTest, WorkersScaleWithTheInstances)
{
  struct gpufs_config c;
  const char *bad = NULL, *why = NULL;
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  auto want = [&](uint64_t n) {
    uint64_t w = 16 * n;
    return (uint32_t)(cpus > 0 && (uint64_t)cpus < w ? (uint64_t)cpus : w);
  };
  gpufs_config_default(&c);
  EXPECT_EQ(0u, c.daemon_threads) << "0: chosen by the instances";
  EXPECT_EQ(0, gpufs_config_check(&c, &bad, &why));
  EXPECT_EQ(want(1), gpufs_config_daemon_threads(&c)) << cpus << " CPUs";
  c.ndevices = 2;
  EXPECT_EQ(want(2), gpufs_config_daemon_threads(&c)) << "two GPUs";
  c.ndevices = 8;
  EXPECT_EQ(want(8), gpufs_config_daemon_threads(&c)) << "eight instances";
  c.daemon_threads = 3;
  EXPECT_EQ(3u, gpufs_config_daemon_threads(&c)) << "a value set is kept";
  c.daemon_threads = 257;
  EXPECT_EQ(-EINVAL, gpufs_config_check(&c, &bad, &why));
  ASSERT_NE(nullptr, bad);
  EXPECT_STREQ("daemon_threads", bad);
}

/* Fields left at their default adapt to the ones set: rings and staging
 * to the cache's frames (a small cache starts with default rings); an
 * explicit value that breaks a rule is still refused, naming it. */
TEST(ConfigHostTest, DefaultsFitTheCache)
{
  struct gpufs_config c;
  const char *bad = NULL, *why = NULL;
  gpufs_config_default(&c);
  EXPECT_EQ(0u, c.nrings) << "0: chosen by the cache";
  EXPECT_EQ(64u, gpufs_config_rings(&c)) << "2 GiB of 64 KiB pages";
  EXPECT_EQ(1ull << 30, gpufs_config_staging(&c));
  c.cache_size = 8ull << 20; /* 128 frames */
  EXPECT_EQ(0, gpufs_config_check(&c, &bad, &why)) << (bad ? bad : "") << ": " << (why ? why : "");
  EXPECT_EQ(32u, gpufs_config_rings(&c)) << "4 frames a ring";
  EXPECT_EQ(256ull << 16, gpufs_config_staging(&c)) << "two slots a frame";
  c.cache_size = 4ull << 16; /* 4 frames: one ring, the fewest slots */
  EXPECT_EQ(0, gpufs_config_check(&c, &bad, &why));
  EXPECT_EQ(1u, gpufs_config_rings(&c));
  EXPECT_EQ((uint64_t)GPUFS_MIN_SLOTS << 16, gpufs_config_staging(&c));
  c.page_size = 4096;
  c.cache_size = 1ull << 30; /* 262,144 frames: the usual choices */
  EXPECT_EQ(64u, gpufs_config_rings(&c));
  EXPECT_EQ(256ull << 20, gpufs_config_staging(&c));

  gpufs_config_default(&c);
  c.cache_size = 8ull << 20;
  c.nrings = 64; /* asked for: 2 frames a ring */
  EXPECT_EQ(-EINVAL, gpufs_config_check(&c, &bad, &why));
  ASSERT_NE(nullptr, bad);
  EXPECT_STREQ("nrings", bad);
  EXPECT_NE(nullptr, strstr(why, "4 frames"));
  c.nrings = 32;
  EXPECT_EQ(0, gpufs_config_check(&c, &bad, &why));
  EXPECT_EQ(32u, gpufs_config_rings(&c));
  c.staging_size = 64ull << 16; /* asked for: fewer than 128 slots */
  EXPECT_EQ(-EINVAL, gpufs_config_check(&c, &bad, &why));
  EXPECT_STREQ("staging_size", bad);

  setenv("GPUFS_RINGS", "0", 1);
  c.nrings = 7;
  EXPECT_EQ(0, gpufs_config_from_env(&c, &bad));
  EXPECT_EQ(0u, c.nrings) << "GPUFS_RINGS=0: chosen by the cache";
  unsetenv("GPUFS_RINGS");
}

/* dirty_grain: 0 (64) by default, 1..64 powers of two, GPUFS_DIRTY_GRAIN;
 * anything else names the field. */
TEST(ConfigHostTest, DirtyGrainDefaultEnvironmentAndChecks)
{
  struct gpufs_config c;
  const char *bad = NULL, *why = NULL;
  gpufs_config_default(&c);
  EXPECT_EQ(0u, c.dirty_grain) << "0: GPUFS_DIRTY_GRAIN";
  EXPECT_EQ(0, gpufs_config_check(&c, &bad, &why));
  setenv("GPUFS_DIRTY_GRAIN", "1", 1);
  EXPECT_EQ(0, gpufs_config_from_env(&c, &bad));
  EXPECT_EQ(1u, c.dirty_grain);
  unsetenv("GPUFS_DIRTY_GRAIN");
  for (uint32_t g = 1; g <= GPUFS_DIRTY_GRAIN; g *= 2) {
    c.dirty_grain = g;
    EXPECT_EQ(0, gpufs_config_check(&c, &bad, &why)) << g;
  }
  for (uint32_t g : {3u, 48u, 128u, 4096u}) {
    c.dirty_grain = g;
    EXPECT_EQ(-EINVAL, gpufs_config_check(&c, &bad, &why)) << g;
    ASSERT_NE(nullptr, bad);
    EXPECT_STREQ("dirty_grain", bad);
  }
}

/* write_behind: 32 MiB by default, GPUFS_WRITE_BEHIND in bytes (K/M/G),
 * 0 turns it off; anything else is refused with its name. */
TEST(ConfigHostTest, WriteBehind)
{
  struct gpufs_config c;
  const char *bad = NULL, *why = NULL;
  gpufs_config_default(&c);
  EXPECT_EQ(32ull << 20, c.write_behind) << "the default (docs/config.md)";
  setenv("GPUFS_WRITE_BEHIND", "8M", 1);
  EXPECT_EQ(0, gpufs_config_from_env(&c, &bad));
  EXPECT_EQ(8ull << 20, c.write_behind);
  EXPECT_EQ(0, gpufs_config_check(&c, &bad, &why));
  setenv("GPUFS_WRITE_BEHIND", "0", 1);
  EXPECT_EQ(0, gpufs_config_from_env(&c, &bad));
  EXPECT_EQ(0u, c.write_behind) << "0: off";
  EXPECT_EQ(0, gpufs_config_check(&c, &bad, &why));
  setenv("GPUFS_WRITE_BEHIND", "lots", 1);
  EXPECT_EQ(-EINVAL, gpufs_config_from_env(&c, &bad));
  ASSERT_NE(nullptr, bad);
  EXPECT_STREQ("GPUFS_WRITE_BEHIND", bad);
  unsetenv("GPUFS_WRITE_BEHIND");
}

/* pull_warps: 4 by default, GPUFS_PULL_WARPS, 0 (no limit) to 64; more,
 * or a value that is not a number, is refused with its name. */
TEST(ConfigHostTest, PullWarps)
{
  struct gpufs_config c;
  const char *bad = NULL, *why = NULL;
  gpufs_config_default(&c);
  EXPECT_EQ(4u, c.pull_warps) << "the default (docs/config.md)";
  for (const char *v : {"0", "1", "64"}) {
    setenv("GPUFS_PULL_WARPS", v, 1);
    EXPECT_EQ(0, gpufs_config_from_env(&c, &bad)) << v;
    EXPECT_EQ((uint32_t)atoi(v), c.pull_warps) << v;
    EXPECT_EQ(0, gpufs_config_check(&c, &bad, &why)) << v;
  }
  setenv("GPUFS_PULL_WARPS", "65", 1);
  EXPECT_EQ(0, gpufs_config_from_env(&c, &bad));
  EXPECT_EQ(-EINVAL, gpufs_config_check(&c, &bad, &why));
  ASSERT_NE(nullptr, bad);
  EXPECT_STREQ("pull_warps", bad);
  setenv("GPUFS_PULL_WARPS", "few", 1);
  EXPECT_EQ(-EINVAL, gpufs_config_from_env(&c, &bad));
  ASSERT_NE(nullptr, bad);
  EXPECT_STREQ("GPUFS_PULL_WARPS", bad);
  unsetenv("GPUFS_PULL_WARPS");
}

/* The switches: readahead_async (0 by default) and auto_pin (1 by
 * default), each 0 or 1 from its variable, nothing else. */
TEST(ConfigHostTest, Switches)
{
  struct sw {
    const char *env, *field;
    uint32_t gpufs_config::*at;
    uint32_t def;
  };
  for (const sw &x : {sw{"GPUFS_READAHEAD_ASYNC", "readahead_async", &gpufs_config::readahead_async, 0},
                      sw{"GPUFS_AUTO_PIN", "auto_pin", &gpufs_config::auto_pin, 1}}) {
    struct gpufs_config c;
    const char *bad = NULL, *why = NULL;
    gpufs_config_default(&c);
    EXPECT_EQ(x.def, c.*x.at) << x.field << ": the default (docs/config.md)";
    for (const char *v : {"0", "1"}) {
      setenv(x.env, v, 1);
      EXPECT_EQ(0, gpufs_config_from_env(&c, &bad)) << x.env << "=" << v;
      EXPECT_EQ((uint32_t)atoi(v), c.*x.at) << x.env << "=" << v;
      EXPECT_EQ(0, gpufs_config_check(&c, &bad, &why)) << x.env << "=" << v;
    }
    setenv(x.env, "2", 1);
    EXPECT_EQ(0, gpufs_config_from_env(&c, &bad));
    EXPECT_EQ(-EINVAL, gpufs_config_check(&c, &bad, &why));
    ASSERT_NE(nullptr, bad);
    EXPECT_STREQ(x.field, bad);
    setenv(x.env, "yes", 1);
    EXPECT_EQ(-EINVAL, gpufs_config_from_env(&c, &bad));
    ASSERT_NE(nullptr, bad);
    EXPECT_STREQ(x.env, bad);
    unsetenv(x.env);
  }
}

/* register_max: 0 by default, GPUFS_REGISTER_MAX in bytes. */
TEST(ConfigHostTest, RegisterMax)
{
  struct gpufs_config c;
  const char *bad = NULL, *why = NULL;
  gpufs_config_default(&c);
  EXPECT_EQ(0u, c.register_max);
  setenv("GPUFS_REGISTER_MAX", "1048576", 1);
  EXPECT_EQ(0, gpufs_config_from_env(&c, &bad));
  EXPECT_EQ(1048576u, c.register_max);
  EXPECT_EQ(0, gpufs_config_check(&c, &bad, &why));
  unsetenv("GPUFS_REGISTER_MAX");
}

/* GPUFS_DEVICES lists the instances' devices; a bad list names the
 * variable and leaves the configuration as it was. */
TEST(ConfigHostTest, DeviceListFromEnvironmentAndChecks)
{
  struct gpufs_config c;
  const char *bad = NULL, *why = NULL;
  gpufs_config_default(&c);
  EXPECT_EQ(0u, c.ndevices) << "one instance on `device` by default";

  setenv("GPUFS_DEVICES", "0,1", 1);
  EXPECT_EQ(0, gpufs_config_from_env(&c, &bad));
  EXPECT_EQ(2u, c.ndevices);
  EXPECT_EQ(0, c.devices[0]);
  EXPECT_EQ(1, c.devices[1]);
  setenv("GPUFS_DEVICES", " 3 , 3,0 ", 1);
  EXPECT_EQ(0, gpufs_config_from_env(&c, &bad));
  ASSERT_EQ(3u, c.ndevices);
  EXPECT_EQ(3, c.devices[0]);
  EXPECT_EQ(3, c.devices[1]);
  EXPECT_EQ(0, c.devices[2]);
  EXPECT_EQ(0, gpufs_config_check(&c, &bad, &why));

  for (const char *v : {"", ",", "0,", "a", "0;1", "-1", "0,1,2,3,4,5,6,7,8", "99999999999"}) {
    setenv("GPUFS_DEVICES", v, 1);
    bad = NULL;
    EXPECT_EQ(-EINVAL, gpufs_config_from_env(&c, &bad)) << "'" << v << "'";
    ASSERT_NE(nullptr, bad);
    EXPECT_STREQ("GPUFS_DEVICES", bad);
    EXPECT_EQ(3u, c.ndevices) << "a bad list changes nothing";
  }
  setenv("GPUFS_DEVICES", "0,1,2,3,4,5,6,7", 1);
  EXPECT_EQ(0, gpufs_config_from_env(&c, &bad));
  EXPECT_EQ(GPUFS_MAX_INSTANCES, c.ndevices);
  unsetenv("GPUFS_DEVICES");

  c.ndevices = GPUFS_MAX_INSTANCES + 1;
  EXPECT_EQ(-EINVAL, gpufs_config_check(&c, &bad, &why));
  EXPECT_STREQ("ndevices", bad);
  c.ndevices = 2;
  c.devices[1] = -2;
  EXPECT_EQ(-EINVAL, gpufs_config_check(&c, &bad, &why));
  EXPECT_STREQ("devices", bad);
  c.devices[1] = 0;
  EXPECT_EQ(0, gpufs_config_check(&c, &bad, &why));
}

/* gpufs_version: the header's version, as text and in parts. */
TEST(Version, MatchesTheHeader)
{
  int major = -1, minor = -1, patch = -1;
  const char *v = gpufs_version(&major, &minor, &patch);
  EXPECT_EQ(GPUFS_VERSION_MAJOR, major);
  EXPECT_EQ(GPUFS_VERSION_MINOR, minor);
  EXPECT_EQ(GPUFS_VERSION_PATCH, patch);
  char want[32];
  snprintf(want, sizeof(want), "%d.%d.%d", major, minor, patch);
  EXPECT_STREQ(want, v);
  EXPECT_STREQ(GPUFS_VERSION_STRING, v);
  EXPECT_STREQ(v, gpufs_version(nullptr, nullptr, nullptr));
  EXPECT_EQ(major * 10000 + minor * 100 + patch, GPUFS_VERSION);
}
