/*
 * collage_data_test.cpp - the data side of the collage: the dataset
 * (dataset.c); pictures and seeds are in collage_image_test.cpp.  Tile parameters in range and
 * deterministic, tiles rendered by the documented rule (hand-made seeds),
 * records equal to golden hashes (a changed generator is noticed),
 * histograms of hand-made tiles, PNG round trips, JPEGs written here with
 * libjpeg, resize and crop, the dataset built, opened and every record
 * checked, the collage render, and every bad input with its documented
 * error: missing, empty, foreign, other version, bad header, truncated,
 * corrupt record, unreadable and empty pictures, a seed folder without
 * pictures.
 */
#include <gtest/gtest.h>

#include "tests/host/collage_util.h"

using namespace collage_test;

/* ---------------- tiles and records ---------------- */

TEST_F(CollageData, TileParamsAreDeterministicAndInRange)
{
  std::set<uint32_t> seen_seed, seen_flip;
  int small = 0, large = 0;
  for (uint64_t i = 0; i < 4000; i++) {
    collage_tile a, b;
    collage_tile_params(&seeds, kSeed, i, &a);
    collage_tile_params(&seeds, kSeed, i, &b);
    ASSERT_EQ(0, memcmp(&a, &b, sizeof(a)));
    ASSERT_LT(a.seed, (uint32_t)seeds.n);
    const collage_image &im = seeds.img[a.seed];
    ASSERT_GE(a.size, 32);
    ASSERT_LE(a.size, std::min(im.w, im.h) / 2);
    ASSERT_LE(a.x + a.size, im.w);
    ASSERT_LE(a.y + a.size, im.h);
    ASSERT_LE(a.flip, 3);
    ASSERT_EQ(0, a.pad);
    for (int c = 0; c < 3; c++) {
      ASSERT_GE(a.gain[c], 192);
      ASSERT_LE(a.gain[c], 320);
      ASSERT_GE(a.offset[c], -32);
      ASSERT_LE(a.offset[c], 32);
    }
    seen_seed.insert(a.seed);
    seen_flip.insert(a.flip);
    small += a.size < 64;
    large += a.size >= 256;
  }
  EXPECT_EQ(4u, seen_seed.size());
  EXPECT_EQ(4u, seen_flip.size());
  EXPECT_GT(small, 600); /* log-uniform over 32..384: about 28 % below 64 */
  EXPECT_GT(large, 400); /* and about 16 % from 256 */
  collage_tile other;
  collage_tile_params(&seeds, kSeed + 1, 0, &other);
  collage_tile first;
  collage_tile_params(&seeds, kSeed, 0, &first);
  EXPECT_NE(0, memcmp(&first, &other, sizeof(first))) << "another stream gives other tiles";
}

TEST(CollageTile, RenderFollowsTheRuleOnAHandMadeSeed)
{
  collage_seeds s = OneSeed(Picture(100, 80, [](int x, int y, int c) { return c == 0 ? x : c == 1 ? y : x ^ y; }));
  collage_tile t;
  memset(&t, 0, sizeof(t));
  t.x = 10, t.y = 20, t.size = 32;
  for (int c = 0; c < 3; c++)
    t.gain[c] = 256, t.offset[c] = 0;
  uint8_t px[COLLAGE_PIXELS * 3], again[COLLAGE_PIXELS * 3];
  for (int flip = 0; flip < 4; flip++) { /* size 32: the crop itself, mirrored */
    t.flip = (uint8_t)flip;
    ASSERT_EQ(0, collage_tile_render(&s, &t, px));
    ASSERT_EQ(0, collage_tile_render(&s, &t, again));
    ASSERT_EQ(0, memcmp(px, again, sizeof(px)));
    for (int y = 0; y < 32; y++)
      for (int x = 0; x < 32; x++) {
        const int sx = 10 + ((flip & 1) ? 31 - x : x), sy = 20 + ((flip & 2) ? 31 - y : y);
        const uint8_t *p = px + (y * 32 + x) * 3;
        ASSERT_EQ(sx, p[0]);
        ASSERT_EQ(sy, p[1]);
        ASSERT_EQ(sx ^ sy, p[2]);
      }
  }
  t.flip = 0, t.size = 64, t.x = 0, t.y = 0; /* size 64: the mean of each 2 x 2 */
  ASSERT_EQ(0, collage_tile_render(&s, &t, px));
  for (int y = 0; y < 32; y++)
    for (int x = 0; x < 32; x++) {
      ASSERT_EQ(2 * x + 1, px[(y * 32 + x) * 3]) << "(2x + 2x + 1) * 2 / 4, rounded";
      ASSERT_EQ(2 * y + 1, px[(y * 32 + x) * 3 + 1]);
    }
  t.size = 32, t.gain[0] = 512, t.offset[0] = -10, t.gain[1] = 192, t.offset[1] = 30; /* jitter, clamped */
  t.x = 60, t.y = 40;
  ASSERT_EQ(0, collage_tile_render(&s, &t, px));
  for (int x = 0; x < 32; x++) {
    EXPECT_EQ(std::min(255, 2 * (60 + x) - 10), px[x * 3]);
    EXPECT_EQ(std::min(255, 40 * 192 / 256 + 30), px[x * 3 + 1]);
  }
  collage_tile bad = t; /* a tile that does not fit its seed, or names none */
  bad.x = 69;
  EXPECT_EQ(-EINVAL, collage_tile_render(&s, &bad, px));
  bad = t, bad.seed = 1;
  EXPECT_EQ(-EINVAL, collage_tile_render(&s, &bad, px));
  bad = t, bad.size = 0;
  EXPECT_EQ(-EINVAL, collage_tile_render(&s, &bad, px));
  collage_seeds_free(&s);
}

