#!/usr/bin/env bash
# Loads the whole product list (refresh, then load-more until hasMore is false) and prints a table
# of the cells with jq, a header row first; the page reached and the count go to stderr. The host answers every request in order, so the requests can be written at
# once; the last vm.get reads the final list.
# Usage: clients/shell/products.sh [locale]   (zh-Hans by default, or en)
set -euo pipefail
source "$(dirname "$0")/vmhost-path.sh"
LOCALE=${1:-zh-Hans}
requests() {
  printf '%s\n' "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"locale\":\"$LOCALE\"}}"
  printf '%s\n' '{"jsonrpc":"2.0","id":2,"method":"vm.create","params":{"kind":"ProductList","id":"p"}}'
  printf '%s\n' '{"jsonrpc":"2.0","id":3,"method":"vm.send","params":{"vm":"p","input":"refresh"}}'
  printf '%s\n' '{"jsonrpc":"2.0","id":4,"method":"vm.send","params":{"vm":"p","input":"loadMore"}}'
  printf '%s\n' '{"jsonrpc":"2.0","id":5,"method":"vm.send","params":{"vm":"p","input":"loadMore"}}'
  printf '%s\n' '{"jsonrpc":"2.0","id":6,"method":"vm.get","params":{"vm":"p","outputs":["items","page","hasMore"]}}'
}
# The reply with id 6 is read as it comes; then closing the input ends the host (protocol/SPEC.md §7).
coproc HOST { "$VMHOST"; }
# Kept now: bash unsets HOST_PID as soon as the coprocess has exited.
host_pid=$HOST_PID
requests >&"${HOST[1]}"
reply=
while IFS= read -r line <&"${HOST[0]}"; do
  case $line in *'"id":6,'*) reply=$line; break ;; esac
done
exec {HOST[1]}>&-
wait "$host_pid"
# stdout is the table alone, tab-separated with a header row (`| column -t -s $'\t'` aligns it);
# the summary goes to stderr.
jq -r '.result.values | "page \(.page), more: \(.hasMore), \(.items | length) products"' <<<"$reply" >&2
jq -r '(["id", "name", "bank", "profit", "saleStatus", "term", "amount"] | @tsv),
    (.result.values.items[] | [.id, .name, .bank, .profit, .saleStatus, .term, .amount] | @tsv)' <<<"$reply"
