#!/usr/bin/env python3
"""Plot libgpufs read rate against page size, and against the readahead
window, from a gpufs_bench JSON-lines file.

Usage: python3 bench/plot_pages.py RESULTS.jsonl OUT.svg [RA_OUT.svg]

RA_OUT.svg defaults to OUT.svg with "-ra" before its extension. A file that
has no rows for one of the two charts (a run with --only) gets a note on
stderr instead of that chart; neither is an error.

OUT.svg: two panels sharing a log2 page-size axis (4K .. 256K):
  left:  "seq" (cold GPU cache, from the rows whose baseline is "ceiling"),
         with dashed reference lines for the baselines named in SEQ_REFS,
         each taken from the baseline_value of the seq rows compared with it;
  right: "hit" (every page already in the GPU cache: 10-20x faster, so it
         gets its own y scale), with its "d2d" baseline as a reference line.
RA_OUT.svg: one panel, the "ra" rows with 4K pages and 4K greads against
their readahead window (readahead_max: 0 = off .. 128K, evenly spaced),
with dashed reference lines for the ra row with 64K pages, 64K greads and
no readahead (what small calls are measured against) and for the expert
baseline.
Rows without a numeric value (n/a, failed) are skipped. When the file holds
several runs (latest.jsonl grows by appending), only the last run (the last
row's "date") is drawn. The field meanings are in docs/benchmarks.md.
Standard library only; the SVG is written by hand.
"""
import json
import math
import os
import re
import sys
from xml.sax.saxutils import escape

SEQ_REFS = ("ceiling", "expert")  # add "naive" here to draw it too
W, H, PANEL_W, TOP, BOTTOM, LEFT = 920, 400, 400, 60, 330, 70
RA_PANEL_W = 700  # the readahead chart is alone: the width of both panels
REF64 = "64K pages, 64K greads, ra 0"  # the ra chart's reference line
COLORS = {"seq": "#1f77b4", "hit": "#d62728", "ceiling": "#555",
          "expert": "#2ca02c", "naive": "#9467bd", "d2d": "#555",
          "ra": "#8c564b", REF64: "#ff7f0e"}
RA_WINDOWS = (0, 16384, 32768, 65536, 131072)  # the full plan's; ticks even when missing


def load(path):
    rows = [json.loads(line) for line in open(path) if line.strip()]
    last = rows[-1].get("date") if rows else None
    return [r for r in rows if r.get("date") == last]


def size_label(n):
    return "%dM" % (n >> 20) if n >= 1 << 20 else "%dK" % (n >> 10) if n else "0"


def parse_size(text):
    """Bytes of a config size such as "4K", "1M", "0"."""
    m = re.fullmatch(r"(\d+)([KMGT]?)", text)
    return int(m.group(1)) << (10 * " KMGT".index(m.group(2) or " ")) if m else None


def readahead(row):
    """A row's readahead window in bytes: its readahead_max field, else "ra=" in its config."""
    if isinstance(row.get("readahead_max"), int):
        return row["readahead_max"]
    m = re.search(r"(?:^| )ra=(\S+)", row.get("config", ""))
    return parse_size(m.group(1)) if m else None


def page_axis(points):
    """log2 page sizes, 4K .. 256K at least, a tick every power of 4:
    (position in 0..1, [(x, label)], axis title, point label)."""
    sizes = [p for p, _ in points] + [4096, 262144]
    lo, hi = math.log2(min(sizes)) - 0.5, math.log2(max(sizes)) + 0.5  # margins
    ticks = [(2 ** e, size_label(2 ** e)) for e in range(math.ceil(lo), math.floor(hi) + 1)
             if e % 2 == 0]
    return (lambda p: (math.log2(p) - lo) / (hi - lo)), ticks, "page size", size_label


def window_axis(points):
    """Readahead windows evenly spaced (0 has no log), one tick each."""
    ws = sorted(set(RA_WINDOWS) | {w for w, _ in points})
    ticks = [(w, size_label(w)) for w in ws]
    return ((lambda w: (ws.index(w) + 0.5) / len(ws)), ticks,
            "readahead window (readahead_max; 0 = off)", lambda w: "ra=" + size_label(w))


def nice_ticks(top, count=5):
    """Ticks from 0 in steps of 1, 2 or 5 x 10^k, covering top."""
    raw = top / count
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    return [i * step for i in range(int(math.ceil(top / step)) + 1)]


