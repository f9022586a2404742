# Whether a demo script must build its binary, and why: sourced by demo.sh and web-demo.sh (and by
# their test, Tests/EndToEnd/test_demo_script.py).
#
# build_reason BINARY STAMP RESOLVED SOURCE… prints why BINARY is to be built, or nothing when it
# is up to date: the script touches STAMP after each build it makes; RESOLVED is the package's
# Package.resolved (written by the first build; without it SwiftPM has a graph to resolve); a
# SOURCE (file or folder) with anything newer than STAMP is a change, named in the reason.
#   "first build"            no BINARY yet
#   "not resolved"           no RESOLVED: SwiftPM resolves the graph, then builds what is missing
#   "not built by this script before"   a BINARY built otherwise (e.g. by scripts/test.sh): the
#                            build only checks that it is up to date
#   "sources changed: FILE"  FILE is newer than the last build this script made
build_reason() {
    local binary=$1 stamp=$2 resolved=$3 changed
    shift 3
    if [ ! -x "$binary" ]; then echo "first build"; return; fi
    if [ ! -e "$resolved" ]; then echo "not resolved"; return; fi
    if [ ! -e "$stamp" ]; then echo "not built by this script before"; return; fi
    changed=$(find "$@" "$resolved" -newer "$stamp" -print -quit 2>/dev/null)
    if [ -n "$changed" ]; then echo "sources changed: $changed"; fi
}