TEST_F(CollageData, RecordsAreCompleteAndEqualTheirGoldenHashes)
{
  collage_record r, again;
  uint8_t px[COLLAGE_PIXELS * 3];
  uint32_t hist[COLLAGE_HIST];
  for (uint64_t i : {0ull, 1ull, 2999ull, 123456789ull}) {
    ASSERT_EQ(0, collage_record_make(&seeds, kSeed, i, &r));
    ASSERT_EQ(0, collage_record_make(&seeds, kSeed, i, &again));
    ASSERT_EQ(0, memcmp(&r, &again, sizeof(r)));
    EXPECT_EQ(i, r.index);
    EXPECT_EQ(collage_record_check(&r), r.check);
    for (uint8_t b : r.pad)
      ASSERT_EQ(0, b);
    ASSERT_EQ(0, collage_tile_render(&seeds, &r.tile, px)); /* the histogram is the tile's */
    collage_histogram(px, 32, 32, 32 * 3, hist);
    ASSERT_EQ(0, memcmp(hist, r.hist, sizeof(hist)));
    r.hist[7] ^= 1;
    EXPECT_NE(collage_record_check(&r), r.check);
  }
  /* Golden values: the procedural seeds and three records of stream 1234.
   * A change here means datasets built before no longer match: bump
   * COLLAGE_DATASET_VERSION. */
  EXPECT_EQ(0x36b9241769ac9036ull, seeds.id);
  uint64_t h = 0;
  for (uint64_t i : {0ull, 1ull, 2999ull}) {
    ASSERT_EQ(0, collage_record_make(&seeds, kSeed, i, &r));
    h = collage_hash2(h, HashBytes(&r, sizeof(r)));
  }
  EXPECT_EQ(0x2aaa06db301389bdull, h);
}

