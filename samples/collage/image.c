/*
 * image.c - pictures of the collage (collage.h): PNG and JPEG read (told
 * apart by their magic bytes, anything converted to 8-bit RGB), PNG write,
 * allocation, a deterministic fixed-point resize (area average along an
 * axis that shrinks, bilinear along one that grows) and the crop to whole
 * 32x32 blocks.  Decoders report every bad file as an error code and a
 * message naming the file; nothing here exits.
 */
#include "samples/collage/collage.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jpeglib.h>
#include <jerror.h>
#include <png.h>

#define IMG_MAX_SIDE 65535                 /* a side at most */
#define IMG_MAX_PIXELS (1ull << 28)        /* 268 M pixels (768 MiB of RGB) at most */
#define IMG_ONE 4096                       /* weight 1.0 of the resize */

/* ---------------- allocation ---------------- */

/* A w x h picture, zeroed.  Callers: everything that makes a picture.
 * 0, -EINVAL (a side out of 1..65535 or too many pixels), -ENOMEM. */
int collage_image_alloc(struct collage_image *img, int w, int h)
{
  img->w = img->h = 0;
  img->rgb = NULL;
  if (w <= 0 || h <= 0 || w > IMG_MAX_SIDE || h > IMG_MAX_SIDE || (uint64_t)w * (uint64_t)h > IMG_MAX_PIXELS)
    return -EINVAL;
  img->rgb = calloc((size_t)w * (size_t)h, 3);
  if (!img->rgb)
    return -ENOMEM;
  img->w = w;
  img->h = h;
  return 0;
}

/* Frees the pixels and zeroes the picture (safe twice and on a zeroed one). */
void collage_image_free(struct collage_image *img)
{
  free(img->rgb);
  img->rgb = NULL;
  img->w = img->h = 0;
}

/* ---------------- reading ---------------- */

/* The whole file at path into *data (malloc'd), its size into *size.
 * 0 or -errno with a message in err. */
static int img_slurp(const char *path, uint8_t **data, size_t *size, char *err, size_t errlen)
{
  *data = NULL;
  *size = 0;
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    snprintf(err, errlen, "%s: %s", path, strerror(e));
    return -e;
  }
  struct stat st;
  int rc = 0;
  if (fstat(fd, &st) != 0) {
    rc = -errno;
  } else if (S_ISDIR(st.st_mode)) {
    rc = -EISDIR;
  } else if (st.st_size == 0) {
    snprintf(err, errlen, "%s: empty file, not a picture", path);
    close(fd);
    return -EINVAL;
  } else if ((*data = malloc((size_t)st.st_size)) == NULL) {
    rc = -ENOMEM;
  } else {
    size_t got = 0;
    while (got < (size_t)st.st_size) {
      const ssize_t r = read(fd, *data + got, (size_t)st.st_size - got);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0) {
        rc = -errno;
        break;
      }
      if (r == 0)
        break; /* shrank while we read: decode what is there */
      got += (size_t)r;
    }
    *size = got;
  }
  close(fd);
  if (rc != 0) {
    snprintf(err, errlen, "%s: %s", path, strerror(-rc));
    free(*data);
    *data = NULL;
  }
  return rc;
}

/* A PNG in memory to RGB8 (alpha composited on white).  0 or -EINVAL /
 * -ENOMEM with a message. */
