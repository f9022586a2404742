# Sourced by the shell examples: sets VMHOST to the vmhost to run: $VMHOST_BIN, else this checkout's
# build (.build/release/vmhost, then .build/debug/vmhost), else `vmhost` on PATH.
VMHOST=${VMHOST_BIN:-}
if [ -z "$VMHOST" ]; then
    _root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
    for _candidate in "$_root/.build/release/vmhost" "$_root/.build/debug/vmhost"; do
        if [ -x "$_candidate" ]; then VMHOST=$_candidate; break; fi
    done
    VMHOST=${VMHOST:-vmhost}
    unset _root _candidate
fi
