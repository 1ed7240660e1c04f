/*
 * report.h - benchmark results: rows kept in memory, each appended as one
 * JSON line to the results file as soon as it is added (a run that dies
 * keeps what it measured), and an aligned table printed last on stdout.
 *
 * A row is (workload, config, value, unit, baseline, baseline_value, ratio,
 * status), the run's context (device, date, ...: bench_report_context) and
 * extra fields of its own (page_size, libgpufs counters, ...).
 * Plain C; callable from .c and .cu files.
 */
#ifndef BENCH_REPORT_H
#define BENCH_REPORT_H

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The most extra fields a row holds (gpufs_bench's registered cold rows have
 * 51). */
#define BENCH_MAX_EXTRA 56

/* What a row's value is. */
enum bench_status {
  BENCH_OK = 0,     /* measured in full */
  BENCH_CAPPED = 1, /* measured over part of the work: the time cap stopped it */
  BENCH_NA = 2,     /* could not be measured here (no cuFile, ...): note says why */
  BENCH_FAILED = 3  /* an error or wrong data: note says what */
};

enum bench_extra_kind { BENCH_EXTRA_U64, BENCH_EXTRA_F64, BENCH_EXTRA_STR };

struct bench_extra {
  char key[32];
  enum bench_extra_kind kind;
  uint64_t u;
  double f;
  char s[128];
};

struct bench_row {
  char workload[32];     /* seq, rand, ceiling, ... */
  char config[160];      /* "page=4K cache=8G ..." */
  double value;          /* NaN when not measured */
  char unit[16];         /* GB/s, Mpages/s */
  char baseline[32];     /* "" when none */
  double baseline_value; /* NaN when none or not measured */
  enum bench_status status;
  char note[256];
  int nextra;
  struct bench_extra extra[BENCH_MAX_EXTRA];
};

/* Append rows to path (created if missing); NULL: keep them in memory only.
 * 0 or -errno. */
int bench_report_open(const char *path);
void bench_report_close(void);

/* A field of every row from now on (device, date, host, ...); at most 16. */
void bench_report_context(const char *key, const char *value);

/* The context every benchmark's rows carry: device (its name), date, host,
 * cuda (runtime and driver versions), host_page_size, commit (the given
 * one, e.g. taken at build time; NULL: `git rev-parse` of the working
 * folder, where there is one). */
void bench_report_run_context(const char *device, const char *commit);

/* Before a program's first other CUDA call: 0 when CUDA device `device`
 * can be used; otherwise one sentence on stderr ("stream needs a CUDA GPU
 * and this machine has none usable (...).") and -ENODEV. */
int bench_need_gpu(const char *prog, int device);

/* Start a row: status BENCH_OK, no baseline, no extras. */
void bench_row_init(struct bench_row *r, const char *workload, const char *config, double value,
                    const char *unit);
void bench_row_baseline(struct bench_row *r, const char *name, double value);
/* Mark the row capped / n/a / failed, with a printf-style note. */
void bench_row_status(struct bench_row *r, enum bench_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void bench_row_u64(struct bench_row *r, const char *key, uint64_t v);
void bench_row_f64(struct bench_row *r, const char *key, double v);
void bench_row_str(struct bench_row *r, const char *key, const char *v);

/* value / baseline_value, or NaN when either is missing or not positive. */
double bench_row_ratio(const struct bench_row *r);

/* Keep a copy of r and append its JSON line to the file.  0 or -errno
 * (the row is kept in memory even when the file write fails). */
int bench_report_add(const struct bench_row *r);

/* Write r as one JSON object (no newline) to f. */
void bench_report_json(FILE *f, const struct bench_row *r);

/* The aligned table of every row added so far. */
void bench_report_table(FILE *f);

/* Rows added so far, and how many of them are BENCH_FAILED. */
int bench_report_count(void);
int bench_report_failures(void);

#ifdef __cplusplus
}
#endif
#endif /* BENCH_REPORT_H */
