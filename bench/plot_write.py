#!/usr/bin/env python3
"""Bars of gpufs_bench's write rows, each as a multiple of the expert_write
of its own run (8 host threads: cudaMemcpyAsync, pwrite, one fsync).

Usage: python3 bench/plot_write.py OUT.svg LABEL=ROWS.jsonl [LABEL=ROWS.jsonl ...]

One group per page size (4K, 64K); one series per workload of each rows
file's last run ("write" and "write/nobehind"), named LABEL workload, so
that an older build's file (which has only "write") sits beside a newer
one's.  The dashed line is 1.0: the expert.  Rows that failed or have no
ratio are left out.  Drawn with matplotlib (benchlib/plots.py).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchlib"))
from plots import chart, load_last_run  # noqa: E402

PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#17becf")


def page_of(config):
    for part in config.split():
        if part.startswith("page="):
            return part[len("page="):]
    return None


def main(argv):
    if len(argv) < 3 or any("=" not in a for a in argv[2:]):
        sys.stderr.write(__doc__)
        return 2
    groups, series, values = ["4K", "64K"], [], {}
    for arg in argv[2:]:
        label, path = arg.split("=", 1)
        for row in load_last_run(path):
            w = row.get("workload", "")
            if w not in ("write", "write/nobehind") or row.get("baseline") != "expert_write":
                continue
            if row.get("status") not in ("ok", None) or row.get("ratio") is None:
                continue
            name = "%s %s" % (label, w)
            if name not in series:
                series.append(name)
            values[(page_of(row.get("config", "")), name)] = float(row["ratio"])
    if not values:
        sys.stderr.write("plot_write: no write rows with an expert_write ratio\n")
        return 1
    colors = {s: PALETTE[i % len(PALETTE)] for i, s in enumerate(series)}
    chart(argv[1], "write + gfsync of a new file, x expert_write of the same run (higher is better)",
          groups, series, colors, values, "x", ref=1.0, ref_label="- - expert_write")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
