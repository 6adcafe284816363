#!/bin/sh
# shellcheck disable=SC1091,SC2046,SC2154  # sourced helper; ft_env is a word list; rc and p_* set by wait_rc and eval
# test: seconds 20
# Issue 40 B68, B69 on the binary: a forward step of the wall clock (an NTP
# step, a VM resume; libfaketime's clock file, shared by every process) that
# passes the holder's expiry and uses up --wait. Before: a fair waiter exited
# 3 "still held" about the expired lease and nobody took it (B68); of two
# plain waiters one took the lease ~60 s late (the holder's expiry counted on
# the monotonic clock from before the step), the other exited 75 "ref lock
# held by another writer" (B69). Now the step is seen within the 2 s look at
# the clock, the expired lease is taken at once, and the other waiter's
# answer is the store's: held by the winner, exit 3 (protocol.md §5 "One
# wait loop").
set -eu
. "$(dirname "$0")/lease_lib.sh"
[ -n "$FTLIB" ] || fail "libfaketime is required (scripts/install-deps.sh)"

for kind in plain fair; do
  n=step-$kind
  fair=""; [ "$kind" = fair ] && fair=--fair
  clock_to "$TMPDIR/clock" "+0"
  env REFLEASE_OWNER=alice $(ft_env "$TMPDIR/clock") "$R" acquire "$n" --ttl 60 >/dev/null
  for w in bob carol; do
    env REFLEASE_OWNER=$w $(ft_env "$TMPDIR/clock") "$R" --json acquire "$n" --ttl 60 \
      --wait 30 $fair >"$TMPDIR/$w.out" 2>"$TMPDIR/$w.err" &
    eval "p_$w=\$!"
  done
  sleep 1.5 # both waiting (their first look at the clock is due within 2 s)
  t0=$(now_ms)
  clock_to "$TMPDIR/clock" "+120" # alice's 60 s are over, and both waits' 30 s
  wait_rc "$p_bob"; rc_bob=$rc
  wait_rc "$p_carol"; rc_carol=$rc
  took=$(($(now_ms) - t0))
  echo "$kind: bob $rc_bob, carol $rc_carol, both answered ${took} ms after the step"
  [ "$took" -lt 8000 ] || fail "$kind: the waiters answered $took ms after the step (the step not seen)"
  case "$rc_bob$rc_carol" in
    03) win=bob lose=carol ;;
    30) win=carol lose=bob ;;
    *) cat "$TMPDIR/bob.err" "$TMPDIR/carol.err"; fail "$kind: exits $rc_bob, $rc_carol: want one 0 (the expired lease taken) and one 3" ;;
  esac
  # held by the winner (fair: or queued behind its ticket, not yet dropped)
  grep -qE "held by $win|behind $win@" "$TMPDIR/$lose.err" "$TMPDIR/$lose.out" ||
    fail "$kind: $lose's answer does not name $win: $(cat "$TMPDIR/$lose.err" "$TMPDIR/$lose.out")"
  grep -q "ref lock" "$TMPDIR/$lose.err" && fail "$kind: $lose reports a ref lock: $(cat "$TMPDIR/$lose.err")"
  [ "$(jget status <"$TMPDIR/$win.out")" = acquired ] || fail "$kind: $win: $(cat "$TMPDIR/$win.out")"
  if [ "$kind" = fair ]; then
    [ "$(git --git-dir="$S" for-each-ref "refs/leases-queue/$n/" | wc -l)" -eq 0 ] || fail "fair: tickets left behind"
  fi
done
echo ok
