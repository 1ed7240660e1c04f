"""numpy_check.py - a small linear-algebra run through numpy, whose BLAS
and LAPACK are loaded with dlopen(RTLD_LOCAL) by its extension modules
(semcache/tests/loaders_test.sh runs it with and without libsemcache.so).

  numpy_check.py run OUT.npz         dot, matmul, gemv, solve, inv, det and
                                     lstsq, both precisions, saved to OUT
  numpy_check.py compare A.npz B.npz  every result of A against B's (equal
                                     within 1e-12 relative; float32 1e-5);
                                     prints one line, exits 1 on a mismatch
"""
import sys

import numpy as np


def results():
    rng = np.random.default_rng(36)
    out = {}
    for t in (np.float64, np.float32):
        name = np.dtype(t).name
        x = rng.standard_normal(1000).astype(t)
        y = rng.standard_normal(1000).astype(t)
        a = rng.standard_normal((200, 200)).astype(t)
        b = rng.standard_normal((200, 150)).astype(t)
        out[name + "_dot"] = np.array(x.dot(y))
        out[name + "_dot_strided"] = np.array(x[::3].dot(y[::3]))
        out[name + "_matmul"] = a @ b
        out[name + "_matmul_t"] = a.T @ b
        out[name + "_gemv"] = a @ x[:200]
        well = a + 200 * np.eye(200, dtype=t)  # well conditioned
        out[name + "_solve"] = np.linalg.solve(well, b)
        out[name + "_solve_vec"] = np.linalg.solve(well, x[:200])
        out[name + "_inv"] = np.linalg.inv(well)
        out[name + "_det"] = np.array(np.linalg.slogdet(well)[1])
        out[name + "_lstsq"] = np.linalg.lstsq(b, x[:200], rcond=None)[0]
        # repeated products on the same operands (cached ones, under the drop-in)
        c = a
        for _ in range(4):
            c = (c @ a) / 200
        out[name + "_chain"] = c
    return out


def compare(fa, fb):
    a, b = np.load(fa), np.load(fb)
    bad = []
    worst = 0.0
    for k in sorted(set(a.files) | set(b.files)):
        if k not in a.files or k not in b.files:
            bad.append(k + " (missing)")
            continue
        tol = 1e-5 if "float32" in k else 1e-12
        scale = max(1.0, float(np.max(np.abs(b[k]))))
        err = float(np.max(np.abs(a[k] - b[k]))) / scale
        worst = max(worst, err if "float64" in k else 0.0)
        if a[k].shape != b[k].shape or not err <= tol:
            bad.append("%s (relative error %g)" % (k, err))
    if bad:
        print("numpy: FAILED: " + ", ".join(bad))
        return 1
    print("numpy: %d results equal (largest float64 relative difference %g)" % (len(a.files), worst))
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "run":
        np.savez(sys.argv[2], **results())
    elif len(sys.argv) == 4 and sys.argv[1] == "compare":
        sys.exit(compare(sys.argv[2], sys.argv[3]))
    else:
        sys.exit(__doc__)
