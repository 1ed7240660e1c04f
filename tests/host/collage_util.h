/*
 * collage_util.h - what the collage's host tests share: temporary folders,
 * whole-file reads and writes, hand-made pictures and seed sets, JPEG
 * writing, and the fixture with a small dataset built once.
 */
#ifndef COLLAGE_TEST_UTIL_H
#define COLLAGE_TEST_UTIL_H

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

namespace collage_test {

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

inline Bytes ReadAll(const std::string &path)
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

inline void WriteAll(const std::string &path, const Bytes &b)
{
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char *>(b.data()), (std::streamsize)b.size());
}

/* Hash of a byte string (collage_hash2 over the bytes), for golden values. */
inline uint64_t HashBytes(const void *p, size_t n)
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
inline collage_seeds OneSeed(collage_image im)
{
  collage_seeds s;
  memset(&s, 0, sizeof(s));
  s.n = 1;
  s.img[0] = im;
  return s;
}

/* Writes a JPEG of im (quality 95; grey when grey is set) with libjpeg. */
inline void WriteJpeg(const std::string &path, const collage_image &im, bool grey)
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
  static inline TempDir *dir;
  static inline collage_seeds seeds;
  static inline std::string path;

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

} // namespace collage_test

#endif /* COLLAGE_TEST_UTIL_H */
