#!/bin/sh
# test: seconds 45
# Issue 39 item 2 for the Action: the background keeper of an acquire with
# heartbeat true follows the github: budget defaults — no pace of its own
# (not ttl/3, no TTL 300 fallback): the acquire takes the store's default TTL
# (450 s), the keeper is `reflease heartbeat --every auto` (the library's
# renewal point, protocol.md §6: 375 s on github:), so a held lease costs at
# most 20 content-creating requests an hour (GitHub's secondary limit is 500
# an hour per repository: "About secondary rate limits", counted by the fake
# as GitHub counts them: every commit, ref creation and updateRefs). The
# lease is held for 800 s of fake time and must stay live throughout; the
# keeper's writes are counted against the fake GitHub (build/tools/fakegh).
# Time runs 40 times faster for the fake and every reflease the Action
# starts (libfaketime FAKETIME="+0 x40", as t_github_budget.sh), so the 800 s
# take 20 s.
# shellcheck disable=SC1091,SC2154,SC2015 # sourced helpers; root, log, fpid and base come from them; A && B || fail is intended
set -eu
. "$(dirname "$0")/lease_lib.sh"
. "$(dirname "$0")/action_lib.sh"
action_setup
[ -n "$FTLIB" ] || fail "libfaketime is required (scripts/install-deps.sh)"
action_dir "$TMPDIR/action-path"
CANARY="ghs_BUDGETcanary0123456789abcdefCANARY"
trap action_cleanup EXIT INT TERM
export FAKETIME="+0 x40" LD_PRELOAD="$FTLIB"
action_fakegh "$CANARY"
unset FAKETIME LD_PRELOAD
# reflease on the fast clock wherever the Action runs it (the main stage's
# acquire, the keeper's heartbeat, the post stage's release): the bundle's
# binary execs it under libfaketime (same pid, so the keeper's pid is the
# heartbeat's); the stages' own Node runs in real time, as on a runner
rm "$ap/build/bundle/bin/reflease"
printf '#!/bin/sh\nLD_PRELOAD=%s FAKETIME="+0 x40" exec %s "$@"\n' "$FTLIB" "$REFLEASE" >"$ap/build/bundle/bin/reflease"
chmod +x "$ap/build/bundle/bin/reflease"
stat() { curl -sf "$base/_fakegh/stats" | field_n "$1"; }
field_n() { sed -n "s/.*\"$1\": *\\([0-9]*\\).*/\\1/p" | head -n 1; }

act '{"command":"acquire","name":"budget","heartbeat":"true"}'
expect 0 "acquire with heartbeat"
t0=$(now_ms)
is outputs.acquired true "acquired"
s=$(status_json budget)
printf '%s' "$s" | grep -q '"ttl_seconds":450' || fail "the acquire did not take the github: default TTL 450: $s"
like stdout 'heartbeat of budget in the background at the renewal point of TTL 450s' "log: the keeper's pace"
like summary 'heartbeat in the background at the renewal point of TTL 450s' "summary: the keeper's pace"
hbpid=$(cat "$RUNNER_TEMP/reflease-heartbeat.leases.budget.pid")
argv=$(tr '\0' ' ' <"/proc/$hbpid/cmdline")
case $argv in
  *"/reflease heartbeat --every auto -- budget "*) ;;
  *) fail "the keeper is not heartbeat --every auto without --ttl: $argv" ;;
esac
# a loaded machine may let the keeper renew (2 each) before this look: the
# acquire's own are what the renewals (updateRefs) do not account for
cc0=$(stat content_creating)
b0=$(stat updateRefs)
[ $((cc0 - 2 * b0)) -eq 2 ] ||
  fail "the acquire sent $((cc0 - 2 * b0)) content-creating requests, want 2 (commit + create)"
cc0=2

# held for 800 s of fake time (20 s): live under the job throughout
owner=octo/leases/42/1/deploy
for at in 5000 10000 15000 20000; do
  while [ $(($(now_ms) - t0)) -lt "$at" ]; do sleep 0.1; done
  s=$(status_json budget)
  [ "$(printf '%s' "$s" | field status)" = live ] && [ "$(printf '%s' "$s" | field owner)" = "$owner" ] ||
    fail "not held at ${at} ms (x40, $((at * 40 / 1000)) s): $s; keeper log: $(cat "$RUNNER_TEMP"/reflease-heartbeat.leases.budget.log)"
done
alive "$hbpid" || fail "the keeper ended: $(cat "$RUNNER_TEMP"/reflease-heartbeat.leases.budget.log)"
cc=$(($(stat content_creating) - cc0))
beats=$(stat updateRefs)
echo "keeper over 800 s: $beats heartbeats, $cc content-creating requests (counted $(stat counted), free 304s $(stat not_modified))"
# renewals at 375 and 750 s: 2 (1 when the machine was slow); ttl/3 would be 5
[ "$beats" -ge 1 ] && [ "$beats" -le 2 ] || fail "$beats heartbeats in 800 s, want 1-2 (every 375 s)"
[ "$cc" -eq $((2 * beats)) ] || fail "$cc content-creating requests for $beats heartbeats, want 2 each"
# per hour: 3600 / 375 = 9.6 renewals, 19.2 requests; the measured window says no more
[ $((cc * 3600 / 800)) -le 20 ] || fail "$cc content-creating requests in 800 s: over 20 an hour"

# each renewal landed before the lost deadline (expires_at - 12 s: kill_grace
# 10 s + 2 s) of the write before it, and none came sooner than the pace
# allows; a heartbeat replaces the tenure's last heartbeat commit, so the
# chain is the acquire and the newest heartbeat, which names the one before
# (previous_heartbeat_at) and the interval
REFLEASE_GITHUB_TOKEN=$CANARY "$REFLEASE" --json history budget >"$TMPDIR/h.json" 2>>"$log" || fail "history"
python3 - "$TMPDIR/h.json" "$beats" <<'PY' || fail "history: $(cat "$TMPDIR/h.json")"
import json, sys, datetime
def t(s): return datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ").timestamp()
acq, hb = json.load(open(sys.argv[1]))["items"][::-1]
assert acq["op"] == "acquire" and hb["op"] == "heartbeat" and hb["lease"]["heartbeats"] == int(sys.argv[2]), (acq, hb)
first = t(hb["lease"].get("previous_heartbeat_at") or hb["commit_time"])
assert first <= t(acq["lease"]["expires_at"]) - 12, ("the first renewal came after the lost deadline", acq, hb)
if hb["lease"]["heartbeats"] == 2:
    assert hb["interval_seconds"] >= 300, ("renewed sooner than the pace", hb)
    assert t(hb["commit_time"]) <= first + 450 - 12, ("the second renewal came after the lost deadline", hb)
PY

# the post stage stops the keeper and releases: 2 more
post
expect 0 "post"
like stdout 'background heartbeat of budget stopped \(exit 143\)' "post: the keeper stopped"
[ "$(status_json budget | field phase)" = released ] || fail "not released at the end"
# in all: each write (acquire, every heartbeat until post stopped the keeper,
# the release) a commit and one ref write, nothing else
n=$(stat updateRefs)
[ "$(stat content_creating)" -eq $((2 + 2 * n)) ] ||
  fail "$(stat content_creating) content-creating requests for an acquire and $n updateRefs, want $((2 + 2 * n))"
echo ok
