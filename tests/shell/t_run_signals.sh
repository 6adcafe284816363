#!/bin/sh
# shellcheck disable=SC1091,SC2015,SC2016,SC2154  # sourced helper (wait_rc sets rc); A && B || fail is intended; CMD scripts in single quotes
# `run`: SIGTERM, SIGHUP and SIGINT to reflease are forwarded to CMD's process
# group, the lease is released (within 5 s) and reflease exits 143/129/130;
# SIGKILL to reflease kills CMD too (its guard outlives reflease).
. "$(dirname "$0")/lease_lib.sh"

# start_run NAME SCRIPT [env-prefix...]: reflease run in the background; $P its
# pid; CMD writes its pid to $TMPDIR/NAME.pid first.
start_run() {
  n=$1; script=$2; shift 2
  rm -f "$TMPDIR/$n.pid" "$TMPDIR/$n.sig"
  "$@" "$R" --json run "$n" --ttl 30 -- sh -c "echo \$\$ >'$TMPDIR/$n.pid'; $script" \
    >"$TMPDIR/$n.out" 2>"$TMPDIR/$n.err" &
  P=$!
  wait_until 30 "CMD of $n started" test -s "$TMPDIR/$n.pid"
  C=$(cat "$TMPDIR/$n.pid")
}
# CMD: record the signal it got, then exit 9 (its status is not reflease's)
TRAPS="trap 'echo TERM >\"$TMPDIR/\$REFLEASE_LEASE_NAME.sig\"; exit 9' TERM;
       trap 'echo HUP >\"$TMPDIR/\$REFLEASE_LEASE_NAME.sig\"; exit 9' HUP;
       trap 'echo INT >\"$TMPDIR/\$REFLEASE_LEASE_NAME.sig\"; exit 9' INT;
       while :; do sleep 0.1; done"

for c in TERM:143 HUP:129 INT:130; do
  sig=${c%%:*}; code=${c#*:}
  n=sig$sig
  # a background job of a non-interactive shell ignores SIGINT: restore it
  start_run "$n" "$TRAPS" env --default-signal=INT
  expect_rc 0 "$R" status "$n" --json
  [ "$(jout status)" = live ] || fail "$n: not held while CMD runs"
  t0=$(date +%s)
  kill -"$sig" "$P"
  wait_rc "$P"
  t1=$(date +%s)
  [ "$rc" -eq "$code" ] || { cat "$TMPDIR/$n.err"; fail "$n: exit $rc, want $code"; }
  [ "$(cat "$TMPDIR/$n.sig" 2>/dev/null)" = "$sig" ] || fail "$n: CMD did not get SIG$sig"
  [ $((t1 - t0)) -le 5 ] || fail "$n: took $((t1 - t0)) s"
  alive "$C" && fail "$n: CMD still running"
  expect_rc 0 "$R" status "$n" --json
  [ "$(jout status)" = released ] || fail "$n: lease not released"
  tail -n 1 "$TMPDIR/$n.err" >"$TMPDIR/last"
  jparse <"$TMPDIR/last"
  [ "$(jv reason)" = interrupted ] && [ "$(jv exit_status)" = "$code" ] || fail "$n: json"
done

# CMD ignoring the forwarded SIGTERM is killed, and the lease still released
# within 5 s
start_run stubborn "trap '' TERM; while :; do sleep 0.1; done"
t0=$(date +%s)
kill -TERM "$P"
wait_rc "$P"
t1=$(date +%s)
[ "$rc" -eq 143 ] || fail "stubborn: exit $rc"
[ $((t1 - t0)) -le 5 ] || fail "stubborn: took $((t1 - t0)) s"
alive "$C" && fail "stubborn: CMD survived"
expect_rc 0 "$R" status stubborn --json
[ "$(jout status)" = released ] || fail "stubborn: not released"

# SIGKILL to reflease: the guard kills CMD, lease left to expire
start_run orphan "exec sleep 30"
kill -KILL "$P"
wait_rc "$P"
i=0
while alive "$C"; do
  i=$((i + 1)); [ $i -lt 40 ] || fail "SIGKILL: CMD outlived reflease"; sleep 0.05
done
# (the whole tree, grandchildren and setsid members included: t_run_fence.sh)
# interrupted while waiting (acquire --wait / run --wait): ends at once, not
# after the runtime's current backoff step; nothing acquired, CMD never runs
expect_rc 0 env REFLEASE_OWNER=bob "$R" acquire busy --ttl 300
for cmd in "acquire busy --wait 100" "run busy --wait 100 -- echo RAN"; do
  # shellcheck disable=SC2086
  env --default-signal=INT "$R" --json $cmd >"$TMPDIR/w.out" 2>"$TMPDIR/w.err" &
  P=$!
  wait_until 30 "$cmd: SIGINT handler" catches "$P" 2
  sleep 0.5 # into the wait (a signal before it is answered the same way)
  t0=$(date +%s%3N)
  kill -INT "$P"
  wait_rc "$P"
  t1=$(date +%s%3N)
  [ "$rc" -eq 130 ] || fail "$cmd: interrupted wait exit $rc"
  [ $((t1 - t0)) -lt 1000 ] || fail "$cmd: interrupt took $((t1 - t0)) ms"
  grep -q RAN "$TMPDIR/w.out" && fail "$cmd: CMD ran"
  case $cmd in
    acquire*) jparse <"$TMPDIR/w.out" ;;
    run*) tail -n 1 "$TMPDIR/w.err" | jparse ;;
  esac
  [ "$(jv error.code)" = interrupted ] || fail "$cmd: json"
done
expect_rc 0 "$R" status busy --json
[ "$(jout holder.owner)" = bob ] || fail "an interrupted waiter changed the lease"
echo ok
