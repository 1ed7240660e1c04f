/*
 * identity_test.cu - one host file is one GPU file however it is named
 * (issue 14): "DIR/x" beside "DIR//x", "DIR/./x" or a hard link "DIR/y"
 * shares one size, one set of dirty pages.  gfsync through one name writes
 * back the bytes written through the others (also a name's own bytes on a
 * page another name dirtied first); gftruncate through one name cuts the
 * bytes another name dirtied past the cut for good; gread through one name
 * sees gwrite through another at once.  O_TRUNC truncates at every gopen
 * that asks for it, also one that joins an open descriptor, and the dirty
 * bytes written before never come back; O_TRUNC|O_RDONLY is -EINVAL.
 *
 * Each test runs a script of block-level (or warp-level) calls in one
 * group (id_script) and compares every result, every byte read and the
 * host file with a model built on the CPU.  Each test names the step that
 * fails on the code before issue 14.
 */
#include <memory>

#include "tests/gpu/write_util.cuh"

#define ID_PAGE 4096u
#define ID_SLOTS 4             /* descriptors a script keeps */
#define ID_NAMES 2             /* 0: DIR/x, 1: the other name */
#define ID_SRCS 2              /* sources: the patterns of seeds 2 and 3 */
#define ID_PATH_BYTES 512
#define ID_SRC_BYTES (8ull * ID_PAGE)
#define ID_OUT_BYTES (32ull * ID_PAGE)
#define ID_FD INT64_MIN        /* a step's wanted result: any descriptor (>= 0) */

static const uint64_t ID_FILE_SEED = 1; /* DIR/x's bytes; source k holds seed 2 + k */

enum id_code { ID_OPEN, ID_WRITE, ID_READ, ID_FSYNC, ID_TRUNCATE, ID_CLOSE };

/* One call of a script. */
struct id_op {
  int code;
  int slot;     /* the descriptor slot it uses (ID_OPEN: the one it fills) */
  int arg;      /* ID_OPEN: the name; ID_WRITE: the source */
  int flags;    /* ID_OPEN */
  int64_t off;  /* ID_WRITE, ID_READ: file offset; ID_TRUNCATE: the length */
  uint64_t len; /* ID_WRITE, ID_READ: bytes */
  uint64_t out; /* ID_READ: where its bytes go in the output buffer */
};

/* What a script works on; passed by value. */
struct id_bufs {
  const char *paths; /* ID_NAMES paths, ID_PATH_BYTES apart */
  const uint8_t *src[ID_SRCS];
  uint8_t *out;
  int *fds; /* ID_SLOTS descriptors, kept from one script to the next */
};

/* One group (the block, or with w its one warp) makes the calls of ops in
 * order; r[i] is the result of ops[i].  A gwrite of source k at offset o
 * writes the pattern of seed 2 + k at o. */
static __global__ void id_script(const id_op *ops, int n, id_bufs b, int64_t *r, bool w)
{
  int fds[ID_SLOTS];
  for (int i = 0; i < ID_SLOTS; i++) fds[i] = b.fds[i];
  for (int i = 0; i < n; i++) {
    const id_op o = ops[i];
    const int fd = fds[o.slot];
    int64_t v;
    switch (o.code) {
    case ID_OPEN:
      v = wt_open(w, b.paths + o.arg * ID_PATH_BYTES, o.flags, 0644);
      fds[o.slot] = (int)v;
      break;
    case ID_WRITE: v = wt_write(w, fd, o.off, o.len, b.src[o.arg] + o.off); break;
    case ID_READ: v = wt_read(w, fd, o.off, o.len, b.out + o.out); break;
    case ID_FSYNC: v = w ? gfsync_warp(fd) : gfsync(fd); break;
    case ID_TRUNCATE: v = w ? gftruncate_warp(fd, o.off) : gftruncate(fd, o.off); break;
    default: v = wt_close(w, fd); break;
    }
    if (threadIdx.x == 0) r[i] = v;
  }
  if (threadIdx.x == 0)
    for (int i = 0; i < ID_SLOTS; i++) b.fds[i] = fds[i];
}

