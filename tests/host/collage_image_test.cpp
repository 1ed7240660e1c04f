/*
 * collage_image_test.cpp - the collage's pictures (image.c: PNG round trips,
 * JPEGs written here with libjpeg, resize, crop, every bad picture file) and
 * seeds (seeds.c: the procedural set, loading a folder, the fallback when a
 * folder has no pictures, fetching).
 */
#include <gtest/gtest.h>

#include "tests/host/collage_util.h"

using namespace collage_test;

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
