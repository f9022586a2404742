#!/usr/bin/env bash
# Points the examples' dependency on vmhost at this checkout as a release: a clone of the committed
# HEAD, tagged with VERSION by scripts/tag-release.sh, in .build/tagged/COMMIT/vmhost.
#
# Each example of Examples/ depends on vmhost as an app outside this repository does, by URL and
# version (`.package(url: "https://git.example.com/you/vmhost.git", from: "0.3.0")`). That address
# stands for wherever a team keeps vmhost; here it is made to resolve to the tagged clone with a
# SwiftPM mirror (`swift package config set-mirror`, kept in each example's .swiftpm/, which git
# ignores), the tool a team uses to fetch a package from its own copy of a repository. So the
# manifests are what a reader copies, and SwiftPM resolves the tag as it would a published one
# (`Package.resolved` pins vmhost at the version). A manifest reading an environment variable would
# show machinery that no app has, and a SwiftPM build of it would not be the app's.
#
# The clone is of the committed HEAD: uncommitted changes to vmhost are not in it (a note says so).
# Its folder is named by the commit because SwiftPM keeps a fetched tag and never sees it move:
# a new commit is a new mirror, which `swift package update vmhost` resolves.
#
#   scripts/use-tagged-vmhost.sh [EXAMPLE_DIR...]   (default: every example naming the address)
#
# Prints the clone's path. scripts/test.sh runs it before building the examples.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
url=https://git.example.com/you/vmhost.git

commit=$(git rev-parse HEAD)
clone=$root/.build/tagged/$commit/vmhost
if [ ! -d "$clone/.git" ]; then
    rm -rf "$root/.build/tagged"
    mkdir -p "$(dirname "$clone")"
    git clone --quiet "$root" "$clone"
    # tag-release.sh checks that the framework reports VERSION and that the tree is clean.
    GIT_COMMITTER_NAME=vmhost GIT_COMMITTER_EMAIL=vmhost@example.invalid \
        "$clone/scripts/tag-release.sh" >/dev/null
fi
if [ -n "$(git status --porcelain -- Package.swift Sources web/Sources VERSION)" ]; then
    echo "use-tagged-vmhost: the examples build vmhost as committed at ${commit:0:12}; uncommitted changes to it are not in that build" >&2
fi

examples=("$@")
if [ ${#examples[@]} -eq 0 ]; then
    for manifest in Examples/*/Package.swift; do
        if grep -qF "\"$url\"" "$manifest"; then examples+=("$(dirname "$manifest")"); fi
    done
fi
for example in "${examples[@]}"; do
    swift package --package-path "$example" config set-mirror --original "$url" --mirror "$clone"
    # A package already resolved against another commit's clone moves to this one; a fresh one
    # resolves everything on its first build.
    if [ -f "$example/Package.resolved" ]; then
        swift package --package-path "$example" update vmhost >/dev/null
    fi
done
echo "$clone"
