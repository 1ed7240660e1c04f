#!/usr/bin/env bash
# install_test.sh NVCC CUDA_ARCH FILE... - the installed library as a user
# meets it (make test-install).  FILE...: what `make install` must put
# under the prefix, and nothing else (no internal header).
#  1. make install PREFIX=<tmp>: exactly FILE...; README.md's CMake project
#     and its two commands, as written (the prefix as $HOME/gpufs); the
#     CMake consumer of samples/consumer for the library's other
#     architecture (sm_80), and a project for one it lacks stops at
#     configure time with the package's message; the pkg-config consumer
#     compiles and links (no GPU needed); make uninstall empties the prefix.
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

# README.md's project: its ```cmake block as CMakeLists.txt, the sample's
# app.cu, and the indented `cmake` command lines after the block, run as
# they are written with HOME pointing at a folder whose gpufs is the prefix.
mkdir -p "$tmp/home" "$tmp/readme"
ln -s "$tmp/prefix" "$tmp/home/gpufs"
sed -n '/^```cmake$/,/^```$/{/^```/d;p}' README.md >"$tmp/readme/CMakeLists.txt"
grep -q find_package "$tmp/readme/CMakeLists.txt" || fail "README.md has no \`\`\`cmake block with find_package"
cp samples/consumer/app.cu "$tmp/readme/"
readme_cmds=$(sed -n '/^```cmake$/,$p' README.md | sed -n 's/^    \(cmake .*\)$/\1/p' | head -2)
[ "$(wc -l <<<"$readme_cmds")" -eq 2 ] || fail "README.md gives no two cmake command lines after its CMake block"
(cd "$tmp/readme" && HOME="$tmp/home" CUDACXX="$nvcc" bash -euc "$readme_cmds") >"$tmp/readme.log" 2>&1 ||
  { cat "$tmp/readme.log"; fail "README.md's CMake project did not build as written"; }
[ -x "$tmp/readme/build/app" ] || fail "README.md's CMake project built no app"
echo "install test: README.md's CMake project built as written"

cmake -S samples/consumer -B "$tmp/cmake" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
  -DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_CUDA_ARCHITECTURES=80 >"$tmp/cmake.log" 2>&1 ||
  { cat "$tmp/cmake.log"; fail "cmake could not configure the consumer"; }
cmake --build "$tmp/cmake" >>"$tmp/cmake.log" 2>&1 || { cat "$tmp/cmake.log"; fail "the CMake consumer did not build"; }
[ -x "$tmp/cmake/app" ] && [ -x "$tmp/cmake/app_early" ] || fail "the CMake consumer built no app or app_early"
echo "install test: CMake consumer (find_package(gpufs), gpufs::gpufs, gpufs_enable) built for sm_80"

if cmake -S samples/consumer -B "$tmp/cmake75" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
     -DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_CUDA_ARCHITECTURES=75 >"$tmp/cmake75.log" 2>&1; then
  fail "a project for sm_75 configured against a library without sm_75 code"
fi
grep -q 'gpufs: CMAKE_CUDA_ARCHITECTURES asks for CUDA architecture 75' "$tmp/cmake75.log" ||
  { cat "$tmp/cmake75.log"; fail "configuring for sm_75 failed without the package's message"; }
echo "install test: a project for an architecture the library lacks stops at configure time, saying so"

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