static int img_read_png(const char *path, const uint8_t *data, size_t size, struct collage_image *out,
                        char *err, size_t errlen)
{
  png_image pi;
  memset(&pi, 0, sizeof(pi));
  pi.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&pi, data, size)) {
    snprintf(err, errlen, "%s: bad PNG: %s", path, pi.message);
    png_image_free(&pi);
    return -EINVAL;
  }
  pi.format = PNG_FORMAT_RGB;
  int rc = collage_image_alloc(out, (int)(pi.width > IMG_MAX_SIDE ? 0 : pi.width),
                               (int)(pi.height > IMG_MAX_SIDE ? 0 : pi.height));
  if (rc != 0) {
    snprintf(err, errlen, "%s: PNG of %ux%u pixels: %s", path, pi.width, pi.height,
             rc == -EINVAL ? "too large" : strerror(-rc));
    png_image_free(&pi);
    return rc == -ENOMEM ? rc : -EINVAL;
  }
  const png_color white = {255, 255, 255};
  if (!png_image_finish_read(&pi, &white, out->rgb, (png_int_32)(out->w * 3), NULL)) {
    snprintf(err, errlen, "%s: bad PNG: %s", path, pi.message);
    png_image_free(&pi);
    collage_image_free(out);
    return -EINVAL;
  }
  return 0;
}

/* The JPEG decoder's state: an error manager that jumps back instead of
 * exiting, and everything the decode changes (kept out of the frame that
 * calls setjmp, so nothing needs to be volatile). */
struct img_jpeg {
  struct jpeg_error_mgr mgr; /* first: libjpeg hands back &mgr as cinfo->err */
  jmp_buf jump;
  char msg[JMSG_LENGTH_MAX];
  struct jpeg_decompress_struct cinfo;
  uint8_t *row;              /* one CMYK row, when the file is CMYK */
  struct collage_image *out;
};

/* libjpeg's fatal error: keep the message, jump back to img_jpeg_decode. */
static void img_jpeg_error_exit(j_common_ptr c)
{
  struct img_jpeg *j = (struct img_jpeg *)c->err;
  c->err->format_message(c, j->msg);
  longjmp(j->jump, 1);
}

/* libjpeg's warnings: a file that ends early is an error (libjpeg would
 * fill the rest with grey); other warnings are ignored. */
static void img_jpeg_emit(j_common_ptr c, int level)
{
  if (level < 0 && c->err->msg_code == JWRN_JPEG_EOF)
    img_jpeg_error_exit(c);
}

/* Decodes j->cinfo (source already set) into j->out.  1 on success, 0 on
 * a libjpeg error (message in j->msg), -ENOMEM / -EINVAL for a picture
 * that cannot be allocated. */
static int img_jpeg_decode(struct img_jpeg *j)
{
  if (setjmp(j->jump))
    return 0;
  jpeg_read_header(&j->cinfo, TRUE);
  const int cmyk = j->cinfo.jpeg_color_space == JCS_CMYK || j->cinfo.jpeg_color_space == JCS_YCCK;
  j->cinfo.out_color_space = cmyk ? JCS_CMYK : JCS_RGB;
  jpeg_start_decompress(&j->cinfo);
  const int w = (int)j->cinfo.output_width, h = (int)j->cinfo.output_height;
  int rc = collage_image_alloc(j->out, w, h);
  if (rc == 0 && cmyk && (j->row = malloc((size_t)w * 4)) == NULL)
    rc = -ENOMEM;
  if (rc != 0)
    return rc;
  while (j->cinfo.output_scanline < j->cinfo.output_height) {
    uint8_t *dst = j->out->rgb + (size_t)j->cinfo.output_scanline * (size_t)w * 3;
    JSAMPROW rows[1] = {cmyk ? j->row : dst};
    jpeg_read_scanlines(&j->cinfo, rows, 1);
    /* Adobe CMYK JPEGs store inverted inks: R = C * K / 255 and so on. */
    for (int x = 0; cmyk && x < w; x++) {
      const unsigned k = j->row[x * 4 + 3];
      for (int c = 0; c < 3; c++)
        dst[x * 3 + c] = (uint8_t)((j->row[x * 4 + c] * k + 127) / 255);
    }
  }
  jpeg_finish_decompress(&j->cinfo);
  return 1;
}

