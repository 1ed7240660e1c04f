# tests/mpi/common.sh - sourced by the MPI checks of `make test`
# (collage_mpi_test.sh, rodinia_mpi_test.sh) after they set $tag and
# $log: mpirun as CI containers need it (root; more ranks than cores; no
# CMA single-copy where ptrace is not allowed), and fail(), which says
# what failed, shows the log and exits 1.
mpirun=(mpirun --allow-run-as-root --oversubscribe)
export OMPI_MCA_btl_vader_single_copy_mechanism=none

fail() {
  echo "$tag: FAILED: $*" >&2
  sed 's/^/    /' "$log" >&2
  exit 1
}
