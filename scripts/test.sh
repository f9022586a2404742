#!/usr/bin/env bash
# Runs every test suite of vmhost and exits non-zero if any fails:
#   1. Swift unit and in-process tests (swift test)
#   2. end-to-end tests of the real binary through a pipe (pytest, Tests/EndToEnd)
#   3. the Python client's tests, which replay every conformance transcript (pytest, clients/python/tests)
#   4. the Node client's tests, which replay them too (node --test, clients/js/test)
#   4b. the typed bindings (clients/bindings): not stale, and mypy --strict on the Python ones
#   5. the hardening suite (pytest, Tests/Hardening): a generative fuzzer of malformed frames, and the
#      host as a process: EOF, signals and a closed stdout with work in flight, memory over create/dispose;
#      every limit of protocol/SPEC.md §10 at and past its value
#   6. examples: the quick start of docs/Guide.md (its files as written, built outside this package
#      and piped, scripts/quickstart.py); Examples/TodoApp and Examples/SearchApp, separate packages
#      on the public products only that depend on vmhost by URL and version (mirrored to a clone
#      of HEAD tagged with VERSION, scripts/use-tagged-vmhost.sh), as every example does, are built
#      (each into its own .build, ignored by git), their tests run, and their client
#      scripts (and TodoApp's README's Python example) drive their executables, and TodoApp's README's
#      in-process example its library (through the C ABI), Examples/ChatApp calls a loopback
#      HTTP server started by its pytest (VMHostHTTP, a stream bound to a view-model, a recorded
#      session replayed offline), and Examples/TodoWeb (the todo kinds served through the public
#      WebSocketServer, the version tag with the trait `WebSocket`) is built and its page driven in
#      headless Chromium: the framework's public API cannot break unnoticed
#   6a. web-test: the WebSocket transport's Swift tests (swift test --package-path web), and
#      scripts/build-release.sh's commands checked by SwiftPM without a build (check-build-release.sh)
#   6b. browser: the web demo served by vmhost-web (the package in web/, built here first), driven in
#      headless Chromium by selenium (pytest, Tests/Browser; screenshots of each screen in
#      .build/browser-screenshots), and the WebSocket transport's handshake, close codes and sessions
#   7. tagged-dependency: a consumer package depending on vmhost by version (a tag of HEAD), on
#      `VMHost` and `VMHostTesting`, resolves swift-log and nothing else, compiles only the framework
#      and swift-log, and answers through the server entry (Tests/Dependency). The consumer is
#      Examples/SearchApp, as built (and its kit tests run) by suite examples, so that the framework
#      is compiled from a tag once for both; the trait `WebSocket` from a tag is Examples/TodoWeb's
#   8. libfuzzer: two fuzz targets, each replaying its corpus, then built with -sanitize=fuzzer into
#      .build-fuzz and run seeded and bounded: -seed=1 and a count of inputs, -max_total_time as a
#      guard. The wire's (Sources/vmhost-fuzz: frame reader + JSON-RPC engine, then a whole host
#      through the C ABI; Tests/Hardening/corpus; VMHOST_LIBFUZZER_RUNS, default 15000, about 50 s) and the backend's (Sources/vmhost-fuzz-backend:
#      body → envelope → models → a ProductList; Tests/Hardening/backend-corpus;
#      VMHOST_LIBFUZZER_BACKEND_RUNS, default 30000, about 10 s). A crash or a hang fails it; the input is left in
#      .build-fuzz/artifacts/ and `vmhost-fuzz FILE` (or `vmhost-fuzz-backend FILE`, plain build)
#      replays it exactly.
#   9. embedding: the C ABI of include/vmhost.h (protocol/embedding.md) as app shells use it and as
#      hostile callers misuse it (pytest, Tests/Embedding: the C example logs in and lists
#      products, 1,000 open/use/close cycles from C, ctypes calls with wrong arguments, callbacks
#      that raise, return late, write or close from inside, threads writing at once); the
#      conformance transcripts replayed through it run with the Python client's suite (3)
#  10. sanitize-embedded: the same library built with AddressSanitizer (.build-asan): the cycles,
#      the C example, the transcripts and the hostile-use tests, clean of ASan and LeakSanitizer
#      reports (scripts/sanitize-embedded.sh)
#  11. library: the library as it ships (scripts/build-library.sh: release, the Swift runtime linked
#      in, the five calls of vmhost.h exported and nothing else, no run path, no path of this
#      machine), checked by scripts/check-library.sh, then the C example and what a host does to
#      its process (Tests/Embedding: test_c.py, test_process.py) through it
#
# The fuzzers run on one core: beside them, in the background, the AddressSanitizer build of the
# library then the library as it ships are built. Two builds side by side gain little on 2 cores
# and take more CPU time (measured once: suite examples with Examples/TodoWeb's build beside the
# others' took 288 s and 404 CPU seconds, one after another 260 s and 339). Each suite prints its
# wall and CPU seconds as it ends, and a table of them all comes at the end.
set -uo pipefail
cd "$(dirname "$0")/.."
# Each suite's wall time, and the CPU time of what it ran (user + system, of its processes), are
# printed when it ends and again in a table at the end, so that every CI log shows what each suite
# costs (CPU time over wall time: how many of the 2 cores it kept busy).
started=$SECONDS
# The CPU time of every child process the shell PID (default: this script's) waited for so far, in
# whole seconds: cutime and cstime of /proc/PID/stat, in clock ticks (fields 16 and 17; 14 and 15
# after the command's name).
ticks=$(getconf CLK_TCK)
cpu_seconds() {
    local stat
    stat=$(cat "/proc/${1:-$$}/stat")
    echo "${stat##*) }" | awk -v hz="$ticks" '{ printf "%d", ($14 + $15) / hz }'
}
timings=()
timed() {
    timings+=("$(printf '%-28s %-7s %6d %6d' "$1" "$2" "$3" "$4")")
}
setup_cpu=$(cpu_seconds)
scripts/setup.sh --tests || exit 1
timed setup done "$((SECONDS - started))" "$(($(cpu_seconds) - setup_cpu))"
# The Python suites run in the virtual environment setup.sh made (.venv): `python3` is its Python.
export PATH="$PWD/.venv/bin:$PATH"

