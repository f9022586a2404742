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
#   the compiler's private helpers, which have no symbol to name in that list, are placed together
#   before them (scripts/startup-text.ld);
# - modules are optimised across module boundaries;
# - the type metadata of a concrete type is reached through its accessor, not instantiated from
#   its mangled name (`-disable-concrete-type-metadata-mangled-name-accessors`): a mangled name is
#   smaller code, but each first use demangles it and looks the conformances of its generic
#   arguments up by scanning every conformance record of the binary, which was half of the
#   instructions from exec to the first reply (1.29 million of them; 0.77 million without);
# - the linker drops the sections no kept code or data refers to (`--gc-sections`; with one section
#   per function, the functions nothing calls), and writes no debug information (`--strip-debug`:
#   the symbol table stays, so callgrind, perf and a crash's backtrace still name every function;
#   only file and line numbers are gone). Both cut the binary's size, not what a start-up maps;
# - no `$ORIGIN` run path: the executables load no library of their own, and the loader would look
#   for each system library in a dozen subdirectories of the build folder first;
# - no dynamic symbol table of their own functions (`--no-export-dynamic`, over the
#   `-export-dynamic` the toolchain's static link asks for): nothing looks a symbol of the
#   executable up by name (libcurl and SQLite, opened with `dlopen`, need none of its symbols), and
#   the Swift runtime's start-up `dladdr` (finding its own path for the backtracer) scanned all
#   5,700 of them, a tenth of a start-up's instructions, over 0.4 MiB of pages kept resident;
# - jansson is linked from its archive (libjansson.a, Debian libjansson-dev, as the headers are):
#   one shared library fewer for the loader to open, map and relocate, and to search for every
#   symbol bound after it (24,000 of a start-up's 610,000 instructions, 52 KiB resident). A
#   pkg-config file of the build's own names the archive's directory (see below);
# - libm is a dependency only of an executable that still references it (`AS_NEEDED`, see below):
#   vmhost defines every function of it the standard library calls (its `LibmOnFirstCall` target)
#   and loads libm at the first call, so a start-up neither maps nor relocates it, nor runs its 21
#   IFUNC resolvers (0.3–0.4 MiB of its code resident in an idle host); the script fails if vmhost
#   still depends on libm, naming the functions the target lacks;
# - (not a flag: the `ProcessArguments` target of the vmhost executable) with the runtime linked
#   statically, the runtime's initialiser that looked for argv by reading /proc/self/maps with
#   sscanf (117,000 instructions, a fifth of a start-up's) is left out of the link.
#
# Usage: scripts/build-release.sh [--dry-run] [--scratch-path DIR] [PRODUCT ...]
#   (default products: vmhost vmhost-bench). Prints the path of each product built, one a line.
# vmhost-web and web-echo-floor, products of the package in web/, are built into DIR-web.
# --dry-run builds nothing: it prints each `swift build` command, one a line (each argument quoted
# for the shell), then the paths; scripts/check-build-release.sh has SwiftPM parse those commands.
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=.build-release
dry_run=false
while [ $# -gt 0 ]; do
    case $1 in
        --dry-run) dry_run=true; shift ;;
        --scratch-path) scratch=$2; shift 2 ;;
        *) break ;;
    esac
