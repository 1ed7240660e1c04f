#!/usr/bin/env bash
# The SemCache benchmark programs through the drop-in (make test-semcache;
# no GPU, seconds): semcache/bench/structdyn (the application, its tiny
# size) and semcache/bench/chain (the microbenchmark, with CPU writes
# between products) run on the plain BLAS and through libsemcache.so
# (LD_PRELOAD, SEMCACHE_DEVICE=host, both protocols) must report the same
# results within a relative tolerance (the drop-in may send a routine it
# does not serve to the BLAS: it must still be right), and under
# write-back the chain must send exactly the bytes it reports as the
# minimum (each input once, again after each CPU write) and bring back
# only its last result.  Prints one closing line.
#
# Usage: bench_smoke.sh STRUCTDYN CHAIN LIBSEMCACHE
set -u
# the protocol and the loaders under test: every call on the device,
# whatever its size (SEMCACHE_CROSSOVER=0), unless the caller says
export SEMCACHE_CROSSOVER=${SEMCACHE_CROSSOVER-0}
structdyn=$1 chain=$2 lib=$3
tol=1e-9
err=$(mktemp)
trap 'rm -f "$err"' EXIT
fail() { echo "semcache: benchmarks: FAILED: $*"; exit 1; }

# field NAME JSON: a number field of a one-line JSON object
field() { sed -n "s/.*\"$1\": \([-+0-9.eE]*\).*/\1/p" <<<"$2"; }

# same WHAT GOT WANT FIELD...: each field within tol of WANT's, relative to
# |WANT's field| (probe: to WANT's norm, semcache/bench/util.h says why)
same() {
  local what=$1 got=$2 want=$3 f a b den
  shift 3
  for f in "$@"; do
    a=$(field "$f" "$got") b=$(field "$f" "$want")
    [ -n "$a" ] && [ -n "$b" ] || fail "$what: no $f in '$got' / '$want'"
    if [ "$f" = probe ]; then den=$(field norm "$want"); else den=$b; fi
    awk -v a="$a" -v b="$b" -v s="$den" -v t="$tol" \
      'BEGIN { d = a - b; if (d < 0) d = -d; if (s < 0) s = -s; exit !(d <= t * s) }' ||
      fail "$what: $f $a, the BLAS alone $b (tolerance $tol)"
  done
}

# stat NAME: a counter of the drop-in's semcache-stats line in $err
stat() { sed -n "s/.*semcache-stats .*\"$1\": *\([0-9]*\).*/\1/p" "$err" | tail -1; }

want_sd=$("$structdyn" -z tiny) || fail "structdyn alone: exit $?"
want_ch=$("$chain" -n 128 -l 6 -w 2) || fail "chain alone: exit $?"
[ "$(field cpu_writes "$want_ch")" = 2 ] || fail "chain -w 2 made no CPU writes: $want_ch"
for proto in write-back write-through; do
  got=$(LD_PRELOAD=$lib SEMCACHE_DEVICE=host SEMCACHE_PROTOCOL=$proto "$structdyn" -z tiny) ||
    fail "structdyn, $proto: exit $?"
  same "structdyn, $proto" "$got" "$want_sd" energy norm probe
  got=$(LD_PRELOAD=$lib SEMCACHE_DEVICE=host SEMCACHE_PROTOCOL=$proto SEMCACHE_STATS=1 \
        "$chain" -n 128 -l 6 -w 2 2>"$err") || fail "chain, $proto: exit $?"
  same "chain, $proto" "$got" "$want_ch" norm probe
  h2d=$(stat bytes_h2d) d2h=$(stat bytes_d2h)
  [ -n "$h2d" ] && [ -n "$d2h" ] || fail "chain, $proto: no counters: $(cat "$err")"
  if [ "$proto" = write-back ]; then
    [ "$h2d" = "$(field min_h2d_bytes "$got")" ] ||
      fail "chain, write-back: $h2d bytes to the device, the minimum is $(field min_h2d_bytes "$got")"
    [ "$d2h" = "$(field min_d2h_bytes "$got")" ] ||
      fail "chain, write-back: $d2h bytes back, the minimum is $(field min_d2h_bytes "$got")"
    wb_h2d=$h2d
  fi
done
echo "semcache: benchmarks: structdyn and chain give the BLAS's results through the drop-in" \
     "(both protocols); chain under write-back sent the minimum, $wb_h2d bytes"
