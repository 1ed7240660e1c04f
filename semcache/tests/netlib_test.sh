#!/usr/bin/env bash
# netlib's own BLAS and LAPACK test programs through the SemCache drop-in
# (make test-semcache; issue 36): Debian's libblas-test (xblat1/2/3 in s
# and d, the CBLAS testers xscblat1/2/3 and xdcblat1/2/3) and
# liblapack-test (xlintsts, xlintstd with their shipped inputs).  Each
# runs alone (the reference), then under LD_PRELOAD=libsemcache.so in
# every mode below, in a folder of its own; its output (stdout and the
# files it writes) must equal the reference's but for lines that report
# a time.
#
# Modes, on each device (host always; gpu where nvidia-smi lists a GPU):
#   cross   the default crossovers (small calls on the program's BLAS)
#   dev     SEMCACHE_CROSSOVER=0: every call on the device
#   tiny    SEMCACHE_CROSSOVER=0 and a 64 KiB capacity (evicts all the time)
# each in write-back and write-through.  The LAPACK testers make about 6
# million BLAS calls with their full inputs: those run in `cross`; in
# `dev` and `tiny` they run the DGE/SGE and DPO/SPO paths of the same
# inputs (about 100,000 calls on the device each).
#
# Environment: NETLIB_BLAS_DIR, NETLIB_LAPACK_DIR (the programs and
# inputs; default Debian's /usr/lib/<triplet>/{blas,lapack}),
# SEMCACHE_NETLIB_DEVICES ("host gpu" to ask for both, "host" only),
# SEMCACHE_NETLIB_FULL=1 (the LAPACK testers' full inputs in every mode),
# SEMCACHE_NETLIB_LOG=FILE (one line per run appended: program, input,
# device, mode, protocol, seconds, the reference's, the stats line).
# A missing package skips the test with a line saying so.  Prints one
# line per device and mode (runs, seconds against the reference's) and a
# closing line.
#
# Usage: netlib_test.sh LIBSEMCACHE
set -u
lib=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
triplet=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
bdir=${NETLIB_BLAS_DIR:-/usr/lib/$triplet/blas}
ldir=${NETLIB_LAPACK_DIR:-/usr/lib/$triplet/lapack}
if [ ! -x "$bdir/xblat3d" ] || [ ! -x "$ldir/xlintstd" ]; then
  echo "semcache: netlib: SKIPPED: libblas-test and liblapack-test not installed ($bdir, $ldir)"
  exit 0
fi
devices=${SEMCACHE_NETLIB_DEVICES:-host}
if [ -z "${SEMCACHE_NETLIB_DEVICES:-}" ] && nvidia-smi -L >/dev/null 2>&1; then devices="host gpu"; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "semcache: netlib: FAILED: $*"; exit 1; }

# The programs: name, input ('-': none), and for the LAPACK ones "lapack".
progs=()
for p in s d; do
  progs+=("xblat1$p -" "xblat2$p ${p}blat2.in" "xblat3$p ${p}blat3.in")
  for l in 1 2 3; do progs+=("x${p}cblat$l $([ $l = 1 ] && echo - || echo ${p}in$l)"); done
done
# The LAPACK inputs: full, and the GE and PO paths only (the first 16
# lines hold the sizes and switches, each later line one path).
for p in s d; do
  P=$(echo $p | tr sd SD)
  cp "$ldir/${p}test.in" "$work/${p}test.in"
  { sed -n 1,16p "$ldir/${p}test.in"; grep -E "^(${P}GE|${P}PO) " "$ldir/${p}test.in"; } >"$work/${p}sub.in"
done

