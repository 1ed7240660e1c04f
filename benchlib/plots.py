"""What every plot of a benchmark's JSON rows needs: the last run of a rows
file, geometric means, and grouped bar charts drawn with matplotlib
(Debian: python3-matplotlib).  Used by bench/plot_*.py, rodinia-io/plot.py,
samples/collage/plot.py and semcache/bench/plot.py.

The output format follows the file name's extension (.svg, .png, .pdf);
SVG files carry no date, so the same rows give the same bytes.
"""
import json
import math

import matplotlib

matplotlib.use("Agg")  # files only: no display needed
import matplotlib.pyplot as plt  # noqa: E402

plt.rcParams.update({"svg.hashsalt": "libgpufs", "font.size": 9, "axes.spines.top": False,
                     "axes.spines.right": False})


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


def save(fig, path):
    """Write the figure (format by extension) and close it."""
    fig.savefig(path, metadata={"Date": None} if path.endswith(".svg") else None, bbox_inches="tight")
    plt.close(fig)


def chart(path, title, groups, series, colors, values, unit, ref=None, ref_label=""):
    """Grouped bars: values[(group, series)] -> bar height (a missing pair
    is left out), each bar labelled with its value; ref: a dashed line,
    named ref_label in the legend."""
    fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(groups) + 2), 4.2))
    width = 0.8 / max(1, len(series))
    for si, s in enumerate(series):
        xs = [gi + (si - (len(series) - 1) / 2) * width for gi, g in enumerate(groups) if (g, s) in values]
        hs = [values[(g, s)] for g in groups if (g, s) in values]
        if not hs:
            continue  # a series this run did not measure: no legend entry either
        bars = ax.bar(xs, hs, width * 0.95, color=colors[s], label=s)
        ax.bar_label(bars, fmt="%.3g", fontsize=6, padding=1)
    if ref:
        ax.axhline(ref, color="#555", linestyle="--", linewidth=1, label=ref_label or None)
    slanted = len(groups) > 6 or max([len(g) for g in groups] + [0]) > 10
    ax.set_xticks(range(len(groups)), groups, rotation=20 if slanted else 0, ha="right" if slanted else "center")
    ax.set_ylabel({"x": "ratio (x)", "": "value"}.get(unit.strip(), unit.strip()))
    ax.set_ylim(0, max([ref or 0.0] + list(values.values()) + [0]) * 1.15 or 1.0)
    ax.grid(axis="y", color="#ddd", linewidth=0.6)
    ax.set_axisbelow(True)
    ax.set_title(title, loc="left", fontsize=10)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.25 if slanted else -0.1), ncol=min(5, len(series) + 1),
              frameon=False, fontsize=8)
    save(fig, path)