/* A JPEG in memory to RGB8.  0 or -EINVAL / -ENOMEM with a message. */
static int img_read_jpeg(const char *path, const uint8_t *data, size_t size, struct collage_image *out,
                         char *err, size_t errlen)
{
  struct img_jpeg *j = calloc(1, sizeof(*j));
  if (!j) {
    snprintf(err, errlen, "%s: out of memory", path);
    return -ENOMEM;
  }
  j->out = out;
  j->cinfo.err = jpeg_std_error(&j->mgr);
  j->mgr.error_exit = img_jpeg_error_exit;
  j->mgr.emit_message = img_jpeg_emit;
  jpeg_create_decompress(&j->cinfo);
  jpeg_mem_src(&j->cinfo, data, (unsigned long)size);
  const int r = img_jpeg_decode(j);
  int rc = 0;
  if (r == 0) {
    snprintf(err, errlen, "%s: bad JPEG: %s", path, j->msg);
    rc = -EINVAL;
  } else if (r < 0) {
    snprintf(err, errlen, "%s: JPEG of %ux%u pixels: %s", path, j->cinfo.output_width,
             j->cinfo.output_height, r == -EINVAL ? "too large" : strerror(-r));
    rc = r;
  }
  jpeg_destroy_decompress(&j->cinfo);
  if (rc != 0)
    collage_image_free(out);
  free(j->row);
  free(j);
  return rc;
}

/* Reads a PNG or JPEG (by magic bytes) as RGB8.  Callers: seeds.c, the
 * driver (a user's picture), tests.  0, -ENOENT (and other open errors),
 * -EINVAL (empty, truncated, foreign or undecodable), -ENOMEM; a message
 * naming the file in err. */
