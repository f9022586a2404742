#!/usr/bin/env bash
# Runs every test suite of vmhost and exits non-zero if any fails:
#   1. Swift unit and in-process tests (swift test)
#   2. end-to-end tests of the real binary through a pipe (pytest, Tests/EndToEnd)
#   3. the Python client's tests, which replay every conformance transcript (pytest, clients/python/tests)
#   4. the Node client's tests, which replay them too (node --test, clients/js/test)
#   5. the hardening suite (pytest, Tests/Hardening): a generative fuzzer of malformed frames, and the
#      host as a process: EOF, signals and a closed stdout with work in flight, memory over create/dispose
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --tests || exit 1

failed=()
run() {
    local name=$1; shift
    echo "=== $name: $*"
    if "$@"; then echo "=== $name: passed"; else echo "=== $name: FAILED"; failed+=("$name"); fi
}

run swift-build swift build
run swift-test swift test
export VMHOST_BIN="$PWD/.build/debug/vmhost"
run end-to-end python3 -m pytest -q -p no:cacheprovider Tests/EndToEnd
if compgen -G "clients/python/tests/test_*.py" >/dev/null; then
    run python-client env PYTHONPATH="$PWD/clients/python" python3 -m pytest -q -p no:cacheprovider clients/python/tests
fi
if compgen -G "clients/js/test/*.test.js" >/dev/null; then
    run node-client node --test clients/js/test/
fi
run hardening python3 -m pytest -q -p no:cacheprovider Tests/Hardening

if [ ${#failed[@]} -gt 0 ]; then
    echo "FAILED suites: ${failed[*]}"
    exit 1
fi
echo "All suites passed."
