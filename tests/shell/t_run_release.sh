#!/bin/sh
# shellcheck disable=SC1091,SC2015,SC2086,SC2154,SC2016  # sourced helpers (rc, P, D, TB set there); A && B || fail is intended; $R is a word list; CMD expands its own variables
# How `run` gives the lease back (issue 23, protocol.md §6 "The run
# guarantee", F01): a SIGKILLed run's guard stops the tree, then releases
# with the token, so waiters do not wait a TTL for nothing.
. "$(dirname "$0")/lease_lib.sh"
. "$(dirname "$0")/fence_lib.sh"

# ---- SIGKILL of run --ttl 60 (F01): before the fix bob waited the whole
# TTL (60 s) although the tree was gone after kill_grace; now the guard
# releases right after the tree is gone: CMD alone (dies on SIGTERM) within a
# few seconds, a tree with a TERM-ignoring member after kill_grace (10 s)
for shape in child all; do
  c=kill9-$shape
  fence_start "$c" "$shape" 60
  kill -KILL "$P"
  tkill=$(now_ms)
  wait_rc "$P"
  bob_poll "$c" 25
  fence_check "$c" "$TB"
  lim=5000; [ "$shape" = all ] && lim=16000
  [ $((TB - tkill)) -lt "$lim" ] || fail "$c: bob got the lease $((TB - tkill)) ms after the SIGKILL (limit $lim ms)"
  git --git-dir="$S" log -1 --format=%B "refs/leases/$c^" | grep -q '"phase":"released"' ||
    fail "$c: the lease was not released by the guard: $(git --git-dir="$S" log -1 --format=%B "refs/leases/$c^")"
done

# ---- the final release fails (a stale ref lock CMD leaves: the release cannot
# get the ref lock): before the fix run exited 0 with the lease held for a
# TTL; now it exits with the release's status (75), naming CMD's
c=relfail
expect_rc 75 $R run "$c" --ttl 30 -- sh -c ": >'$S/refs/leases/$c.lock'"
grep -q "release failed.*exit 75 (CMD's status was 0)" "$TMPDIR/err" || fail "$c: message: $(cat "$TMPDIR/err")"
rm -f "$S/refs/leases/$c.lock"
is_live "$c" || fail "$c: the lease is not held any more, yet the release failed"

# ---- --conflict-exit-code N: a lease lost through a malformed payload (a
# permanent heartbeat error) exits N too, not 65 (lost is lost)
c=conflict-garbage9
RUN_EXTRA="--conflict-exit-code 9" fence_start "$c" child 9
garbage_tip "$c"
[ "$rc" -eq 9 ] || { cat "$RUNLOG"; fail "$c: run exit $rc, want --conflict-exit-code's 9"; }
fence_check "$c" "$texit"

# ---- issue 43: the guard is forked before the acquire (so a waiter's handoff
# forks nothing but CMD) and learns what was taken from its start message:
# - F01, a SIGKILLed run --slots: the guard releases the slot it holds
#   (pool@Kof2, not the pool's name, which is all the guard knew when forked);
# - F05, a waiter that never held: a run SIGKILLed while it waits, and one
#   whose wait ends unheld (3): its guard exits (reaped by the run that ends
#   normally), CMD never runs, nothing is released for it.
released() { [ "$("$R" status "$1" --json 2>/dev/null | jget status)" = released ]; }
gone() { [ ! -e "/proc/$1" ] || grep -q ') Z ' "/proc/$1/stat" 2>/dev/null; }
has_child() { pgrep -P "$1" >/dev/null; }
"$R" run sl --slots 2 --ttl 60 -- sh -c 'echo "$REFLEASE_LEASE_NAME" >"$1"; exec sleep 100' _ \
  "$TMPDIR/sl.name" >/dev/null 2>&1 &
P=$!
wait_until 20 "sl: CMD started" test -s "$TMPDIR/sl.name"
slot=$(cat "$TMPDIR/sl.name")
case $slot in sl@[12]of2) ;; *) fail "sl: REFLEASE_LEASE_NAME is '$slot', not a slot of sl" ;; esac
is_live "$slot" || fail "sl: $slot not held"
kill -KILL "$P"
wait_rc "$P"
wait_until 20 "$slot released by the guard after the SIGKILL" released "$slot"
tokh=$(tok wq --ttl 60)
[ -n "$tokh" ] || fail "wq: no token"
for how in kill timeout; do
  wsec=60; [ "$how" = timeout ] && wsec=3
  REFLEASE_OWNER=bob "$R" run wq --wait "$wsec" -- touch "$TMPDIR/wq.ran" >/dev/null 2>"$TMPDIR/wq.err" &
  P=$!
  wait_until 20 "wq ($how): the waiting run's guard" has_child "$P"
  g=$(pgrep -P "$P" | head -n 1)
  wait_until 20 "wq ($how): CMD's process, waiting under the guard" has_child "$g"
  c=$(pgrep -P "$g" | head -n 1)
  if [ "$how" = kill ]; then
    kill -KILL "$P"
    wait_rc "$P"
    wait_until 10 "wq: the guard of a SIGKILLed waiting run exits" gone "$g"
  else
    wait_rc "$P"
    [ "$rc" -eq 3 ] || fail "wq: run --wait 3 behind a holder: exit $rc: $(cat "$TMPDIR/wq.err")"
    [ ! -e "/proc/$g" ] || fail "wq: the guard $g is left after run --wait ended unheld"
  fi
  wait_until 10 "wq ($how): CMD's process ends with its guard" gone "$c"
  [ ! -e "$TMPDIR/wq.ran" ] || fail "wq ($how): CMD ran without the lease"
done
echo ok
