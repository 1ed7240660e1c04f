#!/usr/bin/env python3
"""Bars of gpufs_bench's mgpu rows: aggregate GB/s of every GPU at once.

Usage: python3 bench/plot_mgpu.py OUT.svg ROWS.jsonl [ROWS.jsonl ...]

One series of bars per rows file (its last run), one group per figure:
the link ceilings summed, pinned copies on every GPU at once (the host's
bound), the experts at once, seq of registered files, seq through the
daemon with the default 16 workers and with 16 per GPU (4 KiB pages, own
files).
A figure a run did not measure is left out.  Drawn with matplotlib (benchlib/plots.py).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchlib"))
from plots import chart, load_last_run  # noqa: E402

PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#17becf")


def figure(row):
    """The group a row belongs to, or None."""
    w, c = row.get("workload"), row.get("config", "")
    if row.get("status") not in ("ok", None) or row.get("value") is None:
        return None
    if w == "mgpu_ceiling_sum":
        return "ceilings summed"
    if w == "mgpu_ceiling_together":
        return "pinned copies at once"
    if w == "mgpu_expert_together":
        return "experts at once"
    if w == "mgpu_seq" and row.get("baseline") == "mgpu_expert_together" and "own files page=4K" in c:
        if "registered" in c:
            return "seq registered"
        if "engine=pread" in c:
            return None
        return "seq daemon, %s workers" % c.split("workers=")[1].split()[0]
    return None


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    values, groups, series = {}, [], []
    for path in argv[2:]:
        name = os.path.basename(path).replace(".jsonl", "")
        series.append(name)
        for row in load_last_run(path):
            g = figure(row)
            if g is None:
                continue
            if g not in groups:
                groups.append(g)
            values[(g, name)] = row["value"]
    colors = {s: PALETTE[i % len(PALETTE)] for i, s in enumerate(series)}
    chart(argv[1], "Every GPU at once: aggregate GB/s (one bar per run)", groups, series, colors,
          values, " GB/s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
