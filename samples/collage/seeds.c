/*
 * seeds.c - the seed photographs of the collage (collage.h): fetching them
 * from Debian packages (`apt-get download`, `dpkg -x`, the colour photos
 * copied into the seed folder), loading a folder of pictures (decoded,
 * scaled to fit 1024 x 1024, identified by a hash of their pixels), and the
 * procedural set used where no archive is reachable (gradients, shapes,
 * stripes and mild noise, all from collage_hash2).
 */
#include "samples/collage/collage.h"
#include "benchlib/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SEEDS_PROC_N 16               /* procedural pictures when no folder has any */
#define SEEDS_PROC_W 1024
#define SEEDS_PROC_H 768
#define SEEDS_PROC_STREAM 0x5eed5eedull
#define SEEDS_MIN_FETCH_SIDE 256      /* a fetched photo is at least 256 x 256 */
#define SEEDS_MIN_LOAD_SIDE 64        /* a loaded seed is at least 64 x 64 */
#define SEEDS_MAX_FILE (8u << 20)     /* a fetched file is at most 8 MB */
#define SEEDS_CHILD_TIMEOUT_S 300     /* apt-get or dpkg running longer is killed */

/* The pixel loops (painting, hashing) read and write only pictures this
 * thread is making or that no thread writes meanwhile, so ThreadSanitizer
 * has nothing to find there: they are left uninstrumented, which keeps the
 * TSan-built tests fast. */
#if defined(__SANITIZE_THREAD__)
#define SEEDS_PLAIN __attribute__((no_sanitize_thread))
#else
#define SEEDS_PLAIN
#endif

/* ---------------- the identity ---------------- */

/* Hash of len bytes chained onto h: 8 bytes at a time over four lanes (so
 * the multiplies overlap), the tail zero-padded, the lanes folded with
 * collage_hash2.  Callers: seeds_finish. */
SEEDS_PLAIN static uint64_t seeds_hash_bytes(uint64_t h, const uint8_t *p, size_t len)
{
  uint64_t lane[4] = {h, h ^ 1, h ^ 2, h ^ 3};
  size_t i = 0;
  for (; i + 32 <= len; i += 32)
    for (int k = 0; k < 4; k++) {
      uint64_t v;
      memcpy(&v, p + i + 8 * k, 8);
      lane[k] = collage_hash64(lane[k] ^ v);
    }
  for (int k = 0; i < len; i += 8, k++) {
    uint64_t v = 0;
    memcpy(&v, p + i, len - i < 8 ? len - i : 8);
    lane[k] = collage_hash64(lane[k] ^ v);
  }
  return collage_hash2(collage_hash2(lane[0], lane[1]), collage_hash2(lane[2], lane[3]) ^ len);
}

/* Sets out->id from n and every picture's size and pixels, and the source. */
static void seeds_finish(struct collage_seeds *out, const char *source)
{
  uint64_t h = collage_hash2(0x5eed1d, (uint64_t)out->n);
  for (int i = 0; i < out->n; i++) {
    const struct collage_image *im = &out->img[i];
    h = collage_hash2(h, ((uint64_t)(uint32_t)im->w << 32) | (uint32_t)im->h);
    h = seeds_hash_bytes(h, im->rgb, (size_t)im->w * (size_t)im->h * 3);
  }
  out->id = h;
  snprintf(out->source, sizeof(out->source), "%s", source);
}

/* Frees every picture; the set is empty afterwards (safe twice). */
void collage_seeds_free(struct collage_seeds *s)
{
  for (int i = 0; i < COLLAGE_MAX_SEEDS; i++)
    collage_image_free(&s->img[i]);
  s->n = 0;
}

/* ---------------- the procedural set ---------------- */

SEEDS_PLAIN static inline uint8_t seeds_clamp(int v)
{
  return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
}

/* One shape painted into im: a circle, a rectangle or a patch of stripes,
 * its colour a horizontal gradient between two random colours, blended
 * at 50..100 %.  r: the shape's random stream. */
