#!/usr/bin/env bash
# Builds the tuned release executables (vmhost, vmhost-bench) into .build-release and prints the path
# of vmhost on stdout (progress goes to stderr).
#
# The tuning lives here, not in Package.swift, so that no target carries unsafe flags and a package
# can depend on vmhost by version. What it does, and why (bench/RESULTS.md has the figures):
# - the Swift runtime is linked statically: start-up binds none of its symbols;
# - the executables are not position-independent: start-up relocates none of their metadata;
# - lld, from the toolchain, links them;
# - modules are optimised across module boundaries.
#
# Usage: scripts/build-release.sh [--scratch-path DIR] [PRODUCT ...]   (default products: vmhost vmhost-bench)
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=.build-release
if [ "${1:-}" = "--scratch-path" ]; then scratch=$2; shift 2; fi
products=("$@")
[ ${#products[@]} -gt 0 ] || products=(vmhost vmhost-bench)
scripts/setup.sh >&2
flags=(-c release --scratch-path "$scratch" --static-swift-stdlib
       -Xswiftc -cross-module-optimization -Xswiftc -use-ld=lld -Xlinker -no-pie)
for product in "${products[@]}"; do
    swift build "${flags[@]}" --product "$product" >&2
done
echo "$PWD/$scratch/release/vmhost"
