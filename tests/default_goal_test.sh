#!/usr/bin/env bash
# default_goal_test.sh - plain `make` builds what `make all` builds: the
# library, the test binaries and every program (make test).  A dry run
# (make -n) into an empty build folder: no compiler runs, so it costs a
# second.  Prints one line; exits non-zero on a difference.
set -euo pipefail
tmp=$(mktemp -d /tmp/gpufs_goal_XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "default goal test: FAILED: $*" >&2; exit 1; }
# a clean environment: not the flags of a `make test` this may run under
dry() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory -n BUILD="$tmp/b" V=1 "$@"; }

plain=$(dry) || fail "make -n failed"
[ "$plain" = "$(dry all)" ] || fail "plain make and make all run different commands"
for t in libgpufs.a tests/host_tests tests/gpu_tests tests/fsx bench/gpufs_bench \
         rodinia-io/rodinia samples/collage/collage samples/stream; do
  grep -q -- "-o $tmp/b/$t\$\|-o $tmp/b/$t \| $tmp/b/$t " <<<"$plain" ||
    fail "plain make does not build $t"
done
echo "default goal test: plain make builds the library, the tests and the programs (as make all)"
