#!/usr/bin/env bash
# Lists every view-model kind with its inputs and outputs: one request piped in, jq reads the reply.
# Usage: clients/shell/describe.sh            (VMHOST_BIN, else this checkout's build, else vmhost on PATH)
set -euo pipefail
source "$(dirname "$0")/vmhost-path.sh"
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"host.describe"}' \
  | "$VMHOST" \
  | jq -r '.result.kinds[]
      | "\(.kind)\n  inputs:  \([.inputs[] | "\(.name) (\(.kind))"] | join(", "))\n  outputs: \([.outputs[] | "\(.name) (\(.kind))"] | join(", "))"'