/* A step: the call, the result it must return, what it is. */
struct id_step {
  id_op op;
  int64_t want;
  const char *what;
};

static id_op id_open(int slot, int name, int flags) { return {ID_OPEN, slot, name, flags, 0, 0, 0}; }
static id_op id_write(int slot, int src, int64_t off, uint64_t len) { return {ID_WRITE, slot, src, 0, off, len, 0}; }
static id_op id_read(int slot, int64_t off, uint64_t len, uint64_t out) { return {ID_READ, slot, 0, 0, off, len, out}; }
static id_op id_fsync(int slot) { return {ID_FSYNC, slot, 0, 0, 0, 0, 0}; }
static id_op id_truncate(int slot, int64_t len) { return {ID_TRUNCATE, slot, 0, 0, len, 0, 0}; }
static id_op id_close(int slot) { return {ID_CLOSE, slot, 0, 0, 0, 0, 0}; }

/* How the second name of DIR/x is spelled. */
enum id_alias { ID_DOUBLE_SLASH, ID_DOT, ID_HARD_LINK, ID_NALIASES };
static const char *const id_alias_names[ID_NALIASES] = {"slashslash", "dot", "hardlink"};

class IdentityBase : public ::testing::Test {
protected:
  tdir dir;
  bool started = false;
  bool warp = false;
  std::string name[ID_NAMES];
  std::unique_ptr<wt_src> src[ID_SRCS];
  std::unique_ptr<wt_dmem<char>> dpaths;
  std::unique_ptr<wt_dmem<uint8_t>> out;
  std::unique_ptr<wt_dmem<int>> fds;

  void SetUp() override
  {
    REQUIRE_GPU();
    struct gpufs_config c = small_config(ID_PAGE, 256ull * ID_PAGE);
    c.alloc_timeout_ms = 10000;
    ASSERT_EQ(0, gpufs_start(&c)) << gpufs_error_detail();
    started = true;
    for (int k = 0; k < ID_SRCS; k++) src[k].reset(new wt_src(ID_SRC_BYTES, ID_FILE_SEED + 1 + k));
    dpaths.reset(new wt_dmem<char>(ID_NAMES * ID_PATH_BYTES));
    out.reset(new wt_dmem<uint8_t>(ID_OUT_BYTES));
    fds.reset(new wt_dmem<int>(ID_SLOTS, 0xff));
  }
  void TearDown() override
  {
    if (started) EXPECT_EQ(0, gpufs_stop()) << gpufs_error_detail();
  }
  /* DIR/x of `size` bytes of the file seed's pattern, its second name
   * spelled as `alias` says (a hard link is made here). */
  void make(uint64_t size, int alias)
  {
    name[0] = dir.make("x", size, ID_FILE_SEED);
    if (alias == ID_DOUBLE_SLASH) name[1] = dir.path + "//x";
    else if (alias == ID_DOT) name[1] = dir.path + "/./x";
    else {
      name[1] = dir.path + "/y";
      ASSERT_EQ(0, link(name[0].c_str(), name[1].c_str())) << strerror(errno);
      dir.files.push_back(name[1]);
    }
    for (int i = 0; i < ID_NAMES; i++) {
      ASSERT_LT(name[i].size(), (size_t)ID_PATH_BYTES);
      ASSERT_EQ(cudaSuccess, cudaMemcpy(dpaths->p + i * ID_PATH_BYTES, name[i].c_str(), name[i].size() + 1,
                                        cudaMemcpyHostToDevice));
    }
  }
  /* Run the steps in one group; every result is checked against its want. */
  void run(const std::vector<id_step> &steps)
  {
    const int n = (int)steps.size();
    std::vector<id_op> ops;
    for (auto &s : steps) ops.push_back(s.op);
    wt_dmem<id_op> dops(n);
    wt_dmem<int64_t> r(n, 0x7f);
    ASSERT_EQ(cudaSuccess, cudaMemcpy(dops.p, ops.data(), n * sizeof(id_op), cudaMemcpyHostToDevice));
    id_bufs b = {dpaths->p, {src[0]->p, src[1]->p}, out->p, fds->p};
    out->set(0xa5);
    id_script<<<1, warp ? 32 : 128>>>(dops.p, n, b, r.p, warp);
    ASSERT_EQ(cudaSuccess, wt_sync());
    std::vector<int64_t> h = r.get();
    for (int i = 0; i < n; i++) {
      if (steps[i].want == ID_FD)
        EXPECT_GE(h[i], 0) << "step " << i << ": " << steps[i].what << wt_err(h[i]);
      else
        EXPECT_EQ(steps[i].want, h[i]) << "step " << i << ": " << steps[i].what << wt_err(h[i]);
    }
  }
  /* The output buffer's [at, at + model.size()) holds model. */
  ::testing::AssertionResult read_is(uint64_t at, const std::vector<uint8_t> &model)
  {
    std::vector<uint8_t> o = out->get();
    return wt_bytes_eq(model.data(), o.data() + at, model.size());
  }
  void truncate_drops_dirty_bytes(int other_name, int other_flags);
};

