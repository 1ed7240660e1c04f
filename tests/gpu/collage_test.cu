/*
 * collage_test.cu - the collage's GPU versions end to end on a small
 * dataset (20k tiles from procedural seeds, in a temp folder): gpufs-block,
 * gpufs-warp and gpufs-gread (with a page cache that holds the dataset, and
 * with one of 16 MiB that does not) and cpu-gpu choose exactly the cpu
 * version's tile for every block of two pictures; the GPU's bad inputs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <string>
#include <vector>

#include "samples/collage/collage.h"
#include "tests/gpu/gpu_util.h"

#define CT_TILES 20000u
#define CT_SEED 0x5eedc011a9eull

/* One picture and the cpu version's choices for it. */
struct ct_pic {
  struct collage_image img;
  std::vector<uint32_t> ref;
  struct collage_stats st;
};

/* What every test shares, made once (only where there is a GPU). */
struct ct_data {
  bool made = false;
  std::string dir, path;
  struct collage_seeds seeds;
  struct collage_dataset ds;
  struct collage_index ix;     /* L = 32, cap 64 */
  struct collage_gpu_index gix;
  struct ct_pic pic[2];        /* 512x384 input picture, 640x512 of rendered tiles */
};
static struct ct_data *ct;

/* A picture made of dataset tiles: block b shows tile hash(b) % n. */
static int ct_tile_picture(const struct ct_data *d, int w, int h, struct collage_image *out)
{
  int rc = collage_image_alloc(out, w, h);
  const int bw = w / 32;
  for (int b = 0; rc == 0 && b < bw * (h / 32); b++) {
    struct collage_tile t;
    uint8_t px[COLLAGE_PIXELS * 3];
    collage_tile_params(&d->seeds, d->ds.hdr.seed, collage_hash2(7, b) % d->ds.n, &t);
    rc = collage_tile_render(&d->seeds, &t, px);
    for (int y = 0; rc == 0 && y < 32; y++)
      memcpy(out->rgb + ((size_t)((b / bw) * 32 + y) * w + (b % bw) * 32) * 3, px + y * 96, 96);
  }
  return rc;
}

class CollageGpu : public ::testing::Test {
protected:
  static void SetUpTestSuite()
  {
    if (!gpu_present())
      return;
    ct = new ct_data();
    char tmpl[] = "/tmp/gpufs_collage_XXXXXX";
    ASSERT_NE(nullptr, mkdtemp(tmpl));
    ct->dir = tmpl;
    ct->path = ct->dir + "/tiles.ds";
    char err[512] = "";
    ASSERT_EQ(0, collage_seeds_procedural(8, &ct->seeds));
    ASSERT_EQ(0, collage_dataset_build(ct->path.c_str(), &ct->seeds, CT_TILES, CT_SEED, 0, NULL));
    ASSERT_EQ(0, collage_dataset_open(ct->path.c_str(), 64, &ct->ds, err, sizeof(err))) << err;
    ASSERT_EQ(0, collage_index_build(&ct->ds, 32, collage_default_k(CT_TILES), 64, 11, 0, &ct->ix, NULL));
    ASSERT_EQ(0, collage_gpu_index_upload(&ct->ix, &ct->gix));
    ASSERT_EQ(0, collage_input_picture(&ct->seeds, 0, 512, 384, &ct->pic[0].img));
    ASSERT_EQ(0, ct_tile_picture(ct, 640, 512, &ct->pic[1].img)); /* 320 blocks: more than the grid */
    for (struct ct_pic &p : ct->pic) {
      p.ref.assign(collage_blocks(&p.img), 0);
      ASSERT_EQ(0, collage_cpu_run(&ct->ds, &ct->ix, &p.img, 0, p.ref.data(), &p.st));
    }
    ct->made = true;
  }

