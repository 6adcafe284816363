#!/bin/sh
# shellcheck disable=SC1091,SC2015  # sourced helper; A && B || fail is intended
# test: seconds 26
# Issue 19: `acquire --wait S` never gives up before S seconds (the monotonic
# clock, not the store's whole-second clock, decides) and says so; it waits out
# a local ref lock instead of giving up after the store's 3 s lock wait;
# `--wait forever` waits without a limit until the lease is free; a wait ended
# by a signal prints the ref's actual oid in its JSON object.
. "$(dirname "$0")/lease_lib.sh"
cd "$TMPDIR" || exit 1

# wait_for PID SECONDS: wait for PID to end (bounded); its status in $rc
wait_for() {
  i=0
  while alive "$1"; do
    [ $i -lt $(($2 * 10)) ] || { kill -KILL "$1"; fail "pid $1 still running after $2 s"; }
    sleep 0.1
    i=$((i + 1))
  done
  set +e
  wait "$1"
  rc=$?
  set -e
}
until_catching() { wait_until 30 "pid $1 installs its handlers" catches "$1" 15; }

expect_rc 0 "$R" --owner bob acquire busy --ttl 300

# --- --wait S lasts at least S s, whatever the second the wait starts in ---
for s in 1 2 2; do
  t0=$(now_ms)
  expect_rc 3 "$R" acquire busy --wait "$s"
  el=$(($(now_ms) - t0))
  [ "$el" -ge $((s * 1000)) ] || fail "--wait $s gave up after $el ms"
  grep -q "still held after waiting $s s" "$TMPDIR/out" || fail "message: $(cat "$TMPDIR/out")"
done
# issue 38: the wait says once (then each minute) who is in the way, one
# line on stderr with an RFC 3339 time; -q says nothing
grep -Eq '^reflease acquire: waiting for busy: held by bob@[^ ]+ until [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$' "$TMPDIR/err" ||
  fail "progress line: $(cat "$TMPDIR/err")"
[ "$(grep -c 'waiting for busy' "$TMPDIR/err")" -eq 1 ] || fail "progress lines: $(cat "$TMPDIR/err")"
expect_rc 3 "$R" -q acquire busy --wait 1
! grep -q 'waiting for' "$TMPDIR/err" || fail "-q printed: $(cat "$TMPDIR/err")"

# --- a ref lock is waited out, not given up on after 3 s -------------------
mkdir -p "$S/refs/leases" && : >"$S/refs/leases/lk.lock"
t0=$(now_ms)
expect_rc 75 "$R" acquire lk --wait 5
el=$(($(now_ms) - t0))
[ "$el" -ge 5000 ] || fail "--wait 5 over a ref lock gave up after $el ms"
grep -q "still locked after waiting 5 s" "$TMPDIR/err" || fail "lock message: $(cat "$TMPDIR/err")"
# issue 23: and it ends on time — a write inside the wait waits for the lock
# only as long as the wait has left (not the store's 3 s each time) — naming
# the ref it read ("oid", never null)
t=$(tok lk2 --ttl 60)
expect_rc 0 "$R" release lk2 --lease-token "$t"
oid=$(git --git-dir="$S" rev-parse refs/leases/lk2)
: >"$S/refs/leases/lk2.lock"
t0=$(now_ms)
expect_rc 75 "$R" --json acquire lk2 --wait 1
el=$(($(now_ms) - t0))
# (the wait's last answer, read after its budget is spent, gets up to
# LEASE_WAIT_LAST_ANSWER_MS = 3 s more: B68, lib/lease/wait.h)
[ "$el" -ge 1000 ] && [ "$el" -lt 4500 ] || fail "--wait 1 over a stale lock ended after $el ms"
[ "$(jout oid)" = "$oid" ] || fail "a wait ended by a lock: oid $(jout oid), want $oid"
[ "$(jout error.code)" = locked ] || fail "error code $(jout error.code)"
rm -f "$S/refs/leases/lk2.lock"
# the lock goes away while a --wait runs: the wait then takes the lease
"$R" --json acquire lk --wait 90 >"$TMPDIR/lk.out" 2>"$TMPDIR/lk.err" &
p=$!
sleep 4 # past the store's own 3 s lock wait; the --wait itself runs to 90 s
alive "$p" || fail "acquire --wait 90 over a ref lock ended early: $(cat "$TMPDIR/lk.err")"
rm -f "$S/refs/leases/lk.lock"
wait_for "$p" 90
[ "$rc" -eq 0 ] || fail "acquire after the lock went: exit $rc: $(cat "$TMPDIR/lk.err")"
[ "$(jget status <"$TMPDIR/lk.out")" = acquired ] || fail "not acquired: $(cat "$TMPDIR/lk.out")"

# --- --wait forever: waits until the holder releases ----------------------
BT=$(tok held --owner bob --ttl 300)
"$R" --owner carol --json acquire held --wait forever >"$TMPDIR/f.out" 2>"$TMPDIR/f.err" &
p=$!
until_catching "$p"
alive "$p" || fail "--wait forever ended: $(cat "$TMPDIR/f.err")"
expect_rc 0 "$R" --owner bob release held --lease-token "$BT"
wait_for "$p" 120
[ "$rc" -eq 0 ] || fail "--wait forever: exit $rc: $(cat "$TMPDIR/f.err")"
[ "$(jget lease.owner <"$TMPDIR/f.out")" = carol ] || fail "not carol's: $(cat "$TMPDIR/f.out")"
for w in inf infinity; do
  expect_rc 64 "$R" acquire held --wait "$w" --ttl 1 # parsed: then the TTL is what fails
  grep -q -- "--ttl: 1 s is outside" "$TMPDIR/err" || fail "--wait $w not accepted: $(cat "$TMPDIR/err")"
done

# --- interrupted: the JSON object shows the ref's oid ----------------------
oid=$(git --git-dir="$S" rev-parse refs/leases/busy)
"$R" --owner dave --json acquire busy --wait forever >"$TMPDIR/i.out" 2>"$TMPDIR/i.err" &
p=$!
until_catching "$p"
sleep 0.5 # into the wait (an earlier signal is reported the same way)
kill -TERM "$p"
wait_for "$p" 30
[ "$rc" -eq 143 ] || fail "interrupted wait: exit $rc"
rm -f "$TMPDIR/flat"
jparse <"$TMPDIR/i.out"
[ "$(jv oid)" = "$oid" ] || fail "interrupted JSON oid '$(jv oid)', the ref is $oid"
[ "$(jv error.code)" = interrupted ] || fail "error code $(jv error.code)"
[ "$(jv holder.owner)" = bob ] || fail "holder $(jv holder.owner)"
grep -q "interrupted while waiting" "$TMPDIR/i.err" || fail "no interrupted line"
echo "t_cli_wait: ok"
