#!/bin/sh
# shellcheck disable=SC1091  # sourced helper
# test: seconds 18
# test: quiet (a real-time claim; uses under one CPU: run.sh runs it beside at most one other quiet test)
# Fair waiting (issue 28, protocol.md §5 "Fair waiting"): --fair waiters are
# served first come, first served; newcomers queue behind live tickets; a
# tight loop of fair clients cannot keep a waiter that reached the front
# for more than two holds; a SIGKILLed waiter blocks the queue only until
# its ticket expires; a ticket is removed on acquire, when --wait runs out
# and on SIGINT/SIGTERM; reconcile --reap removes a dead waiter's ticket.
. "$(dirname "$0")/lease_lib.sh"
. "$(dirname "$0")/fair_lib.sh"

owner_ticket() { # owner_ticket NAME OWNER: the ticket ref of OWNER
  for r in $($G for-each-ref --format='%(refname)' "refs/leases-queue/$1/"); do
    $G log -1 --format=%B "$r" | grep -q "\"owner\":\"$2\"" && { echo "$r"; return 0; }
  done
  return 1
}

# --fair is only for waiting
err_is 64 "it needs --wait S with S > 0" "$R" acquire q --fair
err_is 64 "it needs --wait S with S > 0" "$R" run q --fair -- true
# N4 (issue 40): a wait of 0 was given; the message does not say none was
err_is 64 "without --wait, or with --wait 0, nothing waits" "$R" acquire q --wait 0 --fair
! grep -q "goes with --wait" "$TMPDIR/err" || fail "N4: $(cat "$TMPDIR/err")"
# --fair queues for one lease: not with a set or --slots (issue 27)
err_is 64 "not with a set of NAMEs" "$R" acquire q r --wait 5 --fair
err_is 64 "not with --slots" "$R" acquire q --slots 2 --wait 5 --fair
err_is 64 "not with --slots" "$R" run q --slots 2 --wait 5 --fair -- true
# the queue namespace cannot be a lease namespace (no D/F conflict with refs/<ns>-queue/)
err_is 64 "must not end with '-queue'" "$R" --namespace leases-queue acquire q

# 0. A newcomer does not barge past a live ticket: the lease is free, but an
# older waiter's ticket (written here by hand) is live, so the newcomer
# waits; when that ticket goes, the newcomer takes the lease at once.
id=00000000000000aa
exp=$(date -u -d '+60 seconds' +%Y-%m-%dT%H:%M:%SZ)
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
ghost=$(printf 'queue b: ticket\n\n{"expires_at":"%s","host":"h9","id":"%s","key":"0000000000000001","name":"b","owner":"ghost","schema":"reflease-ticket/1","since":"%s","ttl_seconds":60}\n' "$exp" "$id" "$now" |
  $G commit-tree "$($G hash-object -t tree -w /dev/null)")
$G update-ref "refs/leases-queue/b/$id" "$ghost"
REFLEASE_OWNER=new expect_rc 3 "$R" acquire b --wait 1 --fair
grep -q "queued behind ghost@h9" "$TMPDIR/out" || fail "no 'queued behind' message: $(cat "$TMPDIR/out")"
# B70 (issue 40): the ticket's time in RFC 3339, as every other time printed
grep -q "queued behind ghost@h9's ticket (since $now)" "$TMPDIR/out" || fail "B70: $(cat "$TMPDIR/out")"
$G rev-parse -q --verify refs/leases/b >/dev/null && fail "the newcomer took the lease past a live ticket"
REFLEASE_OWNER=new "$R" acquire b --wait 30 --fair --json >"$TMPDIR/b.out" &
p=$!
wait_for 100 has_tickets b 2 || fail "the newcomer took no ticket"
$G update-ref -d "refs/leases-queue/b/$id"
wait "$p" || fail "the newcomer did not acquire once the ticket ahead went"
[ "$(jget status <"$TMPDIR/b.out")" = acquired ] || fail "not acquired: $(cat "$TMPDIR/b.out")"
[ "$(jget waited_seconds <"$TMPDIR/b.out")" -ge 0 ] || fail "no waited_seconds: $(cat "$TMPDIR/b.out")"
[ "$(tickets b)" -eq 0 ] || fail "the newcomer's ticket stayed"

