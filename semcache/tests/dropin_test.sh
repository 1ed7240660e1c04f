#!/usr/bin/env bash
# The SemCache drop-in against the plain BLAS (make test-semcache; no GPU
# needed).  semcache/tests/chain.c run as built (the system's BLAS) and
# through libsemcache.so (LD_PRELOAD, SEMCACHE_DEVICE=host: the cache on
# host memory, both protocols) must print the same checksum, with the
# operands sent once per change; with SEMCACHE_CACHE=off exactly every
# call's operands cross, each call.  semcache/tests/routines.c (every
# routine in both precisions, gesv through dgesv_, LAPACKE_dgesv and
# sgesv_) must pass through the drop-in with 3 gesv memo hits of 7, and
# in four threads at once; semcache/tests/io.c (results written and
# inputs read by system calls and stdio between BLAS calls) must pass
# through the drop-in.  The
# GPU device (SEMCACHE_DEVICE=gpu, or unset) must, without a GPU, warn once
# and give the BLAS's own results; with one, pass routines.c.  Bad values
# of the variables are warned about and the run goes on; a call with a bad
# argument goes to the library's own routine, which reports it and ends or
# returns as it does alone.  Prints one closing line.
#
# The crossover (issue 36): with the default crossovers chain.c's calls
# (n = 128) stay on the program's BLAS and the device never starts;
# semcache/tests/mixed.c, whose large calls go to the device and small
# ones to the host on parts of the same matrices, must give the BLAS's
# own checksum in both protocols.
#
# Usage: dropin_test.sh CHAIN LIBSEMCACHE ROUTINES IO MIXED
set -u
# the protocol and the loaders under test: every call on the device,
# whatever its size (SEMCACHE_CROSSOVER=0), unless the caller says
export SEMCACHE_CROSSOVER=${SEMCACHE_CROSSOVER-0}
chain=$1 lib=$2 routines=$3 io=$4 mixed=$5
err=$(mktemp)
trap 'rm -f "$err"' EXIT
fail() { echo "semcache: drop-in: FAILED: $*"; exit 1; }

# stat NAME: a number of the semcache-stats line in $err
stat() { sed -n "s/^semcache-stats .*\"$1\":\([0-9.]*\)[,}].*/\1/p" "$err"; }

want=$("$chain") || fail "chain.c alone"
for proto in write-back write-through; do
  got=$(LD_PRELOAD=$lib SEMCACHE_DEVICE=host SEMCACHE_PROTOCOL=$proto SEMCACHE_STATS=1 "$chain" 2>"$err") ||
    fail "$proto: exit status $?"
  [ "$got" = "$want" ] || fail "$proto: '$got', the BLAS alone '$want'"
  # A, B and C sent once each, B again after the CPU changed it, and the
  # later calls' new operands: far fewer than the calls' operands
  to_dev=$(stat transfers_h2d) calls=$(stat calls)
  [ -n "$to_dev" ] && [ -n "$calls" ] || fail "$proto: no counters: $(cat "$err")"
  [ "$calls" -ge 16 ] || fail "$proto: $calls calls went through the cache, want 16: $(cat "$err")"
  [ "$to_dev" -le 12 ] || fail "$proto: $to_dev transfers to the device, want <= 12: $(cat "$err")"
  out=$(LD_PRELOAD=$lib SEMCACHE_DEVICE=host SEMCACHE_PROTOCOL=$proto SEMCACHE_STATS=1 "$routines" 2>"$err") ||
    fail "$proto: routines.c: $out"
  [ "$(stat gesv_calls)" = 7 ] && [ "$(stat gesv_memo_hits)" = 3 ] ||
    fail "$proto: routines.c's gesv: want 3 memo hits of 7 calls: $(cat "$err")"
  out=$(LD_PRELOAD=$lib SEMCACHE_DEVICE=host SEMCACHE_PROTOCOL=$proto "$routines" threads 2>&1) ||
    fail "$proto: routines.c in four threads: $out"
  # io.c: results written and inputs read with system calls and stdio
  # while the cache holds them (the kernel's access would fail with EFAULT)
  out=$(LD_PRELOAD=$lib SEMCACHE_DEVICE=host SEMCACHE_PROTOCOL=$proto "$io" 2>&1) ||
    fail "$proto: io.c: $out"
