#!/usr/bin/env bash
# Tags HEAD with the version in VERSION (the one place the repository states it), after checking
# that the framework reports the same (`vmhostVersion`) and that the tree is clean. SwiftPM resolves
# `.package(url: …, from: "X.Y.Z")` against such a tag.
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(tr -d '[:space:]' < VERSION)
if ! grep -q "public let vmhostVersion = \"$version\"" Sources/VMHostCore/Host.swift; then
    echo "tag-release: Sources/VMHostCore/Host.swift does not say vmhostVersion = \"$version\"" >&2
    exit 1
fi
if [ -n "$(git status --porcelain)" ]; then
    echo "tag-release: the tree has uncommitted changes" >&2
    exit 1
fi
git tag -a "$version" -m "vmhost $version"
echo "tagged $version"
