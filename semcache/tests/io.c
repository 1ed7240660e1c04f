/*
 * io.c - an ordinary CBLAS program that moves its matrices with system
 * calls and stdio between BLAS calls (dropin_test.sh): results written
 * with write, pwrite, writev and fwrite while the drop-in may still hold
 * them on the device, inputs read anew with read, pread, readv and fread
 * (one of them partly), a result sent and received over a socket pair,
 * and an input's pages replaced (a fixed mapping, MADV_DONTNEED).  Every byte written is compared with what the program computed by
 * plain loops, and every product after a read with the loops' product of
 * the new input.  Exits 0 and prints "io: N checks ok", or names the
 * first failure and exits 1.  (Through the drop-in the kernel's access to
 * a protected page would fail those calls with EFAULT: dropin_io.c.)
 */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

enum { N = 64, BYTES = N * N * 8 };

static int checks;

static void ensure(int ok, const char *what)
{
  checks++;
  if (!ok) {
    printf("FAILED %s\n", what);
    exit(1);
  }
}

/* page-aligned, whole pages: the drop-in protects every page of it */
static double *mat(unsigned seed)
{
  double *p = aligned_alloc(4096, BYTES);
  for (int i = 0; i < N * N; i++) p[i] = (double)((i * 7 + seed * 13) % 17) - 8.0;
  return p;
}

static void ref(const double *a, const double *b, double *c)
{
  for (int j = 0; j < N; j++)
    for (int i = 0; i < N; i++) {
      double s = 0;
      for (int l = 0; l < N; l++) s += a[i + l * N] * b[l + j * N];
      c[i + j * N] = s;
    }
}

static void gemm(const double *a, const double *b, double *c)
{
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1, a, N, b, N, 0, c, N);
}

/* a temporary file holding src's bytes, rewound */
static FILE *file_of(const double *src)
{
  FILE *f = tmpfile();
  ensure(f && fwrite(src, 1, BYTES, f) == BYTES && fflush(f) == 0, "a temporary file");
  rewind(f);
  return f;
}

int main(void)
{
  /* the protocol under test: every call on the device, whatever its size,
   * unless the caller chose crossovers (the drop-in reads the variable at
   * the first call) */
  setenv("SEMCACHE_CROSSOVER", "0", 0);
  double *a = mat(1), *b = mat(2), *c = mat(3), *want = mat(4), *got = mat(5), *other = mat(6);
  FILE *tmp = tmpfile();
  ensure(tmp != NULL, "tmpfile");
  const int fd = fileno(tmp);

  /* results out: write, pwrite, writev, fwrite of c, computed last */
  /* (each at its own offset: k * BYTES for the k-th) */
  gemm(a, b, c);
  ensure(write(fd, c, BYTES) == BYTES, "write of a result");
  gemm(b, a, c);
  ensure(pwrite(fd, c, BYTES, BYTES) == BYTES, "pwrite of a result");
  gemm(a, a, c);
  struct iovec iov[2] = {{c, BYTES / 2}, {(char *)c + BYTES / 2, BYTES / 2}};
  ensure(lseek(fd, 2 * BYTES, SEEK_SET) == 2 * BYTES && writev(fd, iov, 2) == BYTES,
         "writev of a result");
  gemm(b, b, c);
  ensure(fseek(tmp, 3 * BYTES, SEEK_SET) == 0 && fwrite(c, 8, N * N, tmp) == N * N &&
             fflush(tmp) == 0,
         "fwrite of a result");
  const double *ins[4][2] = {{a, b}, {b, a}, {a, a}, {b, b}};
  for (int k = 0; k < 4; k++) {
    ref(ins[k][0], ins[k][1], want);
    ensure(pread(fd, got, BYTES, (off_t)k * BYTES) == BYTES, "pread back");
    ensure(memcmp(got, want, BYTES) == 0, "the file holds each result as computed");
  }

  /* inputs in: read, pread, readv, fread into a (cached on the device) */
  const int ways = 4;
  for (int w = 0; w < ways; w++) {
    double *fresh = mat(10 + w);
    FILE *f = file_of(fresh);
    gemm(a, b, c); /* a is on the device now */
    long n = 0;
    if (w == 0) n = read(fileno(f), a, BYTES);
    if (w == 1) n = pread(fileno(f), a, BYTES, 0);
    if (w == 2) {
      struct iovec v[2] = {{a, BYTES / 4}, {(char *)a + BYTES / 4, BYTES - BYTES / 4}};
      n = readv(fileno(f), v, 2);
    }
    if (w == 3) n = (long)fread(a, 1, BYTES, f);
    ensure(n == BYTES, "a read into an input");
    ensure(memcmp(a, fresh, BYTES) == 0, "the input holds the file's bytes");
    gemm(a, b, c);
    ref(fresh, b, want);
    ensure(memcmp(c, want, BYTES) == 0, "the next product uses the input read");
    fclose(f);
    free(fresh);
  }

  /* half of a result replaced by a read: the other half is the product */
  gemm(a, b, c);
  ref(a, b, want);
  FILE *f = file_of(other);
  ensure(read(fileno(f), c, BYTES / 2) == BYTES / 2, "a read into half a result");
  memcpy(want, other, BYTES / 2);
  ensure(memcmp(c, want, BYTES) == 0, "half read, half computed");
  fclose(f);

  /* over a socket pair: send a result, receive it into an input */
  int sv[2];
  ensure(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "socketpair");
  gemm(a, b, c);
  ref(a, b, want);
  gemm(c, b, got); /* c and b cached */
  ensure(send(sv[0], c, 4096, 0) == 4096, "send of a result");
  ensure(recv(sv[1], b, 4096, MSG_WAITALL) == 4096, "recv into an input");
  ensure(memcmp(b, want, 4096) == 0, "the input holds the result's bytes");
  close(sv[0]);
  close(sv[1]);

  /* memory replaced under a cached input: a fixed mapping over it, then
   * madvise(MADV_DONTNEED): both leave zeros, which the next product uses */
  double *m = mmap(NULL, BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ensure(m != MAP_FAILED, "mmap");
  double *zero = calloc(N * N, sizeof(double));
  for (int round = 0; round < 2; round++) {
    memcpy(m, a, BYTES);
    gemm(m, b, c); /* m on the device */
    ref(a, b, want);
    ensure(memcmp(c, want, BYTES) == 0, "a product of a mapped input");
    if (round == 0)
      ensure(mmap(m, BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == m,
             "a fixed mapping over an input");
    else
      ensure(madvise(m, BYTES, MADV_DONTNEED) == 0, "madvise(MADV_DONTNEED) of an input");
    ensure(memcmp(m, zero, BYTES) == 0, "the new pages are zeros");
    gemm(m, b, c);
    ensure(memcmp(c, zero, BYTES) == 0, "the next product uses the zeros, not the cached copy");
  }
  munmap(m, BYTES);
  free(zero);

  fclose(tmp);
  printf("io: %d checks ok\n", checks);
  return 0;
}
