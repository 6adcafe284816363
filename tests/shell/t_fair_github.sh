#!/bin/sh
# shellcheck disable=SC1091,SC2154  # sourced helpers; fpid and base set by fakegh_start
# Fair waiting on GitHub (issue 28; the fake server tests/support/fakegh.c):
# five fair waiters arriving in a known order take the lease in that order,
# with fair newcomers arriving behind them; status --json shows the queue;
# no ticket is left behind; history --json shows each one's wait.
set -eu
CANARY="ghp_CANARYfair0123456789abcdefCANARY"
. "$(dirname "$0")/fakegh_lib.sh"
fakegh_start --token "$CANARY"
trap 'kill "$fpid" 2>/dev/null || true' EXIT INT TERM
export GITHUB_API_URL="$base" GITHUB_TOKEN="$CANARY"
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
# history shows who waited how long (issue 28 item 4): every fair acquire in
# the order served, w1..w5 first to fifth in the queue at entry, queued in order
"$R" history f --json | python3 -c '
import json, sys
order = open(sys.argv[1]).read().split()
items = list(reversed(json.load(sys.stdin)["items"]))
fair = [i["fair_wait"] for i in items if "fair_wait" in i]
assert [w["owner"] for w in fair] == order, (fair, order)
assert [w["queue_position"] for w in fair[:5]] == [1, 2, 3, 4, 5], fair
assert all(w["waited_seconds"] >= 0 and w["host"] == "runner-1" for w in fair), fair
assert [w["queued_at"] for w in fair[:5]] == sorted(w["queued_at"] for w in fair[:5]), fair
assert not any("fair_wait" in i for i in items if i["lease"]["owner"] == "holder"), items
' "$TMPDIR/order" || fail "history --json: the waits are not in the order served"
echo "t_fair_github: ok"
