#!/usr/bin/env bash
# Builds the tuned release executables (vmhost, vmhost-bench) into .build-release and prints the path
# of vmhost on stdout (progress goes to stderr).
#
# The tuning lives here, not in Package.swift, so that no target carries unsafe flags and a package
# can depend on vmhost by version. What it does, and why (bench/RESULTS.md has the figures):
# - the Swift runtime is linked statically: start-up binds none of its symbols;
# - the executables are not position-independent: start-up relocates none of their metadata;
# - lld, from the toolchain, links them;
# - libstdc++ (which the Swift runtime needs) and libgcc are linked statically: binding libstdc++'s
#   own relocations was over half of the instructions from exec to the first reply;
# - each function has its own section, and the functions a start-up runs (scripts/startup-order.txt,
#   made by scripts/startup-order.py) are placed together: the kernel maps every touched page of
#   code with its neighbours, so the fewer pages a start-up touches, the less memory an idle host holds;
# - modules are optimised across module boundaries;
# - no `$ORIGIN` run path: the executables load no library of their own, and the loader would look
#   for each system library in a dozen subdirectories of the build folder first.
#
# Usage: scripts/build-release.sh [--scratch-path DIR] [PRODUCT ...]   (default products: vmhost vmhost-bench)
# vmhost-web, a product of the package in web/, is built into DIR-web.
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=.build-release
if [ "${1:-}" = "--scratch-path" ]; then scratch=$2; shift 2; fi
products=("$@")
[ ${#products[@]} -gt 0 ] || products=(vmhost vmhost-bench)
scripts/setup.sh >&2
flags=(-c release --scratch-path "$scratch" --static-swift-stdlib --disable-local-rpath
       -Xswiftc -cross-module-optimization -Xswiftc -use-ld=lld -Xlinker -no-pie
       -Xswiftc -Xfrontend -Xswiftc -function-sections
       -Xlinker "--symbol-ordering-file=$PWD/scripts/startup-order.txt" -Xlinker --no-warn-symbol-ordering)
# The toolchain's static link line asks for `-lstdc++`, which finds the shared library first. A
# directory searched before the compiler's own, holding only the archive, makes it find the archive.
cxx_archive=$(clang -print-file-name=libstdc++.a 2>/dev/null || true)
if [ -f "$cxx_archive" ]; then
    cxx_dir=$scratch/static-cxx
    mkdir -p "$cxx_dir"
    ln -sf "$cxx_archive" "$cxx_dir/libstdc++.a"
    cxx_dir=$(cd "$cxx_dir" && pwd)
    flags+=(-Xswiftc -L -Xswiftc "$cxx_dir" -Xswiftc -Xclang-linker -Xswiftc -static-libgcc)
else
    echo "build-release: libstdc++.a not found (package libstdc++-12-dev); libstdc++ stays shared" >&2
fi
# An incremental build after a change may keep inlined code that is no longer there: start clean then.
scripts/clean-stale-build.sh "$scratch"
for product in "${products[@]}"; do
    if [ "$product" = vmhost-web ]; then
        scripts/clean-stale-build.sh "$scratch-web"
        # The WebSocket package (web/) is a root of its own: a build folder of its own.
        web_flags=("${flags[@]}")
        web_flags[2]="$PWD/$scratch-web"
        swift build --package-path web "${web_flags[@]}" --product vmhost-web >&2
    else
        swift build "${flags[@]}" --product "$product" >&2
    fi
done
echo "$(cd "$scratch/release" && pwd)/vmhost"
