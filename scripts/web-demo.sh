#!/usr/bin/env bash
# The web demo: builds vmhost-web and serves the three screens (login, product list, menu groups)
# to browsers on the embedded backend. Open the URL it prints. Options pass through to vmhost-web,
# e.g. `scripts/web-demo.sh --listen 127.0.0.1:9000` or `--demo-products 500`. With `--record DIR` every
# page's session is recorded to DIR/session-N.jsonl, for `python3 -m vmhost.replay`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
swift build --product vmhost-web
exec .build/debug/vmhost-web "$@"
