#!/usr/bin/env bash
# Runs the Google Test binaries given as arguments, then prints one closing
# line over all of them: "N passed, N failed, N skipped".  Exits non-zero if
# any binary failed.
set -u
passed=0 failed=0 skipped=0 rc=0
for bin in "$@"; do
  log=$(mktemp)
  "$bin" 2>&1 | tee "$log"
  st=${PIPESTATUS[0]}
  [ "$st" -eq 0 ] || rc=1
  p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
  f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
  s=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
  passed=$((passed + ${p:-0})) failed=$((failed + ${f:-0})) skipped=$((skipped + ${s:-0}))
  if [ "$st" -ne 0 ] && [ -z "$f" ]; then failed=$((failed + 1)); fi
  rm -f "$log"
done
echo
echo "$passed passed, $failed failed, $skipped skipped"
exit $rc