/* Parameters: how the second name is spelled, warp-level calls. */
class IdentityTest : public IdentityBase, public ::testing::WithParamInterface<std::tuple<int, bool>> {
protected:
  int alias = 0;
  void SetUp() override
  {
    IdentityBase::SetUp();
    alias = std::get<0>(GetParam());
    warp = std::get<1>(GetParam());
  }
};

/* ---- gfsync through one name writes what every name wrote ---- */

/* Today: step 6's gfsync writes only the pages on its own name's dirty
 * lists, so the file check after it fails on page 1 (both names' bytes:
 * the other name dirtied the page first) and page 2. */
TEST_P(IdentityTest, FsyncThroughOneNameWritesEveryName)
{
  const uint64_t P = ID_PAGE, S = 4 * P + 100;
  make(S, alias);
  if (HasFatalFailure()) return;
  std::vector<uint8_t> m = wt_pattern(S, ID_FILE_SEED);
  run({{id_open(0, 0, GPUFS_O_RDWR), ID_FD, "gopen DIR/x"},
       {id_open(1, 1, GPUFS_O_RDWR), ID_FD, "gopen of the other name"},
       {id_write(1, 0, P + 10, 300), 300, "the other name dirties page 1 first"},
       {id_write(0, 0, P + 1000, 500), 500, "DIR/x writes page 1 after it"},
       {id_write(1, 0, 2 * P + 7, 2000), 2000, "the other name writes page 2"},
       {id_write(0, 0, S - 50, 200), 200, "DIR/x writes across the end"},
       {id_fsync(0), 0, "gfsync DIR/x"}});
  wt_put(m, P + 10, 300, 2);
  wt_put(m, P + 1000, 500, 2);
  wt_put(m, 2 * P + 7, 2000, 2);
  wt_put(m, S - 50, 200, 2);
  EXPECT_TRUE(wt_file_is(name[0], m)) << "after gfsync through DIR/x: every name's bytes";
  /* the other way round: DIR/x dirties page 3 first */
  run({{id_write(0, 1, 3 * P + 20, 100), 100, "DIR/x dirties page 3 first"},
       {id_write(1, 1, 3 * P + 2000, 1000), 1000, "the other name writes page 3 after it"},
       {id_write(0, 1, 64, 64), 64, "DIR/x writes page 0"},
       {id_fsync(1), 0, "gfsync of the other name"}});
  wt_put(m, 3 * P + 20, 100, 3);
  wt_put(m, 3 * P + 2000, 1000, 3);
  wt_put(m, 64, 64, 3);
  EXPECT_TRUE(wt_file_is(name[0], m)) << "after gfsync through the other name: every name's bytes";
  run({{id_close(1), 0, "gclose of the other name"}, {id_close(0), 0, "gclose DIR/x"}});
  EXPECT_TRUE(wt_file_is(name[0], m)) << "after both gcloses";
}

