#!/bin/sh
# Fair waiting on GitHub (issue 28; the fake server tests/support/fakegh.c):
# five fair waiters arriving in a known order take the lease in that order,
# with fair newcomers arriving behind them; status --json shows the queue;
# no ticket is left behind.
set -eu
FAKE="$BUILD/tools/fakegh"
CANARY="ghp_CANARYfair0123456789abcdefCANARY"
"$FAKE" --token "$CANARY" --port-file "$TMPDIR/port" >/dev/null 2>"$TMPDIR/fake.err" &
fpid=$!
trap 'kill "$fpid" 2>/dev/null || true' EXIT INT TERM
i=0
while [ ! -s "$TMPDIR/port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
port=$(cat "$TMPDIR/port")
export GITHUB_API_URL="http://127.0.0.1:$port" GITHUB_TOKEN="$CANARY"
export REFLEASE_STORE=github:octo/leases REFLEASE_OWNER=holder REFLEASE_HOST=runner-1
unset GITHUB_GRAPHQL_URL REFLEASE_GITHUB_TOKEN GITHUB_ACTIONS REFLEASE_NAMESPACE || true
R=$REFLEASE
fail() { echo "FAIL: $*" >&2; exit 1; }
queued() { # queued N: at least N waiters in the queue
  n=$("$R" status f --json | python3 -c 'import json, sys; print(len(json.load(sys.stdin)["queue"]))')
  [ "$n" -ge "$1" ]
}
wait_queued() {
  k=0
  until queued "$1"; do k=$((k + 1)); [ "$k" -le 100 ] || fail "the queue never reached $1"; sleep 0.1; done
}

: >"$TMPDIR/order"
tok=$("$R" acquire f --ttl 60 --print-token)
pids=""
for w in w1 w2 w3 w4 w5 n1 n2; do
  REFLEASE_OWNER=$w "$R" run f --ttl 60 --wait 120 --fair -- \
    sh -c "echo $w >>'$TMPDIR/order'" >/dev/null 2>"$TMPDIR/$w.err" &
  pids="$pids $!"
  case $w in w*) wait_queued "${w#w}" ;; esac
done
"$R" status f --json | python3 -c '
import json, sys
q = json.load(sys.stdin)["queue"]
assert [t["owner"] for t in q][:5] == ["w1", "w2", "w3", "w4", "w5"], q
' || fail "status --json: the queue does not start w1..w5"
"$R" release f --lease-token "$tok" >/dev/null
for p in $pids; do wait "$p" || fail "a waiter failed: $(cat "$TMPDIR"/*.err)"; done
got=$(head -n 5 "$TMPDIR/order" | tr '\n' ' ')
[ "$got" = "w1 w2 w3 w4 w5 " ] || fail "served in the order $(tr '\n' ' ' <"$TMPDIR/order")"
[ "$(wc -l <"$TMPDIR/order")" -eq 7 ] || fail "not every waiter ran: $(cat "$TMPDIR/order")"
n=$("$R" status f --json | python3 -c 'import json, sys; print(len(json.load(sys.stdin)["queue"]))')
[ "$n" -eq 0 ] || fail "$n tickets left behind"
echo "t_fair_github: ok"