done
out=$("$io" 2>&1) || fail "io.c without the drop-in: $out"

# no cache: chain.c's 17 calls send 41 operands and bring 16 outputs back
# (6 x (2 + 3) + 2 + 3 + 2 + 2 + 2 in, 6 x 2 + 1 + 1 + 1 + 1 out), every time
got=$(LD_PRELOAD=$lib SEMCACHE_DEVICE=host SEMCACHE_CACHE=off SEMCACHE_STATS=1 "$chain" 2>"$err") ||
  fail "cache off: exit status $?"
[ "$got" = "$want" ] || fail "cache off: '$got', the BLAS alone '$want'"
[ "$(stat transfers_h2d)" = 41 ] && [ "$(stat transfers_d2h)" = 16 ] && [ "$(stat hits)" = 0 ] ||
  fail "cache off: want 41 transfers in, 16 out, no hits: $(cat "$err")"
out=$(LD_PRELOAD=$lib SEMCACHE_DEVICE=host SEMCACHE_CACHE=off SEMCACHE_STATS=1 "$routines" 2>"$err") ||
  fail "cache off: routines.c: $out"
[ "$(stat gesv_memo_hits)" = 0 ] || fail "cache off: a gesv memo hit: $(cat "$err")"

# the GPU device, asked for or by default
for dev in gpu ""; do
  out=$(LD_PRELOAD=$lib SEMCACHE_DEVICE=$dev SEMCACHE_STATS=1 "$routines" 2>"$err") || # "": the default
    fail "SEMCACHE_DEVICE='$dev': routines.c: $out"
  if grep -q '"device":"gpu"' "$err"; then
    [ "$(stat gesv_memo_hits)" = 3 ] || fail "gpu: want 3 gesv memo hits: $(cat "$err")"
    gpu=yes
  else
    [ "$(grep -c "BLAS calls go to the program's BLAS" "$err")" = 1 ] ||
      fail "SEMCACHE_DEVICE='$dev' without a GPU: want one warning: $(cat "$err")"
    got=$(LD_PRELOAD=$lib SEMCACHE_DEVICE=$dev "$chain" 2>"$err")
    [ "$got" = "$want" ] || fail "SEMCACHE_DEVICE='$dev' without a GPU: '$got', the BLAS alone '$want'"
    [ "$(grep -c semcache: "$err")" = 1 ] || fail "SEMCACHE_DEVICE='$dev': want one warning: $(cat "$err")"
    gpu=no
  fi
done

# the crossover: small calls on the program's BLAS, the device not started
got=$(LD_PRELOAD=$lib SEMCACHE_DEVICE=host SEMCACHE_CROSSOVER= SEMCACHE_STATS=1 "$chain" 2>"$err") ||
  fail "default crossovers: exit status $?"
[ "$got" = "$want" ] || fail "default crossovers: '$got', the BLAS alone '$want'"
[ "$(stat small_calls)" = 17 ] && [ "$(stat calls)" = 0 ] && grep -q '"started":0' "$err" ||
  fail "default crossovers: want chain.c's 17 calls small, the device not started: $(cat "$err")"
mixed_want=$("$mixed") || fail "mixed.c alone"
for proto in write-back write-through; do
  got=$(LD_PRELOAD=$lib SEMCACHE_DEVICE=host SEMCACHE_PROTOCOL=$proto SEMCACHE_CROSSOVER=gemm=64 \
        SEMCACHE_STATS=1 "$mixed" 2>"$err") || fail "mixed.c, $proto: exit status $?"
  [ "$got" = "$mixed_want" ] || fail "mixed.c, $proto: '$got', the BLAS alone '$mixed_want'"
  [ "$(stat calls)" -ge 6 ] && [ "$(stat small_calls)" -ge 6 ] ||
    fail "mixed.c, $proto: want 6 device calls and small ones: $(cat "$err")"
done
got=$(LD_PRELOAD=$lib SEMCACHE_DEVICE=host SEMCACHE_CROSSOVER=gemm=64,hemm=3,dgemv=x "$chain" 2>"$err")
[ "$got" = "$want" ] && [ "$(grep -c "SEMCACHE_CROSSOVER: hemm=3,dgemv=x not taken" "$err")" = 1 ] ||
  fail "a bad SEMCACHE_CROSSOVER entry: want one warning naming it: $(cat "$err")"

# bad values: one warning each, the default taken, right results (a bad
# device is the GPU: routines.c, right on either)
for bad in SEMCACHE_PROTOCOL=write-sometimes SEMCACHE_CACHE=maybe SEMCACHE_MEMO=perhaps SEMCACHE_MEMO_BYTES=much SEMCACHE_MEMO_THREADS=lots \
           SEMCACHE_CAPACITY=lots SEMCACHE_CAPACITY=-5 SEMCACHE_DEVICE=tpu; do
  if [ "${bad%%=*}" = SEMCACHE_DEVICE ]; then
    out=$(env LD_PRELOAD=$lib "$bad" "$routines" 2>"$err") || fail "$bad: $out"
  else
    got=$(env LD_PRELOAD=$lib SEMCACHE_DEVICE=host "$bad" "$chain" 2>"$err") || fail "$bad: exit status $?"
    [ "$got" = "$want" ] || fail "$bad: '$got', the BLAS alone '$want'"
  fi
  [ "$(grep -c "semcache: ${bad%%=*}=${bad#*=} is not" "$err")" = 1 ] || fail "$bad: want one warning: $(cat "$err")"
done

# bad arguments: reported as the program's own BLAS / LAPACK reports them,
# whatever its xerbla does (the reference's prints and ends the program;
# OpenBLAS's prints and returns, info < 0): the program alone first, then
# through the drop-in (host and gpu devices), which passes such a call to
# the library's own routine: the same exit status, the same "returned ..."
# line (info included) or none, and the library's own message.
# bad_case WHAT PATTERN PROGRAM ARG (PATTERN: the library's message).
# XERBLA_LIB (optional): a library preloaded in both runs, after the
# drop-in (how the returning kind is checked on a machine with the
# reference: a xerbla_ that prints and returns, as OpenBLAS's).
bad_case() {
  local what=$1 pat=$2 ref ref_rc msg rc dev
  ref=$(LD_PRELOAD=${XERBLA_LIB:-} "$3" "$4" 2>&1)
  ref_rc=$?
  grep -q "$pat" <<<"$ref" || fail "$what without the drop-in: no '$pat' in '$ref'"
  for dev in host gpu; do
    msg=$(LD_PRELOAD="$lib${XERBLA_LIB:+ $XERBLA_LIB}" SEMCACHE_DEVICE=$dev "$3" "$4" 2>&1)
    rc=$?
    [ "$(grep "$pat" <<<"$msg")" = "$(grep "$pat" <<<"$ref")" ] ||
      fail "$what ($dev): '$(grep "$pat" <<<"$msg")', the library alone '$(grep "$pat" <<<"$ref")'"
    [ "$rc" = "$ref_rc" ] || fail "$what ($dev): exit status $rc, the library alone $ref_rc: '$msg'"
    [ "$(grep returned <<<"$msg")" = "$(grep returned <<<"$ref")" ] ||
      fail "$what ($dev): '$(grep returned <<<"$msg")', the library alone '$(grep returned <<<"$ref")'"
  done
  grep -q returned <<<"$ref" && bad_kind="$bad_kind $what:returns" || bad_kind="$bad_kind $what:ends"
}
bad_kind=""
bad_case "cblas_dgemm's bad lda" "[Dd][Gg][Ee][Mm][Mm]" "$chain" bad
bad_case "dgesv_'s bad lda" "DGESV.*parameter number *4" "$routines" bad-gesv
echo "semcache: drop-in: same results as the BLAS alone (both protocols, no cache: every operand" \
     "each call; small calls on the host beside large ones on the device);" \
     "$to_dev transfers for $calls calls; gesv memo 3 hits of 7; GPU: $gpu;" \
     "bad arguments as the library alone:$bad_kind"
