#!/usr/bin/env bash
# The web demo: builds vmhost-web and serves the three screens (login, product list, menu groups)
# to browsers on the embedded backend. Open the URL it prints. Options pass through to vmhost-web,
# e.g. `scripts/web-demo.sh --listen 127.0.0.1:9000` or `--demo-products 500`; `--help` lists them.
# With `--record DIR` every page's session is recorded to DIR/session-N.jsonl, for
# `python3 -m vmhost.replay`; with `--clock manual --test-controls` the page shows a tester's panel
# (the next backend call fails as chosen, the clock moves), so a failure or a countdown is recorded.
#
# vmhost-web is the product of the package in web/ (it depends on this checkout's package by path).
# A repeat start is quick: setup.sh returns at once when it has run already, and vmhost-web is
# built only when a file under Sources/, web/Sources/, a Package.swift or web's Package.resolved is
# newer than the last build this script made (`swift build --quiet`: no lines but errors); it says
# why it builds, naming the first file changed (scripts/build-stamp.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
binary=web/.build/debug/vmhost-web
stamp=web/.build/web-demo.stamp
. scripts/build-stamp.sh
reason=$(build_reason "$binary" "$stamp" web/Package.resolved Sources web/Sources Package.swift web/Package.swift)
if [ -n "$reason" ]; then
    case $reason in
        "first build")
            echo "scripts/web-demo.sh: building vmhost-web; a first build fetches every package of the graph and compiles the WebSocket transport (hummingbird, SwiftNIO: a few minutes)" >&2 ;;
        "not built by this script before")
            echo "scripts/web-demo.sh: checking that vmhost-web is up to date (built before, not by this script)" >&2 ;;
        *)
            echo "scripts/web-demo.sh: building vmhost-web ($reason)" >&2 ;;
    esac
    swift build --package-path web --product vmhost-web --quiet
    touch "$stamp"
fi
exec "$binary" "$@"