SEEDS_PLAIN static void seeds_shape(struct collage_image *im, uint64_t r)
{
  const uint64_t a = collage_hash2(r, 0), b = collage_hash2(r, 1), c = collage_hash2(r, 2);
  const int type = (int)(a % 3);
  const int cx = (int)((a >> 8) % (uint64_t)im->w), cy = (int)((a >> 24) % (uint64_t)im->h);
  const int oct = (int)((a >> 40) % 6);                       /* sizes 4 .. 256, log-spread */
  const int rx = (4 << oct) + (int)((a >> 44) % (4u << oct));
  const int ry = type == 0 ? rx : (4 << oct) + (int)((a >> 52) % (4u << oct));
  const int alpha = 128 + (int)((b >> 48) % 129);
  const int period = 2 + (int)((b >> 56) % 15), dir = (int)((c >> 60) % 3);
  int c0[3], c1[3];
  for (int k = 0; k < 3; k++) {
    c0[k] = (int)((b >> (8 * k)) & 0xff);
    c1[k] = (int)((c >> (8 * k)) & 0xff);
  }
  const int x0 = cx - rx < 0 ? 0 : cx - rx, x1 = cx + rx >= im->w ? im->w - 1 : cx + rx;
  const int y0 = cy - ry < 0 ? 0 : cy - ry, y1 = cy + ry >= im->h ? im->h - 1 : cy + ry;
  for (int y = y0; y <= y1; y++) {
    uint8_t *row = im->rgb + (size_t)y * (size_t)im->w * 3;
    for (int x = x0; x <= x1; x++) {
      const int dx = x - cx, dy = y - cy;
      if (type == 0 && dx * dx + dy * dy > rx * rx)
        continue;
      if (type == 2 && (((dir == 0 ? x : dir == 1 ? y : x + y) / period) & 1))
        continue;
      const int t = (dx + rx) * 256 / (2 * rx + 1); /* 0 .. 255 across the shape */
      for (int k = 0; k < 3; k++) {
        const int col = (c0[k] * (256 - t) + c1[k] * t) >> 8;
        row[x * 3 + k] = (uint8_t)((row[x * 3 + k] * (256 - alpha) + col * alpha) >> 8);
      }
    }
  }
}

/* Paints procedural picture im of stream st: a four-corner colour
 * gradient, 24..63 shapes, then noise of -6..+6 per channel. */
SEEDS_PLAIN static void seeds_paint(struct collage_image *im, uint64_t st)
{
  const int W = SEEDS_PROC_W, H = SEEDS_PROC_H;
  const uint64_t corner = collage_hash2(st, 0), corner2 = collage_hash2(st, 1);
  int cc[4][3];
  for (int q = 0; q < 4; q++)
    for (int k = 0; k < 3; k++)
      cc[q][k] = (int)(((q < 2 ? corner : corner2) >> (8 * (k + 3 * (q & 1)))) & 0xff);
  for (int y = 0; y < H; y++) {
    uint8_t *row = im->rgb + (size_t)y * (size_t)W * 3;
    for (int x = 0; x < W; x++)
      for (int k = 0; k < 3; k++) {
        const int64_t top = (int64_t)cc[0][k] * (W - x) + (int64_t)cc[1][k] * x;
        const int64_t bot = (int64_t)cc[2][k] * (W - x) + (int64_t)cc[3][k] * x;
        row[x * 3 + k] = (uint8_t)((top * (H - y) + bot * y) / ((int64_t)W * H));
      }
  }
  const int shapes = 24 + (int)(collage_hash2(st, 2) % 40);
  for (int k = 0; k < shapes; k++)
    seeds_shape(im, collage_hash2(st, 16 + (uint64_t)k));
  const size_t bytes = (size_t)W * H * 3;
  const uint64_t noise = collage_hash2(st, 3);
  for (size_t i = 0; i < bytes; i += 8) {
    const uint64_t r = collage_hash2(noise, i / 8);
    for (size_t k = 0; k < 8 && i + k < bytes; k++)
      im->rgb[i + k] = seeds_clamp(im->rgb[i + k] + (int)((r >> (8 * k)) & 0xff) % 13 - 6);
  }
}