# 1. Five fair waiters arriving in a known order acquire in that order, every
# round, while fair newcomers keep arriving behind them.
for round in 1 2 3; do
  : >"$TMPDIR/order"
  tok=$("$R" acquire f --ttl 60 --print-token)
  pids=""
  for i in 1 2 3 4 5; do
    REFLEASE_OWNER=w$i "$R" run f --ttl 30 --wait 120 --fair -- \
      sh -c "echo w$i >>'$TMPDIR/order'; sleep 0.05" >/dev/null 2>"$TMPDIR/w$i.err" &
    pids="$pids $!"
    wait_for 100 has_tickets f "$i" || fail "round $round: w$i took no ticket"
  done
  if [ "$round" = 1 ]; then # status and list show the queue in order
    "$R" status f --json | python3 -c '
import json, sys
q = json.load(sys.stdin)["queue"]
assert [t["owner"] for t in q] == ["w1", "w2", "w3", "w4", "w5"], q
assert [t["position"] for t in q] == [1, 2, 3, 4, 5], q
assert all(t["since"] and t["host"] == "h1" and t["waiting_seconds"] >= 0 for t in q), q
' || fail "status --json: the queue is not w1..w5"
    "$R" list --json | python3 -c '
import json, sys
l = {x["name"]: x for x in json.load(sys.stdin)["leases"]}
assert [t["owner"] for t in l["f"]["queue"]] == ["w1", "w2", "w3", "w4", "w5"], l["f"]
' || fail "list --json: the queue is not w1..w5"
    "$R" status f | grep -q "^queue 1: w1 on h1, waiting since" || fail "status: no queue line"
  fi
  # the newcomers: one every ~20 ms until the five are served, each queued
  # behind the live tickets (an unfair one barges in whenever the lease is
  # free as it arrives, or wins the race after a release)
  (
    j=0
    while [ "$(grep -c '^w' "$TMPDIR/order")" -lt 5 ] && [ "$j" -lt 100 ]; do
      j=$((j + 1))
      REFLEASE_OWNER=n$j "$R" run f --ttl 30 --wait 120 --fair -- \
        sh -c "echo n$j >>'$TMPDIR/order'; sleep 0.05" >/dev/null 2>&1 &
      sleep 0.02
    done
    wait
  ) &
  loop=$!
  wait_for 100 has_tickets f 6 || fail "round $round: no newcomer queued"
  "$R" release f --lease-token "$tok" >/dev/null
  for p in $pids; do wait "$p" || fail "round $round: a waiter failed: $(cat "$TMPDIR"/w*.err)"; done
  wait "$loop"
  got=$(head -n 5 "$TMPDIR/order" | tr '\n' ' ')
  [ "$got" = "w1 w2 w3 w4 w5 " ] || fail "round $round: served in the order $got ($(tr '\n' ' ' <"$TMPDIR/order"))"
  [ "$(tickets f)" -eq 0 ] || fail "round $round: tickets left behind"
done

# 2. A fair waiter against a tight acquire/release loop of two fair clients:
# once its ticket is in the queue (behind at most one ticket per client), at
# most two holds of others come first.
: >"$TMPDIR/holds"
: >"$TMPDIR/stop"
rm -f "$TMPDIR/stop"
loops=""
for c in a b; do
  (
    while [ ! -e "$TMPDIR/stop" ]; do
      REFLEASE_OWNER=loop$c "$R" run t --ttl 30 --wait 60 --fair -- \
        sh -c "echo $c >>'$TMPDIR/holds'" >/dev/null 2>&1 || true
    done
  ) &
  loops="$loops $!"
done
wait_for 100 sh -c "[ \$(wc -l <'$TMPDIR/holds') -ge 6 ]" || fail "the loop does not run"
# a holder (queued like the others) keeps the lease while the waiter queues
htok=$(REFLEASE_OWNER=h "$R" acquire t --ttl 60 --wait 30 --fair --print-token)
REFLEASE_OWNER=w "$R" run t --ttl 30 --wait 60 --fair -- \
  sh -c "echo W >>'$TMPDIR/holds'" >/dev/null 2>"$TMPDIR/w.err" &
wpid=$!
wait_for 100 owner_ticket t w || fail "the waiter took no ticket"
mark=$(wc -l <"$TMPDIR/holds")
REFLEASE_OWNER=h "$R" release t --lease-token "$htok" >/dev/null
wait "$wpid" || fail "the waiter failed: $(cat "$TMPDIR/w.err")"
touch "$TMPDIR/stop"
# shellcheck disable=SC2086
wait $loops
before=$(tail -n +"$((mark + 1))" "$TMPDIR/holds" | sed '/^W$/,$d' | wc -l)
[ "$before" -le 2 ] || fail "$before holds of others after the waiter queued: $(tr '\n' ' ' <"$TMPDIR/holds")"

