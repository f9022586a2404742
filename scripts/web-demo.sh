#!/usr/bin/env bash
# The web demo: builds vmhost-web and serves the three screens (login, product list, menu groups)
# to browsers on the embedded backend. Open the URL it prints. Options pass through to vmhost-web,
# e.g. `scripts/web-demo.sh --listen 127.0.0.1:9000` or `--demo-products 500`; `--help` lists them.
# With `--record DIR` every page's session is recorded to DIR/session-N.jsonl, for
# `python3 -m vmhost.replay`.
#
# A repeat start is quick: setup.sh returns at once when it has run already, and vmhost-web is
# built only when a file under Sources/, Package.swift or Package.resolved is newer than the last
# build this script made (`swift build --product vmhost-web --quiet`: no lines but errors).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
stamp=.build/web-demo.stamp
# Built by this script before, and no source newer than that build (Package.resolved is written
# by the first build: without it, SwiftPM has a graph to resolve).
built() {
    [ -x .build/debug/vmhost-web ] && [ -e "$stamp" ] && [ -e Package.resolved ] &&
        [ -z "$(find Sources Package.swift Package.resolved -newer "$stamp" -print -quit)" ]
}
if ! built; then
    if [ ! -x .build/debug/vmhost-web ]; then
        echo "scripts/web-demo.sh: building vmhost-web; a first build fetches every package of the graph and compiles the WebSocket transport (hummingbird, SwiftNIO: a few minutes)" >&2
    else
        echo "scripts/web-demo.sh: building vmhost-web (sources changed)" >&2
    fi
    swift build --product vmhost-web --quiet
    touch "$stamp"
fi
exec .build/debug/vmhost-web "$@"