  static void TearDownTestSuite()
  {
    if (!ct)
      return;
    collage_gpu_index_free(&ct->gix);
    collage_index_free(&ct->ix);
    collage_dataset_close(&ct->ds);
    collage_seeds_free(&ct->seeds);
    for (struct ct_pic &p : ct->pic)
      collage_image_free(&p.img);
    unlink(ct->path.c_str());
    rmdir(ct->dir.c_str());
    delete ct;
    ct = nullptr;
  }

  void SetUp() override
  {
    REQUIRE_GPU();
    ASSERT_TRUE(ct && ct->made) << "the shared dataset could not be made";
  }

  /* libgpufs with 4 KiB pages and `cache` bytes (rings as main.cu picks). */
  static int start(uint64_t cache)
  {
    struct gpufs_config c;
    gpufs_config_default(&c);
    c.page_size = 4096;
    c.cache_size = cache;
    if (cache / 4096 / 256 < c.nrings)
      c.nrings = (uint32_t)(cache / 4096 / 256);
    c.daemon_threads = 4;
    return gpufs_start(&c);
  }

  /* Version v's choices equal the cpu version's for every block of picture p. */
  static void expect_same(const char *what, const struct ct_pic &p, const std::vector<uint32_t> &got,
                          const struct collage_stats &st)
  {
    size_t diff = 0;
    for (size_t b = 0; b < p.ref.size(); b++)
      if (got[b] != p.ref[b] && diff++ < 5)
        ADD_FAILURE() << what << ": block " << b << ": tile " << got[b] << ", the cpu version's " << p.ref[b];
    EXPECT_EQ(0u, diff) << what << ": blocks that differ of " << p.ref.size();
    EXPECT_EQ(p.ref.size(), st.blocks) << what;
    EXPECT_EQ(p.st.candidates, st.candidates) << what;
    EXPECT_EQ(p.st.empty, st.empty) << what;
    EXPECT_GT(st.seconds, 0.0) << what;
    fprintf(stderr, "  %-12s %4dx%-4d %8.2f ms, %llu candidates\n", what, p.img.w, p.img.h, st.seconds * 1e3,
            (unsigned long long)st.candidates);
  }

  /* Every gpufs version on both pictures in one instance of `cache` bytes. */
  static void gpufs_versions(uint64_t cache, bool expect_evictions)
  {
    for (int v = COLLAGE_GPUFS_BLOCK; v <= COLLAGE_GPUFS_GREAD; v++) {
      const enum collage_version ver = (enum collage_version)v;
      const char *name = collage_version_name(ver);
      ASSERT_EQ(0, start(cache)) << gpufs_error_detail();
      for (const struct ct_pic &p : ct->pic) {
        std::vector<uint32_t> got(p.ref.size(), 0xdeadbeefu);
        struct collage_stats st;
        const int rc = collage_gpufs_run(ver, ct->path.c_str(), &ct->gix, &p.img, got.data(), &st);
        EXPECT_EQ(0, rc) << name;
        expect_same(name, p, got, st);
      }
      struct gpufs_stats gs;
      ASSERT_EQ(0, gpufs_get_stats(&gs));
      EXPECT_GT(gs.misses, 0u) << name;
      EXPECT_EQ(0u, gs.errors) << name;
      /* a page is loaded again only after its frame was reused (the
       * rings' clock may reuse frames before the cache is full) */
      EXPECT_LE(gs.misses, ct->ds.n + 1 + gs.evictions) << name;
      if (expect_evictions)
        EXPECT_GT(gs.evictions, 0u) << name << ": the cache should be smaller than what is read";
      EXPECT_EQ(0, gpufs_stop());
    }
  }
};

/* The reference is worth comparing against: the picture made of tiles finds
 * a tile of the same histogram (distance 0) for nearly every block. */