/* n deterministic 1024 x 768 pictures (seeds_paint).  Callers: tests, the
 * fallback of collage_seeds_load.  0, -EINVAL (n out of 1..64), -ENOMEM. */
int collage_seeds_procedural(int n, struct collage_seeds *out)
{
  memset(out, 0, sizeof(*out));
  if (n <= 0 || n > COLLAGE_MAX_SEEDS)
    return -EINVAL;
  for (int p = 0; p < n; p++) {
    if (collage_image_alloc(&out->img[p], SEEDS_PROC_W, SEEDS_PROC_H) != 0) {
      collage_seeds_free(out);
      return -ENOMEM;
    }
    out->n = p + 1;
    seeds_paint(&out->img[p], collage_hash2(SEEDS_PROC_STREAM, (uint64_t)p));
  }
  seeds_finish(out, "procedural");
  return 0;
}

/* ---------------- loading a folder ---------------- */

/* 1 when name ends in .png, .jpg or .jpeg (any case). */
static int seeds_is_picture(const char *name)
{
  const char *dot = strrchr(name, '.');
  return name[0] != '.' && dot &&
         (!strcasecmp(dot, ".png") || !strcasecmp(dot, ".jpg") || !strcasecmp(dot, ".jpeg"));
}

static int seeds_filter(const struct dirent *d)
{
  return seeds_is_picture(d->d_name);
}

/* Byte order of names (alphasort would follow the locale). */
static int seeds_by_name(const struct dirent **a, const struct dirent **b)
{
  return strcmp((*a)->d_name, (*b)->d_name);
}

/* Loads dir's pictures in name order (at most 64 that decode, each at
 * least 64 x 64, scaled down to fit 1024 x 1024); the procedural set when
 * dir is NULL, missing or holds none.  Callers: the driver.  0 or -errno
 * (-ENOMEM: nothing is kept); messages on log (may be NULL). */
int collage_seeds_load(const char *dir, struct collage_seeds *out, FILE *log)
{
  memset(out, 0, sizeof(*out));
  struct dirent **names = NULL;
  const int count = dir ? scandir(dir, &names, seeds_filter, seeds_by_name) : -1;
  const int scan_errno = errno;
  int fatal = 0;
  for (int i = 0; i < count && out->n < COLLAGE_MAX_SEEDS && !fatal; i++) {
    char path[4352], err[512];
    snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
    struct collage_image im;
    int rc = collage_image_read(path, &im, err, sizeof(err));
    if (rc == -ENOMEM) {
      fatal = rc;
      continue;
    }
    if (rc != 0) {
      if (log)
        fprintf(log, "collage: skipping seed picture %s\n", err);
      continue;
    }
    if (im.w < SEEDS_MIN_LOAD_SIDE || im.h < SEEDS_MIN_LOAD_SIDE) {
      if (log)
        fprintf(log, "collage: skipping seed picture %s: %dx%d, smaller than %dx%d\n", path, im.w, im.h,
                SEEDS_MIN_LOAD_SIDE, SEEDS_MIN_LOAD_SIDE);
      collage_image_free(&im);
      continue;
    }
    const int big = im.w > im.h ? im.w : im.h;
    if (big > COLLAGE_SEED_MAX_SIDE) {
      struct collage_image small;
      const int w = (int)(((int64_t)im.w * COLLAGE_SEED_MAX_SIDE + big / 2) / big);
      const int h = (int)(((int64_t)im.h * COLLAGE_SEED_MAX_SIDE + big / 2) / big);
      rc = collage_image_resize(&im, w, h, &small);
      collage_image_free(&im);
      if (rc != 0) {
        fatal = rc;
        continue;
      }
      im = small;
    }
    out->img[out->n++] = im;
  }
  for (int i = 0; i < count; i++)
    free(names[i]);
  free(names);
  if (fatal) {
    if (log)
      fprintf(log, "collage: loading the seed pictures of %s: %s\n", dir, strerror(-fatal));
    collage_seeds_free(out);
    return fatal;
  }
  if (out->n > 0) {
    seeds_finish(out, "debian");
    return 0;
  }
  if (log) {
    if (!dir)
      fprintf(log, "collage: no seed folder: using %d procedural pictures\n", SEEDS_PROC_N);
    else if (count < 0)
      fprintf(log, "collage: seed folder %s: %s: using %d procedural pictures\n", dir, strerror(scan_errno),
              SEEDS_PROC_N);
    else
      fprintf(log, "collage: no usable picture in %s: using %d procedural pictures\n", dir, SEEDS_PROC_N);
  }
  return collage_seeds_procedural(SEEDS_PROC_N, out);
}

