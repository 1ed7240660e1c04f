/*
 * rodinia_run.h - the host tests' run of one rodinia-io benchmark: a
 * rio_run at a scale and seed, the benchmark's setup, generator and
 * teardown (struct rio_fns, one per benchmark below), and its inputs
 * generated into host memory as the harness would read them.
 *
 *   RioRunAny    by a rio_fns pointer (the suite's table-driven tests)
 *   RioRun<...>  typed: the benchmark's state and the inputs' element type
 *                (each benchmark's own tests: HotspotRun r(scale))
 */
#ifndef TESTS_HOST_RODINIA_RUN_H
#define TESTS_HOST_RODINIA_RUN_H

#include <stdint.h>

#include <vector>

#include <gtest/gtest.h>

#include "rodinia-io/atax/atax.h"
#include "rodinia-io/backprop/backprop.h"
#include "rodinia-io/bfs/bfs.h"
#include "rodinia-io/bicg/bicg.h"
#include "rodinia-io/conv2d/conv2d.h"
#include "rodinia-io/conv3d/conv3d.h"
#include "rodinia-io/dwt2d/dwt2d.h"
#include "rodinia-io/gesummv/gesummv.h"
#include "rodinia-io/hotspot/hotspot.h"
#include "rodinia-io/lud/lud.h"
#include "rodinia-io/matvec/matvec.h"
#include "rodinia-io/mvt/mvt.h"
#include "rodinia-io/nw/nw.h"
#include "rodinia-io/pathfinder/pathfinder.h"
#include "rodinia-io/stencil/stencil.h"

constexpr uint64_t kRioSeed = 42;

/* The host side of a benchmark that every test of it needs. */
struct rio_fns {
  int (*setup)(rio_run *);
  int (*generate)(rio_run *, int, void *);
  void (*teardown)(rio_run *);
};

struct RioRunAny {
  rio_run run{};
  const rio_fns *fns;
  RioRunAny(const rio_fns *f, double scale, uint64_t seed) : fns(f)
  {
    run.scale = scale;
    run.seed = seed;
  }
  RioRunAny(const RioRunAny &) = delete;
  RioRunAny &operator=(const RioRunAny &) = delete;
  ~RioRunAny() { fns->teardown(&run); }
  int setup() { return fns->setup(&run); }
  /* input i, generated (the run set up); a generator's error fails the test */
  template <typename Elem> std::vector<Elem> generate(int i)
  {
    std::vector<Elem> buf(run.in[i].size / sizeof(Elem));
    EXPECT_EQ(fns->generate(&run, i, buf.data()), 0) << run.why;
    return buf;
  }
};

template <typename State, typename Elem, const rio_fns &F> struct RioRun : RioRunAny {
  std::vector<std::vector<Elem>> in;
  explicit RioRun(double scale, uint64_t seed = kRioSeed) : RioRunAny(&F, scale, seed) {}
  State *st() { return static_cast<State *>(run.state); }
  /* the elements of input i (the run set up) */
  uint64_t count(int i) const { return run.in[i].size / sizeof(Elem); }
  std::vector<Elem> generate(int i) { return RioRunAny::generate<Elem>(i); }
  /* setup and every input into host_in; fails the test on an error */
  void prepare()
  {
    ASSERT_EQ(setup(), 0) << run.why;
    in.resize(run.ninputs);
    for (int i = 0; i < run.ninputs; i++) {
      in[i] = generate(i);
      run.host_in[i] = in[i].data();
    }
  }
};

inline constexpr rio_fns kRioHotspot{hotspot_setup, hotspot_generate, hotspot_teardown};
inline constexpr rio_fns kRioLud{lud_setup, lud_generate, lud_teardown};
inline constexpr rio_fns kRioBackprop{backprop_setup, backprop_generate, backprop_teardown};
inline constexpr rio_fns kRioBfs{bfs_setup, bfs_generate, bfs_teardown};
inline constexpr rio_fns kRioDwt2d{dwt2d_setup, dwt2d_generate, dwt2d_teardown};
inline constexpr rio_fns kRioNw{nw_setup, nw_generate, nw_teardown};
inline constexpr rio_fns kRioPathfinder{pathfinder_setup, pathfinder_generate, pathfinder_teardown};
inline constexpr rio_fns kRioStencil{stencil_setup, stencil_generate, stencil_teardown};
inline constexpr rio_fns kRioConv2d{conv2d_setup, conv2d_generate, conv2d_teardown};
inline constexpr rio_fns kRioConv3d{conv3d_setup, conv3d_generate, conv3d_teardown};
inline constexpr rio_fns kRioGesummv{gesummv_setup, matvec_generate, matvec_teardown};
inline constexpr rio_fns kRioMvt{mvt_setup, matvec_generate, matvec_teardown};
inline constexpr rio_fns kRioBicg{bicg_setup, matvec_generate, matvec_teardown};
inline constexpr rio_fns kRioAtax{atax_setup, matvec_generate, matvec_teardown};

using HotspotRun = RioRun<hotspot_state, float, kRioHotspot>;
using LudRun = RioRun<lud_state, float, kRioLud>;
using BackpropRun = RioRun<backprop_state, float, kRioBackprop>;
using BfsRun = RioRun<bfs_state, uint8_t, kRioBfs>;
using DwtRun = RioRun<dwt2d_state, uint8_t, kRioDwt2d>;
using NwRun = RioRun<nw_state, int32_t, kRioNw>;
using PathfinderRun = RioRun<pathfinder_state, int32_t, kRioPathfinder>;
using StencilRun = RioRun<stencil_state, float, kRioStencil>;
using Conv2dRun = RioRun<conv2d_state, float, kRioConv2d>;
using Conv3dRun = RioRun<conv3d_state, float, kRioConv3d>;
using GesummvRun = RioRun<matvec_state, float, kRioGesummv>;
using MvtRun = RioRun<matvec_state, float, kRioMvt>;
using BicgRun = RioRun<matvec_state, float, kRioBicg>;
using AtaxRun = RioRun<matvec_state, float, kRioAtax>;

#endif /* TESTS_HOST_RODINIA_RUN_H */