int collage_image_read(const char *path, struct collage_image *out, char *err, size_t errlen)
{
  static const uint8_t png_magic[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  out->w = out->h = 0;
  out->rgb = NULL;
  uint8_t *data;
  size_t size;
  int rc = img_slurp(path, &data, &size, err, errlen);
  if (rc != 0)
    return rc;
  if (size >= 8 && memcmp(data, png_magic, 8) == 0) {
    rc = img_read_png(path, data, size, out, err, errlen);
  } else if (size >= 3 && data[0] == 0xff && data[1] == 0xd8 && data[2] == 0xff) {
    rc = img_read_jpeg(path, data, size, out, err, errlen);
  } else {
    snprintf(err, errlen, "%s: not a PNG or JPEG picture (%zu bytes, unknown magic)", path, size);
    rc = -EINVAL;
  }
  free(data);
  return rc;
}

/* ---------------- writing ---------------- */

/* Writes img as an 8-bit RGB PNG.  Callers: the driver (the collage),
 * tests.  0, -EINVAL (an empty picture), or -errno of the file
 * (-EIO when libpng fails). */
int collage_image_write_png(const char *path, const struct collage_image *img)
{
  if (!img->rgb || img->w <= 0 || img->h <= 0)
    return -EINVAL;
  FILE *f = fopen(path, "wb");
  if (!f)
    return -errno;
  png_image pi;
  memset(&pi, 0, sizeof(pi));
  pi.version = PNG_IMAGE_VERSION;
  pi.width = (png_uint_32)img->w;
  pi.height = (png_uint_32)img->h;
  pi.format = PNG_FORMAT_RGB;
  int rc = png_image_write_to_stdio(&pi, f, 0, img->rgb, (png_int_32)(img->w * 3), NULL) ? 0 : -EIO;
  png_image_free(&pi);
  if (fclose(f) != 0 && rc == 0)
    rc = -errno;
  if (rc != 0)
    unlink(path);
  return rc;
}

/* ---------------- resize ---------------- */

/* How each output position of one axis mixes source positions: output o
 * takes taps n[o] sources from first[o], weights w[o * max ..] summing to
 * IMG_ONE. */
struct img_axis {
  int max;
  int *first, *n;
  uint16_t *w;
};

/* The taps of an axis of n_in sources and n_out outputs.  Shrinking: the
 * area each output covers (exact overlaps in units of 1/n_out, weights
 * rounded down, the remainder to the largest).  Growing or equal: bilinear
 * at the output pixel's centre in 16.16 (equal sizes copy).  0 or -ENOMEM. */
static int img_axis_make(int n_in, int n_out, struct img_axis *a)
{
  a->max = n_out < n_in ? (n_in + n_out - 1) / n_out + 1 : 2;
  a->first = malloc(sizeof(int) * (size_t)n_out * 2);
  a->w = calloc((size_t)n_out * (size_t)a->max, sizeof(uint16_t));
  if (!a->first || !a->w)
    return -ENOMEM;
  a->n = a->first + n_out;
  for (int o = 0; o < n_out; o++) {
    uint16_t *w = a->w + (size_t)o * (size_t)a->max;
    if (n_out < n_in) {
      const uint64_t lo = (uint64_t)o * (uint64_t)n_in, hi = lo + (uint64_t)n_in; /* units of 1/n_out */
      const int s0 = (int)(lo / (uint64_t)n_out), s1 = (int)((hi + (uint64_t)n_out - 1) / (uint64_t)n_out);
      int sum = 0, big = 0;
      for (int s = s0; s < s1; s++) {
        const uint64_t a0 = (uint64_t)s * (uint64_t)n_out, a1 = a0 + (uint64_t)n_out;
        const uint64_t ov = (a1 < hi ? a1 : hi) - (a0 > lo ? a0 : lo);
        w[s - s0] = (uint16_t)(ov * IMG_ONE / (uint64_t)n_in);
        sum += w[s - s0];
        if (w[s - s0] > w[big])
          big = s - s0;
      }
      w[big] = (uint16_t)(w[big] + IMG_ONE - sum);
      a->first[o] = s0;
      a->n[o] = s1 - s0;
    } else {
      int64_t pos = (int64_t)(((2 * (uint64_t)o + 1) * (uint64_t)n_in << 16) / (2 * (uint64_t)n_out)) - 32768;
      const int64_t top = (int64_t)(n_in - 1) << 16;
      pos = pos < 0 ? 0 : pos > top ? top : pos;
      const int i0 = (int)(pos >> 16), f = (int)(pos & 0xffff) >> 4;
      a->first[o] = i0;
      a->n[o] = (f != 0 && i0 + 1 < n_in) ? 2 : 1;
      w[0] = (uint16_t)(a->n[o] == 2 ? IMG_ONE - f : IMG_ONE);
      w[1] = (uint16_t)(a->n[o] == 2 ? f : 0);
    }
  }
  return 0;
}

static void img_axis_free(struct img_axis *a)
{
  free(a->first);
  free(a->w);
}

/* The pixel loops of the resize write only the picture being made, so
 * ThreadSanitizer has nothing to find there: uninstrumented, which keeps
 * the TSan-built tests fast. */
#if defined(__SANITIZE_THREAD__)
#define IMG_PLAIN __attribute__((no_sanitize_thread))
#else
#define IMG_PLAIN
#endif

/* The rows pass: in (w_in x h) to mid (w x h, values x16, at most 4080). */
IMG_PLAIN static void img_resize_rows(const struct collage_image *in, const struct img_axis *ax, int w,
                                      uint16_t *mid)
{
  for (int y = 0; y < in->h; y++) {
    const uint8_t *src = in->rgb + (size_t)y * (size_t)in->w * 3;
    uint16_t *dst = mid + (size_t)y * (size_t)w * 3;
    for (int x = 0; x < w; x++) {
      const uint16_t *wt = ax->w + (size_t)x * (size_t)ax->max;
      const uint8_t *s = src + (size_t)ax->first[x] * 3;
      uint32_t r = 0, g = 0, b = 0;
      for (int k = 0; k < ax->n[x]; k++) {
        r += wt[k] * (uint32_t)s[k * 3];
        g += wt[k] * (uint32_t)s[k * 3 + 1];
        b += wt[k] * (uint32_t)s[k * 3 + 2];
      }
      dst[x * 3] = (uint16_t)((r + 128) >> 8);
      dst[x * 3 + 1] = (uint16_t)((g + 128) >> 8);
      dst[x * 3 + 2] = (uint16_t)((b + 128) >> 8);
    }
  }
}

/* The columns pass: mid to out (sums at most 4096 * 4080), acc one row of
 * 32-bit sums. */
IMG_PLAIN static void img_resize_cols(const uint16_t *mid, const struct img_axis *ay, struct collage_image *out,
                                      uint32_t *acc)
{
  const size_t row = (size_t)out->w * 3;
  for (int y = 0; y < out->h; y++) {
    const uint16_t *wt = ay->w + (size_t)y * (size_t)ay->max;
    memset(acc, 0, row * sizeof(uint32_t));
    for (int k = 0; k < ay->n[y]; k++) {
      const uint16_t *s = mid + (size_t)(ay->first[y] + k) * row;
      for (size_t i = 0; i < row; i++)
        acc[i] += wt[k] * (uint32_t)s[i];
    }
    uint8_t *dst = out->rgb + (size_t)y * row;
    for (size_t i = 0; i < row; i++) {
      const uint32_t v = (acc[i] + 32768) >> 16;
      dst[i] = (uint8_t)(v > 255 ? 255 : v);
    }
  }
}

/* Resizes in to w x h into a new picture: rows first (into 16-bit values
 * x16), then columns, integer weights only, so every machine gets the same
 * bytes.  Callers: seeds.c (to fit 1024), collage_input_picture, the
 * driver.  0, -EINVAL (an empty picture or size), -ENOMEM. */
int collage_image_resize(const struct collage_image *in, int w, int h, struct collage_image *out)
{
  out->w = out->h = 0;
  out->rgb = NULL;
  if (!in->rgb || in->w <= 0 || in->h <= 0)
    return -EINVAL;
  int rc = collage_image_alloc(out, w, h);
  if (rc != 0)
    return rc;
  struct img_axis ax = {0}, ay = {0};
  uint16_t *mid = malloc((size_t)in->h * (size_t)w * 3 * sizeof(uint16_t));
  uint32_t *acc = malloc((size_t)w * 3 * sizeof(uint32_t));
  if (!mid || !acc || img_axis_make(in->w, w, &ax) != 0 || img_axis_make(in->h, h, &ay) != 0) {
    rc = -ENOMEM;
  } else {
    img_resize_rows(in, &ax, w, mid);
    img_resize_cols(mid, &ay, out, acc);
  }
  free(mid);
  free(acc);
  img_axis_free(&ax);
  img_axis_free(&ay);
  if (rc != 0)
    collage_image_free(out);
  return rc;
}

/* ---------------- crop ---------------- */

/* Crops img to whole 32x32 blocks in place, keeping the top-left.
 * Callers: the driver (a user's picture, input pictures).  1 when it
 * cropped, 0 when already whole, -EINVAL for less than one block. */
int collage_image_crop_blocks(struct collage_image *img)
{
  if (!img->rgb || img->w < (int)COLLAGE_TILE || img->h < (int)COLLAGE_TILE)
    return -EINVAL;
  const int w = img->w & ~(int)(COLLAGE_TILE - 1), h = img->h & ~(int)(COLLAGE_TILE - 1);
  if (w == img->w && h == img->h)
    return 0;
  for (int y = 0; y < h; y++) /* each row moves down to a lower address: front to back is safe */
    memmove(img->rgb + (size_t)y * (size_t)w * 3, img->rgb + (size_t)y * (size_t)img->w * 3, (size_t)w * 3);
  uint8_t *p = realloc(img->rgb, (size_t)w * (size_t)h * 3);
  if (p)
    img->rgb = p; /* a failed shrink keeps the larger block: still valid */
  img->w = w;
  img->h = h;
  return 1;
}
