/*
 * report.c - benchmark rows: JSON lines to the results file, table to stdout.
 */
#include "benchlib/report.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cuda_runtime_api.h>

#define BENCH_MAX_CONTEXT 16

static struct {
  FILE *file;
  struct bench_row *rows;
  int nrows, cap;
  int ncontext;
  char context_key[BENCH_MAX_CONTEXT][32];
  char context_val[BENCH_MAX_CONTEXT][128];
} g_report;

static const char *bench_status_name(enum bench_status st)
{
  switch (st) {
  case BENCH_OK: return "ok";
  case BENCH_CAPPED: return "capped";
  case BENCH_NA: return "n/a";
  case BENCH_FAILED: return "failed";
  }
  return "?";
}

static void bench_copy(char *dst, size_t cap, const char *src)
{
  snprintf(dst, cap, "%s", src ? src : "");
}

int bench_report_open(const char *path)
{
  bench_report_close();
  if (!path)
    return 0;
  g_report.file = fopen(path, "a");
  return g_report.file ? 0 : -errno;
}

void bench_report_close(void)
{
  if (g_report.file)
    fclose(g_report.file);
  g_report.file = NULL;
}

void bench_report_context(const char *key, const char *value)
{
  int i;
  for (i = 0; i < g_report.ncontext; i++)
    if (strcmp(g_report.context_key[i], key) == 0)
      break;
  if (i == BENCH_MAX_CONTEXT)
    return;
  bench_copy(g_report.context_key[i], sizeof(g_report.context_key[i]), key);
  bench_copy(g_report.context_val[i], sizeof(g_report.context_val[i]), value);
  if (i == g_report.ncontext)
    g_report.ncontext++;
}

void bench_row_init(struct bench_row *r, const char *workload, const char *config, double value,
                    const char *unit)
{
  memset(r, 0, sizeof(*r));
  bench_copy(r->workload, sizeof(r->workload), workload);
  bench_copy(r->config, sizeof(r->config), config);
  bench_copy(r->unit, sizeof(r->unit), unit);
  r->value = value;
  r->baseline_value = NAN;
  r->status = BENCH_OK;
}

void bench_row_baseline(struct bench_row *r, const char *name, double value)
{
  bench_copy(r->baseline, sizeof(r->baseline), name);
  r->baseline_value = value;
}

void bench_row_status(struct bench_row *r, enum bench_status st, const char *fmt, ...)
{
  va_list ap;
  r->status = st;
  va_start(ap, fmt);
  vsnprintf(r->note, sizeof(r->note), fmt, ap);
  va_end(ap);
}

static struct bench_extra *bench_row_slot(struct bench_row *r, const char *key)
{
  struct bench_extra *e;
  if (r->nextra == BENCH_MAX_EXTRA)
    return NULL;
  e = &r->extra[r->nextra++];
  bench_copy(e->key, sizeof(e->key), key);
  return e;
}

void bench_row_u64(struct bench_row *r, const char *key, uint64_t v)
{
  struct bench_extra *e = bench_row_slot(r, key);
  if (e) {
    e->kind = BENCH_EXTRA_U64;
    e->u = v;
  }
}

void bench_row_f64(struct bench_row *r, const char *key, double v)
{
  struct bench_extra *e = bench_row_slot(r, key);
  if (e) {
    e->kind = BENCH_EXTRA_F64;
    e->f = v;
  }
}

void bench_row_str(struct bench_row *r, const char *key, const char *v)
{
  struct bench_extra *e = bench_row_slot(r, key);
  if (e) {
    e->kind = BENCH_EXTRA_STR;
    bench_copy(e->s, sizeof(e->s), v);
  }
}

double bench_row_ratio(const struct bench_row *r)
{
  if (!(r->value > 0) || !(r->baseline_value > 0) || isinf(r->value) || isinf(r->baseline_value))
    return NAN;
  return r->value / r->baseline_value;
}

/* ---------------- JSON ---------------- */

