/*
 * collage_data_test.cpp - the data side of the collage: pictures (image.c),
 * seeds (seeds.c) and the dataset (dataset.c).  Tile parameters in range and
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

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include <jpeglib.h>
#include <png.h>
#include <sys/resource.h>
#include <unistd.h>

#include "samples/collage/collage.h"

namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;

/* A temp folder removed at the end of the test. */
struct TempDir {
  std::string path;
  TempDir()
  {
    char tmpl[] = "/tmp/collage_data_test.XXXXXX";
    path = mkdtemp(tmpl) ? tmpl : "";
  }
  ~TempDir() { fs::remove_all(path); }
  std::string operator/(const char *name) const { return path + "/" + name; }
};

Bytes ReadAll(const std::string &path)
{
  Bytes b;
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f)
    return b;
  b.resize((size_t)f.tellg());
  f.seekg(0);
  f.read(reinterpret_cast<char *>(b.data()), (std::streamsize)b.size());
  return b;
}

void WriteAll(const std::string &path, const Bytes &b)
{
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char *>(b.data()), (std::streamsize)b.size());
}

/* Hash of a byte string (collage_hash2 over the bytes), for golden values. */
uint64_t HashBytes(const void *p, size_t n)
{
  const uint8_t *b = static_cast<const uint8_t *>(p);
  uint64_t h = n;
  for (size_t i = 0; i < n; i++)
    h = collage_hash2(h, b[i]);
  return h;
}

/* A w x h picture with pixel (x, y) = f(x, y, channel). */
template <class F> collage_image Picture(int w, int h, F f)
{
  collage_image im;
  EXPECT_EQ(0, collage_image_alloc(&im, w, h));
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      for (int c = 0; c < 3; c++)
        im.rgb[((size_t)y * w + x) * 3 + c] = (uint8_t)f(x, y, c);
  return im;
}

/* A seed set of one picture (the caller frees it with collage_seeds_free). */
collage_seeds OneSeed(collage_image im)
{
  collage_seeds s;
  memset(&s, 0, sizeof(s));
  s.n = 1;
  s.img[0] = im;
  return s;
}

/* Writes a JPEG of im (quality 95; grey when grey is set) with libjpeg. */
void WriteJpeg(const std::string &path, const collage_image &im, bool grey)
{
  jpeg_compress_struct c;
  jpeg_error_mgr e;
  c.err = jpeg_std_error(&e);
  jpeg_create_compress(&c);
  FILE *f = fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  jpeg_stdio_dest(&c, f);
  c.image_width = (JDIMENSION)im.w;
  c.image_height = (JDIMENSION)im.h;
  c.input_components = grey ? 1 : 3;
  c.in_color_space = grey ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&c);
  jpeg_set_quality(&c, 95, TRUE);
  jpeg_start_compress(&c, TRUE);
  std::vector<uint8_t> row((size_t)im.w * 3);
  while (c.next_scanline < c.image_height) {
    const uint8_t *src = im.rgb + (size_t)c.next_scanline * im.w * 3;
    for (int x = 0; x < im.w; x++)
      row[x] = src[x * 3];
    JSAMPROW r = grey ? row.data() : const_cast<uint8_t *>(src);
    jpeg_write_scanlines(&c, &r, 1);
  }
  jpeg_finish_compress(&c);
  jpeg_destroy_compress(&c);
  fclose(f);
}

/* The procedural seeds and a small dataset, made once. */
class CollageData : public ::testing::Test {
protected:
  static constexpr uint64_t kTiles = 3000, kSeed = 1234;
  static TempDir *dir;
  static collage_seeds seeds;
  static std::string path;

  static void SetUpTestSuite()
  {
    dir = new TempDir();
    ASSERT_EQ(0, collage_seeds_procedural(4, &seeds));
    path = *dir / "tiny.ds";
    ASSERT_EQ(0, collage_dataset_build(path.c_str(), &seeds, kTiles, kSeed, 2, nullptr));
  }
  static void TearDownTestSuite()
  {
    collage_seeds_free(&seeds);
    delete dir;
  }
  /* A copy of the dataset, changed by fix, then opened: the error code and
   * message. */
  template <class F> static int OpenChanged(F fix, uint64_t sample, std::string *msg)
  {
    Bytes b = ReadAll(path);
    fix(b);
    const std::string p = *dir / "changed.ds";
    WriteAll(p, b);
    collage_dataset ds;
    char err[512] = "";
    const int rc = collage_dataset_open(p.c_str(), sample, &ds, err, sizeof(err));
    *msg = err;
    collage_dataset_close(&ds);
    return rc;
  }
};
TempDir *CollageData::dir;
collage_seeds CollageData::seeds;
std::string CollageData::path;

} // namespace

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

