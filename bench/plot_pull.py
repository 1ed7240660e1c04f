#!/usr/bin/env python3
"""Bars of the warp rows gpufs_bench made under each pull_warps setting
(the pull gate: docs/config.md), in GB/s, every run of each rows file.

Usage: python3 bench/plot_pull.py OUT.svg LABEL=ROWS.jsonl [LABEL=ROWS.jsonl ...]

One group per row: ra_warp (one-page gread_warp calls, 128 KiB window),
seq_warp at 4 KiB and 64 KiB pages, and ra64K (blocks, 64 KiB pages, no
readahead: the reference ra_warp is measured against, not gated).  One
series per run of each file, named LABEL and the run's number (a rows file
may hold several runs, told apart by their date).  Rows that failed are
left out.  Drawn with matplotlib (benchlib/plots.py).
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchlib"))
from plots import chart  # noqa: E402

PALETTE = ("#9ecae1", "#3182bd", "#fdae6b", "#e6550d", "#a1d99b", "#31a354", "#bcbddc", "#756bb1")
GROUPS = ["ra_warp", "seq_warp 4K", "seq_warp 64K", "ra64K"]


def group_of(row):
    w, config = row.get("workload", ""), row.get("config", "")
    if w == "ra_warp" and "ra=128K" in config:
        return "ra_warp"
    if w == "seq_warp":
        return "seq_warp 4K" if "page=4K" in config else "seq_warp 64K"
    if w == "ra" and "page=64K" in config:
        return "ra64K"
    return None


def main(argv):
    if len(argv) < 3 or any("=" not in a for a in argv[2:]):
        sys.stderr.write(__doc__)
        return 2
    series, values = [], {}
    for arg in argv[2:]:
        label, path = arg.split("=", 1)
        runs = []
        with open(path) as f:
            for line in f:
                if not line.strip():
                    continue
                row = json.loads(line)
                if row.get("date") not in runs:
                    runs.append(row.get("date"))
                g = group_of(row)
                if g is None or row.get("unit") != "GB/s" or row.get("status") not in ("ok", None):
                    continue
                name = "%s run %d" % (label, runs.index(row.get("date")) + 1)
                if name not in series:
                    series.append(name)
                values[(g, name)] = float(row["value"])
    if not values:
        sys.stderr.write("plot_pull: no ra_warp, seq_warp or ra64K rows\n")
        return 1
    colors = {s: PALETTE[i % len(PALETTE)] for i, s in enumerate(series)}
    chart(argv[1], "warp rows by pull_warps (the pull gate), GB/s, one H100 call (higher is better)",
          GROUPS, series, colors, values, "")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
