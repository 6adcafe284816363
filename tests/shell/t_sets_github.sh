#!/bin/sh
# shellcheck disable=SC1091,SC2016,SC2154  # sourced helpers; CMD scripts in single quotes; fpid and base set by fakegh_start
# Sets of leases on the github: backend (issue 27, protocol.md "Sets"),
# against the fake GitHub (build/tools/fakegh, whose updateRefs is atomic as
# GitHub documents it): a set with a held member takes nothing, a set is
# taken, moved and released as one, and 6 processes on random pairs of 4
# names for 8 s (a shorter run than local's: each command is several HTTP
# requests) never give a name two holders or leave a partial hold
# (sets_lib.sh). Also `run A B -- CMD` (t_run_set.sh on a local store).
set -eu
R=$REFLEASE
fail() { echo "FAIL: $*" >&2; exit 1; }
git init -q --bare "$TMPDIR/gh.git"
. "$(dirname "$0")/fakegh_lib.sh"
fakegh_start --repo "$TMPDIR/gh.git" --token ghp_sets
trap 'kill "$fpid" 2>/dev/null || true' EXIT INT TERM
export GITHUB_API_URL="$base" GITHUB_TOKEN=ghp_sets
export REFLEASE_STORE=github:octo/leases REFLEASE_OWNER=alice REFLEASE_HOST=runner-1
unset GITHUB_GRAPHQL_URL REFLEASE_GITHUB_TOKEN GITHUB_ACTIONS REFLEASE_LEASE_TOKEN 2>/dev/null || true
. "$(dirname "$0")/sets_lib.sh"
G="$TMPDIR/gh.git"

t=$("$R" acquire b --ttl 60 --print-token)
st=0; "$R" --json acquire a b c --ttl 60 >"$TMPDIR/o" || st=$?
[ "$st" -eq 3 ] || fail "held set: exit $st"
grep -q '"blocked_by":"b"' "$TMPDIR/o" || fail "blocked_by: $(cat "$TMPDIR/o")"
git --git-dir="$G" rev-parse -q --verify refs/leases/a >/dev/null && fail "a written by a set that was not taken"
"$R" release b --lease-token "$t" >/dev/null
st=$("$R" acquire a b c --ttl 60 --print-token)
for n in a b c; do "$R" status "$n" | grep -q ": live" || fail "$n not live"; done
"$R" transition a b c --lease-token "$st" --to working >/dev/null || fail "set transition"
"$R" release a b c --lease-token "$st" >/dev/null || fail "set release"
for n in a b c; do "$R" status "$n" | grep -q ": released" || fail "$n not released"; done

# run A B -- CMD (issue 27 item 1): the set is taken in one write and held
# for CMD's life with one token, released as a set when CMD ends (CMD's
# status); a set with a held member starts nothing and writes nothing
export R G

# held for CMD's life, one token in both payloads, CMD's status
st=0
"$R" run ra rb --ttl 60 --json-file "$TMPDIR/run.json" -- sh -c '
  for n in ra rb; do
    "$R" status "$n" | grep -q ": live" || exit 91
    git --git-dir="$G" log -1 --format=%b "refs/leases/$n" | grep -q "\"lease_token\":\"$REFLEASE_LEASE_TOKEN\"" || exit 92
  done
  [ "$REFLEASE_LEASE_NAMES" = "ra rb" ] || exit 93
  exit 5' 2>"$TMPDIR/err" || st=$?
[ "$st" -eq 5 ] || { cat "$TMPDIR/err"; fail "run ra rb: exit $st, want CMD's 5"; }
for n in ra rb; do "$R" status "$n" | grep -q ": released" || fail "$n not released after CMD"; done
python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["set"] and d["status"] == "released" and d["reason"] == "exited", d
assert [m["status"] for m in d["members"]] == ["released"] * 2, d
' "$TMPDIR/run.json" || fail "json-file: $(cat "$TMPDIR/run.json")"

# a held member: nothing written, CMD never started, exit 3
t=$("$R" acquire rb --ttl 60 --print-token)
st=0
"$R" run rb rc -- sh -c ': >"$0"' "$TMPDIR/started" 2>"$TMPDIR/err" || st=$?
[ "$st" -eq 3 ] || { cat "$TMPDIR/err"; fail "held set: exit $st, want 3"; }
[ ! -e "$TMPDIR/started" ] || fail "CMD started without the whole set"
git --git-dir="$G" rev-parse -q --verify refs/leases/rc >/dev/null && fail "rc written by a set run that was not taken"
"$R" release rb --lease-token "$t" >/dev/null
sets_run 6 "${SETS_DUR:-8}" 60 30
sets_check_history "$G"
echo "t_sets_github: ok"
