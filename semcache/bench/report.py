"""What run.py does with one program and size's rows once every
configuration ran (check results, ratios), and with all rows at the end
(targets, table).  Standard library only.

Rows are dicts as run.py makes them: "version" (openblas or system-blas,
nocache, write-through, write-back, nvblas), "status" (ok, failed,
skipped), "value" (the program's seconds), the program's result fields and,
for SemCache rows, the drop-in's counters (None where not reported).
"""

CPU_VERSIONS = ("openblas", "system-blas")
# (field, how it is compared): "rel" relative to the reference's value,
# "norm" relative to the reference's norm (util.h: probes)
CHECKED = {"structdyn": (("energy", "rel"), ("norm", "rel"), ("probe", "norm")),
           "chain": (("norm", "rel"), ("probe", "norm"))}
# The targets for the application under write-back: (field, at least/most, bound, label)
APP_TARGETS = (("speedup_nocache", ">=", 1.3, "x nocache"), ("speedup_nvblas", ">=", 1.2, "x nvblas"),
               ("speedup_openblas", ">=", 3.0, "x openblas"), ("h2d_cut", ">=", 0.8, "h2d cut vs nocache"),
               ("cache_bookkeeping_share", "<", 0.04, "cache bookkeeping"))
# Reported beside the targets, not judged: gesv's memo compare (the memo's
# cost, not the cache's) and the drop-in's whole overhead (both)
APP_INFO = (("memo_check_share", "memo check share"), ("bookkeeping_share", "bookkeeping + memo"))
CHAIN_TARGETS = (("h2d_over_min", "<=", 1.0, "h2d / minimum"), ("d2h_over_min", "<=", 1.0, "d2h / minimum"))


def _ok(rows):
    return {r["version"]: r for r in rows if r["status"] == "ok" and r.get("value")}


def check(rows, tol):
    """Compare every ok row's result with the CPU row's (the nocache row's
    where the CPU did not run) within tol: field check ("reference", "ok",
    "mismatch", "unchecked"), max_rel_diff, checked_against; a mismatch
    fails the row."""
    ok = _ok(rows)
    ref = next((ok[v] for v in CPU_VERSIONS + ("nocache",) if v in ok), None)
    for r in rows:
        if r["status"] != "ok":
            continue
        if ref is None:
            r["check"] = "unchecked"
            r["note"] = "; ".join(x for x in (r["note"], "no reference row to check against") if x)
            continue
        if r is ref:
            r["check"] = "reference"
            continue
        worst = 0.0
        for field, how in CHECKED[r["program"]]:
            den = abs(ref[field]) if how == "rel" else ref["norm"]
            diff = abs(r[field] - ref[field])
            worst = max(worst, diff / den if den else (0.0 if diff == 0 else float("inf")))
        r["max_rel_diff"] = worst
        r["checked_against"] = ref["version"]
        r["check"] = "ok" if worst <= tol else "mismatch"
        if worst > tol:
            r["status"] = "failed"
            r["note"] = "; ".join(x for x in (r["note"], "result differs from %s by %.3g (tolerance %g)"
                                               % (ref["version"], worst, tol)) if x)


def speedups(rows):
    """Ratios within the group, from the same run: speedup_X = X's seconds
    over this row's (None where X did not run); baseline is nocache; h2d_cut
    the share of nocache's bytes to the GPU this row did not send."""
    ok = _ok(rows)
    base = ok.get("nocache")
    for r in rows:
        r["baseline"] = "nocache"
        r["baseline_value"] = base["value"] if base else None
        for name, version in (("nocache", "nocache"), ("nvblas", "nvblas"), ("openblas", "openblas")):
            other = ok.get(version)
            r["speedup_" + name] = round(other["value"] / r["value"], 4) \
                if other and r["status"] == "ok" and r.get("value") else None
        r["ratio"] = r["speedup_nocache"]
        sent = r.get("bytes_h2d")
        r["h2d_cut"] = round(1 - sent / base["bytes_h2d"], 4) \
            if base and base.get("bytes_h2d") and sent is not None else None


def _judge(value, op, bound):
    if value is None:
        return "n/a"
    good = value >= bound if op == ">=" else value < bound if op == "<" else value <= bound
    return "PASS" if good else "MISS"


def by_program(rows):
    """rows, structdyn's first, each program's in the order they ran."""
    return sorted(rows, key=lambda r: r["program"] != "structdyn")


def print_targets(rows):
    """One line per target of the issue, for the write-back rows."""
    print("\ntargets (write-back; n/a: a configuration or counter missing):")
    for r in by_program(rows):
        if r["version"] != "write-back":
            continue
        targets = APP_TARGETS if r["program"] == "structdyn" else CHAIN_TARGETS
        for field, op, bound, label in targets:
            v = r.get(field)
            print("  %-9s %-6s %-20s %10s  (%s %g)  %s" % (r["program"], r["size"], label,
                  "-" if v is None else "%.4g" % v, op, bound, _judge(v, op, bound)))
        if r["program"] == "structdyn":
            for field, label in APP_INFO:
                v = r.get(field)
                print("  %-9s %-6s %-20s %10s  (reported)" % (r["program"], r["size"], label,
                                                             "-" if v is None else "%.4g" % v))
        print("  %-9s %-6s %-20s %10s" % (r["program"], r["size"], "result check", r.get("check", r["status"])))


def _bytes(n):
    if n is None:
        return "-"
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if n >= 1 << shift:
            return "%.1f%s" % (n / (1 << shift), unit)
    return "%d" % n


def _x(v):
    return "-" if v is None else "%.2fx" % v


def _pct(v):
    return "-" if v is None else "%.1f%%" % (100 * v)


def print_table(rows):
    """The table, printed last: time, bytes each way, speedups, outcome."""
    head = ("program", "size", "version", "time s", "wall s", "to GPU", "from GPU", "x nocache",
            "x nvblas", "x openblas", "cache bk", "memo chk", "outcome")
    lines = []
    for r in by_program(rows):
        outcome = r["status"] if r["status"] != "ok" else r.get("check", "ok")
        if r["note"]:
            outcome += ": " + r["note"]
        lines.append((r["program"], str(r["size"]), r["version"],
                      "-" if r.get("value") is None else "%.3f" % r["value"],
                      "-" if r.get("wall_s") is None else "%.2f" % r["wall_s"],
                      _bytes(r.get("bytes_h2d")), _bytes(r.get("bytes_d2h")), _x(r.get("speedup_nocache")),
                      _x(r.get("speedup_nvblas")), _x(r.get("speedup_openblas")),
                      _pct(r.get("cache_bookkeeping_share")), _pct(r.get("memo_check_share")), outcome))
    widths = [max(len(x[i]) for x in lines + [head]) for i in range(len(head) - 1)]
    print("\nSemCache benchmarks (%s, %s, commit %s)" % (rows[0]["device"], rows[0]["date"], rows[0]["commit"])
          if rows else "\nSemCache benchmarks: no rows")
    for x in [head] + lines:
        print("  ".join(v.ljust(w) for v, w in zip(x, widths)) + "  " + x[-1])
