/*
 * service_main.cu - `graph_service`: GAIA's updated-graph service on one
 * weighted graph file (docs/graphs.md, "The updated-graph service").
 * The graph is generated once into --dir (or read from --input) and
 * copied to NAME.service.csr, the file the writer changes; then every
 * version and share (service_run.h), a progress line per version and
 * share on stderr, JSON rows (--out), the table last on stdout.
 *
 * Exit status: 0 every checked round verified; 1 a round failed or
 * differed, or the graph could not be made or read; 2 bad options or no
 * usable GPU.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda_runtime.h>

#include "benchlib/datafile.h"
#include "benchlib/opts.h"
#include "benchlib/report.h"
#include "benchlib/util.h"
#include "graphs/loader.h"
#include "graphs/service_run.h"

/* Copy src to dst (written into dst.tmp, then renamed).  0 or -errno. */
static int svc_copy_file(const char *src, const char *dst, uint64_t size)
{
  char tmp[1200];
  snprintf(tmp, sizeof(tmp), "%s.tmp", dst);
  const int in = open(src, O_RDONLY | O_CLOEXEC);
  const int out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int rc = in < 0 || out < 0 ? -errno : 0;
  for (uint64_t done = 0; !rc && done < size;) {
    const ssize_t n = copy_file_range(in, NULL, out, NULL, size - done, 0);
    rc = n < 0 ? -errno : n == 0 ? -EIO : 0;
    done += n > 0 ? (uint64_t)n : 0;
  }
  if (in >= 0)
    close(in);
  if (out >= 0 && close(out) != 0 && !rc)
    rc = -errno;
  if (!rc && rename(tmp, dst) != 0)
    rc = -errno;
  return rc;
}

/* The original graph (generated or --input), its copy for the writer,
 * mapped, and the weights as generated. */
static int svc_prepare(const struct graph_svc_options *o, struct graph_svc_file *f)
{
  char src[1100], name[64];
  struct graph_err err;
  struct graph_header h;
  int made = 0, rc;
  memset(f, 0, sizeof(*f));
  if (o->input[0]) {
    char tmp[1024];
    snprintf(src, sizeof(src), "%s", o->input);
    snprintf(tmp, sizeof(tmp), "%s", o->input);
    snprintf(name, sizeof(name), "%s", basename(tmp));
  } else {
    graph_gen_name(&o->gen, name, sizeof(name));
    snprintf(src, sizeof(src), "%s/%s.csr", o->dir, name);
    const double t0 = bench_now();
    if ((rc = graph_ensure(src, &o->gen, o->regen, &made, &err)) != 0) {
      fprintf(stderr, "graph_service: %s\n", err.msg);
      return rc;
    }
    fprintf(stderr, "graph_service: %s %s in %.1f s\n", src, made ? "generated" : "kept (checksum verified)",
            bench_now() - t0);
  }
  if ((rc = graph_read_header(src, &h, &err)) != 0) {
    fprintf(stderr, "graph_service: %s\n", err.msg);
    return rc;
  }
  if (!(h.flags & GRAPH_WEIGHTED)) {
    fprintf(stderr, "graph_service: %s has no weights: the service rewrites weights\n", src);
    return -EINVAL;
  }
  snprintf(f->path, sizeof(f->path), "%s/%s.service.csr", o->input[0] ? "/tmp" : o->dir, name);
  if ((rc = svc_copy_file(src, f->path, h.file_size)) != 0) {
    fprintf(stderr, "graph_service: copying %s to %s: %s\n", src, f->path, strerror(-rc));
    return rc;
  }
  /* the writer changes the copy, so its data checksum is not checked */
  if ((rc = graph_open(f->path, 0, &f->g, &f->h, &err)) != 0) {
    fprintf(stderr, "graph_service: %s\n", err.msg);
    return rc;
  }
  if (!(f->weights0 = (uint32_t *)malloc(4 * (f->h.nedges ? f->h.nedges : 1)))) {
    fprintf(stderr, "graph_service: no memory for a copy of the weights\n");
    return -ENOMEM;
  }
  memcpy(f->weights0, f->g.weights, 4 * f->h.nedges);
  if (bench_warm_file(f->path) != 0)
    fprintf(stderr, "graph_service: %s: could not read it into the page cache\n", f->path);
  snprintf(f->name, sizeof(f->name), "%s", name);
  f->source = graph_source(&f->g);
  fprintf(stderr, "graph_service: %s: %llu vertices, %llu edges, %.2f GB, source %u\n", f->path,
          (unsigned long long)f->g.n, (unsigned long long)f->g.m, f->h.file_size / 1e9, f->source);
  return 0;
}

int main(int argc, char **argv)
{
  struct graph_svc_options o;
  struct graph_svc_file f;
  char err[512] = "";
  int rc = graph_svc_parse(argc, argv, &o, err, sizeof(err));
  if ((rc = bench_opts_exit("graph_service", rc, err, graph_svc_usage)) >= 0)
    return rc;
  if (graph_check_paths("graph_service", o.input, o.dir, o.out) != 0)
    return 2;
  if (bench_need_gpu("graph_service", o.device) != 0)
    return 2;
  char device_name[256];
  graph_report_context(o.device, GRAPH_COMMIT, "graph-service", device_name, sizeof(device_name));
  if (svc_prepare(&o, &f) != 0) {
    graph_free(&f.g);
    free(f.weights0);
    return 1;
  }
  const int failed = graph_svc_run_all(&o, &f) != 0;
  graph_svc_table(&o);
  if (failed)
    printf("\nFAILED: see the rows above\n");
  else
    printf("\nevery checked round verified (%s; up to %d rounds; rounds 0, 1, 1+%d, ... checked against the %s)\n",
           device_name, o.rounds, o.verify_every, o.ref == GRAPH_SVC_REF_CPU ? "cpu version" : "Dijkstra reference");
  graph_free(&f.g);
  free(f.weights0);
  unlink(f.path);
  bench_report_close();
  return failed;
}
