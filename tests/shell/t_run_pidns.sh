#!/bin/sh
# shellcheck disable=SC1091,SC2015  # sourced helpers; A && B || fail is intended
# `run` in a PID namespace (F32, issue 23, protocol.md §6 "The run guarantee"):
# with the parent's /proc (`unshare --pid --fork` without --mount-proc) the
# guard cannot see CMD's tree — before the fix CMD ended at once and run never
# did, heartbeating on. Now run refuses with exit 78 before writing anything;
# with the namespace's own /proc (--mount-proc) it works as anywhere.
. "$(dirname "$0")/lease_lib.sh"
command -v unshare >/dev/null 2>&1 || fail "unshare (util-linux) is required (scripts/install-deps.sh)"
if ! unshare --pid --fork --mount-proc true 2>"$TMPDIR/unshare.err"; then
  echo "t_run_pidns: SKIPPED: this process may not create PID namespaces ($(cat "$TMPDIR/unshare.err"))"
  echo ok
  exit 0
fi

expect_rc 78 timeout -s KILL 20 unshare --pid --fork --kill-child "$R" run nsx --ttl 12 -- true
grep -q "/proc is not this PID namespace's" "$TMPDIR/err" || fail "message: $(cat "$TMPDIR/err")"
! refs | grep -q 'refs/leases/nsx$' || fail "run wrote the lease before refusing"

expect_rc 3 timeout -s KILL 20 unshare --pid --fork --kill-child --mount-proc "$R" run nsx --ttl 12 -- sh -c 'exit 3'
[ "$("$R" status nsx --json | jget status)" = released ] || fail "not released after CMD ended"
echo ok
