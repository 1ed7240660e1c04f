/*
 * fsx_test.cu - a short run of the random exerciser (tests/fsx, `make fsx`
 * runs the long one): 50k device calls of every kind from many blocks and
 * warps through four names of each file, truncations, CPU writes between
 * kernels, every byte checked against the shadow.
 */
#include "tests/fsx/fsx.h"
#include "tests/gpu/gpu_util.h"

TEST(FsxTest, ShortRandomRun)
{
  REQUIRE_GPU();
  struct fsx_opts o;
  fsx_opts_default(&o);
  o.ops = 50000;
  o.seed = 14;
  o.files = 3;
  o.blocks = 8;
  o.ops_per_group = 150;
  o.file_size = 1u << 20;
  o.cache_size = 2u << 20;
  o.kernel_timeout_s = 60;
  struct fsx_report r;
  int rc = fsx_run(&o, &r);
  fsx_print_report(stdout, &r);
  ASSERT_EQ(0, rc) << r.what;
  EXPECT_GE(r.ops, o.ops);
  for (int k = 0; k < FSX_NKINDS; k++) EXPECT_GT(r.by_kind[k], 0u) << "no " << fsx_kind_name(k) << " made";
  EXPECT_GT(r.file_checks, 0u);
}
