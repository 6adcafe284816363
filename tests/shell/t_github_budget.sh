#!/bin/sh
# shellcheck disable=SC1091,SC2154,SC2015  # sourced helpers; fpid and base set by fakegh_start; A && B || fail is intended
# test: seconds 30
# Issue 39 item 2, the budget of a held lease on github: with the defaults
# (TTL 450 s, renewed every 375 s: protocol.md §6 "Renewal point"), a 400 s
# hold, `reflease run NAME -- sleep 400`, sends at most 6 content-creating
# requests in all (acquire: commit + create; one heartbeat: commit +
# updateRefs; release: commit + updateRefs), the lease stays held throughout
# and is released at the end. Time runs 20 times faster for the fake, reflease
# and CMD alike (libfaketime FAKETIME="+0 x20": wall and monotonic clocks and
# every sleep and poll), so the 400 s take 20 s: the fake's Date headers (the
# store's time) and reflease's monotonic clock both move 20 s a second.
set -eu
. "$(dirname "$0")/lease_lib.sh"
. "$(dirname "$0")/fakegh_lib.sh"
[ -n "$FTLIB" ] || fail "libfaketime is required (scripts/install-deps.sh)"
export FAKETIME="+0 x20"
LD_PRELOAD=$FTLIB
export LD_PRELOAD
fakegh_start
unset LD_PRELOAD
trap 'kill "$fpid" 2>/dev/null || true' EXIT INT TERM
export GITHUB_API_URL="$base" GITHUB_TOKEN=ghp_budget REFLEASE_STORE=github:octo/leases
export REFLEASE_OWNER=alice REFLEASE_HOST=runner-1
unset GITHUB_GRAPHQL_URL REFLEASE_GITHUB_TOKEN GITHUB_ACTIONS || true
stat() { curl -sf "$base/_fakegh/stats" | jget "$1"; }

LD_PRELOAD=$FTLIB FAKETIME="+0 x20" "$REFLEASE" --json run cap -- sleep 400 \
  >"$TMPDIR/run.out" 2>"$TMPDIR/run.err" &
P=$!
# held: live under alice at about 100, 200 and 300 s of the hold (status
# reads create nothing); the rest of "held throughout" is run's exit 0 (a
# lost lease is exit 4) and the history below
held=0
t0=$(now_ms)
for at in 5000 10000 15000; do
  while [ $(($(now_ms) - t0)) -lt "$at" ]; do sleep 0.1; done
  "$REFLEASE" --json status cap >"$TMPDIR/st.json" 2>"$TMPDIR/st.err" || true
  [ "$(jget status <"$TMPDIR/st.json")" = live ] && [ "$(jget lease.owner <"$TMPDIR/st.json")" = alice ] ||
    fail "not held at ${at} ms (x20): $(cat "$TMPDIR/st.json" "$TMPDIR/st.err")"
  held=$((held + 1))
done
wait_rc "$P"
[ "$rc" -eq 0 ] || { cat "$TMPDIR/run.err"; fail "run exit $rc, want 0 (held throughout)"; }
expect_rc 0 "$REFLEASE" --json status cap
[ "$(jout status)" = released ] || fail "not released at the end: $(jout status)"
# the chain: acquire, heartbeat(s), release; each write landed before the
# lost deadline of the one before (expires_at - 12 s: kill_grace 10 s + 2 s)
"$REFLEASE" --json history cap >"$TMPDIR/h.json" || fail "history"
python3 - "$TMPDIR/h.json" <<'PY' || fail "history: $(cat "$TMPDIR/h.json")"
import json, sys, datetime
def t(s): return datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ").timestamp()
items = json.load(open(sys.argv[1]))["items"][::-1]
ops = [i["op"] for i in items]
assert ops[0] == "acquire" and ops[-1] == "release" and ops[1:-1] and \
    all(o == "heartbeat" for o in ops[1:-1]), ops
assert items[0]["lease"]["ttl_seconds"] == 450, items[0]["lease"]["ttl_seconds"]
for prev, cur in zip(items, items[1:]):
    assert t(cur["commit_time"]) <= t(prev["lease"]["expires_at"]) - 12, (prev, cur)
print("history:", ops, "heartbeat", t(items[1]["commit_time"]) - t(items[0]["commit_time"]), "s after the acquire")
PY
cc=$(stat content_creating)
echo "content-creating requests: $cc (commits $(stat by_endpoint.commit-post), creates $(stat by_endpoint.create), updateRefs $(stat by_endpoint.updateRefs)); counted $(stat counted), free 304s $(stat not_modified); status checks $held"
[ "$cc" -le 6 ] || fail "a 400 s hold sent $cc content-creating requests, want at most 6"
[ "$(stat by_endpoint.updateRefs)" -ge 1 ] || fail "no heartbeat in 400 s (TTL 450)"
echo ok