# run DIR PROG INPUT [ENV...]: PROG in a fresh DIR with INPUT on stdin;
# its output (stdout, stderr less the stats line, files written) in
# DIR.all without timing lines; its seconds in DIR.s.
run() {
  local dir=$1 prog=$2 in=$3 t0 rc
  shift 3
  rm -rf "$dir" && mkdir -p "$dir"
  t0=$(date +%s.%N)
  (cd "$dir" && env "$@" timeout -k 10 900 "$prog" <"$in" >stdout.txt 2>stderr.txt)
  rc=$?
  awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN { printf "%.3f\n", a - b }' >"$dir.s"
  { echo "exit $rc"; cat "$dir/stdout.txt"; grep -v '^semcache-stats ' "$dir/stderr.txt"
    for f in "$dir"/*; do case $f in */stdout.txt|*/stderr.txt) ;; *) cat "$f" ;; esac; done
  } | grep -viE 'time|seconds' >"$dir.all"
}

# input of a program (LAPACK: sub or full), as a path
input() {
  case $2 in
    -) echo /dev/null ;;
    full) echo "$work/${1#xlintst}test.in" ;;
    sub) echo "$work/${1#xlintst}sub.in" ;;
    *) echo "$bdir/$2" ;;
  esac
}

total=0
for entry in "${progs[@]}" "xlintsts full" "xlintstd full" "xlintsts sub" "xlintstd sub"; do
  set -- $entry
  dir=$bdir; case $1 in xlintst*) dir=$ldir ;; esac
  run "$work/ref-$1-$2" "$dir/$1" "$(input "$1" "$2")" SEMCACHE_NONE=1
  grep -q "^exit 0" "$work/ref-$1-$2.all" || fail "$1 alone: $(head -5 "$work/ref-$1-$2.all")"
done
for dev in $devices; do
  for mode in cross dev tiny; do
    for proto in write-back write-through; do
      n=0 sec=0 ref=0
      for entry in "${progs[@]}" "xlintsts full" "xlintstd full" "xlintsts sub" "xlintstd sub"; do
        set -- $entry
        case "$mode:$2:${SEMCACHE_NETLIB_FULL:-0}" in
          cross:sub:*|dev:full:0|tiny:full:0) continue ;;
        esac
        dir=$bdir; case $1 in xlintst*) dir=$ldir ;; esac
        env=(LD_PRELOAD="$lib" SEMCACHE_DEVICE=$dev SEMCACHE_PROTOCOL=$proto)
        [ $mode = cross ] || env+=(SEMCACHE_CROSSOVER=0)
        [ $mode = tiny ] && env+=(SEMCACHE_CAPACITY=65536)
        out=$work/$dev-$mode-$proto-$1-$2
        run "$out" "$dir/$1" "$(input "$1" "$2")" "${env[@]}" SEMCACHE_STATS=1
        diff "$work/ref-$1-$2.all" "$out.all" >"$out.diff" ||
          fail "$1 ($2 input) on $dev, $mode, $proto: output differs from the reference's:
$(head -20 "$out.diff")"
        grep -q '^semcache-stats ' "$out/stderr.txt" || fail "$1 on $dev, $mode, $proto: no stats line"
        if [ $dev = gpu ] && [ $mode != cross ]; then
          grep -q '"device":"gpu","started":1' "$out/stderr.txt" ||
            fail "$1 on gpu, $mode: the GPU did not start: $(tail -2 "$out/stderr.txt")"
        fi
        [ -z "${SEMCACHE_NETLIB_LOG:-}" ] ||
          echo "$1 $2 $dev $mode $proto $(cat "$out.s") $(cat "$work/ref-$1-$2.s")" \
               "$(grep '^semcache-stats ' "$out/stderr.txt")" >>"$SEMCACHE_NETLIB_LOG"
        n=$((n + 1)) total=$((total + 1))
        sec=$(awk -v a="$sec" -v b="$(cat "$out.s")" 'BEGIN { print a + b }')
        ref=$(awk -v a="$ref" -v b="$(cat "$work/ref-$1-$2.s")" 'BEGIN { print a + b }')
      done
      printf "semcache: netlib: %-4s %-5s %-13s %2d programs pass, %7.2f s (alone %5.2f s)\n" \
        "$dev" "$mode" "$proto" "$n" "$sec" "$ref"
    done
  done
done
echo "semcache: netlib: passed ($total runs equal to the reference's output; devices: $devices)"