done
products=("$@")
[ ${#products[@]} -gt 0 ] || products=(vmhost vmhost-bench)
# Absolute: SwiftPM takes a relative one from the package's folder (web/ for vmhost-web).
case $scratch in /*) ;; *) scratch=$PWD/$scratch ;; esac
# Runs a build, or with --dry-run prints it.
build() {
    if $dry_run; then
        printf '%q ' "$@" | sed 's/ $//'
        echo
    else
        "$@" >&2
    fi
}
$dry_run || scripts/setup.sh >&2
flags=(-c release --scratch-path "$scratch" --static-swift-stdlib --disable-local-rpath
       -Xswiftc -cross-module-optimization -Xswiftc -use-ld=lld -Xlinker -no-pie
       -Xswiftc -Xfrontend -Xswiftc -function-sections
       -Xswiftc -Xfrontend -Xswiftc -disable-concrete-type-metadata-mangled-name-accessors
       -Xlinker "--symbol-ordering-file=$PWD/scripts/startup-order.txt" -Xlinker --no-warn-symbol-ordering
       -Xlinker -T -Xlinker "$PWD/scripts/startup-text.ld"
       -Xlinker --gc-sections -Xlinker --strip-debug -Xlinker --no-export-dynamic)
# The toolchain's static link line asks for `-lstdc++`, which finds the shared library first. A
# directory searched before the compiler's own, holding only the archive, makes it find the archive.
cxx_archive=$(clang -print-file-name=libstdc++.a 2>/dev/null || true)
if [ -f "$cxx_archive" ]; then
    cxx_dir=$scratch/static-cxx
    if ! $dry_run; then
        mkdir -p "$cxx_dir"
        ln -sf "$cxx_archive" "$cxx_dir/libstdc++.a"
    fi
    flags+=(-Xswiftc -L -Xswiftc "$cxx_dir" -Xswiftc -Xclang-linker -Xswiftc -static-libgcc)
else
    echo "build-release: libstdc++.a not found (package libstdc++-12-dev); libstdc++ stays shared" >&2
fi
# libm is linked as needed only: the vmhost executable defines every function of it that it calls
# (Sources/ReferenceApp/LibmOnFirstCall) and loads it at the first call, so the loader neither maps
# nor relocates it at start-up. The toolchain's link line asks for `-lm` before any flag of ours
# could say `--as-needed`, so a directory searched first holds a `libm.so` of the build's own: a
# linker script naming the system's libm as needed.
libm_library=$(clang -print-file-name=libm.so.6 2>/dev/null || true)
libm_dir=
if [ -f "$libm_library" ]; then
    libm_dir=$scratch/libm-as-needed
    if ! $dry_run; then
        mkdir -p "$libm_dir"
        echo "/* scripts/build-release.sh: libm, a dependency only of an executable that calls it */" >"$libm_dir/libm.so"
        echo "INPUT ( AS_NEEDED ( $libm_library ) )" >>"$libm_dir/libm.so"
    fi
    flags+=(-Xswiftc -L -Xswiftc "$libm_dir")
else
    echo "build-release: libm.so.6 not found; libm stays a dependency of every executable" >&2
fi
# jansson is linked from its archive too. SwiftPM puts the directory of jansson's pkg-config file
# (the system's, which holds the shared library too) before every other, so the build reads a
# pkg-config file of its own (PKG_CONFIG_PATH) that names a directory holding only the archive.
jansson_archive=$(pkg-config --variable=libdir jansson 2>/dev/null || true)/libjansson.a
if [ -f "$jansson_archive" ]; then
    jansson_dir=$scratch/static-jansson
    if ! $dry_run; then
        mkdir -p "$jansson_dir"
        ln -sf "$jansson_archive" "$jansson_dir/libjansson.a"
        printf '%s\n' "Name: Jansson" "Description: jansson, linked from its archive (scripts/build-release.sh)" \
            "Version: $(pkg-config --modversion jansson)" "Libs: -L$jansson_dir -ljansson" \
            "Cflags: $(pkg-config --cflags jansson)" >"$jansson_dir/jansson.pc"
    fi
    export PKG_CONFIG_PATH=$jansson_dir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
else
    echo "build-release: libjansson.a not found (package libjansson-dev); jansson stays shared" >&2
fi
# An incremental build after a change may keep inlined code that is no longer there: start clean then.
$dry_run || scripts/clean-stale-build.sh "$scratch"
# The flags with the value of --scratch-path replaced by $1.
flags_in() {
    local argument replace=false
    in_flags=()
    for argument in "${flags[@]}"; do
        if $replace; then argument=$1; replace=false; fi
        [ "$argument" = --scratch-path ] && replace=true
        in_flags+=("$argument")
    done
}
# SwiftPM does not know that the link reads the order file and the linker script: after a change
# to either alone it would keep the last link. The product is removed then, so it is linked again.
relink_if_stale() {
    if ! $dry_run && [ -f "$1" ] && { [ scripts/startup-order.txt -nt "$1" ] || [ scripts/startup-text.ld -nt "$1" ]; }; then
        rm -f "$1"
    fi
}
paths=()
for product in "${products[@]}"; do
    if [ "$product" = vmhost-web ] || [ "$product" = web-echo-floor ]; then
        $dry_run || scripts/clean-stale-build.sh "$scratch-web"
        # The WebSocket package (web/) is a root of its own: a build folder of its own.
        flags_in "$scratch-web"
        relink_if_stale "$scratch-web/release/$product"
        build swift build --package-path web "${in_flags[@]}" --product "$product"
        paths+=("$scratch-web/release/$product")
    else
        flags_in "$scratch"
        relink_if_stale "$scratch/release/$product"
        build swift build "${in_flags[@]}" --product "$product"
        paths+=("$scratch/release/$product")
        # vmhost loads libm at its first call of it (Sources/ReferenceApp/LibmOnFirstCall): a libm
        # function the standard library calls that the target lacks would make libm a dependency
        # again, mapped at every start-up.
        if [ "$product" = vmhost ] && ! $dry_run && [ -n "$libm_dir" ] && command -v readelf >/dev/null &&
            readelf -d "$scratch/release/vmhost" | grep -q 'Shared library: \[libm\.'; then
            echo "build-release: vmhost depends on libm; of the functions it imports, libm defines these" \
                "(Sources/ReferenceApp/LibmOnFirstCall must define those of libm):" >&2
            comm -12 <(readelf -W --dyn-syms "$scratch/release/vmhost" | awk '$7 == "UND" { sub(/@.*/, "", $8); print $8 }' | sort -u) \
                <(nm -D --defined-only "$libm_library" | awk '{ sub(/@.*/, "", $3); print $3 }' | sort -u) | sed 's/^/  /' >&2
            exit 1
        fi
    fi
done
printf '%s\n' "${paths[@]}"
