#!/usr/bin/env python3
"""SemCache's benchmarks: each program, unchanged, under five BLAS
configurations (make semcache-bench; docs/semcache.md, "Benchmarks").

Usage: python3 semcache/bench/run.py [--bin DIR] [--lib LIBSEMCACHE] [--out ROWS.jsonl]
           [--quick] [--device gpu|host] [--log-dir DIR] [--budget S] [...]
       python3 semcache/bench/run.py --table ROWS.jsonl    (print a run's table again)

Programs (in --bin): structdyn (the application) at three sizes, chain (the
microbenchmark) at n = 1k .. 16k.  Configurations, in the order they run:
  openblas       the program on OpenBLAS, every core (OPENBLAS_NUM_THREADS)
  nocache        libsemcache.so with SEMCACHE_CACHE=off: every call copies
                 its operands in and its outputs out
  write-through  libsemcache.so, SEMCACHE_PROTOCOL=write-through
  write-back     libsemcache.so, SEMCACHE_PROTOCOL=write-back
  nvblas         LD_PRELOAD libcblas_f77.so and the toolkit's libnvblas.so
                 with a generated nvblas.conf (CPU BLAS: OpenBLAS)
OpenBLAS is the CPU BLAS below every configuration (LD_LIBRARY_PATH: its
libblas.so.3 and liblapack.so.3).  What is missing (a GPU, NVBLAS, OpenBLAS)
skips its rows with the reason.  Every result is checked against the CPU
row's (relative tolerance --tol); a mismatch fails the row.  Rows go to
--out (appended, one JSON object a line, after each program and size), a
progress line per run to stdout, then the targets and, last, the table.
Standard library only (the GPU machines have no extra packages).
"""
import argparse
import datetime
import glob
import json
import os
import re
import socket
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report import check, print_table, print_targets, speedups  # noqa: E402

CONFIGS = ("openblas", "nocache", "write-through", "write-back", "nvblas")
SEMCACHE_CONFIGS = ("nocache", "write-through", "write-back")
# (program, size) in the order they run: the cheapest first, so that a
# --budget cut leaves the largest out, never a whole program (each
# program's sizes still run in increasing order; the table groups them by
# program); structdyn large, the application at its largest, before chain
# 8k and 16k (the microbenchmark's largest are the first to go).
GROUPS = {"full": (("structdyn", "small"), ("chain", 1024), ("chain", 2048), ("chain", 4096),
                   ("structdyn", "medium"), ("structdyn", "large"), ("chain", 8192), ("chain", 16384)),
          "quick": (("structdyn", "tiny"), ("structdyn", "quick"), ("chain", 256), ("chain", 512))}
CHAIN_LENGTH = 6
OPENBLAS_DIRS = ("/usr/lib/x86_64-linux-gnu/openblas-pthread", "/usr/lib/x86_64-linux-gnu/openblas-openmp",
                 "/usr/lib64/openblas-pthreads", "/usr/lib64/openblas-openmp")
STATS_KEYS = ("transfers_h2d", "bytes_h2d", "transfers_d2h", "bytes_d2h", "hits", "invalidations",
              "evictions", "refused", "gesv_memo_hits", "bookkeeping_s", "calls",
              "host_calls", "misses", "faults", "gesv_calls", "memo_check_s", "device_s", "copy_s")


def sh(cmd, env=None):
    """stdout of a command, or "" when it cannot run or fails (nvidia-smi
    without a GPU prints its complaint on stdout and exits non-zero)."""
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return ""
    return p.stdout if p.returncode == 0 else ""


def find_openblas(given, work):
    """A folder whose libblas.so.3 and liblapack.so.3 are OpenBLAS (multi-threaded), or None.
    Where only libopenblas.so.0 is installed, a folder of links to it is made under work."""
    def complete(d):
        return os.path.exists(os.path.join(d, "libblas.so.3")) and os.path.exists(os.path.join(d, "liblapack.so.3"))
    if given:
        return given if complete(given) else None
    for d in OPENBLAS_DIRS:
        if complete(d):
            return d
    m = re.search(r"=> (\S*libopenblas\.so\.0)\s", sh(["ldconfig", "-p"]))
    if not m:
        return None
    d = os.path.join(work, "openblas")
    os.makedirs(d, exist_ok=True)
    for name in ("libblas.so.3", "liblapack.so.3"):
        link = os.path.join(d, name)
        if not os.path.lexists(link):
            os.symlink(m.group(1), link)
    return d


