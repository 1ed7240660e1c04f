#!/usr/bin/env python3
"""Bar plot of a graphs run, from the JSON rows the `graphs` program
appends.

Usage: python3 graphs/plot.py ROWS.jsonl OUT.svg

OUT.svg: end-to-end speedup over the cpu version (every core), one group
of bars per graph and algorithm (resident, zero-copy, uvm, uvm-rm,
gpufs) plus the geometric mean; a dashed line at 1.
When the file holds several runs, only the last one (the last row's
"date") is drawn; rows that did not verify are left out.  Drawn with
matplotlib (benchlib/plots.py).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchlib"))
from plots import chart, geomean, load_last_run  # noqa: E402

VERSIONS = ("resident", "zero-copy", "uvm", "uvm-rm", "gpufs")
COLORS = {"resident": "#7f7f7f", "zero-copy": "#2ca02c", "uvm": "#d62728", "uvm-rm": "#ff9896",
          "gpufs": "#1f77b4"}


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    rows = [r for r in load_last_run(argv[1]) if r.get("verified") == "yes"]
    if not rows:
        sys.stderr.write("%s: no verified rows\n" % argv[1])
        return 1
    groups, speed = [], {}
    for r in rows:
        g = "%s %s" % (r.get("graph", "?"), r["workload"])
        if g not in groups:
            groups.append(g)
        x = r.get("x_cpu")
        if r.get("version") in VERSIONS and isinstance(x, (int, float)) and x > 0:
            speed[(g, r["version"])] = x
    for v in VERSIONS:
        vals = [speed[(g, v)] for g in groups if (g, v) in speed]
        if vals:
            speed[("geomean", v)] = geomean(vals)
    first = rows[0]
    limit = first.get("limit_bytes") or 0
    where = "%s, %s%s" % (first.get("device", "?"), first.get("date", "?")[:10],
                          ", GPU memory for the graph %.1f GB" % (limit / 1e9) if limit else "")
    chart(argv[2], "graphs: end-to-end speedup over the cpu version (%s)" % where, groups + ["geomean"],
          VERSIONS, COLORS, speed, "x", ref=1.0, ref_label="dashed: cpu (1x)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
