#!/usr/bin/env python3
"""Bar plots of a SemCache benchmark run, from the JSON rows
semcache/bench/run.py appends.

Usage: python3 semcache/bench/plot.py ROWS.jsonl PREFIX

Writes, from the file's last run (the last row's "date"):
  PREFIX-structdyn.svg  the application: speedup over the no-cache drop-in
                        per input size, one bar per configuration
  PREFIX-chain.svg      the microbenchmark: the same per matrix size n
  PREFIX-bytes.svg      bytes sent to the GPU by write-through and
                        write-back as a share of the no-cache drop-in's,
                        per program and size
A dashed line marks the no-cache drop-in (1x; 100%).  Rows that failed or
were skipped, and figures a run did not report, draw no bar; a chart with
no bars at all is left out with a note on stderr.  The device every row
names is in the titles (rows from SEMCACHE_DEVICE=host say so there).
Drawn with matplotlib (benchlib/plots.py).
"""
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "benchlib"))
from plots import chart, load_last_run  # noqa: E402

SPEED_SERIES = ("openblas", "system-blas", "nvblas", "write-through", "write-back")
BYTES_SERIES = ("write-through", "write-back")
COLORS = {"openblas": "#7f7f7f", "system-blas": "#bcbd22", "nvblas": "#2ca02c",
          "write-through": "#ff7f0e", "write-back": "#1f77b4"}


def groups_of(rows, program):
    """The sizes of a program in the order they ran."""
    out = []
    for r in rows:
        if r["program"] == program and str(r["size"]) not in out:
            out.append(str(r["size"]))
    return out


def speed_chart(rows, program, path, where):
    values = {}
    for r in rows:
        s = r.get("speedup_nocache")
        if r["program"] == program and r["status"] == "ok" and r["version"] != "nocache" and s:
            values[(str(r["size"]), r["version"])] = s
    series = [v for v in SPEED_SERIES if any(k[1] == v for k in values)]
    if not values:
        return "no speedups over nocache for %s" % program
    what = "structdyn (application)" if program == "structdyn" else "chain of products (microbenchmark)"
    chart(path, "SemCache %s: speedup over the no-cache drop-in (%s)" % (what, where),
          groups_of(rows, program), series, COLORS, values, "x", ref=1.0, ref_label="dashed: nocache (1x)")
    return None


def bytes_chart(rows, path, where):
    values, groups = {}, []
    for r in rows:
        cut = r.get("h2d_cut")
        if r["status"] != "ok" or r["version"] not in BYTES_SERIES or cut is None:
            continue
        g = "%s %s" % (r["program"], r["size"])
        if g not in groups:
            groups.append(g)
        values[(g, r["version"])] = 100.0 * (1.0 - cut)
    if not values:
        return "no byte counts"
    chart(path, "SemCache: bytes sent to the GPU, %% of the no-cache drop-in's (%s)" % where, groups,
          BYTES_SERIES, COLORS, values, "%", ref=100.0, ref_label="dashed: nocache (100%)")
    return None


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    rows = load_last_run(argv[1])
    if not rows:
        sys.stderr.write("%s: no rows\n" % argv[1])
        return 1
    where = "%s, %s" % (rows[-1].get("device", "?"), rows[-1].get("date", "?")[:10])
    made = 0
    for name, draw in (("structdyn", lambda p: speed_chart(rows, "structdyn", p, where)),
                       ("chain", lambda p: speed_chart(rows, "chain", p, where)),
                       ("bytes", lambda p: bytes_chart(rows, p, where))):
        path = "%s-%s.svg" % (argv[2], name)
        why = draw(path)
        if why:
            sys.stderr.write("plot: %s left out: %s\n" % (path, why))
        else:
            print("plot: %s" % path)
            made += 1
    return 0 if made else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