/* ---- gftruncate through one name cuts what every name wrote ---- */

/* Today: the other name keeps its old size, so step 6's gread returns S,
 * and its last gclose writes its dirty page 3 back: the final file check
 * finds the old size and the cut bytes. */
TEST_P(IdentityTest, TruncateThroughOneNameCutsEveryName)
{
  const uint64_t P = ID_PAGE, S = 4 * P + 100, L = P + 777;
  make(S, alias);
  if (HasFatalFailure()) return;
  std::vector<uint8_t> m = wt_pattern(S, ID_FILE_SEED);
  wt_put(m, 100, 200, 2);
  wt_put(m, P + 700, 200, 2);
  wt_put(m, 3 * P + 10, 300, 2);
  m.resize(L);
  run({{id_open(0, 0, GPUFS_O_RDWR), ID_FD, "gopen DIR/x"},
       {id_open(1, 1, GPUFS_O_RDWR), ID_FD, "gopen of the other name"},
       {id_write(1, 0, 100, 200), 200, "the other name writes below the cut"},
       {id_write(1, 0, P + 700, 200), 200, "the other name writes across the cut"},
       {id_write(1, 0, 3 * P + 10, 300), 300, "the other name writes past the cut"},
       {id_truncate(0, (int64_t)L), 0, "gftruncate DIR/x"},
       {id_read(1, 0, S + P, 0), (int64_t)L, "gread through the other name: the new size at once"},
       {id_read(0, 0, S + P, S + P), (int64_t)L, "gread through DIR/x"}});
  EXPECT_TRUE(read_is(0, m)) << "gread through the other name after the cut";
  EXPECT_TRUE(read_is(S + P, m)) << "gread through DIR/x after the cut";
  run({{id_close(0), 0, "gclose DIR/x"}});
  EXPECT_TRUE(wt_file_is(name[0], m)) << "after gclose DIR/x: the bytes below the cut, the new size";
  run({{id_read(1, 0, S + P, 0), (int64_t)L, "gread through the other name"},
       {id_close(1), 0, "the last gclose, of the other name"}});
  EXPECT_TRUE(read_is(0, m)) << "gread through the other name";
  EXPECT_TRUE(wt_file_is(name[0], m)) << "after the last gclose: the cut bytes never come back";
}

/* ---- gread through one name sees gwrite through another ---- */

/* Today: pages are shared, sizes are not: step 5's gread through the
 * other name stops at the size it opened with (S). */
TEST_P(IdentityTest, ReadThroughOneNameSeesWritesThroughAnother)
{
  const uint64_t P = ID_PAGE, S = 3 * P + 500, E = S + 900;
  make(S, alias);
  if (HasFatalFailure()) return;
  std::vector<uint8_t> m0 = wt_pattern(S, ID_FILE_SEED), m = m0;
  wt_put(m, P + 33, 1000, 2);
  m.resize(S + 200, 0);
  wt_put(m, S + 200, 700, 2);
  std::vector<uint8_t> m2 = m;
  wt_put(m2, 2 * P + 5, 300, 3);
  const uint64_t o1 = 8 * P, o2 = 16 * P;
  run({{id_open(0, 0, GPUFS_O_RDWR), ID_FD, "gopen DIR/x"},
       {id_open(1, 1, GPUFS_O_RDWR), ID_FD, "gopen of the other name"},
       {id_read(1, 0, S + 100, 0), (int64_t)S, "gread through the other name: its pages cached"},
       {id_write(0, 0, P + 33, 1000), 1000, "gwrite through DIR/x"},
       {id_write(0, 0, S + 200, 700), 700, "gwrite through DIR/x past the end"},
       {id_read(1, 0, E + 2000, o1), (int64_t)E, "gread through the other name: the new size"},
       {id_write(1, 1, 2 * P + 5, 300), 300, "gwrite through the other name"},
       {id_read(0, 0, E + 2000, o2), (int64_t)E, "gread through DIR/x"},
       {id_close(1), 0, "gclose of the other name"},
       {id_close(0), 0, "gclose DIR/x"}});
  EXPECT_TRUE(read_is(0, m0)) << "the first gread";
  EXPECT_TRUE(read_is(o1, m)) << "the other name reads DIR/x's bytes and the zero gap";
  EXPECT_TRUE(read_is(o2, m2)) << "DIR/x reads the other name's bytes";
  EXPECT_TRUE(wt_file_is(name[0], m2)) << "after both gcloses";
}

