/*
 * contracts_test.cu - four promises of docs/api.md (issue 14), each shown
 * by one test that checks every byte read against a model built on the
 * CPU and compares the host file byte for byte:
 *
 *   HostTruncateWhileOpen: the size is sampled at the open; cached pages
 *     are served as they are, bytes the host lost read as zeros, until
 *     the file is opened again with no name of it open.
 *   HostWriteWhileOpenSeenAfterReopen: a CPU write is unseen by the open
 *     file (and by another name opened beside it), seen after every name
 *     is closed and the file is opened again (close-to-open).
 *   MsyncSyncWritesEveryDirtyPageOfTheFile: gmsync(MS_SYNC) through one
 *     name writes back the pages dirtied through another name too.
 *   TruncateRacingReads: greads racing with a gftruncate return the old or
 *     the new size, never bytes the file did not hold; reads that start
 *     after it returned get the new size; the cut is final.
 *
 * Tests 1-3 run scripts of block-level calls in one block (ct_script, the
 * pattern of identity_test.cu's id_script), with the CPU's changes made
 * between the scripts.  Readahead is off (readahead_max 0): a gread caches
 * only the pages it asks for, so the tests know which pages are cached.
 */
#include <cuda/atomic>
#include <memory>

#include "tests/gpu/write_util.cuh"

#define CT_PAGE 4096u
#define CT_SLOTS 4             /* descriptors (and mappings) a script keeps */
#define CT_NAMES 2             /* 0: DIR/x, 1: another spelling of it */
#define CT_PATH_BYTES 512
#define CT_SRC_BYTES (8ull * CT_PAGE)
#define CT_OUT_BYTES (16ull * CT_PAGE)
#define CT_THREADS 128
#define CT_FD INT64_MIN        /* a step's wanted result: any descriptor (>= 0) */

/* DIR/x's bytes; the GPU writes and stores the pattern of CT_GPU_SEED, the
 * CPU writes the pattern of CT_CPU_SEED. */
static const uint64_t CT_FILE_SEED = 1, CT_GPU_SEED = 2, CT_CPU_SEED = 3;

enum ct_code { CT_OPEN, CT_READ, CT_WRITE, CT_FSTAT, CT_MAP, CT_MSYNC, CT_UNMAP, CT_CLOSE };

/* One call of a script. */
struct ct_op {
  int code;
  int slot;     /* the descriptor (and mapping) slot it uses; CT_OPEN fills it */
  int name;     /* CT_OPEN: the path */
  int flags;    /* CT_OPEN */
  int64_t off;  /* CT_READ, CT_WRITE, CT_MAP: file offset */
  uint64_t len; /* CT_READ, CT_WRITE, CT_MAP, CT_MSYNC, CT_UNMAP: bytes */
  uint64_t out; /* CT_READ: where its bytes go in the output buffer */
};

/* What a script works on; passed by value. */
struct ct_bufs {
  const char *paths;  /* CT_NAMES paths, CT_PATH_BYTES apart */
  const uint8_t *src; /* the GPU's bytes: src[o] is for file offset o */
  uint8_t *out;
  int *fds;    /* CT_SLOTS descriptors, kept from one script to the next */
  void **maps; /* CT_SLOTS mappings, likewise */
};

/* One block makes the calls of ops in order; r[i] is the result of
 * ops[i]: a descriptor, a count, gfstat's st_size, 0, or -errno.  CT_MAP
 * maps [off, off + len) of the slot's descriptor PROT_READ|PROT_WRITE
 * MAP_SHARED and stores src's bytes there; CT_MSYNC (MS_SYNC) and
 * CT_UNMAP take the slot's mapping and len. */
