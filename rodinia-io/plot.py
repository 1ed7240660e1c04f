#!/usr/bin/env python3
"""Bar plots of a rodinia-io run, from the JSON rows the `rodinia` program
appends.

Usage: python3 rodinia-io/plot.py ROWS.jsonl OUT.svg

OUT.svg: end-to-end speedup over cpu-io, one group of bars per benchmark
(expert, gpufs-4k, gpufs-64k) plus the geometric mean; a dashed line at 1.
OUT-io.svg (OUT with "-io" before the extension): the I/O bandwidth of the
four versions per benchmark, GB/s.
When the file holds several runs, only the last one (the last row's
"date") is drawn; the rows of the small-cache run (full_cache_ratio) and
failed rows are left out.  Drawn with matplotlib (benchlib/plots.py).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchlib"))
from plots import chart, geomean, load_last_run  # noqa: E402

VERSIONS = ("expert", "gpufs-4k", "gpufs-64k")
COLORS = {"expert": "#2ca02c", "gpufs-4k": "#1f77b4", "gpufs-64k": "#ff7f0e"}


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    rows = load_last_run(argv[1])
    rows = [r for r in rows if "full_cache_ratio" not in r and r.get("status") != "failed"]
    if not rows:
        sys.stderr.write("%s: no rows\n" % argv[1])
        return 1
    benches = []
    speed, io = {}, {}
    for r in rows:
        b, v = r["workload"], r.get("version")
        if b not in benches:
            benches.append(b)
        s = r.get("speedup_cpuio")
        if v in VERSIONS and isinstance(s, (int, float)) and s > 0:
            speed[(b, v)] = s
        g = r.get("io_gbps")
        if isinstance(g, (int, float)) and g > 0:
            io[(b, v)] = g
    for v in VERSIONS:
        vals = [speed[(b, v)] for b in benches if (b, v) in speed]
        if vals:
            speed[("geomean", v)] = geomean(vals)
    for v in ("cpu-io",) + VERSIONS:
        vals = [io[(b, v)] for b in benches if (b, v) in io]
        if vals:
            io[("geomean", v)] = geomean(vals)
    first = rows[0]
    where = "%s, %s" % (first.get("device", "?"), first.get("date", "?")[:10])
    chart(argv[2], "rodinia-io: end-to-end speedup over cpu-io (%s)" % where, benches + ["geomean"],
          VERSIONS, COLORS, speed, "x", ref=1.0, ref_label="dashed: cpu-io (1x)")
    base, dot, ext = argv[2].rpartition(".")
    io_path = base + "-io." + ext if dot else argv[2] + "-io"
    chart(io_path, "rodinia-io: I/O bandwidth, GB/s (%s)" % where, benches + ["geomean"],
          ("cpu-io",) + VERSIONS, dict(COLORS, **{"cpu-io": "#9467bd"}), io, "")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
