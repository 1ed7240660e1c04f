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
Drawn with matplotlib (benchlib/plots.py).
"""
import math
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchlib"))
from plots import load_last_run, plt, save  # noqa: E402

SEQ_REFS = ("ceiling", "expert")  # add "naive" here to draw it too
REF64 = "64K pages, 64K greads, ra 0"  # the ra chart's reference line
COLORS = {"seq": "#1f77b4", "hit": "#d62728", "ceiling": "#555",
          "expert": "#2ca02c", "naive": "#9467bd", "d2d": "#555",
          "ra": "#8c564b", REF64: "#ff7f0e"}
RA_WINDOWS = (0, 16384, 32768, 65536, 131072)  # the full plan's; ticks even when missing


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


def page_axis(ax, points):
    """log2 page sizes, 4K .. 256K at least, a tick every power of 4; the
    point label."""
    sizes = [p for p, _ in points] + [4096, 262144]
    ax.set_xscale("log", base=2)
    ax.set_xlim(min(sizes) / 1.41, max(sizes) * 1.41)
    ticks = [2 ** e for e in range(math.ceil(math.log2(min(sizes))), math.floor(math.log2(max(sizes))) + 1)
             if e % 2 == 0]
    ax.set_xticks(ticks, [size_label(t) for t in ticks])
    ax.set_xlabel("page size")
    return lambda p: p


def window_axis(ax, points):
    """Readahead windows evenly spaced (0 has no log), one tick each; the
    position of a window."""
    ws = sorted(set(RA_WINDOWS) | {w for w, _ in points})
    ax.set_xticks(range(len(ws)), [size_label(w) for w in ws])
    ax.set_xlim(-0.5, len(ws) - 0.5)
    ax.set_xlabel("readahead window (readahead_max; 0 = off)")
    return ws.index


def panel(ax, title, points, refs, name, axis=page_axis):
    """One chart: points = [(x, GB/s)] as a labelled line, refs = {name:
    GB/s} as dashed lines; axis(ax, points) sets the x axis up and maps x."""
    at = axis(ax, points)
    for ref, v in sorted(refs.items(), key=lambda kv: -kv[1]):
        ax.axhline(v, color=COLORS.get(ref, "#555"), linestyle="--", linewidth=1, label="%s %.4g" % (ref, v))
    if points:
        xs, ys = [at(p) for p, _ in points], [v for _, v in points]
        ax.plot(xs, ys, marker="o", color=COLORS.get(name, "#000"), linewidth=2, label=name)
        for x, v in zip(xs, ys):
            ax.annotate("%.4g" % v, (x, v), textcoords="offset points", xytext=(0, 6), ha="center", fontsize=7,
                        color=COLORS.get(name, "#000"))
    ax.set_ylim(0, max([v for _, v in points] + list(refs.values()) + [1]) * 1.12)
    ax.set_ylabel("GB/s")
    ax.grid(axis="y", color="#e4e4e4", linewidth=0.6)
    ax.set_title(title, loc="left", fontsize=10, fontweight="bold")
    if points or refs:
        ax.legend(fontsize=7, frameon=False, loc="lower right")


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


def main(src, dst, ra_dst):
    rows = load_last_run(src)
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
        fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.2))
        panel(left, "seq: cold GPU cache (GB/s)", seq, seq_refs, "seq")
        panel(right, "hit: pages already in GPU cache (GB/s)", hit, {"d2d": d2d} if d2d is not None else {}, "hit")
        fig.suptitle("libgpufs read rate vs page size: " + run, fontsize=10, fontweight="bold")
        save(fig, dst)
    else:
        print("%s: no seq or hit rows: %s not written" % (src, dst), file=sys.stderr)
    if ra:
        fig, ax = plt.subplots(figsize=(8, 4.2))
        panel(ax, "ra: 4K pages, 4K greads, cold GPU cache (GB/s)", ra, ra_refs, "ra", window_axis)
        fig.suptitle("libgpufs readahead: " + run, fontsize=10, fontweight="bold")
        save(fig, ra_dst)
    else:
        print("%s: no ra rows with 4K pages: %s not written" % (src, ra_dst), file=sys.stderr)

if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__.split("\n\n")[1])
    main(sys.argv[1], sys.argv[2],
         sys.argv[3] if len(sys.argv) == 4 else "%s-ra%s" % os.path.splitext(sys.argv[2]))
