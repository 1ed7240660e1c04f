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
failed rows are left out.  Standard library only; the SVG is written by
hand.
"""
import json
import math
import sys
from xml.sax.saxutils import escape

VERSIONS = ("expert", "gpufs-4k", "gpufs-64k")
COLORS = {"expert": "#2ca02c", "gpufs-4k": "#1f77b4", "gpufs-64k": "#ff7f0e"}
W, H, LEFT, TOP, BOTTOM = 1200, 420, 70, 60, 340


def last_run(rows):
    if not rows:
        return []
    date = rows[-1].get("date")
    return [r for r in rows if r.get("date") == date]


def geomean(vals):
    return math.exp(sum(map(math.log, vals)) / len(vals))


def chart(path, title, groups, series, colors, values, unit, ref=None, ref_label=""):
    """values[(group, series)] -> bar height; ref: a dashed line."""
    top = max([ref or 0.0] + list(values.values())) * 1.15 or 1.0
    gw = (W - LEFT - 20) / len(groups)
    bw = gw * 0.8 / len(series)

    def y(v):
        return BOTTOM - (BOTTOM - TOP) * v / top

    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif" font-size="12">' % (W, H),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="25" font-size="15">%s</text>' % (LEFT, escape(title))]
    for i in range(6):
        v = top * i / 5
        out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>' % (LEFT, W - 20, y(v), y(v)))
        out.append('<text x="%d" y="%.1f" text-anchor="end">%.1f%s</text>' % (LEFT - 6, y(v) + 4, v, unit))
    if ref:
        out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#555" stroke-dasharray="5,4"/>' %
                   (LEFT, W - 20, y(ref), y(ref)))
    for gi, g in enumerate(groups):
        x0 = LEFT + gi * gw + gw * 0.1
        for vi, v in enumerate(series):
            h = values.get((g, v))
            if h is None:
                continue
            x = x0 + vi * bw
            out.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>' %
                       (x, y(h), bw - 2, BOTTOM - y(h), colors[v]))
            out.append('<text x="%.1f" y="%.1f" text-anchor="middle" font-size="8">%.1f</text>' %
                       (x + bw / 2 - 1, y(h) - 3, h))
        out.append('<text x="%.1f" y="%d" text-anchor="middle" font-size="11">%s</text>' %
                   (LEFT + gi * gw + gw / 2, BOTTOM + 18, escape(g)))
    for vi, v in enumerate(series):
        x = LEFT + vi * 130
        out.append('<rect x="%d" y="%d" width="12" height="12" fill="%s"/>' % (x, BOTTOM + 40, colors[v]))
        out.append('<text x="%d" y="%d">%s</text>' % (x + 18, BOTTOM + 51, v))
    if ref_label:
        out.append('<text x="%d" y="%d" fill="#555">%s</text>' %
                   (LEFT + len(series) * 130, BOTTOM + 51, escape(ref_label)))
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    with open(argv[1]) as f:
        rows = last_run([json.loads(line) for line in f if line.strip()])
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
