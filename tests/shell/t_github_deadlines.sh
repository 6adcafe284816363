#!/bin/sh
# shellcheck disable=SC1091,SC2154  # the sourced fakegh_lib.sh sets fpid and base
# issue 24 #3 and issue 23 on the CLI against the fake GitHub (process mode):
# --timeout bounds a whole command (a heartbeat whose commit write gets 5xx
# for ever ends within the timeout and a second, not timeout x attempts);
# --wait bounds a wait whose polls are rate limited (403, retry-after 30 s:
# no poll sleeps past the wait; exit 3 or 75); and a command retrying an
# unreachable GitHub says so at -v after a few seconds instead of silence.
set -eu
. "$(dirname "$0")/fakegh_lib.sh"
cd "$TMPDIR"
trap 'kill "${fpid:-}" 2>/dev/null || true' EXIT INT TERM
# shellcheck disable=SC2119 # no options
fakegh_start
export GITHUB_API_URL="$base" GITHUB_TOKEN=ghp_deadlines0123456789 REFLEASE_STORE=github:octo/leases
export REFLEASE_HOST=runner-1
unset GITHUB_GRAPHQL_URL REFLEASE_GITHUB_TOKEN REFLEASE_GITHUB_TOKEN_FILE GITHUB_ACTIONS || true
fault() { curl -sf -XPOST "$base/_fakegh/fault" -d "$1" >/dev/null; }
reset() { curl -sf -XPOST "$base/_fakegh/reset" -d '{}' >/dev/null; }
timed() { # timed ARGS...: run reflease, set $st and $took (seconds)
  st=0
  t0=$(date +%s)
  "$REFLEASE" "$@" >out 2>err || st=$?
  took=$(($(date +%s) - t0))
}

REFLEASE_OWNER=alice "$REFLEASE" --json acquire hb --ttl 120 >acq.json
tok=$(sed -n 's/.*"lease_token": *"\([0-9a-f]*\)".*/\1/p' acq.json)
[ ${#tok} -eq 32 ] || { echo "FAIL: no token: $(cat acq.json)"; exit 1; }

# --timeout 4: every attempt of the heartbeat's commit write answered 502
fault '{"endpoint":"commit-post","kind":"5xx","count":100000}'
REFLEASE_OWNER=alice timed --timeout 4 heartbeat hb --lease-token "$tok" --ttl 300
[ "$st" -ne 0 ] || { echo "FAIL: heartbeat succeeded through 502s"; exit 1; }
[ "$took" -le 6 ] || { echo "FAIL: --timeout 4 heartbeat took ${took}s: $(cat err)"; exit 1; }
echo "t_github_deadlines: --timeout 4 heartbeat under 502s: exit $st after ${took}s"
reset

# --wait 4 while bob holds it and every poll is rate limited for 30 s
fault '{"endpoint":"ref-get","kind":"403-retry","count":100000,"arg":30}'
REFLEASE_OWNER=bob timed --timeout 60 acquire hb --wait 4
case $st in 3 | 75) ;; *) echo "FAIL: --wait 4: exit $st: $(cat err)"; exit 1 ;; esac
[ "$took" -le 7 ] || { echo "FAIL: --wait 4 under rate-limited polls took ${took}s"; exit 1; }
echo "t_github_deadlines: --wait 4 under rate-limited polls: exit $st after ${took}s"
reset
# every request rate limited: the first attempt's sleep is bounded by the wait too
fault '{"endpoint":"any","kind":"403-retry","count":100000,"arg":30}'
REFLEASE_OWNER=bob timed --timeout 60 acquire hb --wait 4
[ "$st" -eq 75 ] || { echo "FAIL: --wait 4, all rate limited: exit $st: $(cat err)"; exit 1; }
[ "$took" -le 7 ] || { echo "FAIL: --wait 4, all rate limited, took ${took}s"; exit 1; }
reset

# unreachable for a while: a progress line at -v within the first seconds
fault '{"endpoint":"graphql","kind":"5xx","count":100000}'
REFLEASE_OWNER=alice timed -v --timeout 8 status hb
[ "$st" -eq 69 ] || { echo "FAIL: exit $st, expected 69: $(cat err)"; exit 1; }
grep -q 'no answer from GitHub for [0-9]* s' err ||
  { echo "FAIL: no progress line at -v: $(cat err)"; exit 1; }
echo "t_github_deadlines: ok"
