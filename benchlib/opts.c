/*
 * opts.c - the command-line convention of every program (opts.h): a table
 * over getopt_long, strict conversions that name the option and its rule,
 * checks of inputs and outputs, and progress lines that suit a terminal or
 * a log.
 */
#include "benchlib/opts.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "benchlib/util.h"

static int opts_errf(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int opts_errf(char *err, size_t len, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, len, fmt, ap);
  va_end(ap);
  return -EINVAL;
}

void bench_opts_init(struct bench_opts *p, int argc, char **argv, const struct bench_opt *table, size_t n,
                     char *err, size_t errlen)
{
  memset(p, 0, sizeof(*p));
  p->argc = argc;
  p->argv = argv;
  p->err = err;
  p->errlen = errlen;
  p->table = table;
  p->n = n < BENCH_OPTS_MAX ? n : BENCH_OPTS_MAX;
  /* ':' first: a missing value comes back as ':' instead of a message of getopt's own */
  size_t s = 0;
  p->shorts[s++] = ':';
  p->shorts[s++] = 'h';
  for (size_t i = 0; i < p->n; i++) {
    p->lopts[i] = (struct option){table[i].name, table[i].arg == BENCH_OPT_VALUE ? required_argument : no_argument,
                                  NULL, (int)(256 + i)};
    if (table[i].name[0] && !table[i].name[1] && table[i].name[0] != 'h') {
      p->shorts[s++] = table[i].name[0];
      if (table[i].arg == BENCH_OPT_VALUE)
        p->shorts[s++] = ':';
    }
  }
  p->lopts[p->n] = (struct option){"help", no_argument, NULL, 'h'};
  /* lopts[n + 1] stays zero: the end of the table */
  err[0] = '\0';
  opterr = 0;
  optind = 0; /* glibc: start over (a new argv) */
}

/* The option text the user wrote, up to any '=': "--tiles" of "--tiles=3". */
static const char *opts_written(struct bench_opts *p)
{
  const char *a = p->argv[optind - 1];
  if (a[0] != '-' || a[1] != '-') {
    snprintf(p->namebuf, sizeof(p->namebuf), "-%c", optopt ? optopt : '?');
    return p->namebuf;
  }
  size_t k = strcspn(a, "=");
  snprintf(p->namebuf, sizeof(p->namebuf), "%.*s", (int)(k < 60 ? k : 60), a);
  return p->namebuf;
}

static int opts_refused(struct bench_opts *p, int c)
{
  const char *a = opts_written(p);
  if (c == ':')
    return opts_errf(p->err, p->errlen, "%s needs a value", a);
  if (optopt != 0 && strchr(p->argv[optind - 1], '='))
    return opts_errf(p->err, p->errlen, "%s takes no value", a);
  if (a[1] == '-')
    return opts_errf(p->err, p->errlen, "unknown option '%s' (or an ambiguous abbreviation; --help lists them)",
                     a);
  return opts_errf(p->err, p->errlen, "unknown option '%s' (--help lists the options)", a);
}

int bench_opts_next(struct bench_opts *p)
{
  int li = -1;
  int c = getopt_long(p->argc, p->argv, p->shorts, p->lopts, &li);
  p->val = optarg;
  if (c == -1) {
    p->optind = optind;
    return BENCH_OPTS_END;
  }
  if (c == 'h')
    return BENCH_OPTS_HELP;
  if (c == '?' || c == ':')
    return opts_refused(p, c);
  size_t i = c >= 256 ? (size_t)(c - 256) : p->n;
  for (size_t k = 0; i == p->n && k < p->n; k++)
    if (p->table[k].name[0] == c && !p->table[k].name[1])
      i = k;
  if (i >= p->n)
    return opts_errf(p->err, p->errlen, "option '%c' not in the table", c);
  /* as the user wrote it: li is set only when a long option matched */
  snprintf(p->namebuf, sizeof(p->namebuf), "%s%s", li >= 0 ? "--" : "-", p->table[i].name);
  p->name = p->namebuf;
  return p->table[i].id;
}

int bench_opts_operands(struct bench_opts *p, int max)
{
  if (p->argc - p->optind <= max)
    return 0;
  return opts_errf(p->err, p->errlen, "'%s': an operand too many (at most %d)", p->argv[p->optind + max], max);
}

int bench_opts_is(const char *arg, const char *name, const char **val)
{
  const size_t n = strlen(name);
  if (strncmp(arg, name, n) || (arg[n] && arg[n] != '='))
    return 0;
  *val = arg[n] ? arg + n + 1 : NULL;
  return 1;
}

