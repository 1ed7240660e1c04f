#!/usr/bin/env bash
# The MPI check of `make test` (docs/mpi.md): the collage of a small picture
# made by the single-process `collage --versions cpu` and by `mpirun -np N
# collage_mpi --version cpu` must be the same bytes (cmp).  No GPU needed:
# a tiny dataset (4k tiles of the procedural seed pictures) in a temporary
# folder, built by the first step and used by every other.
#
#   tests/mpi/collage_mpi_test.sh [COLLAGE_BIN [COLLAGE_MPI_BIN]]
#
# The steps: (1) collage, the generated 550x420 input (cropped to 544x416:
# 13 block rows) -> ref-size.png; (2) collage_mpi -np 2 (rows 7 + 6) on the
# same input; (3) collage with ref-size.png as a picture file -> ref-pic.png;
# (4) collage_mpi -np 3 (rows 5 + 4 + 4) on that file; (5) a bad
# configuration (--device) must end with exit status 2; (6) where a GPU is
# present, every GPU version by 2 ranks against the reference of (1).
# Prints one closing line.  Exit 0: every pair equal, or skipped (no
# mpirun, or collage_mpi not built); 1: a difference or a failed run (its
# output follows the message).
set -u
collage=${1:-build/samples/collage/collage}
collage_mpi=${2:-build/samples/collage/collage_mpi}
tag="mpi: collage_mpi"

if ! command -v mpirun >/dev/null 2>&1; then
  echo "$tag: skipped: no MPI (mpirun not found; apt-get install openmpi-bin libopenmpi-dev)"
  exit 0
fi
if [ ! -x "$collage_mpi" ]; then
  echo "$tag: skipped: no MPI build ($collage_mpi is missing: make mpi needs mpi.h, libopenmpi-dev)"
  exit 0
fi
if [ ! -x "$collage" ]; then
  echo "$tag: FAILED: $collage is not built (make $collage)" >&2
  exit 1
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/gpufs_collage_mpi.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
log=$dir/log
: >"$log"
start=$(date +%s%N)
common=(--no-fetch --dir "$dir" --tiles 4k)
. "$(dirname "$0")/common.sh" # mpirun=(...), fail
run() {
  echo "+ $*" >>"$log"
  "$@" >>"$log" 2>&1 || fail "exit status $?: $*"
}
same() {
  cmp "$1" "$2" >>"$log" 2>&1 || fail "$3: $(basename "$2") differs from $(basename "$1")"
}

run "$collage" "${common[@]}" --versions cpu --sizes 550x420 --reps 1 --collage-out "$dir/ref-size.png"
run "${mpirun[@]}" -np 2 "$collage_mpi" "${common[@]}" --version cpu --size 550x420 "$dir/mpi-size.png"
same "$dir/ref-size.png" "$dir/mpi-size.png" "-np 2, --size 550x420"

run "$collage" "${common[@]}" --versions cpu "$dir/ref-size.png" "$dir/ref-pic.png"
run "${mpirun[@]}" -np 3 "$collage_mpi" "${common[@]}" --version cpu "$dir/ref-size.png" "$dir/mpi-pic.png"
same "$dir/ref-pic.png" "$dir/mpi-pic.png" "-np 3, a picture file"

echo "+ ${mpirun[*]} -np 2 $collage_mpi ${common[*]} --device 0 --size 64x64 $dir/bad.png" >>"$log"
"${mpirun[@]}" -np 2 "$collage_mpi" "${common[@]}" --device 0 --size 64x64 "$dir/bad.png" >>"$log" 2>&1
st=$?
[ "$st" -eq 2 ] || fail "a bad configuration (--device) ended with exit status $st, not 2"

# (6) with a GPU: the GPU versions by 2 ranks sharing it, against the same
# reference (the CPU check above needs none)
gpu=""
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  for v in gpufs-warp gpufs-block gpufs-gread cpu-gpu; do
    run "${mpirun[@]}" -np 2 "$collage_mpi" "${common[@]}" --version "$v" --size 550x420 "$dir/mpi-$v.png"
    same "$dir/ref-size.png" "$dir/mpi-$v.png" "-np 2, $v"
  done
  gpu="; gpufs-warp, gpufs-block, gpufs-gread and cpu-gpu by 2 ranks on the GPU too"
fi

ms=$((($(date +%s%N) - start) / 1000000))
echo "$tag: the collage by 2 and 3 ranks is collage's, byte for byte (2 pictures$gpu; $ms ms)"
