#!/bin/sh
# shellcheck disable=SC1091,SC2015,SC2016  # sourced helper; A && B || fail is intended; CMD scripts in single quotes
# test: seconds 32
# Time-dependent behaviour on the real binary, shifted with libfaketime:
# F01 (holder vanishes: expiry, takeover with a rotated token, the old
# holder's cleanup release is harmless), F14 (heartbeat after expiry → 4;
# reacquire preserves the token only if nobody took over), the heartbeat floor
# (not_due), and `heartbeat --every` (one JSON object per write, signals, loss).
. "$(dirname "$0")/lease_lib.sh"
command -v faketime >/dev/null || fail "faketime (libfaketime) is required"

# ---- F01: the holder vanishes
expect_rc 0 "$R" acquire f01 --ttl 60 --json
TA=$(jout lease.lease_token); GA=$(jout lease.transitions)
expect_rc 3 env REFLEASE_OWNER=bob faketime -f +50s "$R" acquire f01          # still live
expect_rc 0 faketime -f +61s "$R" status f01 --json
[ "$(jout status)" = expired ] || fail "F01: status after expires_at"
expect_rc 0 env REFLEASE_OWNER=bob REFLEASE_HOST=h2 faketime -f +61s "$R" acquire f01 --json
[ "$(jout status)" = acquired ] || fail "F01: takeover"
[ "$(jout token_rotated)" = true ] || fail "F01: token_rotated"
TB=$(jout lease.lease_token)
[ -n "$TB" ] && [ "$TB" != "$TA" ] || fail "F01: the takeover kept the token"
[ "$(jout lease.transitions)" -eq $((GA + 1)) ] || fail "F01: transitions not incremented"
[ "$(jout lease.owner)" = bob ] || fail "F01: owner"
# the vanished holder's cleanup (if: always()) releases nothing of bob's
before=$(refs)
expect_rc 0 faketime -f +62s "$R" release f01 --lease-token "$TA" --json
[ "$(jout status)" = not_owner ] || fail "F01: old holder's release"
[ "$(refs)" = "$before" ] || fail "F01: old holder's release wrote"
expect_rc 4 faketime -f +62s "$R" heartbeat f01 --lease-token "$TA"
expect_rc 4 faketime -f +62s "$R" reacquire f01 --lease-token "$TA"
expect_rc 0 env REFLEASE_OWNER=bob REFLEASE_HOST=h2 faketime -f +63s "$R" status f01 --json
[ "$(jout holder.owner)" = bob ] || fail "F01: bob lost the lease"

# ---- F14: heartbeat after expiry
expect_rc 0 "$R" acquire f14 --ttl 30 --json
T=$(jout lease.lease_token)
expect_rc 4 faketime -f +40s "$R" heartbeat f14 --lease-token "$T" --json
[ "$(jout status)" = expired ] || fail "F14: status"
[ "$(jout lease.lease_token)" = "<absent>" ] || fail "F14: token shown on expired"
expect_rc 4 faketime -f +40s "$R" transition f14 --lease-token "$T" --to working
# nobody took over: reacquire preserves the token
expect_rc 0 faketime -f +41s "$R" reacquire f14 --lease-token "$T" --json
[ "$(jout status)" = reacquired ] || fail "F14: reacquire"
[ "$(jout lease.lease_token)" = "$T" ] || fail "F14: reacquire rotated"
# a takeover in between is never undone
expect_rc 0 "$R" acquire f14b --ttl 30 --json
T=$(jout lease.lease_token)
expect_rc 0 env REFLEASE_OWNER=bob faketime -f +40s "$R" acquire f14b
before=$(refs)
expect_rc 4 faketime -f +41s "$R" reacquire f14b --lease-token "$T" --json
[ "$(jout status)" = not_holder ] || fail "F14: reacquire after takeover"
[ "$(jout holder.owner)" = bob ] || fail "F14: holder after takeover"
expect_rc 4 faketime -f +41s "$R" heartbeat f14b --lease-token "$T"
[ "$(refs)" = "$before" ] || fail "F14: a refused write wrote"

# ---- the floor: an early heartbeat is not written (not_due), a due one is
expect_rc 0 "$R" acquire fl --ttl 100 --json
T=$(jout lease.lease_token); O=$(jout oid)
expect_rc 0 faketime -f +5s "$R" heartbeat fl --lease-token "$T" --json
[ "$(jout status)" = not_due ] && [ "$(jout oid)" = "$O" ] || fail "floor: not_due"
expect_rc 0 faketime -f +11s "$R" heartbeat fl --lease-token "$T" --json
[ "$(jout status)" = renewed ] && [ "$(jout oid)" != "$O" ] || fail "floor: renewed"