static __global__ void ct_script(const ct_op *ops, int n, ct_bufs b, int64_t *r)
{
  int fds[CT_SLOTS];
  void *maps[CT_SLOTS];
  for (int i = 0; i < CT_SLOTS; i++) {
    fds[i] = b.fds[i];
    maps[i] = b.maps[i];
  }
  for (int i = 0; i < n; i++) {
    const ct_op o = ops[i];
    const int fd = fds[o.slot];
    int64_t v;
    switch (o.code) {
    case CT_OPEN:
      v = gopen(b.paths + o.name * CT_PATH_BYTES, o.flags, 0644);
      fds[o.slot] = (int)v;
      break;
    case CT_READ: v = gread(fd, o.off, o.len, b.out + o.out); break;
    case CT_WRITE: v = gwrite(fd, o.off, o.len, b.src + o.off); break;
    case CT_FSTAT: {
      struct gstat st;
      int rc = gfstat(fd, &st);
      v = rc < 0 ? rc : st.st_size;
      break;
    }
    case CT_MAP: {
      void *p = gmmap(NULL, o.len, GPUFS_PROT_READ | GPUFS_PROT_WRITE, GPUFS_MAP_SHARED, fd, o.off);
      if (GPUFS_MAP_FAILED(p)) { /* every thread gets the same answer */
        v = GPUFS_MAP_ERRNO(p);
        break;
      }
      maps[o.slot] = p;
      for (uint64_t k = threadIdx.x; k < o.len; k += blockDim.x) ((uint8_t *)p)[k] = b.src[o.off + k];
      __threadfence();
      __syncthreads();
      v = 0;
      break;
    }
    case CT_MSYNC: v = gmsync(maps[o.slot], o.len, GPUFS_MS_SYNC); break;
    case CT_UNMAP: v = gmunmap(maps[o.slot], o.len); break;
    default: v = gclose(fd); break;
    }
    if (threadIdx.x == 0) r[i] = v;
  }
  if (threadIdx.x == 0)
    for (int i = 0; i < CT_SLOTS; i++) {
      b.fds[i] = fds[i];
      b.maps[i] = maps[i];
    }
}

/* A step: the call, the result it must return, what it is. */
struct ct_step {
  ct_op op;
  int64_t want;
  const char *what;
};

static ct_op ct_open(int slot, int name, int flags) { return {CT_OPEN, slot, name, flags, 0, 0, 0}; }
static ct_op ct_read(int slot, int64_t off, uint64_t len, uint64_t out) { return {CT_READ, slot, 0, 0, off, len, out}; }
static ct_op ct_write(int slot, int64_t off, uint64_t len) { return {CT_WRITE, slot, 0, 0, off, len, 0}; }
static ct_op ct_fstat(int slot) { return {CT_FSTAT, slot, 0, 0, 0, 0, 0}; }
static ct_op ct_map(int slot, int64_t off, uint64_t len) { return {CT_MAP, slot, 0, 0, off, len, 0}; }
static ct_op ct_msync(int slot, uint64_t len) { return {CT_MSYNC, slot, 0, 0, 0, len, 0}; }
static ct_op ct_unmap(int slot, uint64_t len) { return {CT_UNMAP, slot, 0, 0, 0, len, 0}; }
static ct_op ct_close(int slot) { return {CT_CLOSE, slot, 0, 0, 0, 0, 0}; }