static void bench_json_str(FILE *f, const char *s)
{
  fputc('"', f);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      fprintf(f, "\\%c", c);
    else if (c < 0x20)
      fprintf(f, "\\u%04x", c);
    else
      fputc(c, f);
  }
  fputc('"', f);
}

static void bench_json_num(FILE *f, double v)
{
  if (isnan(v) || isinf(v))
    fputs("null", f);
  else
    fprintf(f, "%.6g", v);
}

static void bench_json_key(FILE *f, const char *key)
{
  fputs(", ", f);
  bench_json_str(f, key);
  fputs(": ", f);
}

void bench_report_json(FILE *f, const struct bench_row *r)
{
  int i;
  fputs("{\"workload\": ", f);
  bench_json_str(f, r->workload);
  bench_json_key(f, "config");
  bench_json_str(f, r->config);
  bench_json_key(f, "value");
  bench_json_num(f, r->value);
  bench_json_key(f, "unit");
  bench_json_str(f, r->unit);
  bench_json_key(f, "baseline");
  if (r->baseline[0])
    bench_json_str(f, r->baseline);
  else
    fputs("null", f);
  bench_json_key(f, "baseline_value");
  bench_json_num(f, r->baseline_value);
  bench_json_key(f, "ratio");
  bench_json_num(f, bench_row_ratio(r));
  bench_json_key(f, "status");
  bench_json_str(f, bench_status_name(r->status));
  bench_json_key(f, "note");
  bench_json_str(f, r->note);
  for (i = 0; i < r->nextra; i++) {
    const struct bench_extra *e = &r->extra[i];
    bench_json_key(f, e->key);
    if (e->kind == BENCH_EXTRA_U64)
      fprintf(f, "%llu", (unsigned long long)e->u);
    else if (e->kind == BENCH_EXTRA_F64)
      bench_json_num(f, e->f);
    else
      bench_json_str(f, e->s);
  }
  for (i = 0; i < g_report.ncontext; i++) {
    bench_json_key(f, g_report.context_key[i]);
    bench_json_str(f, g_report.context_val[i]);
  }
  fputc('}', f);
}

int bench_report_add(const struct bench_row *r)
{
  if (g_report.nrows == g_report.cap) {
    int cap = g_report.cap ? 2 * g_report.cap : 64;
    struct bench_row *rows =
        (struct bench_row *)realloc(g_report.rows, (size_t)cap * sizeof(*rows));
    if (!rows)
      return -ENOMEM;
    g_report.rows = rows;
    g_report.cap = cap;
  }
  g_report.rows[g_report.nrows++] = *r;
  if (!g_report.file)
    return 0;
  bench_report_json(g_report.file, r);
  fputc('\n', g_report.file);
  return fflush(g_report.file) == 0 ? 0 : -errno;
}

int bench_report_count(void)
{
  return g_report.nrows;
}

int bench_report_failures(void)
{
  int i, n = 0;
  for (i = 0; i < g_report.nrows; i++)
    n += g_report.rows[i].status == BENCH_FAILED;
  return n;
}

/* ---------------- table ---------------- */

#define BENCH_COLS 7

static void bench_fmt_num(char *buf, size_t cap, double v)
{
  if (isnan(v))
    snprintf(buf, cap, "-");
  else if (fabs(v) >= 100)
    snprintf(buf, cap, "%.1f", v);
  else if (fabs(v) >= 1)
    snprintf(buf, cap, "%.2f", v);
  else
    snprintf(buf, cap, "%.3f", v);
}

