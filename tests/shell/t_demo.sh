#!/bin/sh
# The README's first command (`make demo` runs scripts/demo.sh) works and shows
# what it says: contention (exit 3), a takeover with a rotated token, the stale
# holder fenced off (exit 4), a same-owner reacquire preserving the token.
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
out=$(sh "$here/scripts/demo.sh" "$REFLEASE" 2>&1)
echo "$out" | tail -n 20
for want in "exit status 3" "token rotated:" "exit status 4" "token preserved" \
  "deploy: release released by bob on ci-2" "refs/leases/deploy"; do
  echo "$out" | grep -qF "$want" || { echo "demo output lacks: $want"; exit 1; }
done
