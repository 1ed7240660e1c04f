/*
 * semcache_util.h - the host tests' SemCache under test: a cache on the CPU
 * "device" and the BLAS calls over it (semcache_blas_test.cpp,
 * semcache_gesv_test.cpp).
 */
#ifndef TESTS_HOST_SEMCACHE_UTIL_H
#define TESTS_HOST_SEMCACHE_UTIL_H

#include <gtest/gtest.h>

#include "semcache/src/blas.h"

/* A fixture per protocol: start() makes the cache (capacity cap, 0: none)
 * and the calls (gesv's memo on or off); TearDown ends both, and checks
 * that the cache ends cleanly. */
class SemCacheCalls : public ::testing::TestWithParam<sc_protocol> {
protected:
  sc_cache c;
  sc_blas s;
  void start_calls(sc_protocol p, size_t cap, int memo)
  {
    ASSERT_EQ(0, sc_cache_init(&c, &sc_cpu_backend, p, cap));
    ASSERT_EQ(0, sc_blas_init(&s, &c, &sc_host_blas, SC_CACHED, memo));
  }
  void TearDown() override
  {
    sc_blas_destroy(&s);
    EXPECT_EQ(0, sc_cache_destroy(&c));
  }
  sc_stats stats()
  {
    sc_stats st;
    sc_get_stats(&c, &st);
    return st;
  }
};

#endif /* TESTS_HOST_SEMCACHE_UTIL_H */
