/*
 * hostfile.h - the host side of the exerciser that needs no CUDA (C11,
 * hostfile.c): the run's directory, the CPU's writes and truncations of the
 * files between kernels, the byte-for-byte comparison of a host file with
 * the shadow, and the watchdog that turns a hang into a report.
 */
#ifndef GPUFS_TESTS_FSX_HOSTFILE_H
#define GPUFS_TESTS_FSX_HOSTFILE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A new directory under parent (NULL: /tmp) into out (n bytes): 0 or -errno. */
int fsx_dir_make(const char *parent, char *out, size_t n);

/* Remove dir and the plain files and links in it (not recursive). */
void fsx_dir_remove(const char *dir);

/* pwrite len bytes of buf at off of path (created if missing), all of
 * them: 0 or -errno. */
int fsx_file_write(const char *path, const uint8_t *buf, uint64_t off, uint64_t len);

/* truncate(2): 0 or -errno. */
int fsx_file_truncate(const char *path, uint64_t len);

/* link(2): 0 or -errno. */
int fsx_file_link(const char *from, const char *to);

/* st_ino of path: 0 or -errno. */
int fsx_file_ino(const char *path, uint64_t *ino);

/* How a host file differs from what it must hold. */
struct fsx_diff {
  int64_t size;     /* the file's size */
  int64_t at;       /* the first differing offset (-1: only the size differs) */
  int want, got;    /* the bytes there (got -1: past the file's end) */
};

/* 0 when path holds exactly want[0, size); 1 when it differs (*d says
 * where); -errno when it cannot be read. */
int fsx_file_compare(const char *path, const uint8_t *want, uint64_t size, struct fsx_diff *d);

void fsx_sleep_ms(unsigned ms);
double fsx_now_s(void);

/* The watchdog: a thread that, when an armed phase runs past its deadline,
 * prints "fsx: HANG: <what> ...", calls dump(arg) (which prints what the
 * groups were doing) and ends the process with status 3 (a hung kernel
 * cannot be taken back).  arm replaces the armed phase.  0 or -errno. */
int fsx_watch_start(void (*dump)(void *), void *arg);
void fsx_watch_arm(unsigned seconds, const char *what);
void fsx_watch_disarm(void);
void fsx_watch_stop(void);

#ifdef __cplusplus
}
#endif

#endif /* GPUFS_TESTS_FSX_HOSTFILE_H */
