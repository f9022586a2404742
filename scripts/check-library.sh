#!/usr/bin/env bash
# Checks a library of vmhost's C ABI as scripts/build-library.sh makes it for shipping: it exports
# the five calls of include/vmhost.h and nothing else, carries no run path, and holds no path of
# the machine that built it (the checkout's folder). Exits 1 naming what is wrong.
#
# Usage: scripts/check-library.sh LIBRARY
set -uo pipefail
cd "$(dirname "$0")/.."
library=${1:?usage: scripts/check-library.sh LIBRARY}
[ -f "$library" ] || { echo "check-library: $library: no such file" >&2; exit 1; }
problems=0
expected="vmhost_abi_version vmhost_close vmhost_open vmhost_strerror vmhost_write"
exported=$(nm -D --defined-only "$library" | awk '$2 ~ /^[TDBRVWiu]$/ {print $3}' | sort | tr '\n' ' ' | sed 's/ $//')
if [ "$exported" != "$expected" ]; then
    count=$(echo "$exported" | wc -w)
    echo "check-library: exports $count symbols, not the five of vmhost.h; first: $(echo "$exported" | tr ' ' '\n' | grep -v '^vmhost_' | head -5 | tr '\n' ' ')" >&2
    problems=1
fi
if readelf -d "$library" | grep -qE 'RPATH|RUNPATH'; then
    echo "check-library: carries a run path: $(readelf -d "$library" | grep -E 'RPATH|RUNPATH' | sed 's/.*\[\(.*\)\]/\1/')" >&2
    problems=1
fi
if grep -qaF "$PWD" "$library"; then
    echo "check-library: holds a path of this machine ($PWD), e.g. $(grep -aoF "$PWD" "$library" | head -1)" >&2
    problems=1
fi
[ $problems -eq 0 ] && echo "check-library: $library exports the five calls only, no run path, no path of this machine"
exit $problems