TEST_F(CollageGpu, ReferenceFindsThePlantedTiles)
{
  const struct ct_pic &p = ct->pic[1];
  const int bw = p.img.w / 32;
  size_t exact = 0;
  for (size_t b = 0; b < p.ref.size(); b++) {
    ASSERT_NE(COLLAGE_NONE, p.ref[b]) << "block " << b;
    const uint64_t planted = collage_hash2(7, b) % ct->ds.n;
    exact += collage_dist(collage_dataset_record(&ct->ds, p.ref[b])->hist,
                          collage_dataset_record(&ct->ds, planted)->hist) == 0;
  }
  EXPECT_GE(exact, p.ref.size() * 9 / 10) << "of " << p.ref.size() << " blocks (" << bw << " a row)";
  EXPECT_GT(ct->pic[0].st.candidates, ct->pic[0].ref.size()) << "shortlists of more than one tile";
}

TEST_F(CollageGpu, GpufsVersionsWithTheDatasetCached) { gpufs_versions(256ull << 20, false); }

/* 16 MiB of cache under an 80 MB dataset: pages are evicted, choices equal. */
TEST_F(CollageGpu, GpufsVersionsWithASmallCache)
{
  ASSERT_GT(ct->ds.bytes, 4 * (16ull << 20));
  gpufs_versions(16ull << 20, true);
}

TEST_F(CollageGpu, CpuGpuVersion)
{
  for (const struct ct_pic &p : ct->pic) {
    std::vector<uint32_t> got(p.ref.size(), 0xdeadbeefu);
    struct collage_stats st;
    EXPECT_EQ(0, collage_cpugpu_run(&ct->ds, &ct->ix, &ct->gix, &p.img, 2, got.data(), &st));
    expect_same("cpu-gpu", p, got, st);
    EXPECT_GT(st.io_s, 0.0);
    EXPECT_GT(st.dist_s, 0.0);
    EXPECT_GT(st.shortlist_s, 0.0);
  }
}

/* L * cap = 4096, the most the GPU takes: the sort of 16 keys a thread. */
TEST_F(CollageGpu, LargestShortlist)
{
  struct collage_index ix;
  struct collage_gpu_index gix;
  ASSERT_EQ(0, collage_index_build(&ct->ds, 32, collage_default_k(CT_TILES) - 2, 128, 12, 0, &ix, NULL));
  ASSERT_EQ(0, collage_gpu_index_upload(&ix, &gix));
  const struct ct_pic &p = ct->pic[0];
  std::vector<uint32_t> ref(p.ref.size()), got(p.ref.size());
  struct collage_stats rst, st;
  ASSERT_EQ(0, collage_cpu_run(&ct->ds, &ix, &p.img, 0, ref.data(), &rst));
  EXPECT_GT(rst.candidates, 64 * p.ref.size()) << "shortlists longer than 2048 / 32";
  struct ct_pic q = p;
  q.ref = ref;
  q.st = rst;
  ASSERT_EQ(0, start(256ull << 20));
  for (int v = COLLAGE_GPUFS_BLOCK; v <= COLLAGE_GPUFS_GREAD; v++) {
    std::fill(got.begin(), got.end(), 0xdeadbeefu);
    EXPECT_EQ(0, collage_gpufs_run((enum collage_version)v, ct->path.c_str(), &gix, &p.img, got.data(), &st));
    expect_same(collage_version_name((enum collage_version)v), q, got, st);
  }
  EXPECT_EQ(0, gpufs_stop());
  std::fill(got.begin(), got.end(), 0xdeadbeefu);
  EXPECT_EQ(0, collage_cpugpu_run(&ct->ds, &ix, &gix, &p.img, 2, got.data(), &st));
  expect_same("cpu-gpu", q, got, st);
  collage_gpu_index_free(&gix);
  collage_index_free(&ix);
}

/* A picture of 8 blocks (fewer than the grid's threadblocks), every GPU
 * version (small enough for compute-sanitizer). */
