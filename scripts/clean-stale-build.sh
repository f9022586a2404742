#!/usr/bin/env bash
# Usage: scripts/clean-stale-build.sh SCRATCH-PATH
#
# Empties the release folder of a build folder when the sources changed since its last build.
# With cross-module optimisation an incremental release build may link a module's old copies of
# code it inlined from another module that changed since (seen: a library that crashed at its first
# call after a change of a type's layout, and figures measured on code that was no longer there).
# The sources (Package.swift, Sources, and web/'s), tracked, changed and new, are hashed into
# SCRATCH-PATH/.sources; a build whose hash differs from the last starts clean. The hash is of the
# files' contents as they are in the working tree, so staging or committing alone changes nothing
# (a commit made while scripts/build-release.sh built its second product emptied the folder
# holding its first). Outside a git checkout nothing is hashed and nothing is removed.
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=${1:?usage: scripts/clean-stale-build.sh SCRATCH-PATH}
paths=(Package.swift Sources web/Package.swift web/Sources)
stamp=$(
    git ls-files -co --exclude-standard -z -- "${paths[@]}" | sort -z | xargs -0 -r sha256sum 2>/dev/null \
        | sha256sum | cut -d' ' -f1
) || true
if [ -d "$scratch" ] && [ "$(cat "$scratch/.sources" 2>/dev/null || true)" != "$stamp" ]; then
    echo "clean-stale-build: the sources changed since the last build in $scratch: building its release folder anew" >&2
    rm -rf "$scratch"/*-unknown-linux-gnu/release
fi
mkdir -p "$scratch"
echo "$stamp" >"$scratch/.sources"