TEST(CollageHistogram, CountsHandMadeTiles)
{
  uint32_t hist[COLLAGE_HIST];
  collage_image solid = Picture(32, 32, [](int, int, int c) { return 10 + c * 100; });
  collage_histogram(solid.rgb, 32, 32, 32 * 3, hist);
  for (unsigned c = 0; c < 3; c++)
    for (unsigned v = 0; v < 256; v++)
      ASSERT_EQ(v == 10 + c * 100 ? 1024u : 0u, hist[c * 256 + v]);
  collage_image halves = Picture(32, 32, [](int x, int, int c) { return x < 16 ? 0 : 255 - c; });
  collage_histogram(halves.rgb, 32, 32, 32 * 3, hist);
  for (unsigned c = 0; c < 3; c++)
    for (unsigned v = 0; v < 256; v++)
      ASSERT_EQ(v == 0 || v == 255 - c ? 512u : 0u, hist[c * 256 + v]);
  collage_image grad = Picture(32, 32, [](int x, int y, int c) { return c == 0 ? x * 8 : c == 1 ? y : x + y; });
  collage_histogram(grad.rgb, 32, 32, 32 * 3, hist);
  for (unsigned v = 0; v < 256; v++) {
    ASSERT_EQ(v % 8 == 0 ? 32u : 0u, hist[v]);
    ASSERT_EQ(v < 32 ? 32u : 0u, hist[256 + v]);
    ASSERT_EQ(v < 63 ? 32u - (uint32_t)std::abs((int)v - 31) : 0u, hist[512 + v]); /* x + y = v: 32 - |v - 31| ways */
  }
  /* a block inside a larger picture (rows `stride` apart) */
  collage_image big = Picture(96, 64, [](int x, int y, int) { return (x >= 32 && x < 64 && y >= 32) ? 200 : 7; });
  collage_histogram(big.rgb + (32 * 96 + 32) * 3, 32, 32, 96 * 3, hist);
  EXPECT_EQ(1024u, hist[200]);
  EXPECT_EQ(1024u, hist[512 + 200]);
  EXPECT_EQ(0u, hist[7]);
  for (collage_image *im : {&solid, &halves, &grad, &big})
    collage_image_free(im);
}

/* ---------------- pictures ---------------- */

TEST_F(CollageData, BuildThenOpenGivesEveryRecordAndTheHeader)
{
  collage_dataset ds;
  char err[512] = "";
  ASSERT_EQ(0, collage_dataset_open(path.c_str(), kTiles, &ds, err, sizeof(err))) << err;
  EXPECT_EQ(kTiles, ds.n);
  EXPECT_EQ((kTiles + 1) * 4096, ds.bytes);
  EXPECT_EQ(0, memcmp(ds.hdr.magic, COLLAGE_DATASET_MAGIC, 16));
  EXPECT_EQ(COLLAGE_DATASET_VERSION, ds.hdr.version);
  EXPECT_EQ(COLLAGE_RECORD, ds.hdr.record);
  EXPECT_EQ(kSeed, ds.hdr.seed);
  EXPECT_EQ(seeds.id, ds.hdr.seeds_id);
  EXPECT_EQ(4u, ds.hdr.nseeds);
  EXPECT_STREQ("procedural", ds.hdr.seeds_source);
  uint64_t sum = 0;
  collage_record r;
  for (uint64_t i = 0; i < kTiles; i++) {
    ASSERT_EQ(0, collage_record_make(&seeds, kSeed, i, &r));
    ASSERT_EQ(0, memcmp(&r, collage_dataset_record(&ds, i), sizeof(r))) << "record " << i;
    sum += r.check;
  }
  EXPECT_EQ(sum, ds.hdr.records_sum);
  for (size_t i = sizeof(collage_dataset_header); i < COLLAGE_RECORD; i++)
    ASSERT_EQ(0, ds.map[i]) << "the header's page is zero after the header";
  collage_dataset_close(&ds);
  collage_dataset_close(&ds); /* twice is harmless */
  EXPECT_EQ(nullptr, ds.map);
  collage_dataset zero;
  memset(&zero, 0, sizeof(zero));
  collage_dataset_close(&zero);
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  ASSERT_EQ(0, collage_dataset_open(path.c_str(), 7, &ds, err, sizeof(err))) << err; /* a sample */
  collage_dataset_close(&ds);

  /* one thread, with a progress line: the same bytes */
  char *text = nullptr;
  size_t len = 0;
  FILE *log = open_memstream(&text, &len);
  const std::string one = *dir / "one.ds";
  ASSERT_EQ(0, collage_dataset_build(one.c_str(), &seeds, kTiles, kSeed, 1, log));
  fclose(log);
  const std::string said = text;
  free(text);
  EXPECT_NE(std::string::npos, said.find("3000 / 3000 tiles (100%)")) << said;
  EXPECT_EQ('\n', said.back());
  EXPECT_TRUE(ReadAll(one) == ReadAll(path));
  fs::remove(one);
}

