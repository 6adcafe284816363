#!/bin/sh
# shellcheck disable=SC1091  # sourced helper
# `history` shows who waited how long (issue 28 item 4, protocol.md §2
# queued_at/queue_position, §5 "Fair waiting"): three fair waiters queue in
# a known order behind a holder, each queued and served at a known store
# time (every process on one libfaketime clock file, moved by the test: no
# sleeping), and `history --json` shows each one's wait, in order, ending
# when the hold before it ended; the plain acquire shows none, and a waiter
# that gave up leaves nothing in the lease's history.
. "$(dirname "$0")/lease_lib.sh"
. "$(dirname "$0")/fair_lib.sh"

[ -n "$FTLIB" ] || fail "libfaketime is required"
CLOCK="$TMPDIR/clock"
# on the test's clock, re-read at every call: a time frozen where the test
# puts it (seconds from the test's start), so the real seconds a loaded
# machine spends between two steps do not count in a wait
T0=$(date +%s)
at() { clock_to "$CLOCK" "$(date -d "@$((T0 + $1))" '+%Y-%m-%d %H:%M:%S')"; }
ft() { on_clock "$CLOCK" "$@"; }
served() { grep -qx "$1" "$TMPDIR/order"; }

at "0"
: >"$TMPDIR/order"
tok=$(ft "$R" acquire f --ttl 3600 --print-token)
# w1, w2, w3 queue 0 s, 10 s and 20 s into the test; each holds until told
pids=""
for i in 1 2 3; do
  at "$(((i - 1) * 10))"
  REFLEASE_OWNER=w$i ft "$R" run f --ttl 3600 --wait 3000 --fair -- \
    sh -c "echo w$i >>'$TMPDIR/order'; while [ ! -e '$TMPDIR/go$i' ]; do sleep 0.05; done" \
    >/dev/null 2>"$TMPDIR/w$i.err" &
  pids="$pids $!"
  wait_for 100 has_tickets f "$i" || fail "w$i took no ticket: $(cat "$TMPDIR/w$i.err")"
done
# a waiter that gives up (its --wait runs out) leaves no trace in the lease's history
REFLEASE_OWNER=quitter expect_rc 3 ft "$R" acquire f --wait 1 --fair
# the holder lets go at +100 s, w1 at +250 s, w2 at +400 s
at "100"
ft "$R" release f --lease-token "$tok" >/dev/null
wait_for 100 served w1 || fail "w1 was not served: $(cat "$TMPDIR/w1.err")"
at "250"
touch "$TMPDIR/go1"
wait_for 100 served w2 || fail "w2 was not served: $(cat "$TMPDIR/w2.err")"
at "400"
touch "$TMPDIR/go2"
wait_for 100 served w3 || fail "w3 was not served: $(cat "$TMPDIR/w3.err")"
touch "$TMPDIR/go3"
for p in $pids; do wait "$p" || fail "a waiter failed: $(cat "$TMPDIR"/w*.err)"; done
[ "$(tr '\n' ' ' <"$TMPDIR/order")" = "w1 w2 w3 " ] || fail "served in the order $(tr '\n' ' ' <"$TMPDIR/order")"
[ "$(tickets f)" -eq 0 ] || fail "tickets left behind"

expect_rc 0 ft "$R" history f --json
python3 - "$TMPDIR/out" <<'PY' || fail "history --json: the waits are not w1..w3's"
import json, sys, datetime
def t(s):
    return int(datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc).timestamp())
items = list(reversed(json.load(open(sys.argv[1]))["items"]))  # oldest first
ops = [(i["op"], i["lease"]["owner"]) for i in items]
# only the acquires of w1..w3 carry a wait; alice's plain acquire and every
# release do not; "quitter" wrote nothing
assert all("fair_wait" not in i for i in items if i["op"] != "acquire" or i["lease"]["owner"] == "alice"), ops
assert "quitter" not in [o for _, o in ops], ops
fair = [(k, i) for k, i in enumerate(items) if "fair_wait" in i]
assert [i["fair_wait"]["owner"] for _, i in fair] == ["w1", "w2", "w3"], fair
t0 = t(fair[0][1]["fair_wait"]["queued_at"])
for n, (k, i) in enumerate(fair):
    w = i["fair_wait"]
    assert w["host"] == "h1" and i["lease"]["owner"] == w["owner"], i
    # queued 0, 10, 20 s into the test, first, second and third in the queue
    assert abs(t(w["queued_at"]) - (t0 + 10 * n)) <= 1, (n, w)
    assert w["queue_position"] == n + 1, (n, w)
    assert i["lease"]["queued_at"] == w["queued_at"] and i["lease"]["queue_position"] == n + 1, i
    # the wait ends when the hold before it ends (the release just before)
    rel = items[k - 1]
    assert rel["op"] == "release", ops
    end = t(rel["lease"]["expires_at"])
    assert t(w["queued_at"]) + w["waited_seconds"] == t(i["lease"]["acquired_at"]), (n, w, i)
    assert 0 <= t(i["lease"]["acquired_at"]) - end <= 1, (n, i, rel)
    # the holds: alice until +100 s, w1 until +250 s, w2 until +400 s
    assert abs(w["waited_seconds"] - ([100, 250, 400][n] - 10 * n)) <= 2, (n, w)
PY

# the text form: one line per fair acquire with its wait and place
expect_rc 0 ft "$R" history f
[ "$(grep -c 'waited [0-9]*s in the queue since .* (position [123] at entry)' "$TMPDIR/out")" -eq 3 ] ||
  fail "history: not three waits"
grep 'acquire .* by alice ' "$TMPDIR/out" | grep -q waited && fail "history: a plain acquire shows a wait"

# A fair acquire that found no queue still went through it: waited 0 s, first.
# Reaped once expired, its released payload carries no wait (the reap copies
# the tip's payload: protocol.md §2, a released payload never has queued_at).
REFLEASE_OWNER=r expect_rc 0 ft "$R" acquire rp --ttl 30 --wait 5 --fair --json
[ "$(jout lease.queue_position)" = 1 ] || fail "the lone fair acquire: no queue_position"
[ "$(jout lease.queued_at)" != "<absent>" ] || fail "the lone fair acquire: no queued_at"
at "1000"
expect_rc 0 ft "$R" reconcile --reap --json
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert [x["name"] for x in r["reaped"]] == ["rp"], r["reaped"]; assert not r["skipped"], r["skipped"]' \
  "$TMPDIR/out" || fail "reconcile --reap did not reap the fair acquire: $(cat "$TMPDIR/out")"
expect_rc 0 ft "$R" history rp --json
python3 -c '
import json, sys
items = json.load(open(sys.argv[1]))["items"]
assert [i["op"] for i in items] == ["reap", "acquire"], items
assert "fair_wait" not in items[0] and "queued_at" not in items[0]["lease"], items[0]
assert items[1]["fair_wait"]["waited_seconds"] <= 1 and items[1]["fair_wait"]["queue_position"] == 1, items[1]
' "$TMPDIR/out" || fail "history rp: $(cat "$TMPDIR/out")"
echo ok
