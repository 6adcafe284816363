#!/bin/sh
# test: seconds 38
# The Action's git store (input store: git; README.md, "Which store"): the
# action writes its lease refs with git pushes to
# $GITHUB_SERVER_URL/$GITHUB_REPOSITORY (remote:) with the job's token as
# REFLEASE_GIT_TOKEN, never through GitHub's API. Played by
# tests/action/harness.mjs against git http-backend behind lighttpd on
# 127.0.0.1 that requires the token (HTTP basic, user x-access-token), with
# GITHUB_API_URL pointing at a closed port (an API request would fail):
# acquire with a background heartbeat, status, a held lease, the remote TTL
# minimum, release, a wrong token (exit 77), a bad store input, and the token
# never printed.
# shellcheck disable=SC2016,SC2154 # backquotes in patterns are markdown; root and log come from action_lib.sh
set -eu
# shellcheck disable=SC1091 # sourced helpers
. "$(dirname "$0")/action_lib.sh"
# shellcheck disable=SC1091
. "$(dirname "$0")/gitsrv_lib.sh"
action_setup
action_dir "$TMPDIR/action-path"

CANARY="ghs_GITSTOREcanary0123456789abcdefCANARY"
srv="$TMPDIR/srv"
repo="$srv/octo/leases"
mkdir -p "$srv/octo"
"$REFLEASE" init "$repo" >/dev/null
git -C "$repo" config http.receivepack true
printf 'x-access-token:%s\n' "$CANARY" >"$TMPDIR/users"
GITSRV_PID=""
cleanup() {
  for p in "$TMPDIR"/runner-temp/reflease-heartbeat.*.pid; do
    [ -f "$p" ] && kill "$(cat "$p")" 2>/dev/null
  done
  [ -z "$GITSRV_PID" ] || kill "$GITSRV_PID" 2>/dev/null || true
}
trap cleanup EXIT INT TERM
git_http_start "$srv" "$TMPDIR/users"
export GITHUB_SERVER_URL="http://127.0.0.1:$GITSRV_PORT/git"
export GITHUB_API_URL="http://127.0.0.1:9" GITHUB_GRAPHQL_URL="http://127.0.0.1:9/graphql"
export XDG_CACHE_HOME="$TMPDIR/cache"
G() { git -C "$repo" "$@"; }

# 1. acquire with store git and a background heartbeat
act '{"command":"acquire","name":"deploy","ttl":"60","store":"git","heartbeat":"true"}'
expect 0 "acquire (store git)"
is outputs.status acquired "acquire status"
hex outputs.lease-token 32 "acquire token"
tok=$(q outputs.lease-token)
oid=$(q outputs.oid)
[ "$(G rev-parse refs/leases/deploy)" = "$oid" ] || fail "refs/leases/deploy is not at the oid output"
G log -1 --format=%B refs/leases/deploy | grep -q '"owner":"octo/leases/42/1/deploy"' ||
  fail "owner: $(G log -1 --format=%B refs/leases/deploy)"
pidf="$RUNNER_TEMP/reflease-heartbeat.leases.deploy.pid"
[ -f "$pidf" ] || fail "no background heartbeat"
tr '\0' '\n' <"/proc/$(cat "$pidf")/environ" |
  grep -qx "REFLEASE_STORE=remote:http://127.0.0.1:$GITSRV_PORT/git/octo/leases" ||
  fail "the background heartbeat does not use the git store"
is annotations '[]' "no annotation"

# 2. status, and another job's acquire: held
act '{"command":"status","name":"deploy","store":"git"}'
expect 0 "status (store git)"
is outputs.status live "status live"
is outputs.oid "$oid" "status oid"
GITHUB_RUN_ID=43 act '{"command":"acquire","name":"deploy","ttl":"60","store":"git"}'
expect 3 "acquire of a held lease"
is outputs.status held "held"

# 3. the remote store's TTL minimum is 60 s (protocol.md §4)
act '{"command":"acquire","name":"short","ttl":"30","store":"git"}'
expect 64 "ttl 30 on the git store"
[ -z "$(G for-each-ref refs/leases/short)" ] || fail "ttl 30 wrote a ref"

# 4. heartbeat and release with the token; release stops the background heartbeat
act "{\"command\":\"heartbeat\",\"name\":\"deploy\",\"store\":\"git\",\"lease-token\":\"$tok\"}"
expect 0 "heartbeat"
like outputs.status '^(renewed|not_due)$' "heartbeat status"
act "{\"command\":\"release\",\"name\":\"deploy\",\"store\":\"git\",\"lease-token\":\"$tok\"}"
expect 0 "release"
is outputs.status released "release status"
like stdout 'background heartbeat of deploy stopped \(exit 143\)' "heartbeat stopped"
G log -1 --format=%s refs/leases/deploy | grep -q '^deploy: release' ||
  fail "last commit: $(G log -1 --format=%s refs/leases/deploy)"

# 5. a token the server refuses: permission denied, nothing written, no token shown
CANARY=ghs_wrongWRONGwrong0123456789 act '{"command":"acquire","name":"other","ttl":"60","store":"git"}'
expect 77 "a refused token"
is outputs.status error "refused token: status"
like annotations.0.message 'permission denied' "refused token: annotation"
[ -z "$(G for-each-ref refs/leases/other)" ] || fail "a refused token wrote"
if grep -q ghs_wrongWRONGwrong "$log"; then fail "the refused token was printed"; fi

# 6. the store input takes api or git
act '{"command":"status","name":"deploy","store":"ssh"}'
expect 64 "store ssh"
like annotations.0.message "store must be api or git, not 'ssh'" "store annotation"

if grep -q "$CANARY" "$log" "$TMPDIR"/runner-temp/*.log 2>/dev/null; then fail "the token was printed"; fi
echo "t_action_git: ok"