TEST(CollageImage, PngRoundTripIsByteExact)
{
  TempDir d;
  collage_image im = Picture(37, 23, [](int x, int y, int c) { return (int)(collage_hash2(x * 100 + y, c) & 0xff); });
  ASSERT_EQ(0, collage_image_write_png((d / "a.png").c_str(), &im));
  collage_image back;
  char err[512] = "";
  ASSERT_EQ(0, collage_image_read((d / "a.png").c_str(), &back, err, sizeof(err))) << err;
  ASSERT_EQ(37, back.w);
  ASSERT_EQ(23, back.h);
  EXPECT_EQ(0, memcmp(im.rgb, back.rgb, 37 * 23 * 3));
  collage_image_free(&back);
  /* a grey PNG, written by libpng here: read as R = G = B */
  png_image pi;
  memset(&pi, 0, sizeof(pi));
  pi.version = PNG_IMAGE_VERSION;
  pi.width = 20, pi.height = 10, pi.format = PNG_FORMAT_GRAY;
  std::vector<uint8_t> grey(200);
  for (int i = 0; i < 200; i++)
    grey[i] = (uint8_t)i;
  ASSERT_TRUE(png_image_write_to_file(&pi, (d / "grey.png").c_str(), 0, grey.data(), 20, nullptr));
  ASSERT_EQ(0, collage_image_read((d / "grey.png").c_str(), &back, err, sizeof(err))) << err;
  ASSERT_EQ(20, back.w);
  for (int i = 0; i < 200; i++)
    for (int c = 0; c < 3; c++)
      ASSERT_EQ(i, back.rgb[i * 3 + c]);
  collage_image_free(&back);
  EXPECT_EQ(-EINVAL, collage_image_write_png((d / "b.png").c_str(), &back)) << "an empty picture";
  EXPECT_EQ(-ENOENT, collage_image_write_png((d / "no/such/b.png").c_str(), &im));
  collage_image_free(&im);
}

TEST(CollageImage, JpegIsReadInColourAndGrey)
{
  TempDir d;
  collage_image im = Picture(48, 40, [](int x, int, int c) { return x < 24 ? (c == 0 ? 220 : 30) : (c == 2 ? 200 : 60); });
  WriteJpeg(d / "a.jpg", im, false);
  WriteJpeg(d / "grey.jpeg", im, true);
  collage_image back;
  char err[512] = "";
  ASSERT_EQ(0, collage_image_read((d / "a.jpg").c_str(), &back, err, sizeof(err))) << err;
  ASSERT_EQ(48, back.w);
  ASSERT_EQ(40, back.h);
  for (int y = 0; y < 40; y += 3)
    for (int x : {2, 10, 20, 28, 40, 46})
      for (int c = 0; c < 3; c++)
        ASSERT_NEAR(im.rgb[(y * 48 + x) * 3 + c], back.rgb[(y * 48 + x) * 3 + c], 12) << x << "," << y;
  collage_image_free(&back);
  ASSERT_EQ(0, collage_image_read((d / "grey.jpeg").c_str(), &back, err, sizeof(err))) << err;
  ASSERT_EQ(48, back.w);
  for (int i = 0; i < 48 * 40; i++) {
    ASSERT_EQ(back.rgb[i * 3], back.rgb[i * 3 + 1]);
    ASSERT_EQ(back.rgb[i * 3], back.rgb[i * 3 + 2]);
  }
  EXPECT_NEAR(220, back.rgb[(5 * 48 + 5) * 3], 6);
  collage_image_free(&back);
  collage_image_free(&im);
}

