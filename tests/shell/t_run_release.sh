#!/bin/sh
# shellcheck disable=SC1091,SC2015,SC2086,SC2154  # sourced helpers (rc, P, D, TB set there); A && B || fail is intended; $R is a word list
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
echo ok
