/*
 * hostfile.c - the exerciser's host files and its watchdog (hostfile.h).
 *
 * The watchdog thread sleeps on a condition variable until the armed
 * phase's deadline (CLOCK_MONOTONIC); arm and disarm change the phase under
 * the mutex and wake it, so a phase that ends in time is never reported.
 */
#include "tests/fsx/hostfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int fsx_dir_make(const char *parent, char *out, size_t n)
{
  int w = snprintf(out, n, "%s/gpufs_fsx_XXXXXX", parent ? parent : "/tmp");
  if (w < 0 || (size_t)w >= n) return -ENAMETOOLONG;
  return mkdtemp(out) ? 0 : -errno;
}

void fsx_dir_remove(const char *dir)
{
  DIR *d = opendir(dir);
  if (d) {
    struct dirent *e;
    char p[4096];
    while ((e = readdir(d)) != NULL) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
      if (snprintf(p, sizeof p, "%s/%s", dir, e->d_name) < (int)sizeof p) unlink(p);
    }
    closedir(d);
  }
  rmdir(dir);
}

int fsx_file_write(const char *path, const uint8_t *buf, uint64_t off, uint64_t len)
{
  int fd = open(path, O_WRONLY | O_CREAT, 0644);
  if (fd < 0) return -errno;
  uint64_t done = 0;
  int err = 0;
  while (done < len) {
    ssize_t w = pwrite(fd, buf + done, len - done, (off_t)(off + done));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      err = w < 0 ? -errno : -EIO;
      break;
    }
    done += (uint64_t)w;
  }
  if (close(fd) != 0 && err == 0) err = -errno;
  return err;
}

int fsx_file_truncate(const char *path, uint64_t len)
{
  return truncate(path, (off_t)len) == 0 ? 0 : -errno;
}

int fsx_file_link(const char *from, const char *to)
{
  return link(from, to) == 0 ? 0 : -errno;
}

int fsx_file_ino(const char *path, uint64_t *ino)
{
  struct stat st;
  if (stat(path, &st) != 0) return -errno;
  *ino = (uint64_t)st.st_ino;
  return 0;
}

int fsx_file_compare(const char *path, const uint8_t *want, uint64_t size, struct fsx_diff *d)
{
  int fd = open(path, O_RDONLY);
  if (fd < 0) return -errno;
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int e = -errno;
    close(fd);
    return e;
  }
  d->size = st.st_size;
  d->at = -1;
  d->want = d->got = -1;
  enum { CHUNK = 1 << 20 };
  uint8_t *buf = malloc(CHUNK);
  if (!buf) {
    close(fd);
    return -ENOMEM;
  }
  int rc = 0;
  uint64_t have = (uint64_t)st.st_size < size ? (uint64_t)st.st_size : size;
  for (uint64_t off = 0; off < have && rc == 0;) {
    size_t n = have - off < CHUNK ? (size_t)(have - off) : CHUNK;
    ssize_t r = pread(fd, buf, n, (off_t)off);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      rc = r < 0 ? -errno : -EIO;
      break;
    }
    for (ssize_t i = 0; i < r; i++)
      if (buf[i] != want[off + (uint64_t)i]) {
        d->at = (int64_t)(off + (uint64_t)i);
        d->want = want[off + (uint64_t)i];
        d->got = buf[i];
        rc = 1;
        break;
      }
    off += (uint64_t)r;
  }
  if (rc == 0 && (uint64_t)st.st_size != size) {
    rc = 1;
    if ((uint64_t)st.st_size < size) {
      d->at = st.st_size;
      d->want = want[st.st_size];
    }
  }
  free(buf);
  close(fd);
  return rc;
}

void fsx_sleep_ms(unsigned ms)
{
  struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

double fsx_now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- the watchdog ---- */

static struct {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  pthread_t thread;
  int running, armed;
  struct timespec deadline;
  unsigned seconds;
  char what[256];
  void (*dump)(void *);
  void *arg;
} fsx_wd = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void *fsx_watch_main(void *unused)
{
  (void)unused;
  pthread_mutex_lock(&fsx_wd.mu);
  while (fsx_wd.running) {
    if (!fsx_wd.armed) {
      pthread_cond_wait(&fsx_wd.cv, &fsx_wd.mu);
      continue;
    }
    int r = pthread_cond_timedwait(&fsx_wd.cv, &fsx_wd.mu, &fsx_wd.deadline);
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    int late = now.tv_sec > fsx_wd.deadline.tv_sec ||
               (now.tv_sec == fsx_wd.deadline.tv_sec && now.tv_nsec >= fsx_wd.deadline.tv_nsec);
    if (r == ETIMEDOUT && fsx_wd.armed && late) {
      fprintf(stderr, "fsx: HANG: %s did not finish within %u s\n", fsx_wd.what, fsx_wd.seconds);
      if (fsx_wd.dump) fsx_wd.dump(fsx_wd.arg);
      fflush(stdout);
      fflush(stderr);
      _exit(3);
    }
  }
  pthread_mutex_unlock(&fsx_wd.mu);
  return NULL;
}

int fsx_watch_start(void (*dump)(void *), void *arg)
{
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&fsx_wd.cv, &ca);
  pthread_condattr_destroy(&ca);
  fsx_wd.dump = dump;
  fsx_wd.arg = arg;
  fsx_wd.running = 1;
  fsx_wd.armed = 0;
  int e = pthread_create(&fsx_wd.thread, NULL, fsx_watch_main, NULL);
  if (e) fsx_wd.running = 0;
  return -e;
}

void fsx_watch_arm(unsigned seconds, const char *what)
{
  pthread_mutex_lock(&fsx_wd.mu);
  clock_gettime(CLOCK_MONOTONIC, &fsx_wd.deadline);
  fsx_wd.deadline.tv_sec += seconds;
  fsx_wd.seconds = seconds;
  snprintf(fsx_wd.what, sizeof fsx_wd.what, "%s", what);
  fsx_wd.armed = 1;
  pthread_cond_signal(&fsx_wd.cv);
  pthread_mutex_unlock(&fsx_wd.mu);
}

void fsx_watch_disarm(void)
{
  pthread_mutex_lock(&fsx_wd.mu);
  fsx_wd.armed = 0;
  pthread_cond_signal(&fsx_wd.cv);
  pthread_mutex_unlock(&fsx_wd.mu);
}

void fsx_watch_stop(void)
{
  pthread_mutex_lock(&fsx_wd.mu);
  int was = fsx_wd.running;
  fsx_wd.running = 0;
  fsx_wd.armed = 0;
  pthread_cond_signal(&fsx_wd.cv);
  pthread_mutex_unlock(&fsx_wd.mu);
  if (was) pthread_join(fsx_wd.thread, NULL);
  pthread_cond_destroy(&fsx_wd.cv);
}
