#!/usr/bin/env bash
# The main job: builds vmhost and runs the terminal demo app on the embedded backend
# (login, product list, menu groups; `python -m vmhost.demo` in the .venv that setup.sh makes), with
# the session kept in $XDG_STATE_HOME/vmhost (~/.local/state/vmhost): a second run opens logged in.
# Without a terminal (a pipe, CI), it runs the non-interactive tour instead, which shows the same
# screens through a pipe. `scripts/demo.sh --record FILE` records the session (without the state
# directory) for `python3 -m vmhost.replay FILE`.
#
# A repeat start is quick: setup.sh returns at once when it has run already (a stamp in .venv), and
# vmhost is built only when a file under Sources/, Package.swift or Package.resolved is newer than the
# last build this script made (then `swift build --product vmhost --quiet`: the stdio host only, and
# no lines but errors); it says why it builds, naming the first file changed (scripts/build-stamp.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
    cat <<'EOF'
usage: scripts/demo.sh [--locale zh-Hans|en] [vmhost options…]

Builds vmhost when its sources changed, then runs the terminal demo of the reference app on the
embedded backend: log in (account 13800138000, password 123456; or an SMS code, 123456), the
product list, the menu groups. Without a terminal it runs clients/shell/tour.sh instead, the same
screens through a pipe, with options of its own.

Options of the demo:
  --locale zh-Hans|en   the language of the screens (default zh-Hans); F2 switches it while running
  -h, --help            this text

Options passed through to vmhost (`vmhost --help` explains every one), e.g.:
  --backend embedded|URL   the backend: the embedded demo data (default) or an HTTP server
  --timeout-ms MS          the deadline of a backend call
  --state-dir DIR          where the session and the last lists are kept
                           (default here: $XDG_STATE_HOME/vmhost, ~/.local/state/vmhost)
  --demo-products N        the size of the embedded product catalogue (default 57)
  --record FILE            record the session as a transcript (then without the state
                           directory): replay it with python3 -m vmhost.replay FILE
  --trace FILE, --log-level LEVEL
  --clock manual --test-controls
                           a tester's keys, in the help line: F5 makes the next backend
                           call fail as chosen, F6 / F7 move the clock by 1 s / 60 s

Keys: Tab switches the login mode, o logs out (back to the login screen), F2 switches the
language, q quits (Ctrl-C on the login screen); on the menu groups, d asks before it deletes a
group (y deletes). The screens fit an 80×24 terminal.
EOF
}
usage_error() {
    printf 'scripts/demo.sh: %s\n' "$1" >&2
    echo "Try 'scripts/demo.sh --help'." >&2
    exit 64
}

# The demo's own options, checked here; the rest is vmhost's, checked by vmhost below.
demo_options=() host_options=()
while [ $# -gt 0 ]; do
    case $1 in
        -h | --help) usage; exit 0 ;;
        --locale | --locale=*)
            if [ "$1" = --locale ]; then
                [ $# -ge 2 ] || usage_error "--locale needs a value: zh-Hans or en"
                value=$2; shift
            else
                value=${1#--locale=}
            fi
            case $value in
                zh | zh-* | en | en-*) demo_options+=(--locale "$value") ;;
                *) usage_error "--locale: expected zh-Hans or en, got '$value'" ;;
            esac ;;
        *) host_options+=("$1") ;;
    esac
    shift
done

scripts/setup.sh
stamp=.build/demo-vmhost.stamp
. scripts/build-stamp.sh
reason=$(build_reason .build/debug/vmhost "$stamp" Package.resolved Sources Package.swift)
if [ -n "$reason" ]; then
    case $reason in
        "first build")
            echo "scripts/demo.sh: building vmhost; a first build fetches every package of the graph (the WebSocket transport's too) and compiles what vmhost uses" >&2 ;;
        "not built by this script before")
            echo "scripts/demo.sh: checking that vmhost is up to date (built before, not by this script)" >&2 ;;
        *)
            echo "scripts/demo.sh: building vmhost ($reason)" >&2 ;;
    esac
    swift build --product vmhost --quiet
    touch "$stamp"
fi
export VMHOST_BIN="$PWD/.build/debug/vmhost"

# vmhost checks the names of its options itself (--version after them: nothing is started).
if [ ${#host_options[@]} -gt 0 ] && ! "$VMHOST_BIN" "${host_options[@]}" --version >/dev/null; then
    echo "Try 'scripts/demo.sh --help'." >&2
    exit 64
fi

if [ -t 0 ] && [ -t 1 ]; then
    # The session is kept in the user's state home, so a second run opens logged in; a session
    # recorded (--record FILE) starts from nothing instead, as its replay will.
    state=(--state-dir "${XDG_STATE_HOME:-$HOME/.local/state}/vmhost")
    for argument in ${host_options[@]+"${host_options[@]}"}; do
        case $argument in --record | --record=*) state=() ;; esac
    done
    exec env PYTHONPATH="$PWD/clients/python" .venv/bin/python -m vmhost.demo ${state[@]+"${state[@]}"} \
        ${demo_options[@]+"${demo_options[@]}"} ${host_options[@]+"${host_options[@]}"}
fi
if [ ${#demo_options[@]} -gt 0 ] || [ ${#host_options[@]} -gt 0 ]; then
    echo "scripts/demo.sh: no terminal: running clients/shell/tour.sh, which uses options of its own; not used: ${demo_options[*]-} ${host_options[*]-}" >&2
fi
exec clients/shell/tour.sh "$VMHOST_BIN"
