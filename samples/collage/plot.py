#!/usr/bin/env python3
"""Bar plot of a collage run, from the JSON rows `collage --out` appends.

Usage: python3 samples/collage/plot.py ROWS.jsonl OUT.svg

OUT.svg: each version's speedup over the cpu version (all host cores), one
group of bars per input size, plus the gpufs versions with the small GPU
cache on the largest input; a dashed line at 1.  When the file holds
several runs only the last one (the last row's "date") is drawn; failed
rows are left out.  Drawn with matplotlib (benchlib/plots.py).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "benchlib"))
from plots import chart, load_last_run  # noqa: E402

VERSIONS = ("cpu-gpu", "gpufs-block", "gpufs-warp", "gpufs-gread")
COLORS = {"cpu-gpu": "#9467bd", "gpufs-block": "#ff7f0e", "gpufs-warp": "#1f77b4", "gpufs-gread": "#2ca02c"}


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    rows = load_last_run(argv[1])
    rows = [r for r in rows if r.get("workload") == "collage" and r.get("status") != "failed"]
    if not rows:
        sys.stderr.write("%s: no collage rows\n" % argv[1])
        return 1
    full = max(r.get("cache_bytes", 0) for r in rows)
    groups, speed = [], {}
    for r in rows:
        g = "%dx%d" % (r["width"], r["height"])
        if 0 < r.get("cache_bytes", 0) < full:
            g += " small cache"
        s = r.get("speedup_cpu")
        if r.get("version") in VERSIONS and isinstance(s, (int, float)) and s > 0:
            if g not in groups:
                groups.append(g)
            speed[(g, r["version"])] = s
    first = rows[0]
    where = "%s, %s tiles, %s" % (first.get("device", "?"), first.get("tiles", "?"), first.get("date", "?")[:10])
    chart(argv[2], "LSH image collage: speedup over the cpu version (%s)" % where, groups, VERSIONS, COLORS,
          speed, "x", ref=1.0, ref_label="dashed: cpu, every core (1x)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
