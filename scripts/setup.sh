#!/usr/bin/env bash
# Installs what building and testing vmhost needs, when it is missing:
# jansson (Debian libjansson-dev); SQLite's library (libsqlite3-0, loaded with --state-dir);
# libcurl's library (libcurl4, loaded by the HTTP backend's first call; building needs no headers);
# Python 3 with its venv module (Debian python3, python3-venv), and a virtual environment in .venv
# for the Python client and the Python suites, made from the `python3` on PATH (Debian's own
# Python refuses `pip install` outside one, PEP 668); a .venv made before from another python3 is
# kept while it runs (remove it to make it again). Waits for the dpkg/apt lock when another apt
# holds it (scripts/apt-lock.sh). With --tests also: tmux, jq, Node (Debian
# nodejs) and, in .venv, the packages of
# Tests/requirements.txt (pytest, hypothesis, mypy, selenium); for the browser suite, Debian's
# chromium and chromium-driver, and a Chinese font for legible screenshots (fonts-wqy-microhei).
# Scripts run Python as .venv/bin/python; `source .venv/bin/activate` does the same in a shell.
#
# Once it has run, it returns at once (every demo start calls it): a stamp in .venv holds what it
# ran with (this script's content, the python3 on PATH and, with --tests, Tests/requirements.txt),
# and a run with the same returns without checking again. Remove .venv to run it all again.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=
[ "${1:-}" != --tests ] || mode=--tests
# The interpreter behind the python3 on PATH (through a pyenv shim, a venv or a link), or "none".
python_base() {
    python3 -c 'import sys; print(sys._base_executable if hasattr(sys, "_base_executable") else sys.executable)' \
        2>/dev/null | xargs -r readlink -f || true
}
key() {
    cksum < scripts/setup.sh
    echo "python3: $(python_base)"
    if [ -n "$1" ]; then cksum < Tests/requirements.txt; fi
}
stamp() { echo ".venv/.setup${1:+-tests}"; }
done_with() { [ -x .venv/bin/python ] && [ "$(cat "$(stamp "$1")" 2>/dev/null)" = "$(key "$1")" ]; }
# A set-up for the tests includes the plain one.
if done_with "$mode" || { [ -z "$mode" ] && done_with --tests; }; then exit 0; fi

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
# Another apt or dpkg (unattended-upgrades on a fresh machine) may hold the lock: each apt-get
# waits for it, saying what it waits for, up to a deadline (scripts/apt-lock.sh;
# APT_LOCK_DEADLINE=SECONDS, default 600). apt-get's own DPkg::Lock::Timeout covers a lock taken
# between the check and the call.
. scripts/apt-lock.sh
apt_get() {
    wait_for_apt_lock
    as_root env DEBIAN_FRONTEND=noninteractive apt-get -o "DPkg::Lock::Timeout=${APT_LOCK_DEADLINE:-600}" "$@"
}
apt_updated=
apt_install() {
    echo "setup: installing $*" >&2
    if [ -z "$apt_updated" ]; then
        apt_get update -qq
        apt_updated=1
    fi
    apt_get install -y -qq "$@" >/dev/null
}

packages=()
pkg-config --exists jansson 2>/dev/null || packages+=(libjansson-dev pkg-config)
command -v python3 >/dev/null 2>&1 || packages+=(python3 python3-venv)
# SQLite's library, which the reference app loads when --state-dir is given (Sources/ReferenceApp/StateStore).
/sbin/ldconfig -p 2>/dev/null | grep -q 'libsqlite3\.so\.0 ' || packages+=(libsqlite3-0)
# libcurl, which the HTTP client (VMHostHTTP) loads on its first call (Sources/VMHostHTTP/Engine/CurlLibrary.swift).
/sbin/ldconfig -p 2>/dev/null | grep -q 'libcurl\.so\.4 ' || packages+=(libcurl4)
if [ "${1:-}" = "--tests" ]; then
    # The terminal demo's test drives it in tmux; the shell examples read replies with jq.
    command -v tmux >/dev/null 2>&1 || packages+=(tmux)
    command -v jq >/dev/null 2>&1 || packages+=(jq)
    command -v node >/dev/null 2>&1 || packages+=(nodejs)
    # The browser suite (Tests/Browser) drives headless Chromium through chromedriver.
    command -v chromium >/dev/null 2>&1 || packages+=(chromium)
    command -v chromedriver >/dev/null 2>&1 || packages+=(chromium-driver)
    [ -e /usr/share/fonts/truetype/wqy/wqy-microhei.ttc ] || packages+=(fonts-wqy-microhei)
fi
[ ${#packages[@]} -eq 0 ] || apt_install "${packages[@]}"
# Debian ships venv's ensurepip apart from python3, in python3-venv.
python3 -c 'import venv, ensurepip' 2>/dev/null || apt_install python3-venv

# .venv is made from the python3 on PATH. One made before from another python3 (a shell whose
# python3 differs: a pyenv shim, an activated venv) is kept, with the packages it holds, as long as
# its interpreter runs: say so, and how to make it again. One whose interpreter no longer runs is
# made again, and given again the test packages it had.
base=$(python_base)
made_with=$(cat .venv/.base 2>/dev/null || true)
had_requirements=
if [ -x .venv/bin/python ] && .venv/bin/python -c '' 2>/dev/null; then
    if [ "$made_with" != "$base" ]; then
        echo "setup: keeping .venv, made with ${made_with:-another python3}; the python3 on PATH is" \
            "${base:-none} (remove .venv to make it again with that one)" >&2
    fi
else
    [ ! -e .venv/.requirements ] || had_requirements=1
    echo "setup: making .venv with $base${had_requirements:+ (with the test packages it had)}" >&2
    rm -rf .venv
    "$base" -m venv .venv
    echo "$base" > .venv/.base
fi

if [ "${1:-}" = "--tests" ] || [ -n "$had_requirements" ]; then
    stamp=$(cksum < Tests/requirements.txt)
    if [ "$(cat .venv/.requirements 2>/dev/null)" != "$stamp" ]; then
        echo "setup: installing Python test requirements in .venv" >&2
        .venv/bin/python -m pip install --quiet --disable-pip-version-check -r Tests/requirements.txt
        echo "$stamp" > .venv/.requirements
    fi
fi

key "$mode" > "$(stamp "$mode")"
