#!/bin/sh
# shellcheck disable=SC1091,SC2154  # sourced helper; fpid and base set by fakegh_start
# The CLI on the github: backend, against the fake GitHub server run as a
# process (build/tools/fakegh): every lease command works as on local:, exit
# statuses follow cli.md for injected faults (77, 78, 75, 69), and a verbose
# run's every output stream never contains the token (the canary).
set -eu
CANARY="ghp_CANARYshell0123456789abcdefCANARY"
. "$(dirname "$0")/fakegh_lib.sh"
fakegh_start --token "$CANARY"
trap 'kill "$fpid" 2>/dev/null || true' EXIT INT TERM
export GITHUB_API_URL="$base" GITHUB_TOKEN="$CANARY" REFLEASE_STORE=github:octo/leases
export REFLEASE_OWNER=alice REFLEASE_HOST=runner-1
unset GITHUB_GRAPHQL_URL REFLEASE_GITHUB_TOKEN GITHUB_ACTIONS || true
out="$TMPDIR/out"; : >"$out"

rf() { # run reflease verbosely, keep every stream; stdout in $TMPDIR/o, status in $st
  st=0
  "$REFLEASE" -v -v "$@" >"$TMPDIR/o" 2>"$TMPDIR/e" || st=$?
  cat "$TMPDIR/o" "$TMPDIR/e" >>"$out"
}
has() { grep -q "$1" "$TMPDIR/o" || { echo "expected $1 in: $(cat "$TMPDIR/o")"; exit 1; }; }
expect() { [ "$st" -eq "$1" ] || { echo "expected exit $1, got $st: $2"; cat "$TMPDIR/e"; exit 1; }; }
fault() { curl -sf -XPOST "$base/_fakegh/fault" -d "$1" >/dev/null; }
field() { sed -n "s/.*\"$1\": *\"\([^\"]*\)\".*/\1/p" | head -n 1; }

rf --json acquire deploy --ttl 120; expect 0 "acquire"
tok=$(field lease_token <"$TMPDIR/o")
[ ${#tok} -eq 32 ] || { echo "no token in: $(cat "$TMPDIR/o")"; exit 1; }
rf --json acquire deploy --owner bob; expect 3 "held by alice"
rf --json status deploy; expect 0 "status"; has '"live"'
rf list; expect 0 "list"; has deploy
rf --json heartbeat deploy --lease-token "$tok"; expect 0 "heartbeat (not_due is 0)"
rf --json transition deploy --lease-token "$tok" --to working; expect 0 "transition"
rf --json heartbeat deploy --lease-token 00000000000000000000000000000000
expect 4 "wrong token"
rf --json release deploy --lease-token "$tok"; expect 0 "release"; has '"released"'
rf --json release deploy --lease-token "$tok"; expect 0 "second release (F09)"
has '"already_released"'

# faults → exit statuses (cli.md)
rf acquire fx --ttl 30 ; expect 64 "ttl below the github minimum (60)"
fault '{"endpoint":"create","kind":"401","count":1}'
rf acquire fx ; expect 77 "401"
fault '{"endpoint":"create","kind":"422-rules","count":1}'
rf acquire fx ; expect 77 "repository rules (F25)"
grep -q 'refs/leases/' "$TMPDIR/e" || { echo "F25 message does not name the namespace"; exit 1; }
fault '{"endpoint":"commit-post","kind":"409-empty","count":1}'
rf acquire fx ; expect 78 "empty repository (F26)"
fault '{"endpoint":"create","kind":"403-retry","count":1,"arg":600}'
rf --timeout 5 acquire fx ; expect 75 "rate limited past --timeout (F24)"
fault '{"endpoint":"any","kind":"5xx","count":100000}'
rf --timeout 2 --verify-timeout 1 acquire fx ; expect 69 "unreachable"
curl -sf -XPOST "$base/_fakegh/reset" -d '{}' >/dev/null
# issue 15: GitHub's real answers
fault '{"endpoint":"graphql","kind":"gql-rate-limit","count":100000,"arg":600}'
rf --timeout 5 status fx ; expect 75 "GraphQL RATE_LIMIT type (plugin-throttling.js#824)"
grep -q 'rate limit' "$TMPDIR/e" || { echo "75 without saying rate limited"; exit 1; }
curl -sf -XPOST "$base/_fakegh/reset" -d '{}' >/dev/null
fault '{"endpoint":"create","kind":"422-update-failed","count":1}'
rf acquire sporadic ; expect 0 "a sporadic 422 Reference update failed"
curl -sf -XPOST "$base/_fakegh/moved" -d '{"location":""}' >/dev/null
rf --json acquire moved ; expect 0 "renamed repository: 301/307 followed"
curl -sf -XPOST "$base/_fakegh/moved" -d '{"location":"http://127.0.0.2:9/repos/x/y"}' >/dev/null
rf --json acquire moved2 ; expect 78 "moved off the API host"
grep -q 'moved' "$TMPDIR/e" || { echo "78 without saying the repository moved"; exit 1; }
curl -sf -XPOST "$base/_fakegh/moved" -d '{"location":null}' >/dev/null
rf --json acquire fx; expect 0 "acquire after the faults"
tok=$(field lease_token <"$TMPDIR/o")
fault '{"endpoint":"updateRefs","kind":"no-updaterefs","count":1}'
rf release fx --lease-token "$tok" ; expect 78 "server without updateRefs"
fault '{"endpoint":"updateRefs","kind":"drop","count":2}'
rf --json release fx --lease-token "$tok"; expect 0 "release with a lost answer"
has '"released"'
rf break fx ; expect 0 "break of a released lease"

# run, migrate, and GitHub Actions mode: their outputs, summaries and
# $GITHUB_OUTPUT / $GITHUB_STEP_SUMMARY files are streams too
# shellcheck disable=SC2016
rf run job --ttl 60 -- sh -c 'test -n "$REFLEASE_LEASE_TOKEN"'; expect 0 "run"
rf migrate --summary "$TMPDIR/migrate.md"; expect 0 "migrate plan"
export GITHUB_ACTIONS=true GITHUB_OUTPUT="$TMPDIR/gh_output"
export GITHUB_STEP_SUMMARY="$TMPDIR/gh_summary" GITHUB_REPOSITORY=octo/leases
: >"$GITHUB_OUTPUT"; : >"$GITHUB_STEP_SUMMARY"
rf --json acquire act --ttl 60; expect 0 "acquire in Actions"
grep -q '^lease-token=' "$GITHUB_OUTPUT" || { echo "no outputs written"; exit 1; }
rf migrate --summary "$TMPDIR/migrate2.md"; expect 0 "migrate in Actions"
unset GITHUB_ACTIONS GITHUB_OUTPUT GITHUB_STEP_SUMMARY GITHUB_REPOSITORY
cat "$TMPDIR/gh_output" "$TMPDIR/gh_summary" "$TMPDIR"/migrate*.md >>"$out" 2>/dev/null || true

# the canary: nothing any command printed, at -v, contains the token
if grep -q "$CANARY" "$out"; then echo "token leaked"; exit 1; fi
grep -q 'github: POST .* -> 201' "$out" || { echo "verbose run logged no request"; exit 1; }
echo "t_github_cli: ok"
