#!/usr/bin/env bash
# The SemCache drop-in against the plain BLAS (make test-semcache; no GPU):
# tests/semcache/chain.c run as built (the system's BLAS) and through
# libsemcache.so (LD_PRELOAD, SEMCACHE_DEVICE=host: the cache on host
# memory, both protocols) must print the same checksum; the cache's
# counters must show the operands sent once per change; a bad argument
# must be reported by the BLAS's own xerbla.  Prints one closing line.
set -u
chain=$1 lib=$2
fail() { echo "semcache: drop-in: FAILED: $*"; exit 1; }
want=$("$chain") || fail "chain.c alone"
for proto in write-back write-through; do
  got=$(LD_PRELOAD=$lib SEMCACHE_DEVICE=host SEMCACHE_PROTOCOL=$proto SEMCACHE_STATS=1 "$chain" 2>/tmp/semcache_stats.$$) ||
    fail "$proto: exit status $?"
  [ "$got" = "$want" ] || fail "$proto: '$got', the BLAS alone '$want'"
  stats=$(cat /tmp/semcache_stats.$$)
  # A, B and C sent once each, B again after the CPU changed it, and the
  # later calls' new operands: far fewer than the calls' operands
  to_dev=$(sed -n 's/.*to_dev \([0-9]*\) .*/\1/p' <<<"$stats")
  calls=$(sed -n 's/.*calls \([0-9]*\) (host.*/\1/p' <<<"$stats")
  [ -n "$to_dev" ] && [ -n "$calls" ] || fail "$proto: no counters: $stats"
  [ "$calls" -ge 16 ] || fail "$proto: $calls calls went through the cache, want 16: $stats"
  [ "$to_dev" -le 12 ] || fail "$proto: $to_dev transfers to the device, want <= 12: $stats"
done
rm -f /tmp/semcache_stats.$$
msg=$(LD_PRELOAD=$lib SEMCACHE_DEVICE=host "$chain" bad 2>&1)
grep -q "Parameter 9 to routine cblas_dgemm" <<<"$msg" || fail "bad lda: '$msg'"
grep -q returned <<<"$msg" && fail "a bad argument returned to the program (the reference BLAS ends it)"
echo "semcache: drop-in: same results as the BLAS alone (both protocols); $to_dev transfers for $calls calls"
