#!/bin/sh
# shellcheck disable=SC1091,SC2015,SC2086,SC2154  # sourced helpers; A && B || fail is intended; $R is a word list
# Messages of the long-lived commands (issue 23): a lost lease is one message
# with its cause; a heartbeat that took the lease over says so; `heartbeat
# --every` logs no `not_due` block on its first tick and never prints the
# token in a log block.
. "$(dirname "$0")/lease_lib.sh"
. "$(dirname "$0")/fence_lib.sh"

# ---- heartbeat --every right after an acquire: its first tick is not due
# (before the fix: a `not_due` block with the token); it logs writes only
c=ev
T=$(tok "$c" --ttl 10)
$R heartbeat "$c" --lease-token "$T" --every 2 >"$TMPDIR/ev.out" 2>"$TMPDIR/ev.err" &
HP=$!
trap 'kill -KILL "$HP" 2>/dev/null || true' EXIT
wait_until 20 "$c: a renewal logged" grep -q "^$c: renewed" "$TMPDIR/ev.out"
kill -TERM "$HP"
wait_rc "$HP"
! grep -q not_due "$TMPDIR/ev.out" || fail "$c: a not_due block: $(cat "$TMPDIR/ev.out")"
! grep -q "$T" "$TMPDIR/ev.out" "$TMPDIR/ev.err" || fail "$c: the token is in the log: $(cat "$TMPDIR/ev.out")"

# ---- the current token presented from another host takes the lease over
c=ho
T=$(tok "$c" --ttl 60)
expect_rc 0 env REFLEASE_HOST=h2 $R heartbeat "$c" --lease-token "$T"
grep -q "^$c: renewed — took over (the token rotated" "$TMPDIR/out" || fail "$c: $(cat "$TMPDIR/out")"
expect_rc 0 env REFLEASE_HOST=h2 $R heartbeat "$c" --lease-token "$(sed -n 's/^lease_token: //p' "$TMPDIR/out")"
! grep -q "took over" "$TMPDIR/out" || fail "$c: a plain renewal says took over"

# ---- lost while a heartbeat hangs on a ref lock: one message, with the cause
c=lk
D=$TMPDIR/cell.$c; mkdir -p "$D"
$R run "$c" --ttl 9 -- sleep 60 >"$D/out" 2>"$D/err" &
P=$!
wait_until 20 "$c: held" is_live "$c"
: >"$S/refs/leases/$c.lock"
wait_rc "$P"
rm -f "$S/refs/leases/$c.lock"
[ "$rc" -eq 4 ] || fail "$c: exit $rc, want 4: $(cat "$D/err")"
[ "$(grep -o 'no heartbeat landed' "$D/err" | wc -l)" -eq 1 ] || fail "$c: the message repeats itself: $(cat "$D/err")"
grep -q "lease lost (expired): no heartbeat landed before the lost deadline; the heartbeat in flight got no answer\|the last heartbeat failed" "$D/err" ||
  fail "$c: no cause: $(cat "$D/err")"
echo ok