int bench_opts_fail(struct bench_opts *p, const char *rule)
{
  if (!p->val || !*p->val)
    return opts_errf(p->err, p->errlen, "%s '': %s", p->name, rule);
  return opts_errf(p->err, p->errlen, "%s %s: %s", p->name, p->val, rule);
}

/* Decimal digits first: strtod and strtoull also take spaces, signs, "inf", "nan" and hex. */
static int opts_starts_numeric(const char *s)
{
  return (s[0] >= '0' && s[0] <= '9') || (s[0] == '.' && s[1] >= '0' && s[1] <= '9');
}

int bench_opts_int(struct bench_opts *p, long lo, long hi, int *out)
{
  const char *s = p->val;
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  int ok = (opts_starts_numeric(s) || (s[0] == '-' && s[1] >= '0' && s[1] <= '9')) && !*end && !errno;
  if (!ok || v < lo || v > hi || v < INT_MIN || v > INT_MAX) {
    char rule[96];
    snprintf(rule, sizeof(rule), "an integer from %ld to %ld", lo, hi);
    return bench_opts_fail(p, rule);
  }
  *out = (int)v;
  return 0;
}

int bench_opts_u64(struct bench_opts *p, uint64_t lo, uint64_t hi, uint64_t *out)
{
  const char *s = p->val;
  char *end;
  int hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  errno = 0;
  unsigned long long v = strtoull(s, &end, hex ? 16 : 10);
  if (!opts_starts_numeric(s) || end == s + (hex ? 2 : 0) || *end || errno || v < lo || v > hi) {
    char rule[96];
    snprintf(rule, sizeof(rule), "an integer from %llu to %llu", (unsigned long long)lo, (unsigned long long)hi);
    return bench_opts_fail(p, rule);
  }
  *out = v;
  return 0;
}

/* A decimal number and one optional suffix from units (a letter each, muls
 * its factors): 0 and the value, or -1. */
static int opts_scaled(const char *s, const char *units, const double *muls, double *out)
{
  char *end;
  if (!opts_starts_numeric(s))
    return -1;
  double v = strtod(s, &end);
  if (*end) {
    const char *u = strchr(units, *end);
    if (!u || end[1])
      return -1;
    v *= muls[u - units];
  }
  if (!isfinite(v) || v > 1.8e19)
    return -1;
  *out = v;
  return 0;
}

int bench_opts_count(struct bench_opts *p, uint64_t lo, uint64_t hi, uint64_t *out)
{
  static const double muls[] = {1e3, 1e3, 1e6, 1e6};
  double v;
  if (opts_scaled(p->val, "kKmM", muls, &v) || v != floor(v) || v < (double)lo || v > (double)hi) {
    char rule[128];
    snprintf(rule, sizeof(rule), "a whole count from %llu to %llu (k: thousands, M: millions; e.g. 20k, 1M)",
             (unsigned long long)lo, (unsigned long long)hi);
    return bench_opts_fail(p, rule);
  }
  *out = (uint64_t)v;
  return 0;
}

int bench_opts_size(struct bench_opts *p, uint64_t lo, uint64_t hi, uint64_t *out)
{
  static const double muls[] = {0x1p10, 0x1p10, 0x1p20, 0x1p20, 0x1p30, 0x1p30, 0x1p40, 0x1p40};
  double v;
  if (opts_scaled(p->val, "kKmMgGtT", muls, &v) || v < (double)lo || v > (double)hi) {
    char rule[128], a[32], b[32];
    snprintf(rule, sizeof(rule), "a size from %s to %s (bytes, or with K, M, G, T: 500M, 8G)",
             bench_fmt_size(lo, a, sizeof(a)), bench_fmt_size(hi, b, sizeof(b)));
    return bench_opts_fail(p, rule);
  }
  *out = (uint64_t)v;
  return 0;
}

int bench_opts_double(struct bench_opts *p, double lo, double hi, double *out)
{
  double v;
  static const double none[] = {1};
  if (opts_scaled(p->val, "", none, &v) || !(v > lo) || v > hi) {
    char rule[96];
    snprintf(rule, sizeof(rule), "a number above %g and at most %g", lo, hi);
    return bench_opts_fail(p, rule);
  }
  *out = v;
  return 0;
}