/* ---------------- fetching from Debian packages ---------------- */

/* Runs argv in folder cwd, its output into the file errpath; waits (at
 * most SEEDS_CHILD_TIMEOUT_S).  The exit status, 127 when the program is
 * missing, -errno when it could not start, 124 when killed. */
static int seeds_run(char *const argv[], const char *cwd, const char *errpath)
{
  const pid_t pid = fork();
  if (pid < 0)
    return -errno;
  if (pid == 0) { /* the child: only async-signal-safe calls until exec */
    const int out = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int null = open("/dev/null", O_RDWR);
    if (out < 0 || null < 0 || chdir(cwd) != 0)
      _exit(126);
    dup2(null, 0);
    dup2(out, 1);
    dup2(out, 2);
    execvp(argv[0], argv);
    _exit(127);
  }
  const double t0 = bench_now();
  int status = 0;
  for (;;) {
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid)
      break;
    if (r < 0 && errno != EINTR)
      return -errno;
    if (bench_now() - t0 > SEEDS_CHILD_TIMEOUT_S) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return 124;
    }
    const struct timespec pause = {0, 50 * 1000 * 1000};
    nanosleep(&pause, NULL);
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The last non-empty line of a child's output file into buf ("" if none). */
static void seeds_last_line(const char *path, char *buf, size_t len)
{
  buf[0] = 0;
  FILE *f = fopen(path, "r");
  if (!f)
    return;
  char line[384];
  while (fgets(line, sizeof(line), f)) {
    line[strcspn(line, "\r\n")] = 0;
    if (line[0])
      snprintf(buf, len, "%s", line);
  }
  fclose(f);
}

/* The pictures the fetch found: paths under the extraction tree. */
struct seeds_found {
  char **path;
  int n, cap;
};

/* Collects, below folder path, the pictures under a data, backgrounds or
 * wallpapers folder (skimage's data, the backgrounds packages); symbolic
 * links are not followed.  0 or -ENOMEM. */
static int seeds_walk(const char *path, int depth, struct seeds_found *f)
{
  DIR *d = depth < 16 ? opendir(path) : NULL;
  if (!d)
    return 0;
  int rc = 0;
  for (struct dirent *e; rc == 0 && (e = readdir(d)) != NULL;) {
    char sub[4096];
    struct stat st;
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
        snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name) >= (int)sizeof(sub) || lstat(sub, &st) != 0)
      continue;
    if (S_ISDIR(st.st_mode)) {
      rc = seeds_walk(sub, depth + 1, f);
      continue;
    }
    if (!S_ISREG(st.st_mode) || !seeds_is_picture(e->d_name) ||
        (!strstr(sub, "/data/") && !strstr(sub, "/backgrounds/") && !strstr(sub, "/wallpapers/")))
      continue;
    if (f->n == f->cap) {
      const int cap = f->cap ? 2 * f->cap : 64;
      char **p = realloc(f->path, sizeof(char *) * (size_t)cap);
      if (!p) {
        rc = -ENOMEM;
        break;
      }
      f->path = p;
      f->cap = cap;
    }
    if ((f->path[f->n] = strdup(sub)) == NULL)
      rc = -ENOMEM;
    else
      f->n++;
  }
  closedir(d);
  return rc;
}

