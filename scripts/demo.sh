#!/usr/bin/env bash
# The main job: builds vmhost and runs the terminal demo app on the embedded backend
# (login, product list, menu groups; `python -m vmhost.demo` in the .venv that setup.sh makes), with
# the session kept in $XDG_STATE_HOME/vmhost (~/.local/state/vmhost): a second run opens logged in.
# Without a terminal (a pipe, CI), it runs the non-interactive tour instead, which shows the same
# screens through a pipe. `scripts/demo.sh --record FILE` records the session (without the state
# directory) for `python3 -m vmhost.replay FILE`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
swift build
export VMHOST_BIN="$PWD/.build/debug/vmhost"
if [ -t 0 ] && [ -t 1 ]; then
    # The session is kept in the user's state home, so a second run opens logged in; a session
    # recorded (--record FILE) starts from nothing instead, as its replay will.
    state=(--state-dir "${XDG_STATE_HOME:-$HOME/.local/state}/vmhost")
    for argument in "$@"; do
        case "$argument" in --record|--record=*) state=() ;; esac
    done
    exec env PYTHONPATH="$PWD/clients/python" .venv/bin/python -m vmhost.demo "${state[@]}" "$@"
fi
exec clients/shell/tour.sh "$VMHOST_BIN"