/* The index of the name s[0 .. len) among c's, or -1. */
static int opts_name_find(const struct bench_names *c, const char *s, size_t len)
{
  for (int k = 0; k < c->n; k++)
    if (strlen(c->names[k]) == len && !strncmp(c->names[k], s, len))
      return k;
  return -1;
}

/* rule: why name s[0 .. len) of the list is refused (k: its index, -1 when unknown). */
static void opts_name_refusal(const struct bench_names *c, int k, const char *s, size_t len, char *rule, size_t cap)
{
  const int shown = (int)(len < 64 ? len : 64);
  if (k >= 0) {
    snprintf(rule, cap, "'%.*s' given twice", shown, s);
    return;
  }
  size_t at = (size_t)snprintf(rule, cap, "unknown %s '%.*s' (", c->what, shown, s);
  for (int j = 0; j < c->n && at < cap; j++)
    at += (size_t)snprintf(rule + at, cap - at, "%s%s", c->names[j], j + 1 < c->n ? ", " : ")");
}

int bench_opts_names(struct bench_opts *p, const struct bench_names *c, int *idx, int *count)
{
  char rule[320];
  *count = 0;
  for (const char *s = p->val; *s;) {
    const size_t len = strcspn(s, ",");
    const int k = len ? opts_name_find(c, s, len) : -2; /* -2: an empty item, skipped */
    int seen = 0;
    for (int i = 0; k >= 0 && i < *count; i++)
      seen |= idx[i] == k;
    if (k == -1 || seen) {
      opts_name_refusal(c, k, s, len, rule, sizeof(rule));
      return bench_opts_fail(p, rule);
    }
    if (k >= 0)
      idx[(*count)++] = k;
    s += len + (s[len] == ',');
  }
  if (*count)
    return 0;
  snprintf(rule, sizeof(rule), "no %s", c->what);
  return bench_opts_fail(p, rule);
}

int bench_opts_string(struct bench_opts *p, char *dst, size_t cap)
{
  if (!*p->val || strlen(p->val) >= cap) {
    char rule[64];
    snprintf(rule, sizeof(rule), "empty or longer than %zu characters", cap - 1);
    return bench_opts_fail(p, rule);
  }
  memcpy(dst, p->val, strlen(p->val) + 1);
  return 0;
}

int bench_check_input(const char *what, const char *path, int dir, char *err, size_t errlen)
{
  struct stat st;
  int e = 0;
  if (stat(path, &st) != 0)
    e = errno;
  else if (dir && !S_ISDIR(st.st_mode))
    e = ENOTDIR;
  else if (!dir && !S_ISREG(st.st_mode))
    e = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
  else if (access(path, dir ? R_OK | X_OK : R_OK) != 0)
    e = errno;
  if (e)
    opts_errf(err, errlen, "%s %s: %s", what, path, e == EINVAL ? "not a regular file" : strerror(e));
  return -e;
}

int bench_check_output(const char *what, const char *path, char *err, size_t errlen)
{
  struct stat st;
  char folder[4096];
  const char *slash = strrchr(path, '/');
  if (!*path || strlen(path) >= sizeof(folder))
    return opts_errf(err, errlen, "%s '%s': empty or too long", what, path);
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
    opts_errf(err, errlen, "%s %s: is a folder", what, path);
    return -EISDIR;
  }
  snprintf(folder, sizeof(folder), "%.*s", slash ? (int)(slash == path ? 1 : slash - path) : 1,
           slash ? path : ".");
  int e = 0;
  if (stat(folder, &st) != 0)
    e = errno;
  else if (!S_ISDIR(st.st_mode))
    e = ENOTDIR;
  else if (access(folder, W_OK | X_OK) != 0 || (access(path, F_OK) == 0 && access(path, W_OK) != 0))
    e = errno;
  if (e) {
    opts_errf(err, errlen, "%s %s: cannot write there (%s: %s)", what, path, folder, strerror(e));
    return -e;
  }
  return 0;
}

int bench_opts_exit(const char *prog, int rc, const char *err, const char *usage)
{
  if (rc == 0)
    return -1;
  if (rc > 0) {
    fputs(usage, stdout);
    return 0;
  }
  fprintf(stderr, "%s: %s\n%s --help lists the options.\n", prog, err, prog);
  return 2;
}

const char *bench_progress_begin(FILE *f)
{
  return isatty(fileno(f)) ? "\r" : "";
}

const char *bench_progress_end(FILE *f)
{
  return isatty(fileno(f)) ? "" : "\n";
}
