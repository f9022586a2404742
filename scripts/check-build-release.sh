#!/usr/bin/env bash
# Checks scripts/build-release.sh without building (a release build of web/ takes many minutes):
# its --dry-run commands for every product, with the default build folder and with another, are
# handed to SwiftPM with --show-bin-path appended, which parses every argument, builds nothing and
# prints the folder the products would be in. Fails when SwiftPM refuses an argument (as it did
# when the web build's --scratch-path lost its value: "2 unexpected arguments"), when a product
# would be built outside the folder the script prints for it, or when a tuning flag is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
failed=0
check() {
    local expected_root=$1 count=$2; shift 2
    local output commands paths line bin_path index=0
    output=$(scripts/build-release.sh --dry-run "$@")
    mapfile -t commands < <(grep '^swift build ' <<<"$output")
    mapfile -t paths < <(grep -v '^swift build ' <<<"$output")
    if [ ${#commands[@]} -ne "$count" ] || [ ${#paths[@]} -ne "$count" ]; then
        echo "check-build-release: $*: expected $count commands and $count paths, got:"; echo "$output"; failed=1; return
    fi
    for line in "${commands[@]}"; do
        for flag in -cross-module-optimization --static-swift-stdlib --disable-local-rpath -no-pie --no-export-dynamic -disable-concrete-type-metadata-mangled-name-accessors; do
            grep -q -- " $flag " <<<"$line " || { echo "check-build-release: no $flag in: $line"; failed=1; }
        done
        if ! bin_path=$(eval "$line --show-bin-path" 2>&1); then
            echo "check-build-release: SwiftPM refused: $line"; echo "$bin_path"; failed=1; continue
        fi
        # SwiftPM names the triple's folder; the script's path goes through the `release` link.
        local product_path=${paths[$index]} folder=${bin_path%/*-unknown-linux-gnu/release}
        if [ "${product_path%/release/*}" != "$folder" ] || [[ $folder != "$expected_root"* ]]; then
            echo "check-build-release: '$line' builds into $bin_path, the script says $product_path"; failed=1
        fi
        index=$((index + 1))
    done
}
check "$PWD/.build-release" 3 vmhost vmhost-bench vmhost-web
scratch=$(mktemp -d)
check "$scratch/build" 2 --scratch-path "$scratch/build" vmhost-web vmhost
rmdir "$scratch"
[ $failed -eq 0 ] && echo "check-build-release: every command parses, each product where the script says"
exit $failed
