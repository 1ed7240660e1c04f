/*
 * opts.h - the one command-line convention of every program here (the
 * benchmarks, the samples, the applications, the exerciser, the MPI
 * programs), on getopt_long:
 *
 *   --opt value and --opt=value; --help (and -h) everywhere, exit 0;
 *   an unknown option is named; a bad number or size names its option and
 *   the rule it breaks ("--reps abc: an integer from 1 to 100");
 *   inputs and outputs are checked before any long work.
 *
 * A program lists its options in a table, and its parser returns 0, 1 for
 * --help or -EINVAL with err, which main hands to bench_opts_exit:
 *
 *   static const struct bench_opt table[] = {{"reps", BENCH_OPT_VALUE, OPT_REPS}, ...};
 *   bench_opts_init(&p, argc, argv, table, n, err, errlen);
 *   while (rc == 0 && (id = bench_opts_next(&p)) != BENCH_OPTS_END)
 *     rc = id == BENCH_OPTS_HELP ? 1 : id < 0 ? id : my_option(&p, id, o);
 *
 * where my_option switches on id (case OPT_REPS: return bench_opts_int(p,
 * 1, 100, &o->reps); ...).  Operands (file names, benchmark names) are
 * argv[p.optind .. argc) once bench_opts_next returned BENCH_OPTS_END
 * (getopt_long moves them there).
 * Plain C; not thread-safe (getopt_long's state is global).
 */
#ifndef BENCH_OPTS_H
#define BENCH_OPTS_H

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BENCH_OPTS_MAX 48 /* options in one table */

enum bench_opt_arg {
  BENCH_OPT_FLAG = 0,  /* --quick */
  BENCH_OPT_VALUE = 1, /* --reps 3, --reps=3 */
};

/* What bench_opts_next returns besides a table id; ids start at BENCH_OPTS_FIRST. */
enum bench_opts_step {
  BENCH_OPTS_END = 0,   /* no more options: operands from p->optind */
  BENCH_OPTS_HELP = 1,  /* --help or -h */
  BENCH_OPTS_FIRST = 2, /* the smallest id a table may use */
};

struct bench_opt {
  const char *name; /* long name without "--" ("reps") */
  enum bench_opt_arg arg;
  int id; /* >= BENCH_OPTS_FIRST */
};

struct bench_opts {
  int argc;
  char **argv;
  int optind;        /* after BENCH_OPTS_END: the first operand */
  const char *name;  /* the option just returned, "--reps" */
  const char *val;   /* its value; NULL for a flag */
  char *err;         /* where a refusal is written */
  size_t errlen;
  const struct bench_opt *table;
  size_t n;
  struct option lopts[BENCH_OPTS_MAX + 2];
  char shorts[2 * BENCH_OPTS_MAX + 4]; /* ":h" and the one-letter names */
  char namebuf[64];                    /* p->name of a short option */
};

/* Set up over argv with the table (at most BENCH_OPTS_MAX entries; a name
 * of one letter is also its short option, "-v").  err: errlen bytes that
 * receive the message of a refusal. */
void bench_opts_init(struct bench_opts *p, int argc, char **argv, const struct bench_opt *table, size_t n,
                     char *err, size_t errlen);

/* The next option: its table id, BENCH_OPTS_HELP, BENCH_OPTS_END, or
 * -EINVAL with p->err naming an unknown option or a missing value. */
int bench_opts_next(struct bench_opts *p);

/* After BENCH_OPTS_END: 0 when at most max operands follow the options,
 * else -EINVAL naming the first one too many ("'x': an operand too many
 * (at most 0)"). */
int bench_opts_operands(struct bench_opts *p, int max);

/* The current value as an int in [lo, hi]; 0 or -EINVAL ("--reps abc: an
 * integer from 1 to 100"). */
int bench_opts_int(struct bench_opts *p, long lo, long hi, int *out);

/* The same for an unsigned 64-bit integer (decimal or 0x hexadecimal). */
int bench_opts_u64(struct bench_opts *p, uint64_t lo, uint64_t hi, uint64_t *out);

/* A count with an optional decimal suffix, k (1e3) or M (1e6): "20k", "10M". */
int bench_opts_count(struct bench_opts *p, uint64_t lo, uint64_t hi, uint64_t *out);

/* A size in bytes with an optional binary suffix K, M, G or T ("500M",
 * "1.5G", "4096") in [lo, hi]. */
int bench_opts_size(struct bench_opts *p, uint64_t lo, uint64_t hi, uint64_t *out);

/* A decimal number in (lo, hi] ("a number above 0 and at most 16"). */
int bench_opts_double(struct bench_opts *p, double lo, double hi, double *out);

/* The choices of a list option: names[0 .. n), each a `what` in messages. */
struct bench_names {
  const char *const *names;
  int n;
  const char *what; /* "version" */
};

/* The current value as a comma-separated list of choices, each at most
 * once ("cpu,gpufs-4k"): idx[0 .. *count) their indexes in names, in the
 * order given (idx has room for c->n).  0 or -EINVAL naming the option and
 * the fault: "unknown version 'x' (cpu, gpufs-4k)", "'cpu' given twice",
 * "no version". */
int bench_opts_names(struct bench_opts *p, const struct bench_names *c, int *idx, int *count);

/* Copy the value (a path or a name) into dst; refused when empty or of
 * cap bytes or more. */
int bench_opts_string(struct bench_opts *p, char *dst, size_t cap);

/* For a program that looks at argv before a parser does (the MPI programs
 * hand the rest on): 1 when arg is NAME ("--size") or NAME=VALUE, with *val
 * the VALUE or NULL; else 0. */
int bench_opts_is(const char *arg, const char *name, const char **val);

/* Refuse the current value: "NAME VALUE: rule" into p->err; -EINVAL. */
int bench_opts_fail(struct bench_opts *p, const char *rule);

/* An input the program will read: a readable regular file (or a folder when
 * dir is 1).  0 or -errno with "WHAT PATH: why" in err. */
int bench_check_input(const char *what, const char *path, int dir, char *err, size_t errlen);

/* An output the program will write: its folder exists and is writable, and
 * the path is not a folder.  0 or -errno with "WHAT PATH: why" in err. */
int bench_check_output(const char *what, const char *path, char *err, size_t errlen);

/* What main does with a parser's result (0, 1 for --help, -errno with err):
 * 1 prints usage on stdout and gives 0; -errno prints "prog: err" and a
 * hint on stderr and gives 2; 0 gives -1 (go on). */
int bench_opts_exit(const char *prog, int rc, const char *err, const char *usage);

/* Progress lines: on a terminal a line is redrawn in place ("\r" before,
 * nothing after); elsewhere (a log) each update is its own line. */
const char *bench_progress_begin(FILE *f);
const char *bench_progress_end(FILE *f);

#ifdef __cplusplus
}
#endif
#endif /* BENCH_OPTS_H */