def machine(args):
    """The run's context: GPU (or why none), CUDA, host."""
    gpu = sh(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"]).strip()
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    cuda_ver = re.search(r"CUDA Version: *([\d.]+)", sh(["nvidia-smi"]))
    ctx = {"gpu": gpu.splitlines()[0].split(",")[0].strip() if gpu else None}
    if ctx["gpu"]:
        device = ctx["gpu"]
    else:
        device = "no GPU (%s)" % cpu
    if args.device == "host":
        device += ", SemCache on host memory (SEMCACHE_DEVICE=host)"
    ctx["row"] = {"device": device,
                  "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S+0000"),
                  "host": socket.gethostname(), "cpu": "%s, %d cores" % (cpu, os.cpu_count()),
                  "cuda": "driver %s, CUDA %s" % (gpu.splitlines()[0].split(",")[-1].strip(),
                                                  cuda_ver.group(1) if cuda_ver else "?") if gpu else "none",
                  "host_page_size": str(os.sysconf("SC_PAGE_SIZE")), "commit": args.commit,
                  "mode": "quick" if args.quick else "full", "suite": "semcache"}
    return ctx


def nvblas_conf(args, ctx):
    path = os.path.join(args.log_dir, "nvblas.conf")
    with open(path, "w") as f:
        f.write("# generated by semcache/bench/run.py\n"
                "NVBLAS_LOGFILE %s\nNVBLAS_CPU_BLAS_LIB %s\nNVBLAS_GPU_LIST 0\n"
                "NVBLAS_TILE_DIM 2048\nNVBLAS_AUTOPIN_MEM_ENABLED\n"
                % (os.path.join(args.log_dir, "nvblas.log"), ctx["cpu_blas"]))
    return path


def plan(args, ctx):
    """Why each configuration cannot run here (None: it can)."""
    nvblas = sorted(glob.glob(os.path.join(args.cuda, "lib64", "libnvblas.so*")))
    ctx["nvblas"] = nvblas[0] if nvblas else None
    no_gpu = None if ctx["gpu"] else "no GPU (nvidia-smi found none)"
    why = {"openblas": None if ctx["openblas"] else "OpenBLAS not found: the system BLAS instead",
           "nvblas": no_gpu or (None if ctx["nvblas"] else "no libnvblas.so under %s/lib64" % args.cuda)}
    if why["nvblas"] is None and not os.path.exists(os.path.join(args.bin, "libcblas_f77.so")):
        why["nvblas"] = "libcblas_f77.so not built"
    sc = None if os.path.exists(args.lib) else "%s not built (make semcache)" % args.lib
    for c in SEMCACHE_CONFIGS:
        why[c] = sc or (None if args.device == "host" else no_gpu)
    return why


def environment(args, ctx, config):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SEMCACHE_", "NVBLAS_")) and k != "LD_PRELOAD"}
    threads = str(args.threads)
    env.update(OPENBLAS_NUM_THREADS=threads, OMP_NUM_THREADS=threads)
    paths = [ctx["openblas"]] if ctx["openblas"] else []
    if config != "openblas":
        paths.append(os.path.join(args.cuda, "lib64"))
    if env.get("LD_LIBRARY_PATH"):
        paths.append(env["LD_LIBRARY_PATH"])
    if paths:
        env["LD_LIBRARY_PATH"] = ":".join(paths)
    if config == "nvblas":
        env["LD_PRELOAD"] = "%s %s" % (os.path.abspath(os.path.join(args.bin, "libcblas_f77.so")), ctx["nvblas"])
        env["NVBLAS_CONFIG_FILE"] = ctx["nvblas_conf"]
    elif config in SEMCACHE_CONFIGS:
        env["LD_PRELOAD"] = os.path.abspath(args.lib)
        env.update(SEMCACHE_DEVICE=args.device, SEMCACHE_STATS="1")
        if config == "nocache":
            env["SEMCACHE_CACHE"] = "off"
        else:
            env["SEMCACHE_PROTOCOL"] = config
    return env


def parse_stats(err):
    """The drop-in's counters from its stderr: the last semcache-stats line
    (missing keys None; its device and cache as stats_device, stats_cache),
    or None."""
    stats = None
    for line in err.splitlines():
        i = line.find("semcache-stats ")
        if i >= 0:
            try:
                got = json.loads(line[i + len("semcache-stats "):])
            except ValueError:
                continue
            stats = {k: got.get(k) for k in STATS_KEYS}
            stats.update(stats_device=got.get("device"), stats_cache=got.get("cache"))
    return stats


