#!/usr/bin/env bash
# Installs what building and testing vmhost needs, when it is missing:
# jansson (Debian libjansson-dev); libcurl's development files, which the release build links
# against (Foundation is linked statically there, see Package.swift); and, for the test suites,
# tmux, jq, pytest and hypothesis, and for the browser suite chromium, chromium-driver and selenium.
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

packages=()
pkg-config --exists jansson 2>/dev/null || packages+=(libjansson-dev pkg-config)
pkg-config --exists libcurl 2>/dev/null || packages+=(libcurl4-openssl-dev)
if [ ${#packages[@]} -gt 0 ]; then
    echo "setup: installing ${packages[*]}" >&2
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${packages[@]}" >/dev/null
fi

if [ "${1:-}" = "--tests" ]; then
    # The terminal demo's test drives it in tmux; the shell examples read replies with jq.
    missing=()
    command -v tmux >/dev/null 2>&1 || missing+=(tmux)
    command -v jq >/dev/null 2>&1 || missing+=(jq)
    # The browser suite (Tests/Browser) drives headless Chromium through chromedriver.
    command -v chromium >/dev/null 2>&1 || missing+=(chromium)
    command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
    # A Chinese font, so that the screenshots of the zh-Hans pages are legible.
    [ -e /usr/share/fonts/truetype/wqy/wqy-microhei.ttc ] || missing+=(fonts-wqy-microhei)
    if [ ${#missing[@]} -gt 0 ]; then
        echo "setup: installing ${missing[*]}" >&2
        as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
    if ! python3 -c 'import pytest, hypothesis, selenium' 2>/dev/null; then
        echo "setup: installing Python test requirements" >&2
        python3 -m pip install --quiet --disable-pip-version-check -r Tests/requirements.txt
    fi
fi