TEST_F(CollageGpu, SmallPictureEveryVersion)
{
  struct ct_pic q;
  const struct collage_image &big = ct->pic[0].img;
  ASSERT_EQ(0, collage_image_alloc(&q.img, 128, 64));
  for (int y = 0; y < 64; y++)
    memcpy(q.img.rgb + (size_t)y * 128 * 3, big.rgb + ((size_t)(y + 96) * big.w + 192) * 3, 128 * 3);
  q.ref.assign(8, 0);
  ASSERT_EQ(0, collage_cpu_run(&ct->ds, &ct->ix, &q.img, 2, q.ref.data(), &q.st));
  std::vector<uint32_t> got(8);
  struct collage_stats st;
  ASSERT_EQ(0, start(64ull << 20));
  for (int v = COLLAGE_GPUFS_BLOCK; v <= COLLAGE_GPUFS_GREAD; v++) {
    std::fill(got.begin(), got.end(), 0xdeadbeefu);
    EXPECT_EQ(0, collage_gpufs_run((enum collage_version)v, ct->path.c_str(), &ct->gix, &q.img, got.data(), &st));
    expect_same(collage_version_name((enum collage_version)v), q, got, st);
  }
  EXPECT_EQ(0, gpufs_stop());
  std::fill(got.begin(), got.end(), 0xdeadbeefu);
  EXPECT_EQ(0, collage_cpugpu_run(&ct->ds, &ct->ix, &ct->gix, &q.img, 2, got.data(), &st));
  expect_same("cpu-gpu", q, got, st);
  collage_image_free(&q.img);
}

/* A dataset path that does not exist: gopen's -ENOENT, from every version. */
TEST_F(CollageGpu, MissingDatasetIsENOENT)
{
  const std::string missing = ct->dir + "/no-such.ds";
  const struct ct_pic &p = ct->pic[0];
  std::vector<uint32_t> got(p.ref.size());
  struct collage_stats st;
  ASSERT_EQ(0, start(64ull << 20));
  for (int v = COLLAGE_GPUFS_BLOCK; v <= COLLAGE_GPUFS_GREAD; v++) {
    const enum collage_version ver = (enum collage_version)v;
    EXPECT_EQ(-ENOENT, collage_gpufs_run(ver, missing.c_str(), &ct->gix, &p.img, got.data(), &st))
        << collage_version_name(ver);
  }
  /* and the instance still works afterwards */
  EXPECT_EQ(0, collage_gpufs_run(COLLAGE_GPUFS_WARP, ct->path.c_str(), &ct->gix, &p.img, got.data(), &st));
  EXPECT_EQ(p.ref, got);
  EXPECT_EQ(0, gpufs_stop());
}

TEST_F(CollageGpu, ShortlistTooLargeForTheGpuIsEINVAL)
{
  struct collage_index big = ct->ix; /* shares the arrays: only the header differs */
  big.hdr.cap = COLLAGE_GPU_MAX_SHORTLIST / big.hdr.L + 1;
  struct collage_gpu_index gix;
  EXPECT_EQ(-EINVAL, collage_gpu_index_upload(&big, &gix));
  EXPECT_EQ(nullptr, gix.ids);
}

TEST_F(CollageGpu, BadArgumentsAreEINVAL)
{
  const struct ct_pic &p = ct->pic[0];
  std::vector<uint32_t> got(p.ref.size());
  struct collage_stats st;
  EXPECT_EQ(-EINVAL, collage_gpufs_run(COLLAGE_CPU, ct->path.c_str(), &ct->gix, &p.img, got.data(), &st));
  struct collage_image tiny = {16, 16, p.img.rgb}; /* no whole block */
  EXPECT_EQ(-EINVAL, collage_gpufs_run(COLLAGE_GPUFS_WARP, ct->path.c_str(), &ct->gix, &tiny, got.data(), &st));
  EXPECT_EQ(-EINVAL, collage_cpugpu_run(&ct->ds, &ct->ix, &ct->gix, &tiny, 2, got.data(), &st));
  struct collage_gpu_index other = ct->gix;
  other.K += 1; /* an index on the GPU that is not the host's */
  EXPECT_EQ(-EINVAL, collage_cpugpu_run(&ct->ds, &ct->ix, &other, &p.img, 2, got.data(), &st));
}