TEST(CollageImage, BadPictureFilesAreRefusedWithTheirErrors)
{
  TempDir d;
  collage_image im = Picture(64, 64, [](int x, int y, int c) { return (x * 3 + y * 5 + c * 70) & 0xff; });
  ASSERT_EQ(0, collage_image_write_png((d / "good.png").c_str(), &im));
  WriteJpeg(d / "good.jpg", im, false);
  const Bytes png = ReadAll(d / "good.png"), jpg = ReadAll(d / "good.jpg");
  Bytes junk(5000);
  for (size_t i = 0; i < junk.size(); i++)
    junk[i] = (uint8_t)collage_hash2(9, i);
  WriteAll(d / "empty.png", {});
  WriteAll(d / "junk.png", junk);
  WriteAll(d / "cut.png", Bytes(png.begin(), png.begin() + (long)png.size() / 2));
  WriteAll(d / "cut.jpg", Bytes(jpg.begin(), jpg.begin() + (long)jpg.size() / 2));
  Bytes bad = png;
  for (size_t i = 60; i < bad.size() - 20; i++) /* the magic is right, the data is not */
    bad[i] ^= 0x5a;
  WriteAll(d / "bad.png", bad);
  Bytes badj = jpg;
  badj.resize(40);
  WriteAll(d / "head.jpg", badj);
  const struct {
    const char *name;
    int rc;
    const char *says;
  } cases[] = {
      {"missing.png", -ENOENT, "No such file"},
      {"empty.png", -EINVAL, "empty"},
      {"junk.png", -EINVAL, "not a PNG or JPEG"},
      {"cut.png", -EINVAL, "bad PNG"},
      {"cut.jpg", -EINVAL, "bad JPEG"},
      {"bad.png", -EINVAL, "bad PNG"},
      {"head.jpg", -EINVAL, "bad JPEG"},
  };
  for (const auto &k : cases) {
    collage_image out;
    char err[512] = "";
    const std::string p = d / k.name;
    EXPECT_EQ(k.rc, collage_image_read(p.c_str(), &out, err, sizeof(err))) << k.name;
    EXPECT_NE(nullptr, strstr(err, p.c_str())) << "names the file: " << err;
    EXPECT_NE(nullptr, strstr(err, k.says)) << err;
    EXPECT_EQ(nullptr, out.rgb);
  }
  collage_image_free(&im);
}

TEST(CollageImage, ResizeIsExactOnKnownCases)
{
  collage_image im = Picture(40, 30, [](int x, int y, int c) { return (x * 7 + y * 3 + c * 50) & 0xff; }), out, again;
  ASSERT_EQ(0, collage_image_resize(&im, 40, 30, &out)); /* the same size copies */
  EXPECT_EQ(0, memcmp(im.rgb, out.rgb, 40 * 30 * 3));
  collage_image_free(&out);
  collage_image two = Picture(2, 1, [](int x, int, int) { return x ? 200 : 0; }); /* growing: bilinear at centres */
  ASSERT_EQ(0, collage_image_resize(&two, 4, 1, &out));
  const uint8_t want[4] = {0, 50, 150, 200};
  for (int x = 0; x < 4; x++)
    EXPECT_EQ(want[x], out.rgb[x * 3]) << x;
  collage_image_free(&out);
  collage_image blocks = Picture(8, 8, [](int x, int y, int) { return ((x / 4) + 2 * (y / 4)) * 60 + (x & 1); });
  ASSERT_EQ(0, collage_image_resize(&blocks, 2, 2, &out)); /* shrinking: the area average */
  for (int q = 0; q < 4; q++)
    EXPECT_EQ(q * 60 + 1, out.rgb[q * 3]) << "mean of x and x + 1, rounded up"; /* (60q*16 + 8) / 16 = 60q + 0.5 */
  collage_image_free(&out);
  collage_image thirds = Picture(3, 1, [](int x, int, int) { return x * 90; }); /* 3 -> 2: halves of the middle */
  ASSERT_EQ(0, collage_image_resize(&thirds, 2, 1, &out));
  EXPECT_EQ(30, out.rgb[0]); /* (0 * 2/3 + 90 * 1/3) */
  EXPECT_EQ(150, out.rgb[3]); /* (90 * 1/3 + 180 * 2/3) */
  collage_image_free(&out);
  ASSERT_EQ(0, collage_image_resize(&im, 1000, 7, &out)); /* deterministic, any shape */
  ASSERT_EQ(0, collage_image_resize(&im, 1000, 7, &again));
  EXPECT_EQ(0, memcmp(out.rgb, again.rgb, 1000 * 7 * 3));
  collage_image_free(&out);
  collage_image_free(&again);
  collage_image solid = Picture(333, 777, [](int, int, int c) { return 17 + c; }); /* large factors keep a solid colour */
  for (auto [w, h] : {std::pair{5, 3}, std::pair{1, 1}, std::pair{2000, 1500}}) {
    ASSERT_EQ(0, collage_image_resize(&solid, w, h, &out));
    for (int i = 0; i < w * h * 3; i++)
      ASSERT_EQ(17 + i % 3, out.rgb[i]) << w << "x" << h;
    collage_image_free(&out);
  }
  EXPECT_EQ(-EINVAL, collage_image_resize(&im, 0, 5, &out));
  EXPECT_EQ(-EINVAL, collage_image_resize(&out, 5, 5, &again)) << "an empty picture";
  for (collage_image *p : {&im, &two, &blocks, &thirds, &solid})
    collage_image_free(p);
}