failed=()
# Each suite's output is also kept in .build/test-logs/NAME.log, so that the summary at the end can
# repeat why a suite failed: a CI log is often read from its tail.
logs=.build/test-logs
mkdir -p "$logs"
# Runs COMMAND (in the subshell it is called in), then writes its status, its CPU seconds and the
# time it ended (the script's SECONDS) to FILE, and returns its status: the CPU time of a suite is
# its own, even when a background build ends while it runs.
measured() {
    local file=$1 status me=$BASHPID; shift
    "$@"; status=$?
    echo "$status $(cpu_seconds "$me") $SECONDS" > "$file"
    return "$status"
}
run() {
    local name=$1 start=$SECONDS result status cpu; shift
    echo "=== $name: $*"
    ( measured "$logs/$name.cpu" "$@" ) 2>&1 | tee "$logs/$name.log"
    read -r status cpu _ < "$logs/$name.cpu" || { status=1 cpu=0; }
    if [ "$status" -eq 0 ]; then result=passed; else result=FAILED; failed+=("$name"); fi
    echo "=== $name: $result in $((SECONDS - start)) s"
    timed "$name" "$result" "$((SECONDS - start))" "$cpu"
}
# A suite that is a build, run in the background beside the suites in front while they leave a
# core idle (a fuzzer runs on one core): `background NAME COMMAND`
# starts it (its output in .build/test-logs/NAME.log), `await_background NAME` waits for it,
# prints its output and counts it as a suite. One runs at a time; the suite that needs it awaits it
# first (or its build waits on SwiftPM's lock of the build folder), and its own build command then
# builds nothing.
declare -A background_pid background_start
background() {
    local name=$1; shift
    echo "=== $name (in the background): $*"
    ( measured "$logs/$name.cpu" "$@" ) > "$logs/$name.log" 2>&1 &
    background_pid[$name]=$!
    background_start[$name]=$SECONDS
}
await_background() {
    local name=$1 result status cpu ended waited=$SECONDS
    [ -n "${background_pid[$name]:-}" ] || return 0
    wait "${background_pid[$name]}"
    unset "background_pid[$name]"
    echo "=== $name (in the background, awaited for $((SECONDS - waited)) s):"
    cat "$logs/$name.log"
    read -r status cpu ended < "$logs/$name.cpu" || { status=1 cpu=0 ended=$SECONDS; }
    if [ "$status" -eq 0 ]; then result=passed; else result=FAILED; failed+=("$name"); fi
    echo "=== $name: $result in $((ended - ${background_start[$name]})) s (in the background)"
    timed "$name (background)" "$result" "$((ended - ${background_start[$name]}))" "$cpu"
}
# The table of every suite's wall and CPU seconds, and the whole command's.
table() {
    echo "--- time of each suite (seconds; a background one ran beside the suites after it)"
    printf '%-28s %-7s %6s %6s\n' suite result wall cpu
    printf '%s\n' "${timings[@]}"
    printf '%-28s %-7s %6d %6d\n' total "" "$((SECONDS - started))" "$(cpu_seconds)"
}
# The lines of a failed suite's log that say what failed (test frameworks' failure lines, compiler
# errors, crashes), then its last lines.
why() {
    local log=$logs/$1.log lines
    # Anchored: a test's own name may contain "error:" (a parameterised case's argument).
    lines=$(grep -E -a '✘|recorded an issue|^error:|: error:|Fatal error|[Cc]rash|signal code|^FAILED |^ERROR |^not ok|AssertionError|Traceback' "$log" | head -n 40)
    echo "--- $1: why"
    if [ -n "$lines" ]; then echo "$lines" | cut -c1-600; fi
    echo "--- $1: last lines"
    tail -n 15 "$log" | cut -c1-600
}

