#!/usr/bin/env bash
# The main job: builds vmhost and runs a tour of it on the embedded backend through a pipe.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
swift build
exec clients/shell/tour.sh "$PWD/.build/debug/vmhost"
