#!/bin/sh
# shellcheck disable=SC1091,SC2015,SC2154  # sourced helper (wait_rc sets rc); A && B || fail is intended
# test: seconds 14
# test: serial (3 busy loops per CPU: a CPU-heavy run, alone)
# Issue 40 B67 (protocol.md §6 "Small TTLs"): `run` keeps an uncontended
# lease at the smallest TTL it accepts (9 s) on a machine with 3 busy loops
# per CPU at its own priority: exit 0, CMD's status, the lease renewed
# while CMD ran and released after. (At TTL 6 the field case lost it: exit 4,
# "no heartbeat landed"; TTLs under 9 s are refused, t_run_fence.sh.)
. "$(dirname "$0")/lease_lib.sh"
n=$(($(nproc) * 3))
busy=""
trap 'for p in $busy; do kill "$p" 2>/dev/null || true; done' EXIT INT TERM
i=0
while [ $i -lt "$n" ]; do
  sh -c 'while :; do :; done' &
  busy="$busy $!"
  i=$((i + 1))
done
# two runs at once, a lease and a set: 10 s is more than one TTL, several
# renewals each
"$R" run b67 --ttl 9 -- sleep 10 >"$TMPDIR/one.out" 2>"$TMPDIR/one.err" &
p1=$!
"$R" run b67x b67y --ttl 9 -- sleep 10 >"$TMPDIR/set.out" 2>"$TMPDIR/set.err" &
p2=$!
wait_rc "$p1"
r1=$rc
wait_rc "$p2"
for p in $busy; do kill "$p" 2>/dev/null || true; done
busy=""
[ "$r1" -eq 0 ] || fail "B67: run --ttl 9 under $n busy loops: exit $r1: $(cat "$TMPDIR/one.err")"
[ "$rc" -eq 0 ] || fail "B67: run of a set --ttl 9 under $n busy loops: exit $rc: $(cat "$TMPDIR/set.err")"
for c in b67 b67x b67y; do
  expect_rc 0 "$R" status "$c" --json
  [ "$(jout status)" = released ] || fail "B67: $c: $(jout status)"
  # renewed while CMD ran (10 s > the TTL): a heartbeat landed, then the release
  git --git-dir="$S" log --format=%s "refs/leases/$c" | grep -q "^$c: heartbeat " ||
    fail "B67: $c was never renewed: $(git --git-dir="$S" log --format=%s "refs/leases/$c")"
done
echo "ok ($n busy loops)"
