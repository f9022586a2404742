# Sourced by the shell examples: sets VMHOST to the vmhost to run: $VMHOST_BIN (always first), else
# this checkout's build (the newer of .build/release/vmhost and .build/debug/vmhost, so that a stale
# build of the one never hides a fresh build of the other), else `vmhost` on PATH.
VMHOST=${VMHOST_BIN:-}
if [ -z "$VMHOST" ]; then
    _root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
    for _candidate in "$_root/.build/release/vmhost" "$_root/.build/debug/vmhost"; do
        if [ -x "$_candidate" ] && { [ -z "$VMHOST" ] || [ "$_candidate" -nt "$VMHOST" ]; }; then
            VMHOST=$_candidate
        fi
    done
    VMHOST=${VMHOST:-vmhost}
    unset _root _candidate
fi
