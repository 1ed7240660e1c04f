#!/usr/bin/env bash
# The rodinia_mpi check of `make test-mpi` (docs/mpi.md): 2dconv, gesummv
# and pathfinder split over 2 and 3 ranks by the cpu version (no GPU) must
# verify against the CPU reference and equal the single-process result
# bit for bit (rodinia_mpi compares the gathered bytes with the reference,
# which is what the single-process cpu computation gives, and says so in
# every JSON row: "verified" and "same_as_single").  Tiny inputs (--scale
# 1/1024: 1 MiB, 0.8 MB, 1 MB) in a temporary folder, made by the first run.
#
#   tests/mpi/rodinia_mpi_test.sh [RODINIA_MPI_BIN]
#
# The steps: (1) -np 2 and (2) -np 3 of --versions cpu, every row verified
# and identical, with its rank count; (3) more ranks than 2dconv's row
# bands (-np 5 at --scale 1e-6: 4 bands), (4) a bad option and (5) --device
# must each end with exit status 2 and say why; (6) where a GPU is present,
# gpufs-4k and gpufs-64k by 2 ranks sharing it, each against rank 0's
# single-process run of the same version; where none is, a gpufs version
# must end with exit status 2.  Prints one closing line.  Exit
# 0: all passed, or skipped (no mpirun, or rodinia_mpi not built); 1: a
# failure (the run's output follows the message).
set -u
bin=${1:-build/rodinia-io/rodinia_mpi}
tag="mpi: rodinia_mpi"

if ! command -v mpirun >/dev/null 2>&1; then
  echo "$tag: skipped: no MPI (mpirun not found; apt-get install openmpi-bin libopenmpi-dev)"
  exit 0
fi
if [ ! -x "$bin" ]; then
  echo "$tag: skipped: no MPI build ($bin is missing: make mpi needs mpi.h, libopenmpi-dev)"
  exit 0
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/gpufs_rodinia_mpi.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
log=$dir/log
: >"$log"
start=$(date +%s%N)
common=(--dir "$dir" --scale 0.0009765625 --reps 1)
. "$(dirname "$0")/common.sh" # mpirun=(...), fail
# run NP OUT ARGS...: rodinia_mpi by NP ranks, stdout to OUT; exit 0 expected
run() {
  local np=$1 out=$2
  shift 2
  echo "+ ${mpirun[*]} -np $np $bin $*" >>"$log"
  "${mpirun[@]}" -np "$np" "$bin" "$@" >"$out" 2>>"$log" || { cat "$out" >>"$log"; fail "exit status $?: -np $np $*"; }
  cat "$out" >>"$log"
}
# rows OUT NP VERSION...: one row a benchmark and version, each with the
# rank count, verified and the single-process result bit for bit
rows() {
  local out=$1 np=$2 b v want=0
  shift 2
  for v in "$@"; do
    for b in 2dconv gesummv pathfinder; do
      want=$((want + 1))
      grep -q "^{\"workload\": \"$b\", \"config\": \"version=$v ranks=$np .*\"verified\": \"yes\", \"same_as_single\": \"yes\"" "$out" ||
        fail "-np $np: no row of $b $v with ranks=$np, verified and same_as_single yes"
    done
  done
  [ "$(grep -c '^{"workload"' "$out")" -eq "$want" ] || fail "-np $np: $(grep -c '^{"workload"' "$out") rows, not $want"
  grep -q "^every run verified and identical" "$out" || fail "-np $np: no closing line"
}
# refused NP SAYS ARGS...: exit status 2 and the message
refused() {
  local np=$1 says=$2 st
  shift 2
  echo "+ ${mpirun[*]} -np $np $bin $*" >>"$log"
  "${mpirun[@]}" -np "$np" "$bin" "$@" >"$dir/bad.out" 2>"$dir/bad.err"
  st=$?
  cat "$dir/bad.out" "$dir/bad.err" >>"$log"
  [ "$st" -eq 2 ] || fail "-np $np $*: exit status $st, not 2"
  grep -qF -- "$says" "$dir/bad.err" || fail "-np $np $*: no message '$says'"
}

run 2 "$dir/np2.out" "${common[@]}" --versions cpu
rows "$dir/np2.out" 2 cpu
run 3 "$dir/np3.out" "${common[@]}" --versions cpu
rows "$dir/np3.out" 3 cpu

refused 5 "2dconv: 5 ranks for 4 16-row bands" --dir "$dir" --scale 1e-6 --versions cpu 2dconv
refused 2 "unknown version 'cpu-io'" "${common[@]}" --versions cpu-io
refused 2 "--device: each rank picks its GPU" "${common[@]}" --device 0

gpu=""
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  run 2 "$dir/gpu.out" "${common[@]}" --versions gpufs-4k,gpufs-64k
  rows "$dir/gpu.out" 2 gpufs-4k gpufs-64k
  gpu="; gpufs-4k and gpufs-64k by 2 ranks on the GPU equal rank 0's single-process runs too"
else
  refused 2 "no CUDA GPU" "${common[@]}" --versions gpufs-4k 2dconv
  gpu="; a gpufs version without a GPU ends with status 2"
fi

ms=$((($(date +%s%N) - start) / 1000000))
echo "$tag: 2dconv, gesummv and pathfinder by 2 and 3 ranks (cpu) are the single-process results bit for bit$gpu; too many ranks and bad options end with status 2 ($ms ms)"