# ---- heartbeat --every: one JSON object per write, SIGINT stops without releasing
# (a background job of a non-interactive shell ignores SIGINT, and reflease
# keeps an ignored signal ignored: restore it)
expect_rc 0 "$R" acquire ev --ttl 6 --json
T=$(jout lease.lease_token)
env --default-signal=INT "$R" heartbeat ev --lease-token "$T" --every 1 --json >"$TMPDIR/ev.out" 2>"$TMPDIR/ev.err" &
P=$!
wait_until 60 "--every: three JSON lines" sh -c "[ \$(wc -l <'$TMPDIR/ev.out') -ge 3 ]"
kill -INT $P
set +e; wait $P; rc=$?; set -e
[ "$rc" -eq 130 ] || fail "--every SIGINT exit $rc"
python3 -c '
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) >= 3, lines
for l in lines:
    o = json.loads(l)
    assert o["status"] in ("renewed", "not_due"), o
    assert o["lease"]["lease_token"] == sys.argv[2], o
print(len(lines))' "$TMPDIR/ev.out" "$T" >/dev/null || fail "--every --json lines"
expect_rc 0 "$R" status ev --json
[ "$(jout status)" = live ] || fail "--every without --release-on-exit released"
# heartbeats replace heartbeats (issue 29): one heartbeat commit, counting them all
[ "$(git --git-dir="$S" log --format=%s refs/leases/ev | grep -c heartbeat)" -eq 1 ] ||
  fail "--every left more than one heartbeat commit of the tenure"
[ "$(jout lease.heartbeats)" -ge 2 ] || fail "--every wrote fewer than 2 heartbeats"

# SIGHUP → 129; SIGTERM with --release-on-exit → 143 and released
"$R" heartbeat ev --lease-token "$T" --every 1 >/dev/null 2>&1 &
P=$!; wait_until 30 "--every: SIGHUP handler" catches $P 1; kill -HUP $P
set +e; wait $P; rc=$?; set -e
[ "$rc" -eq 129 ] || fail "--every SIGHUP exit $rc"
"$R" heartbeat ev --lease-token "$T" --every 1 --release-on-exit >"$TMPDIR/ev2.out" 2>&1 &
P=$!; wait_until 30 "--every: SIGTERM handler" catches $P 15; kill -TERM $P
set +e; wait $P; rc=$?; set -e
[ "$rc" -eq 143 ] || fail "--every SIGTERM exit $rc"
expect_rc 0 "$R" status ev --json
[ "$(jout status)" = released ] || fail "--release-on-exit did not release"

# an ignored SIGHUP (nohup) stays ignored
expect_rc 0 "$R" acquire nh --ttl 6 --json
T=$(jout lease.lease_token)
sh -c 'trap "" HUP; exec "$0" heartbeat nh --lease-token "$1" --every 1' "$R" "$T" >/dev/null 2>&1 &
P=$!; wait_until 30 "--every (nohup): SIGTERM handler" catches $P 15; kill -HUP $P; sleep 0.5
kill -0 $P 2>/dev/null || fail "--every died of an ignored SIGHUP"
kill -TERM $P
set +e; wait $P; rc=$?; set -e
[ "$rc" -eq 143 ] || fail "--every (nohup) SIGTERM exit $rc"

# lost while keeping (another party breaks it, F21): exit 4, last line not_holder
expect_rc 0 "$R" acquire lost --ttl 6 --json
T=$(jout lease.lease_token)
"$R" heartbeat lost --lease-token "$T" --every 1 --json >"$TMPDIR/l.out" 2>"$TMPDIR/l.err" &
P=$!
sleep 1.5
expect_rc 0 env REFLEASE_OWNER=admin "$R" break lost --force
set +e; wait $P; rc=$?; set -e
[ "$rc" -eq 4 ] || fail "--every lost exit $rc"
[ "$(tail -n 1 "$TMPDIR/l.out" | jget status)" = not_holder ] || fail "--every lost: last line"
expect_rc 0 "$R" status lost --json
[ "$(jout status)" = released ] || fail "--every recreated a broken lease"
echo ok
