#!/usr/bin/env bash
# install_test.sh NVCC CUDA_ARCH FILE... - the installed library as a user
# meets it (make test-install).  FILE...: what `make install` must put
# under the prefix, and nothing else (no internal header).
#  1. make install PREFIX=<tmp>: exactly FILE...; the CMake consumer
#     (find_package(gpufs), gpufs::gpufs) and the pkg-config consumer of
#     samples/consumer compile and link against it (no GPU needed);
#     make uninstall leaves the prefix empty.
#  2. make install DESTDIR=<tmp> PREFIX=/opt/gpufs: the same files under
#     <tmp>/opt/gpufs, gpufs.pc naming /opt/gpufs; uninstall empties it.
# Prints one line per check; exits non-zero at the first failure.
set -euo pipefail
nvcc=$1 arch=$2
shift 2
expect=$(printf '%s\n' "$@" | sort)
tmp=$(mktemp -d /tmp/gpufs_install_XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "install test: FAILED: $*" >&2; exit 1; }
files_under() { (cd "$1" && find . -type f | sed 's|^\./||' | sort); }

make --no-print-directory -s install PREFIX="$tmp/prefix" >/dev/null
[ "$(files_under "$tmp/prefix")" = "$expect" ] ||
  fail "installed files differ from the expected list:$(diff <(echo "$expect") <(files_under "$tmp/prefix") || true)"
echo "install test: make install: the $# expected files, no others"

cmake -S samples/consumer -B "$tmp/cmake" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
  -DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_CUDA_ARCHITECTURES="${arch#sm_}" >"$tmp/cmake.log" 2>&1 ||
  { cat "$tmp/cmake.log"; fail "cmake could not configure the consumer"; }
cmake --build "$tmp/cmake" >>"$tmp/cmake.log" 2>&1 || { cat "$tmp/cmake.log"; fail "the CMake consumer did not build"; }
[ -x "$tmp/cmake/app" ] && [ -x "$tmp/cmake/app_early" ] || fail "the CMake consumer built no app or app_early"
echo "install test: CMake consumer (find_package(gpufs), gpufs::gpufs) built"

PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" make --no-print-directory -s -C samples/consumer \
  NVCC="$nvcc" CUDA_ARCH="$arch" OUT="$tmp/app_pc" >"$tmp/pc.log" 2>&1 ||
  { cat "$tmp/pc.log"; fail "the pkg-config consumer did not build"; }
[ -x "$tmp/app_pc" ] || fail "the pkg-config consumer built no app"
[ "$(PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" pkg-config --modversion gpufs)" = \
  "$(sed -n 's/^#define GPUFS_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' include/gpufs/version.h | paste -sd.)" ] ||
  fail "gpufs.pc's version is not version.h's"
echo "install test: pkg-config consumer built; gpufs.pc has the header's version"

make --no-print-directory -s uninstall PREFIX="$tmp/prefix" >/dev/null
[ -z "$(files_under "$tmp/prefix")" ] || fail "left after uninstall: $(files_under "$tmp/prefix")"
echo "install test: make uninstall removed everything"

make --no-print-directory -s install DESTDIR="$tmp/stage" PREFIX=/opt/gpufs >/dev/null
[ "$(files_under "$tmp/stage/opt/gpufs")" = "$expect" ] || fail "DESTDIR install differs from the expected list"
grep -qx 'prefix=/opt/gpufs' "$tmp/stage/opt/gpufs/lib/pkgconfig/gpufs.pc" || fail "gpufs.pc does not name PREFIX"
make --no-print-directory -s uninstall DESTDIR="$tmp/stage" PREFIX=/opt/gpufs >/dev/null
[ -z "$(files_under "$tmp/stage")" ] || fail "left after DESTDIR uninstall: $(files_under "$tmp/stage")"
echo "install test: DESTDIR install and uninstall"
echo "install test: passed"