TEST(CollageImage, CropKeepsTheTopLeftWholeBlocks)
{
  auto f = [](int x, int y, int c) { return (x * 5 + y * 11 + c) & 0xff; };
  collage_image im = Picture(70, 100, f);
  EXPECT_EQ(1, collage_image_crop_blocks(&im));
  ASSERT_EQ(64, im.w);
  ASSERT_EQ(96, im.h);
  for (int y = 0; y < 96; y++)
    for (int x = 0; x < 64; x++)
      for (int c = 0; c < 3; c++)
        ASSERT_EQ(f(x, y, c), im.rgb[(y * 64 + x) * 3 + c]);
  EXPECT_EQ(0, collage_image_crop_blocks(&im)) << "already whole";
  collage_image_free(&im);
  collage_image narrow = Picture(31, 64, f), flat = Picture(64, 20, f);
  EXPECT_EQ(-EINVAL, collage_image_crop_blocks(&narrow));
  EXPECT_EQ(-EINVAL, collage_image_crop_blocks(&flat));
  EXPECT_EQ(31, narrow.w);
  EXPECT_EQ(-EINVAL, collage_image_crop_blocks(&im)) << "an empty picture";
  collage_image_free(&narrow);
  collage_image_free(&flat);
  collage_image a;
  EXPECT_EQ(-EINVAL, collage_image_alloc(&a, 0, 5));
  EXPECT_EQ(-EINVAL, collage_image_alloc(&a, 5, -1));
  EXPECT_EQ(nullptr, a.rgb);
}

/* ---------------- the dataset ---------------- */

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

TEST(CollageSeeds, ProceduralSetIsDeterministicAndVaried)
{
  collage_seeds a, b;
  ASSERT_EQ(0, collage_seeds_procedural(2, &a));
  ASSERT_EQ(0, collage_seeds_procedural(2, &b));
  ASSERT_EQ(2, a.n);
  EXPECT_STREQ("procedural", a.source);
  EXPECT_EQ(a.id, b.id);
  for (int i = 0; i < 2; i++) {
    ASSERT_EQ(1024, a.img[i].w);
    ASSERT_EQ(768, a.img[i].h);
    EXPECT_EQ(0, memcmp(a.img[i].rgb, b.img[i].rgb, 1024 * 768 * 3));
  }
  EXPECT_NE(0, memcmp(a.img[0].rgb, a.img[1].rgb, 1024 * 768 * 3));
  /* 32 x 32 crops at many places have varied histograms */
  std::set<std::vector<uint32_t>> reduced;
  std::vector<uint32_t> hist(COLLAGE_HIST);
  int32_t r[COLLAGE_DIMS];
  for (int k = 0; k < 200; k++) {
    const collage_image &im = a.img[k % 2];
    const int x = (int)(collage_hash2(11, k) % (1024 - 32)), y = (int)(collage_hash2(12, k) % (768 - 32));
    collage_histogram(im.rgb + ((size_t)y * 1024 + x) * 3, 32, 32, 1024 * 3, hist.data());
    collage_reduce(hist.data(), r);
    reduced.insert(std::vector<uint32_t>(r, r + COLLAGE_DIMS));
  }
  EXPECT_GT(reduced.size(), 190u);
  collage_seeds_procedural(1, &b); /* b now holds one picture of its own */
  EXPECT_NE(a.id, b.id);
  collage_seeds_free(&a);
  collage_seeds_free(&b);
  collage_seeds_free(&b);
  EXPECT_EQ(-EINVAL, collage_seeds_procedural(0, &a));
  EXPECT_EQ(-EINVAL, collage_seeds_procedural(COLLAGE_MAX_SEEDS + 1, &a));
}

