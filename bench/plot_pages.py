#!/usr/bin/env python3
"""Plot libgpufs read rate against page size from a gpufs_bench JSON-lines file.

Usage: python3 bench/plot_pages.py RESULTS.jsonl OUT.svg

Writes one SVG with two panels sharing a log2 page-size axis (4K .. 256K):
  left:  "seq" (cold GPU cache, from the rows whose baseline is "ceiling"),
         with dashed reference lines for the baselines named in SEQ_REFS,
         each taken from the baseline_value of the seq rows compared with it;
  right: "hit" (every page already in the GPU cache: 10-20x faster, so it
         gets its own y scale), with its "d2d" baseline as a reference line.
Rows without a numeric value (n/a, failed) are skipped. When the file holds
several runs (latest.jsonl grows by appending), only the last run (the last
row's "date") is drawn. The field meanings are in docs/benchmarks.md.
Standard library only; the SVG is written by hand.
"""
import json
import math
import sys
from xml.sax.saxutils import escape

SEQ_REFS = ("ceiling", "expert")  # add "naive" here to draw it too
W, H, PANEL_W, TOP, BOTTOM, LEFT = 920, 400, 400, 60, 330, 70
COLORS = {"seq": "#1f77b4", "hit": "#d62728", "ceiling": "#555",
          "expert": "#2ca02c", "naive": "#9467bd", "d2d": "#555"}


def load(path):
    rows = [json.loads(line) for line in open(path) if line.strip()]
    last = rows[-1].get("date") if rows else None
    return [r for r in rows if r.get("date") == last]


def size_label(n):
    return "%dM" % (n >> 20) if n >= 1 << 20 else "%dK" % (n >> 10)


def nice_ticks(top, count=5):
    """Ticks from 0 in steps of 1, 2 or 5 x 10^k, covering top."""
    raw = top / count
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    return [i * step for i in range(int(math.ceil(top / step)) + 1)]


def panel(x0, title, points, refs, name):
    """SVG elements of one chart; points = [(page_size, GB/s)], refs = {name: GB/s}."""
    out, x1 = [], x0 + PANEL_W - 130        # room on the right for labels
    sizes = [p for p, _ in points] + [4096, 262144]
    lo, hi = math.log2(min(sizes)) - 0.5, math.log2(max(sizes)) + 0.5  # margins
    yt = nice_ticks(max([v for _, v in points] + list(refs.values())) * 1.05)
    sx = lambda p: x0 + (math.log2(p) - lo) / (hi - lo) * (x1 - x0)
    sy = lambda v: BOTTOM - v / yt[-1] * (BOTTOM - TOP)
    out.append('<text x="%g" y="%d" font-weight="bold">%s</text>'
               % (x0, TOP - 12, escape(title)))
    for v in yt:                                          # y grid and labels
        out.append('<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="#e4e4e4"/>'
                   % (x0, sy(v), x1, sy(v)))
        out.append('<text x="%g" y="%.1f" text-anchor="end">%g</text>'
                   % (x0 - 6, sy(v) + 4, v))
    e = math.ceil(lo)
    while e <= hi:                                        # x ticks: powers of 4
        if e % 2 == 0:
            out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#000"/>'
                       % (sx(2 ** e), BOTTOM, sx(2 ** e), BOTTOM + 5))
            out.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>'
                       % (sx(2 ** e), BOTTOM + 20, size_label(2 ** e)))
        e += 1
    out.append('<path d="M%g %d V%d H%g" fill="none" stroke="#000"/>'
               % (x0, TOP, BOTTOM, x1))
    out.append('<text x="%g" y="%d" text-anchor="middle">page size</text>'
               % ((x0 + x1) / 2, BOTTOM + 42))
    out.append('<text transform="translate(%g %d) rotate(-90)" text-anchor="middle">'
               'GB/s</text>' % (x0 - 48, (TOP + BOTTOM) // 2))
    for ref, v in sorted(refs.items(), key=lambda kv: -kv[1]):
        c = COLORS.get(ref, "#555")
        out.append('<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="%s" '
                   'stroke-dasharray="6 4"/>' % (x0, sy(v), x1, sy(v), c))
        out.append('<text x="%g" y="%.1f" fill="%s">%s %.4g</text>'
                   % (x1 + 6, sy(v) + 4, c, escape(ref), v))
    if points:
        c = COLORS.get(name, "#000")
        xy = ["%.1f,%.1f" % (sx(p), sy(v)) for p, v in points]
        out.append('<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>'
                   % (" ".join(xy), c))
        for p, v in points:
            out.append('<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s">'
                       '<title>%s %s: %.4g GB/s</title></circle>'
                       % (sx(p), sy(v), c, name, size_label(p), v))
            out.append('<text x="%.1f" y="%.1f" text-anchor="middle" fill="%s" stroke="#fff" '
                       'stroke-width="3" paint-order="stroke">%.4g</text>'
                       % (sx(p), sy(v) - 9, c, v))
        last_v = points[-1][1]
        out.append('<text x="%g" y="%.1f" fill="%s" font-weight="bold">%s</text>'
                   % (x1 + 6, sy(last_v) + 4 + 12, c, name))
    return out


def series(rows, workload, baseline):
    """[(page_size, GB/s)] of workload's rows compared with baseline, and the baseline value."""
    sel = [r for r in rows if r.get("workload") == workload and r.get("baseline") == baseline
           and r.get("unit") == "GB/s" and isinstance(r.get("value"), (int, float))
           and r.get("page_size")]
    pts = sorted((int(r["page_size"]), float(r["value"])) for r in sel)
    ref = [r["baseline_value"] for r in sel if isinstance(r.get("baseline_value"), (int, float))]
    return pts, (ref[0] if ref else None)


def main(src, dst):
    rows = load(src)
    seq, _ = series(rows, "seq", "ceiling")
    seq_refs = {b: v for b in SEQ_REFS for v in [series(rows, "seq", b)[1]] if v is not None}
    hit, d2d = series(rows, "hit", "d2d")
    if not seq and not hit:
        sys.exit("%s: no seq or hit rows with a GB/s value" % src)
    ctx = rows[0]
    bits = [ctx.get(k) for k in ("device", "date", "host")] + \
           ["commit " + ctx["commit"] if ctx.get("commit") else None,
            ctx.get("mode") and ctx["mode"] + " run"]
    title = "libgpufs read rate vs page size: " + ", ".join(str(b) for b in bits if b)
    svg = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">' % (W, H, W, H),
           '<rect width="100%" height="100%" fill="#fff"/>',
           '<text x="%d" y="24" text-anchor="middle" font-size="14" font-weight="bold">%s</text>'
           % (W // 2, escape(title))]
    svg += panel(LEFT, "seq: cold GPU cache (GB/s)", seq, seq_refs, "seq")
    svg += panel(LEFT + PANEL_W + 60, "hit: pages already in GPU cache (GB/s)", hit,
                 {"d2d": d2d} if d2d is not None else {}, "hit")
    svg.append("</svg>")
    with open(dst, "w") as f:
        f.write("\n".join(svg) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__.split("\n\n")[1])
    main(sys.argv[1], sys.argv[2])
