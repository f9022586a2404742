#!/usr/bin/env bash
# Builds a library of vmhost's C ABI for shipping (protocol/embedding.md, "Shipping the library"):
# a release build of PRODUCT (default: vmhost-embedded, the reference app; an app names its own
# library product) into DIR (default .build-library), and prints the library's path on stdout
# (progress goes to stderr).
#
# What makes it shippable, and why:
# - the Swift runtime and libstdc++ are linked in statically: the library needs no Swift toolchain
#   on the machine it runs on, only the C libraries protocol/embedding.md lists;
# - it exports the five calls of include/vmhost.h and nothing else (scripts/vmhost-exports.map):
#   the app's process sees no Swift symbol, no libcurl shim, nothing to clash with its own;
# - it carries no run path (no $ORIGIN, no path of the build machine): the app's loader finds it
#   and its C libraries where the app puts them; its name (soname) is lib<product>.so, and it has
#   no symbol table beyond the five calls (no debug information, no source file names);
# - modules are optimised across module boundaries.
# scripts/check-library.sh LIBRARY checks the last three.
#
# Usage: scripts/build-library.sh [--scratch-path DIR] [PRODUCT]
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=.build-library
if [ "${1:-}" = "--scratch-path" ]; then scratch=$2; shift 2; fi
product=${1:-vmhost-embedded}
scripts/setup.sh >&2
# SwiftPM's --static-swift-stdlib reaches executables only: a library asks the driver itself.
# No debug information: it would carry the source paths of this machine.
flags=(-c release --scratch-path "$scratch" --static-swift-stdlib --disable-local-rpath
       -Xswiftc -static-stdlib -Xswiftc -gnone -Xswiftc -cross-module-optimization
       -Xlinker "--version-script=$PWD/scripts/vmhost-exports.map"
       -Xlinker "-soname=lib$product.so" -Xlinker --strip-all)
# As scripts/build-release.sh: a directory holding only libstdc++'s archive, searched first.
cxx_archive=$(clang -print-file-name=libstdc++.a 2>/dev/null || true)
if [ -f "$cxx_archive" ]; then
    cxx_dir=$scratch/static-cxx
    mkdir -p "$cxx_dir"
    ln -sf "$cxx_archive" "$cxx_dir/libstdc++.a"
    cxx_dir=$(cd "$cxx_dir" && pwd)
    flags+=(-Xswiftc -L -Xswiftc "$cxx_dir" -Xswiftc -Xclang-linker -Xswiftc -static-libgcc)
else
    echo "build-library: libstdc++.a not found (package libstdc++-12-dev); libstdc++ stays shared" >&2
fi
scripts/clean-stale-build.sh "$scratch"
swift build "${flags[@]}" --product "$product" >&2
echo "$(cd "$scratch/release" && pwd)/lib$product.so"
