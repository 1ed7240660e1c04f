/*
 * matvec_run.h - the host tests' run of one matrix-vector benchmark
 * (gesummv, mvt, bicg, atax): setup, then every input generated into host
 * memory as the harness would read it.
 */
#ifndef TESTS_HOST_MATVEC_RUN_H
#define TESTS_HOST_MATVEC_RUN_H

#include <stdint.h>

#include <vector>

#include <gtest/gtest.h>

#include "rodinia-io/matvec/matvec.h"

struct MatvecRun {
  rio_run run{};
  std::vector<std::vector<float>> in;
  int (*setup)(rio_run *);
  MatvecRun(int (*setup_fn)(rio_run *), double scale, uint64_t seed) : setup(setup_fn)
  {
    run.scale = scale;
    run.seed = seed;
  }
  ~MatvecRun() { matvec_teardown(&run); }
  matvec_state *st() { return static_cast<matvec_state *>(run.state); }
  /* setup and the inputs; fails the test on an error */
  void prepare()
  {
    ASSERT_EQ(setup(&run), 0) << run.why;
    in.resize(run.ninputs);
    for (int i = 0; i < run.ninputs; i++) {
      in[i].assign(run.in[i].size / sizeof(float), 0.0f);
      ASSERT_EQ(matvec_generate(&run, i, in[i].data()), 0) << run.why;
      run.host_in[i] = in[i].data();
    }
  }
};

#endif /* TESTS_HOST_MATVEC_RUN_H */