/* ---- O_TRUNC of one descriptor drops the dirty bytes of another ---- */

/* DIR/x open O_RDWR with dirty bytes (some past the old end); then a gopen
 * of name other_name with other_flags (O_TRUNC, not joining DIR/x's
 * descriptor) cuts the file to 0 for both: the dirty bytes never come
 * back, through gread, gfsync or either gclose.
 * Today: DIR/x's descriptor keeps its size (step 4's gread returns 100),
 * and the gclose of DIR/x writes its dirty pages back over the truncated
 * file: the last file check finds them. */
void IdentityBase::truncate_drops_dirty_bytes(int other_name, int other_flags)
{
  const uint64_t P = ID_PAGE, S = 3 * P + 500;
  std::vector<uint8_t> m(100, 0);
  wt_put(m, 100, 200, 3);
  run({{id_open(0, 0, GPUFS_O_RDWR), ID_FD, "gopen DIR/x"},
       {id_write(0, 0, 0, 2 * P + 300), 2 * P + 300, "dirty bytes"},
       {id_write(0, 0, S - 100, 1100), 1100, "dirty bytes past the old end"},
       {id_open(1, other_name, other_flags), ID_FD, "gopen with O_TRUNC"},
       {id_read(0, 0, 100, 0), 0, "gread through DIR/x: the file is empty"},
       {id_write(1, 1, 100, 200), 200, "gwrite through the truncating descriptor"},
       {id_read(0, 0, 3 * P, 0), 300, "gread through DIR/x: zeros, then the new bytes"},
       {id_fsync(1), 0, "gfsync of the truncating descriptor"}});
  EXPECT_TRUE(read_is(0, m)) << "the cached pages of before the truncation are stale";
  EXPECT_TRUE(wt_file_is(name[0], m)) << "after gfsync";
  run({{id_close(1), 0, "gclose of the truncating descriptor"}});
  EXPECT_TRUE(wt_file_is(name[0], m)) << "after its gclose";
  run({{id_close(0), 0, "the last gclose, DIR/x's"}});
  EXPECT_TRUE(wt_file_is(name[0], m)) << "after DIR/x's gclose: the bytes dirtied before O_TRUNC never come back";
}

TEST_P(IdentityTest, OTruncThroughAnotherNameDropsDirtyBytes)
{
  make(3 * ID_PAGE + 500, alias);
  if (HasFatalFailure()) return;
  truncate_drops_dirty_bytes(1, GPUFS_O_RDWR | GPUFS_O_TRUNC);
}

INSTANTIATE_TEST_SUITE_P(Names, IdentityTest,
                         ::testing::Combine(::testing::Range(0, (int)ID_NALIASES), ::testing::Bool()),
                         [](const ::testing::TestParamInfo<IdentityTest::ParamType> &i) {
                           return std::string(id_alias_names[std::get<0>(i.param)]) +
                                  (std::get<1>(i.param) ? "_warp" : "_block");
                         });

/* ---- O_TRUNC at every gopen, one name ---- */

class OTruncTest : public IdentityBase {
protected:
  void SetUp() override
  {
    IdentityBase::SetUp();
    if (!HasFatalFailure() && !IsSkipped()) make(3 * ID_PAGE + 500, ID_DOUBLE_SLASH);
  }
};

