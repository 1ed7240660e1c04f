"""Grouped bar charts as hand-written SVG, and the helpers every plot of a
benchmark's JSON rows needs (the last run of a rows file, geometric means).
Standard library only; used by rodinia-io/plot.py and samples/collage/plot.py.
"""
import json
import math
from xml.sax.saxutils import escape

W, H, LEFT, TOP, BOTTOM = 1200, 420, 70, 60, 340


def last_run(rows):
    if not rows:
        return []
    date = rows[-1].get("date")
    return [r for r in rows if r.get("date") == date]


def load_last_run(path):
    """The rows of the last run in a JSON-lines rows file."""
    with open(path) as f:
        return last_run([json.loads(line) for line in f if line.strip()])


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