def semcache_outcome(row, err, args, config, result):
    """A SemCache row's counters, derived figures and notes.  A drop-in
    that did not run on the device asked for fails the row (its times
    would be the CPU BLAS's)."""
    notes, failed = [], None
    stats = parse_stats(err)
    if stats is None:
        notes.append("no semcache-stats line")
        stats = dict.fromkeys(STATS_KEYS)
    row.update(stats)
    warning = next((l for l in err.splitlines() if "no GPU backend" in l or "no CUDA GPU" in l), None)
    if warning or stats.get("stats_device") not in (None, args.device):
        failed = "the drop-in did not run on the %s: %s" % (args.device, warning or "device %s" % stats["stats_device"])
    if config == "nocache" and (stats.get("hits") or stats.get("stats_cache") not in (None, "off")):
        notes.append("SEMCACHE_CACHE=off not honoured (cache %s, %s hits)" % (stats.get("stats_cache"), stats.get("hits")))
    if stats.get("host_calls"):
        notes.append("%d calls on the host BLAS" % stats["host_calls"])
    if stats.get("bookkeeping_s") is not None and row["value"]:
        # bookkeeping_s is the cache's own (its lock held, less copies) plus
        # memo_check_s (gesv's compare): reported apart
        memo = stats.get("memo_check_s") or 0.0
        row["cache_bookkeeping_s"] = round(stats["bookkeeping_s"] - memo, 6)
        row["bookkeeping_share"] = round(stats["bookkeeping_s"] / row["value"], 5)
        row["cache_bookkeeping_share"] = round(row["cache_bookkeeping_s"] / row["value"], 5)
        row["memo_check_share"] = round(memo / row["value"], 5)
    if row["program"] == "chain" and stats.get("bytes_h2d") is not None:
        row["h2d_over_min"] = round(stats["bytes_h2d"] / result["min_h2d_bytes"], 4)
        row["d2h_over_min"] = round(stats["bytes_d2h"] / result["min_d2h_bytes"], 4)
    if failed:
        row["status"] = "failed"
        notes.insert(0, failed)
    row["note"] = "; ".join(x for x in [row["note"]] + notes if x)


