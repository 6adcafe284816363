#!/bin/sh
# shellcheck disable=SC1091,SC2154  # sourced helpers (wait_rc sets rc)
# Issue 40 Q1: a `run --fair` SIGKILLed while it waits in the queue (nothing
# runs yet: run's guard does not exist) loses its ticket at once — its
# ticket guard removes it, by CAS, and only its own: a live waiter of the
# same identity keeps its place. Without it the dead ticket blocks the queue
# until its TTL (t_fair.sh: a SIGKILLed acquire --fair waiter).
. "$(dirname "$0")/lease_lib.sh"
. "$(dirname "$0")/fair_lib.sh"
G="git --git-dir=$S"

REFLEASE_OWNER=bob expect_rc 0 "$R" acquire q1 --ttl 120
# two fair waiters of one identity (alice@h1), one after the other
"$R" run q1 --wait 100 --fair --ttl 60 -- true >"$TMPDIR/w1.out" 2>"$TMPDIR/w1.err" &
w1=$!
wait_for 100 has_tickets q1 1 || fail "Q1: the first waiter took no ticket: $(cat "$TMPDIR/w1.err")"
first=$($G for-each-ref --format='%(refname)' refs/leases-queue/q1/)
"$R" run q1 --wait 100 --fair --ttl 60 -- true >"$TMPDIR/w2.out" 2>"$TMPDIR/w2.err" &
w2=$!
wait_for 100 has_tickets q1 2 || fail "Q1: the second waiter took no ticket: $(cat "$TMPDIR/w2.err")"
kill -9 "$w1"
wait_rc "$w1"
[ "$rc" -eq 137 ] || fail "Q1: the first waiter was not killed: $rc"
# its ticket goes at once (the TTL is 60 s); the other waiter's stays
wait_for 60 sh -c "! $G for-each-ref --format='%(refname)' refs/leases-queue/q1/ | grep -qx '$first'" ||
  fail "Q1: the killed waiter's ticket $first stayed: $($G for-each-ref refs/leases-queue/q1/)"
[ "$(tickets q1)" -eq 1 ] || fail "Q1: the live waiter's ticket went too: $($G for-each-ref refs/leases-queue/q1/)"
alive "$w2" || fail "Q1: the live waiter died: $(cat "$TMPDIR/w2.err")"
# the live waiter is now first: it takes the lease when bob releases
BT=$($G log -1 --format=%b refs/leases/q1 | sed -n 's/.*"lease_token":"\([0-9a-f]*\)".*/\1/p')
REFLEASE_OWNER=bob expect_rc 0 "$R" release q1 --lease-token "$BT"
wait_rc "$w2"
[ "$rc" -eq 0 ] || fail "Q1: the live waiter: exit $rc: $(cat "$TMPDIR/w2.err")"
[ "$(tickets q1)" -eq 0 ] || fail "Q1: tickets left: $($G for-each-ref refs/leases-queue/q1/)"
echo "t_run_fair_ticket: ok"
