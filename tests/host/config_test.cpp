/*
 * config_test.cpp - struct gpufs_config on the host: defaults, GPUFS_*
 * environment overrides and the checks that name a bad field (here for the
 * readahead window; tests/gpu/errors_test.cu covers the others through
 * gpufs_start).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gtest/gtest.h>

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
