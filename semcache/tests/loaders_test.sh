#!/usr/bin/env bash
# The program's own BLAS however it was loaded, and operands on the stack,
# through libsemcache.so (make test-semcache; issue 36; no GPU needed).
# Each case runs on the host device in both protocols and with the cache
# off, and on the GPU device (without a GPU: the program's BLAS):
#   - dlopen.c loads local_blas.c's module (which brings libblas and
#     liblapack) with RTLD_LOCAL and with RTLD_GLOBAL, on the host device
#     after a first call started the drop-in: its calls must give the
#     right results;
#   - a routine that no loaded library has: a message naming it and the
#     program ended by abort, never a jump to address 0 (SIGSEGV);
#   - stack.c (operands on stacks followed by deep calls over those pages,
#     in two threads; a fault with no stack left for the handler): passes
#     alone and through the drop-in;
#   - numpy (Debian's python3-numpy, whose modules load its BLAS with
#     RTLD_LOCAL): imports, and numpy_check.py's results through the
#     drop-in equal those without it; skipped with a line where no python3
#     has numpy.  SEMCACHE_NUMPY_SUITE=1 also runs numpy's own linalg tests
#     (python3-pytest) in each mode: the same summary as without the drop-in.
# Prints one closing line.
#
# Usage: loaders_test.sh LIBSEMCACHE DLOPEN LOCAL_MODULE STACK
set -u
# the protocol and the loaders under test: every call on the device,
# whatever its size (SEMCACHE_CROSSOVER=0), unless the caller says
export SEMCACHE_CROSSOVER=${SEMCACHE_CROSSOVER-0}
lib=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") dl=$2 mod=$3 stack=$4 # lib: absolute (runs below cd)
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "semcache: loaders: FAILED: $*"; exit 1; }

modes=("SEMCACHE_DEVICE=host SEMCACHE_PROTOCOL=write-back"
       "SEMCACHE_DEVICE=host SEMCACHE_PROTOCOL=write-through"
       "SEMCACHE_DEVICE=host SEMCACHE_CACHE=off"
       "SEMCACHE_DEVICE=gpu")

# under MODE (a word list of variables), through the drop-in
dropin() { local m=$1; shift; env LD_PRELOAD="$lib" $m "$@"; }

# ---- a BLAS loaded after the drop-in, locally or globally ----
out=$("$dl" "$mod" local 2>&1) || fail "dlopen.c alone: $out"
for m in "${modes[@]}"; do
  for how in local global; do
    early=early
    [ "$m" = SEMCACHE_DEVICE=gpu ] && early="" # (passed on: no BLAS to pass it to yet)
    out=$(dropin "$m" "$dl" "$mod" $how $early 2>&1)
    rc=$?
    [ $rc = 0 ] && grep -q "^dlopen: ok" <<<"$out" || fail "$m, RTLD_${how^^}: exit status $rc: $out"
  done
done

# ---- a routine no library has ----
for m in "SEMCACHE_DEVICE=host" "SEMCACHE_DEVICE=gpu"; do
  out=$(dropin "$m" "$dl" "$mod" missing 2>&1)
  rc=$?
  if grep -q "ddot_ returned 14" <<<"$out" && grep -q '=gpu' <<<"$m"; then
    continue # a GPU ran it: no host routine was needed
  fi
  [ $rc = 134 ] && grep -q "semcache: the BLAS/LAPACK routine ddot_ is in no library" <<<"$out" ||
    fail "$m, no BLAS loaded: want abort (134) with a message naming ddot_, got $rc: $out"
done

# ---- operands on the stack; the handler's own stack ----
out=$("$stack" 2>&1) || fail "stack.c alone: $out"
for m in "${modes[@]}"; do
  out=$(dropin "$m" "$stack" 2>&1)
  rc=$?
  [ $rc = 0 ] && grep -q "^stack: ok" <<<"$out" || fail "$m: stack.c: exit status $rc: $out"
done

# ---- numpy ----
py=""
for p in python3 /usr/bin/python3; do
  if "$p" -c "import numpy" 2>/dev/null; then
    py=$("$p" -c "import sys; print(sys.executable)") # the interpreter, not a shim
    break
  fi
done
if [ -z "$py" ]; then
  numpy="skipped (no python3 with numpy: python3-numpy)"
  echo "semcache: loaders: no python3 with numpy (python3-numpy): the numpy check skipped"
else
  "$py" "$here/numpy_check.py" run "$tmp/alone.npz" || fail "numpy_check.py alone"
  for m in "${modes[@]}"; do
    out=$(dropin "$m" "$py" -c "import numpy" 2>&1) || fail "$m: import numpy: exit status $?: $out"
    out=$(dropin "$m" "$py" "$here/numpy_check.py" run "$tmp/dropin.npz" 2>&1) ||
      fail "$m: numpy_check.py: exit status $?: $out"
    out=$("$py" "$here/numpy_check.py" compare "$tmp/dropin.npz" "$tmp/alone.npz") || fail "$m: $out"
  done
  numpy="equal to numpy alone (${out#numpy: })"
  # numpy's own linalg tests (python3-pytest; about 7x their time alone on
  # the host device): only when asked, SEMCACHE_NUMPY_SUITE=1
  if [ "${SEMCACHE_NUMPY_SUITE:-0}" = 1 ]; then
    suite() { (cd "$tmp" && "$@" -m pytest -q -p no:cacheprovider --pyargs numpy.linalg 2>&1 |
               grep -E "^[0-9]+ passed" | sed 's/ in [0-9.]*s.*//'); }
    want=$(suite "$py")
    [ -n "$want" ] || fail "numpy's linalg tests alone: no summary (python3-pytest?)"
    for m in "${modes[@]}"; do
      got=$(LD_PRELOAD="$lib" suite env $m "$py")
      [ "$got" = "$want" ] || fail "$m: numpy's linalg tests: '$got', alone '$want'"
    done
    numpy="$numpy; numpy.linalg's tests as alone: $want"
  fi
fi
echo "semcache: loaders: a BLAS dlopen'ed locally or globally after the drop-in started is found;" \
     "a missing routine ends the program with its name; stack operands then deep calls pass;" \
     "numpy: $numpy"
