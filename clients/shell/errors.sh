#!/usr/bin/env bash
# Shows the merged error channel: a scripted HTTP 500 makes the refresh fail with one `error` event
# and a -32004 reply carrying the same object. jq prints both.
# Usage: clients/shell/errors.sh
set -euo pipefail
source "$(dirname "$0")/vmhost-path.sh"
# The reply to the refresh (id 4) is read as it comes; then closing the input ends the host
# (protocol/SPEC.md §7).
coproc HOST { "$VMHOST" --test-controls; }
# Kept now: bash unsets HOST_PID as soon as the coprocess has exited.
host_pid=$HOST_PID
printf '%s\n' \
  '{"jsonrpc":"2.0","id":1,"method":"vm.create","params":{"kind":"ProductList","id":"p"}}' \
  '{"jsonrpc":"2.0","id":2,"method":"vm.subscribe","params":{"vm":"p","outputs":["error"]}}' \
  '{"jsonrpc":"2.0","id":3,"method":"control.backend.script","params":{"endpoint":"products","outcomes":["http:500"]}}' \
  '{"jsonrpc":"2.0","id":4,"method":"vm.send","params":{"vm":"p","input":"refresh"}}' \
  >&"${HOST[1]}"
out=
while IFS= read -r line <&"${HOST[0]}"; do
  out+=$line$'\n'
  case $line in *'"id":4,'*) break ;; esac
done
exec {HOST[1]}>&-
wait "$host_pid"
jq -c 'if .method == "vm.event" then {event: .params.name, value: .params.value}
       elif .id == 4 then {reply: .error.code, data: .error.data}
       else empty end' <<<"$out"