TEST(CollageSeeds, LoadDecodesAFolderInNameOrderAndSkipsBadFiles)
{
  TempDir d;
  collage_image wide = Picture(1500, 300, [](int x, int y, int c) { return (x + y * 2 + c * 40) & 0xff; });
  collage_image sq = Picture(200, 200, [](int x, int y, int c) { return (x ^ y) + c; });
  collage_image tiny = Picture(40, 40, [](int, int, int) { return 9; });
  ASSERT_EQ(0, collage_image_write_png((d / "b-wide.png").c_str(), &wide));
  WriteJpeg(d / "a-square.JPG", sq, false);
  ASSERT_EQ(0, collage_image_write_png((d / "c-tiny.png").c_str(), &tiny));
  WriteAll(d / "d-junk.jpeg", Bytes(100, 7));
  WriteAll(d / "e-empty.png", {});
  WriteAll(d / "notes.txt", Bytes(10, 'x'));
  char *text = nullptr;
  size_t len = 0;
  FILE *log = open_memstream(&text, &len);
  collage_seeds s, again;
  ASSERT_EQ(0, collage_seeds_load(d.path.c_str(), &s, log));
  fclose(log);
  const std::string said = text;
  free(text);
  ASSERT_EQ(2, s.n);
  EXPECT_STREQ("debian", s.source);
  EXPECT_EQ(200, s.img[0].w); /* a-square first */
  EXPECT_EQ(1024, s.img[1].w); /* 1500 x 300 scaled to fit 1024 */
  EXPECT_EQ(205, s.img[1].h);
  collage_image want;
  ASSERT_EQ(0, collage_image_resize(&wide, 1024, 205, &want));
  EXPECT_EQ(0, memcmp(want.rgb, s.img[1].rgb, 1024 * 205 * 3));
  EXPECT_NE(std::string::npos, said.find("c-tiny.png: 40x40, smaller than 64x64")) << said;
  EXPECT_NE(std::string::npos, said.find("d-junk.jpeg")) << said;
  EXPECT_NE(std::string::npos, said.find("e-empty.png")) << said;
  EXPECT_EQ(std::string::npos, said.find("notes.txt")) << said;
  ASSERT_EQ(0, collage_seeds_load(d.path.c_str(), &again, nullptr));
  EXPECT_EQ(s.id, again.id);
  collage_seeds_free(&again);
  /* a changed pixel changes the id */
  sq.rgb[1000] ^= 0x40;
  fs::remove(d / "a-square.JPG");
  ASSERT_EQ(0, collage_image_write_png((d / "a-square.png").c_str(), &sq));
  ASSERT_EQ(0, collage_seeds_load(d.path.c_str(), &again, nullptr));
  EXPECT_NE(s.id, again.id);
  collage_seeds_free(&again);
  collage_seeds_free(&s);
  for (collage_image *p : {&wide, &sq, &tiny, &want})
    collage_image_free(p);
}

TEST(CollageSeeds, AFolderWithoutPicturesGivesTheProceduralSet)
{
  TempDir d;
  WriteAll(d / "readme.txt", Bytes(10, 'x'));
  WriteAll(d / "broken.png", Bytes(10, 1));
  collage_seeds s, p;
  ASSERT_EQ(0, collage_seeds_procedural(16, &p));
  for (const char *dir : {d.path.c_str(), (const char *)nullptr, "/tmp/collage_data_test.no-such-folder"}) {
    char *text = nullptr;
    size_t len = 0;
    FILE *log = open_memstream(&text, &len);
    ASSERT_EQ(0, collage_seeds_load(dir, &s, log));
    fclose(log);
    const std::string said = text;
    free(text);
    EXPECT_STREQ("procedural", s.source);
    EXPECT_EQ(16, s.n);
    EXPECT_EQ(p.id, s.id);
    EXPECT_NE(std::string::npos, said.find("using 16 procedural pictures")) << said;
    collage_seeds_free(&s);
  }
  collage_seeds_free(&p);
}

TEST(CollageSeeds, FetchLeavesAFolderWithPicturesAlone)
{
  TempDir d;
  collage_image im = Picture(64, 64, [](int x, int, int) { return x; });
  ASSERT_EQ(0, collage_image_write_png((d / "mine.png").c_str(), &im));
  collage_image_free(&im);
  EXPECT_EQ(0, collage_seeds_fetch(d.path.c_str(), nullptr));
  int files = 0;
  for (const auto &e : fs::directory_iterator(d.path))
    files += e.exists();
  EXPECT_EQ(1, files);
}

TEST(CollageSeeds, FetchWithoutAptGetSaysNoArchiveIsReachable)
{
  TempDir d;
  const std::string seeds = d / "seeds";
  const char *old = getenv("PATH");
  const std::string keep = old ? old : "";
  setenv("PATH", d.path.c_str(), 1); /* no apt-get there */
  char *text = nullptr;
  size_t len = 0;
  FILE *log = open_memstream(&text, &len);
  const int rc = collage_seeds_fetch(seeds.c_str(), log);
  fclose(log);
  setenv("PATH", keep.c_str(), 1);
  const std::string said = text;
  free(text);
  EXPECT_EQ(-ENOENT, rc);
  EXPECT_NE(std::string::npos, said.find("no package archive reachable (apt-get download " COLLAGE_SEED_PACKAGES
                                         " failed): apt-get not found"))
      << said;
  ASSERT_TRUE(fs::is_directory(seeds));
  EXPECT_TRUE(fs::is_empty(seeds)) << "the download folder is removed";
}
