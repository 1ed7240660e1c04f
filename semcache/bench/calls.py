#!/usr/bin/env python3
"""SemCache's crossovers and the cost of a call (issue 36; docs/semcache.md).

Runs semcache/bench/calls (built by `make semcache-bench-build`) per
routine and precision over a ladder of sizes in three ways, all in one run:
  host        through the drop-in, every call below its crossover: the
              program's own BLAS (the machine's libblas.so.3)
  gpu-fresh   SEMCACHE_CROSSOVER=0, the CPU rewrites the inputs before
              each call: they are sent every call
  gpu-cached  SEMCACHE_CROSSOVER=0, the same operands every call
and reports, per routine, the smallest size from which the GPU is faster
to the end of the ladder (fresh: the default crossover; cached).  Then
the cost of a call: dgemm and dgemv at n = 64, 256, 1024 with cached
operands against cuBLAS's own time (cublas_calls, same run); the rows
keep the drop-in's counters (their totals include the first call's
set-up: cuBLAS's handle, the operands sent).  gesv runs with SEMCACHE_MEMO=off (the
factorization's crossover; the memo is apart).  Prints the tables last;
--out appends JSON lines.
"""
import argparse
import json
import os
import subprocess
import sys

LADDER = {
    "gemm": [16, 32, 64, 128, 192, 256, 384, 512, 768, 1024, 2048],
    "gemv": [64, 128, 256, 512, 1024, 2048, 4096, 8192],
    "axpy": [1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216],
    "scal": [1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216],
    "dot": [1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216],
    "gesv": [16, 32, 64, 128, 256, 512, 1024, 2048],
}
MODES = {"host": ("cached", "1048576"), "gpu-fresh": ("fresh", "0"), "gpu-cached": ("cached", "0")}


def run(args, routine, mode, sizes, extra=None):
    """Rows of one calls process (and its stats line)."""
    env = dict(os.environ, LD_PRELOAD=args.lib, SEMCACHE_STATS="1",
               SEMCACHE_CROSSOVER=MODES[mode][1], SEMCACHE_CAPACITY=str(8 << 30),
               SEMCACHE_DEVICE=args.device)
    if routine.endswith("gesv"):
        env["SEMCACHE_MEMO"] = "off"
    env.update(extra or {})
    cmd = [os.path.join(args.bin, "calls"), routine, MODES[mode][0], ",".join(map(str, sizes))]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.timeout)
    rows = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]
    stats = {}
    for l in p.stderr.splitlines():
        if l.startswith("semcache-stats "):
            stats = json.loads(l[len("semcache-stats "):])
    if p.returncode != 0:
        print("calls %s %s: exit %d: %s" % (routine, mode, p.returncode, p.stderr[-400:]), file=sys.stderr)
    for r in rows:
        r["mode"] = mode
    return rows, stats


def crossover(host, gpu):
    """The smallest n from which gpu beats host to the end of the ladder; None: never."""
    best = None
    for n in sorted(host):
        if n in gpu and gpu[n] < host[n]:
            best = n if best is None else best
        else:
            best = None
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default="build/semcache-bench", help="folder of calls and cublas_calls")
    ap.add_argument("--lib", default="build/lib/libsemcache.so")
    ap.add_argument("--device", default="gpu", choices=("gpu", "host"))
    ap.add_argument("--routines", default="gemm,gemv,axpy,scal,dot,gesv", help="the ladders run ('': none)")
    ap.add_argument("--timeout", type=int, default=120)
    ap.add_argument("--out", help="append the rows as JSON lines")
    args = ap.parse_args()
    rows, table, costs = [], [], []
    for base in filter(None, args.routines.split(",")):
        for prec in "ds":
            r = prec + base
            times = {}
            for mode in MODES:
                got, _ = run(args, r, mode, LADDER[base])
                rows += got
                times[mode] = {x["n"]: x["us"] for x in got}
                print("%-6s %-10s %s" % (r, mode, " ".join("%d:%.1f" % (x["n"], x["us"]) for x in got)), flush=True)
            table.append((r, crossover(times["host"], times["gpu-fresh"]),
                          crossover(times["host"], times["gpu-cached"]), times))
    for r in ("dgemm", "dgemv"):
        for n in (64, 256, 1024):
            got, st = run(args, r, "gpu-cached", [n])
            ref = subprocess.run([os.path.join(args.bin, "cublas_calls"), r, str(n)],
                                 capture_output=True, text=True, timeout=args.timeout)
            cub = [json.loads(l) for l in ref.stdout.splitlines() if l.startswith("{")]
            if not got or not cub:
                print("cost %s %d: no figures (%s)" % (r, n, ref.stderr.strip()), file=sys.stderr)
                continue
            row = {"routine": r, "n": n, "mode": "cost", "dropin_us": got[0]["us"], "cublas_us": cub[0]["us"],
                   "above_us": got[0]["us"] - cub[0]["us"], "stats": st}
            costs.append(row)
            rows.append(row)
    if args.out:
        with open(args.out, "a") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
    print("\nCrossovers (n from which the GPU is faster to the end of the ladder; '-': never)")
    print("%-6s %10s %11s   host / gpu-fresh / gpu-cached us at the ladder's ends" % ("", "fresh", "cached"))
    for r, f, c, t in table:
        lo, hi = min(t["host"] or [0]), max(t["host"] or [0])
        ends = " | ".join("%.1f/%.1f/%.1f" % (t["host"].get(n, -1), t["gpu-fresh"].get(n, -1),
                                               t["gpu-cached"].get(n, -1)) for n in (lo, hi))
        print("%-6s %10s %11s   n=%d,%d: %s" % (r, f or "-", c or "-", lo, hi, ends))
    print("\nThe cost of a call with cached operands (us; target: at most 30 above cuBLAS)")
    print("%-6s %5s %9s %9s %9s" % ("", "n", "drop-in", "cuBLAS", "above"))
    for c in costs:
        print("%-6s %5d %9.1f %9.1f %9.1f" % (c["routine"], c["n"], c["dropin_us"], c["cublas_us"], c["above_us"]))


if __name__ == "__main__":
    main()
