#!/bin/sh
# shellcheck disable=SC1091,SC2015,SC2016,SC2154  # sourced helper (wait_rc sets rc); A && B || fail is intended; CMD scripts in single quotes
# `run` when the lease is lost while CMD runs (protocol.md §6, F21): CMD's
# group gets SIGTERM, then SIGKILL after kill_grace, reflease exits 4 — and CMD
# is dead before the lease's expires_at, i.e. before anyone else may take over.
. "$(dirname "$0")/lease_lib.sh"

# CMD that ignores SIGTERM and stamps the time (ms) every 50 ms
# (build/tools/stamp: written to a temporary file and renamed, so a SIGKILL
# mid-write never leaves the stamp empty)
STAMPER="trap '' TERM; exec '$BUILD/tools/stamp' '$TMPDIR/stamp' 50"

# 1. Another party breaks the lease (break --force): the next heartbeat
#    answers not_holder → lost at once; CMD (ignoring SIGTERM) is killed after
#    kill_grace (1.5 s for ttl 9).
"$R" --json run lost1 --ttl 9 -- sh -c "$STAMPER" >"$TMPDIR/l1.out" 2>"$TMPDIR/l1.err" &
P=$!
wait_until 30 "lost1: CMD started (run holds the lease first)" test -s "$TMPDIR/stamp"
# next re-read within 1 s (the heartbeat floor), then kill_grace 1.5 s: well
# inside one TTL (9 s), the bound t_run_fence.sh holds a broken run to as well
lost_by_break lost1 "$P" "$TMPDIR/l1.err"
tail -n 1 "$TMPDIR/l1.err" >"$TMPDIR/last"
jparse <"$TMPDIR/last"
[ "$(jv reason)" = lost ] && [ "$(jv exit_status)" = 4 ] || fail "lost1: json"
[ "$(jv status)" = not_holder ] || fail "lost1: status $(jv status)"
[ "$(jv command.signal)" = 9 ] || fail "lost1: CMD not SIGKILLed ($(jv command.signal))"
last=$(cat "$TMPDIR/stamp"); sleep 0.3
[ "$(cat "$TMPDIR/stamp")" = "$last" ] || fail "lost1: CMD still running"
expect_rc 0 "$R" status lost1 --json
[ "$(jout status)" = released ] || fail "lost1: run recreated the lease"

# 2. The store stops accepting writes (a stale ref lock): heartbeats fail and
#    are retried until the lost deadline expires_at − (kill_grace + 2 s); CMD
#    is dead before expires_at.
"$R" --json run lost2 --ttl 9 -- sh -c "$STAMPER" >"$TMPDIR/l2.out" 2>"$TMPDIR/l2.err" &
P=$!
i=0
while [ ! -s "$TMPDIR/stamp.2" ]; do
  i=$((i + 1)); [ $i -lt 100 ] || fail "lost2 did not start"; sleep 0.05
  "$R" status lost2 --json >"$TMPDIR/st.json" 2>/dev/null &&
    [ "$(jget status <"$TMPDIR/st.json")" = live ] && cp "$TMPDIR/st.json" "$TMPDIR/stamp.2"
done
: >"$S/refs/leases/lost2.lock"
wait_rc "$P"
rm -f "$S/refs/leases/lost2.lock"
[ "$rc" -eq 4 ] || { cat "$TMPDIR/l2.err"; fail "lock: run exit $rc, want 4"; }
# the expiry of the last heartbeat that landed
exp=$(git --git-dir="$S" log -1 --format=%b refs/leases/lost2 | head -n 1 | jget expires_at)
exp_ms=$(( $(date -u -d "$exp" +%s) * 1000 ))
last=$(cat "$TMPDIR/stamp")
[ "$last" -lt "$exp_ms" ] || fail "lock: CMD ran until $last ms, lease expired at $exp_ms ms"
echo "CMD stopped $((exp_ms - last)) ms before expires_at"
tail -n 1 "$TMPDIR/l2.err" >"$TMPDIR/last"
jparse <"$TMPDIR/last"
[ "$(jv reason)" = lost ] && [ "$(jv status)" = expired ] || fail "lock: json $(cat "$TMPDIR/last")"
# (each heartbeat here hangs in the lock wait: the main thread's watchdog stops CMD)

# 3. A CMD that honours SIGTERM gets SIGTERM (not SIGKILL) when the lease is lost;
#    --conflict-exit-code replaces the 4 of a lost lease
"$R" --json run lost3 --ttl 9 --conflict-exit-code 99 -- sh -c "trap 'exit 15' TERM; while :; do sleep 0.05; done" \
  >"$TMPDIR/l3.out" 2>"$TMPDIR/l3.err" &
P=$!
wait_until 30 "lost3: lease held" is_live lost3
expect_rc 0 env REFLEASE_OWNER=admin "$R" break lost3 --force
wait_rc "$P"
[ "$rc" -eq 99 ] || fail "lost3: exit $rc, want 99 (--conflict-exit-code)"
tail -n 1 "$TMPDIR/l3.err" | jget command.exit_code | grep -qx 15 || fail "lost3: CMD did not exit on SIGTERM"
echo ok