static int seeds_by_path(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* nftw callback of the clean-up: removes everything, deepest first. */
static int seeds_rm(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
  (void)st, (void)type, (void)ftw;
  remove(path);
  return 0;
}

/* 1 when im is a colour photo worth a seed: at least 256 x 256 and at
 * least 5 % of sampled pixels with channels 24 or more apart. */
static int seeds_is_colour_photo(const struct collage_image *im)
{
  if (im->w < SEEDS_MIN_FETCH_SIDE || im->h < SEEDS_MIN_FETCH_SIDE)
    return 0;
  uint64_t n = 0, colour = 0;
  for (size_t i = 0; i < (size_t)im->w * (size_t)im->h; i += 7, n++) {
    const uint8_t *p = im->rgb + i * 3;
    const int mx = p[0] > p[1] ? (p[0] > p[2] ? p[0] : p[2]) : (p[1] > p[2] ? p[1] : p[2]);
    const int mn = p[0] < p[1] ? (p[0] < p[2] ? p[0] : p[2]) : (p[1] < p[2] ? p[1] : p[2]);
    colour += mx - mn >= 24;
  }
  return colour * 20 >= n;
}

/* Copies src to dst (a new file).  0 or -errno. */
static int seeds_copy(const char *src, const char *dst)
{
  uint8_t buf[1 << 16];
  const int in = open(src, O_RDONLY | O_CLOEXEC);
  if (in < 0)
    return -errno;
  const int out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (out < 0) {
    const int e = errno;
    close(in);
    return -e;
  }
  int rc = 0;
  for (;;) {
    const ssize_t r = read(in, buf, sizeof(buf));
    if (r == 0)
      break;
    if (r < 0 || write(out, buf, (size_t)r) != r) {
      rc = r < 0 ? -errno : -EIO;
      break;
    }
  }
  close(in);
  if (close(out) != 0 && rc == 0)
    rc = -errno;
  if (rc != 0)
    unlink(dst);
  return rc;
}

/* 1 when dir holds at least one picture. */
static int seeds_dir_has_pictures(const char *dir)
{
  DIR *d = opendir(dir);
  if (!d)
    return 0;
  int found = 0;
  for (struct dirent *e; !found && (e = readdir(d)) != NULL;)
    found = seeds_is_picture(e->d_name);
  closedir(d);
  return found;
}

/* Downloads and unpacks each package into tmp (tmp/x/<package>/).  The
 * count of packages unpacked; *why gets the first failure. */
static int seeds_download(const char *tmp, char *why, size_t whylen)
{
  char list[] = COLLAGE_SEED_PACKAGES, errpath[3200], line[400];
  snprintf(errpath, sizeof(errpath), "%s/child.log", tmp);
  int unpacked = 0;
  for (char *save = NULL, *pkg = strtok_r(list, " ", &save); pkg; pkg = strtok_r(NULL, " ", &save)) {
    char *get[] = {"apt-get", "download", "-q", pkg, NULL};
    int rc = seeds_run(get, tmp, errpath);
    if (rc != 0) {
      seeds_last_line(errpath, line, sizeof(line));
      if (!why[0])
        snprintf(why, whylen, "%s", rc == 127 ? "apt-get not found" : rc == 124 ? "apt-get timed out"
                                     : line[0] ? line : "apt-get failed");
      continue;
    }
    /* the .deb apt-get left: <pkg>_<version>_<arch>.deb */
    char deb[3600] = "", dest[3200];
    DIR *d = opendir(tmp);
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
      const size_t l = strlen(pkg), el = strlen(e->d_name);
      if (!strncmp(e->d_name, pkg, l) && e->d_name[l] == '_' && el > 4 && !strcmp(e->d_name + el - 4, ".deb"))
        snprintf(deb, sizeof(deb), "%s/%s", tmp, e->d_name);
    }
    if (d)
      closedir(d);
    snprintf(dest, sizeof(dest), "%s/x/%s", tmp, pkg);
    char *x[] = {"dpkg", "-x", deb, dest, NULL};
    rc = !deb[0] ? -ENOENT : bench_mkdirs(dest) != 0 ? -errno : seeds_run(x, tmp, errpath);
    if (rc != 0) {
      seeds_last_line(errpath, line, sizeof(line));
      if (!why[0])
        snprintf(why, whylen, "%s", rc == 127 ? "dpkg not found" : line[0] ? line : "dpkg -x failed");
      continue;
    }
    unlink(deb);
    unpacked++;
  }
  return unpacked;
}