TEST_F(CollageData, BadDatasetsAreRefusedWithTheirErrors)
{
  std::string msg;
  collage_dataset ds;
  char err[512] = "";
  EXPECT_EQ(-ENOENT, collage_dataset_open((*dir / "missing.ds").c_str(), 1, &ds, err, sizeof(err)));
  EXPECT_NE(nullptr, strstr(err, "missing.ds")) << err;
  const std::string png = *dir / "picture.png";
  collage_image im = Picture(64, 64, [](int x, int, int) { return x; });
  ASSERT_EQ(0, collage_image_write_png(png.c_str(), &im));
  collage_image_free(&im);
  EXPECT_EQ(-EINVAL, collage_dataset_open(png.c_str(), 1, &ds, err, sizeof(err)));
  EXPECT_NE(nullptr, strstr(err, "not a collage dataset")) << err;
  EXPECT_EQ(nullptr, ds.map);

  const size_t rec = collage_record_offset(1234);
  struct Case {
    const char *what;
    std::function<void(Bytes &)> fix;
    uint64_t sample;
    int rc;
    const char *says;
  } cases[] = {
      {"empty", [](Bytes &b) { b.clear(); }, 1, -EINVAL, "empty"},
      {"random bytes",
       [](Bytes &b) {
         b.resize(8192);
         for (size_t i = 0; i < b.size(); i++)
           b[i] = (uint8_t)collage_hash2(3, i);
       },
       1, -EINVAL, "not a collage dataset"},
      {"other version", [](Bytes &b) { b[offsetof(collage_dataset_header, version)] = 9; }, 1, -EINVAL, "version 9"},
      {"other record size", [](Bytes &b) { b[offsetof(collage_dataset_header, record) + 1] = 2; }, 1, -EINVAL,
       "records of 512 bytes"},
      {"bad header check", [](Bytes &b) { b[offsetof(collage_dataset_header, seeds_source)] ^= 1; }, 1, -EINVAL,
       "header check"},
      {"other tile count", [](Bytes &b) { b[offsetof(collage_dataset_header, n)] ^= 1; }, 1, -EINVAL, "header check"},
      {"truncated", [](Bytes &b) { b.resize(b.size() - 4096); }, 1, -EIO, "truncated: 12288000 bytes, expected 12292096"},
      {"truncated header", [](Bytes &b) { b.resize(1000); }, 1, -EIO, "truncated"},
      {"trailing bytes", [](Bytes &b) { b.push_back(0); }, 1, -EIO, "wrong size"},
      {"corrupt record, all checked", [rec](Bytes &b) { b[rec + 100] ^= 4; }, kTiles, -EIO,
       "record 1234 is corrupt"},
      {"wrong index field", [rec](Bytes &b) { b[rec + offsetof(collage_record, index)] ^= 1; }, kTiles, -EIO,
       "record 1234 is corrupt (its index field says 1235)"},
      {"zero last record", [](Bytes &b) { memset(&b[b.size() - 4096], 0, 4096); }, 2, -EIO, "record 2999 is corrupt"},
      {"records swapped", [rec](Bytes &b) { std::swap_ranges(&b[rec], &b[rec + 4096], &b[rec + 4096]); }, kTiles,
       -EIO, "record 1234"},
      {"checks rewritten", [rec](Bytes &b) { b[rec + 4096 - 1] ^= 1; }, kTiles, 0, ""}, /* the pad is not checked */
  };
  for (const Case &k : cases) {
    EXPECT_EQ(k.rc, OpenChanged(k.fix, k.sample, &msg)) << k.what << ": " << msg;
    EXPECT_NE(std::string::npos, msg.find(k.says)) << k.what << ": " << msg;
    if (k.rc) {
      EXPECT_NE(std::string::npos, msg.find("changed.ds")) << "names the file: " << msg;
    }
  }
  /* a corrupt record that a small sample does not visit still opens */
  EXPECT_EQ(0, OpenChanged([rec](Bytes &b) { b[rec + 100] ^= 4; }, 2, &msg)) << msg;
}