def panel(x0, title, points, refs, name, axis=page_axis, width=PANEL_W):
    """SVG elements of one chart; points = [(x, GB/s)], refs = {name: GB/s},
    axis(points) = how x is drawn (page_axis: page sizes)."""
    out, x1 = [], x0 + width - 130          # room on the right for labels
    frac, xticks, xtitle, xlabel = axis(points)
    yt = nice_ticks(max([v for _, v in points] + list(refs.values())) * 1.05)
    sx = lambda p: x0 + frac(p) * (x1 - x0)
    sy = lambda v: BOTTOM - v / yt[-1] * (BOTTOM - TOP)
    out.append('<text x="%g" y="%d" font-weight="bold">%s</text>'
               % (x0, TOP - 12, escape(title)))
    for v in yt:                                          # y grid and labels
        out.append('<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="#e4e4e4"/>'
                   % (x0, sy(v), x1, sy(v)))
        out.append('<text x="%g" y="%.1f" text-anchor="end">%g</text>'
                   % (x0 - 6, sy(v) + 4, v))
    for x, label in xticks:                               # x ticks
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#000"/>'
                   % (sx(x), BOTTOM, sx(x), BOTTOM + 5))
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>'
                   % (sx(x), BOTTOM + 20, label))
    out.append('<path d="M%g %d V%d H%g" fill="none" stroke="#000"/>'
               % (x0, TOP, BOTTOM, x1))
    out.append('<text x="%g" y="%d" text-anchor="middle">%s</text>'
               % ((x0 + x1) / 2, BOTTOM + 42, escape(xtitle)))
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
                       % (sx(p), sy(v), c, name, xlabel(p), v))
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


def ra_series(rows):
    """[(window, GB/s)] of the ra rows with 4K pages, and the refs of the ra chart:
    the 64K-page ra row without readahead, and the expert baseline."""
    sel = [r for r in rows if r.get("workload") == "ra" and r.get("unit") == "GB/s"
           and isinstance(r.get("value"), (int, float))]
    # each job has one row per baseline: the ceiling row stands for it
    pts = sorted((readahead(r), float(r["value"])) for r in sel
                 if r.get("page_size") == 4096 and r.get("baseline") == "ceiling"
                 and readahead(r) is not None)
    refs = {}
    ref64 = [float(r["value"]) for r in sel if r.get("page_size") == 65536
             and readahead(r) == 0 and r.get("baseline") == "ceiling"]
    ref64 += [r["baseline_value"] for r in sel if r.get("baseline") == "ra64K"
              and isinstance(r.get("baseline_value"), (int, float))]
    expert = [r["baseline_value"] for r in sel if r.get("baseline") == "expert"
              and isinstance(r.get("baseline_value"), (int, float))]
    if ref64:
        refs[REF64] = ref64[0]
    if expert:
        refs["expert"] = expert[0]
    return pts, refs


def svg_doc(width, title, body):
    """A whole SVG: white background, bold title over body."""
    svg = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">'
           % (width, H, width, H),
           '<rect width="100%" height="100%" fill="#fff"/>',
           '<text x="%d" y="24" text-anchor="middle" font-size="14" font-weight="bold">%s</text>'
           % (width // 2, escape(title))]
    return "\n".join(svg + body + ["</svg>"]) + "\n"


def main(src, dst, ra_dst):
    rows = load(src)
    seq, _ = series(rows, "seq", "ceiling")
    seq_refs = {b: v for b in SEQ_REFS for v in [series(rows, "seq", b)[1]] if v is not None}
    hit, d2d = series(rows, "hit", "d2d")
    ra, ra_refs = ra_series(rows)
    if not seq and not hit and not ra:
        sys.exit("%s: no seq, hit or ra rows with a GB/s value" % src)
    ctx = rows[0]
    bits = [ctx.get(k) for k in ("device", "date", "host")] + \
           ["commit " + ctx["commit"] if ctx.get("commit") else None,
            ctx.get("mode") and ctx["mode"] + " run"]
    run = ", ".join(str(b) for b in bits if b)
    if seq or hit:
        body = panel(LEFT, "seq: cold GPU cache (GB/s)", seq, seq_refs, "seq")
        body += panel(LEFT + PANEL_W + 60, "hit: pages already in GPU cache (GB/s)", hit,
                      {"d2d": d2d} if d2d is not None else {}, "hit")
        with open(dst, "w") as f:
            f.write(svg_doc(W, "libgpufs read rate vs page size: " + run, body))
    else:
        print("%s: no seq or hit rows: %s not written" % (src, dst), file=sys.stderr)
    if ra:
        body = panel(LEFT, "ra: 4K pages, 4K greads, cold GPU cache (GB/s)", ra, ra_refs,
                     "ra", window_axis, RA_PANEL_W)
        with open(ra_dst, "w") as f:
            f.write(svg_doc(W, "libgpufs readahead: " + run, body))
    else:
        print("%s: no ra rows with 4K pages: %s not written" % (src, ra_dst), file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__.split("\n\n")[1])
    main(sys.argv[1], sys.argv[2],
         sys.argv[3] if len(sys.argv) == 4 else "%s-ra%s" % os.path.splitext(sys.argv[2]))
