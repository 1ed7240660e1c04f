#!/usr/bin/env python3
"""Bar plot of a rodinia-io run: end-to-end speedup over cpu-io per
benchmark and version, from the JSON rows the `rodinia` program appends.

Usage: python3 rodinia-io/plot.py ROWS.jsonl OUT.svg

When the file holds several runs, only the last one (the last row's
"date") is drawn.  One group of bars per benchmark (expert, gpufs-4k,
gpufs-64k), plus the geometric mean; a dashed line at 1 (cpu-io).
Failed rows (no speedup) are left out.  Standard library only; the SVG is
written by hand.
"""
import json
import math
import sys
from xml.sax.saxutils import escape

VERSIONS = ("expert", "gpufs-4k", "gpufs-64k")
COLORS = {"expert": "#2ca02c", "gpufs-4k": "#1f77b4", "gpufs-64k": "#ff7f0e"}
W, H, LEFT, TOP, BOTTOM = 900, 420, 70, 60, 340


def last_run(rows):
    if not rows:
        return []
    date = rows[-1].get("date")
    return [r for r in rows if r.get("date") == date]


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    with open(argv[1]) as f:
        rows = last_run([json.loads(line) for line in f if line.strip()])
    if not rows:
        sys.stderr.write("%s: no rows\n" % argv[1])
        return 1
    benches = []
    speed = {}
    for r in rows:
        b, v, s = r["workload"], r.get("version"), r.get("speedup_cpuio")
        if b not in benches:
            benches.append(b)
        if v in VERSIONS and isinstance(s, (int, float)) and s > 0:
            speed[(b, v)] = s
    groups = benches + ["geomean"]
    for v in VERSIONS:
        vals = [speed[(b, v)] for b in benches if (b, v) in speed]
        if vals:
            speed[("geomean", v)] = math.exp(sum(map(math.log, vals)) / len(vals))
    top = max([1.0] + list(speed.values())) * 1.15
    gw = (W - LEFT - 20) / len(groups)
    bw = gw * 0.8 / len(VERSIONS)

    def y(v):
        return BOTTOM - (BOTTOM - TOP) * v / top

    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif" font-size="12">' % (W, H),
           '<rect width="100%" height="100%" fill="white"/>']
    first = rows[0]
    title = "rodinia-io: end-to-end speedup over cpu-io (%s, %s, %s)" % (
        first.get("device", "?"), first.get("date", "?")[:10],
        first.get("config", "").split(" ")[1] if " " in first.get("config", "") else "")
    out.append('<text x="%d" y="25" font-size="15">%s</text>' % (LEFT, escape(title)))
    ticks = 5
    for i in range(ticks + 1):
        v = top * i / ticks
        out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>' % (LEFT, W - 20, y(v), y(v)))
        out.append('<text x="%d" y="%.1f" text-anchor="end">%.1fx</text>' % (LEFT - 6, y(v) + 4, v))
    out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#555" stroke-dasharray="5,4"/>' %
               (LEFT, W - 20, y(1), y(1)))
    for gi, g in enumerate(groups):
        x0 = LEFT + gi * gw + gw * 0.1
        for vi, v in enumerate(VERSIONS):
            s = speed.get((g, v))
            if s is None:
                continue
            x = x0 + vi * bw
            out.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>' %
                       (x, y(s), bw - 2, BOTTOM - y(s), COLORS[v]))
            out.append('<text x="%.1f" y="%.1f" text-anchor="middle" font-size="9">%.1f</text>' %
                       (x + bw / 2 - 1, y(s) - 3, s))
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>' %
                   (LEFT + gi * gw + gw / 2, BOTTOM + 18, escape(g)))
    for vi, v in enumerate(VERSIONS):
        x = LEFT + vi * 140
        out.append('<rect x="%d" y="%d" width="12" height="12" fill="%s"/>' % (x, BOTTOM + 40, COLORS[v]))
        out.append('<text x="%d" y="%d">%s</text>' % (x + 18, BOTTOM + 51, v))
    out.append('<text x="%d" y="%d" fill="#555">dashed: cpu-io (1x)</text>' % (LEFT + 3 * 140, BOTTOM + 51))
    out.append("</svg>")
    with open(argv[2], "w") as f:
        f.write("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