# 3. A waiter SIGKILLed with its ticket guard (a vanished host: nothing is
# left to remove its ticket; a waiter killed alone loses it at once,
# t_run_fair_ticket.sh) blocks the queue until its ticket expires, no longer.
# Its clock runs 2 s behind, so its 5 s ticket expires 3 s after it is taken.
# The bound counts from the later of the expiry and the next waiter's start:
# a slow machine may start it after the expiry, and then it must not wait at
# all. (A SANITIZE run once took the lease 9 s late: the waiter had waited on
# the dead ticket until its own renewal, fixed in runtime.c acquire_fair.)
if [ -n "$FTLIB" ]; then
  clock_to "$TMPDIR/clock" "-2"
  tok=$("$R" acquire k --ttl 60 --print-token)
  # a simple command, so that $! is the waiter itself (a function would run
  # in a subshell, and SIGKILL would leave the waiter alive)
  # shellcheck disable=SC2046 # ft_env is a word list
  env REFLEASE_OWNER=dead $(ft_env "$TMPDIR/clock") \
    "$R" acquire k --ttl 5 --wait 60 --fair >/dev/null 2>&1 &
  dead=$!
  wait_for 100 owner_ticket k dead || fail "the doomed waiter took no ticket"
  # its ticket guard first (its only child), then the waiter
  # shellcheck disable=SC2046 # the children file is a list of pids
  kill -9 $(cat /proc/"$dead"/task/*/children)
  kill -9 "$dead"
  wait "$dead" 2>/dev/null || true
  exp=$($G log -1 --format=%B "$(owner_ticket k dead)" | sed 's/.*"expires_at":"\([^"]*\)".*/\1/' | grep T)
  "$R" release k --lease-token "$tok" >/dev/null
  started=$(date -u +%s)
  REFLEASE_OWNER=next expect_rc 0 "$R" acquire k --ttl 30 --wait 30 --fair --json
  at=$(jout lease.acquired_at)
  e=$(date -u -d "$exp" +%s)
  a=$(date -u -d "$at" +%s)
  from=$((started > e ? started : e))
  [ "$a" -gt "$e" ] || fail "acquired at $at, before the dead waiter's ticket expired ($exp)"
  [ "$a" -le $((from + 2)) ] ||
    fail "acquired at $at, long after the dead waiter's ticket expired ($exp; started at $started)"
  "$R" release k --lease-token "$(jout lease.lease_token)" --owner next >/dev/null
  # the dead waiter's ticket: the anomaly stale-ticket, removed by --reap
  expect_rc 0 "$R" reconcile --json
  grep -q '"stale-ticket"' "$TMPDIR/out" || fail "no stale-ticket anomaly: $(cat "$TMPDIR/out")"
  [ "$(tickets k)" -eq 1 ] || fail "the dead waiter's ticket went before the reap"
  expect_rc 0 "$R" reconcile --reap --json
  [ "$(jout tickets_removed)" = 1 ] || fail "tickets_removed: $(cat "$TMPDIR/out")"
  [ "$(tickets k)" -eq 0 ] || fail "--reap left the stale ticket"
fi

# 4. The ticket goes when --wait runs out and on SIGTERM (SIGINT: the same handler; a background job of sh ignores it).
tok=$("$R" acquire g --ttl 60 --print-token)
REFLEASE_OWNER=late expect_rc 3 "$R" acquire g --wait 1 --fair
grep -q "still held after waiting 1 s" "$TMPDIR/out" || fail "no 'still held' message"
[ "$(tickets g)" -eq 0 ] || fail "--wait ran out and left the ticket"
REFLEASE_OWNER=int "$R" acquire g --wait 60 --fair >/dev/null 2>"$TMPDIR/int.err" &
p=$!
wait_for 100 has_tickets g 1 || fail "no ticket to interrupt"
kill -TERM "$p"
set +e; wait "$p"; st=$?; set -e
[ "$st" -eq 143 ] || fail "SIGTERM: exit $st, $(cat "$TMPDIR/int.err")"
[ "$(tickets g)" -eq 0 ] || fail "SIGTERM left the ticket"
"$R" release g --lease-token "$tok" >/dev/null
echo ok