def run_one(args, ctx, why, program, size, config, deadline, end):
    """One program run under one configuration: its row (before ratios).
    deadline: no run starts after it (--budget); end: every run has ended
    by it (--end), so its timeout is what is left, and a run with less
    than --min-run seconds left is skipped."""
    if program == "structdyn":
        cmd, cfg = ["-z", size], "size=%s version=%s" % (size, config)
    else:
        cmd, cfg = ["-n", str(size), "-l", str(CHAIN_LENGTH)], "n=%d length=%d version=%s" % (size, CHAIN_LENGTH, config)
    version = config if config != "openblas" or ctx["openblas"] else "system-blas"
    row = {"workload": "semcache-" + program, "config": cfg.replace("version=openblas", "version=" + version),
           "value": None, "unit": "s", "status": "ok", "note": "", "version": version, "program": program,
           "size": size, "threads": args.threads, "cpu_blas": ctx["cpu_blas"]}
    if config in SEMCACHE_CONFIGS:
        row["semcache_device"] = args.device
    skip = why[config] if config != "openblas" else None
    if config == "openblas" and all(why[c] for c in CONFIGS if c != "openblas"):
        skip = "no GPU configuration can run here: nothing to compare with (--device host checks the harness)"
    if config == "openblas" and program == "chain" and size > args.cpu_max_n:
        skip = "CPU BLAS skipped above n=%d for time (--cpu-max-n)" % args.cpu_max_n
    if skip is None and deadline and time.time() > deadline:
        skip = "does not fit: the time budget of %d s was spent before it" % args.budget
    timeout = args.timeout
    if skip is None and end:
        left = int(end - time.time())
        if left < args.min_run:
            skip = "does not fit: %d s left of --end %d s" % (max(left, 0), args.end)
        timeout = min(timeout, left)
    if skip:
        row.update(status="skipped", note=skip)
        return row
    if version == "system-blas":
        row["note"] = why["openblas"]
    name = "%s-%s-%s" % (program, size, config)
    env = environment(args, ctx, config)
    start = time.time()
    try:
        p = subprocess.run([os.path.join(args.bin, program)] + cmd, env=env, capture_output=True,
                           text=True, timeout=timeout)
        out, err, rc = p.stdout, p.stderr, p.returncode
    except subprocess.TimeoutExpired as e:
        out, err, rc = e.stdout or "", (e.stderr or "") + "\ntimed out", None
        out, err = [x.decode() if isinstance(x, bytes) else x for x in (out, err)]
    row["wall_s"] = round(time.time() - start, 4)
    for ext, text in (("out", out), ("err", err)):
        with open(os.path.join(args.log_dir, "%s.%s" % (name, ext)), "w") as f:
            f.write(text)
    result = next((json.loads(l) for l in reversed(out.splitlines()) if l.startswith("{")), None)
    if rc != 0 or result is None:
        last = (err.strip().splitlines() or ["no output"])[-1]
        cut = "all that was left of --end %d s" % args.end if timeout < args.timeout else "--timeout"
        row.update(status="failed", note=("timed out after %d s (%s): does not fit" % (timeout, cut)) if rc is None
                   else "exit %s: %s" % (rc, last[:200]))
        return row
    row.update({k: v for k, v in result.items() if k not in ("program", "size")})
    row["value"] = result["seconds"]
    if config in SEMCACHE_CONFIGS:
        semcache_outcome(row, err, args, config, result)
    return row


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default="build/semcache-bench", help="folder of chain, structdyn, libcblas_f77.so")
    ap.add_argument("--lib", default="build/lib/libsemcache.so", help="libsemcache.so")
    ap.add_argument("--out", help="append the rows to this JSON-lines file")
    ap.add_argument("--log-dir", help="each run's stdout/stderr and nvblas.conf (default: BIN/logs)")
    ap.add_argument("--quick", action="store_true", help="tiny sizes: a smoke test of the harness")
    ap.add_argument("--device", choices=("gpu", "host"), default="gpu", help="SEMCACHE_DEVICE for the SemCache rows")
    ap.add_argument("--openblas", help="folder with OpenBLAS's libblas.so.3 and liblapack.so.3")
    ap.add_argument("--cuda", default=os.environ.get("CUDA", "/usr/local/cuda"))
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--cpu-max-n", type=int, default=8192, help="largest chain n run on the CPU BLAS")
    ap.add_argument("--budget", type=int, default=0, help="seconds; runs after it are skipped (0: none)")
    ap.add_argument("--timeout", type=int, default=300, help="seconds a run may take")
    ap.add_argument("--end", type=int, default=0,
                    help="seconds from the start by which every run has ended (0: none): a run gets what is left")
    ap.add_argument("--min-run", type=int, default=10, help="with --end: skip a run with fewer seconds left")
    ap.add_argument("--tol", type=float, default=1e-8, help="relative tolerance against the CPU row")
    ap.add_argument("--only", choices=("structdyn", "chain"))
    ap.add_argument("--commit", default="")
    ap.add_argument("--table", metavar="ROWS", help="only print the targets and table of ROWS' last run")
    args = ap.parse_args(argv[1:])
    if args.table:
        with open(args.table) as f:
            rows = [json.loads(line) for line in f if line.strip()]
        rows = [r for r in rows if r.get("date") == rows[-1].get("date")] if rows else []
        print_targets(rows)
        print_table(rows)
        return 0
    args.log_dir = args.log_dir or os.path.join(args.bin, "logs")
    os.makedirs(args.log_dir, exist_ok=True)
    if not args.commit:
        stamp = os.path.join(args.bin, "commit")
        args.commit = open(stamp).read().strip() if os.path.exists(stamp) else sh(["git", "rev-parse", "--short", "HEAD"]).strip()
    ctx = machine(args)
    ctx["openblas"] = find_openblas(args.openblas, args.log_dir)
    blas = re.search(r"libblas\.so\.3 => (\S+)", sh(["ldd", os.path.join(args.bin, "structdyn")],
                                                     env=dict(os.environ, LD_LIBRARY_PATH=ctx["openblas"] or "")))
    ctx["cpu_blas"] = os.path.realpath(blas.group(1)) if blas else "?"
    why = plan(args, ctx)
    if why["nvblas"] is None:
        ctx["nvblas_conf"] = nvblas_conf(args, ctx)
    mode = "quick" if args.quick else "full"
    groups = list(GROUPS[mode])
    if args.only:
        groups = [g for g in groups if g[0] == args.only]
    print("semcache-bench: %s; CPU BLAS %s, %d threads; %s" %
          (ctx["row"]["device"], ctx["cpu_blas"], args.threads,
           "; ".join("%s skipped: %s" % (c, w) for c, w in why.items() if w and c != "openblas") or "all configurations"))
    sys.stdout.flush()
    t0 = time.time()
    deadline = t0 + args.budget if args.budget else 0
    end = t0 + args.end if args.end else 0
    rows, total, done = [], len(groups) * len(CONFIGS), 0
    for program, size in groups:
        group = []
        for config in CONFIGS:
            row = run_one(args, ctx, why, program, size, config, deadline, end)
            done += 1
            took = "%.3f s" % row["value"] if row["value"] is not None else "-"
            note = " (%s)" % row["note"] if row["note"] else ""
            print("[%2d/%d] %-9s %-6s %-13s %10s %s%s" % (done, total, program, size, config, took,
                                                          row["status"], note))
            sys.stdout.flush()
            group.append(row)
        check(group, args.tol)
        speedups(group)
        for r in group:
            r.update(ctx["row"])
        rows += group
        if args.out:
            with open(args.out, "a") as f:
                for r in group:
                    f.write(json.dumps(r) + "\n")
    print_targets(rows)
    print_table(rows)
    return 1 if any(r["status"] == "failed" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