/* The same path, other flags: another descriptor of the file. */
TEST_F(OTruncTest, OtherFlagsTruncateDropsDirtyBytes)
{
  truncate_drops_dirty_bytes(0, GPUFS_O_WRONLY | GPUFS_O_TRUNC);
}

/* A gopen with O_TRUNC that joins the open descriptor (same path, same
 * flags) truncates too.  Today: the join truncates nothing: step 4's gread
 * returns 100 (the file is still 2 pages + 300 long), step 6's 2 pages +
 * 300, and the file keeps the dirty bytes. */
TEST_F(OTruncTest, JoiningOpenTruncates)
{
  const uint64_t P = ID_PAGE;
  const int flags = GPUFS_O_RDWR | GPUFS_O_TRUNC;
  std::vector<uint8_t> m(100, 0);
  wt_put(m, 100, 200, 3);
  run({{id_open(0, 0, flags), ID_FD, "gopen O_RDWR|O_TRUNC"},
       {id_read(0, 0, 100, 0), 0, "gread: the file is empty"},
       {id_write(0, 0, 0, 2 * P + 300), 2 * P + 300, "dirty bytes"},
       {id_open(1, 0, flags), ID_FD, "the same gopen again: joins"},
       {id_read(0, 0, 100, 0), 0, "gread: empty again"},
       {id_write(1, 1, 100, 200), 200, "gwrite"},
       {id_read(0, 0, 3 * P, 0), 300, "gread: zeros, then the new bytes"},
       {id_close(1), 0, "gclose (not the last reference)"},
       {id_close(0), 0, "the last gclose"}});
  std::vector<int> h = fds->get();
  EXPECT_EQ(h[0], h[1]) << "the same path and flags share the descriptor";
  EXPECT_TRUE(read_is(0, m)) << "the cached pages of before the second O_TRUNC are stale";
  EXPECT_TRUE(wt_file_is(name[0], m)) << "the bytes dirtied before the second O_TRUNC never come back";
}

/* O_TRUNC with O_RDONLY is refused, with the file closed or open and
 * dirty, and nothing is cut.  Today: the host opens it (Linux truncates
 * the file on O_RDONLY|O_TRUNC): step 0 returns a descriptor, and the
 * file check finds an empty file. */
TEST_F(OTruncTest, TruncReadOnlyIsEinval)
{
  const uint64_t P = ID_PAGE, S = 3 * P + 500;
  std::vector<uint8_t> m = wt_pattern(S, ID_FILE_SEED);
  run({{id_open(0, 0, GPUFS_O_RDONLY | GPUFS_O_TRUNC), -GPUFS_EINVAL, "gopen O_RDONLY|O_TRUNC"}});
  EXPECT_TRUE(wt_file_is(name[0], m)) << "nothing cut";
  wt_put(m, P + 5, 400, 2);
  run({{id_open(1, 0, GPUFS_O_RDWR), ID_FD, "gopen O_RDWR"},
       {id_write(1, 0, P + 5, 400), 400, "dirty bytes"},
       {id_open(2, 0, GPUFS_O_RDONLY | GPUFS_O_TRUNC), -GPUFS_EINVAL, "gopen O_RDONLY|O_TRUNC, the file open"},
       {id_open(2, 1, GPUFS_O_RDONLY | GPUFS_O_TRUNC | GPUFS_O_CREAT), -GPUFS_EINVAL,
        "gopen O_RDONLY|O_TRUNC|O_CREAT through another name"},
       {id_read(1, 0, S + 100, 0), (int64_t)S, "gread: nothing cut"},
       {id_close(1), 0, "gclose"}});
  EXPECT_TRUE(read_is(0, m)) << "gread after the refused opens";
  EXPECT_TRUE(wt_file_is(name[0], m)) << "the dirty bytes, nothing cut";
}