/* The table's cells of row r (or the header when r is NULL). */
static void bench_cells(const struct bench_row *r, char cell[BENCH_COLS][192])
{
  static const char *head[BENCH_COLS] = {"workload", "configuration", "value",  "baseline",
                                         "base value", "ratio",      "status"};
  char num[64];
  int i;

  if (!r) {
    for (i = 0; i < BENCH_COLS; i++)
      snprintf(cell[i], 192, "%s", head[i]);
    return;
  }
  snprintf(cell[0], 192, "%s", r->workload);
  snprintf(cell[1], 192, "%s", r->config);
  bench_fmt_num(num, sizeof(num), r->value);
  if (isnan(r->value))
    snprintf(cell[2], 192, "-");
  else
    snprintf(cell[2], 192, "%s %s", num, r->unit);
  snprintf(cell[3], 192, "%s", r->baseline[0] ? r->baseline : "-");
  bench_fmt_num(num, sizeof(num), r->baseline_value);
  snprintf(cell[4], 192, "%s", num);
  if (isnan(bench_row_ratio(r)))
    snprintf(cell[5], 192, "-");
  else
    snprintf(cell[5], 192, "%.3fx", bench_row_ratio(r));
  if (r->status == BENCH_OK)
    snprintf(cell[6], 192, "ok");
  else
    snprintf(cell[6], 192, "%s: %.160s", bench_status_name(r->status), r->note);
}

void bench_report_table(FILE *f)
{
  char cell[BENCH_COLS][192];
  int width[BENCH_COLS] = {0};
  int i, c;

  for (i = -1; i < g_report.nrows; i++) {
    bench_cells(i < 0 ? NULL : &g_report.rows[i], cell);
    for (c = 0; c < BENCH_COLS; c++) {
      int len = (int)strlen(cell[c]);
      if (len > width[c])
        width[c] = len;
    }
  }
  for (i = -1; i < g_report.nrows; i++) {
    bench_cells(i < 0 ? NULL : &g_report.rows[i], cell);
    for (c = 0; c < BENCH_COLS; c++) {
      /* text columns left-aligned, numbers right-aligned, no trailing blanks */
      int right = c == 2 || c == 4 || c == 5;
      if (c == BENCH_COLS - 1)
        fprintf(f, "%s\n", cell[c]);
      else
        fprintf(f, right ? "%*s  " : "%-*s  ", width[c], cell[c]);
    }
    if (i < 0) {
      for (c = 0; c < BENCH_COLS; c++)
        fprintf(f, "%s%.*s", c ? "  " : "",
                c == BENCH_COLS - 1 ? 6 : width[c],
                "------------------------------------------------------------------------"
                "------------------------------------------------------------------------"
                "--------------------------------------------------------");
      fputc('\n', f);
    }
  }
}

void bench_report_run_context(const char *device, const char *commit)
{
  char buf[128], host[64];
  time_t now = time(NULL);
  struct tm tm;
  int rt = 0, drv = 0;

  localtime_r(&now, &tm);
  bench_report_context("device", device);
  strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S%z", &tm);
  bench_report_context("date", buf);
  if (gethostname(host, sizeof(host)) == 0) {
    host[sizeof(host) - 1] = '\0';
    bench_report_context("host", host);
  }
  cudaRuntimeGetVersion(&rt);
  cudaDriverGetVersion(&drv);
  snprintf(buf, sizeof(buf), "runtime %d, driver %d", rt, drv);
  bench_report_context("cuda", buf);
  snprintf(buf, sizeof(buf), "%ld", sysconf(_SC_PAGESIZE));
  bench_report_context("host_page_size", buf);
  if (commit) {
    bench_report_context("commit", commit);
    return;
  }
  FILE *git = popen("git rev-parse --short HEAD 2>/dev/null", "r");
  if (git) {
    if (fgets(buf, sizeof(buf), git)) {
      buf[strcspn(buf, "\n")] = '\0';
      bench_report_context("commit", buf);
    }
    pclose(git);
  }
}

int bench_need_gpu(const char *prog, int device)
{
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    fprintf(stderr, "%s needs a CUDA GPU and this machine has none usable (%s).\n", prog,
            e != cudaSuccess ? cudaGetErrorString(e) : "no device");
    return -ENODEV;
  }
  if (device < 0 || device >= n) {
    fprintf(stderr, "%s: --device %d, but this machine has %d CUDA GPU%s (0 to %d).\n", prog, device, n,
            n == 1 ? "" : "s", n - 1);
    return -ENODEV;
  }
  return 0;
}
