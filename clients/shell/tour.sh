#!/usr/bin/env bash
# A tour of vmhost through a pipe, with no client library: log in, page through the product list,
# and create a menu group through its edit screen. Every request and every message the host
# writes back is printed. The embedded backend serves deterministic demo data.
#
# Usage: clients/shell/tour.sh [path/to/vmhost]
set -euo pipefail
source "$(dirname "$0")/vmhost-path.sh"
VMHOST=${1:-$VMHOST}

coproc HOST { "$VMHOST" --backend embedded --clock manual --test-controls; }
# Kept now: bash unsets HOST_PID as soon as the coprocess has exited.
host_pid=$HOST_PID
exec 3>&"${HOST[1]}" 4<&"${HOST[0]}"
next_id=0

# Sends one request and prints every message up to and including its reply.
call() {
    local method=$1 params=${2:-}
    next_id=$((next_id + 1))
    local request="{\"jsonrpc\":\"2.0\",\"id\":$next_id,\"method\":\"$method\"${params:+,\"params\":$params}}"
    printf '\n→ %s\n' "$request"
    printf '%s\n' "$request" >&3
    local line
    while IFS= read -r line <&4; do
        case $line in
            *'"method":'*) printf '  ← %s\n' "$line" ;;
            *"\"id\":$next_id,"*) printf '← %s\n' "$line"; return 0 ;;
            *) printf '← %s\n' "$line" ;;
        esac
    done
    echo "vmhost closed its output" >&2
    exit 1
}

say() { printf '\n# %s\n' "$*"; }

say "What kinds of view-model does this host serve?"
call initialize '{"clientInfo":{"name":"tour.sh"},"locale":"zh-Hans"}'

say "The login screen, in password mode. Subscribing returns every property's current value."
call vm.create '{"kind":"Login","id":"login"}'
call vm.subscribe '{"vm":"login","outputs":["canSubmit","usernameValid","passwordValid","isSubmitting","failureMessage","navigate","error"]}'
say "Typing: every input answers only once its derived state (validity, canSubmit) was sent."
call vm.send '{"vm":"login","input":"username","value":"13800138000"}'
call vm.send '{"vm":"login","input":"password","value":"123456"}'
say "Submitting: the reply comes after the navigate event it caused. The password never appears in output."
call vm.send '{"vm":"login","input":"submit"}'

say "The product list: refresh loads page 1; each load-more appends the next page (57 products: 20, 20, 17)."
call vm.create '{"kind":"ProductList","id":"products","args":{"pageSize":20}}'
call vm.subscribe '{"vm":"products","outputs":["page","hasMore","isRefreshing","isLoadingMore","isEmpty","error"]}'
call vm.send '{"vm":"products","input":"refresh"}'
call vm.get '{"vm":"products","outputs":["items"]}'
call vm.send '{"vm":"products","input":"loadMore"}'
call vm.send '{"vm":"products","input":"loadMore"}'
say "No more pages: load-more is refused with a reason (-32003), to the caller only."
call vm.send '{"vm":"products","input":"loadMore"}'
say "A failing network: the next refresh fails with a merged error event and -32004; the items stay."
call control.backend.script '{"endpoint":"products","outcomes":["http:500"]}'
call vm.send '{"vm":"products","input":"refresh"}'

say "Menu groups: load, then create a group through the edit screen; the list reloads by itself."
call vm.create '{"kind":"MenuSubGroup","id":"groups","args":{"menuUid":"m1"}}'
call vm.subscribe '{"vm":"groups"}'
call vm.send '{"vm":"groups","input":"load"}'
call vm.send '{"vm":"groups","input":"create"}'
call vm.create '{"kind":"MenuEditGroup","id":"editor","args":{"menuUid":"m1","parent":"groups"}}'
call vm.subscribe '{"vm":"editor","outputs":["title","canSave","saved","dismiss"]}'
call vm.send '{"vm":"editor","input":"name","value":"甜品"}'
call vm.send '{"vm":"editor","input":"save"}'
call ping

say "Done: shut down and exit."
call shutdown
printf '%s\n' '{"jsonrpc":"2.0","method":"exit"}' >&3
exec 3>&-
wait "$host_pid" && echo "vmhost exited with status 0"