TEST_F(CollageData, FailedBuildsLeaveNoFile)
{
  const std::string nodir = *dir / "no/such/folder.ds";
  EXPECT_EQ(-ENOENT, collage_dataset_build(nodir.c_str(), &seeds, 10, 1, 2, nullptr));
  const std::string p = *dir / "bad.ds";
  EXPECT_EQ(-EINVAL, collage_dataset_build(p.c_str(), &seeds, 0, 1, 2, nullptr));
  collage_seeds none;
  memset(&none, 0, sizeof(none));
  EXPECT_EQ(-EINVAL, collage_dataset_build(p.c_str(), &none, 10, 1, 2, nullptr));
  /* a file size limit stands in for a full disk: the preallocation fails at
   * once, with the size it needed */
  struct rlimit old;
  ASSERT_EQ(0, getrlimit(RLIMIT_FSIZE, &old));
  struct rlimit small = old;
  small.rlim_cur = 1 << 20;
  void (*was)(int) = signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(0, setrlimit(RLIMIT_FSIZE, &small));
  char *text = nullptr;
  size_t len = 0;
  FILE *log = open_memstream(&text, &len);
  const int rc = collage_dataset_build(p.c_str(), &seeds, 1000, 1, 2, log);
  setrlimit(RLIMIT_FSIZE, &old);
  signal(SIGXFSZ, was);
  fclose(log);
  const std::string said = text;
  free(text);
  EXPECT_EQ(-EFBIG, rc);
  EXPECT_NE(std::string::npos, said.find("needs 3.9 MiB")) << said;
  EXPECT_FALSE(fs::exists(p));
  EXPECT_FALSE(fs::exists(p + ".tmp"));
}

/* ---------------- input pictures and the collage ---------------- */

TEST_F(CollageData, InputPicturesAreScaledSeeds)
{
  collage_image in, want;
  ASSERT_EQ(0, collage_input_picture(&seeds, 5, 320, 224, &in));
  ASSERT_EQ(0, collage_image_resize(&seeds.img[1], 320, 224, &want));
  ASSERT_EQ(320, in.w);
  ASSERT_EQ(224, in.h);
  EXPECT_EQ(0, memcmp(in.rgb, want.rgb, 320 * 224 * 3));
  collage_image_free(&in);
  collage_image_free(&want);
  EXPECT_EQ(-EINVAL, collage_input_picture(&seeds, -1, 64, 64, &in));
  EXPECT_EQ(-EINVAL, collage_input_picture(&seeds, 0, 0, 64, &in));
}

TEST_F(CollageData, RenderReplacesEachChosenBlock)
{
  collage_dataset ds;
  char err[512] = "";
  ASSERT_EQ(0, collage_dataset_open(path.c_str(), 16, &ds, err, sizeof(err))) << err;
  collage_image in, out;
  ASSERT_EQ(0, collage_input_picture(&seeds, 0, 100, 70, &in)); /* 3 x 2 blocks and a margin */
  const uint32_t choice[6] = {5, COLLAGE_NONE, 2999, 0, 17, COLLAGE_NONE};
  ASSERT_EQ(0, collage_render(&ds, &seeds, &in, choice, &out, err, sizeof(err))) << err;
  ASSERT_EQ(100, out.w);
  ASSERT_EQ(70, out.h);
  uint8_t px[COLLAGE_PIXELS * 3];
  for (int y = 0; y < 70; y++)
    for (int x = 0; x < 100; x++) {
      const int b = (x < 96 && y < 64) ? (y / 32) * 3 + x / 32 : -1;
      const uint8_t *got = out.rgb + (y * 100 + x) * 3;
      if (b < 0 || choice[b] == COLLAGE_NONE) {
        ASSERT_EQ(0, memcmp(got, in.rgb + (y * 100 + x) * 3, 3)) << x << "," << y;
        continue;
      }
      ASSERT_EQ(0, collage_tile_render(&seeds, &collage_dataset_record(&ds, choice[b])->tile, px));
      ASSERT_EQ(0, memcmp(got, px + ((y % 32) * 32 + x % 32) * 3, 3)) << x << "," << y;
    }
  collage_image_free(&out);
  const uint32_t past[6] = {0, 3000, 0, 0, 0, 0};
  EXPECT_EQ(-EINVAL, collage_render(&ds, &seeds, &in, past, &out, err, sizeof(err)));
  EXPECT_NE(nullptr, strstr(err, "tile 3000")) << err;
  collage_seeds other;
  ASSERT_EQ(0, collage_seeds_procedural(1, &other));
  EXPECT_EQ(-EINVAL, collage_render(&ds, &other, &in, choice, &out, err, sizeof(err)));
  EXPECT_NE(nullptr, strstr(err, "other seed pictures")) << err;
  EXPECT_EQ(nullptr, out.rgb);
  collage_seeds_free(&other);
  collage_image_free(&in);
  collage_dataset_close(&ds);
}

/* ---------------- seeds ---------------- */
