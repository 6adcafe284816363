#!/bin/sh
# shellcheck disable=SC1091,SC2154  # sourced helpers (wait_rc sets rc)
# Issue 40 Q1: a `run --fair` SIGKILLed while it waits in the queue (nothing
# runs yet: run's guard does not exist) loses its ticket at once — its
# ticket guard removes it, by CAS, and only its own: a live waiter of the
# same identity keeps its place. Without it the dead ticket blocks the queue
# until its TTL. `acquire --wait --fair` has the same guard (the decision,
# protocol.md §5 "Removal"); a waiter whose guard dies with it (a vanished
# host) blocks the queue until its ticket's expiry (t_fair.sh).
. "$(dirname "$0")/lease_lib.sh"
. "$(dirname "$0")/fair_lib.sh"
G="git --git-dir=$S"

# q1_case NAME WAITER...: bob holds NAME; two fair waiters of one identity
# (alice@h1), WAITER... each, one after the other; the first is SIGKILLed:
# its ticket goes at once, the second keeps its place and takes the lease
q1_case() {
  qn=$1
  shift
  REFLEASE_OWNER=bob expect_rc 0 "$R" acquire "$qn" --ttl 120
  "$R" "$@" >"$TMPDIR/w1.out" 2>"$TMPDIR/w1.err" &
  w1=$!
  wait_for 100 has_tickets "$qn" 1 || fail "Q1 $qn: the first waiter took no ticket: $(cat "$TMPDIR/w1.err")"
  first=$($G for-each-ref --format='%(refname)' "refs/leases-queue/$qn/")
  "$R" "$@" >"$TMPDIR/w2.out" 2>"$TMPDIR/w2.err" &
  w2=$!
  wait_for 100 has_tickets "$qn" 2 || fail "Q1 $qn: the second waiter took no ticket: $(cat "$TMPDIR/w2.err")"
  kill -9 "$w1"
  wait_rc "$w1"
  [ "$rc" -eq 137 ] || fail "Q1 $qn: the first waiter was not killed: $rc"
  # its ticket goes at once (its TTL is 60 s or more); the other waiter's stays
  wait_for 60 sh -c "! $G for-each-ref --format='%(refname)' refs/leases-queue/$qn/ | grep -qx '$first'" ||
    fail "Q1 $qn: the killed waiter's ticket $first stayed: $($G for-each-ref "refs/leases-queue/$qn/")"
  [ "$(tickets "$qn")" -eq 1 ] || fail "Q1 $qn: the live waiter's ticket went too: $($G for-each-ref "refs/leases-queue/$qn/")"
  alive "$w2" || fail "Q1 $qn: the live waiter died: $(cat "$TMPDIR/w2.err")"
  # the live waiter is now first: it takes the lease when bob releases
  BT=$($G log -1 --format=%b "refs/leases/$qn" | sed -n 's/.*"lease_token":"\([0-9a-f]*\)".*/\1/p')
  REFLEASE_OWNER=bob expect_rc 0 "$R" release "$qn" --lease-token "$BT"
  wait_rc "$w2"
  [ "$rc" -eq 0 ] || fail "Q1 $qn: the live waiter: exit $rc: $(cat "$TMPDIR/w2.err")"
  [ "$(tickets "$qn")" -eq 0 ] || fail "Q1 $qn: tickets left: $($G for-each-ref "refs/leases-queue/$qn/")"
}

q1_case q1 run q1 --wait 100 --fair --ttl 60 -- true
q1_case q2 acquire q2 --wait 100 --fair --ttl 300 --json
[ "$(jget status <"$TMPDIR/w2.out")" = acquired ] || fail "Q1 acquire: $(cat "$TMPDIR/w2.out")"
echo "t_run_fair_ticket: ok"