run swift-build swift build
run swift-test swift test
run web-build swift build --package-path web --build-tests
# The WebSocket transport's own tests (web/Tests: the handshake gate, the frame scanner, message
# assembly, static file guarding, the fair inbox), then scripts/build-release.sh's commands parsed by
# SwiftPM without building (a release build of web/ takes many minutes).
web_test() {
    swift test --package-path web --skip-build || return 1
    scripts/check-build-release.sh
}
run web-test web_test
export VMHOST_BIN="$PWD/.build/debug/vmhost"
# The reference app as a library, for Host.embedded and the embedding suite.
export VMHOST_LIBRARY="$PWD/.build/debug/libvmhost-embedded.so"
run end-to-end python3 -m pytest -q -p no:cacheprovider Tests/EndToEnd
if compgen -G "clients/python/tests/test_*.py" >/dev/null; then
    run python-client env PYTHONPATH="$PWD/clients/python" python3 -m pytest -q -p no:cacheprovider clients/python/tests
fi
if compgen -G "clients/js/test/*.test.js" >/dev/null; then
    run node-client node --test clients/js/test/
fi
# The typed bindings of the reference app's kinds (clients/bindings): up to date with host.describe,
# and the Python ones (with a typed example) pass mypy --strict.
bindings() {
    scripts/gen-bindings.py --host "$VMHOST_BIN" --out clients/bindings --js-client ../js/index.js --check || return 1
    (cd clients/bindings && MYPYPATH="$OLDPWD/clients/python" python3 -m mypy --strict \
        --cache-dir "$OLDPWD/.build/mypy-cache" viewmodels.py example.py)
}
run bindings bindings
run hardening python3 -m pytest -q -p no:cacheprovider Tests/Hardening
export VMHOST_WEB_BIN="$PWD/web/.build/debug/vmhost-web"
run browser python3 -m pytest -q -p no:cacheprovider Tests/Browser

examples() {
    # Every example depends on vmhost by URL and version, as an app outside this repository does:
    # the URL is mirrored to a clone of HEAD tagged with VERSION (scripts/use-tagged-vmhost.sh).
    scripts/use-tagged-vmhost.sh >/dev/null || return 1
    # The Guide's quick start, its three files as written, built as a package of their own and
    # piped (kept in .build/quickstart, so that a repeat run builds only what changed).
    python3 scripts/quickstart.py --keep .build/quickstart || return 1
    (
        cd Examples/TodoApp || exit 1
        swift build --build-tests || exit 1
        swift test --skip-build || exit 1
        # The wire tests again, against the built executable over stdio (the kit's one switch).
        VMHOST_TEST_BINARY=.build/debug/todo-host swift test --skip-build --filter TodoWireTests || exit 1
        python3 scripts/client.py .build/debug/todo-host || exit 1
        # The Python example of its README, as written.
        python3 -c 'import re, sys; sys.stdout.write(re.search(r"## Drive it.*?```python\n(.*?)```", open("README.md").read(), re.S).group(1))' \
            | PYTHONPATH=../../clients/python python3 - || exit 1
        # The app as a library, in process (its README's example, as written).
        python3 -c 'import re, sys; sys.stdout.write(re.search(r"## In process.*?```python\n(.*?)```", open("README.md").read(), re.S).group(1))' \
            | PYTHONPATH=../../clients/python python3 - || exit 1
    ) || return 1
    (
        cd Examples/SearchApp || exit 1
        swift build --build-tests || exit 1
        swift test --skip-build || exit 1
        python3 scripts/client.py .build/debug/search-host
    ) || return 1
    (
        # Screens on a real HTTP server (a loopback one its tests start): the framework's client,
        # the stream bound to a view-model, and a session recorded and replayed with no server.
        cd Examples/ChatApp || exit 1
        swift build || exit 1
        python3 -m pytest -q -p no:cacheprovider tests || exit 1
        python3 scripts/client.py .build/debug/chat-host
    ) || return 1
    (
        # The todo app's kinds served to Chromium through the public WebSocket entry, from the
        # version tag with the trait `WebSocket`: the one build of hummingbird and SwiftNIO from a tag.
        cd Examples/TodoWeb || exit 1
        swift build || exit 1
        TODO_WEB_BIN=.build/debug/todo-web python3 -m pytest -q -p no:cacheprovider tests
    )
}
run examples examples
# A package that depends on a version tag of vmhost resolves, builds (the framework and swift-log
# only) and serves (Tests/Dependency): Examples/SearchApp, which suite examples built from the tag
# of HEAD (built here if that suite stopped before it).
run tagged-dependency python3 -m pytest -q -p no:cacheprovider Tests/Dependency

