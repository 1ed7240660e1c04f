#!/usr/bin/env bash
# run_suites.sh GTEST_BINARY... [-- COMMAND...] - make test's runner.
# Runs the Google Test binaries, then each COMMAND (a shell command line: an
# install, MPI or SemCache check, ...), all of them even after a failure,
# and prints the summary last, one line per suite and then the totals:
#   "make test: N tests passed, N failed, N skipped; N other suites passed, N failed"
# Exits non-zero if anything failed.
set -u
passed=0 failed=0 skipped=0 rc=0 opassed=0 ofailed=0
summary=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  bin=$1; shift
  log=$(mktemp)
  "$bin" 2>&1 | tee "$log"
  st=${PIPESTATUS[0]}
  [ "$st" -eq 0 ] || rc=1
  p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
  f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
  s=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
  if [ "$st" -ne 0 ] && [ -z "$f" ]; then f=1; fi
  passed=$((passed + ${p:-0})) failed=$((failed + ${f:-0})) skipped=$((skipped + ${s:-0}))
  summary+=("  $(basename "$bin"): ${p:-0} passed, ${f:-0} failed, ${s:-0} skipped")
  rm -f "$log"
done
[ $# -gt 0 ] && shift
for cmd in "$@"; do
  echo
  echo "== $cmd"
  if bash -c "$cmd"; then
    opassed=$((opassed + 1)); summary+=("  ${cmd##* }: passed")
  else
    ofailed=$((ofailed + 1)) rc=1; summary+=("  ${cmd##* }: FAILED")
  fi
done
echo
printf '%s\n' "${summary[@]}"
echo "make test: $passed tests passed, $failed failed, $skipped skipped; $opassed other suites passed, $ofailed failed"
exit $rc
