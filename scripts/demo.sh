#!/bin/sh
# The main job on the embedded default (a local repository): two owners
# contend for one lease, a takeover after expiry rotates the fencing token,
# a same-owner reacquire preserves it, and git log shows the audit history.
# Usage: sh scripts/demo.sh path/to/reflease
set -eu
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
store="$work/store.git"
export REFLEASE_STORE="local:$store"
unset REFLEASE_OWNER REFLEASE_HOST REFLEASE_LEASE_TOKEN GITHUB_ACTIONS

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
show() { printf '$ %s\n' "$*"; }
alice() { show "reflease --owner alice --host ci-1 $*"; "$BIN" --owner alice --host ci-1 "$@"; }
bob() { show "reflease --owner bob --host ci-2 $*"; "$BIN" --owner bob --host ci-2 "$@"; }
token_of() { jq -r '.lease.lease_token // empty'; }

step "A bare repository is the lease store"
show "reflease init $store"
"$BIN" init "$store"

step "alice acquires 'deploy' for 60 s"
out=$("$BIN" --owner alice --host ci-1 --json acquire deploy --ttl 60)
show "reflease --owner alice --host ci-1 --json acquire deploy --ttl 60"
echo "$out" | jq -c '{status, token_rotated, lease: {owner: .lease.owner, phase: .lease.phase, transitions: .lease.transitions, expires_in: .lease.expires_in}}'
tok_a=$(echo "$out" | token_of)

step "bob contends: the lease is held (exit 3)"
set +e; bob acquire deploy; rc=$?; set -e
echo "exit status $rc"

step "alice heartbeats: too soon is 'not_due' (the floor), ten seconds later it lands"
alice heartbeat deploy --lease-token "$tok_a"
show "faketime -f +10s reflease --owner alice --host ci-1 heartbeat deploy --lease-token …"
faketime -f '+10s' "$BIN" --owner alice --host ci-1 heartbeat deploy --lease-token "$tok_a"

step "alice moves to 'working': same owner, token preserved"
alice transition deploy --lease-token "$tok_a" --to working

step "status and list, as anyone sees them (token omitted)"
show "reflease status deploy"; "$BIN" status deploy
show "reflease list --json"; "$BIN" list --json | jq .

step "alice's job dies; two minutes later bob takes over (new token, generation +1)"
show "faketime -f +120s reflease --owner bob --host ci-2 --json acquire deploy --ttl 60"
out=$(faketime -f '+120s' "$BIN" --owner bob --host ci-2 --json acquire deploy --ttl 60)
echo "$out" | jq -c '{status, token_rotated, lease: {owner: .lease.owner, transitions: .lease.transitions}}'
tok_b=$(echo "$out" | token_of)
[ "$tok_a" != "$tok_b" ] && echo "token rotated: ${tok_a%????????????????????????} -> ${tok_b%????????????????????????}..."

step "alice comes back with her stale token: fenced off (exit 4)"
set +e; faketime -f '+125s' "$BIN" --owner alice --host ci-1 heartbeat deploy --lease-token "$tok_a"; rc=$?; set -e
echo "exit status $rc"

step "bob's own process restarts and reacquires: same owner and host, token preserved"
show "faketime -f +130s reflease --owner bob --host ci-2 --json reacquire deploy --lease-token …"
out=$(faketime -f '+130s' "$BIN" --owner bob --host ci-2 --json reacquire deploy --lease-token "$tok_b" --ttl 60)
echo "$out" | jq -c '{status, token_rotated}'
[ "$(echo "$out" | token_of)" = "$tok_b" ] && echo "token preserved"

step "bob releases; releasing twice is harmless"
faketime -f '+131s' "$BIN" --owner bob --host ci-2 release deploy --lease-token "$tok_b"
faketime -f '+132s' "$BIN" --owner bob --host ci-2 release deploy --lease-token "$tok_b"

step "the ref's history is the audit log"
show "git --git-dir $store log --format='%h %s' refs/leases/deploy"
git --git-dir "$store" log --format='%h %s' refs/leases/deploy
show "git --git-dir $store for-each-ref refs/leases"
git --git-dir "$store" for-each-ref refs/leases