# One libFuzzer target: replays its corpus with the plain build, then fuzzes it seeded and bounded.
fuzz_target() {
    local name=$1 corpus=$2 dict=$3 runs=$4 max_len=$5
    .build/debug/"$name" "$corpus" || return 1
    swift build -c release --product "$name" --scratch-path .build-fuzz \
        -Xswiftc -sanitize=fuzzer -Xswiftc -DFUZZING || return 1
    # New inputs go to a scratch directory (the first one named), never into the committed corpus.
    # Swift's hashing is seeded per process unless told otherwise: fixed, the exploration repeats
    # from run to run, except where hit counts depend on the allocator's state (rarely).
    local work status log=.build-fuzz/$name.log
    work=$(mktemp -d)
    mkdir -p .build-fuzz/artifacts
    SWIFT_DETERMINISTIC_HASHING=1 .build-fuzz/release/"$name" -seed=1 \
        -runs="$runs" -max_total_time=120 -max_len="$max_len" -timeout=10 \
        -rss_limit_mb=2048 -dict="$dict" -print_final_stats=1 \
        -artifact_prefix=.build-fuzz/artifacts/ "$work" "$corpus" >"$log" 2>&1
    status=$?
    rm -rf "$work"
    if [ "$status" -ne 0 ]; then tail -n 60 "$log"; return "$status"; fi
    grep -E "INITED|DONE|^Done|^stat::" "$log"
}
libfuzzer() {
    fuzz_target vmhost-fuzz Tests/Hardening/corpus Tests/Hardening/libfuzzer.dict \
        "${VMHOST_LIBFUZZER_RUNS:-15000}" 20480 || return 1
    fuzz_target vmhost-fuzz-backend Tests/Hardening/backend-corpus Tests/Hardening/backend.dict \
        "${VMHOST_LIBFUZZER_BACKEND_RUNS:-30000}" 4096
}
# The library built with AddressSanitizer, then the library as it ships, in the background beside
# suites that keep one core busy (the fuzzers, the sanitized tests, the embedding tests).
# sanitize-embedded, which comes before the await, builds .build-asan itself first: a SwiftPM
# running on a build folder locks it, so that build waits for the background one if it has not
# ended (it usually has: the fuzzers take longer than that build), then builds nothing.
release_builds() {
    scripts/sanitize-embedded.sh --build-only || return 1
    echo "--- scripts/build-library.sh"
    scripts/build-library.sh
}
background release-builds release_builds
run libfuzzer libfuzzer

run sanitize-embedded scripts/sanitize-embedded.sh
run embedding python3 -m pytest -q -p no:cacheprovider Tests/Embedding
await_background release-builds

library() {
    local shipped
    shipped=$(scripts/build-library.sh) || return 1
    scripts/check-library.sh "$shipped" || return 1
    VMHOST_LIBRARY="$shipped" python3 -m pytest -q -p no:cacheprovider Tests/Embedding/test_c.py Tests/Embedding/test_process.py
}
run library library

table
if [ ${#failed[@]} -gt 0 ]; then
    for name in "${failed[@]}"; do why "$name"; done
    echo "FAILED suites: ${failed[*]}"
    exit 1
fi
echo "All suites passed."