static __device__ uint64_t ct_now(void)
{
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

#define CT_RACE_READERS 7         /* blocks 1..7 read, block 0 truncates */
#define CT_RACE_MIN_READS 20      /* each reader reads the file at least this often */
#define CT_RACE_MAX_READS 40      /* and at most this often */
#define CT_RACE_DELAY_NS 50000ull /* block 0 waits this long before gftruncate */
#define CT_RACE_TIMEOUT_NS 2000000000ull

/* Block 0: after CT_RACE_DELAY_NS, gftruncate(fd, cut) once (*tr: its
 * result), then *done = 1.  Block b >= 1: gread [0, fsize) of fd into a
 * buffer of its own per call, at least CT_RACE_MIN_READS times, until two
 * reads started after *done was 1 (the last two reads wait for it, up to
 * CT_RACE_TIMEOUT_NS).  Read k of reader q = b - 1 (index q * MAX + k):
 * counts[] its count, late[] 1 if it started after gftruncate returned;
 * nreads[q] the reads it made. */
static __global__ void ct_race(int fd, uint64_t fsize, int64_t cut, uint8_t *bufs, int64_t *counts, int *late,
                               int *nreads, int *done, int64_t *tr)
{
  cuda::atomic_ref<int, cuda::thread_scope_device> flag(*done);
  if (blockIdx.x == 0) {
    if (threadIdx.x == 0) {
      const uint64_t t0 = ct_now();
      while (ct_now() - t0 < CT_RACE_DELAY_NS) {
      }
    }
    __syncthreads();
    int v = gftruncate(fd, cut);
    if (threadIdx.x == 0) {
      *tr = v;
      /* release: gftruncate's thread 0 set the file's size; pairs with the
       * readers' acquire below */
      flag.store(1, cuda::memory_order_release);
    }
    return;
  }
  __shared__ int s_late;
  const int q = (int)blockIdx.x - 1;
  const uint64_t t0 = ct_now();
  int made = 0, nlate = 0;
  for (int k = 0; k < CT_RACE_MAX_READS; k++) {
    if (threadIdx.x == 0) {
      int d = flag.load(cuda::memory_order_acquire);
      while (!d && k >= CT_RACE_MAX_READS - 2 && ct_now() - t0 < CT_RACE_TIMEOUT_NS) {
        __nanosleep(1000);
        d = flag.load(cuda::memory_order_acquire);
      }
      s_late = d;
    }
    __syncthreads();
    const int lt = s_late;
    __syncthreads();
    const int idx = q * CT_RACE_MAX_READS + k;
    ssize_t c = gread(fd, 0, fsize, bufs + (uint64_t)idx * fsize);
    if (threadIdx.x == 0) {
      counts[idx] = c;
      late[idx] = lt;
    }
    made = k + 1;
    nlate += lt;
    if (made >= CT_RACE_MIN_READS && nlate >= 2) break;
  }
  if (threadIdx.x == 0) nreads[q] = made;
}

class ContractTest : public ::testing::Test {
protected:
  tdir dir;
  bool started = false;
  std::string name[CT_NAMES];
  std::unique_ptr<wt_src> src;
  std::unique_ptr<wt_dmem<char>> dpaths;
  std::unique_ptr<wt_dmem<uint8_t>> out;
  std::unique_ptr<wt_dmem<int>> fds;
  std::unique_ptr<wt_dmem<void *>> maps;

  void SetUp() override
  {
    REQUIRE_GPU();
    struct gpufs_config c = small_config(CT_PAGE, 256ull * CT_PAGE);
    c.alloc_timeout_ms = 10000;
    c.readahead_max = 0; /* a gread caches only the pages it reads */
    ASSERT_EQ(0, gpufs_start(&c)) << gpufs_error_detail();
    started = true;
    src.reset(new wt_src(CT_SRC_BYTES, CT_GPU_SEED));
    dpaths.reset(new wt_dmem<char>(CT_NAMES * CT_PATH_BYTES));
    out.reset(new wt_dmem<uint8_t>(CT_OUT_BYTES));
    fds.reset(new wt_dmem<int>(CT_SLOTS, 0xff));
    maps.reset(new wt_dmem<void *>(CT_SLOTS));
  }
  void TearDown() override
  {
    if (started) EXPECT_EQ(0, gpufs_stop()) << gpufs_error_detail();
  }
  /* DIR/x of `size` bytes of the file seed's pattern; name 1 is DIR
   * followed by alias ("//x", "/./x"). */
  void make(uint64_t size, const char *alias)
  {
    name[0] = dir.make("x", size, CT_FILE_SEED);
    name[1] = dir.path + alias;
    for (int i = 0; i < CT_NAMES; i++) {
      ASSERT_LT(name[i].size(), (size_t)CT_PATH_BYTES);
      ASSERT_EQ(cudaSuccess, cudaMemcpy(dpaths->p + i * CT_PATH_BYTES, name[i].c_str(), name[i].size() + 1,
                                        cudaMemcpyHostToDevice));
    }
  }
  /* Run the steps in one block; every result is checked against its want. */
  void run(const std::vector<ct_step> &steps)
  {
    const int n = (int)steps.size();
    std::vector<ct_op> ops;
    for (auto &s : steps) ops.push_back(s.op);
    wt_dmem<ct_op> dops(n);
    wt_dmem<int64_t> r(n, 0x7f);
    ASSERT_EQ(cudaSuccess, cudaMemcpy(dops.p, ops.data(), n * sizeof(ct_op), cudaMemcpyHostToDevice));
    ct_bufs b = {dpaths->p, src->p, out->p, fds->p, maps->p};
    out->set(0xa5);
    ct_script<<<1, CT_THREADS>>>(dops.p, n, b, r.p);
    ASSERT_EQ(cudaSuccess, wt_sync());
    std::vector<int64_t> h = r.get();
    for (int i = 0; i < n; i++) {
      if (steps[i].want == CT_FD)
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
};

/* ---- 1: the CPU truncates a file the GPU has open ---- */

/* Proves: the size is the GPU's from the open on (4 pages), a cached page
 * is served as it is (page 0: its old bytes, though the CPU rewrote them),
 * a page not cached reads what the host holds now and zeros for the bytes
 * it lost (page 1: the CPU's first half, then zeros; pages 2-3: zeros);
 * a new gopen with no name open sees the host's size and bytes, page 0
 * included.  Checks "File size as the GPU sees it": "The file's size is
 * sampled by a gopen that finds no name of the file open ... Bytes below it
 * that the host file does not hold (it was shrunk by someone else after
 * the open ...) read as zeros, unless the page is cached: a cached page is
 * served as it is until the file is next opened with no name of it open";
 * and gfstat's "st_size is the larger of the host's size and the
 * descriptor's size as the GPU sees it".  The CPU rewrites [0, 1.5 pages)
 * before it truncates, so that page 0's cached bytes differ from the
 * host's; the size changes, so no sleep is needed. */
TEST_F(ContractTest, HostTruncateWhileOpen)
{
  const uint64_t P = CT_PAGE, S = 4 * P, L = P + P / 2;
  make(S, "//x");
  if (HasFatalFailure()) return;
  const std::vector<uint8_t> old = wt_pattern(S, CT_FILE_SEED);
  run({{ct_open(0, 0, GPUFS_O_RDONLY), CT_FD, "gopen DIR/x O_RDONLY"},
       {ct_read(0, 0, P, 0), (int64_t)P, "gread page 0: now cached"}});
  EXPECT_TRUE(read_is(0, std::vector<uint8_t>(old.begin(), old.begin() + P))) << "page 0";
  std::vector<uint8_t> host = old;
  wt_put(host, 0, L, CT_CPU_SEED);
  ASSERT_TRUE(wt_host_pwrite(name[0], host, 0, L)) << strerror(errno);
  ASSERT_EQ(0, truncate(name[0].c_str(), (off_t)L)) << strerror(errno);
  host.resize(L);
  std::vector<uint8_t> seen(S, 0); /* what the open descriptor reads */
  std::copy(old.begin(), old.begin() + P, seen.begin());
  std::copy(host.begin() + P, host.end(), seen.begin() + P);
  run({{ct_read(0, 0, S + P, 0), (int64_t)S, "gread of the open descriptor: the size at open"},
       {ct_fstat(0), (int64_t)S, "gfstat: the larger of the host's and the GPU's size"},
       {ct_close(0), 0, "gclose"}});
  EXPECT_TRUE(read_is(0, seen)) << "page 0 cached (old bytes), page 1 the host's then zeros, pages 2-3 zeros";
  run({{ct_open(1, 0, GPUFS_O_RDONLY), CT_FD, "gopen again, no name open"},
       {ct_fstat(1), (int64_t)L, "gfstat after the reopen: the host's size"},
       {ct_read(1, 0, S, 0), (int64_t)L, "gread after the reopen: the host's size"},
       {ct_close(1), 0, "gclose"}});
  EXPECT_TRUE(read_is(0, host)) << "after the reopen: the host's bytes, page 0 included (no stale page)";
  EXPECT_TRUE(wt_file_is(name[0], host)) << "the GPU changed nothing";
}

/* ---- 2: the CPU writes a file the GPU has open ---- */

/* Proves: a same-size CPU write to a page the GPU caches is not seen by
 * the open descriptor, nor by another name of the file opened while the
 * first is open (it shares the open file's view); a gopen after every name
 * is closed reads the CPU's bytes.  Checks gopen's "Differences to POSIX":
 * "a gopen that finds no name of the file open on the instance sees the
 * host file as it is; one that finds it open shares the open file's view
 * (its size and cached pages ...) until every name of it is closed", and
 * the timestamp rule ("a change that keeps the size, made within the file
 * system's timestamp granularity ... can go unseen; ... wait a few ms"):
 * the test sleeps 20 ms before the CPU write. */
TEST_F(ContractTest, HostWriteWhileOpenSeenAfterReopen)
{
  const uint64_t P = CT_PAGE, S = 4 * P;
  make(S, "/./x");
  if (HasFatalFailure()) return;
  const std::vector<uint8_t> old = wt_pattern(S, CT_FILE_SEED);
  run({{ct_open(0, 0, GPUFS_O_RDONLY), CT_FD, "gopen DIR/x O_RDONLY"},
       {ct_read(0, 0, P, 0), (int64_t)P, "gread page 0: now cached"}});
  EXPECT_TRUE(read_is(0, std::vector<uint8_t>(old.begin(), old.begin() + P))) << "page 0";
  usleep(20000);
  std::vector<uint8_t> host = old;
  wt_put(host, 0, P, CT_CPU_SEED);
  ASSERT_TRUE(wt_host_pwrite(name[0], host, 0, P)) << strerror(errno);
  run({{ct_read(0, 0, S, 0), (int64_t)S, "gread of the open descriptor"},
       {ct_open(1, 1, GPUFS_O_RDONLY), CT_FD, "gopen DIR/./x while DIR/x is open"},
       {ct_read(1, 0, S, S), (int64_t)S, "gread through DIR/./x"},
       {ct_close(1), 0, "gclose DIR/./x"},
       {ct_close(0), 0, "gclose DIR/x, the last name"}});
  EXPECT_TRUE(read_is(0, old)) << "the open descriptor: page 0 cached, the old bytes";
  EXPECT_TRUE(read_is(S, old)) << "the name opened beside it shares the view: the old bytes";
  run({{ct_open(2, 0, GPUFS_O_RDONLY), CT_FD, "gopen again, no name open"},
       {ct_read(2, 0, S + P, 0), (int64_t)S, "gread after the reopen"},
       {ct_close(2), 0, "gclose"}});
  EXPECT_TRUE(read_is(0, host)) << "after every name was closed, a new gopen reads the CPU's bytes";
  EXPECT_TRUE(wt_file_is(name[0], host)) << "the GPU changed nothing";
}

/* ---- 3: gmsync(MS_SYNC) writes every dirty page of the file ---- */

/* Proves: gmsync(MS_SYNC) of a writable mapping made through DIR//x writes
 * back, before it returns and without gfsync or gclose, both the mapped
 * range and the pages gwritten through DIR/x; gmunmap and the gcloses then
 * leave the file as the model says.  Checks gmsync's "with MS_SYNC the
 * file's dirty pages are then written back (all of them, through any name;
 * no fsync)" (contract rule 5) and "One file, one identity". */
TEST_F(ContractTest, MsyncSyncWritesEveryDirtyPageOfTheFile)
{
  const uint64_t P = CT_PAGE, S = 3 * P + 500, MO = P + 2 * GPUFS_DIRTY_GRAIN, ML = 1024;
  make(S, "//x");
  if (HasFatalFailure()) return;
  std::vector<uint8_t> m = wt_pattern(S, CT_FILE_SEED);
  wt_put(m, 0, P, CT_GPU_SEED);
  wt_put(m, 2 * P + 100, 300, CT_GPU_SEED);
  wt_put(m, MO, ML, CT_GPU_SEED);
  run({{ct_open(0, 0, GPUFS_O_RDWR), CT_FD, "gopen DIR/x O_RDWR"},
       {ct_open(1, 1, GPUFS_O_RDWR), CT_FD, "gopen DIR//x O_RDWR"},
       {ct_write(0, 0, P), (int64_t)P, "gwrite page 0 through DIR/x"},
       {ct_write(0, 2 * P + 100, 300), 300, "gwrite into page 2 through DIR/x"},
       {ct_map(1, (int64_t)MO, ML), 0, "gmmap PROT_WRITE MAP_SHARED of page 1 through DIR//x, stores"},
       {ct_msync(1, ML), 0, "gmsync(MS_SYNC)"}});
  EXPECT_TRUE(wt_file_is(name[0], m)) << "right after gmsync(MS_SYNC), both open: DIR/x's pages and the stores";
  run({{ct_read(0, 0, S + P, 0), (int64_t)S, "gread through DIR/x"},
       {ct_unmap(1, ML), 0, "gmunmap"},
       {ct_close(1), 0, "gclose DIR//x"},
       {ct_close(0), 0, "gclose DIR/x"}});
  EXPECT_TRUE(read_is(0, m)) << "DIR/x reads the stores made through DIR//x";
  EXPECT_TRUE(wt_file_is(name[0], m)) << "after gmunmap and both gcloses";
}

/* ---- 4: gftruncate racing with greads ---- */

/* Proves: greads that race with a gftruncate through the same descriptor
 * return the old size or the new one, nothing else; bytes below the cut
 * are always the file's; bytes past it, in a read that used the old size,
 * are the file's or zeros, never anything else; a read that starts after
 * gftruncate returned gets the new size; after gclose the host file is
 * exactly the bytes below the cut.  Checks gftruncate's "The size of every
 * descriptor of the file becomes length ... Other calls that race with it
 * may use the old or the new size and version" and contract rule 1's
 * "bytes past len never come back ..., bytes below len survive". */
TEST_F(ContractTest, TruncateRacingReads)
{
  const uint64_t P = CT_PAGE, S = 16 * P, L = 5 * P + 100;
  make(S, "//x");
  if (HasFatalFailure()) return;
  const std::vector<uint8_t> pat = wt_pattern(S, CT_FILE_SEED);
  int fd = wt_gopen_h(name[0], GPUFS_O_RDWR);
  ASSERT_GE(fd, 0) << "gopen O_RDWR" << wt_err(fd);
  const int nr = CT_RACE_READERS * CT_RACE_MAX_READS;
  wt_dmem<uint8_t> bufs((uint64_t)nr * S, 0xa5);
  wt_dmem<int64_t> counts(nr, 0x7f);
  wt_dmem<int> late(nr), nreads(CT_RACE_READERS), done(1);
  wt_dmem<int64_t> tr(1, 0x7f);
  ASSERT_TRUE(bufs.p && counts.p && late.p && nreads.p && done.p && tr.p);
  ct_race<<<1 + CT_RACE_READERS, CT_THREADS>>>(fd, S, (int64_t)L, bufs.p, counts.p, late.p, nreads.p, done.p,
                                                tr.p);
  ASSERT_EQ(cudaSuccess, wt_sync());
  EXPECT_EQ(0, tr.get()[0]) << "gftruncate" << wt_err(tr.get()[0]);
  const std::vector<uint8_t> all = bufs.get();
  const std::vector<int64_t> c = counts.get();
  const std::vector<int> lt = late.get(), made = nreads.get();
  uint64_t odd_counts = 0, late_old = 0, nlate = 0, old_size = 0, below = 0, past = 0;
  for (int q = 0; q < CT_RACE_READERS; q++) {
    EXPECT_GE(made[q], CT_RACE_MIN_READS) << "reader " << q;
    for (int k = 0; k < made[q] && k < CT_RACE_MAX_READS; k++) {
      const int i = q * CT_RACE_MAX_READS + k;
      if (c[i] != (int64_t)S && c[i] != (int64_t)L) {
        ADD_FAILURE() << "reader " << q << ", read " << k << ": count " << c[i] << wt_err(c[i]);
        odd_counts++;
        continue;
      }
      old_size += c[i] == (int64_t)S;
      nlate += lt[i] != 0;
      late_old += lt[i] && c[i] != (int64_t)L;
      const uint8_t *g = all.data() + (uint64_t)i * S;
      for (uint64_t o = 0; o < L; o++) below += g[o] != pat[o];
      for (uint64_t o = L; o < (uint64_t)c[i]; o++) past += g[o] != pat[o] && g[o] != 0;
    }
  }
  RecordProperty("reads_old_size", (int)old_size);
  RecordProperty("reads_after_truncate", (int)nlate);
  EXPECT_EQ(0u, odd_counts) << "every count is " << S << " or " << L;
  EXPECT_EQ(0u, below) << "bytes below the cut that are not the file's";
  EXPECT_EQ(0u, past) << "bytes past the cut (old-size reads) neither the file's nor zero";
  EXPECT_GE(nlate, 1u) << "reads that started after gftruncate returned";
  EXPECT_EQ(0u, late_old) << "reads started after gftruncate returned that did not get the new size";
  EXPECT_EQ(0, wt_gclose_h(fd)) << "gclose";
  EXPECT_TRUE(wt_file_is(name[0], std::vector<uint8_t>(pat.begin(), pat.begin() + L)))
      << "the host file: exactly the bytes below the cut";
}