/* Fetches seed photographs into dir from the packages of
 * COLLAGE_SEED_PACKAGES (nothing when dir already holds pictures): every
 * colour photo of at least 256 x 256 and at most 8 MB under the packages'
 * data or backgrounds folders, copied to dir/<package>-<name> (at most 64).
 * Callers: the driver.  0, or -ENOENT (no archive, apt-get or dpkg, or no
 * photo in the packages) or another -errno, with one line on log. */
int collage_seeds_fetch(const char *dir, FILE *log)
{
  if (seeds_dir_has_pictures(dir))
    return 0;
  if (strlen(dir) > 3000) {
    if (log)
      fprintf(log, "collage: seed folder name too long: %.64s...\n", dir);
    return -ENAMETOOLONG;
  }
  int rc = bench_mkdirs(dir);
  char tmp[3100], why[400] = "";
  snprintf(tmp, sizeof(tmp), "%s/.fetch-XXXXXX", dir);
  if (rc != 0 || !mkdtemp(tmp)) {
    rc = rc ? rc : -errno;
    if (log)
      fprintf(log, "collage: cannot make the seed folder %s: %s\n", dir, strerror(-rc));
    return rc;
  }
  if (log)
    fprintf(log, "collage: fetching seed photographs (apt-get download %s) into %s\n", COLLAGE_SEED_PACKAGES,
            dir);
  const int unpacked = seeds_download(tmp, why, sizeof(why));
  struct seeds_found found = {0};
  char root[3200];
  snprintf(root, sizeof(root), "%s/x", tmp);
  if (unpacked > 0)
    seeds_walk(root, 0, &found);
  qsort(found.path, (size_t)found.n, sizeof(char *), seeds_by_path);
  int kept = 0;
  uint64_t bytes = 0;
  for (int i = 0; i < found.n && kept < COLLAGE_MAX_SEEDS; i++) {
    struct stat st;
    struct collage_image im;
    char err[512], dst[4400];
    if (stat(found.path[i], &st) != 0 || st.st_size > SEEDS_MAX_FILE ||
        collage_image_read(found.path[i], &im, err, sizeof(err)) != 0)
      continue;
    const int keep = seeds_is_colour_photo(&im);
    collage_image_free(&im);
    /* the package is the folder right under x/ */
    const char *pkg = found.path[i] + strlen(root) + 1;
    const char *base = strrchr(found.path[i], '/') + 1;
    snprintf(dst, sizeof(dst), "%s/%.*s-%s", dir, (int)strcspn(pkg, "/"), pkg, base);
    if (keep && seeds_copy(found.path[i], dst) == 0) {
      kept++;
      bytes += (uint64_t)st.st_size;
    }
  }
  for (int i = 0; i < found.n; i++)
    free(found.path[i]);
  free(found.path);
  nftw(tmp, seeds_rm, 16, FTW_DEPTH | FTW_PHYS);
  if (kept == 0) {
    if (log) {
      if (unpacked == 0)
        fprintf(log, "collage: no package archive reachable (apt-get download %s failed): %s\n",
                COLLAGE_SEED_PACKAGES, why[0] ? why : "unknown error");
      else
        fprintf(log, "collage: the packages %s hold no colour photograph\n", COLLAGE_SEED_PACKAGES);
    }
    return -ENOENT;
  }
  if (log)
    fprintf(log, "collage: fetched %d seed photographs (%.1f MB) into %s%s%s\n", kept, (double)bytes / 1e6, dir,
            why[0] ? "; some packages failed: " : "", why);
  return 0;
}
